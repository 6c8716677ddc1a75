import COpenSSL
import SubscriptionSystem

#if canImport(Glibc)
    import Glibc
#endif

/// One TLS session over a non-blocking socket: the OpenSSL calls, each answer classified and recorded in
/// ``progress`` (what to wait for next). The session drives it from its socket's readable and writable events.
///
/// Confined to the event loop's queue, as its ``Session`` is.
final class TLSStream {
    /// The `SSL`, owned (freed in deinit; its socket is the session's and is closed there).
    private let ssl: OpaquePointer
    /// What the last calls answered and what they wait for.
    private(set) var progress = TLSProgress()

    /// Takes ownership of `ssl`, already bound to its socket and in accept state.
    init(ssl: OpaquePointer) {
        self.ssl = ssl
    }

    deinit {
        SSL_free(ssl)
    }

    /// One step of the handshake (`SSL_do_handshake`); `.done` once it finished.
    func handshake() -> TLSProgress.Answer {
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        let answer = result == 1 ? .done(0) : classify(result)
        progress.handshakeAnswered(answer)
        return answer
    }

    /// `SSL_read` into `buffer`, as read(2) answers: bytes, `.wouldBlock` (see ``progress`` for which event), 0 at
    /// the end of the stream; a broken session throws.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> IOResult {
        ERR_clear_error()
        let result = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        let answer = result > 0 ? .done(Int(result)) : classify(result)
        progress.readAnswered(answer)
        return try Self.ioResult(answer, "TLS read")
    }

    /// `SSL_write` of `bytes` (partial writes enabled: it may take fewer). After `.wouldBlock` the next call must
    /// offer the same bytes again, at least ``TLSProgress/pendingWriteLength`` of them (they may have moved).
    func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) -> IOResult {
        ERR_clear_error()
        let result = SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        let answer = result > 0 ? .done(Int(result)) : classify(result)
        progress.writeAnswered(answer, length: bytes.count)
        if case .closed = answer { throw SystemCallError("TLS write: the peer closed", errno: EPIPE) }
        return try Self.ioResult(answer, "TLS write")
    }

    /// Sends close_notify, best effort (one try, whatever the socket takes).
    func shutdown() {
        guard progress.isEstablished else { return }
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    /// The subject CN of the certificate the client presented and the context verified; nil without one.
    var peerCommonName: String? {
        guard let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
        defer { X509_free(certificate) }
        guard SSL_get_verify_result(ssl) == X509_V_OK, let subject = X509_get_subject_name(certificate) else {
            return nil
        }
        var text = [CChar](repeating: 0, count: 256)
        let length = X509_NAME_get_text_by_NID(subject, NID_commonName, &text, Int32(text.count))
        guard length > 0 else { return nil }
        return String(decoding: text.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `SSL_get_error` of a call that returned `result` (≤ 0), classified; errno is read before anything else.
    private func classify(_ result: Int32) -> TLSProgress.Answer {
        let savedErrno = errno
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ: return .wantRead
        case SSL_ERROR_WANT_WRITE: return .wantWrite
        case SSL_ERROR_ZERO_RETURN: return .closed
        case SSL_ERROR_SYSCALL:
            let reason = TLSContext.drainErrors()
            // No errno: the peer ended the TCP stream mid-session (what read(2) reports as 0).
            if savedErrno == 0 { return .closed }
            return .failed("\(String(cString: strerror(savedErrno))) (\(reason))")
        default:
            return .failed(TLSContext.drainErrors())
        }
    }

    /// A read or write answer as ``IOResult``: a block is `.wouldBlock`, the end of the stream 0, a failure thrown
    /// (EPROTO for TLS errors).
    private static func ioResult(_ answer: TLSProgress.Answer, _ operation: String) throws(SystemCallError)
        -> IOResult
    {
        switch answer {
        case .done(let count): return .processed(count)
        case .wantRead, .wantWrite: return .wouldBlock
        case .closed: return .processed(0)
        case .failed(let reason): throw SystemCallError("\(operation): \(reason)", errno: EPROTO)
        }
    }
}
