import SubscriptionSystem

#if canImport(Glibc)
    import Glibc
#endif

/// Why a session ended; STATS counts each (`closed_<key>`). A session is counted once, under the reason that
/// started its close (a client that sent QUIT and then reset is a client close).
public enum CloseReason: String, CaseIterable, Sendable {
    /// The client closed its side (EOF) or sent QUIT.
    case client
    /// The connection broke: a reset (RST) or another error on read or write.
    case reset
    /// The peer stopped answering TCP keepalive probes (the kernel reported ETIMEDOUT).
    case keepalive
    /// A fatal protocol error (TOOBIG, a bad payload frame) closed it after its `-ERR`.
    case protocolError = "protocol_error"
    /// Its output passed `max_pending` (counted as `slow_consumers`, as version 1 of the protocol names it).
    case slowConsumer = "slow_consumer"
    /// A started command made no progress for `command_timeout`.
    case commandTimeout = "command_timeout"
    /// It did not authenticate within `auth_timeout`.
    case authTimeout = "auth_timeout"
    /// Its `HELLO` failed ``HelloCommand/maxFailures`` times.
    case authFailures = "auth_failures"
    /// A reload removed its user or changed the user's secret.
    case revoked
    /// The daemon stopped (SIGTERM drain).
    case shutdown
    /// An MQTT client sent nothing within one and a half times its keepalive.
    case mqttKeepalive = "mqtt_keepalive"
    /// Another MQTT connection with the same client identifier took its session over.
    case takenOver = "taken_over"
    /// It published a retained value whose save failed in a way subd could not undo (a sync failed, and so did
    /// cutting the value back off the log): the value may be on disk or not, so it gets no answer, only the close.
    case unsaved

    /// The reason for a failed read or write: ETIMEDOUT is the kernel giving up on an unanswered peer.
    static func forError(_ error: SystemCallError) -> CloseReason {
        error.errno == ETIMEDOUT ? .keepalive : .reset
    }
}
