import TestSupport
import XCTest

@testable import SubscriptionNATS

/// A replicated bucket (R3) in a three-server JetStream cluster, as the cluster bridge will use it.
final class KeyValueClusterTests: NATSTestCase {
    func testAReplicatedBucketIsWatchedOnAnotherServerWithEveryWriteOnceInOrder() async throws {
        let servers = try startJetStreamCluster()
        let (n1, n2, n3) = (servers[0], servers[1], servers[2])
        let writer = try connectedClient([n1.address], label: "writer")
        let watching = try connectedClient([n3.address], label: "watching")
        let reader = try connectedClient([n2.address], label: "reader")

        // The meta leader is elected and learns its peers within seconds: retry while it says so.
        let deadline = Date().addingTimeInterval(30)
        var created: KeyValueBucket?
        while created == nil {
            do {
                created = try await KeyValueBucket.create(
                    KeyValueConfiguration(bucket: "subd_numbers", replicas: 3, maxBytes: 1 << 20), client: writer.client
                )
            } catch {
                guard Date() < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
        let numbers = try XCTUnwrap(created)
        let events = Collector<KeyValueWatchEvent>()
        let watched = try await KeyValueBucket.open("subd_numbers", client: watching.client)
        let watcher = try watching.sync { _ in try KeyValueWatcher(bucket: watched) { events.append($0) } }
        XCTAssertNotNil(events.wait(for: { $0 == .caughtUp }))

        var revisions: [UInt64] = []
        for index in 0..<20 { revisions.append(try await numbers.create("N\(index)", Array("plain".utf8))) }
        revisions.append(try await numbers.delete("N3"))
        XCTAssertTrue(events.wait(untilAll: { $0.count >= 22 }), "\(events.all.count) events")
        watching.flush()
        let seen = events.all.compactMap { if case .entry(let entry) = $0 { entry.revision } else { nil } }
        XCTAssertEqual(seen, revisions, "each stored write once (republished by the stream's leader only), in order")

        // A direct get on a third server, through any replica.
        let viaReplica = try await KeyValueBucket.open("subd_numbers", client: reader.client)
        let deadlineForReplica = Date().addingTimeInterval(5)
        var entry = try await viaReplica.get("N19")
        while entry == nil && Date() < deadlineForReplica {
            try await Task.sleep(for: .milliseconds(20))
            entry = try await viaReplica.get("N19")
        }
        XCTAssertEqual(entry?.revision, revisions[19])
        let deleted = try await viaReplica.getLatest("N3")
        XCTAssertNil(deleted)
        watching.sync { _ in watcher.stop() }
    }
}
