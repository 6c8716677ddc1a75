extension ConnectionStateMachine {
    /// Where the connection is in its life, without what each place carries (``State``): what most callers ask.
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

        /// What keeps the read source in step when whether it must be suspended goes from `was` to `now`: suspend
        /// when the first reason appears, resume when the last one goes, nothing otherwise.
        static func readSource(was: Bool, now: Bool) -> Actions {
            switch (was, now) {
            case (false, true): .pauseReading
            case (true, false): .resumeReading
            default: []
            }
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
}
