import TestSupport
import XCTest

@testable import SubscriptionClient

/// The plain values under ReconnectingClient: the backoff's waits, the order servers are tried in, the outbound
/// buffer's bound, and the check that keeps an observation from delivering a retained value twice.
final class ReconnectPlanTests: XCTestCase {
    func testBackoffDoublesUpToItsCapWithoutJitter() {
        let backoff = Backoff(initial: .milliseconds(100), cap: .seconds(1), jitter: 0)
        var random = SeededGenerator(seed: 1)
        let waits = (0...6).map { backoff.delay(afterFailures: $0, using: &random) }
        XCTAssertEqual(
            waits,
            [
                .zero, .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1),
                .seconds(1),
            ])
        XCTAssertEqual(backoff.delay(afterFailures: 10_000, using: &random), .seconds(1), "no overflow far out")
    }

    func testJitterTakesAtMostItsShareOffAndSpreadsTheWaits() {
        let backoff = Backoff(initial: .milliseconds(100), cap: .seconds(5), jitter: 0.5)
        var random = SeededGenerator(seed: 42)
        var seen = Set<Duration>()
        for _ in 0..<200 {
            let wait = backoff.delay(afterFailures: 3, using: &random)
            XCTAssertGreaterThan(wait, .milliseconds(200))
            XCTAssertLessThanOrEqual(wait, .milliseconds(400))
            seen.insert(wait)
        }
        XCTAssertGreaterThan(seen.count, 100, "jitter spreads clients that lost one server")
    }

    func testScheduleGoesRoundTheServersAndStartsAgainFromTheLostOne() {
        let servers: [Endpoint] = [.tcp(host: "a", port: 1), .tcp(host: "b", port: 2), .tcp(host: "c", port: 3)]
        var schedule = ReconnectSchedule(
            servers: servers, backoff: Backoff(initial: .milliseconds(10), cap: .seconds(1), jitter: 0))
        var random = SeededGenerator(seed: 7)
        XCTAssertEqual(schedule.endpoint, servers[0])
        XCTAssertEqual(schedule.delay(using: &random), .zero, "the first attempt goes at once")
        schedule.failed()
        XCTAssertEqual(schedule.endpoint, servers[1])
        XCTAssertEqual(schedule.delay(using: &random), .milliseconds(10))
        schedule.failed()
        schedule.failed()
        XCTAssertEqual(schedule.endpoint, servers[0], "round robin")
        XCTAssertEqual(schedule.delay(using: &random), .milliseconds(40))
        schedule.failed()
        schedule.connected()
        XCTAssertEqual(schedule.endpoint, servers[1], "after a loss, the lost server first")
        XCTAssertEqual(schedule.delay(using: &random), .zero, "and at once")
    }

    func testOutboundBufferRefusesWhatDoesNotFitAndGivesBackWhatTimedOut() {
        var buffer = OutboundBuffer<String>(limit: 10)
        XCTAssertTrue(buffer.append("a", id: 1, size: 4))
        XCTAssertTrue(buffer.append("b", id: 2, size: 4))
        XCTAssertFalse(buffer.append("c", id: 3, size: 3), "4 + 4 + 3 > 10")
        XCTAssertTrue(buffer.append("d", id: 4, size: 2), "exactly full")
        XCTAssertEqual(buffer.bytes, 10)
        XCTAssertEqual(buffer.remove(id: 2), "b")
        XCTAssertNil(buffer.remove(id: 2), "gone already")
        XCTAssertTrue(buffer.append("e", id: 5, size: 4))
        XCTAssertEqual(buffer.removeAll(), ["a", "d", "e"], "oldest first")
        XCTAssertEqual(buffer.bytes, 0)
        var none = OutboundBuffer<String>(limit: 0)
        XCTAssertFalse(none.append("x", id: 1, size: 1), "a limit of 0 holds nothing")
    }

    func testARetainedValueIsNotDeliveredTwiceButANewOneIs() {
        var repeats = RetainedRepeats()
        let rev2 = ReceivedMessage(number: "PRICE", payload: Array("12".utf8), revision: 2)
        XCTAssertFalse(repeats.isRepeat(ReceivedMessage(number: "PRICE", payload: Array("11".utf8), revision: 1)))
        XCTAssertFalse(repeats.isRepeat(rev2))
        XCTAssertTrue(repeats.isRepeat(rev2), "pushed again on subscribing again")
        XCTAssertFalse(
            repeats.isRepeat(ReceivedMessage(number: "PRICE", payload: Array("9".utf8), revision: 1)),
            "the number was made again: a new value, even with a lower revision")
        XCTAssertFalse(repeats.isRepeat(ReceivedMessage(number: "OTHER", payload: Array("12".utf8), revision: 2)))
        let plain = ReceivedMessage(number: "NEWS", payload: Array("x".utf8))
        XCTAssertFalse(repeats.isRepeat(plain))
        XCTAssertFalse(repeats.isRepeat(plain), "plain messages are never held back")
    }
}
