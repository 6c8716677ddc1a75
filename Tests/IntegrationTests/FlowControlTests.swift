import Foundation
import XCTest

/// A client that pipelines commands without reading the replies is slowed down (subd stops reading it), not cut
/// off and not buffered without bound; everyone else goes on.
final class FlowControlTests: IntegrationTestCase {
    func testClientThatNeverReadsRepliesIsPausedWithBoundedMemory() throws {
        let daemon = try startDaemon()
        let other = try connect(daemon, "other client")
        XCTAssertEqual(try other.command("PING"), .status("PONG"))
        let baseline = try residentBytes(of: daemon.child.pid)

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
        let grown = try residentBytes(of: daemon.child.pid) - baseline
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

    /// Regression: the pause was checked once per read, after every command in it had run, so a few bytes of
    /// pipelined LISTs (each a reply of hundreds of KB) grew subd by hundreds of MB and stalled other clients.
    /// Also checks that commands left in the buffer at the pause run when it lifts, with no new bytes arriving.
    func testSmallCommandsWithHugeRepliesArePausedMidRead() throws {
        let daemon = try startDaemon(DaemonConfig(maxNumbers: 5000))
        let setup = try connect(daemon, "setup", timeout: 30)
        let numbers = (0..<1000).map { "big." + String(repeating: "n", count: 180) + String(format: "%05d", $0) }
        try setup.send(Array(numbers.map { "CREATE \($0)\n" }.joined().utf8))
        for _ in numbers { XCTAssertEqual(try setup.readReply(), .ok("created")) }
        let baseline = try residentBytes(of: daemon.child.pid)

        let lists = 200  // 1,000 bytes asking for about 38 MB of replies
        let greedy = try connect(daemon, "greedy client", timeout: 30, receiveBuffer: 4096)
        try greedy.send(Array(String(repeating: "LIST\n", count: lists).utf8))
        // Another client is answered at once, and by then subd has stopped at the pause mark.
        XCTAssertEqual(try setup.command("PING"), .status("PONG"))
        XCTAssertEqual(try setup.command("PING"), .status("PONG"))
        let grown = try residentBytes(of: daemon.child.pid) - baseline
        XCTAssertLessThan(grown, 16 << 20, "subd grew by \(grown) bytes for \(lists) unread LISTs")

        let expected = numbers.sorted().map { "\($0) 0" }
        for index in 0..<lists {
            let reply = try greedy.readReply()
            guard reply == .list(expected) else { return XCTFail("LIST \(index) answered \(reply)") }
        }
    }
}
