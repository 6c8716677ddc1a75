import TestSupport
import XCTest

/// Binary payloads and max_payload.
final class PayloadTests: IntegrationTestCase {
    func testBinaryPayloadWithEveryByteValueArrivesIntact() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["BIN"]))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "BIN")
        let everyByte = (0...255).map { UInt8($0) }
        let tricky = Array("\nMSG BIN 3\nabc\n+OK 1\n-ERR PROTO x\n*2\n\r\n".utf8)
        let payloads: [[UInt8]] = [everyByte, tricky, everyByte.reversed(), [0x0A], [0x0D, 0x0A], [0x00]]
        for payload in payloads {
            XCTAssertEqual(try publisher.pub("BIN", payload), .ok("1"))
            let message = try subscriber.nextMessage()
            XCTAssertEqual(message.number, "BIN")
            XCTAssertEqual(message.payload, payload, "payload \(describeBytes(payload))")
        }
        assertOpen(subscriber)
    }

    func testPayloadOfExactlyMaxPayloadArrives() throws {
        let maxPayload = 1 << 20
        let daemon = try startDaemon(DaemonConfig(numbers: ["BIG"], maxPayload: maxPayload))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "BIG")
        var generator = SeededGenerator(seed: 42)
        let payload = (0..<maxPayload).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        XCTAssertEqual(try publisher.pub("BIG", payload), .ok("1"))
        let message = try subscriber.nextMessage()
        XCTAssertEqual(message.payload.count, maxPayload)
        XCTAssertTrue(message.payload == payload, "the 1 MiB payload arrived changed")
        assertOpen(publisher)
    }

    func testPayloadOverMaxPayloadIsTooBigAndClosesConnection() throws {
        let maxPayload = 1 << 20
        let daemon = try startDaemon(DaemonConfig(numbers: ["BIG"], maxPayload: maxPayload))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "BIG")
        let publisher = try connect(daemon, "publisher")
        try publisher.send("PUB BIG \(maxPayload + 1)\n")
        // The server may refuse on the header alone and close while the payload is still coming: ignore a failed
        // send, the reply is what counts.
        try? publisher.send([UInt8](repeating: 0x41, count: maxPayload + 1) + [0x0A])
        assertError(try publisher.readReply(), "TOOBIG", "PUB of max_payload + 1 bytes")
        try publisher.expectClosed()
        XCTAssertEqual(try subscriber.pushesBeforePing(), [], "the oversized payload delivered nothing")
    }
}
