import Foundation
import Glibc
import XCTest

/// Socket activation through `systemd-socket-activate` (from the systemd package): subd serves on the sockets it is
/// passed and binds none of its own.
final class SocketActivationTests: XCTestCase {
    private var children: [ChildProcess] = []
    private var directory: URL!

    override func setUpWithError() throws {
        signal(SIGPIPE, SIG_IGN)
        directory = URL(fileURLWithPath: "/tmp").appendingPathComponent("subd-sa-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try "numbers: [\"A\"]\nlog_level: info\n"
            .write(to: directory.appendingPathComponent("subd.yaml"), atomically: true, encoding: .utf8)
    }

    override func tearDown() {
        for child in children { child.kill9IfRunning() }
        try? FileManager.default.removeItem(at: directory)
    }

    func testServesTcpAndUnixSocketsPassedBySystemdAndBindsNoneOfItsOwn() throws {
        let port = try TestAddress.freeLoopbackPort()
        let configuredPort = try TestAddress.freeLoopbackPort()
        let passedPath = directory.appendingPathComponent("passed.sock").path
        let configuredPath = directory.appendingPathComponent("configured.sock").path
        let child = try activate(
            ["-l", "127.0.0.1:\(port)", "-l", passedPath, "--fdname=tcp:unix"],
            subdArguments: ["--listen", "127.0.0.1:\(configuredPort)", "--unix", configuredPath]
        )
        try child.stderr.waitFor(substring: "Listening on \(passedPath)", timeout: 10)

        // The first connection makes systemd-socket-activate exec subd, which then accepts it.
        let tcp = try LineClient.connect(port: port, label: "tcp", timeout: 10)
        XCTAssertEqual(try tcp.command("PING"), .status("PONG"))
        try child.stderr.waitFor(substring: "ready", timeout: 10)
        let unix = try LineClient.connect(unixPath: passedPath)
        XCTAssertEqual(try unix.command("LIST"), .list(["A 0"]))
        XCTAssertEqual(try tcp.command("PUB A 2\nhi"), .ok("0"))
        assertOutput(child.stderr, contains: "names=tcp,unix")

        // Every listening socket subd holds is one systemd passed; the configured ones were never bound.
        XCTAssertEqual(try Self.listeningSockets(of: child.pid), ["tcp 127.0.0.1:\(port)", "unix \(passedPath)"])
        XCTAssertFalse(FileManager.default.fileExists(atPath: configuredPath), "subd bound its own unix socket")
        XCTAssertThrowsError(try LineClient.connect(port: configuredPort), "subd bound its configured port")

        child.send(signal: SIGTERM)
        for client in [tcp, unix] {
            try client.expectClosed()
            client.close()
        }
        XCTAssertEqual(child.waitForExit(timeout: 10), 0, child.stderr.text)
        // The socket file belongs to the socket unit: subd leaves it in place.
        XCTAssertTrue(FileManager.default.fileExists(atPath: passedPath))
    }

    func testAPassedSocketThatIsNotAListeningStreamSocketIsAClearStartError() throws {
        let port = try TestAddress.freeLoopbackPort()
        let child = try activate(["--datagram", "-l", "127.0.0.1:\(port)"], subdArguments: [])
        try child.stderr.waitFor(substring: "Listening on 127.0.0.1:\(port)", timeout: 10)
        // A datagram makes systemd-socket-activate exec subd.
        let sender = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { Glibc.close(sender) }
        var address = TestAddress.loopback(port)
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(sender, "x", 1, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        XCTAssertEqual(child.waitForExit(timeout: 10), 1, child.stderr.text)
        assertOutput(child.stderr, contains: "is not a listening stream socket")
    }

    // MARK: Helpers

    /// Starts `systemd-socket-activate <options> subd --config <dir>/subd.yaml <subdArguments>`.
    private func activate(_ options: [String], subdArguments: [String]) throws -> ChildProcess {
        let tool = try XCTUnwrap(
            ["/usr/bin/systemd-socket-activate", "/bin/systemd-socket-activate"].first {
                FileManager.default.isExecutableFile(atPath: $0)
            },
            "systemd-socket-activate is missing; `make test` installs Debian's systemd package"
        )
        let subd = try BinaryLocator.executable("subd")
        let child = try ChildProcess(
            executable: URL(fileURLWithPath: tool),
            arguments: options + [subd.path, "--config", directory.appendingPathComponent("subd.yaml").path]
                + subdArguments,
            environment: Daemon.environment(), label: "systemd-socket-activate subd"
        )
        children.append(child)
        return child
    }

    /// The listening sockets process `pid` holds, as `tcp HOST:PORT` / `unix PATH`, sorted: its socket inodes
    /// (from /proc/PID/fd) looked up in /proc/net/{tcp,tcp6,unix}.
    private static func listeningSockets(of pid: Int32) throws -> [String] {
        let fdDirectory = "/proc/\(pid)/fd"
        var inodes = Set<String>()
        for entry in try FileManager.default.contentsOfDirectory(atPath: fdDirectory) {
            let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fdDirectory)/\(entry)")) ?? ""
            if let match = target.wholeMatch(of: /socket:\[([0-9]+)\]/) { inodes.insert(String(match.output.1)) }
        }
        var found: [String] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            for fields in try rows(of: table) where fields.count > 9 && fields[3] == "0A" && inodes.contains(fields[9])
            {
                found.append("tcp " + decodeIPv4(fields[1]))
            }
        }
        // /proc/net/unix: Num RefCount Protocol Flags Type St Inode Path; flag 00010000 is a listening socket.
        for fields in try rows(of: "/proc/net/unix") where fields.count > 6 && inodes.contains(fields[6]) {
            if fields[3] == "00010000" { found.append("unix " + (fields.count > 7 ? fields[7] : "?")) }
        }
        return found.sorted()
    }

    private static func rows(of table: String) throws -> [[String]] {
        try String(contentsOfFile: table, encoding: .utf8).split(separator: "\n").dropFirst()
            .map { $0.split(separator: " ").map(String.init) }
    }

    /// `0100007F:1F93` (little-endian IPv4, port in hex) → `127.0.0.1:8083`; IPv6 entries are shown raw.
    private static func decodeIPv4(_ field: String) -> String {
        let parts = field.split(separator: ":")
        guard parts.count == 2, parts[0].count == 8, let raw = UInt32(parts[0], radix: 16),
            let port = UInt16(parts[1], radix: 16)
        else { return field }
        let bytes = (0..<4).map { (raw >> (8 * $0)) & 0xFF }
        return bytes.map(String.init).joined(separator: ".") + ":\(port)"
    }
}
