extension ReconnectingClient {
    /// How a ``ReconnectingClient`` connects, waits and buffers.
    ///
    /// ```swift
    /// var options = ReconnectingClient.Options()
    /// options.requestTimeout = .seconds(2)
    /// options.outboundBufferLimit = 64 * 1024
    /// options.backoff = Backoff(initial: .milliseconds(50), cap: .seconds(2))
    /// ```
    public struct Options: Sendable, Equatable {
        /// How long one attempt to connect may take: the TCP connection (each address of a name), the TLS handshake
        /// and the answer to `HELLO`.
        public var connectTimeout: Duration
        /// How long a command may wait for its reply, counted from the call, time spent in the outbound buffer
        /// included; nil: no limit. Past it the call throws ``ClientError/timeout(verb:after:)``.
        public var requestTimeout: Duration?
        /// The waits between attempts to connect.
        public var backoff: Backoff
        /// The most bytes of commands held while disconnected, to be sent on the next connection; a command that
        /// does not fit throws ``ClientError/outboundBufferFull(bytes:limit:)``. 0 holds none.
        public var outboundBufferLimit: Int

        /// Options: 5 s to connect, 10 s for a reply, waits from 100 ms to 5 s, 1 MiB held while disconnected.
        public init(
            connectTimeout: Duration = .seconds(5), requestTimeout: Duration? = .seconds(10),
            backoff: Backoff = Backoff(), outboundBufferLimit: Int = 1 << 20
        ) {
            self.connectTimeout = connectTimeout
            self.requestTimeout = requestTimeout
            self.backoff = backoff
            self.outboundBufferLimit = outboundBufferLimit
        }
    }
}
