import XCTest

/// `subd --unix PATH` serves the same protocol on a Unix stream socket.
final class UnixSocketTests: IntegrationTestCase {
    func testUnixSocketServesTheProtocolAlongsideTCP() throws {
        let daemon = try startDaemon(unixSocket: true)
        let local = try connectUnix(daemon, "unix subscriber")
        let remote = try connect(daemon, "tcp publisher")
        guard case .status(let hello) = try local.command("HELLO name=local"), hello.hasPrefix("OK subd ") else {
            return XCTFail("HELLO over the Unix socket")
        }
        try create(local, "U")
        try subscribe(local, "U")
        XCTAssertEqual(try remote.command("SEND U over tcp"), .ok("1"))
        XCTAssertEqual(try local.nextMessage().text, "over tcp")
        try subscribe(remote, "U")
        XCTAssertEqual(try local.pub("U", [0, 10, 255]), .ok("2"))
        XCTAssertEqual(try remote.nextMessage(), Message("U", [0, 10, 255], from: "local"))
        XCTAssertEqual(try local.nextMessage().payload, [0, 10, 255])
        XCTAssertEqual(try local.command("QUIT"), .ok("bye"))
        try local.expectClosed()
    }

    func testSubctlTalksOverUnixSocket() throws {
        let daemon = try startDaemon(unixSocket: true)
        let server = "unix:\(try XCTUnwrap(daemon.unixPath))"
        let created = try Subctl.run(["create", "--server", server, "LOCAL"])
        XCTAssertEqual(created.lines, ["created LOCAL"], "\(created)")
        let listener = try Subctl.listen(server: server, ["LOCAL"])
        defer { listener.child.kill9IfRunning() }
        let published = try Subctl.run(["publish", "--server", server, "LOCAL", "via unix"])
        XCTAssertEqual(published.lines, ["published to 1 receiver"], "\(published)")
        XCTAssertEqual(try listener.readTextLine(), "via unix")
        XCTAssertEqual(listener.stop(), 0)
    }
}
