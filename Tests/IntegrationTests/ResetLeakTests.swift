import Foundation
import Glibc
import XCTest

/// A client that goes away in the middle of a command, by RST (SO_LINGER 0), FIN or half-close, leaves nothing
/// behind in subd: no session counted in STATS `connections`, no max_connections slot, no subscription, no open
/// descriptor; and its end is counted once under its STATS `closed_*` reason.
final class ResetLeakTests: IntegrationTestCase {
    /// The three ways a command can be cut short, as the bytes a client sent of it: an incomplete line, half a PUB
    /// line (no LF), and a whole PUB line with half of its payload.
    private static func partialCommands(to number: String) -> [(name: String, bytes: [UInt8])] {
        [
            ("an incomplete line", Array("PIN".utf8)),
            ("half a PUB line", Array("PUB \(number) 10".utf8)),
            (
                "a PUB line and half its payload",
                Array("PUB \(number) 1000\n".utf8) + [UInt8](repeating: UInt8(ascii: "p"), count: 500)
            ),
        ]
    }

    /// Regression for the reset leak: with max_connections 50, 1,000 clients each connect, send part of a command
    /// (cycling through the three kinds) and reset the connection, up to 40 open at once. subd kept every reset
    /// session of one kind (333 of 333 in the debug build) until each new client was refused with -ERR LIMIT.
    ///
    /// Afterwards only the checking client is counted, a new client is served, subd's descriptors are back near
    /// where they were, and every storm client is counted once: under closed_reset, or under refused_connections
    /// when it came while subd was still cleaning up (such a client is reset like the others).
    func testThousandClientsResetMidCommandLeaveNoSessionBehind() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["X"], maxConnections: 50))
        let checker = try connect(daemon, "checker")
        assertOpen(checker)
        let before = try stats(checker)
        let descriptorsBefore = try openDescriptorCount(of: daemon.child.pid)

        let kinds = Self.partialCommands(to: "X")
        let total = 1000
        let batchSize = 40
        var refusedAtHandshake = 0
        for batchStart in stride(from: 0, to: total, by: batchSize) {
            // Every other batch first waits for each client's PONG, so subd surely serves all 40 sessions, each
            // holding a partial command, when they reset; the other batches reset at once, so the RST may arrive
            // with the bytes, even before subd accepted the connection.
            let handshake = (batchStart / batchSize) % 2 == 0
            var batch: [LineClient] = []
            for index in batchStart..<min(total, batchStart + batchSize) {
                // A generous read timeout: a debug subd on a busy machine may take seconds to get through a batch.
                let client = try LineClient.connect(port: daemon.port, label: "storm client \(index)", timeout: 30)
                batch.append(client)
                guard handshake else { continue }
                do {
                    let reply = try client.command("PING")
                    if reply.errorCode == "LIMIT" {
                        refusedAtHandshake += 1
                    } else if reply != .status("PONG") {
                        XCTFail("storm client \(index): PING answered \(reply)")
                    }
                } catch {
                    XCTFail("storm client \(index): PING got no reply: \(error)")
                }
            }
            for (offset, client) in batch.enumerated() {
                // A refused client may find the connection closed already; it is reset all the same.
                try? client.send(kinds[(batchStart + offset) % kinds.count].bytes)
            }
            for client in batch { client.reset() }
        }

        try eventually("STATS connections back to 1 (only the checker)", timeout: 10) {
            try stats(checker)["connections"] == "1"
        }
        XCTAssertEqual(
            try stats(checker)["connections"], "1",
            "sessions still held after \(total) clients reset mid-command (max_connections 50)")
        try assertNewClientServed(daemon, number: "AFTER")
        try eventually("subd's descriptors back to at most \(descriptorsBefore) + 5", timeout: 5) {
            try openDescriptorCount(of: daemon.child.pid) <= descriptorsBefore + 5
        }
        let descriptorsAfter = try openDescriptorCount(of: daemon.child.pid)
        XCTAssertLessThanOrEqual(
            descriptorsAfter, descriptorsBefore + 5,
            "subd had \(descriptorsBefore) descriptors open before the storm and \(descriptorsAfter) after it")

        let after = try stats(checker)
        guard let resetBefore = counter(before, "closed_reset"), let resetAfter = counter(after, "closed_reset"),
            let refusedBefore = counter(before, "refused_connections"),
            let refusedAfter = counter(after, "refused_connections")
        else { return }
        let (reset, refused) = (resetAfter - resetBefore, refusedAfter - refusedBefore)
        XCTAssertGreaterThan(reset, 0, "STATS closed_reset did not grow")
        XCTAssertEqual(
            reset + refused, total,
            "each storm client is counted once: \(reset) as closed_reset, \(refused) as refused_connections")
        XCTAssertGreaterThanOrEqual(
            refused, refusedAtHandshake, "\(refusedAtHandshake) clients read -ERR LIMIT before they reset")
    }

    /// A subscriber with megabytes of pushes queued that it never read resets: its session, subscription and
    /// descriptor are released, the next SEND does not count it, and STATS closed_reset counts it once.
    func testSubscriberWithUnreadPushesThatResetsIsReleased() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let publisher = try connect(daemon, "publisher")
        assertOpen(publisher)
        let descriptorsBefore = try openDescriptorCount(of: daemon.child.pid)
        let before = try stats(publisher)

        let subscriber = try connect(daemon, "subscriber", receiveBuffer: 4096)
        try subscribe(subscriber, "N")
        // 8 MiB the subscriber never reads: far more than the kernel buffers, far less than max_pending (32 MiB).
        let payload = [UInt8](repeating: UInt8(ascii: "m"), count: 64 * 1024)
        for index in 0..<128 {
            XCTAssertEqual(try publisher.pub("N", payload), .ok("1"), "PUB \(index) reaches the subscriber")
        }
        subscriber.reset()

        try eventually("STATS connections back to 1 (only the publisher)") {
            try stats(publisher)["connections"] == "1"
        }
        XCTAssertEqual(try publisher.command("SEND N after"), .ok("0"), "the reset subscriber is not counted")
        let after = try stats(publisher)
        XCTAssertEqual(after["subscriptions"], "0", "the reset subscriber's subscription is gone")
        try eventually("subd's descriptors back to \(descriptorsBefore)") {
            try openDescriptorCount(of: daemon.child.pid) <= descriptorsBefore
        }
        assertCounter("closed_reset", grewBy: 1, from: before, to: after, "a subscriber reset with unread pushes")
    }

    /// A client that closes cleanly (FIN) in the middle of a command, once for each kind of partial command: every
    /// session is released, the cut-short PUB delivers nothing, and STATS closed_client counts each once.
    func testCleanCloseMidCommandReleasesTheSession() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let checker = try connect(daemon, "checker")
        try subscribe(checker, "N")
        let descriptorsBefore = try openDescriptorCount(of: daemon.child.pid)
        let before = try stats(checker)

        let kinds = Self.partialCommands(to: "N")
        for kind in kinds {
            let client = try connect(daemon, "client that closes after \(kind.name)")
            try subscribe(client, "N")
            try client.send(kind.bytes)
            client.close()
        }

        try assertOnlyTheCheckerIsLeft(
            checker, daemon: daemon, descriptorsBefore: descriptorsBefore, statsBefore: before,
            closedClients: kinds.count, "closed mid-command")
    }

    /// A client that sends complete commands, then part of one, then shuts down its write side (half-close): subd
    /// answers the complete commands, then closes the connection (the client reads EOF), drops the partial command
    /// and releases the session; STATS closed_client counts it. Once for each kind of partial command.
    func testHalfCloseMidCommandIsAnsweredThenClosed() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let checker = try connect(daemon, "checker")
        try subscribe(checker, "N")
        let descriptorsBefore = try openDescriptorCount(of: daemon.child.pid)
        let before = try stats(checker)

        let kinds = Self.partialCommands(to: "N")
        for kind in kinds {
            let client = try connect(daemon, "client that half-closes after \(kind.name)")
            try client.send(Array("SUB N\nPING\n".utf8) + kind.bytes)
            try client.shutdownWrite()
            XCTAssertEqual(try client.readReply(), .ok(), "SUB sent before the half-close (\(kind.name))")
            XCTAssertEqual(try client.readReply(), .status("PONG"), "PING sent before the half-close (\(kind.name))")
            XCTAssertNoThrow(try client.expectClosed(), "subd ends the connection after the replies (\(kind.name))")
            client.close()
        }

        try assertOnlyTheCheckerIsLeft(
            checker, daemon: daemon, descriptorsBefore: descriptorsBefore, statsBefore: before,
            closedClients: kinds.count, "half-closed mid-command")
    }

    /// After clients that closed (`how`) with partial commands: only `checker` is left (STATS, the one receiver of a
    /// SEND), no cut-short PUB was delivered, subd's descriptors are back, and `closed_client` counts each client.
    private func assertOnlyTheCheckerIsLeft(
        _ checker: LineClient, daemon: Daemon, descriptorsBefore: Int, statsBefore: [String: String],
        closedClients: Int, _ how: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        try eventually("STATS connections back to 1 (only the checker)", file: file, line: line) {
            try stats(checker)["connections"] == "1"
        }
        XCTAssertEqual(
            try checker.pushesBeforePing(), [], "a PUB cut short (\(how)) delivered something", file: file, line: line)
        XCTAssertEqual(
            try checker.command("SEND N after"), .ok("1"), "only the checker is subscribed", file: file, line: line)
        XCTAssertEqual(try checker.nextMessage(), Message("N", text: "after"), file: file, line: line)
        try eventually("subd's descriptors back to \(descriptorsBefore)", file: file, line: line) {
            try openDescriptorCount(of: daemon.child.pid) <= descriptorsBefore
        }
        assertCounter(
            "closed_client", grewBy: closedClients, from: statsBefore, to: try stats(checker),
            "\(closedClients) clients \(how)", file: file, line: line)
    }

    // MARK: - Helpers

    /// A client connected now is served: PING, then CREATE, SUB and a SEND to `number` that reaches it alone.
    private func assertNewClientServed(
        _ daemon: Daemon, number: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let fresh = try connect(daemon, "new client")
        let reply: Reply
        do {
            reply = try fresh.command("PING")
        } catch {
            return XCTFail("a new client is not served: \(error)", file: file, line: line)
        }
        guard reply == .status("PONG") else {
            return XCTFail("a new client is not served: PING answered \(reply)", file: file, line: line)
        }
        try create(fresh, number, file: file, line: line)
        try subscribe(fresh, number, file: file, line: line)
        XCTAssertEqual(
            try fresh.command("SEND \(number) hello"), .ok("1"), "SEND to its own number",
            file: file, line: line)
        XCTAssertEqual(try fresh.nextMessage(), Message(number, text: "hello"), file: file, line: line)
    }
}
