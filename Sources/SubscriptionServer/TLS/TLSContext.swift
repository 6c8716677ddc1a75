import COpenSSL
import SubscriptionSystem

/// The server's TLS settings loaded into one OpenSSL `SSL_CTX`: certificate chain, private key and, with a client
/// CA, the requirement that clients present a certificate it signed. Made at start and again on each reload (new
/// sessions use the newest; a session keeps the context it started with, which OpenSSL reference-counts).
///
/// `@unchecked Sendable`: the `SSL_CTX` is only configured in ``init(certificate:key:clientCA:)``; afterwards OpenSSL
/// only reads it (SSL_new), which it allows from any thread.
final class TLSContext: @unchecked Sendable {
    /// The `SSL_CTX`, owned (freed in deinit).
    private let context: OpaquePointer
    /// True when clients must present a certificate signed by `tls_client_ca`.
    let verifiesClients: Bool

    /// Loads `certificate` (PEM, the chain with the server's certificate first) and `key` (PEM), checks they
    /// match, and with `clientCA` (PEM, one or more CA certificates) requires and verifies client certificates.
    /// Throws a ``ConfigurationError`` naming the key whose file is wrong, with OpenSSL's reason.
    init(certificate: String, key: String, clientCA: String?) throws(ConfigurationError) {
        guard let method = TLS_server_method(), let context = SSL_CTX_new(method) else {
            throw ConfigurationError(key: "tls_cert", problem: "cannot make a TLS context: \(Self.drainErrors())")
        }
        self.context = context
        self.verifiesClients = clientCA != nil
        _ = subd_ssl_ctx_set_server_defaults(context)
        _ = subd_ssl_ctx_set_partial_write_modes(context)
        // Without a session id context, a resumed session on a context that verifies clients fails (internal_error).
        let sessionContext = Array("subd".utf8)
        _ = SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count))
        ERR_clear_error()
        guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
            throw ConfigurationError(key: "tls_cert", problem: "cannot load '\(certificate)': \(Self.drainErrors())")
        }
        guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
            throw ConfigurationError(key: "tls_key", problem: "cannot load '\(key)': \(Self.drainErrors())")
        }
        guard SSL_CTX_check_private_key(context) == 1 else {
            throw ConfigurationError(
                key: "tls_key", problem: "'\(key)' does not match the certificate: \(Self.drainErrors())")
        }
        if let clientCA {
            guard SSL_CTX_load_verify_locations(context, clientCA, nil) == 1,
                let names = SSL_load_client_CA_file(clientCA)
            else {
                throw ConfigurationError(
                    key: "tls_client_ca", problem: "cannot load '\(clientCA)': \(Self.drainErrors())")
            }
            // The context takes ownership of the list.
            SSL_CTX_set_client_CA_list(context, names)
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
    }

    deinit {
        SSL_CTX_free(context)
    }

    /// A server-side TLS session over the connected, non-blocking socket `fd` (which it never closes); nil when
    /// OpenSSL cannot make one (out of memory).
    func makeStream(fd: Int32) -> TLSStream? {
        guard let ssl = SSL_new(context) else { return nil }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            return nil
        }
        SSL_set_accept_state(ssl)
        return TLSStream(ssl: ssl)
    }

    /// OpenSSL's queued errors for this thread, as one line (and the queue emptied).
    static func drainErrors() -> String {
        var text = [CChar](repeating: 0, count: 1024)
        guard subd_ssl_drain_errors(&text, text.count) > 0 else { return "no reason given" }
        return String(decoding: text.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
