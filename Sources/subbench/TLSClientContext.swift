import COpenSSL
import Glibc

/// The OpenSSL client context of a `--tls` run: every bench connection is a TLS session made from it, verifying the
/// server's certificate chain against one CA file (or the system's trusted CAs) and the server's name or address.
///
/// `@unchecked Sendable`: the `SSL_CTX` is configured in `init` and only read after that (`SSL_new` takes a
/// reference); OpenSSL allows that from any thread. The sessions themselves are not shared (see ``BenchConnection``).
final class TLSClientContext: @unchecked Sendable {
    /// Bytes OpenSSL reads from the socket at once (read-ahead): several 16 KiB records per `recv`.
    private static let readBufferBytes = 64 * 1024

    /// The `SSL_CTX`, owned: freed in deinit (each `SSL` made from it holds its own reference).
    private let context: OpaquePointer

    /// A context that trusts `caFile` (a PEM file of CA certificates), or the system's trusted CAs when nil.
    init(caFile: String?) throws(BenchError) {
        ERR_clear_error()
        guard let method = TLS_client_method(), let context = SSL_CTX_new(method) else {
            throw .tls("cannot make a TLS context: \(openSSLErrors())")
        }
        self.context = context
        guard subd_ssl_ctx_set_blocking_client_modes(context) == 1 else {
            throw .tls("cannot set the TLS context's modes: \(openSSLErrors())")
        }
        SSL_CTX_set_default_read_buffer_len(context, Self.readBufferBytes)
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        if let caFile {
            guard access(caFile, R_OK) == 0 else {
                throw .tls("cannot read the CA file '\(caFile)': \(errnoText(errno))")
            }
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                throw .tls("cannot load the CA file '\(caFile)': \(openSSLErrors())")
            }
        } else if SSL_CTX_set_default_verify_paths(context) != 1 {
            throw .tls("cannot load the system's trusted CAs: \(openSSLErrors())")
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// Makes a session on the connected blocking `socket` and completes the handshake with `host` (checked as an IP
    /// address when it is one, else as a DNS name that is also sent as SNI). The returned `SSL` is owned by the
    /// caller (``BenchConnection`` frees it); on failure it is freed here.
    func handshake(on socket: BenchSocket, host: String) throws(BenchError) -> OpaquePointer {
        ERR_clear_error()
        guard let ssl = SSL_new(context) else { throw .tls("cannot make a TLS session: \(openSSLErrors())") }
        var handedOver = false
        defer { if !handedOver { SSL_free(ssl) } }
        guard SSL_set_fd(ssl, socket.fd) == 1 else { throw .tls("cannot use the socket: \(openSSLErrors())") }
        // Only what inet_pton takes whole is an address ("127.1" is a name, which then matches no certificate).
        var v4 = in_addr()
        var v6 = in6_addr()
        let isAddress = inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
        let named = isAddress ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) : SSL_set1_host(ssl, host)
        guard named == 1 else { throw .tls("cannot check the server's name '\(host)': \(openSSLErrors())") }
        if !isAddress { _ = subd_ssl_set_server_name(ssl, host) }
        // The socket is blocking: SSL_connect returns once the handshake is done or failed.
        let result = SSL_connect(ssl)
        guard result == 1 else {
            let savedErrno = errno
            let code = SSL_get_error(ssl, result)
            let verify = SSL_get_verify_result(ssl)
            if verify != X509_V_OK {
                throw .tls("the server's certificate: \(String(cString: X509_verify_cert_error_string(verify)))")
            }
            if code == SSL_ERROR_SYSCALL, ERR_peek_error() == 0 {
                throw savedErrno == 0
                    ? .connectionClosed("during the TLS handshake") : .io(what: "the TLS handshake", errno: savedErrno)
            }
            throw .tls("handshake with \(host) failed: \(openSSLErrors())")
        }
        handedOver = true
        return ssl
    }
}

/// This thread's OpenSSL error queue as one line (emptied), or `no reason given`.
func openSSLErrors() -> String {
    var text = [CChar](repeating: 0, count: 1024)
    guard subd_ssl_drain_errors(&text, text.count) > 0 else { return "no reason given" }
    return String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
