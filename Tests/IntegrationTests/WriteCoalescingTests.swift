import XCTest

/// A busy turn writes a session that got only a little one turn later (docs/ARCHITECTURE.md, "The life of a
/// `PUB`", step 8): nothing waits longer than that, or than a fraction of a millisecond when no turn comes.
final class WriteCoalescingTests: IntegrationTestCase {
    /// One read of 100 publications to 100 numbers, then silence: every subscriber is held back (a busy turn, a
    /// little output each) and no client sends anything more, so only the loop's own step (or, at the latest, the
    /// housekeeping's turn every 250 ms) writes them. A session held back and then lost from the lists would never
    /// be written: the receive times out.
    func testSessionsHeldBackByABusyTurnAreWrittenWhenNoOtherTurnComes() throws {
        let count = 100
        let numbers = (0..<count).map { "COALESCE.n\($0)" }
        let daemon = try startDaemon(DaemonConfig(numbers: numbers))
        let subscribers = try numbers.map { number in
            let client = try connect(daemon, "subscriber of \(number)")
            try subscribe(client, number)
            return client
        }
        let publisher = try connect(daemon, "publisher")
        try publisher.send(numbers.flatMap { Array("SEND \($0) m\n".utf8) })
        for number in numbers { XCTAssertEqual(try publisher.readReply(), .ok("1"), number) }
        let started = Date()
        for (subscriber, number) in zip(subscribers, numbers) {
            let message = try subscriber.nextMessage()
            XCTAssertEqual(message.number, number)
        }
        // The receive timeout is 5 s; a session left for the next turn that never comes would hit it. The total
        // bound is for what the per-read timeout misses: sessions written only a few per housekeeping turn (250 ms)
        // would each come within 5 s, yet all 100 would take many seconds. 0.25 s nominally; 4 s leaves room for load.
        XCTAssertLessThan(Date().timeIntervalSince(started), 4, "every subscriber got its message at once")
    }

    /// A session's own replies are never held back, however busy the turn: a publisher with one publication in
    /// flight at a time to 100 subscribers gets each answer in its round trip.
    func testAReaderIsWrittenAtTheEndOfItsTurn() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["BUSY"]))
        let subscribers = try (0..<100).map { index in
            let client = try connect(daemon, "subscriber \(index)")
            try subscribe(client, "BUSY")
            return client
        }
        let publisher = try connect(daemon, "publisher")
        let started = Date()
        for index in 0..<200 {
            XCTAssertEqual(try publisher.command("SEND BUSY m\(index)"), .ok("100"))
        }
        // 200 round trips: a reply held back 200 µs each would still pass; one left for a turn that only the next
        // command brings would deadlock (the client waits for it before sending the next).
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
        for subscriber in subscribers {
            for index in 0..<200 { XCTAssertEqual(try subscriber.nextMessage().text, "m\(index)") }
        }
    }
}
