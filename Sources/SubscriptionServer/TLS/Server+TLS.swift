import Logging
import SubscriptionCommands
import SubscriptionWire

extension Server {
    /// The TLS context for `configuration`'s `tls_cert`, `tls_key` and `tls_client_ca` (which
    /// ``ServerConfiguration/validate()`` checked are set when a `tls://` listener is).
    static func makeTLSContext(_ configuration: ServerConfiguration) throws(ConfigurationError) -> TLSContext {
        guard let certificate = configuration.tlsCertificate, let key = configuration.tlsKey else {
            throw ConfigurationError(key: "tls_cert", problem: "a tls:// listener needs tls_cert and tls_key")
        }
        return try TLSContext(certificate: certificate, key: key, clientCA: configuration.tlsClientCA)
    }

    /// A TLS session is established. With `tls_client_ca`, a verified client certificate whose subject CN is a
    /// configured user's name authenticates the session as that user, as `HELLO name=<user> token=<secret>` would:
    /// the user's rights and name, no `HELLO` needed. Another CN leaves the session to `HELLO` as usual.
    func sessionEstablishedTLS(_ session: Session, peerName: String?) {
        logger.debug(
            "TLS established", metadata: ["session": "\(session.id)", "peer_cn": "\(peerName ?? "-")"])
        guard configuration.tlsClientCA != nil, let peerName, let user = users[ExactName(peerName)] else { return }
        session.client.logIn(as: UserRights(user))
        logger.info(
            "TLS client certificate names user '\(user.name)'",
            metadata: ["session": "\(session.id)", "address": "\(session.peerAddress)"])
    }

    /// A TLS handshake failed: logged at info (a port scanner or a plain-text client is no warning).
    func sessionFailedTLS(_ session: Session, reason: String) {
        logger.info(
            "TLS handshake failed: \(reason)",
            metadata: ["session": "\(session.id)", "address": "\(session.peerAddress)"])
    }
}
