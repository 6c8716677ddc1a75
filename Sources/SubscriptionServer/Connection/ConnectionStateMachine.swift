/// The life of one connection as a plain value: events in, actions out (hummingbird's and swift-service-lifecycle's
/// state machines). It knows nothing of sockets or Dispatch; ``Session`` performs the actions it returns.
///
/// A connection is *open* (reading and answering commands, possibly with reading paused while its own output is
/// backed up), then *closing* (no more commands: its output is flushed, the write side shut down, and its input
/// drained until the peer closes, within a deadline), then *closed* (everything released). Whatever way the peer
/// goes (FIN, RST, an error on read or write), some event leads to `.close`.
struct ConnectionStateMachine {
    /// Where the connection is in its life.
    enum Phase: Equatable {
        /// Reading and answering commands.
        case open
        /// No more commands; flushing, then shutting down the write side and waiting for the peer's close.
        case closing
        /// Released; nothing more happens.
        case closed
    }

    /// What the session must do after an event, in this order.
    struct Actions: OptionSet, Equatable, CustomStringConvertible {
        let rawValue: UInt8
        init(rawValue: UInt8) { self.rawValue = rawValue }

        /// Leave the center at once: no later publication counts the session.
        static let stopServing = Actions(rawValue: 1 << 0)
        /// Close anyway once the close deadline passes (the peer may never close its side).
        static let startCloseDeadline = Actions(rawValue: 1 << 1)
        /// Stop watching the socket for input (its own output is backed up).
        static let pauseReading = Actions(rawValue: 1 << 2)
        /// Watch the socket for input again, run the commands already buffered (when open) and read on.
        static let resumeReading = Actions(rawValue: 1 << 3)
        /// Write what is queued at the end of this turn.
        static let flush = Actions(rawValue: 1 << 4)
        /// The socket is full: watch it for room.
        static let armWriteSource = Actions(rawValue: 1 << 5)
        /// The output is all out: stop watching for room.
        static let disarmWriteSource = Actions(rawValue: 1 << 6)
        /// Shut down the write side (the peer reads EOF after our last reply).
        static let shutDownOutput = Actions(rawValue: 1 << 7)

        var description: String {
            let names: [(Actions, String)] = [
                (.stopServing, "stopServing"), (.startCloseDeadline, "startCloseDeadline"),
                (.pauseReading, "pauseReading"), (.resumeReading, "resumeReading"), (.flush, "flush"),
                (.armWriteSource, "armWriteSource"), (.disarmWriteSource, "disarmWriteSource"),
                (.shutDownOutput, "shutDownOutput"),
            ]
            return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
        }
    }

    /// What an event asks for: the actions, or closing the connection now.
    enum Outcome: Equatable {
        /// Go on, doing these first.
        case proceed(Actions)
        /// Release everything now (sources cancelled, descriptor closed, out of the center).
        case close(CloseReason)

        /// Nothing to do.
        static let none = Outcome.proceed([])
    }

    /// Output level (memory held, in bytes) above which reading pauses, and below which it resumes.
    struct FlowMarks: Equatable {
        /// Pause reading once the session's own output holds more than this.
        var pauseAbove: Int
        /// Resume once it holds less than this.
        var resumeBelow: Int

        /// 4 MiB, or half of `max_pending` when that is smaller, so a client's own replies alone never get it cut
        /// off; resume at a quarter of the pause mark.
        init(maxPending: Int) {
            pauseAbove = min(4 << 20, maxPending / 2)
            resumeBelow = pauseAbove / 4
        }
    }

    /// Where the connection is.
    private(set) var phase = Phase.open
    /// True while reading is paused because the session's own output is backed up (the read source is suspended).
    /// Closing leaves it as it was, so the session knows to resume the source before cancelling it.
    private(set) var isReadingPaused = false
    /// True while the session sits out a failed `HELLO`'s delay: no command runs, reading is paused, and its output
    /// (the `-ERR AUTH` reply) waits. Ends with ``penaltyEnded()``.
    private(set) var isPenalized = false
    /// True once the peer closed its side (read returned 0).
    private(set) var hasInputEnded = false
    /// True while the write source watches for room (false: suspended, or not made yet). Closing leaves it as it
    /// was, as ``isReadingPaused``.
    private(set) var isWriteArmed = false
    /// True once the write side was shut down.
    private(set) var isOutputShutDown = false
    /// True once the daemon is stopping: a closing connection closes as soon as its output is out.
    private(set) var isDraining = false
    /// Why the connection is closing or closed.
    private(set) var closeReason: CloseReason?
    /// The flow-control marks in force (a reload may change them).
    var marks: FlowMarks

    /// A new, open connection.
    init(marks: FlowMarks) {
        self.marks = marks
    }

    /// True while the session takes commands from the socket: open, not paused and not sitting out a penalty.
    var isReading: Bool { phase == .open && !isReadingPaused && !isPenalized }

    /// True while the read source is suspended (by flow control, a penalty, or TLS waiting for room): it must be
    /// resumed before it is cancelled.
    var isReadSourceSuspended: Bool { isReadingPaused || isPenalized || isWaitingForRoom }
    /// True while a TLS handshake step or read waits for room in the socket (the read source would spin).
    private(set) var isWaitingForRoom = false

    /// A TLS handshake step or read wants to write first: reading pauses until ``tlsInputUnblocked()``.
    mutating func tlsInputBlocked() -> Actions {
        guard phase != .closed, !isWaitingForRoom else { return [] }
        return setReadPause(room: true)
    }

    /// The retry after ``tlsInputBlocked()``: reading resumes unless another reason holds it.
    mutating func tlsInputUnblocked() -> Actions {
        guard phase != .closed, isWaitingForRoom else { return [] }
        return setReadPause(room: false)
    }

    /// True while output must wait (a penalty's delay).
    var isOutputHeld: Bool { isPenalized }

    // MARK: Events

    /// A `HELLO` failed: the session stops reading and running commands, and holds its output, until
    /// ``penaltyEnded()``. Only an open session that is not already penalized.
    mutating func penaltyStarted() -> Actions {
        guard phase == .open, !isPenalized else { return [] }
        var actions = setReadPause(penalty: true)
        // Held output is not written, so the write source must not watch for room meanwhile (it would fire at once,
        // again and again); the penalty's end flushes and arms it again if the socket is full.
        if isWriteArmed {
            isWriteArmed = false
            actions.insert(.disarmWriteSource)
        }
        return actions
    }

    /// The penalty's delay passed: reading resumes (unless flow control still holds it) and the held output is
    /// flushed.
    mutating func penaltyEnded() -> Actions {
        // A closed session's sources are gone: nothing to resume (the tear-down resumed a suspended one).
        guard isPenalized, phase != .closed else { return [] }
        // A session that began closing meanwhile (the last failure, a timeout) still flushes what it holds, and reads
        // on to the peer's end unless flow control or a seen end of input keeps reading paused.
        return setReadPause(penalty: false).union(.flush)
    }

    /// A command ran and the session's own output now holds `heldBytes`: past the pause mark, reading stops.
    mutating func commandRan(outputHeld heldBytes: Int) -> Actions {
        guard phase == .open, !isReadingPaused, !isPenalized, heldBytes > marks.pauseAbove else { return [] }
        return setReadPause(flowControl: true)
    }

    /// read(2) returned 0: the peer sends nothing more. Open, the session closes (its replies are still flushed:
    /// every complete command was run before the session read on, and reading never runs while paused). Closing,
    /// it closes once its output is out; until then reading pauses, since a socket at its end stays readable and
    /// would report itself again at once, spinning the loop.
    mutating func inputEnded(outputIsEmpty: Bool) -> Outcome {
        hasInputEnded = true
        switch phase {
        case .open:
            return .proceed(beginClosing(.client))
        case .closing:
            if outputIsEmpty { return close() }
            guard !isReadingPaused else { return .none }
            return .proceed(setReadPause(flowControl: true))
        case .closed:
            return .none
        }
    }

    /// The session asks to close for `reason` (QUIT, a fatal protocol error, a timeout): graceful, replies first.
    mutating func closeRequested(_ reason: CloseReason) -> Actions {
        guard phase == .open else { return [] }
        return beginClosing(reason)
    }

    /// The daemon is stopping: open connections close gracefully, closing ones as soon as their output is out.
    mutating func drain() -> Outcome {
        isDraining = true
        switch phase {
        case .open: return .proceed(beginClosing(.shutdown))
        case .closing: return isOutputShutDown ? close() : .none
        case .closed: return .none
        }
    }

    /// A read or write failed, or the peer cannot keep up: close now. A session that was already closing keeps the
    /// reason it closed for.
    mutating func failed(_ reason: CloseReason) -> Outcome {
        guard phase != .closed else { return .none }
        if closeReason == nil { closeReason = reason }
        return close()
    }

    /// The close deadline passed and the peer has still not closed its side: close now.
    mutating func closeDeadlinePassed() -> Outcome {
        phase == .closing ? close() : .none
    }

    /// A flush wrote what the socket took. Arms or disarms the write source, resumes reading once the output is
    /// below the resume mark, and finishes a graceful close once everything is out.
    mutating func flushed(outputIsEmpty: Bool, outputHeld heldBytes: Int) -> Outcome {
        guard phase != .closed else { return .none }
        // Closing leaves the source flags as they are: they tell the session which sources to resume before
        // cancelling them.
        if phase == .closing && outputIsEmpty && (hasInputEnded || isDraining) { return close() }
        var actions: Actions = []
        if !outputIsEmpty && !isWriteArmed && !isPenalized {
            isWriteArmed = true
            actions.insert(.armWriteSource)
        } else if outputIsEmpty && isWriteArmed {
            isWriteArmed = false
            actions.insert(.disarmWriteSource)
        }
        if phase == .open && isReadingPaused && heldBytes < marks.resumeBelow {
            // A penalty keeps the source suspended; its end resumes it.
            actions.formUnion(setReadPause(flowControl: false))
        }
        if phase == .closing && outputIsEmpty && !isOutputShutDown {
            isOutputShutDown = true
            actions.insert(.shutDownOutput)
        }
        return .proceed(actions)
    }

    // MARK: Transitions

    /// Sets the reasons the read source may be suspended (flow control or a seen end of input; a penalty; a TLS step
    /// waiting for room) and returns
    /// what keeps the source in step: suspend when the first reason appears, resume when the last one goes, nothing
    /// otherwise. Every change of either flag goes through here, so suspends and resumes always balance.
    private mutating func setReadPause(flowControl: Bool? = nil, penalty: Bool? = nil, room: Bool? = nil) -> Actions {
        let wasSuspended = isReadSourceSuspended
        if let room { isWaitingForRoom = room }
        if let flowControl { isReadingPaused = flowControl }
        if let penalty { isPenalized = penalty }
        switch (wasSuspended, isReadSourceSuspended) {
        case (false, true): return .pauseReading
        case (true, false): return .resumeReading
        default: return []
        }
    }

    private mutating func beginClosing(_ reason: CloseReason) -> Actions {
        phase = .closing
        closeReason = reason
        var actions: Actions = [.stopServing, .startCloseDeadline, .flush]
        if isReadingPaused {
            // Input is read (and dropped) again, to see the peer's close (once a penalty, if any, is over).
            actions.formUnion(setReadPause(flowControl: false))
        }
        return actions
    }

    private mutating func close() -> Outcome {
        phase = .closed
        return .close(closeReason ?? .client)
    }
}
