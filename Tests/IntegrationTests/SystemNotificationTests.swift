import Foundation
import XCTest

/// Protocol 1.1 `$SYS.` numbers over real sockets: the daemon publishes one JSON object per event to its own
/// numbers; clients may subscribe to them, never write to them; `>` and leading wildcards do not match them.
final class SystemNotificationTests: IntegrationTestCase {
    /// The eight numbers the daemon owns.
    let topics = [
        "$SYS.client.connected", "$SYS.client.disconnected", "$SYS.config.reloaded", "$SYS.number.created",
        "$SYS.number.removed", "$SYS.numbers", "$SYS.slow_consumer", "$SYS.stats",
    ]

    func testClientsMaySubscribeButNotCreateRemoveOrPublishAndDeniedChangesNothing() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let client = try connect(daemon)
        for line in [
            "CREATE $SYS.mine", "CREATE $SYS.stats", "CREATE $SYS", "CREATE $SYS.x retain",
            "REMOVE $SYS.stats", "SEND $SYS.stats {}", "SEND $SYS.nothing x",
        ] {
            assertError(try client.command(line), "DENIED", line)
        }
        try client.sendPub("$SYS.stats", Array("PING\n".utf8))
        assertError(try client.readReply(), "DENIED", "PUB $SYS.stats")
        XCTAssertEqual(try client.command("PING"), .status("PONG"), "the payload was read as payload, not as PING")
        XCTAssertEqual(try client.command("LIST $SYS.>"), .list(topics.map { "\($0) 0" }), "still the eight")
        XCTAssertEqual(try client.command("LIST"), .list(["N 0"]), "LIST without a pattern is LIST >")
        XCTAssertEqual(try client.command("CREATE $price"), .ok("created"), "only $SYS is the daemon's (1.0 allows $)")
        XCTAssertEqual(try client.command("LIST"), .list(["$price 0", "N 0"]))
        XCTAssertEqual(try client.command("REMOVE $price"), .ok("removed 0"))
        XCTAssertEqual(try client.command("LIST *.stats"), .list([]))
        XCTAssertEqual(try stats(client)["numbers"], "1", "STATS counts the numbers clients have")
        XCTAssertEqual(try client.command("SUB $SYS.>"), .ok())
        XCTAssertEqual(try client.command("SUB $SYS.client.*"), .ok())
        XCTAssertEqual(
            try client.command("LIST $SYS.client.*"),
            .list(["$SYS.client.connected 1", "$SYS.client.disconnected 1"]))
    }

    func testGreaterThanAndLeadingWildcardsDoNotMatchTheDaemonsNumbers() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["A.b"]))
        let everything = try connect(daemon, "SUB > and leading wildcards")
        try subscribe(everything, ">", "*.stats", "*.client.*", "*.>")
        let system = try connect(daemon, "SUB $SYS.>")
        try subscribe(system, "$SYS.>")
        let other = try connect(daemon, "another client")
        XCTAssertEqual(try other.command("SEND A.b x"), .ok("1"), "the first session (once), not the $SYS one")
        other.close()
        let events = try nextEvents(system, count: 2)
        XCTAssertEqual(events.map(\.number), ["$SYS.client.connected", "$SYS.client.disconnected"])
        let seen = try everything.pushesBeforePing().compactMap(\.message)
        XCTAssertEqual(seen.map(\.number), ["A.b"], "none of the daemon's numbers")
    }

    func testConnectCreateRemoveAndDisconnectArePostedAsJSON() throws {
        let daemon = try startDaemon()
        let watcher = try connect(daemon, "watcher")
        try subscribe(watcher, "$SYS.>")
        let alice = try connect(daemon, "alice")
        XCTAssertNil(try alice.command("HELLO name=alice").errorCode)
        XCTAssertEqual(try alice.command("CREATE ORDERS retain"), .ok("created"))
        XCTAssertEqual(try alice.command("CREATE ORDERS"), .ok("exists"), "not created again: no event")
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "ORDERS")
        XCTAssertEqual(try alice.command("REMOVE ORDERS"), .ok("removed 1"))
        XCTAssertEqual(try alice.command("QUIT"), .ok("bye"))
        try alice.expectClosed()
        alice.close()

        let events = try nextEvents(watcher, count: 5)
        XCTAssertEqual(
            events.map(\.number),
            [
                "$SYS.client.connected", "$SYS.number.created", "$SYS.client.connected", "$SYS.number.removed",
                "$SYS.client.disconnected",
            ])
        let connected = events[0].object
        let session = try XCTUnwrap(connected["session"] as? Int)
        XCTAssertEqual(connected["event"] as? String, "client.connected")
        XCTAssertTrue((connected["address"] as? String ?? "").hasPrefix("127.0.0.1:"), "\(connected)")
        let time = try XCTUnwrap(connected["time"] as? String)
        XCTAssertNotNil(time.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$"#, options: .regularExpression), time)

        let created = events[1].object
        XCTAssertEqual(created["event"] as? String, "number.created")
        XCTAssertEqual(created["number"] as? String, "ORDERS")
        XCTAssertEqual(created["kind"] as? String, "retained")
        XCTAssertEqual(created["session"] as? Int, session)
        XCTAssertEqual(created["name"] as? String, "alice")

        let removed = events[3].object
        XCTAssertEqual(removed["number"] as? String, "ORDERS")
        XCTAssertEqual(removed["subscribers_told"] as? Int, 1)
        XCTAssertEqual(removed["name"] as? String, "alice")

        let disconnected = events[4].object
        XCTAssertEqual(disconnected["session"] as? Int, session)
        XCTAssertEqual(disconnected["name"] as? String, "alice")
        XCTAssertEqual(disconnected["reason"] as? String, "client")
        XCTAssertEqual(disconnected["address"] as? String, connected["address"] as? String)
    }

    func testASlowConsumerCutIsPostedWithItsPendingBytes() throws {
        let maxPending = 131_072
        let daemon = try startDaemon(DaemonConfig(numbers: ["FLOOD"], maxPayload: 65_536, maxPending: maxPending))
        let watcher = try connect(daemon, "watcher")
        try subscribe(watcher, "$SYS.slow_consumer")
        let slow = try connect(daemon, "slow subscriber", receiveBuffer: 4096)
        XCTAssertNil(try slow.command("HELLO name=sluggish").errorCode)
        try subscribe(slow, "FLOOD")
        let publisher = try connect(daemon, "publisher", timeout: 10)
        let payload = [UInt8](repeating: UInt8(ascii: "x"), count: 60_000)
        var receivers = 1
        var sent = 0
        while receivers == 1 && sent < 2_000 {
            let reply = try publisher.pub("FLOOD", payload)
            guard reply == .ok("1") || reply == .ok("0") else { return XCTFail("PUB FLOOD: \(reply)") }
            receivers = reply == .ok("1") ? 1 : 0
            sent += 1
        }
        XCTAssertEqual(receivers, 0, "the subscriber that never reads was cut off after \(sent) messages")
        let event = try XCTUnwrap(nextEvents(watcher, count: 1).first)
        XCTAssertEqual(event.number, "$SYS.slow_consumer")
        XCTAssertEqual(event.object["name"] as? String, "sluggish")
        XCTAssertEqual(event.object["max_pending"] as? Int, maxPending)
        let pending = try XCTUnwrap(event.object["pending_bytes"] as? Int)
        XCTAssertGreaterThan(pending + payload.count, maxPending, "within one message of the mark: \(pending)")
    }

    /// A slow consumer that subscribes to `$SYS.slow_consumer` itself is cut once, not told about its own cut from
    /// inside the delivery that cut it (which recursed until the stack overflowed).
    func testASlowConsumerWatchingSlowConsumersIsCutOnceAndTheDaemonGoesOn() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["FLOOD"], maxPayload: 65_000, maxPending: 66_000))
        let watcher = try connect(daemon, "watcher")
        try subscribe(watcher, "$SYS.slow_consumer")
        let slow = try connect(daemon, "slow, watching itself", receiveBuffer: 4096)
        try subscribe(slow, "$SYS.slow_consumer", "FLOOD")
        let publisher = try connect(daemon, "publisher", timeout: 10)
        var batch = ""
        for index in 0..<20_000 { batch += "SEND FLOOD hello \(index)\n" }
        try publisher.send(batch)
        for _ in 0..<20_000 { _ = try publisher.readReply() }
        let events = try nextEvents(watcher, count: 1)
        XCTAssertEqual(events.first?.number, "$SYS.slow_consumer")
        XCTAssertEqual(try stats(publisher)["slow_consumers"], "1")
        XCTAssertEqual(try watcher.pushesBeforePing(), [], "one cut, one event")
        XCTAssertEqual(try publisher.command("SEND FLOOD after"), .ok("0"), "the daemon goes on")
    }

    /// A client that connects and says nothing is announced at once (the post is not left waiting for other traffic).
    func testASilentClientIsAnnouncedAtOnce() throws {
        let daemon = try startDaemon()
        let watcher = try connect(daemon, "watcher", timeout: 5)
        try subscribe(watcher, "$SYS.client.connected")
        _ = try connect(daemon, "silent")
        XCTAssertEqual(try nextEvents(watcher, count: 1).first?.number, "$SYS.client.connected")
    }

    func testAReloadIsPostedWithTheNumbersItCreated() throws {
        let config = DaemonConfig(numbers: ["A"])
        let daemon = try startDaemon(config)
        let watcher = try connect(daemon, "watcher")
        try subscribe(watcher, "$SYS.config.reloaded", "$SYS.number.created")
        var reloaded = config
        reloaded.numbers = ["A", "B"]
        try reloaded.yaml.write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        let events = try nextEvents(watcher, count: 2)
        XCTAssertEqual(events.map(\.number), ["$SYS.number.created", "$SYS.config.reloaded"])
        XCTAssertEqual(events[0].object["number"] as? String, "B")
        XCTAssertTrue(events[0].object["session"] == nil, "created by the reload, not by a session")
        XCTAssertEqual(events[1].object["numbers_created"] as? [String], ["B"])
        XCTAssertEqual(events[1].object["needs_restart"] as? [String], [])
    }

    func testStatsArePostedEverySysIntervalAndNotAtAllWithZero() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["S"], extraLines: ["sys_interval: 0.2"]))
        let watcher = try connect(daemon, "watcher")
        try subscribe(watcher, "$SYS.stats")
        let publisher = try connect(daemon, "publisher")
        XCTAssertEqual(try publisher.command("SEND S x"), .ok("0"))
        let start = Date()
        let events = try nextEvents(watcher, count: 3)
        // 0.6 s nominally; 6 s leaves room for a starved subd, and is still far from the default 10 s interval.
        XCTAssertLessThan(Date().timeIntervalSince(start), 6, "three periods of 0.2 s")
        for event in events {
            XCTAssertEqual(event.object["event"] as? String, "stats")
            XCTAssertEqual(event.object["connections"] as? Int, 2)
            XCTAssertEqual(event.object["numbers"] as? Int, 1)
            XCTAssertNotNil(event.object["uptime_seconds"] as? Int, "\(event.object)")
        }
        let published = events.compactMap { $0.object["messages_published"] as? Int }
        XCTAssertEqual(published.count, 3, "messages_published is a number: \(events.map(\.object))")

        let quiet = try startDaemon(DaemonConfig(extraLines: ["sys_interval: 0"]))
        let listener = try connect(quiet, "listener on sys_interval 0")
        try subscribe(listener, "$SYS.stats")
        Thread.sleep(forTimeInterval: 1)
        XCTAssertEqual(try listener.pushesBeforePing(), [], "no $SYS.stats with sys_interval 0")
    }

    /// `$SYS.numbers` (the web console's rates): once a second while a session subscribes to it by that name, the
    /// busiest numbers' publications counted from then on; `$SYS.>` alone does not start it, and it stops with the
    /// last exact subscription.
    func testNumberActivityIsPostedWhileAskedForByName() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["A", "B"]))
        let wide = try connect(daemon, "$SYS.> watcher")
        try subscribe(wide, "$SYS.>")
        let publisher = try connect(daemon, "publisher")
        XCTAssertEqual(try publisher.command("SEND A before"), .ok("0"))
        Thread.sleep(forTimeInterval: 1.5)
        let unasked = try wide.pushesBeforePing().compactMap(\.message).filter { $0.number == "$SYS.numbers" }
        XCTAssertEqual(unasked.count, 0, "not posted while nobody asks for it by name")

        let watcher = try connect(daemon, "$SYS.numbers watcher", timeout: 10)
        try subscribe(watcher, "$SYS.numbers")
        // The first tick that sees the subscription starts counting and posts: once its event is here, counting has
        // started.
        XCTAssertEqual(try nextEvents(watcher, count: 1).first?.number, "$SYS.numbers", "the first tick")
        for text in ["1", "2", "3"] { XCTAssertEqual(try publisher.command("SEND A \(text)"), .ok("0")) }
        XCTAssertEqual(try publisher.command("SEND B 1"), .ok("0"))
        var counts: [String: Int] = [:]
        let deadline = Date().addingTimeInterval(10)
        while counts != ["A": 3, "B": 1], Date() < deadline {
            let event = try XCTUnwrap(try nextEvents(watcher, count: 1).first)
            XCTAssertEqual(event.number, "$SYS.numbers")
            XCTAssertEqual(event.object["event"] as? String, "numbers")
            XCTAssertEqual(event.object["interval_seconds"] as? Int, 1)
            counts = try XCTUnwrap(event.object["published"] as? [String: Int], "\(event.object)")
        }
        XCTAssertEqual(counts, ["A": 3, "B": 1], "counted from when it was asked for, not 'before'")
        XCTAssertTrue(
            try wide.pushesBeforePing().compactMap(\.message).contains { $0.number == "$SYS.numbers" },
            "$SYS.> gets them while they are posted")

        XCTAssertEqual(try watcher.command("UNSUB $SYS.numbers"), .ok())
        Thread.sleep(forTimeInterval: 1.2)
        _ = try wide.pushesBeforePing()
        Thread.sleep(forTimeInterval: 1.5)
        let after = try wide.pushesBeforePing().compactMap(\.message).filter { $0.number == "$SYS.numbers" }
        XCTAssertEqual(after.count, 0, "stopped with the last subscription by name")
    }

    func testSubctlListenToSysIsTheLiveViewOfTheDaemon() throws {
        let daemon = try startDaemon()
        let view = try listen(daemon, ["$SYS.>"])
        let client = try connect(daemon, "client")
        XCTAssertNil(try client.command("HELLO name=bob").errorCode)
        XCTAssertEqual(try client.command("CREATE WEATHER"), .ok("created"))
        let lines = try (0..<2).map { _ in try view.readTextLine() }
        let objects = try lines.map {
            try XCTUnwrap(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        XCTAssertEqual(objects.map { $0["event"] as? String }, ["client.connected", "number.created"], "\(lines)")
        XCTAssertEqual(objects[1]["number"] as? String, "WEATHER")
        XCTAssertEqual(view.stop(), 0)
    }

    /// The next `count` MSG pushes of `client`, each with its payload parsed as one JSON object.
    private func nextEvents(_ client: LineClient, count: Int) throws -> [(number: String, object: [String: Any])] {
        try (0..<count).map { _ in
            let message = try client.nextMessage()
            let object = try JSONSerialization.jsonObject(with: Data(message.payload))
            guard let fields = object as? [String: Any] else {
                throw HarnessError.malformed("\(message.number): not a JSON object: \(message.text)")
            }
            XCTAssertFalse(message.text.contains("\n"), "one line")
            return (message.number, fields)
        }
    }
}
