/// How a client speaks TLS to a subd `tls://` listener.
public struct TLSOptions: Sendable, Equatable {
    /// A PEM file of the CA certificates to trust for the server's certificate; nil for the system's (Debian's
    /// `/etc/ssl/certs`).
    public var caFile: String?
    /// A PEM client certificate to present (a server with `tls_client_ca` requires one; its CN may name the user).
    public var certificate: String?
    /// The PEM private key of ``certificate``.
    public var key: String?

    /// TLS options; all nil: trust the system's CAs and present no certificate.
    public init(caFile: String? = nil, certificate: String? = nil, key: String? = nil) {
        self.caFile = caFile
        self.certificate = certificate
        self.key = key
    }
}
