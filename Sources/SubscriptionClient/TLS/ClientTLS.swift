import COpenSSL
import Glibc
import SubscriptionSystem

/// A client-side TLS session over a connected non-blocking socket: made and handshaken (blocking, with poll(2), off
/// the cooperative pool, as ``SocketConnector`` is), then read and written by its ``Connection`` on its queue.
///
/// `@unchecked Sendable`: handed once from the connecting thread to the connection, then used only on its queue.
final class ClientTLS: @unchecked Sendable {
    /// The `SSL`, owned; it holds a reference to its `SSL_CTX`. Freed in deinit (the socket is the connection's).
    private let ssl: OpaquePointer

    private init(ssl: OpaquePointer) {
        self.ssl = ssl
    }

    deinit {
        SSL_free(ssl)
    }

    /// Makes a session to `host` (of `endpoint`, named in errors) over `fd` with `options`, verifying the server's
    /// certificate (chain and host name or IP address), and completes the handshake within `timeout`. Throws a one-line
    /// reason.
    static func handshake(fd: Int32, host: String, endpoint: String, options: TLSOptions, timeout: Duration)
        throws(ClientError)
        -> ClientTLS
    {
        func failure(_ what: String) -> ClientError {
            .connectFailed(endpoint: endpoint, reason: "TLS: \(what): \(drainErrors())")
        }
        ERR_clear_error()
        guard let method = TLS_client_method(), let context = SSL_CTX_new(method) else {
            throw failure("cannot make a TLS context")
        }
        // The SSL takes its own reference to the context.
        defer { SSL_CTX_free(context) }
        _ = subd_ssl_ctx_set_partial_write_modes(context)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let caFile = options.caFile {
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw failure("cannot load '\(caFile)'")
            }
        } else {
            SSL_CTX_set_default_verify_paths(context)
        }
        if let certificate = options.certificate {
            guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
                throw failure("cannot load '\(certificate)'")
            }
            guard SSL_CTX_use_PrivateKey_file(context, options.key ?? certificate, SSL_FILETYPE_PEM) == 1 else {
                throw failure("cannot load '\(options.key ?? certificate)'")
            }
        }
        guard let ssl = SSL_new(context) else { throw failure("cannot make a TLS session") }
        let session = ClientTLS(ssl: ssl)
        guard SSL_set_fd(ssl, fd) == 1 else { throw failure("cannot use the socket") }
        // Only a literal inet_pton takes is an IP address ("127.1" is a name: it then matches no certificate).
        var v4 = in_addr()
        var v6 = in6_addr()
        let isAddress = inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
        let named = isAddress ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) : SSL_set1_host(ssl, host)
        guard named == 1 else { throw failure("cannot check the server's name '\(host)'") }
        if !isAddress { _ = subd_ssl_set_server_name(ssl, host) }
        SSL_set_connect_state(ssl)
        let deadline = ContinuousClock.now + timeout
        while true {
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            if result == 1 { return session }
            let events: Int16
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ: events = Int16(POLLIN)
            case SSL_ERROR_WANT_WRITE: events = Int16(POLLOUT)
            default:
                let verify = SSL_get_verify_result(ssl)
                if verify != X509_V_OK {
                    throw .connectFailed(
                        endpoint: endpoint,
                        reason:
                            "TLS: the server's certificate: \(String(cString: X509_verify_cert_error_string(verify)))")
                }
                throw failure("handshake failed")
            }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { throw .connectFailed(endpoint: endpoint, reason: "TLS: handshake timed out") }
            let milliseconds = Int32(clamping: left.components.seconds * 1000 + 1)
            do throws(SystemCallError) {
                _ = try Syscall.poll(fd, events: events, milliseconds: milliseconds)
            } catch {
                throw .connectFailed(endpoint: endpoint, reason: "TLS: \(error.reason)")
            }
        }
    }

    /// `SSL_read` as read(2) answers: bytes, `.wouldBlock`, 0 at the end; a broken session throws.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> IOResult {
        ERR_clear_error()
        let result = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if result > 0 { return .processed(Int(result)) }
        return try outcome(of: result, "TLS read")
    }

    /// Bytes OpenSSL has decrypted and not yet handed out (the socket will not report them readable).
    var pendingBytes: Int { Int(SSL_pending(ssl)) }

    /// `SSL_write` as send(2) answers (partial writes enabled). After `.wouldBlock`, the next call offers the same
    /// bytes again, at least as many (they may have moved: ACCEPT_MOVING_WRITE_BUFFER).
    func write(_ bytes: UnsafeRawBufferPointer) throws(SystemCallError) -> IOResult {
        ERR_clear_error()
        let result = SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        if result > 0 { return .processed(Int(result)) }
        if case .processed = try outcome(of: result, "TLS write") {
            throw SystemCallError("TLS write: the peer closed", errno: EPIPE)
        }
        return .wouldBlock
    }

    private func outcome(of result: Int32, _ operation: String) throws(SystemCallError) -> IOResult {
        let savedErrno = errno
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .wouldBlock
        case SSL_ERROR_ZERO_RETURN: return .processed(0)
        case SSL_ERROR_SYSCALL where savedErrno == 0: return .processed(0)
        default:
            throw SystemCallError("\(operation): \(Self.drainErrors())", errno: savedErrno == 0 ? EPROTO : savedErrno)
        }
    }

    private static func drainErrors() -> String {
        var text = [CChar](repeating: 0, count: 1024)
        guard subd_ssl_drain_errors(&text, text.count) > 0 else { return "no reason given" }
        return String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
