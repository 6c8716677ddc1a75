import SubscriptionCommands
import SubscriptionMQTT
import SubscriptionProtocol

/// What a session asks of the engine that owns it: to run its commands and to take note of its end. The server is
/// the owner; a session knows it only through this.
protocol SessionOwner: AnyObject {
    /// Runs one parsed command for the session (policy, handler, reply). The command is consumed: its payload and
    /// names move into the handler without reference counting.
    func run(_ command: consuming Command, for session: Session)
    /// Runs a command an MQTT packet of the session made, for `customer` (the client's subscriptions), the
    /// publication it makes carrying `message` (docs/PROTOCOL.md, "MQTT").
    func run(_ command: consuming Command, for session: Session, customer: MQTTCustomer, message: MQTTMessage?)
    /// Handles one decoded MQTT packet of the session, or its decoder's failure.
    func handleMQTT(_ packet: Result<MQTTPacket, MQTTDecodeError>, for session: Session)
    /// Takes the next packet when it is a repeat of the connection's simple publication (one pass); false otherwise.
    func mqttTakeSimplePublish(_ session: Session, _ front: MQTTConnection) -> Bool
    /// The MQTT front for a connection that upgraded to the WebSocket subprotocol `mqtt`.
    func makeMQTTFront() -> MQTTConnection
    /// A reply came for an MQTT connection: what `expectation` says goes out.
    func mqttReplied(
        _ result: Result<Reply, ProtocolError>, expectation: MQTTConnection.Expectation, for session: Session)
    /// An MQTT connection's output drained while its session has messages waiting for room in it.
    func mqttOutputDrained(_ session: Session)
    /// A liveness limit passed for an MQTT connection (its keepalive, no CONNECT in time, a packet left half-way).
    func mqttExpired(_ session: Session, _ front: MQTTConnection, reason: CloseReason)
    /// The session takes no more commands: it leaves the center at once (no later send counts it).
    func sessionStoppedServing(_ session: Session)
    /// The session's output passed `max_pending` as a message arrived; it is cut off next.
    func sessionFellBehind(_ session: Session)
    /// The session closed for `reason`; its descriptor is being released.
    func sessionClosed(_ session: Session, reason: CloseReason)
    /// A fatal protocol error ends the session (for the log).
    func sessionFailed(_ session: Session, with error: ProtocolError)

    /// A TLS session finished its handshake; `peerName` is the subject CN of the client certificate the context
    /// verified (nil without one).
    func sessionEstablishedTLS(_ session: Session, peerName: String?)

    /// A TLS handshake failed (a client that does not speak TLS, a certificate refused); the session closes.
    func sessionFailedTLS(_ session: Session, reason: String)

    /// The client broke its transport's rules (a WebSocket upgrade refused, frames against RFC 6455); the session
    /// closes.
    func sessionBrokeTransport(_ session: Session, problem: String)
}
