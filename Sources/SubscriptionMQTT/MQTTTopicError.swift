/// Why a topic name or topic filter was refused (by ``MQTTTopicMap`` or inside a packet): the MQTT 5.0 reason code
/// that says so and a message a person can act on.
public struct MQTTTopicError: Error, Equatable, Sendable, CustomStringConvertible {
    /// ``MQTTReasonCode/topicNameInvalid`` (0x90) for a topic name, ``MQTTReasonCode/topicFilterInvalid`` (0x8F) for
    /// a topic filter.
    public var reasonCode: UInt8
    /// A sentence fragment about the name or filter, such as `holds '+', a wildcard`.
    public var message: String

    /// A failure with `reasonCode` and `message`.
    public init(reasonCode: UInt8, message: String) {
        self.reasonCode = reasonCode
        self.message = message
    }

    /// `topic name invalid: holds '+', a wildcard`.
    public var description: String {
        (reasonCode == MQTTReasonCode.topicFilterInvalid ? "topic filter invalid: " : "topic name invalid: ") + message
    }

    /// A topic name that breaks a rule.
    static func name(_ message: String) -> MQTTTopicError {
        MQTTTopicError(reasonCode: MQTTReasonCode.topicNameInvalid, message: message)
    }

    /// A topic filter that breaks a rule.
    static func filter(_ message: String) -> MQTTTopicError {
        MQTTTopicError(reasonCode: MQTTReasonCode.topicFilterInvalid, message: message)
    }
}
