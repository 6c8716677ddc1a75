import TestSupport
import XCTest

@testable import SubscriptionNATS

/// What a watcher reports of each entry, as subd's retained numbers need it (docs/CLUSTER.md, step 5): the writer's
/// headers and the entry's revision, the same from the load (`STREAM.MSG.GET`) as from a live write (the bucket's
/// republish), with JetStream's own headers (`Nats-…`, the expected-sequence header of an update) left out.
final class KeyValueWatchHeadersTests: NATSTestCase {
    func testAWatchReportsTheWritersHeadersAndRevisionFromTheLoadAndLive() async throws {
        let server = try startServer(.init(monitoring: true, jetStream: true))
        try server.waitForJetStream()
        let client = try connectedClient([server.address])
        let bucket = try await KeyValueBucket.create(
            KeyValueConfiguration(bucket: "retained", maxBytes: 1 << 20), client: client.client)
        let loadedHeaders: NATSHeaders = ["Subd-Rev": "1", "Subd-Info": "unit=EUR price=12"]
        let loaded = try await bucket.create("PRICE", Array("12".utf8), headers: loadedHeaders)

        let events = Collector<KeyValueWatchEvent>()
        let watcher = try client.sync { _ in try KeyValueWatcher(bucket: bucket) { events.append($0) } }
        XCTAssertNotNil(events.wait(for: { $0 == .caughtUp }))

        let liveHeaders: NATSHeaders = ["Subd-Rev": "2", "Subd-From": "lab"]
        let live = try await bucket.update("PRICE", Array("13".utf8), expectedRevision: loaded, headers: liveHeaders)
        XCTAssertTrue(events.wait(untilAll: { $0.count == 3 }), "\(events.all)")
        let entries = events.all.compactMap { event -> KeyValueEntry? in
            if case .entry(let entry) = event { entry } else { nil }
        }
        XCTAssertEqual(entries.map(\.revision), [loaded, live])
        XCTAssertEqual(entries.map(\.headers), [loadedHeaders, liveHeaders], "the writer's headers, in order, only")
        XCTAssertEqual(entries.map { String(decoding: $0.value, as: UTF8.self) }, ["12", "13"])
        client.sync { _ in watcher.stop() }
    }
}
