extension MQTTEncoder {
    /// Appends everything of a PUBLISH but its `payloadCount` payload bytes to `bytes`: the fixed header (whose
    /// remaining length counts the payload), the topic name, the packet identifier (exactly when `qos` is above 0),
    /// and in 5.0 the properties (none when nil). The caller appends the payload, so the packet is whole.
    public static func publishHeader(
        topic: some Collection<UInt8>, qos: MQTTQoS, retain: Bool, dup: Bool, packetID: UInt16?,
        properties: MQTTProperties?, payloadCount: Int, version: MQTTVersion, into bytes: inout [UInt8]
    ) {
        precondition((packetID != nil) == (qos != .atMostOnce), "a packet identifier iff QoS > 0")
        precondition(payloadCount >= 0, "a payload count must not be negative, got \(payloadCount)")
        let propertiesCount: Int? =
            version == .v5 ? properties.map { $0.isEmpty ? 0 : Self.propertiesCount($0) } ?? 0 : nil
        let remaining = publishRemainingCount(
            topicCount: topic.count, packetID: packetID != nil, propertiesCount: propertiesCount,
            payloadCount: payloadCount)
        bytes.append(0x30 | (dup ? 0x08 : 0) | qos.rawValue << 1 | (retain ? 1 : 0))
        bytes.put(variableByteInteger: remaining)
        bytes.put(binary: topic)
        if let packetID { bytes.put(uint16: packetID) }
        if let propertiesCount {
            bytes.put(variableByteInteger: propertiesCount)
            if propertiesCount > 0, let properties { putPropertyList(properties, to: &bytes) }
        }
    }

    /// ``publishHeader(topic:qos:retain:dup:packetID:properties:payloadCount:version:into:)`` for a topic given as a
    /// string: not generic, so a caller in another module (the server, once per delivery) runs the code specialized
    /// here rather than its generic form.
    public static func publishHeader(
        topicName: String, qos: MQTTQoS, retain: Bool, dup: Bool, packetID: UInt16?, properties: MQTTProperties?,
        payloadCount: Int, version: MQTTVersion, into bytes: inout [UInt8]
    ) {
        var topic = topicName
        topic.withUTF8 { utf8 in
            publishHeader(
                topic: utf8, qos: qos, retain: retain, dup: dup, packetID: packetID, properties: properties,
                payloadCount: payloadCount, version: version, into: &bytes)
        }
    }

    /// The bytes of a whole PUBLISH, fixed header included, whose topic name takes `topicCount` bytes, with a
    /// packet identifier or not, a property list of `propertiesCount` bytes without its length (nil in 3.1.1: no
    /// property length at all; see ``propertiesCount(_:)``), and `payloadCount` payload bytes.
    public static func encodedPublishCount(topicCount: Int, packetID: Bool, propertiesCount: Int?, payloadCount: Int)
        -> Int
    {
        let remaining = publishRemainingCount(
            topicCount: topicCount, packetID: packetID, propertiesCount: propertiesCount, payloadCount: payloadCount)
        return 1 + variableByteIntegerCount(remaining) + remaining
    }

    /// The remaining length of such a PUBLISH.
    private static func publishRemainingCount(
        topicCount: Int, packetID: Bool, propertiesCount: Int?, payloadCount: Int
    ) -> Int {
        var remaining = 2 + topicCount + (packetID ? 2 : 0) + payloadCount
        if let propertiesCount { remaining += variableByteIntegerCount(propertiesCount) + propertiesCount }
        precondition(remaining <= maxVariableByteInteger, "a PUBLISH with a remaining length of \(remaining) bytes")
        return remaining
    }
}
