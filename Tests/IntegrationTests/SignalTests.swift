import Foundation
import Glibc
import XCTest

/// SIGTERM and SIGINT: subd stops, flushes pending output (5 s deadline) and exits 0.
final class SignalTests: IntegrationTestCase {
    func testSigtermClosesClientsAndExitsZeroOnceTheyClose() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let subscriber = try connect(daemon, "subscriber")
        let idle = try connect(daemon, "idle")
        try subscribe(subscriber, "N")
        assertOpen(idle)
        let start = Date()
        daemon.child.send(signal: SIGTERM)
        // Like every real client: read to the end, then close.
        for client in [subscriber, idle] {
            try client.expectClosed()
            client.close()
        }
        XCTAssertEqual(daemon.stop(signal: nil), 0, "subd log:\n\(daemon.log)")
        let elapsed = Date().timeIntervalSince(start)
        // Waiting for the 5 s flush deadline would take at least 5 s from the signal; 4.5 s leaves room for load.
        XCTAssertLessThan(elapsed, 4.5, "nothing was pending and the clients closed, yet exit took \(elapsed) s")
    }

    /// Regression: a SIGTERM right after the listening line killed subd (exit 143) or was lost (no exit), because
    /// libdispatch arms its signal sources asynchronously.
    func testSigtermRightAfterStartUpIsAlwaysAGracefulStop() throws {
        for round in 0..<10 {
            let daemon = try startDaemon()
            XCTAssertEqual(daemon.stop(signal: SIGTERM, timeout: 10), 0, "round \(round); subd log:\n\(daemon.log)")
        }
    }

    func testSigintExitsZero() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        assertOpen(client)
        daemon.child.send(signal: SIGINT)
        try client.expectClosed()
        client.close()
        XCTAssertEqual(daemon.stop(signal: nil), 0, "subd log:\n\(daemon.log)")
    }

    func testSigtermExitsZeroWithinTheDeadlineWhenAClientNeverCloses() throws {
        let daemon = try startDaemon()
        let stubborn = try connect(daemon, "stubborn")
        assertOpen(stubborn)
        // The client neither reads nor closes; the 5 s drain deadline bounds the exit (10 s allowed).
        XCTAssertEqual(daemon.stop(signal: SIGTERM, timeout: 10), 0, "subd log:\n\(daemon.log)")
        try stubborn.expectClosed()
    }

    func testSigtermFlushesPendingOutputToSubscribers() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        // A small receive buffer keeps most of the backlog on the server side until the subscriber reads.
        let subscriber = try connect(daemon, "subscriber", receiveBuffer: 4096)
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N")
        let count = 300
        let payload = [UInt8](repeating: UInt8(ascii: "p"), count: 2000)
        var batch: [UInt8] = []
        for _ in 0..<count { batch += Array("PUB N \(payload.count)\n".utf8) + payload + [0x0A] }
        try publisher.send(batch)
        for index in 0..<count { XCTAssertEqual(try publisher.readReply(), .ok("1"), "PUB \(index)") }
        daemon.child.send(signal: SIGTERM)
        try publisher.expectClosed()
        publisher.close()
        for index in 0..<count {
            let message = try subscriber.nextMessage()
            XCTAssertEqual(message.payload.count, payload.count, "message \(index)")
        }
        try subscriber.expectClosed()
        subscriber.close()
        XCTAssertEqual(daemon.stop(signal: nil), 0, "subd log:\n\(daemon.log)")
    }
}
