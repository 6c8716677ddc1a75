import XCTest

/// After `-ERR TOOBIG` the server closes the connection; once the client closes too, the session must be gone at
/// once: not counted in STATS `connections`, not holding a max_connections slot, not delaying shutdown.
final class TooBigReleaseTests: IntegrationTestCase {
    /// Sends `bytes` (ignoring a failed send: the server may close first), expects `-ERR TOOBIG` and the close,
    /// closes the client, then checks the server lets go of the connection within 4 s (it learns of the close
    /// asynchronously, so this polls; 4 s is far more than it needs, even on a loaded machine, and still under the
    /// 5 s the bug took).
    private func assertReleasedAfterTooBig(_ bytes: [UInt8], file: StaticString = #filePath, line: UInt = #line)
        throws
    {
        let daemon = try startDaemon(DaemonConfig(numbers: ["BIG"], maxConnections: 2))
        let offender = try connect(daemon, "offender")
        try? offender.send(bytes)
        assertError(try offender.readReply(), "TOOBIG", "", file: file, line: line)
        try offender.expectClosed(discardingData: false)
        offender.close()
        let observer = try connect(daemon, "observer")
        try eventually("STATS connections is 1 (only the observer)", timeout: 4, file: file, line: line) {
            try stats(observer)["connections"] == "1"
        }
        let another = try connect(daemon, "another")
        XCTAssertEqual(
            try another.command("PING"), .status("PONG"), "max_connections 2: the slot is free again",
            file: file, line: line)
    }

    /// Regression: when the client had sent the oversized payload after the header, subd kept the connection
    /// (counted, holding a max_connections slot, delaying SIGTERM) for about 5 s after the client closed.
    func testConnectionRefusedForOversizedPayloadIsReleasedWhenClientCloses() throws {
        let payload = [UInt8](repeating: 0x41, count: (1 << 20) + 1)
        try assertReleasedAfterTooBig(Array("PUB BIG \(payload.count)\n".utf8) + payload + [0x0A])
    }

    /// Regression: the same for a line over max_line followed by more bytes.
    func testConnectionRefusedForOverlongLineIsReleasedWhenClientCloses() throws {
        try assertReleasedAfterTooBig(Array("PING ".utf8) + [UInt8](repeating: 0x78, count: 1 << 20))
    }

    func testConnectionRefusedForOversizedPayloadHeaderAloneIsReleasedWhenClientCloses() throws {
        try assertReleasedAfterTooBig(Array("PUB BIG \((1 << 20) + 1)\n".utf8))
    }
}
