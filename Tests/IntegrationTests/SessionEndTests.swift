import Glibc
import XCTest

/// A session that ends, for any reason, is no longer subscribed: no later `+OK <receivers>` counts it.
final class SessionEndTests: IntegrationTestCase {
    func testClosedSubscriberIsNoLongerCounted() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N", "M.x"]))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N", "M.*", ">")
        XCTAssertEqual(try publisher.command("SEND N before"), .ok("1"))
        subscriber.close()
        // The server learns of the close asynchronously: wait until LIST no longer counts the session.
        try eventually("LIST shows N with 0 subscribers") { try listCounts(publisher)["N"] == 0 }
        XCTAssertEqual(try publisher.command("SEND N after"), .ok("0"))
        XCTAssertEqual(try publisher.command("SEND M.x after"), .ok("0"), "its wildcard subscriptions are gone too")
        let values = try stats(publisher)
        XCTAssertEqual(values["connections"], "1")
        XCTAssertEqual(values["subscriptions"], "0")
    }

    func testClosedSubscriberWithUnreadMessagesIsNoLongerCounted() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N")
        for index in 0..<100 { XCTAssertEqual(try publisher.command("SEND N unread \(index)"), .ok("1")) }
        subscriber.close()
        try eventually("LIST shows N with 0 subscribers") { try listCounts(publisher)["N"] == 0 }
        XCTAssertEqual(try publisher.command("SEND N after"), .ok("0"))
    }

    func testSubscriberThatQuitIsNotCountedByTheNextPub() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N", ">")
        XCTAssertEqual(try subscriber.command("QUIT"), .ok("bye"))
        try subscriber.expectClosed()
        // The server itself ended this session before closing it: no polling needed.
        XCTAssertEqual(try publisher.command("SEND N after quit"), .ok("0"))
        XCTAssertEqual(try listCounts(publisher), ["N": 0])
    }

    func testSubscriberClosedForTooBigIsNotCountedByTheNextPub() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"], maxLine: 1024))
        let subscriber = try connect(daemon, "subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N")
        try subscriber.sendLine("PING " + String(repeating: "x", count: 2048))
        assertError(try subscriber.readReply(), "TOOBIG")
        try subscriber.expectClosed()
        XCTAssertEqual(try publisher.command("SEND N after"), .ok("0"))
    }

    /// Regression: a subscriber that half-closed (FIN) while megabytes of pushes were still queued for it made subd
    /// read EOF again on every turn (an ended socket stays readable) until the output drained or the 5 s close
    /// deadline passed: a whole core, for every such client. subd now stops reading it and waits for the output.
    func testPeerThatHalfClosesWithOutputQueuedDoesNotSpinTheLoop() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["N"]))
        let subscriber = try connect(daemon, "subscriber", receiveBuffer: 4096)
        let publisher = try connect(daemon, "publisher")
        try subscribe(subscriber, "N")
        let payload = [UInt8](repeating: UInt8(ascii: "p"), count: 1000)
        for _ in 0..<40 {
            var batch: [UInt8] = []
            for _ in 0..<100 { batch += Array("PUB N 1000\n".utf8) + payload + [0x0A] }
            try publisher.send(batch)
            for _ in 0..<100 { XCTAssertEqual(try publisher.readReply(), .ok("1")) }
        }
        // 4 MB queued for a subscriber that reads nothing; now it closes its side.
        try subscriber.shutdownWrite()
        Thread.sleep(forTimeInterval: 0.3)
        let before = try cpuSeconds(of: daemon.child.pid)
        Thread.sleep(forTimeInterval: 2)
        let used = try cpuSeconds(of: daemon.child.pid) - before
        XCTAssertLessThan(used, 0.5, "subd used \(used) s of CPU in 2 s with nothing to do but wait for the subscriber")
        assertOpen(publisher)
    }

    /// User plus system CPU time of a process, in seconds (/proc/PID/stat).
    private func cpuSeconds(of pid: Int32) throws -> Double {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.index(after: try XCTUnwrap(stat.lastIndex(of: ")")))...].split(separator: " ")
        let ticks = try XCTUnwrap(Double(fields[11])) + XCTUnwrap(Double(fields[12]))
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
