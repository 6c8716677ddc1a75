/// The life of one connection as a plain value: events in, actions out (hummingbird's and swift-service-lifecycle's
/// state machines). It knows nothing of sockets or Dispatch; ``Session`` performs the actions it returns.
///
/// A connection is *open* (reading and answering commands, possibly with reading paused while its own output is
/// backed up), then *closing* (no more commands: its output is flushed, the write side shut down, and its input
/// drained until the peer closes, within a deadline), then *closed* (everything released). Whatever way the peer
/// goes (FIN, RST, an error on read or write), some event leads to `.close`. The ``State`` holds in each place only
/// what makes sense there, so no mix of flags that cannot happen can be written down.
///
/// **Impossible events** stop the process (`preconditionFailure`): they mean the session and the machine disagree,
/// and going on would unbalance a Dispatch source's suspends and resumes (libdispatch traps on that later, far from
/// the cause) or leave a connection stuck.
/// - ``penaltyEnded()`` on an open connection that holds nothing: a release comes only after its hold, and nothing
///   else ends a hold while open. (Holds do not nest: a second hold while held is the same hold, and one release
///   ends it; a command answered later that is run again inside its hold relies on that.)
/// - ``tlsInputBlocked()`` while already waiting for room (open or closing): the session asks for one retry at a
///   time.
/// - ``tlsInputUnblocked()`` while not waiting for room (open or closing): only the retry after a block sends it, and
///   nothing else ends the wait.
/// - ``closeDeadlinePassed()`` while open: the deadline starts only when closing begins, and a connection never
///   opens again.
///
/// **Harmless events** are no-ops where they come late or twice: every event once closed (a retry, a delayed
/// release or the close deadline firing after the close, a command's last step after a failure closed the session);
/// a hold, a close request or a command's end while closing (a hold asked for while closing is not recorded, so
/// ``penaltyEnded()`` while closing may find none); a second hold, or a flush, while held; a second drain. There is
/// no event for the write source reporting room: it only flushes, as the end of every turn does, so it cannot come
/// at a wrong time.
struct ConnectionStateMachine {
    /// Where the connection is, with what it carries there.
    private(set) var state = State.open(Open())
    /// The flow-control marks in force (a reload may change them).
    var marks: FlowMarks

    /// A new, open connection.
    init(marks: FlowMarks) {
        self.marks = marks
    }

    // MARK: Events

    /// A TLS handshake step or read wants to write first: reading pauses until ``tlsInputUnblocked()``. Impossible
    /// while already waiting (the session retries one at a time).
    mutating func tlsInputBlocked() -> Actions {
        guard var sides = state.sides else { return [] }
        precondition(!sides.isWaitingForRoom, "tlsInputBlocked() while already waiting for room: one retry at a time")
        sides.isWaitingForRoom = true
        return replacing(sides)
    }

    /// The retry after ``tlsInputBlocked()``: reading resumes unless another reason holds it. Impossible without the
    /// block; a no-op once closed (the retry fired after the close).
    mutating func tlsInputUnblocked() -> Actions {
        guard var sides = state.sides else { return [] }
        precondition(sides.isWaitingForRoom, "tlsInputUnblocked() without tlsInputBlocked(): nothing waits for room")
        sides.isWaitingForRoom = false
        return replacing(sides)
    }

    /// read(2) returned 0 while replies of the session are still in flight (``RepliesInFlight``): the connection stays
    /// open and reading pauses (a socket at its end stays readable) until ``repliesLanded()``, which reads the end
    /// again. Only while open and not paused for this already; otherwise nothing.
    mutating func inputEndedBeforeReplies() -> Actions {
        guard case .open(var open) = state, !open.sides.isEndAwaitingReplies else { return [] }
        open.sides.isEndAwaitingReplies = true
        return replacing(open.sides)
    }

    /// The replies that were in flight are all in the output: an end of input that waited for them is read again.
    /// Nothing when none waited.
    mutating func repliesLanded() -> Actions {
        guard var sides = state.sides, sides.isEndAwaitingReplies else { return [] }
        sides.isEndAwaitingReplies = false
        return replacing(sides)
    }

    /// A hold begins (a `HELLO` being checked or failed, an answer that comes later): the session stops reading and
    /// running commands, and holds its output, until ``penaltyEnded()``. Only an open session that is not already
    /// held; otherwise nothing (holds do not nest).
    mutating func penaltyStarted() -> Actions {
        guard case .open(var open) = state, open.sides.output != .held else { return [] }
        // Held output is not written, so the write source must not watch for room meanwhile (it would fire at once,
        // again and again); the hold's end flushes and arms it again if the socket is full.
        let disarm: Actions = open.sides.output == .armed ? .disarmWriteSource : []
        open.sides.output = .held
        return disarm.union(replacing(open.sides))
    }

    /// The hold ends (its answer came, or a failed `HELLO`'s delay passed): reading resumes (unless flow control still
    /// holds it) and the held output is flushed. Impossible on an open connection that holds nothing; nothing while
    /// closing without a hold, or once closed.
    mutating func penaltyEnded() -> Actions {
        guard var sides = state.sides else { return [] }  // a closed session's sources are gone: nothing to resume
        guard sides.output == .held else {
            precondition(phase != .open, "penaltyEnded() on an open connection that holds nothing: no hold to end")
            return []  // a hold asked for while closing was not recorded
        }
        // A session that began closing meanwhile (the last failure, a timeout) still flushes what it holds, and reads
        // on to the peer's end unless a seen end of input keeps reading paused.
        sides.output = .idle
        return replacing(sides).union(.flush)
    }

    /// A command ran and the session's own output now holds `heldBytes`: past the pause mark, reading stops.
    mutating func commandRan(outputHeld heldBytes: Int) -> Actions {
        guard case .open(var open) = state, open.input == .reading, open.sides.output != .held,
            heldBytes > marks.pauseAbove
        else { return [] }
        let was = open.isReadSourceSuspended
        open.input = .pausedForOutput
        state = .open(open)
        return .readSource(was: was, now: true)
    }

    /// read(2) returned 0: the peer sends nothing more. Open, the session closes (its replies are still flushed:
    /// every complete command was run before the session read on, and reading never runs while paused). Closing,
    /// it closes once its output is out; until then reading pauses, since a socket at its end stays readable and
    /// would report itself again at once, spinning the loop.
    mutating func inputEnded(outputIsEmpty: Bool) -> Outcome {
        switch state {
        case .open(let open):
            return .proceed(beginClosing(open, .client, input: .ended))
        case .closing(var closing):
            if outputIsEmpty { return close(closing.reason) }
            guard closing.input != .endedAndPaused else { return .none }
            let was = closing.isReadSourceSuspended
            closing.input = .endedAndPaused
            state = .closing(closing)
            return .proceed(.readSource(was: was, now: true))
        case .closed:
            return .none
        }
    }

    /// The session asks to close for `reason` (QUIT, a fatal protocol error, a timeout): graceful, replies first.
    mutating func closeRequested(_ reason: CloseReason) -> Actions {
        guard case .open(let open) = state else { return [] }
        return beginClosing(open, reason, input: .draining)
    }

    /// The daemon is stopping: open connections close gracefully, closing ones as soon as their output is out.
    mutating func drain() -> Outcome {
        switch state {
        case .open(let open):
            return .proceed(beginClosing(open, .shutdown, input: .draining, isDraining: true))
        case .closing(var closing):
            if closing.isOutputShutDown { return close(closing.reason) }
            closing.isDraining = true
            state = .closing(closing)
            return .none
        case .closed:
            return .none
        }
    }

    /// A read or write failed, or the peer cannot keep up: close now. A session that was already closing keeps the
    /// reason it closed for.
    mutating func failed(_ reason: CloseReason) -> Outcome {
        switch state {
        case .open: close(reason)
        case .closing(let closing): close(closing.reason)
        case .closed: .none
        }
    }

    /// The close deadline passed and the peer has still not closed its side: close now. Impossible while open (the
    /// deadline starts with closing); a no-op once closed (it fired after the close).
    mutating func closeDeadlinePassed() -> Outcome {
        switch state {
        case .open: preconditionFailure("closeDeadlinePassed() on an open connection: the deadline starts with closing")
        case .closing(let closing): close(closing.reason)
        case .closed: .none
        }
    }

    /// A flush wrote what the socket took. Arms or disarms the write source, resumes reading once the output is
    /// below the resume mark, and finishes a graceful close once everything is out: with `awaitingReplies` (replies
    /// in flight, ``RepliesInFlight``), a closing connection waits for them (their answers flush again), within the
    /// close deadline.
    mutating func flushed(outputIsEmpty: Bool, outputHeld heldBytes: Int, awaitingReplies: Bool = false) -> Outcome {
        switch state {
        case .open(var open):
            let was = open.isReadSourceSuspended
            let write = open.sides.followFlush(outputIsEmpty: outputIsEmpty)
            // A hold keeps the source suspended; its end resumes it.
            if open.input == .pausedForOutput && heldBytes < marks.resumeBelow { open.input = .reading }
            state = .open(open)
            return .proceed(write.union(.readSource(was: was, now: open.isReadSourceSuspended)))
        case .closing(var closing):
            let allOut = outputIsEmpty && !awaitingReplies
            if allOut && closing.closesOnceOutputIsOut { return close(closing.reason) }
            var actions = closing.sides.followFlush(outputIsEmpty: outputIsEmpty)
            if allOut && !closing.isOutputShutDown {
                closing.isOutputShutDown = true
                actions.insert(.shutDownOutput)
            }
            state = .closing(closing)
            return .proceed(actions)
        case .closed:
            return .none
        }
    }

    // MARK: Transitions

    /// Puts `sides` in place in an open or closing connection and returns what keeps the read source in step.
    private mutating func replacing(_ sides: Sides) -> Actions {
        let was = isReadSourceSuspended
        state.replaceSides(with: sides)
        return .readSource(was: was, now: isReadSourceSuspended)
    }

    /// Open to closing: no more commands; the output is flushed, and the input is read (and dropped) again, to see
    /// the peer's close, unless a hold or a wait for room still keeps it suspended.
    private mutating func beginClosing(
        _ open: Open, _ reason: CloseReason, input: Closing.Input, isDraining: Bool = false
    ) -> Actions {
        let closing = Closing(reason: reason, input: input, sides: open.sides, isDraining: isDraining)
        state = .closing(closing)
        let read = Actions.readSource(was: open.isReadSourceSuspended, now: closing.isReadSourceSuspended)
        return read.union([.stopServing, .startCloseDeadline, .flush])
    }

    /// Closed: the sources are left as they are, for the tear-down to resume and cancel.
    private mutating func close(_ reason: CloseReason) -> Outcome {
        state = .closed(
            Closed(reason: reason, isReadSourceSuspended: isReadSourceSuspended, isWriteArmed: isWriteArmed))
        return .close(reason)
    }
}
