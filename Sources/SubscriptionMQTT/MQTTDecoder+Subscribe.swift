extension MQTTReader {
    /// SUBSCRIBE's body (section 3.8): the packet identifier, the 5.0 properties, then at least one topic filter,
    /// each with its options byte.
    mutating func subscribe(version: MQTTVersion) throws(MQTTDecodeError) -> MQTTSubscribe {
        var subscribe = MQTTSubscribe(packetID: try packetIdentifier(of: "SUBSCRIBE"), filters: [])
        if version == .v5 { subscribe.properties = try properties(.subscribe, in: "SUBSCRIBE") }
        if isAtEnd { throw noFilter("SUBSCRIBE", version: version) }
        while !isAtEnd {
            let filter = try string("a topic filter")
            let isShared = try checkFilter(filter)
            let options = try subscriptionOptions(version: version)
            if isShared && options.noLocal && version == .v5 {
                throw .protocolError("SUBSCRIBE sets no local on the shared subscription \(filter.debugDescription)")
            }
            subscribe.filters.append((filter, options))
        }
        return subscribe
    }

    /// A SUBSCRIBE filter's options byte (section 3.8.3.1): 3.1.1 has only the QoS, in bits 0 and 1; 5.0 adds no
    /// local (bit 2), retain as published (bit 3) and retain handling (bits 4 and 5). The other bits are reserved.
    private mutating func subscriptionOptions(version: MQTTVersion) throws(MQTTDecodeError) -> MQTTSubscriptionOptions {
        let byte = try self.byte("a topic filter's subscription options")
        let reserved: UInt8 = version == .v311 ? 0xFC : 0xC0
        if byte & reserved != 0 {
            throw .malformed("subscription options 0x\(String(byte, radix: 16)) set reserved bits")
        }
        guard let qos = MQTTQoS(rawValue: byte & 3) else { throw .malformed("a subscription with QoS 3") }
        let retainHandling = byte >> 4 & 3
        if retainHandling == 3 { throw .protocolError("a subscription with retain handling 3") }
        return MQTTSubscriptionOptions(
            qos: qos, noLocal: byte & 4 != 0, retainAsPublished: byte & 8 != 0, retainHandling: retainHandling)
    }

    /// SUBACK's body (section 3.9): the packet identifier, the 5.0 properties, then one reason code per filter (at
    /// least one).
    mutating func subAck(version: MQTTVersion) throws(MQTTDecodeError) -> MQTTSubAck {
        var subAck = MQTTSubAck(packetID: try packetIdentifier(of: "SUBACK"), reasonCodes: [])
        if version == .v5 { subAck.properties = try properties(.suback, in: "SUBACK") }
        if isAtEnd { throw .malformed("SUBACK with no reason code") }
        subAck.reasonCodes = Array(bytes[index..<end])
        index = end
        return subAck
    }

    /// UNSUBSCRIBE's body (section 3.10): the packet identifier, the 5.0 properties, then at least one topic filter.
    mutating func unsubscribe(version: MQTTVersion) throws(MQTTDecodeError) -> MQTTUnsubscribe {
        var unsubscribe = MQTTUnsubscribe(packetID: try packetIdentifier(of: "UNSUBSCRIBE"), filters: [])
        if version == .v5 { unsubscribe.properties = try properties(.unsubscribe, in: "UNSUBSCRIBE") }
        if isAtEnd { throw noFilter("UNSUBSCRIBE", version: version) }
        while !isAtEnd {
            let filter = try string("a topic filter")
            try checkFilter(filter)
            unsubscribe.filters.append(filter)
        }
        return unsubscribe
    }

    /// UNSUBACK's body (section 3.11): the packet identifier; in 5.0 the properties, then one reason code per filter
    /// (at least one).
    mutating func unsubAck(version: MQTTVersion) throws(MQTTDecodeError) -> MQTTUnsubAck {
        var unsubAck = MQTTUnsubAck(packetID: try packetIdentifier(of: "UNSUBACK"))
        if version == .v5 {
            unsubAck.properties = try properties(.unsuback, in: "UNSUBACK")
            if isAtEnd { throw .malformed("UNSUBACK with no reason code") }
            unsubAck.reasonCodes = Array(bytes[index..<end])
            index = end
        }
        try expectEnd(of: "UNSUBACK")
        return unsubAck
    }

    /// Checks a topic filter of SUBSCRIBE or UNSUBSCRIBE (0x8F when it breaks a rule); true for a shared
    /// subscription.
    @discardableResult
    private func checkFilter(_ filter: String) throws(MQTTDecodeError) -> Bool {
        do { return try MQTTTopicRules.checkFilter(filter.utf8) } catch {
            throw MQTTDecodeError(
                reasonCode: error.reasonCode, message: "the topic filter \(filter.debugDescription) \(error.message)")
        }
    }

    /// The failure of a SUBSCRIBE or UNSUBSCRIBE without a filter: a protocol error in 5.0 ([MQTT-3.8.3-2],
    /// [MQTT-3.10.3-2]), malformed in 3.1.1.
    private func noFilter(_ packet: String, version: MQTTVersion) -> MQTTDecodeError {
        let message = "\(packet) with no topic filter"
        return version == .v5 ? .protocolError(message) : .malformed(message)
    }
}
