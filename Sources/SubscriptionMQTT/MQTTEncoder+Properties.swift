extension MQTTEncoder {
    /// The bytes of `properties`' encoded property list, without its length: what ``propertiesBytes(_:)`` returns.
    public static func propertiesCount(_ properties: MQTTProperties) -> Int {
        var counter = MQTTByteCounter()
        putPropertyList(properties, to: &counter)
        return counter.count
    }

    /// `properties` encoded as an MQTT 5.0 property list without its length (section 2.2.2.2), each property set
    /// written once in identifier order, the repeated ones (subscription identifiers, user properties) in order.
    public static func propertiesBytes(_ properties: MQTTProperties) -> [UInt8] {
        var bytes: [UInt8] = []
        putPropertyList(properties, to: &bytes)
        return bytes
    }

    /// Writes `properties` with their variable byte integer length, as a packet carries them.
    static func putProperties(_ properties: MQTTProperties, to sink: inout some MQTTByteSink) {
        guard !properties.isEmpty else {
            sink.put(0)
            return
        }
        sink.put(variableByteInteger: propertiesCount(properties))
        putPropertyList(properties, to: &sink)
    }

    /// Writes the property list of `properties` without its length.
    static func putPropertyList(_ properties: MQTTProperties, to sink: inout some MQTTByteSink) {
        typealias ID = MQTTPropertyID
        func byte(_ id: UInt8, _ value: UInt8?) {
            guard let value else { return }
            sink.put(id)
            sink.put(value)
        }
        func uint16(_ id: UInt8, _ value: UInt16?) {
            guard let value else { return }
            sink.put(id)
            sink.put(uint16: value)
        }
        func uint32(_ id: UInt8, _ value: UInt32?) {
            guard let value else { return }
            sink.put(id)
            sink.put(uint32: value)
        }
        func string(_ id: UInt8, _ value: String?) {
            guard let value else { return }
            sink.put(id)
            sink.put(string: value)
        }
        func binary(_ id: UInt8, _ value: [UInt8]?) {
            guard let value else { return }
            sink.put(id)
            sink.put(binary: value)
        }
        byte(ID.payloadFormatIndicator, properties.payloadFormatIndicator)
        uint32(ID.messageExpiryInterval, properties.messageExpiryInterval)
        string(ID.contentType, properties.contentType)
        string(ID.responseTopic, properties.responseTopic)
        binary(ID.correlationData, properties.correlationData)
        for identifier in properties.subscriptionIdentifiers {
            sink.put(ID.subscriptionIdentifier)
            sink.put(variableByteInteger: identifier)
        }
        uint32(ID.sessionExpiryInterval, properties.sessionExpiryInterval)
        string(ID.assignedClientIdentifier, properties.assignedClientIdentifier)
        uint16(ID.serverKeepAlive, properties.serverKeepAlive)
        string(ID.authenticationMethod, properties.authenticationMethod)
        binary(ID.authenticationData, properties.authenticationData)
        byte(ID.requestProblemInformation, properties.requestProblemInformation)
        uint32(ID.willDelayInterval, properties.willDelayInterval)
        byte(ID.requestResponseInformation, properties.requestResponseInformation)
        string(ID.responseInformation, properties.responseInformation)
        string(ID.serverReference, properties.serverReference)
        string(ID.reasonString, properties.reasonString)
        uint16(ID.receiveMaximum, properties.receiveMaximum)
        uint16(ID.topicAliasMaximum, properties.topicAliasMaximum)
        uint16(ID.topicAlias, properties.topicAlias)
        byte(ID.maximumQoS, properties.maximumQoS)
        byte(ID.retainAvailable, properties.retainAvailable)
        for property in properties.userProperties {
            sink.put(ID.userProperty)
            sink.put(string: property.name)
            sink.put(string: property.value)
        }
        uint32(ID.maximumPacketSize, properties.maximumPacketSize)
        byte(ID.wildcardSubscriptionAvailable, properties.wildcardSubscriptionAvailable)
        byte(ID.subscriptionIdentifierAvailable, properties.subscriptionIdentifierAvailable)
        byte(ID.sharedSubscriptionAvailable, properties.sharedSubscriptionAvailable)
    }
}
