/// MQTT 5.0's reason codes (section 2.4) by name, and 3.1.1's CONNACK return codes. A reason code is a byte; below
/// 0x80 it says the operation succeeded, from 0x80 on that it failed.
public enum MQTTReasonCode {
    public static let success: UInt8 = 0x00
    /// SUBACK: granted QoS 0 (the same byte as success).
    public static let grantedQoS0: UInt8 = 0x00
    public static let grantedQoS1: UInt8 = 0x01
    public static let grantedQoS2: UInt8 = 0x02
    /// DISCONNECT from the client: publish the will.
    public static let disconnectWithWill: UInt8 = 0x04
    /// PUBACK, PUBREC: nobody was subscribed.
    public static let noMatchingSubscribers: UInt8 = 0x10
    /// UNSUBACK: the filter had no subscription.
    public static let noSubscriptionExisted: UInt8 = 0x11
    public static let continueAuthentication: UInt8 = 0x18
    public static let reAuthenticate: UInt8 = 0x19
    public static let unspecifiedError: UInt8 = 0x80
    public static let malformedPacket: UInt8 = 0x81
    public static let protocolError: UInt8 = 0x82
    public static let implementationSpecificError: UInt8 = 0x83
    public static let unsupportedProtocolVersion: UInt8 = 0x84
    public static let clientIdentifierNotValid: UInt8 = 0x85
    public static let badUserNameOrPassword: UInt8 = 0x86
    public static let notAuthorized: UInt8 = 0x87
    public static let serverUnavailable: UInt8 = 0x88
    public static let serverBusy: UInt8 = 0x89
    public static let banned: UInt8 = 0x8A
    public static let serverShuttingDown: UInt8 = 0x8B
    public static let badAuthenticationMethod: UInt8 = 0x8C
    public static let keepAliveTimeout: UInt8 = 0x8D
    public static let sessionTakenOver: UInt8 = 0x8E
    public static let topicFilterInvalid: UInt8 = 0x8F
    public static let topicNameInvalid: UInt8 = 0x90
    public static let packetIdentifierInUse: UInt8 = 0x91
    public static let packetIdentifierNotFound: UInt8 = 0x92
    public static let receiveMaximumExceeded: UInt8 = 0x93
    public static let topicAliasInvalid: UInt8 = 0x94
    public static let packetTooLarge: UInt8 = 0x95
    public static let messageRateTooHigh: UInt8 = 0x96
    public static let quotaExceeded: UInt8 = 0x97
    public static let administrativeAction: UInt8 = 0x98
    public static let payloadFormatInvalid: UInt8 = 0x99
    public static let retainNotSupported: UInt8 = 0x9A
    public static let qosNotSupported: UInt8 = 0x9B
    public static let useAnotherServer: UInt8 = 0x9C
    public static let serverMoved: UInt8 = 0x9D
    public static let sharedSubscriptionsNotSupported: UInt8 = 0x9E
    public static let connectionRateExceeded: UInt8 = 0x9F
    public static let maximumConnectTime: UInt8 = 0xA0
    public static let subscriptionIdentifiersNotSupported: UInt8 = 0xA1
    public static let wildcardSubscriptionsNotSupported: UInt8 = 0xA2

    /// 3.1.1's SUBACK failure.
    public static let subscribeFailure311: UInt8 = 0x80

    /// 3.1.1's CONNACK return codes (section 3.2.2.3).
    public enum ConnectReturn311 {
        public static let accepted: UInt8 = 0
        public static let unacceptableProtocolVersion: UInt8 = 1
        public static let identifierRejected: UInt8 = 2
        public static let serverUnavailable: UInt8 = 3
        public static let badUserNameOrPassword: UInt8 = 4
        public static let notAuthorized: UInt8 = 5
    }
}
