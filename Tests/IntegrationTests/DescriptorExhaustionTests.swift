import Foundation
import XCTest

/// Out of descriptors, subd pauses accepting instead of spinning, and accepts again once descriptors are free.
final class DescriptorExhaustionTests: IntegrationTestCase {
    /// Regression: with the open-file limit reached, accept(2) failed with EMFILE, the listener stayed readable and
    /// the loop retried at once: about 400,000 warning lines in 10 s and a busy event loop.
    func testRunningOutOfDescriptorsPausesAcceptingAndRecovers() throws {
        let daemon = try startDaemon(shellPrefix: "ulimit -n 48")
        let first = try connect(daemon, "first")
        assertOpen(first)
        var clients: [LineClient] = []
        // More connections than descriptors: the kernel completes them, subd cannot accept the last ones.
        for index in 0..<60 { clients.append(try connect(daemon, "client \(index)")) }
        try daemon.child.stderr.waitFor(substring: "accept failed", timeout: 5)
        Thread.sleep(forTimeInterval: 1.5)
        let warnings = daemon.log.components(separatedBy: "accept failed").count - 1
        XCTAssertLessThanOrEqual(warnings, 12, "one warning per 250 ms pause at most, not a spin")
        XCTAssertEqual(try first.command("PING busy?"), .status("PONG busy?"), "the loop still serves")
        XCTAssertGreaterThanOrEqual(Int(try stats(first)["accept_failures"] ?? "") ?? 0, 1)

        // Free descriptors: the waiting connections are accepted and served.
        for client in clients.prefix(30) { client.close() }
        let last = try XCTUnwrap(clients.last)
        XCTAssertEqual(try last.command("PING served"), .status("PONG served"))
    }
}
