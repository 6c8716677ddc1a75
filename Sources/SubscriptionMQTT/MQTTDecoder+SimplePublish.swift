/// A QoS 0 PUBLISH without DUP, RETAIN or properties, found whole at the front of the decoder's buffer by
/// ``MQTTDecoder/peekSimplePublish()``: its topic name's bytes (not checked yet) and its payload, both slices of the
/// decoder's buffer, and where it ends.
public struct MQTTSimplePublish {
    /// The topic name's bytes, as they came (not checked: the caller compares them with a topic it checked).
    public var topic: ArraySlice<UInt8>
    /// The payload.
    public var payload: ArraySlice<UInt8>
    /// One past its last byte in the buffer.
    var end: Int
}

extension MQTTDecoder {
    /// The next packet when it is a whole QoS 0 PUBLISH without DUP or RETAIN and without properties (a 5.0 property
    /// length of 0): the packet a publisher sends again and again, found in one pass without a ``MQTTPacket`` made
    /// for it. Nothing is consumed: a caller that knows the topic (it checked and mapped those same bytes before)
    /// takes it with ``consume(_:)``; any other caller reads it with ``next()``, which checks everything. Nil for
    /// anything else.
    ///
    /// `mutating` though it changes nothing: called on a decoder stored in a class (a connection's), a non-mutating
    /// method would be given a copy of the whole decoder.
    ///
    /// What ``next()`` would check of such a packet is checked here, but its topic name: the first byte is exactly
    /// `0x30` (a PUBLISH after CONNECT: a second CONNECT or a packet before it is not one), the remaining length in
    /// at most 4 bytes and the packet within ``maximumPacketSize``, the topic's length within the packet.
    public mutating func peekSimplePublish() -> MQTTSimplePublish? {
        guard !isFinished, connectSeen, let version = version else { return nil }
        let available = input.count
        let start = input.readIndex
        let bytes = input.bytes
        guard available >= 2, bytes[start] == 0x30 else { return nil }
        var remaining = 0
        var lengthBytes = 0
        while true {
            guard lengthBytes < Self.maxLengthBytes, available > 1 + lengthBytes else { return nil }
            let byte = bytes[start + 1 + lengthBytes]
            remaining |= Int(byte & 0x7F) << (7 * lengthBytes)
            lengthBytes += 1
            if byte & 0x80 == 0 { break }
        }
        let packetCount = 1 + lengthBytes + remaining
        guard packetCount <= maximumPacketSize, available >= packetCount, remaining >= 2 else { return nil }
        let topicStart = start + 1 + lengthBytes + 2
        let topicCount = Int(bytes[topicStart - 2]) << 8 | Int(bytes[topicStart - 1])
        let propertiesCount = version == .v5 ? 1 : 0
        guard topicCount > 0, remaining >= 2 + topicCount + propertiesCount else { return nil }
        let topicEnd = topicStart + topicCount
        guard version == .v311 || bytes[topicEnd] == 0 else { return nil }
        let end = start + packetCount
        return MQTTSimplePublish(
            topic: bytes[topicStart..<topicEnd], payload: bytes[(topicEnd + propertiesCount)..<end], end: end)
    }

    /// Takes the packet ``peekSimplePublish()`` found (nothing was appended or read since).
    public mutating func consume(_ publish: MQTTSimplePublish) {
        input.readIndex = publish.end
    }
}
