extension MQTTReader {
    /// Reads an MQTT 5.0 property list (section 2.2.2): a variable byte integer length, then identifier and value
    /// pairs filling exactly that length. `place` says which properties may stand in it, `packet` names it in
    /// messages; `fromClient` forbids a subscription identifier in PUBLISH (a client never sends one).
    ///
    /// A length past the packet, a value past the list or an unknown identifier is malformed; a property where it does
    /// not belong, one that may appear once appearing twice, or a value out of range, is a protocol error.
    mutating func properties(
        _ place: MQTTPropertyPlace, in packet: String, fromClient: Bool = false
    ) throws(MQTTDecodeError) -> MQTTProperties {
        let length = try variableByteInteger("the property length of \(packet)")
        guard length <= remaining else {
            throw .malformed("\(packet)'s property length \(length) runs past the end of the packet")
        }
        let packetEnd = end
        end = index + length
        readingProperties = true
        defer {
            end = packetEnd
            readingProperties = false
        }
        var properties = MQTTProperties()
        var seen: UInt64 = 0
        while index < end {
            let id = try byte("a property identifier of \(packet)")
            guard let name = MQTTPropertyID.name(id), let places = MQTTPropertyID.places(id) else {
                throw .malformed("unknown property identifier 0x\(String(id, radix: 16, uppercase: true)) in \(packet)")
            }
            guard places.contains(MQTTPropertyPlace.Set(place)) else {
                throw .protocolError("the \(name) property is not allowed in \(packet)")
            }
            if place == .publish && fromClient && id == MQTTPropertyID.subscriptionIdentifier {
                throw .protocolError("a subscription identifier in a client's PUBLISH")
            }
            let repeats =
                id == MQTTPropertyID.userProperty || (id == MQTTPropertyID.subscriptionIdentifier && place == .publish)
            if !repeats {
                if seen & (1 << id) != 0 { throw .protocolError("the \(name) property twice in \(packet)") }
                seen |= 1 << id
            }
            try readValue(of: id, name: name, into: &properties)
        }
        return properties
    }

    /// Reads the value of property `id` (called `name`) into `properties`, checking its range.
    private mutating func readValue(
        of id: UInt8, name: String, into properties: inout MQTTProperties
    ) throws(MQTTDecodeError) {
        typealias ID = MQTTPropertyID
        switch id {
        case ID.payloadFormatIndicator: properties.payloadFormatIndicator = try flag(name)
        case ID.messageExpiryInterval: properties.messageExpiryInterval = try uint32(name)
        case ID.contentType: properties.contentType = try string(name)
        case ID.responseTopic:
            let topic = try string(name)
            do { try MQTTTopicRules.checkName(topic.utf8) } catch {
                throw .protocolError("the response topic \(error.message)")
            }
            properties.responseTopic = topic
        case ID.correlationData: properties.correlationData = try binary(name)
        case ID.subscriptionIdentifier:
            let identifier = try variableByteInteger(name)
            if identifier == 0 { throw .protocolError("a subscription identifier of 0") }
            properties.subscriptionIdentifiers.append(identifier)
        case ID.sessionExpiryInterval: properties.sessionExpiryInterval = try uint32(name)
        case ID.assignedClientIdentifier: properties.assignedClientIdentifier = try string(name)
        case ID.serverKeepAlive: properties.serverKeepAlive = try uint16(name)
        case ID.authenticationMethod: properties.authenticationMethod = try string(name)
        case ID.authenticationData: properties.authenticationData = try binary(name)
        case ID.requestProblemInformation: properties.requestProblemInformation = try flag(name)
        case ID.willDelayInterval: properties.willDelayInterval = try uint32(name)
        case ID.requestResponseInformation: properties.requestResponseInformation = try flag(name)
        case ID.responseInformation: properties.responseInformation = try string(name)
        case ID.serverReference: properties.serverReference = try string(name)
        case ID.reasonString: properties.reasonString = try string(name)
        case ID.receiveMaximum: properties.receiveMaximum = try nonZero16(name)
        case ID.topicAliasMaximum: properties.topicAliasMaximum = try uint16(name)
        case ID.topicAlias: properties.topicAlias = try nonZero16(name)
        case ID.maximumQoS: properties.maximumQoS = try flag(name)
        case ID.retainAvailable: properties.retainAvailable = try flag(name)
        case ID.userProperty:
            let key = try string("a user property's name")
            let value = try string("a user property's value")
            properties.userProperties.append(MQTTUserProperty(key, value))
        case ID.maximumPacketSize:
            let size = try uint32(name)
            if size == 0 { throw .protocolError("a maximum packet size of 0") }
            properties.maximumPacketSize = size
        case ID.wildcardSubscriptionAvailable: properties.wildcardSubscriptionAvailable = try flag(name)
        case ID.subscriptionIdentifierAvailable: properties.subscriptionIdentifierAvailable = try flag(name)
        case ID.sharedSubscriptionAvailable: properties.sharedSubscriptionAvailable = try flag(name)
        default: preconditionFailure("property 0x\(String(id, radix: 16)) has a name but no value reader")
        }
    }

    /// A byte property that is 0 or 1.
    private mutating func flag(_ name: String) throws(MQTTDecodeError) -> UInt8 {
        let value = try byte(name)
        if value > 1 { throw .protocolError("a \(name) of \(value) (must be 0 or 1)") }
        return value
    }

    /// A two-byte property that may not be 0.
    private mutating func nonZero16(_ name: String) throws(MQTTDecodeError) -> UInt16 {
        let value = try uint16(name)
        if value == 0 { throw .protocolError("a \(name) of 0") }
        return value
    }
}
