import TestSupport
import XCTest

@testable import SubscriptionNATS

/// A server that goes away and comes back: the client reconnects, restores its subscriptions, and sends what was
/// published meanwhile once.
final class NATSReconnectTests: NATSTestCase {
    private let fast = NATSClientOptions(reconnectWait: .milliseconds(100))

    func testAServerKilledAndRestartedOnTheSamePortGetsTheSubscriptionsAgain() throws {
        let first = try startServer()
        let client = try connectedClient([first.address], options: fast, label: "client")
        let (_, plain) = try client.subscribe("orders.>")
        let (_, grouped) = try client.subscribe("jobs", queue: "workers")
        let (limited, _) = try client.subscribe("once")
        client.sync { $0.unsubscribe(limited, after: 1) }
        client.flush()

        first.kill()
        XCTAssertNotNil(client.statuses.wait(for: { if case .disconnected = $0 { true } else { false } }))
        // Held while disconnected, sent once after the reconnect (echo is on: the client's own subscription sees it).
        try client.publish("orders.held", "published while disconnected")
        let flushed = Collector<Result<Void, NATSError>>()
        client.sync { $0.flush { flushed.append($0) } }
        XCTAssertEqual(
            flushed.wait(count: 1)?.first.map { if case .failure(.notConnected) = $0 { true } else { false } }, true)

        let second = try startServer(.init(port: first.port))
        XCTAssertTrue(
            client.statuses.wait(untilAll: { $0.filter(isConnected).count == 2 }),
            "\(client.statuses.all) \(client.errors.all)")
        client.flush()
        XCTAssertEqual(plain.wait(count: 1)?.map(text), ["published while disconnected"])

        let other = try connectedClient([second.address], label: "other")
        try other.publish("orders.new", "after the restart")
        try other.publish("jobs", "a job")
        other.flush()
        XCTAssertEqual(plain.wait(count: 2)?.map(text), ["published while disconnected", "after the restart"])
        XCTAssertEqual(grouped.wait(count: 1)?.map(text), ["a job"])
        // The server has exactly the subscriptions the client holds (the limited one is gone).
        let (_, echo) = try other.subscribe("orders.>")
        other.flush()
        try other.publish("once", "x")
        other.flush()
        client.flush()
        XCTAssertEqual(plain.all.count, 2, "the held publication came once")
        XCTAssertEqual(echo.all.count, 0)
    }

    func testPublicationsWhileDisconnectedAreBounded() throws {
        let server = try startServer()
        var options = fast
        options.maxPendingBytes = 4096
        let client = try connectedClient([server.address], options: options)
        server.kill()
        XCTAssertNotNil(client.statuses.wait(for: { if case .disconnected = $0 { true } else { false } }))
        let payload = [UInt8](repeating: 7, count: 1000)
        var accepted = 0
        var refusal: NATSError?
        for _ in 0..<10 {
            do {
                try client.sync { try $0.publish(subject: "x", payload: payload) }
                accepted += 1
            } catch {
                refusal = error as? NATSError
                break
            }
        }
        XCTAssertEqual(accepted, 3)
        XCTAssertEqual(refusal, .outboundBufferFull(limit: 4096))
        XCTAssertLessThanOrEqual(client.sync { $0.pendingByteCount }, 4096)
    }

    func testAClosedClientRefusesWorkAndStopsReconnecting() throws {
        let server = try startServer()
        let client = try connectedClient([server.address], options: fast)
        client.sync { $0.close() }
        XCTAssertEqual(client.statuses.all.last, .closed(reason: nil))
        XCTAssertThrowsError(try client.publish("x", "y")) { XCTAssertEqual($0 as? NATSError, .closed) }
        let flushed = Collector<Result<Void, NATSError>>()
        client.sync { $0.flush { flushed.append($0) } }
        XCTAssertEqual(
            flushed.wait(count: 1)?.first.map { if case .failure(.closed) = $0 { true } else { false } }, true)
        server.kill()
        usleep(300_000)
        XCTAssertEqual(client.statuses.all.count, 2, "no reconnect after close: \(client.statuses.all)")
    }

    /// Completions run user code, which may call the client again: no completion is called while the client is
    /// inside its own request table or flush list (an exclusivity violation in debug builds).
    func testCompletionsThatCallTheClientAgainWhenItCloses() throws {
        let server = try startServer()
        let client = try connectedClient([server.address])
        let outcomes = Collector<String>()
        client.sync { nats in
            nats.request(subject: "nobody.listens.but.times.out.late", payload: [], timeout: .seconds(30)) { first in
                outcomes.append("request: \(first)")
                nats.request(subject: "again", payload: []) { second in outcomes.append("nested request: \(second)") }
            }
            nats.flush { first in
                outcomes.append("flush")
                nats.flush { second in outcomes.append("nested flush: \(second)") }
            }
        }
        XCTAssertNotNil(outcomes.wait(count: 2), "\(outcomes.all)")  // the first request (no responders), the flush
        client.sync { nats in
            nats.request(subject: "pending", payload: [], timeout: .seconds(30)) { result in
                outcomes.append("pending: \(result)")
                nats.request(subject: "after.close", payload: []) { outcomes.append("after close: \($0)") }
            }
            nats.close()
        }
        let all = try XCTUnwrap(outcomes.wait(count: 6), "\(outcomes.all)")
        XCTAssertTrue(all.contains("pending: failure(the client is closed)"), "\(all)")
        XCTAssertTrue(all.contains("after close: failure(the client is closed)"), "\(all)")
    }
}
