import XCTest

/// The writes the event loop's helpers make (`threads` above 1, docs/ARCHITECTURE.md, "More than one core") end as the
/// loop's own did: a subscriber that reads nothing until the end gets everything then, in order; one that resets
/// mid-stream has its write fail (the crew's failed outcome, finished on the loop), is closed and no longer counted;
/// every other subscriber gets every message once, in order. 40 subscribers make each turn's list long enough to
/// share (``FlushCrew``: 32 or more). (A write that comes back short or finds the socket full inside a list is not
/// provoked here: a loopback socket absorbs megabytes before it does, and a session that is behind waits for its
/// write source, outside the lists.)
final class HelperWriteTests: IntegrationTestCase {
    func testAStalledAndAResetSubscriberAmongTheHelpersWritesEndAsOnTheLoop() throws {
        let number = "HELPERS.n"
        let daemon = try startDaemon(DaemonConfig(numbers: [number], extraLines: ["threads: 4"]))
        let messages = 2_000
        let subscriberCount = 40
        let subscribers = try (0..<subscriberCount).map { index in
            let client = try connect(daemon, "subscriber \(index)")
            try subscribe(client, number)
            return client
        }
        // 900-byte payloads: each frame goes through the frame log (at most 1,024 bytes). Subscriber 0 reads nothing
        // until the end: its 1.8 MB wait in the kernel's buffers (a loopback socket holds that much unread).
        @Sendable func payload(_ sequence: Int) -> [UInt8] {
            let head = Array(String(format: "%08d", sequence).utf8)
            return head + [UInt8](repeating: UInt8(ascii: "a") + UInt8(sequence % 26), count: 900 - head.count)
        }
        @Sendable func readAll(_ client: LineClient, _ index: Int) throws {
            for sequence in 0..<messages {
                let message = try client.nextMessage()
                guard message.number == number, message.payload == payload(sequence) else {
                    throw HarnessError.malformed("subscriber \(index): \(message) where \(sequence) was due")
                }
            }
        }
        // Subscriber 1 resets its connection after 50 messages; 2 to 39 read everything as it comes.
        let resetting = Background("subscriber 1 resets") {
            for _ in 0..<50 { _ = try subscribers[1].nextMessage() }
            subscribers[1].reset()
        }
        let reading = (2..<subscriberCount).map { index in
            Background("read subscriber \(index)") { try readAll(subscribers[index], index) }
        }
        let publisher = try connect(daemon, "publisher")
        var counts: [Int] = []
        var sent = 0
        while sent < messages {
            let batch = min(250, messages - sent)
            var bytes: [UInt8] = []
            for sequence in sent..<sent + batch {
                let body = payload(sequence)
                bytes += Array("PUB \(number) \(body.count)\n".utf8) + body + [0x0A]
            }
            try publisher.send(bytes)
            for _ in 0..<batch {
                let reply = try publisher.readReply()
                guard case .status(let text) = reply, text.hasPrefix("OK "), let count = Int(text.dropFirst(3)) else {
                    throw HarnessError.malformed("publisher: \(reply)")
                }
                counts.append(count)
            }
            sent += batch
        }
        try resetting.wait(timeout: 60)
        for task in reading { try task.wait(timeout: 60) }
        // Subscriber 0 reads only now: everything queued for it while its socket was full comes, in order.
        try readAll(subscribers[0], 0)
        XCTAssertEqual(counts.first, subscriberCount, "every subscriber counted at first")
        XCTAssertFalse(zip(counts, counts.dropFirst()).contains { $0.1 > $0.0 }, "a count never grows back")
        XCTAssertTrue(counts.allSatisfy { $0 == subscriberCount || $0 == subscriberCount - 1 }, "\(Set(counts))")
        let values = try stats(publisher)
        XCTAssertEqual(counter(values, "slow_consumers"), 0, "a full socket under max_pending is not cut off")
        XCTAssertGreaterThan(counter(values, "helper_writes") ?? 0, 0, "the helpers made none of the writes")
        XCTAssertEqual(counter(values, "connections"), subscriberCount, "subscriber 1 closed, the others open")
        XCTAssertEqual(counts.last, subscriberCount - 1, "subscriber 1 no longer counted by the end")
    }
}
