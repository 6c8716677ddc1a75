extension ConnectionStateMachine {
    /// Where the connection is, each place carrying only what it has: a close reason only once closing, the write
    /// side's shutdown and the peer's end of input only while closing, flow control's pause only while open, and
    /// once closed only what the tear-down must know of the sources.
    enum State: Equatable {
        /// Reading and answering commands.
        case open(Open)
        /// No more commands: the output is flushed, the write side shut down, and the input drained until the peer
        /// closes (or the deadline passes).
        case closing(Closing)
        /// Released: nothing more happens.
        case closed(Closed)
    }

    /// What an open and a closing connection both have: their output's side and a TLS step's wait for room. The
    /// read source is suspended while either holds it (a hold, a wait for room) or the phase's own pause does.
    struct Sides: Equatable {
        /// The output: written as it comes (the write source idle or watching for room), or held.
        var output = Output.idle
        /// True while a TLS handshake step or read waits for room in the socket (the read source would spin). Ends
        /// only with ``ConnectionStateMachine/tlsInputUnblocked()``.
        var isWaitingForRoom = false

        /// True while the peer's end of input was read but replies of the session are still in flight
        /// (``RepliesInFlight``): reading stops, and the end is read again once they are out. Ends only with
        /// ``ConnectionStateMachine/repliesLanded()``.
        var isEndAwaitingReplies = false

        /// True while these alone keep the read source suspended.
        var suspendReading: Bool { output == .held || isWaitingForRoom || isEndAwaitingReplies }

        /// What the output is doing, and so the write source.
        enum Output: Equatable {
            /// Nothing waits for room: the write source does not watch (suspended, or not made yet).
            case idle
            /// The socket was full: the write source watches for room.
            case armed
            /// Held (a `HELLO` being checked or sitting out its delay, an answer that comes later): nothing is written,
            /// no command runs and reading is stopped until the hold ends. The write source does not watch (it would
            /// report room again and again). Holds do not nest: one release ends a hold however often it was asked.
            case held
        }

        /// Follows a flush: output left over (the socket is full) arms the write source, output all out disarms it;
        /// held output is never written, so a hold stays as it is.
        mutating func followFlush(outputIsEmpty: Bool) -> Actions {
            switch (output, outputIsEmpty) {
            case (.idle, false):
                output = .armed
                return .armWriteSource
            case (.armed, true):
                output = .idle
                return .disarmWriteSource
            default:
                return []
            }
        }
    }

    /// An open connection.
    struct Open: Equatable {
        /// Whether flow control stopped reading.
        var input = Input.reading
        /// The output and the TLS wait for room.
        var sides = Sides()

        /// True while the read source must be suspended.
        var isReadSourceSuspended: Bool { input == .pausedForOutput || sides.suspendReading }

        /// Flow control's side of reading.
        enum Input: Equatable {
            /// Commands are read and run (unless a hold or a wait for room stops them).
            case reading
            /// The session's own output passed the pause mark: reading resumes once it is below the resume mark.
            case pausedForOutput
        }
    }

    /// A closing connection.
    struct Closing: Equatable {
        /// Why it closes: the reason it is counted under, whatever ends it.
        var reason: CloseReason
        /// What the peer's side of the socket is doing.
        var input: Input
        /// The output and the TLS wait for room, as they were when closing began (a hold outlasts the open phase:
        /// what it held is still flushed).
        var sides: Sides
        /// True once the write side was shut down (the output was all out).
        var isOutputShutDown = false
        /// True once the daemon is stopping: the connection closes as soon as its output is out.
        var isDraining: Bool

        /// True while the read source must be suspended.
        var isReadSourceSuspended: Bool { input == .endedAndPaused || sides.suspendReading }
        /// True when the connection closes as soon as its output is out (nothing is left to wait for).
        var closesOnceOutputIsOut: Bool { input != .draining || isDraining }

        /// The peer's side.
        enum Input: Equatable {
            /// What the peer still sends is read and dropped, until it closes.
            case draining
            /// The peer closed its side (the end was read while open); reading goes on until the end is read again.
            case ended
            /// The peer closed its side while output was still queued: reading is paused, since a socket at its end
            /// stays readable and would report itself again at once, spinning the loop.
            case endedAndPaused
        }
    }

    /// A closed connection: only what the tear-down needs (a suspended source is resumed before it is cancelled).
    struct Closed: Equatable {
        /// Why it closed.
        var reason: CloseReason
        /// True when the read source was left suspended.
        var isReadSourceSuspended: Bool
        /// True when the write source was left watching for room.
        var isWriteArmed: Bool
    }
}

extension ConnectionStateMachine.State {
    /// The sides of an open or closing connection; nil once closed.
    var sides: ConnectionStateMachine.Sides? {
        switch self {
        case .open(let open): open.sides
        case .closing(let closing): closing.sides
        case .closed: nil
        }
    }

    /// Puts `sides` in place in an open or closing connection (a closed one has none).
    mutating func replaceSides(with sides: ConnectionStateMachine.Sides) {
        switch self {
        case .open(var open):
            open.sides = sides
            self = .open(open)
        case .closing(var closing):
            closing.sides = sides
            self = .closing(closing)
        case .closed:
            break
        }
    }
}
