// libFuzzer target for the MQTT decoder (`make fuzz-mqtt`). The Makefile compiles it together with the codec's
// sources (Sources/SubscriptionMQTT) into one module, the wire's rules and read buffer linked in as a library. Every
// input is fed all at once and again in chunks taken from the input itself; both must give the same packets and
// the same failure, nothing may follow a failure, a finished decoder holds nothing, and after each drain the decoder
// holds fewer bytes than its maximum packet size. Every packet decoded must encode and decode back to itself, and
// every topic, filter and number it carries must go through the topic map and back.
//
// The first byte picks the maximum packet size and the side (a server's decoder, CONNECT first; a client's of
// either version; one with no version at all), so inputs also reach the 0x95 refusals and the packets a server
// sends. The dictionary (Tests/Fuzz/mqtt.dict) offers fixed headers, a CONNECT's variable header and properties.

import SubscriptionWire

/// The packets and the failure of one feeding, with a check after each drain.
struct Collected: Equatable {
    /// Each packet (its payload copied out of the decoder) and the version the decoder read it with.
    var packets: [MQTTPacket] = []
    var versions: [MQTTVersion] = []
    var failure: MQTTDecodeError?
    let maximumPacketSize: Int

    mutating func drain(_ decoder: inout MQTTDecoder) {
        while let next = decoder.next() {
            precondition(failure == nil, "a result after a failure")
            switch next {
            case .success(let packet):
                if case .publish(var publish) = packet {
                    publish.payload = ArraySlice(Array(publish.payload))
                    packets.append(.publish(publish))
                } else {
                    packets.append(packet)
                }
                versions.append(decoder.version ?? .v311)
            case .failure(let error):
                precondition(!error.message.isEmpty, "a failure without a message")
                failure = error
            }
        }
        if failure != nil {
            precondition(decoder.isFinished && decoder.bufferedByteCount == 0, "not finished after a failure")
        } else {
            precondition(decoder.bufferedByteCount < max(maximumPacketSize, 1), "decoder buffer unbounded")
        }
    }
}

/// A decoder set up as the first byte of an input says.
func makeDecoder(_ setupByte: UInt8) -> MQTTDecoder {
    let maximumPacketSize = [1, 2, 5, 16, 100, 1000, 70_000, 1 << 22][Int(setupByte & 7)]
    var decoder = MQTTDecoder(maximumPacketSize: maximumPacketSize)
    switch setupByte >> 3 & 3 {
    case 0: break
    case 1: decoder.expectsConnectFirst = false
    case 2:
        decoder.expectsConnectFirst = false
        decoder.version = .v311
    default:
        decoder.expectsConnectFirst = false
        decoder.version = .v5
    }
    return decoder
}

/// Checks that `packet`, read with `version`, encodes and decodes back to itself, and that its names map.
func checkRoundTrip(_ packet: MQTTPacket, version: MQTTVersion) {
    let bytes = MQTTEncoder.encode(packet, version: version)
    var decoder = MQTTDecoder(maximumPacketSize: .max)
    decoder.expectsConnectFirst = false
    if case .connect = packet {} else { decoder.version = version }
    bytes.withUnsafeBytes { decoder.append($0) }
    guard case .success(let again) = decoder.next() else { preconditionFailure("a decoded packet did not re-decode") }
    var copy = again
    if case .publish(var publish) = again {
        publish.payload = ArraySlice(Array(publish.payload))
        copy = .publish(publish)
    }
    precondition(copy == packet, "a decoded packet re-decodes differently")
    precondition(decoder.next() == nil && decoder.bufferedByteCount == 0, "bytes left after a re-decoded packet")

    switch packet {
    case .publish(let publish) where !publish.topic.isEmpty:
        checkTopic(publish.topic)
    case .connect(let connect):
        if let will = connect.will { checkTopic(will.topic) }
    case .subscribe(let subscribe):
        for (filter, _) in subscribe.filters { checkFilter(filter) }
    case .unsubscribe(let unsubscribe):
        for filter in unsubscribe.filters { checkFilter(filter) }
    default:
        break
    }
}

/// A topic name a packet carried maps to a number and back, unless its number is too long.
func checkTopic(_ topic: String) {
    guard let number = try? MQTTTopicMap.number(forTopic: topic) else {
        precondition(topic.utf8.count > 66, "a short topic name has no number")
        return
    }
    precondition((try? Names.checkNumber(number)) != nil, "a topic's number is not a valid number")
    precondition(MQTTTopicMap.topic(forNumber: number) == topic, "a topic's number maps back to another topic")
}

/// A filter a packet carried maps to valid patterns, unless they are too long.
func checkFilter(_ filter: String) {
    var plain = filter
    do {
        if let shared = try MQTTTopicMap.sharedSubscription(filter) { plain = shared.filter }
    } catch {
        preconditionFailure("a decoded shared subscription does not parse: \(error)")
    }
    guard let patterns = try? MQTTTopicMap.patterns(forFilter: plain) else {
        precondition(plain.utf8.count > 66, "a short filter has no patterns")
        return
    }
    precondition((try? Names.checkPattern(patterns.pattern)) != nil, "a filter's pattern is not valid")
    if let parent = patterns.parent {
        precondition((try? Names.checkPattern(parent)) != nil, "a filter's parent pattern is not valid")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzMQTTDecoder(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = UnsafeBufferPointer(start: data + 1, count: size - 1)

    var whole = makeDecoder(data[0])
    var expected = Collected(maximumPacketSize: whole.maximumPacketSize)
    whole.append(UnsafeRawBufferPointer(bytes))
    expected.drain(&whole)

    var chunked = makeDecoder(data[0])
    var got = Collected(maximumPacketSize: chunked.maximumPacketSize)
    var offset = 0
    var step = 1
    while offset < bytes.count {
        let end = min(bytes.count, offset + step)
        chunked.append(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[offset..<end])))
        got.drain(&chunked)
        offset = end
        step = Int(bytes[offset - 1] % 11) + 1
    }
    precondition(got == expected, "chunked decode differs from whole decode")

    for (packet, version) in zip(expected.packets, expected.versions) { checkRoundTrip(packet, version: version) }

    // The input as a number: when it has a topic, the topic maps back to it.
    if let number = String(validating: bytes, as: UTF8.self), let topic = MQTTTopicMap.topic(forNumber: number) {
        precondition((try? MQTTTopicMap.number(forTopic: topic)) == number, "a number's topic maps to another number")
    }
    return 0
}
