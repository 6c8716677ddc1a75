/// Where one TLS session stands, as a plain value: what OpenSSL answered goes in, what to wait for comes out. It
/// knows nothing of OpenSSL; ``TLSStream`` feeds it.
struct TLSProgress: Equatable {
    /// What an OpenSSL call answered, classified (`SSL_get_error`).
    enum Answer: Equatable {
        /// It moved this many bytes (0 for a handshake step that finished it).
        case done(Int)
        /// It needs the socket readable first (`SSL_ERROR_WANT_READ`).
        case wantRead
        /// It needs the socket writable first (`SSL_ERROR_WANT_WRITE`).
        case wantWrite
        /// The peer ended the stream (close_notify, or a TCP end without one).
        case closed
        /// The session is broken (a protocol error, a failed verification, an I/O error): close it.
        case failed(String)
    }

    /// The socket event a blocked call waits for.
    enum Wait: Equatable {
        /// Nothing: the last call did not block.
        case nothing
        /// Readable.
        case readable
        /// Writable.
        case writable
    }

    /// True once the handshake finished: application data may flow.
    private(set) var isEstablished = false
    /// What the last blocked handshake step or read waits for.
    private(set) var inputWaitsFor = Wait.nothing
    /// What the last blocked write waits for.
    private(set) var outputWaitsFor = Wait.nothing
    /// A write that blocked must be retried with the same bytes, at least as many (OpenSSL's rule); nil when the
    /// last write did not block.
    private(set) var pendingWriteLength: Int?

    /// A handshake step answered.
    mutating func handshakeAnswered(_ answer: Answer) {
        inputWaitsFor = Self.wait(after: answer)
        if case .done = answer { isEstablished = true }
    }

    /// A read answered.
    mutating func readAnswered(_ answer: Answer) {
        inputWaitsFor = Self.wait(after: answer)
    }

    /// A write of `length` bytes answered.
    mutating func writeAnswered(_ answer: Answer, length: Int) {
        outputWaitsFor = Self.wait(after: answer)
        switch answer {
        case .wantRead, .wantWrite: pendingWriteLength = max(pendingWriteLength ?? 0, length)
        default: pendingWriteLength = nil
        }
    }

    private static func wait(after answer: Answer) -> Wait {
        switch answer {
        case .wantRead: return .readable
        case .wantWrite: return .writable
        default: return .nothing
        }
    }
}
