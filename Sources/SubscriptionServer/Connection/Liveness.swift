import SubscriptionProtocol
import SubscriptionSystem

#if canImport(Glibc)
    import Glibc
#endif

/// When a connection has gone too long without doing what it must (`command_timeout`, `auth_timeout`); the
/// server checks every open session against it a few times a second. Keepalive, the third liveness rule, is the
/// kernel's (``TCPKeepalive``).
struct LivenessPolicy: Equatable, Sendable {
    /// A started command may go this long without a new byte while the session is being read; 0 is off.
    var commandTimeoutNanoseconds: UInt64
    /// With authentication on, a connection may go this long without a successful `HELLO`; 0 is off.
    var authTimeoutNanoseconds: UInt64

    /// What a session shows the check.
    struct Facts {
        /// When the connection was accepted.
        var connectedAt: UInt64
        /// When its last bytes arrived, or when reading last resumed after a pause.
        var lastInputAt: UInt64
        /// True when bytes of an unfinished command are buffered.
        var hasPartialCommand: Bool
        /// True while the server reads the socket (open, not paused by flow control).
        var isReading: Bool
        /// True once HELLO authenticated it (or when it never needed to).
        var isAuthenticated: Bool
    }

    /// A timeout that ends a session, with the line it is told.
    struct Expiry: Equatable {
        /// The close reason STATS counts.
        var reason: CloseReason
        /// The error the client is sent before the close.
        var error: ProtocolError
    }

    /// True when no rule is on (the server then skips the check).
    var isOff: Bool { commandTimeoutNanoseconds == 0 && authTimeoutNanoseconds == 0 }

    /// The timeout `facts` have passed at `now`, if any. `authenticationRequired` is whether the server asks for
    /// `HELLO token=` now (a reload may turn it off).
    func expiry(of facts: Facts, now: UInt64, authenticationRequired: Bool) -> Expiry? {
        if authTimeoutNanoseconds > 0, authenticationRequired, !facts.isAuthenticated,
            now &- facts.connectedAt >= authTimeoutNanoseconds
        {
            return Expiry(
                reason: .authTimeout,
                error: ProtocolError(
                    .limit, "not authenticated within auth_timeout (\(Self.seconds(authTimeoutNanoseconds)))")
            )
        }
        if commandTimeoutNanoseconds > 0, facts.isReading, facts.hasPartialCommand,
            now &- facts.lastInputAt >= commandTimeoutNanoseconds
        {
            return Expiry(
                reason: .commandTimeout,
                error: ProtocolError(
                    .limit, "command not completed within command_timeout (\(Self.seconds(commandTimeoutNanoseconds)))")
            )
        }
        return nil
    }

    /// `60 s`, `0.5 s`.
    static func seconds(_ nanoseconds: UInt64) -> String {
        let whole = nanoseconds / 1_000_000_000
        if whole * 1_000_000_000 == nanoseconds { return "\(whole) s" }
        return "\(Double(nanoseconds) / 1e9) s"
    }

    /// Nanoseconds from a configured number of seconds (negative values are refused by validation first).
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        UInt64((seconds * 1e9).rounded())
    }
}

/// TCP keepalive on accepted sockets: the kernel probes a silent peer and reports ETIMEDOUT when it stops
/// answering (a cable pulled, a host gone), which closes the session (STATS `closed_keepalive`).
public struct TCPKeepalive: Equatable, Sendable {
    /// Seconds of silence before the first probe; 0 turns keepalive off.
    public var idle: Int
    /// Seconds between probes.
    public var interval: Int
    /// Unanswered probes before the peer is declared gone.
    public var count: Int

    /// Keepalive after `idle` seconds, then every `interval` seconds, `count` times.
    public init(idle: Int, interval: Int, count: Int) {
        self.idle = idle
        self.interval = interval
        self.count = count
    }

    /// How long a peer may leave sent bytes unacknowledged before the connection is dropped: the same time keepalive
    /// takes to give up (0 when keepalive is off: the kernel's own retransmission limit applies).
    var userTimeoutMilliseconds: Int32 {
        idle > 0 ? Int32((idle + interval * count) * 1000) : 0
    }

    /// Sets the options on a connected TCP socket. Keepalive probes only a connection with nothing in flight, so
    /// TCP_USER_TIMEOUT is set to the same total: a peer that vanished while output was on its way is found in the
    /// same time, not after the retransmissions give up (about 15 minutes). A live peer that merely reads slowly
    /// still acknowledges the zero-window probes and is not affected.
    func apply(to fd: Int32) throws(SystemCallError) {
        try Syscall.setOption(fd, SOL_SOCKET, SO_KEEPALIVE, idle > 0 ? 1 : 0, "SO_KEEPALIVE")
        try Syscall.setOption(fd, Int32(IPPROTO_TCP), TCP_USER_TIMEOUT, userTimeoutMilliseconds, "TCP_USER_TIMEOUT")
        guard idle > 0 else { return }
        try Syscall.setOption(fd, Int32(IPPROTO_TCP), TCP_KEEPIDLE, Int32(idle), "TCP_KEEPIDLE")
        try Syscall.setOption(fd, Int32(IPPROTO_TCP), TCP_KEEPINTVL, Int32(interval), "TCP_KEEPINTVL")
        try Syscall.setOption(fd, Int32(IPPROTO_TCP), TCP_KEEPCNT, Int32(count), "TCP_KEEPCNT")
    }
}
