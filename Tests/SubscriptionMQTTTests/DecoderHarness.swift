import TestSupport
import XCTest

@testable import SubscriptionMQTT

extension MQTTDecoder: IncrementalInput {}

/// How a test's decoder starts.
struct DecoderSetup {
    /// The decoder's ``MQTTDecoder/maximumPacketSize``.
    var maximumPacketSize = 1 << 22
    /// The decoder's ``MQTTDecoder/version`` before the first byte.
    var version: MQTTVersion?
    /// The decoder's ``MQTTDecoder/expectsConnectFirst``.
    var expectsConnectFirst = true

    /// A server's decoder: CONNECT first.
    static let server = DecoderSetup()

    /// A test client's decoder reading a server's `version` packets.
    static func client(_ version: MQTTVersion, maximumPacketSize: Int = 1 << 22) -> DecoderSetup {
        DecoderSetup(maximumPacketSize: maximumPacketSize, version: version, expectsConnectFirst: false)
    }

    /// A new decoder set up this way.
    func makeDecoder() -> MQTTDecoder {
        var decoder = MQTTDecoder(maximumPacketSize: maximumPacketSize)
        decoder.version = version
        decoder.expectsConnectFirst = expectsConnectFirst
        return decoder
    }
}

/// What one feeding gave: every packet (payloads copied out of the decoder) and the failure that ended it, if any.
struct Decoded: Equatable, CustomStringConvertible {
    var packets: [MQTTPacket] = []
    var failure: MQTTDecodeError?

    var description: String { "\(packets.count) packets, failure: \(failure.map(String.init(describing:)) ?? "none")" }
}

/// `packet` with its payload (if any) copied out of the decoder's buffer.
func detached(_ packet: MQTTPacket) -> MQTTPacket {
    guard case .publish(var publish) = packet else { return packet }
    publish.payload = ArraySlice(Array(publish.payload))
    return .publish(publish)
}

/// Feeds `input` in `mode`, draining `next()` after every append. Checks on the way that nothing follows a failure,
/// that a finished decoder holds nothing, and that after a drain it holds less than its maximum packet size.
func decode(
    _ input: [UInt8], setup: DecoderSetup = .server, mode: FeedMode, file: StaticString = #filePath,
    line: UInt = #line
) -> Decoded {
    var decoder = setup.makeDecoder()
    var result = Decoded()

    func drain(_ decoder: inout MQTTDecoder) {
        while let next = decoder.next() {
            XCTAssertNil(result.failure, "a result after the failure (\(mode))", file: file, line: line)
            switch next {
            case .success(let packet): result.packets.append(detached(packet))
            case .failure(let error): result.failure = error
            }
        }
        if result.failure != nil {
            XCTAssertTrue(decoder.isFinished, file: file, line: line)
            XCTAssertEqual(decoder.bufferedByteCount, 0, file: file, line: line)
        } else {
            XCTAssertLessThan(
                decoder.bufferedByteCount, max(setup.maximumPacketSize, 1), "held too much (\(mode))", file: file,
                line: line)
        }
    }

    mode.feed(input, to: &decoder, drain: drain)
    XCTAssertNil(decoder.next(), file: file, line: line)
    return result
}

/// Decodes `input` in every mode of `modes`, asserts that they all give the same, and returns it.
@discardableResult
func decodeInAllModes(
    _ input: [UInt8], setup: DecoderSetup = .server, modes: [FeedMode] = FeedMode.all,
    file: StaticString = #filePath, line: UInt = #line
) -> Decoded {
    let reference = decode(input, setup: setup, mode: .allAtOnce, file: file, line: line)
    for mode in modes where mode.description != FeedMode.allAtOnce.description {
        let result = decode(input, setup: setup, mode: mode, file: file, line: line)
        if result != reference {
            XCTFail("\(mode) gave \(result), all at once \(reference)", file: file, line: line)
            return reference
        }
    }
    return reference
}

/// Asserts that `input` decodes to `expected` and no failure, in every feeding mode.
func assertDecodes(
    _ input: [UInt8], _ expected: [MQTTPacket], setup: DecoderSetup = .server, modes: [FeedMode] = FeedMode.all,
    file: StaticString = #filePath, line: UInt = #line
) {
    let result = decodeInAllModes(input, setup: setup, modes: modes, file: file, line: line)
    XCTAssertNil(result.failure, "failed", file: file, line: line)
    XCTAssertEqual(result.packets, expected, file: file, line: line)
}

/// Asserts that `input` decodes, in every feeding mode, to `before` and then a failure with `reasonCode` (and
/// `unsupportedLevel`), whose message contains `message` when given. Returns the failure.
@discardableResult
func assertFails(
    _ input: [UInt8], _ reasonCode: UInt8, setup: DecoderSetup = .server, before: [MQTTPacket] = [],
    message: String? = nil, unsupportedLevel: UInt8? = nil, file: StaticString = #filePath, line: UInt = #line
) -> MQTTDecodeError? {
    let result = decodeInAllModes(input, setup: setup, file: file, line: line)
    XCTAssertEqual(result.packets, before, file: file, line: line)
    guard let failure = result.failure else {
        XCTFail("no failure", file: file, line: line)
        return nil
    }
    XCTAssertEqual(
        failure.reasonCode, reasonCode, "reason code of \(failure), expected 0x\(String(reasonCode, radix: 16))",
        file: file, line: line)
    XCTAssertEqual(failure.unsupportedLevel, unsupportedLevel, "\(failure)", file: file, line: line)
    if let message {
        XCTAssertTrue(failure.message.contains(message), "\(failure) lacks \"\(message)\"", file: file, line: line)
    }
    return failure
}

/// A CONNECT as a client of `version` sends it first.
func connectPacket(_ version: MQTTVersion) -> MQTTPacket {
    .connect(MQTTConnect(version: version, clientID: "c"))
}

/// The bytes of ``connectPacket(_:)``.
func connectBytes(_ version: MQTTVersion) -> [UInt8] {
    MQTTEncoder.encode(connectPacket(version), version: version)
}

/// Asserts that a server's decoder, after a `version` CONNECT, decodes `input` to `expected`.
func assertDecodesAfterConnect(
    _ version: MQTTVersion, _ input: [UInt8], _ expected: [MQTTPacket], file: StaticString = #filePath,
    line: UInt = #line
) {
    assertDecodes(connectBytes(version) + input, [connectPacket(version)] + expected, file: file, line: line)
}

/// Asserts that a server's decoder, after a `version` CONNECT, refuses `input` with `reasonCode`.
@discardableResult
func assertFailsAfterConnect(
    _ version: MQTTVersion, _ input: [UInt8], _ reasonCode: UInt8, message: String? = nil,
    file: StaticString = #filePath, line: UInt = #line
) -> MQTTDecodeError? {
    assertFails(
        connectBytes(version) + input, reasonCode, before: [connectPacket(version)], message: message, file: file,
        line: line)
}

/// A packet made by hand: the first byte, the remaining length (the fewest bytes), then `body`.
func packet(_ first: UInt8, _ body: [UInt8]) -> [UInt8] {
    [first] + variableByteInteger(body.count) + body
}

/// The bytes of a variable byte integer.
func variableByteInteger(_ value: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.put(variableByteInteger: value)
    return bytes
}

/// A string field: two-byte length and UTF-8.
func string(_ text: String) -> [UInt8] { lengthPrefixed(Array(text.utf8)) }

/// A binary field (or a string given as raw bytes): two-byte length and the bytes.
func lengthPrefixed(_ bytes: [UInt8]) -> [UInt8] { [UInt8(bytes.count >> 8), UInt8(bytes.count & 0xFF)] + bytes }

/// A property list: its variable byte integer length, then `list`.
func properties(_ list: [UInt8]) -> [UInt8] { variableByteInteger(list.count) + list }

/// Short names for the reason codes the tests expect.
let malformed = MQTTReasonCode.malformedPacket
let protocolError = MQTTReasonCode.protocolError
let topicNameInvalid = MQTTReasonCode.topicNameInvalid
let topicFilterInvalid = MQTTReasonCode.topicFilterInvalid
let packetTooLarge = MQTTReasonCode.packetTooLarge
let unsupportedVersion = MQTTReasonCode.unsupportedProtocolVersion
