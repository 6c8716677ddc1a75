/// Why ``MQTTDecoder`` refused the bytes a peer sent: the MQTT 5.0 reason code the connection ends with, and a
/// message a person can act on. The decoder is finished after one.
///
/// What a server does with it: when ``unsupportedLevel`` is set (a CONNECT naming a protocol level it does not
/// speak), it answers a CONNACK (3.1.1's return code 1 for levels below 5, 5.0's 0x84 above 5) and closes;
/// otherwise, once a 5.0 CONNECT was decoded, it may send a DISCONNECT (or, for the CONNECT itself, a CONNACK) with
/// ``reasonCode`` before it closes; a 3.1.1 peer is just closed.
public struct MQTTDecodeError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The MQTT 5.0 reason code: ``MQTTReasonCode/malformedPacket`` (0x81), ``MQTTReasonCode/protocolError``
    /// (0x82), ``MQTTReasonCode/unsupportedProtocolVersion`` (0x84), ``MQTTReasonCode/topicFilterInvalid`` (0x8F),
    /// ``MQTTReasonCode/topicNameInvalid`` (0x90) or ``MQTTReasonCode/packetTooLarge`` (0x95).
    public var reasonCode: UInt8
    /// A sentence fragment a person can act on, such as `remaining length in more than 4 bytes`.
    public var message: String
    /// The protocol level a CONNECT named when this server does not speak it (not 4 or 5, or the protocol name
    /// `MQIsdp` of MQTT 3.1); nil for every other failure.
    public var unsupportedLevel: UInt8?

    /// A failure with `reasonCode` and `message`.
    public init(reasonCode: UInt8, message: String, unsupportedLevel: UInt8? = nil) {
        self.reasonCode = reasonCode
        self.message = message
        self.unsupportedLevel = unsupportedLevel
    }

    /// `malformed packet (0x81): remaining length in more than 4 bytes`.
    public var description: String {
        let hex = String(reasonCode, radix: 16, uppercase: true)
        return "\(Self.name(of: reasonCode)) (0x\(hex.count < 2 ? "0" + hex : hex)): \(message)"
    }

    /// A malformed packet (0x81): the bytes break the packet's format.
    static func malformed(_ message: String) -> MQTTDecodeError {
        MQTTDecodeError(reasonCode: MQTTReasonCode.malformedPacket, message: message)
    }

    /// A protocol error (0x82): well-formed bytes that break a rule of the protocol.
    static func protocolError(_ message: String) -> MQTTDecodeError {
        MQTTDecodeError(reasonCode: MQTTReasonCode.protocolError, message: message)
    }

    /// The name of the reason codes the decoder reports, for ``description``.
    private static func name(of reasonCode: UInt8) -> String {
        switch reasonCode {
        case MQTTReasonCode.malformedPacket: return "malformed packet"
        case MQTTReasonCode.protocolError: return "protocol error"
        case MQTTReasonCode.unsupportedProtocolVersion: return "unsupported protocol version"
        case MQTTReasonCode.topicFilterInvalid: return "topic filter invalid"
        case MQTTReasonCode.topicNameInvalid: return "topic name invalid"
        case MQTTReasonCode.packetTooLarge: return "packet too large"
        default: return "reason"
        }
    }
}
