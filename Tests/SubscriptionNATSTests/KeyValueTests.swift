import TestSupport
import XCTest

@testable import SubscriptionNATS

/// JetStream key-value buckets on a real nats-server with JetStream (a store in the test's directory, small limits).
final class KeyValueTests: NATSTestCase {
    /// A JetStream server, healthy, and a connected client.
    private func jetStream() throws -> (NATSServerProcess, TestClient) {
        let server = try startServer(.init(monitoring: true, jetStream: true))
        try server.waitForJetStream()
        return (server, try connectedClient([server.address]))
    }

    /// Makes a bucket, retrying while JetStream has no leader yet (no responders, or "temporarily unavailable").
    private func bucket(_ name: String, _ client: TestClient, replicas: Int = 1) async throws -> KeyValueBucket {
        let deadline = Date().addingTimeInterval(20)
        while true {
            do {
                return try await KeyValueBucket.create(
                    KeyValueConfiguration(bucket: name, replicas: replicas, maxBytes: 1 << 20), client: client.client)
            } catch {
                // (A `catch` with an enum pattern on a typed error crashes the 6.3 compiler's SILGen.)
                let transient: Bool
                switch error {
                case .client(.noResponders), .api(_, 10008, _): transient = true
                default: transient = false
                }
                guard transient && Date() < deadline else { throw error }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    func testCreatePutGetUpdateWithRightAndWrongRevisionAndDelete() async throws {
        let (_, client) = try jetStream()
        let numbers = try await bucket("subd_numbers", client)

        let created = try await numbers.create("SCIENCE", Array("plain".utf8))
        do {
            _ = try await numbers.create("SCIENCE", Array("retained".utf8))
            XCTFail("a second create of the same key must fail")
        } catch {
            XCTAssertEqual(error, .wrongLastSequence(current: created))
        }
        var entry = try await numbers.get("SCIENCE")
        XCTAssertEqual(entry?.value, Array("plain".utf8))
        XCTAssertEqual(entry?.revision, created)
        XCTAssertEqual(entry?.operation, .put)

        let headers: NATSHeaders = ["Subd-From": "lab", "Subd-Info": "unit=EUR"]
        let updated = try await numbers.update(
            "SCIENCE", Array("retained".utf8), expectedRevision: created, headers: headers)
        XCTAssertGreaterThan(updated, created)
        do {
            _ = try await numbers.update("SCIENCE", Array("stale".utf8), expectedRevision: created)
            XCTFail("an update at a stale revision must fail")
        } catch {
            XCTAssertEqual(error, .wrongLastSequence(current: updated))
        }
        entry = try await numbers.getLatest("SCIENCE")
        XCTAssertEqual(entry?.value, Array("retained".utf8))
        XCTAssertEqual(entry?.revision, updated)
        XCTAssertEqual(entry?.headers, headers, "the writer's headers, without JetStream's own")

        let put = try await numbers.put("OTHER", Array("x".utf8))
        XCTAssertGreaterThan(put, updated)
        let deleted = try await numbers.delete("SCIENCE", expectedRevision: updated)
        let afterDelete = try await numbers.get("SCIENCE")
        XCTAssertNil(afterDelete)
        let marker = try await numbers.getLatest("SCIENCE", includingDeletes: true)
        XCTAssertEqual(marker?.operation, .delete)
        XCTAssertEqual(marker?.revision, deleted)
        // A create replaces a delete marker.
        let recreated = try await numbers.create("SCIENCE", Array("again".utf8))
        XCTAssertGreaterThan(recreated, deleted)
        let missing = try await numbers.get("NEVER")
        XCTAssertNil(missing)
        do {
            _ = try await numbers.put("bad key", [])
            XCTFail("a key with a space must be refused")
        } catch {
            XCTAssertEqual(error, .invalidKey("bad key"))
        }
    }

    func testBucketsAreFoundAgainAndConflictsAreTyped() async throws {
        let (_, client) = try jetStream()
        _ = try await bucket("b", client)
        let again = try await bucket("b", client)
        XCTAssertEqual(again.updatesSubjectPrefix, "subd.kv.b.")
        let opened = try await KeyValueBucket.open("b", client: client.client)
        XCTAssertEqual(opened.updatesSubjectPrefix, "subd.kv.b.")
        do {
            _ = try await KeyValueBucket.create(
                KeyValueConfiguration(bucket: "b", storage: .memory), client: client.client)
            XCTFail("another configuration under the same name must fail")
        } catch {
            guard case .streamNameInUse = error else { return XCTFail("\(error)") }
        }
        do {
            _ = try await KeyValueBucket.open("missing", client: client.client)
            XCTFail("no such bucket")
        } catch {
            XCTAssertEqual(error, .streamNotFound)
        }
        do {
            _ = try await KeyValueBucket.open("no.dots", client: client.client)
            XCTFail("invalid name")
        } catch {
            XCTAssertEqual(error, .invalidBucketName("no.dots"))
        }
    }

    func testOfConcurrentCreatesFromTwoClientsExactlyOneWins() async throws {
        let (server, first) = try jetStream()
        let second = try connectedClient([server.address], label: "second")
        let a = try await bucket("race", first)
        let b = try await KeyValueBucket.open("race", client: second.client)
        for round in 0..<10 {
            async let one = Self.attempt(a, "N\(round)", [1])
            async let two = Self.attempt(b, "N\(round)", [2])
            let results = await [one, two]
            XCTAssertEqual(results.filter { (try? $0.get()) != nil }.count, 1, "round \(round): \(results)")
            XCTAssertEqual(
                results.filter { if case .failure(.wrongLastSequence) = $0 { true } else { false } }.count, 1)
        }
    }

    func testRequestsWithoutJetStreamFailWithNoResponders() async throws {
        let server = try startServer()
        let client = try connectedClient([server.address])
        do {
            _ = try await KeyValueBucket.create(
                KeyValueConfiguration(bucket: "b"), client: client.client,
                timeout: .seconds(2))
            XCTFail("no JetStream")
        } catch {
            XCTAssertEqual(error, .client(.noResponders))
        }
    }

    private static func attempt(_ bucket: KeyValueBucket, _ key: String, _ value: [UInt8]) async -> Result<
        UInt64, JetStreamError
    > {
        do {
            return .success(try await bucket.create(key, value))
        } catch {
            return .failure(error)
        }
    }
}
