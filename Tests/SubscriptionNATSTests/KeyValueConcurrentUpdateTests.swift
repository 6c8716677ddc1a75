import TestSupport
import XCTest

@testable import SubscriptionNATS

/// Two clients updating one key of a replicated bucket at the same expected revision at once: exactly one wins.
/// JetStream's own check of `Nats-Expected-Last-Subject-Sequence` does not promise it in a cluster (nats-server
/// issue 4320, 2.9 before 2.9.21: it is checked before the write is proposed, so two writes in flight may both pass
/// it); ``KeyValueBucket/update(_:_:expectedRevision:headers:completion:)`` also names the write
/// `Nats-Msg-Id: <key>@<revision>`, which the stream's leader dedupes before proposing.
final class KeyValueConcurrentUpdateTests: NATSTestCase {
    func testOfTwoConcurrentUpdatesAtOneRevisionOfAReplicatedBucketExactlyOneWins() async throws {
        let servers = try startJetStreamCluster()
        let first = try connectedClient([servers[0].address], label: "first")
        let second = try connectedClient([servers[1].address], label: "second")
        let deadline = Date().addingTimeInterval(30)
        var created: KeyValueBucket?
        while created == nil {
            do {
                created = try await KeyValueBucket.create(
                    KeyValueConfiguration(bucket: "race", replicas: 3, maxBytes: 1 << 20), client: first.client)
            } catch {
                guard Date() < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let one = try XCTUnwrap(created)
        let two = try await KeyValueBucket.open("race", client: second.client)

        var revision = try await one.create("K", Array("0".utf8))
        var doubleWins = 0
        for round in 1...40 {
            let expected = revision
            async let a = try? await one.update("K", Array("a\(round)".utf8), expectedRevision: expected)
            async let b = try? await two.update("K", Array("b\(round)".utf8), expectedRevision: expected)
            let wins = await [a, b].compactMap { $0 }
            XCTAssertGreaterThanOrEqual(wins.count, 1, "round \(round): one of them wins")
            if wins.count > 1 { doubleWins += 1 }
            let latest = try await one.getLatest("K")
            revision = try XCTUnwrap(latest?.revision)
        }
        XCTAssertEqual(doubleWins, 0, "rounds where both updates at one revision were stored")
    }
}
