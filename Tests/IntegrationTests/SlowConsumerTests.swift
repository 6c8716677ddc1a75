import XCTest

/// A subscriber that cannot keep up is cut off once its pending output passes max_pending; the publisher and the
/// other subscribers go on and miss nothing.
final class SlowConsumerTests: IntegrationTestCase {
    func testSlowConsumerIsCutOffWhileFastSubscriberGetsEverythingInOrder() throws {
        let maxPending = 262_144
        let messageSize = 1024
        let batchSize = 64
        let limit = 200_000
        let daemon = try startDaemon(DaemonConfig(numbers: ["FLOOD"], maxPayload: 65_536, maxPending: maxPending))
        // The slow one never reads; a small receive buffer makes its backlog pile up on the server sooner.
        let slow = try connect(daemon, "slow subscriber", receiveBuffer: 4096)
        let fast = try connect(daemon, "fast subscriber", timeout: 10)
        let publisher = try connect(daemon, "publisher", timeout: 10)
        try subscribe(slow, "FLOOD")
        try subscribe(fast, "FLOOD")

        @Sendable func payload(_ index: Int) -> [UInt8] {
            let head = Array(String(format: "seq=%09d ", index).utf8)
            return head + [UInt8](repeating: UInt8(ascii: "a") + UInt8(index % 26), count: messageSize - head.count)
        }
        let received = Counter()
        let reading = Background("fast subscriber") {
            defer { received.end() }
            var expected = 0
            while true {
                let message = try fast.nextMessage()
                if message.text == "END" { return }
                guard message.payload == payload(expected) else {
                    throw HarnessError.malformed(
                        "fast subscriber: message \(expected) is \(describeBytes(message.payload, limit: 20))")
                }
                expected += 1
                received.add()
            }
        }

        var sent = 0
        var receivers = 2
        var cutOff = false
        while sent < limit && !cutOff {
            // Keep the fast subscriber at most 128 messages behind, so that only the slow one can pass max_pending.
            try received.wait(atLeast: sent - 128, timeout: 10, "fast subscriber keeping up")
            var batch: [UInt8] = []
            for index in sent..<sent + batchSize {
                batch += Array("PUB FLOOD \(messageSize)\n".utf8) + payload(index) + [0x0A]
            }
            try publisher.send(batch)
            for index in sent..<sent + batchSize {
                let reply = try publisher.readReply()
                guard case .status(let text) = reply, let count = Int(text.dropFirst(3)), text.hasPrefix("OK "),
                    count == 1 || count == 2
                else {
                    return XCTFail("PUB \(index): expected +OK 2 or +OK 1, got \(reply)")
                }
                XCTAssertLessThanOrEqual(count, receivers, "PUB \(index): a cut subscriber came back")
                receivers = count
            }
            sent += batchSize
            if receivers == 1 || (sent / batchSize).isMultiple(of: 16) {
                cutOff = try stats(publisher)["slow_consumers"] == "1"
            }
        }
        XCTAssertTrue(cutOff, "STATS slow_consumers never became 1 after \(sent) messages of \(messageSize) bytes")
        XCTAssertEqual(receivers, 1, "after the cut, +OK counts only the fast subscriber")
        XCTAssertEqual(try publisher.command("SEND FLOOD END"), .ok("1"))
        try reading.wait(timeout: 30)
        XCTAssertEqual(received.current, sent, "the fast subscriber got every message")
        try slow.expectClosed(discardingData: true)
        XCTAssertEqual(try listCounts(publisher), ["FLOOD": 1])
        XCTAssertEqual(try stats(publisher)["slow_consumers"], "1")
    }
}
