import Foundation

/// The tests' own MQTT 3.1.1 and 5.0 packet encoder and decoder, written from the specifications (3.1.1 section 2
/// and 3, 5.0 section 2 and 3) independently of subd's codec, byte by byte, so that a test can send exactly the
/// packet it means (malformed ones included) and check every byte the server answers.
enum MQTTType {
    static let connect: UInt8 = 1
    static let connack: UInt8 = 2
    static let publish: UInt8 = 3
    static let puback: UInt8 = 4
    static let pubrec: UInt8 = 5
    static let pubrel: UInt8 = 6
    static let pubcomp: UInt8 = 7
    static let subscribe: UInt8 = 8
    static let suback: UInt8 = 9
    static let unsubscribe: UInt8 = 10
    static let unsuback: UInt8 = 11
    static let pingreq: UInt8 = 12
    static let pingresp: UInt8 = 13
    static let disconnect: UInt8 = 14
    static let auth: UInt8 = 15

    /// The specification's name of a packet type, for failure messages.
    static func name(_ type: UInt8) -> String {
        let names = [
            "RESERVED", "CONNECT", "CONNACK", "PUBLISH", "PUBACK", "PUBREC", "PUBREL", "PUBCOMP", "SUBSCRIBE",
            "SUBACK", "UNSUBSCRIBE", "UNSUBACK", "PINGREQ", "PINGRESP", "DISCONNECT", "AUTH",
        ]
        return type < 16 ? names[Int(type)] : "type \(type)"
    }
}

/// One packet as read off the wire: its type (the high 4 bits of the first byte), its flags (the low 4) and the
/// bytes after the remaining length.
struct MQTTFrame: Equatable, CustomStringConvertible {
    var type: UInt8
    var flags: UInt8
    var body: [UInt8]

    var description: String { "\(MQTTType.name(type)) flags \(flags) body \(describeBytes(body, limit: 80))" }
}

/// An MQTT 5.0 property (section 2.2.2.2), with the value type its identifier has.
struct MQTTProperty: Equatable, CustomStringConvertible {
    enum Value: Equatable {
        case byte(UInt8)
        case two(UInt16)
        case four(UInt32)
        case varint(Int)
        case string(String)
        case binary([UInt8])
        case pair(String, String)
    }

    var id: UInt8
    var value: Value

    static let payloadFormatIndicator: UInt8 = 0x01
    static let messageExpiryInterval: UInt8 = 0x02
    static let contentType: UInt8 = 0x03
    static let responseTopic: UInt8 = 0x08
    static let correlationData: UInt8 = 0x09
    static let subscriptionIdentifier: UInt8 = 0x0B
    static let sessionExpiryInterval: UInt8 = 0x11
    static let assignedClientIdentifier: UInt8 = 0x12
    static let serverKeepAlive: UInt8 = 0x13
    static let authenticationMethod: UInt8 = 0x15
    static let authenticationData: UInt8 = 0x16
    static let requestProblemInformation: UInt8 = 0x17
    static let willDelayInterval: UInt8 = 0x18
    static let requestResponseInformation: UInt8 = 0x19
    static let responseInformation: UInt8 = 0x1A
    static let serverReference: UInt8 = 0x1C
    static let reasonString: UInt8 = 0x1F
    static let receiveMaximum: UInt8 = 0x21
    static let topicAliasMaximum: UInt8 = 0x22
    static let topicAlias: UInt8 = 0x23
    static let maximumQoS: UInt8 = 0x24
    static let retainAvailable: UInt8 = 0x25
    static let userProperty: UInt8 = 0x26
    static let maximumPacketSize: UInt8 = 0x27
    static let wildcardSubscriptionAvailable: UInt8 = 0x28
    static let subscriptionIdentifierAvailable: UInt8 = 0x29
    static let sharedSubscriptionAvailable: UInt8 = 0x2A

    /// The value type of each identifier: b byte, 2 two-byte integer, 4 four-byte integer, v variable byte
    /// integer, s UTF-8 string, d binary data, p string pair.
    static let kinds: [UInt8: Character] = [
        0x01: "b", 0x02: "4", 0x03: "s", 0x08: "s", 0x09: "d", 0x0B: "v", 0x11: "4", 0x12: "s", 0x13: "2", 0x15: "s",
        0x16: "d", 0x17: "b", 0x18: "4", 0x19: "b", 0x1A: "s", 0x1C: "s", 0x1F: "s", 0x21: "2", 0x22: "2",
        0x23: "2", 0x24: "b", 0x25: "b", 0x26: "p", 0x27: "4", 0x28: "b", 0x29: "b", 0x2A: "b",
    ]

    static func user(_ name: String, _ value: String) -> MQTTProperty {
        MQTTProperty(id: userProperty, value: .pair(name, value))
    }

    var description: String { String(format: "0x%02X=", id) + "\(value)" }
}

extension [MQTTProperty] {
    /// The first property with `id`.
    func first(_ id: UInt8) -> MQTTProperty.Value? { first { $0.id == id }?.value }

    /// The Reason String (0x1F), if any.
    var reasonString: String? {
        if case .string(let text)? = first(MQTTProperty.reasonString) { return text }
        return nil
    }

    /// Every User Property (0x26), in order.
    var userProperties: [[String]] {
        compactMap { property in
            if case .pair(let name, let value) = property.value { return [name, value] }
            return nil
        }
    }

    /// Every Subscription Identifier (0x0B), in order.
    var subscriptionIdentifiers: [Int] {
        compactMap { property in
            if property.id == MQTTProperty.subscriptionIdentifier, case .varint(let value) = property.value {
                return value
            }
            return nil
        }
    }

    /// An integer property's value (byte, two or four bytes, or variable), nil when absent.
    func integer(_ id: UInt8) -> Int? {
        switch first(id) {
        case .byte(let value)?: return Int(value)
        case .two(let value)?: return Int(value)
        case .four(let value)?: return Int(value)
        case .varint(let value)?: return value
        default: return nil
        }
    }

    /// A string property's value, nil when absent.
    func string(_ id: UInt8) -> String? {
        if case .string(let text)? = first(id) { return text }
        return nil
    }
}

/// Builds packets byte by byte.
enum MQTTEncode {
    /// The variable byte integer of `value` (section 1.5.5 / 2.2.3).
    static func varint(_ value: Int) -> [UInt8] {
        var value = value
        var bytes: [UInt8] = []
        repeat {
            var byte = UInt8(value % 128)
            value /= 128
            if value > 0 { byte |= 0x80 }
            bytes.append(byte)
        } while value > 0
        return bytes
    }

    static func two(_ value: UInt16) -> [UInt8] { [UInt8(value >> 8), UInt8(value & 0xFF)] }

    static func four(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// A length-prefixed field of `bytes` (a UTF-8 string's or binary data's encoding).
    static func field(_ bytes: [UInt8]) -> [UInt8] { two(UInt16(bytes.count)) + bytes }

    static func string(_ text: String) -> [UInt8] { field(Array(text.utf8)) }

    /// A property block: its length, then each property.
    static func properties(_ properties: [MQTTProperty]) -> [UInt8] {
        var bytes: [UInt8] = []
        for property in properties {
            bytes += varint(Int(property.id))
            switch property.value {
            case .byte(let value): bytes.append(value)
            case .two(let value): bytes += two(value)
            case .four(let value): bytes += four(value)
            case .varint(let value): bytes += varint(value)
            case .string(let text): bytes += string(text)
            case .binary(let data): bytes += field(data)
            case .pair(let name, let value): bytes += string(name) + string(value)
            }
        }
        return varint(bytes.count) + bytes
    }

    /// A whole packet: the first byte, the remaining length, the body.
    static func packet(_ type: UInt8, flags: UInt8 = 0, _ body: [UInt8]) -> [UInt8] {
        [type << 4 | flags] + varint(body.count) + body
    }

    /// A will: topic, payload, QoS, retain and (5.0) its properties.
    struct Will {
        var topic: String
        var payload: [UInt8]
        var qos: UInt8 = 0
        var retain = false
        var properties: [MQTTProperty] = []
    }

    /// CONNECT (`version` 4 is 3.1.1, 5 is 5.0); `protocolName` and `version` may be anything, for refusals.
    static func connect(
        version: UInt8, clientID: String, clean: Bool = true, keepAlive: UInt16 = 60, username: String? = nil,
        password: [UInt8]? = nil, will: Will? = nil, properties: [MQTTProperty] = [], protocolName: String = "MQTT"
    ) -> [UInt8] {
        var flags: UInt8 = clean ? 0x02 : 0
        if let will {
            flags |= 0x04 | will.qos << 3 | (will.retain ? 0x20 : 0)
        }
        if password != nil { flags |= 0x40 }
        if username != nil { flags |= 0x80 }
        var body = string(protocolName) + [version, flags] + two(keepAlive)
        if version == 5 { body += self.properties(properties) }
        body += string(clientID)
        if let will {
            if version == 5 { body += self.properties(will.properties) }
            body += string(will.topic) + field(will.payload)
        }
        if let username { body += string(username) }
        if let password { body += field(password) }
        return packet(MQTTType.connect, body)
    }

    /// PUBLISH; `topic` as bytes (so that invalid UTF-8 can be sent).
    static func publish(
        version: UInt8, topic: [UInt8], payload: [UInt8], qos: UInt8 = 0, retain: Bool = false, dup: Bool = false,
        packetID: UInt16? = nil, properties: [MQTTProperty] = []
    ) -> [UInt8] {
        let flags = (dup ? 0x08 : 0) | qos << 1 | (retain ? 1 : 0)
        var body = field(topic)
        if qos > 0 { body += two(packetID ?? 1) }
        if version == 5 { body += self.properties(properties) }
        return packet(MQTTType.publish, flags: flags, body + payload)
    }

    static func publish(
        version: UInt8, topic: String, payload: [UInt8], qos: UInt8 = 0, retain: Bool = false,
        packetID: UInt16? = nil, properties: [MQTTProperty] = []
    ) -> [UInt8] {
        publish(
            version: version, topic: Array(topic.utf8), payload: payload, qos: qos, retain: retain,
            packetID: packetID, properties: properties)
    }

    /// The subscription options byte of 5.0 (section 3.8.3.1); 3.1.1 takes the QoS alone.
    static func options(qos: UInt8, noLocal: Bool = false, retainAsPublished: Bool = false, retainHandling: UInt8 = 0)
        -> UInt8
    {
        qos | (noLocal ? 0x04 : 0) | (retainAsPublished ? 0x08 : 0) | retainHandling << 4
    }

    /// SUBSCRIBE of `filters`, each with its options byte.
    static func subscribe(
        version: UInt8, packetID: UInt16, _ filters: [(String, UInt8)], properties: [MQTTProperty] = []
    ) -> [UInt8] {
        var body = two(packetID)
        if version == 5 { body += self.properties(properties) }
        for (filter, options) in filters { body += string(filter) + [options] }
        return packet(MQTTType.subscribe, flags: 2, body)
    }

    /// PUBACK, PUBREC, PUBREL (flags 2) or PUBCOMP: the identifier and (5.0, when not success) the reason code.
    static func ack(_ type: UInt8, packetID: UInt16, reasonCode: UInt8 = 0) -> [UInt8] {
        packet(type, flags: type == MQTTType.pubrel ? 2 : 0, two(packetID) + (reasonCode == 0 ? [] : [reasonCode]))
    }

    /// DISCONNECT: 3.1.1's has no body; 5.0's the reason code and properties.
    static func disconnect(version: UInt8, reasonCode: UInt8 = 0, properties: [MQTTProperty] = []) -> [UInt8] {
        guard version == 5 else { return packet(MQTTType.disconnect, []) }
        return packet(MQTTType.disconnect, [reasonCode] + self.properties(properties))
    }

    static let pingreq: [UInt8] = [0xC0, 0x00]
}

/// Reads the fields of a packet's body, throwing `malformed` when the server's bytes do not follow the layout.
struct MQTTBodyReader {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { index >= bytes.count }

    mutating func byte() throws -> UInt8 {
        guard index < bytes.count else { throw HarnessError.malformed("MQTT body ends early: \(describeBytes(bytes))") }
        defer { index += 1 }
        return bytes[index]
    }

    mutating func take(_ count: Int) throws -> [UInt8] {
        guard count >= 0, index + count <= bytes.count else {
            throw HarnessError.malformed("MQTT body ends early: \(describeBytes(bytes))")
        }
        defer { index += count }
        return Array(bytes[index..<index + count])
    }

    mutating func two() throws -> UInt16 { UInt16(try byte()) << 8 | UInt16(try byte()) }

    mutating func four() throws -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 { value = value << 8 | UInt32(try byte()) }
        return value
    }

    mutating func varint() throws -> Int {
        var value = 0
        for shift in 0..<4 {
            let byte = try byte()
            value |= Int(byte & 0x7F) << (7 * shift)
            if byte & 0x80 == 0 { return value }
        }
        throw HarnessError.malformed("variable byte integer in more than 4 bytes")
    }

    mutating func field() throws -> [UInt8] { try take(Int(try two())) }

    mutating func string() throws -> String {
        let bytes = try field()
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw HarnessError.malformed("MQTT string not UTF-8: \(describeBytes(bytes))")
        }
        return text
    }

    mutating func properties() throws -> [MQTTProperty] {
        let length = try varint()
        let end = index + length
        guard end <= bytes.count else { throw HarnessError.malformed("MQTT properties run past the packet") }
        var properties: [MQTTProperty] = []
        while index < end {
            let id = UInt8(try varint())
            let value: MQTTProperty.Value
            switch MQTTProperty.kinds[id] {
            case "b": value = .byte(try byte())
            case "2": value = .two(try two())
            case "4": value = .four(try four())
            case "v": value = .varint(try varint())
            case "s": value = .string(try string())
            case "d": value = .binary(try field())
            case "p": value = .pair(try string(), try string())
            default: throw HarnessError.malformed(String(format: "unknown MQTT property 0x%02X", id))
            }
            properties.append(MQTTProperty(id: id, value: value))
        }
        guard index == end else { throw HarnessError.malformed("MQTT property runs past its block") }
        return properties
    }

    /// Throws unless every byte was read.
    func expectEnd(_ what: String) throws {
        guard isAtEnd else {
            throw HarnessError.malformed("\(what): \(bytes.count - index) bytes left over: \(describeBytes(bytes))")
        }
    }
}

/// A CONNACK (section 3.2).
struct MQTTConnAck: Equatable {
    var sessionPresent: Bool
    /// 3.1.1's return code or 5.0's reason code.
    var code: UInt8
    var properties: [MQTTProperty] = []
}

/// A PUBLISH the server sent (section 3.3).
struct MQTTPublish: Equatable, CustomStringConvertible {
    var topic: String
    var payload: [UInt8]
    var qos: UInt8
    var retain: Bool
    var dup: Bool
    var packetID: UInt16?
    var properties: [MQTTProperty] = []

    var text: String { String(decoding: payload, as: UTF8.self) }

    var description: String {
        "PUBLISH '\(topic)' q\(qos) r\(retain ? 1 : 0) d\(dup ? 1 : 0) id \(packetID.map(String.init) ?? "-") "
            + "\(properties) \(describeBytes(payload, limit: 60))"
    }
}

/// A PUBACK, PUBREC, PUBREL, PUBCOMP or UNSUBACK-like answer: an identifier, a reason code (0 when the 5.0 packet
/// leaves it out, and in 3.1.1) and properties.
struct MQTTAck: Equatable {
    var packetID: UInt16
    var code: UInt8 = 0
    var properties: [MQTTProperty] = []
}

/// A SUBACK (or UNSUBACK): identifier, properties (5.0) and one reason code per filter.
struct MQTTSubAck: Equatable {
    var packetID: UInt16
    var codes: [UInt8]
    var properties: [MQTTProperty] = []
}

/// A DISCONNECT from the server (5.0 only).
struct MQTTDisconnect: Equatable {
    var code: UInt8
    var properties: [MQTTProperty] = []
}

extension MQTTFrame {
    private func expect(_ type: UInt8) throws {
        guard self.type == type else {
            throw HarnessError.malformed("expected \(MQTTType.name(type)), got \(self)")
        }
    }

    func connAck(version: UInt8) throws -> MQTTConnAck {
        try expect(MQTTType.connack)
        var reader = MQTTBodyReader(body)
        let flags = try reader.byte()
        guard flags & 0xFE == 0 else { throw HarnessError.malformed("CONNACK flags \(flags)") }
        var ack = MQTTConnAck(sessionPresent: flags == 1, code: try reader.byte())
        if version == 5 { ack.properties = try reader.properties() }
        try reader.expectEnd("CONNACK")
        return ack
    }

    func publish(version: UInt8) throws -> MQTTPublish {
        try expect(MQTTType.publish)
        var reader = MQTTBodyReader(body)
        let topic = try reader.string()
        let qos = flags >> 1 & 3
        guard qos < 3 else { throw HarnessError.malformed("PUBLISH with QoS 3 from the server") }
        let packetID = qos > 0 ? try reader.two() : nil
        let properties = version == 5 ? try reader.properties() : []
        let payload = try reader.take(body.count - reader.index)
        return MQTTPublish(
            topic: topic, payload: payload, qos: qos, retain: flags & 1 == 1, dup: flags & 8 == 8, packetID: packetID,
            properties: properties)
    }

    func ack(_ type: UInt8, version: UInt8) throws -> MQTTAck {
        try expect(type)
        var reader = MQTTBodyReader(body)
        var ack = MQTTAck(packetID: try reader.two())
        if version == 5 && !reader.isAtEnd {
            ack.code = try reader.byte()
            if !reader.isAtEnd { ack.properties = try reader.properties() }
        }
        try reader.expectEnd(MQTTType.name(type))
        return ack
    }

    /// A SUBACK's (or, with `type`, an UNSUBACK's) fields.
    func subAck(version: UInt8, type: UInt8 = MQTTType.suback) throws -> MQTTSubAck {
        try expect(type)
        var reader = MQTTBodyReader(body)
        let packetID = try reader.two()
        let properties = version == 5 ? try reader.properties() : []
        return MQTTSubAck(
            packetID: packetID, codes: try reader.take(body.count - reader.index), properties: properties)
    }

    func disconnect() throws -> MQTTDisconnect {
        try expect(MQTTType.disconnect)
        var reader = MQTTBodyReader(body)
        guard !reader.isAtEnd else { return MQTTDisconnect(code: 0) }
        var disconnect = MQTTDisconnect(code: try reader.byte())
        if !reader.isAtEnd { disconnect.properties = try reader.properties() }
        try reader.expectEnd("DISCONNECT")
        return disconnect
    }
}

/// The first whole frame of `bytes` and the bytes it took; nil while it is not whole.
func firstMQTTFrame(_ bytes: ArraySlice<UInt8>) throws -> (frame: MQTTFrame, size: Int)? {
    let start = bytes.startIndex
    guard let first = bytes.first else { return nil }
    var length = 0
    var lengthBytes = 0
    while true {
        guard start + 1 + lengthBytes < bytes.endIndex else { return nil }
        let byte = bytes[start + 1 + lengthBytes]
        length |= Int(byte & 0x7F) << (7 * lengthBytes)
        lengthBytes += 1
        if byte & 0x80 == 0 { break }
        if lengthBytes == 4 { throw HarnessError.malformed("the server sent a remaining length of over 4 bytes") }
    }
    let bodyStart = start + 1 + lengthBytes
    guard bodyStart + length <= bytes.endIndex else { return nil }
    let frame = MQTTFrame(type: first >> 4, flags: first & 0x0F, body: Array(bytes[bodyStart..<bodyStart + length]))
    return (frame, 1 + lengthBytes + length)
}
