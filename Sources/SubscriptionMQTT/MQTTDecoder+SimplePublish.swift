extension MQTTDecoder {
    /// The payload of the next packet when it is a whole QoS 0 PUBLISH without DUP or RETAIN, without properties (a
    /// 5.0 property length of 0), to the topic whose name is `topic`'s bytes: the one packet a publisher sends again
    /// and again, taken in one pass, without a ``MQTTPacket`` made for it. Consumed then; nil, having consumed
    /// nothing, for anything else (``next()`` then reads it with every check). The payload is a slice of the
    /// decoder's buffer, as ``MQTTPublish/payload`` is.
    ///
    /// What ``next()`` would check is checked here too, or the packet is left to it: the first byte is exactly
    /// `0x30` (a PUBLISH after CONNECT: a second CONNECT or a packet before it is not one), the remaining length in
    /// at most 4 bytes and the packet within ``maximumPacketSize``, the topic the same bytes as `topic` (a name
    /// ``next()`` checked when it made it the last topic).
    public mutating func nextSimplePublish(topic: [UInt8]) -> ArraySlice<UInt8>? {
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
        guard packetCount <= maximumPacketSize, available >= packetCount else { return nil }
        let topicStart = start + 1 + lengthBytes + 2
        let propertiesCount = version == .v5 ? 1 : 0
        guard remaining >= 2 + topic.count + propertiesCount,
            Int(bytes[topicStart - 2]) << 8 | Int(bytes[topicStart - 1]) == topic.count
        else { return nil }
        let topicEnd = topicStart + topic.count
        let same = topic.withUnsafeBytes { expected in
            bytes.withUnsafeBytes { buffer in
                expected.elementsEqual(UnsafeRawBufferPointer(rebasing: buffer[topicStart..<topicEnd]))
            }
        }
        guard same, version == .v311 || bytes[topicEnd] == 0 else { return nil }
        let payloadStart = topicEnd + propertiesCount
        let end = start + packetCount
        input.readIndex = end
        return input.bytes[payloadStart..<end]
    }
}
