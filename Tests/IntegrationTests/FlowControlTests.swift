import Foundation
import XCTest

/// A client that pipelines commands without reading the replies is slowed down (subd stops reading it), not cut
/// off and not buffered without bound; everyone else goes on.
final class FlowControlTests: IntegrationTestCase {
    func testClientThatNeverReadsRepliesIsPausedWithBoundedMemory() throws {
        let daemon = try startDaemon()
        let other = try connect(daemon, "other client")
        XCTAssertEqual(try other.command("PING"), .status("PONG"))
        let baseline = try residentBytes(of: daemon)

        // 24,000 PINGs with 1,000-byte texts: 24 MB of replies, far more than the kernel buffers hold.
        let greedy = try connect(daemon, "greedy client", timeout: 30, receiveBuffer: 4096)
        let text = String(repeating: "x", count: 1000)
        let commands = 24_000
        let chunk = Array(String(repeating: "PING \(text)\n", count: 100).utf8)
        let written = Counter()
        let writer = Background("greedy writer") {
            defer { written.end() }
            for _ in 0..<(commands / 100) {
                try greedy.send(chunk)
                written.add(100)
            }
        }

        // Wait until the writer stalls: subd stopped reading it because its replies are not being read.
        var last = -1
        let deadline = Date().addingTimeInterval(20)
        while written.current != last && written.current < commands && Date() < deadline {
            last = written.current
            Thread.sleep(forTimeInterval: 0.3)
        }
        XCTAssertLessThan(written.current, commands, "subd read all input although no reply was read")
        let grown = try residentBytes(of: daemon) - baseline
        XCTAssertLessThan(grown, 16 << 20, "subd grew by \(grown) bytes for one client that does not read")
        XCTAssertEqual(try other.command("PING still here"), .status("PONG still here"), "others are unaffected")

        // Now read everything: every reply is there, in order, and the writer finishes.
        for index in 0..<commands {
            let reply = try greedy.readReply()
            guard reply == .status("PONG \(text)") else { return XCTFail("reply \(index) is \(reply)") }
        }
        try writer.wait(timeout: 30)
        XCTAssertEqual(try stats(other)["slow_consumers"], "0", "a client slowed by its own replies is not cut off")
    }

    /// subd's resident memory in bytes (VmRSS).
    private func residentBytes(of daemon: Daemon) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(daemon.child.pid)/status", encoding: .utf8)
        let line = try XCTUnwrap(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        let kilobytes = try XCTUnwrap(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
        return kilobytes * 1024
    }
}
