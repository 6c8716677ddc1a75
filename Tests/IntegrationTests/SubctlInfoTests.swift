import Foundation
import XCTest

/// `subctl publish --info KEY=VALUE` and how `subctl listen` shows info pairs (protocol 1.1, "Info pairs"), with the
/// real subd in between.
final class SubctlInfoTests: IntegrationTestCase {
    func testPublishInfoReachesSubscribersAfterFrom() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["SCIENCE"]))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "SCIENCE")
        let result = try subctl(
            daemon, "publish", ["--name", "lab", "SCIENCE", "V1.0", "--info", "unit=EUR", "--info", "price=12"])
        XCTAssertEqual(result.lines, ["published to 1 receiver"], "\(result)")
        let message = try subscriber.nextMessage()
        XCTAssertEqual(message.text, "V1.0")
        XCTAssertEqual(message.attributes, ["from": "lab", "unit": "EUR", "price": "12"])
    }

    /// A value that needs other bytes is percent-encoded on the way out (and `%` itself, so it decodes back).
    func testPublishPercentEncodesWhatAValueMayNotHold() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "N")
        let result = try subctl(daemon, "publish", ["N", "x", "--info", "note=a b=c 100%", "--info", "plain=ünï"])
        XCTAssertEqual(result.status, 0, "\(result)")
        XCTAssertEqual(try subscriber.nextMessage().attributes, ["note": "a%20b%3Dc%20100%25", "plain": "ünï"])
    }

    func testPublishLinesAttachesTheInfoToEveryMessage() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["L"]))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "L")
        let result = try subctl(daemon, "publish", ["L", "--lines", "--info", "batch=7"], stdin: Array("a\nb\n".utf8))
        XCTAssertEqual(result.lines, ["published 2 messages (2 deliveries)"], "\(result)")
        for text in ["a", "b"] {
            let message = try subscriber.nextMessage()
            XCTAssertEqual(message.text, text)
            XCTAssertEqual(message.attributes, ["batch": "7"])
        }
    }

    /// Plain output: the payload line first; when the message has info pairs, one more line `  info: ...` with the
    /// pairs in the publisher's order and the values as sent; nothing more when it has none.
    func testListenShowsThePairsOnALineAfterThePayload() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["P"]))
        let listener = try listen(daemon, ["P"])
        let publisher = try connect(daemon, "publisher")
        try publisher.send(Array("PUB P 4 zeta=1 alpha=a%20b\nV1.0\n".utf8))
        XCTAssertEqual(try publisher.readReply(), .ok("1"))
        XCTAssertEqual(try publisher.pub("P", Array("plain".utf8)), .ok("1"))
        XCTAssertEqual(try listener.readTextLine(), "V1.0")
        XCTAssertEqual(try listener.readTextLine(), "  info: zeta=1 alpha=a%20b")
        XCTAssertEqual(try listener.readTextLine(), "plain", "no info line for a message without pairs")
        XCTAssertEqual(listener.stop(), 0)
    }

    /// `--json`: an `"info"` object on every line (`{}` without pairs), its values percent-decoded.
    func testListenJsonHasAnInfoObjectWithDecodedValues() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["J"]))
        let listener = try listen(daemon, ["J"], extra: ["--json"])
        let published = try subctl(
            daemon, "publish", ["--name", "lab", "J", "V1.0", "--info", "note=a b=c 100%", "--info", "unit=EUR"])
        XCTAssertEqual(published.status, 0, "\(published)")
        let publisher = try connect(daemon, "publisher")
        XCTAssertEqual(try publisher.pub("J", Array("plain".utf8)), .ok("1"))

        let first = try jsonObject(try listener.readLine())
        XCTAssertEqual(first["from"] as? String, "lab")
        XCTAssertEqual(first["info"] as? [String: String], ["note": "a b=c 100%", "unit": "EUR"])
        XCTAssertNil(first["unit"], "info pairs are inside 'info', not beside 'from'")
        let second = try jsonObject(try listener.readLine())
        XCTAssertEqual(second["info"] as? [String: String], [:], "'info' is there, empty, without pairs")
        XCTAssertEqual(listener.stop(), 0)
    }

    private func jsonObject(_ line: [UInt8]) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(line), options: [.fragmentsAllowed])
        return try XCTUnwrap(object as? [String: Any], "not a JSON object: \(describeBytes(line))")
    }
}

/// `subctl publish --info` arguments that break the info-pair rules: a usage error (exit 64) that names the rule,
/// before anything is sent. (These need no protocol 1.1 on the server.)
final class SubctlInfoUsageTests: IntegrationTestCase {
    func testBadInfoIsAUsageErrorNamingTheRule() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "N")
        let cases: [([String], String)] = [
            (["--info", "1x=y"], "an info key must be 1 to 64 ASCII letters, digits, '_', '-' or '.', starting with"),
            (["--info", "from=me"], "the info key 'from' is the server's own"),
            (["--info", "$rev=1"], "an info key must be"),
            (["--info", "novalue"], "--info 'novalue' is not KEY=VALUE"),
            (["--info", "k="], "an info value must be 1 to 1024 bytes"),
            (["--info", "k=1", "--info", "k=2"], "the info key 'k' is given twice"),
            ((1...17).flatMap { ["--info", "k\($0)=v"] }, "17 info pairs (at most 16)"),
        ]
        for (info, message) in cases {
            let result = try subctl(daemon, "publish", ["N", "x"] + info)
            XCTAssertEqual(result.status, 64, "\(result)")
            XCTAssertTrue(result.stderr.contains(message), "\(result)")
            XCTAssertEqual(result.output, "", "\(result)")
        }
        XCTAssertEqual(try subscriber.pushesBeforePing(), [], "nothing was published")
    }
}
