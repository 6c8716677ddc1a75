import XCTest

/// Patterns: `*` matches exactly one token, `>` one or more trailing tokens, `>` alone every number.
final class WildcardTests: IntegrationTestCase {
    private let numbers = ["A", "A.b", "A.c", "A.b.c", "A.b.c.d", "B.b", "B.b.c", "Ab"]

    /// Starts one subd, subscribes one session per pattern, publishes one message to each of `numbers` and returns,
    /// per pattern, the numbers its session received.
    private func deliveries(_ patterns: [String]) throws -> [String: Set<String>] {
        let daemon = try startDaemon()
        let publisher = try connect(daemon, "publisher")
        for number in numbers { try create(publisher, number) }
        var subscribers: [(String, LineClient)] = []
        for pattern in patterns {
            let subscriber = try connect(daemon, "subscriber \(pattern)")
            try subscribe(subscriber, pattern)
            subscribers.append((pattern, subscriber))
        }
        for number in numbers {
            XCTAssertEqual(try publisher.command("SEND \(number) to \(number)").errorCode, nil, "SEND \(number)")
        }
        var result: [String: Set<String>] = [:]
        for (pattern, subscriber) in subscribers {
            var received: Set<String> = []
            for push in try subscriber.pushesBeforePing() {
                guard let message = push.message else {
                    XCTFail("\(pattern): unexpected push \(push)")
                    continue
                }
                XCTAssertEqual(message.text, "to \(message.number)")
                XCTAssertTrue(received.insert(message.number).inserted, "\(pattern): \(message.number) twice")
            }
            result[pattern] = received
        }
        return result
    }

    func testStarMatchesExactlyOneToken() throws {
        let got = try deliveries(["A.*", "*", "*.b", "A.*.c", "*.*.c"])
        XCTAssertEqual(got["A.*"], ["A.b", "A.c"])
        XCTAssertEqual(got["*"], ["A", "Ab"])
        XCTAssertEqual(got["*.b"], ["A.b", "B.b"])
        XCTAssertEqual(got["A.*.c"], ["A.b.c"])
        XCTAssertEqual(got["*.*.c"], ["A.b.c", "B.b.c"])
    }

    func testGreaterThanMatchesOneOrMoreTrailingTokens() throws {
        let got = try deliveries(["A.>", "A.b.>", "*.b.>"])
        XCTAssertEqual(got["A.>"], ["A.b", "A.c", "A.b.c", "A.b.c.d"], "'A.>' never matches 'A' itself")
        XCTAssertEqual(got["A.b.>"], ["A.b.c", "A.b.c.d"])
        XCTAssertEqual(got["*.b.>"], ["A.b.c", "A.b.c.d", "B.b.c"])
    }

    func testGreaterThanAloneMatchesEveryNumber() throws {
        XCTAssertEqual(try deliveries([">"])[">"], Set(numbers))
    }

    func testExactPatternMatchesOnlyItself() throws {
        let got = try deliveries(["A.b", "A"])
        XCTAssertEqual(got["A.b"], ["A.b"])
        XCTAssertEqual(got["A"], ["A"])
    }
}
