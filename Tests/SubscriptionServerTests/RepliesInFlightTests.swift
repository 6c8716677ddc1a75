import SubscriptionCommands
import SubscriptionProtocol
import XCTest

@testable import SubscriptionServer

/// A session's replies in flight (pipelined confirmations, docs/CLUSTER.md step 4): filled in any order, they leave
/// in the order their commands ran.
final class RepliesInFlightTests: XCTestCase {
    /// Takes every reply ready at the front.
    private func drain(_ replies: inout RepliesInFlight) -> [Result<Reply, ProtocolError>] {
        var out: [Result<Reply, ProtocolError>] = []
        while let reply = replies.takeReady() { out.append(reply) }
        return out
    }

    func testRepliesLeaveInCommandOrderWhateverOrderTheyAreFilledIn() {
        var replies = RepliesInFlight()
        XCTAssertTrue(replies.isEmpty)
        let first = replies.reserve()
        replies.append(.success(.count(7)))
        let second = replies.reserve()
        replies.append(.failure(ProtocolError(.notFound, "no such number")))
        XCTAssertEqual(replies.count, 4)
        XCTAssertEqual(replies.waiting, 2)
        XCTAssertTrue(drain(&replies).isEmpty, "the front waits")
        XCTAssertTrue(replies.fill(second, with: .success(.count(2))))
        XCTAssertTrue(drain(&replies).isEmpty, "the front still waits")
        XCTAssertFalse(replies.fill(second, with: .success(.count(9))), "filled once")
        XCTAssertTrue(replies.fill(first, with: .success(.count(1))))
        XCTAssertEqual(
            drain(&replies),
            [
                .success(.count(1)), .success(.count(7)), .success(.count(2)),
                .failure(ProtocolError(.notFound, "no such number")),
            ])
        XCTAssertTrue(replies.isEmpty)
        XCTAssertEqual(replies.waiting, 0)
        XCTAssertFalse(replies.fill(first, with: .success(.count(1))), "taken out: not a slot any more")
        XCTAssertEqual(replies.reserve(), second + 2, "slot numbers go on rising, one per reply held")
    }

    /// Random reserves, appends and fills, checked against the plain rule: what leaves is the replies in command
    /// order, each once it and everything before it is ready.
    func testRandomFillsAgainstAModel() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            var replies = RepliesInFlight()
            var waiting: [UInt64: Int] = [:]  // slot -> the command index it answers
            var commands = 0
            var left: [Int] = []
            for _ in 0..<200 {
                switch Int.random(in: 0..<3, using: &generator) {
                case 0:
                    waiting[replies.reserve()] = commands
                    commands += 1
                case 1 where !replies.isEmpty:
                    replies.append(.success(.count(commands)))
                    commands += 1
                default:
                    guard let slot = waiting.keys.randomElement(using: &generator) else { continue }
                    XCTAssertTrue(replies.fill(slot, with: .success(.count(waiting.removeValue(forKey: slot)!))))
                }
                for reply in drain(&replies) {
                    guard case .success(.count(let index)) = reply else { return XCTFail("\(reply)") }
                    left.append(index)
                }
                XCTAssertEqual(replies.waiting, waiting.count)
            }
            for (slot, index) in waiting { replies.fill(slot, with: .success(.count(index))) }
            for reply in drain(&replies) {
                guard case .success(.count(let index)) = reply else { return XCTFail("\(reply)") }
                left.append(index)
            }
            // Every command entered (an append only behind a waiting one): all left, each once, in order.
            XCTAssertEqual(left, Array(0..<commands))
            XCTAssertTrue(replies.isEmpty)
        }
    }
}
