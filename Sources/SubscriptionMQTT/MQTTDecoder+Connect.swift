extension MQTTReader {
    /// The protocol name of MQTT 3.1.1 and 5.0.
    static let protocolName: [UInt8] = Array("MQTT".utf8)
    /// The protocol name of MQTT 3.1 (level 3), which this server does not speak.
    static let protocolName31: [UInt8] = Array("MQIsdp".utf8)

    /// CONNECT's body (section 3.1.2): the protocol name and level, the connect flags, the keep alive, the 5.0
    /// properties; then the payload: client identifier, will (properties, topic, payload), user name, password, as
    /// the flags say.
    mutating func connect() throws(MQTTDecodeError) -> MQTTConnect {
        let name = bytes[try lengthPrefixed("the protocol name")]
        let level = try byte("the protocol level")
        let version: MQTTVersion
        if name.elementsEqual(Self.protocolName), let known = MQTTVersion(rawValue: level) {
            version = known
        } else if name.elementsEqual(Self.protocolName) || name.elementsEqual(Self.protocolName31) {
            throw MQTTDecodeError(
                reasonCode: MQTTReasonCode.unsupportedProtocolVersion,
                message: "CONNECT names protocol level \(level) (this server speaks 4, MQTT 3.1.1, and 5, MQTT 5.0)",
                unsupportedLevel: level)
        } else {
            throw MQTTDecodeError(
                reasonCode: MQTTReasonCode.unsupportedProtocolVersion,
                message: "CONNECT names a protocol other than MQTT")
        }
        let flags = try byte("the connect flags")
        if flags & 0x01 != 0 { throw .malformed("CONNECT's reserved connect flag (bit 0) is set") }
        let hasWill = flags & 0x04 != 0
        let willQoSBits = flags >> 3 & 3
        let willRetain = flags & 0x20 != 0
        let hasPassword = flags & 0x40 != 0
        let hasUsername = flags & 0x80 != 0
        if !hasWill && (willQoSBits != 0 || willRetain) {
            throw .malformed("CONNECT sets will QoS or will retain without the will flag")
        }
        guard let willQoS = MQTTQoS(rawValue: willQoSBits) else { throw .malformed("CONNECT with will QoS 3") }
        if version == .v311 && hasPassword && !hasUsername {
            throw .malformed("CONNECT sets the password flag without the user name flag (MQTT 3.1.1)")
        }
        var connect = MQTTConnect(
            version: version, cleanStart: flags & 0x02 != 0, keepAlive: try uint16("the keep alive"), clientID: "")
        if version == .v5 { connect.properties = try properties(.connect, in: "CONNECT") }
        connect.clientID = try string("the client identifier")
        if hasWill {
            var will = MQTTWill(topic: "", payload: [], qos: willQoS, retain: willRetain)
            if version == .v5 { will.properties = try properties(.will, in: "the will properties") }
            will.topic = try string("the will topic")
            do { try MQTTTopicRules.checkName(will.topic.utf8) } catch {
                throw MQTTDecodeError(reasonCode: error.reasonCode, message: "the will topic \(error.message)")
            }
            will.payload = try binary("the will payload")
            connect.will = will
        }
        if hasUsername { connect.username = try string("the user name") }
        if hasPassword { connect.password = try binary("the password") }
        try expectEnd(of: "CONNECT")
        return connect
    }

    /// CONNACK's body (section 3.2.2): the acknowledge flags (bit 0 session present, the others reserved), the
    /// reason (3.1.1: return) code, the 5.0 properties.
    mutating func connAck(version: MQTTVersion) throws(MQTTDecodeError) -> MQTTConnAck {
        let flags = try byte("the acknowledge flags")
        if flags & 0xFE != 0 { throw .malformed("CONNACK's reserved acknowledge flags (bits 1 to 7) are set") }
        var connAck = MQTTConnAck(sessionPresent: flags & 1 != 0, reasonCode: try byte("the reason code"))
        if version == .v5 { connAck.properties = try properties(.connack, in: "CONNACK") }
        try expectEnd(of: "CONNACK")
        return connAck
    }
}
