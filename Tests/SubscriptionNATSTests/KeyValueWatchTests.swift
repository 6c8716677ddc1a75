import TestSupport
import XCTest

@testable import SubscriptionNATS

/// Watching a bucket: a load of every key's latest entry, then the writes the bucket stored, in order, each once,
/// and a reload of what changed while the client was disconnected.
final class KeyValueWatchTests: NATSTestCase {
    private func jetStream(port: Int? = nil) throws -> NATSServerProcess {
        let server = try startServer(.init(port: port, monitoring: true, jetStream: true))
        try server.waitForJetStream()
        return server
    }

    private func bucket(_ name: String, _ client: TestClient) async throws -> KeyValueBucket {
        try await KeyValueBucket.create(KeyValueConfiguration(bucket: name, maxBytes: 1 << 20), client: client.client)
    }

    private func watch(_ bucket: KeyValueBucket, _ client: TestClient) throws -> (
        KeyValueWatcher, Collector<KeyValueWatchEvent>
    ) {
        let events = Collector<KeyValueWatchEvent>()
        let watcher = try client.sync { _ in try KeyValueWatcher(bucket: bucket) { events.append($0) } }
        return (watcher, events)
    }

    private func entries(_ events: [KeyValueWatchEvent]) -> [String] {
        events.compactMap { event in
            guard case .entry(let entry) = event else { return nil }
            let operation = entry.operation == .put ? "" : " \(entry.operation.rawValue)"
            return "\(entry.key)=\(String(decoding: entry.value, as: UTF8.self))\(operation)"
        }
    }

    /// Why the watcher does not subscribe to `$KV.<bucket>.>`: a plain subscriber there also receives the writes
    /// the bucket refused.
    func testAPlainSubscriptionOnTheBucketsSubjectsAlsoSeesRefusedWrites() async throws {
        let server = try jetStream()
        let client = try connectedClient([server.address])
        let numbers = try await bucket("numbers", client)
        let (_, plain) = try client.subscribe("$KV.numbers.>")
        let (watcher, events) = try watch(numbers, client)
        XCTAssertNotNil(events.wait(for: { $0 == .caughtUp }))

        _ = try await numbers.create("SCIENCE", Array("plain".utf8))
        do {
            _ = try await numbers.create("SCIENCE", Array("retained".utf8))
            XCTFail("the second create must lose")
        } catch {
            guard case .wrongLastSequence = error else { return XCTFail("\(error)") }
        }
        client.flush()
        XCTAssertEqual(plain.wait(count: 2)?.map(text), ["plain", "retained"], "the refused write is delivered too")
        XCTAssertTrue(events.wait(untilAll: { self.entries($0).count == 1 }))
        client.flush()
        XCTAssertEqual(entries(events.all), ["SCIENCE=plain"], "the watcher sees only what the bucket stored")
        client.sync { _ in watcher.stop() }
    }

    func testWatchLoadsEveryKeysLatestEntryThenFollowsWritesInOrder() async throws {
        let server = try jetStream()
        let client = try connectedClient([server.address])
        let retained = try await bucket("retained", client)
        _ = try await retained.put("A", Array("1".utf8))
        _ = try await retained.put("B", Array("1".utf8))
        _ = try await retained.put("A", Array("2".utf8))
        _ = try await retained.delete("B")

        let (watcher, events) = try watch(retained, client)
        XCTAssertNotNil(events.wait(for: { $0 == .caughtUp }))
        XCTAssertEqual(entries(events.all), ["A=2", "B= DEL"], "the latest entry of each key, in revision order")

        let writer = try connectedClient([server.address], label: "writer")
        let other = try await KeyValueBucket.open("retained", client: writer.client)
        var revisions: [UInt64] = []
        for value in ["3", "4", "5"] { revisions.append(try await other.put("A", Array(value.utf8))) }
        revisions.append(try await other.create("C", Array("new".utf8)))
        XCTAssertTrue(events.wait(untilAll: { self.entries($0).count == 6 }), "\(events.all)")
        let all = events.all
        XCTAssertEqual(entries(all), ["A=2", "B= DEL", "A=3", "A=4", "A=5", "C=new"])
        let seen = all.compactMap { if case .entry(let entry) = $0 { entry.revision } else { nil } }
        XCTAssertEqual(Array(seen.suffix(4)), revisions)
        XCTAssertEqual(seen, seen.sorted(), "revisions rise")
        XCTAssertEqual(client.sync { _ in watcher.lastRevision }, revisions.last)

        client.sync { _ in watcher.stop() }
        _ = try await other.put("A", Array("after stop".utf8))
        client.flush()
        XCTAssertEqual(entries(events.all).count, 6, "no events after stop")
    }

    func testAWatchReloadsWhatChangedWhileItsClientWasDisconnected() async throws {
        let first = try jetStream()
        // The watcher's client comes back slowly; the writer's quickly, and writes while the watcher is away.
        let watching = try connectedClient(
            [first.address], options: NATSClientOptions(reconnectWait: .seconds(3)), label: "watching")
        let writer = try connectedClient(
            [first.address], options: NATSClientOptions(reconnectWait: .milliseconds(50)), label: "writer")
        let numbers = try await bucket("gap", watching)
        _ = try await numbers.put("KEPT", Array("v1".utf8))
        _ = try await numbers.put("GONE", Array("v1".utf8))
        let (watcher, events) = try watch(numbers, watching)
        XCTAssertTrue(events.wait(untilAll: { $0.contains(.caughtUp) }))

        first.kill()
        XCTAssertNotNil(watching.statuses.wait(for: { if case .disconnected = $0 { true } else { false } }))
        _ = try jetStream(port: first.port)
        XCTAssertTrue(writer.statuses.wait(untilAll: { $0.filter(isConnected).count == 2 }))
        let reopened = try await KeyValueBucket.open("gap", client: writer.client)
        _ = try await reopened.put("KEPT", Array("v2".utf8))
        _ = try await reopened.delete("GONE")
        _ = try await reopened.create("NEW", Array("v1".utf8))
        XCTAssertEqual(
            watching.statuses.all.filter(isConnected).count, 1, "the watcher was still away for these writes")

        XCTAssertTrue(events.wait(untilAll: { $0.filter { $0 == .caughtUp }.count == 2 }, timeout: 10), "\(events.all)")
        XCTAssertEqual(entries(events.all), ["KEPT=v1", "GONE=v1", "KEPT=v2", "GONE= DEL", "NEW=v1"])
        watching.sync { _ in watcher.stop() }
    }

    /// A write the bucket stored whose republish never came (as when the stream's leader dies between the two): the
    /// next live write's revision shows the gap, and the watcher loads the missing writes before it, those the
    /// bucket still keeps: with a history of 1 a write of the key replaced it, with 2 it is still there. The bucket
    /// here republishes only the keys under `SEEN.`, so writes of `UNSEEN` are stored and never republished.
    func testALiveWriteAfterAGapLoadsTheWritesWhoseRepublishNeverCame() async throws {
        let server = try jetStream()
        let client = try connectedClient([server.address])
        for history in [1, 2] {
            let name = "part\(history)"
            var config = KeyValueConfiguration(bucket: name, maxBytes: 1 << 20, history: history).streamConfig
            config.republish = JetStreamJSON.Republish(src: "$KV.\(name).SEEN.>", dest: "subd.kv.\(name).SEEN.>")
            let created = try await client.client.request(
                subject: "$JS.API.STREAM.CREATE.KV_\(name)", payload: Array(JSONCoding.encode(config).utf8))
            XCTAssertFalse(String(decoding: created.payload, as: UTF8.self).contains("\"error\""), "\(created)")
            let part = try await KeyValueBucket.open(name, client: client.client)
            let (watcher, events) = try watch(part, client)
            XCTAssertNotNil(events.wait(for: { $0 == .caughtUp }))

            _ = try await part.put("SEEN.a", Array("1".utf8))
            XCTAssertTrue(events.wait(untilAll: { self.entries($0).count == 1 }), "\(events.all)")
            _ = try await part.put("UNSEEN", Array("1".utf8))
            _ = try await part.put("UNSEEN", Array("2".utf8))
            _ = try await part.put("SEEN.b", Array("1".utf8))
            _ = try await part.put("SEEN.a", Array("2".utf8))
            let expected =
                history == 1
                ? ["SEEN.a=1", "UNSEEN=2", "SEEN.b=1", "SEEN.a=2"]
                : ["SEEN.a=1", "UNSEEN=1", "UNSEEN=2", "SEEN.b=1", "SEEN.a=2"]
            XCTAssertTrue(
                events.wait(untilAll: { self.entries($0).count == expected.count && $0.last == .caughtUp }),
                "\(events.all)")
            client.flush()
            XCTAssertEqual(entries(events.all), expected, "history \(history): in revision order")
            let revisions = events.all.compactMap { event -> UInt64? in
                guard case .entry(let entry) = event else { return nil }
                return entry.revision
            }
            XCTAssertEqual(revisions, history == 1 ? [1, 3, 4, 5] : [1, 2, 3, 4, 5], "history \(history)")
            XCTAssertEqual(client.sync { _ in watcher.gapsFound }, 1, "history \(history): one gap, one load")
            XCTAssertEqual(events.all.filter { $0 == .caughtUp }.count, 2, "the first load and the gap's")
            client.sync { _ in watcher.stop() }
        }
    }

    /// A stored write whose republish never came and no write after it: no gap to see, but with `tailCheck` the
    /// watcher finds the stream's last revision past its own and loads the write (once; later checks find nothing
    /// new and load nothing). Without it the write stays unreported. The bucket republishes only the keys under
    /// `SEEN.`, as above.
    func testTheTailCheckLoadsAStoredWriteWhoseRepublishNeverCame() async throws {
        let server = try jetStream()
        let client = try connectedClient([server.address])
        let name = "tail"
        var config = KeyValueConfiguration(bucket: name, maxBytes: 1 << 20).streamConfig
        config.republish = JetStreamJSON.Republish(src: "$KV.\(name).SEEN.>", dest: "subd.kv.\(name).SEEN.>")
        let created = try await client.client.request(
            subject: "$JS.API.STREAM.CREATE.KV_\(name)", payload: Array(JSONCoding.encode(config).utf8))
        XCTAssertFalse(String(decoding: created.payload, as: UTF8.self).contains("\"error\""), "\(created)")
        let part = try await KeyValueBucket.open(name, client: client.client)
        let checked = Collector<KeyValueWatchEvent>()
        let unchecked = Collector<KeyValueWatchEvent>()
        let (watcher, other) = try client.sync { _ in
            (
                try KeyValueWatcher(bucket: part, tailCheck: .milliseconds(200)) { checked.append($0) },
                try KeyValueWatcher(bucket: part) { unchecked.append($0) }
            )
        }
        XCTAssertNotNil(checked.wait(for: { $0 == .caughtUp }))
        XCTAssertNotNil(unchecked.wait(for: { $0 == .caughtUp }))

        _ = try await part.put("SEEN.a", Array("1".utf8))
        _ = try await part.put("UNSEEN", Array("1".utf8))
        XCTAssertTrue(checked.wait(untilAll: { self.entries($0) == ["SEEN.a=1", "UNSEEN=1"] }), "\(checked.all)")
        XCTAssertEqual(client.sync { _ in watcher.tailsFound }, 1)
        XCTAssertEqual(client.sync { _ in watcher.lastRevision }, 2)
        try await Task.sleep(for: .seconds(1))  // five more checks: nothing past revision 2
        XCTAssertEqual(client.sync { _ in watcher.tailsFound }, 1, "the end was read once")
        XCTAssertEqual(entries(unchecked.all), ["SEEN.a=1"], "without the tail check UNSEEN is never reported")
        XCTAssertEqual(client.sync { _ in other.tailsFound }, 0)
        client.sync { _ in
            watcher.stop()
            other.stop()
        }
    }
}
