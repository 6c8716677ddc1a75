import XCTest

/// `subctl publish`: words, stdin as one binary message, `--lines`, `--name`, receiver counts.
final class SubctlPublishTests: IntegrationTestCase {
    func testPublishJoinsMessageWordsWithOneSpace() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["W"]))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "W")
        let result = try subctl(daemon, "publish", ["W", "hello", "big  wide", "world"])
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertEqual(try subscriber.nextMessage().text, "hello big  wide world")
    }

    func testPublishSaysReceiverOrReceivers() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["R"]))
        XCTAssertEqual(try subctl(daemon, "publish", ["R", "x"]).lines, ["published to 0 receivers"])
        try subscribe(try connect(daemon, "first"), "R")
        XCTAssertEqual(try subctl(daemon, "publish", ["R", "x"]).lines, ["published to 1 receiver"])
        try subscribe(try connect(daemon, "second"), "R")
        XCTAssertEqual(try subctl(daemon, "publish", ["R", "x"]).lines, ["published to 2 receivers"])
    }

    func testPublishFromStdinSendsItAllAsOneBinaryMessage() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["BIN"]))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "BIN")
        let listener = try listen(daemon, ["BIN"])
        let payload = (0...255).map { UInt8($0) } + Array("\nsecond line\n\n".utf8) + (0...255).map { UInt8(255 - $0) }
        let result = try subctl(daemon, "publish", ["BIN"], stdin: payload)
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertEqual(result.lines, ["published to 2 receivers"], "\(result)")
        let message = try subscriber.nextMessage()
        XCTAssertEqual(message.payload, payload, "stdin arrived changed")
        XCTAssertEqual(try listener.readBytes(payload.count + 1), payload + [0x0A], "listen prints payload + LF")
    }

    func testPublishLinesSendsOneMessagePerLine() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["LINES"]))
        let first = try connect(daemon, "first")
        let second = try connect(daemon, "second")
        try subscribe(first, "LINES")
        try subscribe(second, "LINES")
        let result = try subctl(
            daemon, "publish", ["LINES", "--lines"], stdin: Array("one\ntwo\r\nthree  four\n".utf8))
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertEqual(result.lines, ["published 3 messages (6 deliveries)"], "\(result)")
        for subscriber in [first, second] {
            XCTAssertEqual(try subscriber.nextMessage().text, "one")
            XCTAssertEqual(try subscriber.nextMessage().text, "two", "the CR before LF is stripped")
            XCTAssertEqual(try subscriber.nextMessage().text, "three  four")
            XCTAssertEqual(try subscriber.pushesBeforePing(), [])
        }
    }

    func testPublishWithNameSetsFrom() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["NAMED"]))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "NAMED")
        XCTAssertEqual(try subctl(daemon, "publish", ["--name", "alice", "NAMED", "hi"]).status, 0)
        XCTAssertEqual(try subscriber.nextMessage().from, "alice")
        XCTAssertEqual(try subctl(daemon, "publish", ["NAMED", "anon"]).status, 0)
        XCTAssertNil(try subscriber.nextMessage().from)
    }

    func testServerComesFromSubdServerEnvironment() throws {
        let daemon = try startDaemon()
        let result = try Subctl.run(["create", "ENV"], environment: ["SUBD_SERVER": daemon.server])
        XCTAssertEqual(result.lines, ["created ENV"], "\(result)")
        XCTAssertEqual(try listCounts(try connect(daemon)), ["ENV": 0])
    }
}
