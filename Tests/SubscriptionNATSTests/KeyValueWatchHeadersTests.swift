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

    /// A delete marker carries the deleter's headers (subd's `REMOVE` names who waits for confirmations), from the
    /// load and live alike, and the watcher says which entries its load read (``KeyValueWatcher/isLoading``).
    func testADeleteCarriesItsHeadersAndTheWatcherTellsLoadedEntriesFromLiveOnes() async throws {
        let server = try startServer(.init(monitoring: true, jetStream: true))
        try server.waitForJetStream()
        let client = try connectedClient([server.address])
        let bucket = try await KeyValueBucket.create(
            KeyValueConfiguration(bucket: "numbers", maxBytes: 1 << 20), client: client.client)
        let created = try await bucket.create("OLD", Array("plain".utf8))
        let loadedHeaders: NATSHeaders = ["Subd-Id": "node1-a 1", "Subd-Ack": "subd.ack.node1-a"]
        _ = try await bucket.delete("OLD", expectedRevision: created, headers: loadedHeaders)

        let events = Collector<(KeyValueEntry, Bool)>()
        let done = Collector<Bool>()
        let box = WatcherBox()
        let watcher = try client.sync { _ in
            // Set in the queue's turn that makes it: the handler runs in a later one.
            box.watcher = try KeyValueWatcher(bucket: bucket) { event in
                switch event {
                case .entry(let entry): events.append((entry, box.watcher?.isLoading ?? true))
                case .caughtUp: done.append(true)
                case .loadFailed: break
                }
            }
            return box.watcher
        }
        XCTAssertNotNil(done.wait(for: { $0 }))
        let live = try await bucket.create("NEW", Array("plain".utf8))
        let liveHeaders: NATSHeaders = ["Subd-Id": "node2-b 7"]
        _ = try await bucket.delete("NEW", expectedRevision: live, headers: liveHeaders)
        XCTAssertTrue(events.wait(untilAll: { $0.count == 3 }), "\(events.all.map(\.0))")
        let all = events.all
        XCTAssertEqual(all.map(\.0.key), ["OLD", "NEW", "NEW"])
        XCTAssertEqual(all.map(\.0.operation), [.delete, .put, .delete])
        XCTAssertEqual(all.map(\.0.headers), [loadedHeaders, NATSHeaders(), liveHeaders], "the deleter's headers only")
        XCTAssertEqual(all.map(\.1), [true, false, false], "the load's entry, then live ones")
        client.sync { _ in watcher?.stop() }
    }
}

/// The watcher its own handler reads, set and read on the client's queue only.
private final class WatcherBox: @unchecked Sendable {
    var watcher: KeyValueWatcher?
}
