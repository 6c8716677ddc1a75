extension MQTTReader {
    /// PUBLISH's body (section 3.3.2) with the fixed header's `flags`: the topic name, the packet identifier (QoS 1
    /// and 2 only), the 5.0 properties, and the rest of the packet as the payload, a slice of the decoder's buffer.
    mutating func publish(flags: UInt8, version: MQTTVersion, fromClient: Bool) throws(MQTTDecodeError) -> MQTTPublish {
        // The fixed header's check refused QoS 3.
        let qos = MQTTQoS(rawValue: flags >> 1 & 3)!
        let topic = try string("the topic name")
        if !topic.isEmpty {
            do { try MQTTTopicRules.checkName(topic.utf8) } catch {
                throw MQTTDecodeError(reasonCode: error.reasonCode, message: "PUBLISH's topic name \(error.message)")
            }
        }
        let packetID = qos == .atMostOnce ? nil : try packetIdentifier(of: "PUBLISH")
        var properties = MQTTProperties()
        if version == .v5 { properties = try self.properties(.publish, in: "PUBLISH", fromClient: fromClient) }
        if topic.isEmpty {
            if version == .v311 { throw .malformed("PUBLISH with an empty topic name") }
            if properties.topicAlias == nil {
                throw .protocolError("PUBLISH with an empty topic name and no topic alias")
            }
        }
        let payload = bytes[index..<end]
        index = end
        return MQTTPublish(
            topic: topic, qos: qos, retain: flags & 1 != 0, dup: flags & 8 != 0, packetID: packetID,
            properties: properties, payload: payload)
    }

    /// A packet identifier (section 2.2.1): two bytes, not 0.
    mutating func packetIdentifier(of packet: String) throws(MQTTDecodeError) -> UInt16 {
        let packetID = try uint16("the packet identifier")
        if packetID == 0 { throw .protocolError("\(packet) with packet identifier 0") }
        return packetID
    }

    /// The body of PUBACK, PUBREC, PUBREL or PUBCOMP (sections 3.4 to 3.7): the packet identifier; in 5.0, when the
    /// remaining length is above 2, the reason code, and when it is above 3, the properties.
    mutating func ack(_ type: MQTTPacketType, version: MQTTVersion) throws(MQTTDecodeError) -> MQTTAck {
        var ack = MQTTAck(packetID: try packetIdentifier(of: type.name))
        if version == .v5 && !isAtEnd {
            ack.reasonCode = try byte("the reason code")
            if !isAtEnd { ack.properties = try properties(.ack, in: type.name) }
        }
        try expectEnd(of: type.name)
        return ack
    }
}
