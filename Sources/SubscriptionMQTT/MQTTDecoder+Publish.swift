extension MQTTReader {
    /// PUBLISH's body (section 3.3.2) with the fixed header's `flags`: the topic name, the packet identifier (QoS 1
    /// and 2 only), the 5.0 properties, and the rest of the packet as the payload, a slice of the decoder's buffer.
    /// `lastTopic` is the topic name of the PUBLISH before (a publisher repeats its topic): when these bytes are the
    /// same, that string is used again, checked already; otherwise it becomes this one's.
    mutating func publish(
        flags: UInt8, version: MQTTVersion, fromClient: Bool, lastTopic: inout (bytes: [UInt8], text: String)?
    ) throws(MQTTDecodeError) -> MQTTPublish {
        // The fixed header's check refused QoS 3.
        let qos = MQTTQoS(rawValue: flags >> 1 & 3)!
        let range = try lengthPrefixed("the topic name")
        let topic: String
        if let last = lastTopic, Self.sameBytes(last.bytes, bytes[range]) {
            topic = last.text
        } else {
            guard let text = Self.text(bytes[range]) else {
                throw .malformed("the topic name is not well-formed UTF-8 without U+0000")
            }
            if !text.isEmpty {
                do { try MQTTTopicRules.checkName(text.utf8) } catch {
                    throw MQTTDecodeError(
                        reasonCode: error.reasonCode, message: "PUBLISH's topic name \(error.message)")
                }
                lastTopic = (Array(bytes[range]), text)
            }
            topic = text
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

    /// True when `a` and `b` hold the same bytes (a memory compare).
    static func sameBytes(_ a: [UInt8], _ b: ArraySlice<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { a in b.withUnsafeBytes { b in a.elementsEqual(b) } }
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
