/// A packet's fixed header (section 2.1): its type, the low 4 bits of its first byte, and its size.
struct MQTTFixedHeader {
    /// The packet type (the high 4 bits of the first byte).
    var type: MQTTPacketType
    /// The low 4 bits of the first byte (PUBLISH's DUP, QoS and RETAIN; fixed for every other type).
    var flags: UInt8
    /// The bytes of the fixed header: the first byte and the remaining length's 1 to 4.
    var headerCount: Int
    /// The bytes of the whole packet: ``headerCount`` plus the remaining length.
    var packetCount: Int
}

extension MQTTDecoder {
    /// What ``takeFixedHeader()`` found.
    enum HeaderOutcome {
        /// The header is not complete yet (nothing found wrong in what is here).
        case needMore
        /// The header broke a rule.
        case failure(MQTTDecodeError)
        /// A valid header; the packet is whole when ``MQTTFixedHeader/packetCount`` bytes are here.
        case header(MQTTFixedHeader)
    }

    /// The most bytes of a remaining length (section 1.5.5).
    static let maxLengthBytes = 4

    /// Reads the fixed header at the read index, checking each rule as soon as its bytes are here. Nothing is
    /// consumed: the header is read again until its packet is whole (it is at most 5 bytes).
    func takeFixedHeader() -> HeaderOutcome {
        let available = input.count
        guard available >= 1 else { return .needMore }
        let bytes = input.bytes
        let start = input.readIndex
        let first = bytes[start]
        if let error = checkFirstByte(first) { return .failure(error) }
        let type = MQTTPacketType(rawValue: first >> 4)!
        var remaining = 0
        var lengthBytes = 0
        while true {
            // A packet needs its first byte, the length bytes read so far and at least one more.
            if 2 + lengthBytes > maximumPacketSize {
                return .failure(tooLarge("of at least \(2 + lengthBytes) bytes"))
            }
            guard available > 1 + lengthBytes else { return .needMore }
            let byte = bytes[start + 1 + lengthBytes]
            remaining |= Int(byte & 0x7F) << (7 * lengthBytes)
            lengthBytes += 1
            if byte & 0x80 == 0 { break }
            if lengthBytes == Self.maxLengthBytes {
                return .failure(.malformed("remaining length in more than 4 bytes"))
            }
        }
        let header = MQTTFixedHeader(
            type: type, flags: first & 0x0F, headerCount: 1 + lengthBytes, packetCount: 1 + lengthBytes + remaining)
        if header.packetCount > maximumPacketSize { return .failure(tooLarge("of \(header.packetCount) bytes")) }
        if let error = checkRemainingLength(remaining, of: type) { return .failure(error) }
        return .header(header)
    }

    /// The failure of a packet larger than ``maximumPacketSize``; `size` says how large, as in `of 70000 bytes`.
    private func tooLarge(_ size: String) -> MQTTDecodeError {
        MQTTDecodeError(
            reasonCode: MQTTReasonCode.packetTooLarge,
            message: "a packet \(size) is over the maximum packet size of \(maximumPacketSize) bytes")
    }

    /// Checks the packet type and the reserved flags of a fixed header's first byte (section 2.1.3), and the place
    /// of CONNECT; nil when they are right.
    private func checkFirstByte(_ first: UInt8) -> MQTTDecodeError? {
        guard let type = MQTTPacketType(rawValue: first >> 4) else {
            return .malformed("packet type 0 is reserved")
        }
        let flags = first & 0x0F
        if type == .connect && connectSeen { return .protocolError("a second CONNECT") }
        if expectsConnectFirst && !connectSeen && type != .connect {
            return .protocolError("a \(type.name) before CONNECT (the first packet must be CONNECT)")
        }
        if type == .auth && currentVersion == .v311 { return .malformed("AUTH (packet type 15) in MQTT 3.1.1") }
        switch type {
        case .publish:
            let qos = flags >> 1 & 3
            if qos == 3 { return .malformed("PUBLISH with QoS 3") }
            if qos == 0 && flags & 0x08 != 0 { return .malformed("PUBLISH with DUP set at QoS 0") }
        case .pubrel, .subscribe, .unsubscribe:
            if flags != 0b0010 { return .malformed("\(type.name) with fixed header flags \(flags) (must be 2)") }
        default:
            if flags != 0 { return .malformed("\(type.name) with fixed header flags \(flags) (must be 0)") }
        }
        return nil
    }

    /// Checks the remaining lengths a packet type cannot have, before its body arrives; nil when it may have it.
    private func checkRemainingLength(_ remaining: Int, of type: MQTTPacketType) -> MQTTDecodeError? {
        let v311 = currentVersion == .v311
        switch type {
        case .pingreq, .pingresp:
            if remaining != 0 { return .malformed("\(type.name) with a remaining length of \(remaining) (must be 0)") }
        case .disconnect where v311:
            if remaining != 0 { return .malformed("DISCONNECT with a remaining length of \(remaining) (must be 0)") }
        case .puback, .pubrec, .pubrel, .pubcomp, .unsuback, .connack:
            if v311 && remaining != 2 {
                return .malformed("\(type.name) with a remaining length of \(remaining) (must be 2 in MQTT 3.1.1)")
            }
            let least = type == .connack && !v311 ? 3 : 2
            if remaining < least {
                return .malformed("\(type.name) with a remaining length of \(remaining) (at least \(least))")
            }
        default:
            break
        }
        return nil
    }
}

extension MQTTPacketType {
    /// The packet's name in the specification, `PUBLISH`, for messages.
    var name: String {
        switch self {
        case .connect: return "CONNECT"
        case .connack: return "CONNACK"
        case .publish: return "PUBLISH"
        case .puback: return "PUBACK"
        case .pubrec: return "PUBREC"
        case .pubrel: return "PUBREL"
        case .pubcomp: return "PUBCOMP"
        case .subscribe: return "SUBSCRIBE"
        case .suback: return "SUBACK"
        case .unsubscribe: return "UNSUBSCRIBE"
        case .unsuback: return "UNSUBACK"
        case .pingreq: return "PINGREQ"
        case .pingresp: return "PINGRESP"
        case .disconnect: return "DISCONNECT"
        case .auth: return "AUTH"
        }
    }
}
