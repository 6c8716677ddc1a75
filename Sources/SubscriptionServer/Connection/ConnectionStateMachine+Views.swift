/// What the session asks the machine between events: read on every delivery and command, so each is a switch on
/// the state and nothing more.
extension ConnectionStateMachine {
    /// Where the connection is.
    var phase: Phase {
        switch state {
        case .open: .open
        case .closing: .closing
        case .closed: .closed
        }
    }

    /// True while the session takes commands from the socket: open, not paused by flow control and not held.
    var isReading: Bool {
        guard case .open(let open) = state else { return false }
        return open.input == .reading && open.sides.output != .held
    }

    /// True while output must wait (a hold).
    var isOutputHeld: Bool {
        switch state {
        case .open(let open): open.sides.output == .held
        case .closing(let closing): closing.sides.output == .held
        case .closed: false
        }
    }

    /// True while the read source is suspended (by flow control or a seen end of input, a hold, or TLS waiting for
    /// room): it must be resumed before it is cancelled. Once closed, as the close left it.
    var isReadSourceSuspended: Bool {
        switch state {
        case .open(let open): open.isReadSourceSuspended
        case .closing(let closing): closing.isReadSourceSuspended
        case .closed(let closed): closed.isReadSourceSuspended
        }
    }

    /// True while the write source watches for room (false: suspended, or not made yet). Once closed, as the close
    /// left it: the source is cancelled as it is.
    var isWriteArmed: Bool {
        switch state {
        case .open(let open): open.sides.output == .armed
        case .closing(let closing): closing.sides.output == .armed
        case .closed(let closed): closed.isWriteArmed
        }
    }

    /// True while a TLS handshake step or read waits for room in the socket (the read source would spin).
    var isWaitingForRoom: Bool {
        switch state {
        case .open(let open): open.sides.isWaitingForRoom
        case .closing(let closing): closing.sides.isWaitingForRoom
        case .closed: false
        }
    }

    /// Why the connection is closing or closed; nil while open.
    var closeReason: CloseReason? {
        switch state {
        case .open: nil
        case .closing(let closing): closing.reason
        case .closed(let closed): closed.reason
        }
    }
}
