/// Writes ``MQTTPacket`` values as MQTT 3.1.1 or 5.0 bytes: plain functions over caller-owned arrays.
///
/// For 3.1.1 the properties and the other 5.0-only fields are left out (UNSUBACK's reason codes, the reason code of
/// an acknowledgement or DISCONNECT). In 5.0 an acknowledgement, DISCONNECT or AUTH takes its short forms: with
/// reason 0 and no properties, neither; with no properties, the reason code alone.
///
/// The server's per-delivery path is `publishHeader(topic:qos:retain:dup:packetID:properties:payloadCount:...)`:
/// everything of a PUBLISH but its payload, which the server appends (or queues) itself, so a payload is never
/// copied to be framed; ``encodedPublishCount(topicCount:packetID:propertiesCount:payloadCount:)`` says how large the
/// whole packet is, to check it against the client's maximum packet size first.
///
/// What a packet cannot hold is a precondition failure: a string or binary field over 65,535 bytes, a remaining
/// length over 268,435,455, a PUBLISH whose packet identifier is missing at QoS 1 or 2, AUTH in 3.1.1.
public enum MQTTEncoder {
    /// The largest variable byte integer (section 1.5.5), the largest remaining length.
    public static let maxVariableByteInteger = 268_435_455

    /// The bytes a variable byte integer of `value` (0 to 268,435,455) takes: 1 to 4.
    public static func variableByteIntegerCount(_ value: Int) -> Int {
        precondition(value >= 0 && value <= maxVariableByteInteger, "a variable byte integer is 0 to 268,435,455")
        return value < 128 ? 1 : value < 16_384 ? 2 : value < 2_097_152 ? 3 : 4
    }

    /// Appends `packet` encoded for `version` to `bytes`. A CONNECT is written with its own
    /// ``MQTTConnect/version`` (the level it names), whatever `version` says.
    public static func encode(_ packet: MQTTPacket, version: MQTTVersion, into bytes: inout [UInt8]) {
        var counter = MQTTByteCounter()
        putBody(packet, version: version, to: &counter)
        precondition(counter.count <= maxVariableByteInteger, "a remaining length of \(counter.count) bytes")
        bytes.append(firstByte(packet))
        bytes.put(variableByteInteger: counter.count)
        putBody(packet, version: version, to: &bytes)
    }

    /// `packet` encoded for `version`.
    public static func encode(_ packet: MQTTPacket, version: MQTTVersion) -> [UInt8] {
        var bytes: [UInt8] = []
        encode(packet, version: version, into: &bytes)
        return bytes
    }

    /// The first byte of `packet`'s fixed header: its type and flags (section 2.1.3).
    static func firstByte(_ packet: MQTTPacket) -> UInt8 {
        let type = packet.type.rawValue << 4
        switch packet {
        case .publish(let publish):
            return type | (publish.dup ? 0x08 : 0) | publish.qos.rawValue << 1 | (publish.retain ? 1 : 0)
        case .pubrel, .subscribe, .unsubscribe:
            return type | 0b0010
        default:
            return type
        }
    }

    /// Writes everything of `packet` after its fixed header.
    static func putBody(_ packet: MQTTPacket, version: MQTTVersion, to sink: inout some MQTTByteSink) {
        let v5 = version == .v5
        switch packet {
        case .connect(let connect):
            putConnect(connect, to: &sink)
        case .connack(let connAck):
            sink.put(connAck.sessionPresent ? 1 : 0)
            sink.put(connAck.reasonCode)
            if v5 { putProperties(connAck.properties, to: &sink) }
        case .publish(let publish):
            precondition((publish.packetID != nil) == (publish.qos != .atMostOnce), "a packet identifier iff QoS > 0")
            sink.put(string: publish.topic)
            if let packetID = publish.packetID { sink.put(uint16: packetID) }
            if v5 { putProperties(publish.properties, to: &sink) }
            sink.put(bytes: publish.payload)
        case .puback(let ack), .pubrec(let ack), .pubrel(let ack), .pubcomp(let ack):
            sink.put(uint16: ack.packetID)
            if v5 { putReason(ack.reasonCode, ack.properties, to: &sink) }
        case .subscribe(let subscribe):
            sink.put(uint16: subscribe.packetID)
            if v5 { putProperties(subscribe.properties, to: &sink) }
            for (filter, options) in subscribe.filters {
                sink.put(string: filter)
                sink.put(optionsByte(options, version: version))
            }
        case .suback(let subAck):
            sink.put(uint16: subAck.packetID)
            if v5 { putProperties(subAck.properties, to: &sink) }
            sink.put(bytes: subAck.reasonCodes)
        case .unsubscribe(let unsubscribe):
            sink.put(uint16: unsubscribe.packetID)
            if v5 { putProperties(unsubscribe.properties, to: &sink) }
            for filter in unsubscribe.filters { sink.put(string: filter) }
        case .unsuback(let unsubAck):
            sink.put(uint16: unsubAck.packetID)
            if v5 {
                putProperties(unsubAck.properties, to: &sink)
                sink.put(bytes: unsubAck.reasonCodes)
            }
        case .pingreq, .pingresp:
            break
        case .disconnect(let disconnect):
            if v5 { putReason(disconnect.reasonCode, disconnect.properties, to: &sink) }
        case .auth(let auth):
            precondition(v5, "AUTH exists in MQTT 5.0 only")
            putReason(auth.reasonCode, auth.properties, to: &sink)
        }
    }

    /// CONNECT's variable header and payload (section 3.1), for the connect's own version.
    private static func putConnect(_ connect: MQTTConnect, to sink: inout some MQTTByteSink) {
        let v5 = connect.version == .v5
        sink.put(binary: MQTTReader.protocolName)
        sink.put(connect.version.rawValue)
        var flags: UInt8 = connect.cleanStart ? 0x02 : 0
        if let will = connect.will {
            flags |= 0x04 | will.qos.rawValue << 3 | (will.retain ? 0x20 : 0)
        }
        if connect.password != nil { flags |= 0x40 }
        if connect.username != nil { flags |= 0x80 }
        sink.put(flags)
        sink.put(uint16: connect.keepAlive)
        if v5 { putProperties(connect.properties, to: &sink) }
        sink.put(string: connect.clientID)
        if let will = connect.will {
            if v5 { putProperties(will.properties, to: &sink) }
            sink.put(string: will.topic)
            sink.put(binary: will.payload)
        }
        if let username = connect.username { sink.put(string: username) }
        if let password = connect.password { sink.put(binary: password) }
    }

    /// The 5.0 tail of an acknowledgement, DISCONNECT or AUTH: nothing for reason 0 without properties, the reason
    /// code alone without properties, else both.
    private static func putReason(_ reasonCode: UInt8, _ properties: MQTTProperties, to sink: inout some MQTTByteSink) {
        let hasProperties = !properties.isEmpty
        guard reasonCode != 0 || hasProperties else { return }
        sink.put(reasonCode)
        if hasProperties { putProperties(properties, to: &sink) }
    }

    /// A SUBSCRIBE filter's options byte (section 3.8.3.1): the QoS only in 3.1.1.
    static func optionsByte(_ options: MQTTSubscriptionOptions, version: MQTTVersion) -> UInt8 {
        guard version == .v5 else { return options.qos.rawValue }
        return options.qos.rawValue | (options.noLocal ? 0x04 : 0) | (options.retainAsPublished ? 0x08 : 0)
            | (options.retainHandling & 3) << 4
    }
}
