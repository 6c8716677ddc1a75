import Foundation
import Glibc
import XCTest

/// TLS listeners over the real subd and the real `openssl` CLI: certificates made by the test (`openssl req -x509`),
/// `openssl s_client` as the TLS client, plain clients on the plain listener of the same daemon.
final class TLSTests: IntegrationTestCase {
    private var files: TLSFiles!
    private var tlsClients: [TLSClient] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        files = try TLSFiles()
        try files.selfSigned("server", commonName: "localhost")
    }

    override func tearDown() {
        for client in tlsClients { client.close() }
        tlsClients.removeAll()
        super.tearDown()
        files?.remove()
    }

    /// A daemon with a plain listener (the harness's) and a `tls://127.0.0.1:0` one, number X, and `extraLines`.
    private func startTLSDaemon(_ extraLines: [String] = []) throws -> (Daemon, UInt16) {
        let config = DaemonConfig(
            numbers: ["X"],
            extraLines: [
                "tls_cert: \"\(files.path("server.crt"))\"", "tls_key: \"\(files.path("server.key"))\"",
            ] + extraLines)
        let daemon = try startDaemon(config, extraArguments: ["--listen", "tls://127.0.0.1:0"])
        return (daemon, try daemon.tlsPort())
    }

    private func tlsClient(
        _ port: UInt16, certificate: String? = nil, key: String? = nil, label: String = "s_client"
    ) throws -> TLSClient {
        let client = try TLSClient(
            port: port, caFile: files.path("server.crt"), certificate: certificate, key: key, label: label)
        tlsClients.append(client)
        return client
    }

    func testTLSAndPlainClientsExchangeMessagesThroughOneDaemon() throws {
        let (daemon, port) = try startTLSDaemon()
        let secure = try tlsClient(port)
        XCTAssertEqual(try secure.command("SUB X"), "+OK")
        let plain = try connect(daemon, "plain")
        XCTAssertEqual(try plain.pub("X", Array("hello".utf8)), .ok("1"))
        XCTAssertTrue(try secure.readLine().hasPrefix("MSG X 5"))
        XCTAssertEqual(try secure.readLine(), "hello")

        // The other way round: the TLS client publishes, the plain one receives.
        try subscribe(plain, "X")
        try secure.sendLine("PUB X 6")
        try secure.sendLine("secure")
        // The TLS client is subscribed too: its copy comes before the reply (pushes precede the reply).
        XCTAssertTrue(try secure.readLine().hasPrefix("MSG X 6"))
        XCTAssertEqual(try secure.readLine(), "secure")
        XCTAssertEqual(try secure.readLine(), "+OK 2")
        let message = try plain.nextMessage()
        XCTAssertEqual(message.payload, Array("secure".utf8))
    }

    /// `tls_cert: credential:NAME` reads the file systemd passed with `LoadCredential=NAME:...` (in
    /// `$CREDENTIALS_DIRECTORY`); without that directory the start fails naming the key.
    func testCertificatesMayComeFromSystemdCredentials() throws {
        let credentials = files.path("credentials")
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: files.path("server.crt"), toPath: credentials + "/subd-tls.crt")
        try FileManager.default.copyItem(atPath: files.path("server.key"), toPath: credentials + "/subd-tls.key")
        let config = DaemonConfig(
            numbers: ["X"],
            extraLines: ["tls_cert: \"credential:subd-tls.crt\"", "tls_key: \"credential:subd-tls.key\""])
        let daemon = try startDaemon(
            config, extraArguments: ["--listen", "tls://127.0.0.1:0"],
            environment: ["CREDENTIALS_DIRECTORY": credentials])
        let secure = try tlsClient(try daemon.tlsPort())
        XCTAssertEqual(try secure.command("SUB X"), "+OK")
        XCTAssertThrowsError(try Daemon(config: config, extraArguments: ["--listen", "tls://127.0.0.1:0"])) { error in
            XCTAssertTrue("\(error)".contains("tls_cert"), "\(error)")
            XCTAssertTrue("\(error)".contains("CREDENTIALS_DIRECTORY"), "\(error)")
        }
    }

    func testALargeBurstGoesOutWhole() throws {
        // More than the socket takes at once: SSL_write blocks, is retried with the same bytes, and the order holds.
        let (daemon, port) = try startTLSDaemon()
        let secure = try tlsClient(port)
        XCTAssertEqual(try secure.command("SUB X"), "+OK")
        let plain = try connect(daemon, "plain")
        let big = [UInt8](repeating: UInt8(ascii: "a"), count: 100_000)
        for index in 0..<20 {
            try plain.sendPub("X", Array("small \(index)".utf8))
            try plain.sendPub("X", big)
        }
        for index in 0..<20 {
            XCTAssertTrue(try secure.readLine().hasPrefix("MSG X"))
            XCTAssertEqual(try secure.readLine(), "small \(index)")
            XCTAssertTrue(try secure.readLine().hasPrefix("MSG X 100000"))
            XCTAssertEqual(try secure.readLine().count, 100_000)
        }
    }

    func testAPlainTextClientOnTheTLSPortIsClosedAndSubdServesOn() throws {
        let (daemon, port) = try startTLSDaemon()
        let confused = try LineClient.connect(port: port, label: "plain on TLS port")
        defer { confused.close() }
        try confused.sendLine("PING")
        try confused.expectClosed(discardingData: true)
        try daemon.child.stderr.waitFor(substring: "TLS handshake failed", timeout: 5)
        XCTAssertEqual(try tlsClient(port).command("PING"), "+PONG")
        assertOpen(try connect(daemon, "plain"), "the plain listener after a failed handshake")
    }

    func testAClientCertificateNamesItsUser() throws {
        let alice = try files.selfSigned("alice", commonName: "alice")
        let (daemon, port) = try startTLSDaemon([
            "auth_token: \"shared\"",
            "tls_client_ca: \"\(alice.certificate)\"",
            "users:",
            "  - name: alice",
            "    secret_hash: \"\(try hashSecret("alice-pw"))\"",
            "    publish: [\"X\"]",
            "    subscribe: [\"X\"]",
        ])
        let plain = try connect(daemon, "plain")
        assertError(try plain.command("SUB X"), "AUTH", "a plain client still needs HELLO")
        XCTAssertEqual(try plain.command("HELLO token=shared").errorCode, nil)
        try subscribe(plain, "X")

        let secure = try tlsClient(port, certificate: alice.certificate, key: alice.key, label: "alice")
        XCTAssertEqual(try secure.command("SUB X"), "+OK", "authenticated by the certificate, no HELLO")
        XCTAssertEqual(try secure.command("SUB Y").prefix(11), "-ERR DENIED", "with alice's rights only")
        try secure.sendLine("PUB X 2")
        try secure.sendLine("hi")
        XCTAssertEqual(try secure.readLine(), "MSG X 2 from=alice")
        XCTAssertEqual(try secure.readLine(), "hi")
        XCTAssertEqual(try secure.readLine(), "+OK 2")
        let message = try plain.nextMessage()
        XCTAssertEqual(message.attributes["from"], "alice", "from= is the certificate's user")

        // subctl presents the certificate too: it publishes as alice without a token.
        let published = try Subctl.run([
            "publish", "--server", "localhost:\(port)", "--tls", "--ca", files.path("server.crt"),
            "--cert", alice.certificate, "--key", alice.key, "X", "by subctl",
        ])
        XCTAssertEqual(published.status, 0, "\(published)")
        let second = try plain.nextMessage()
        XCTAssertEqual(second.attributes["from"], "alice")
        XCTAssertEqual(second.payload, Array("by subctl".utf8))

        // Without a client certificate the handshake is refused.
        let anonymous = try tlsClient(port, label: "no certificate")
        try? anonymous.sendLine("PING")
        XCTAssertTrue(anonymous.child.stdout.waitForEnd(timeout: 5), "the refused client's connection ends")
        XCTAssertFalse(anonymous.child.stdout.text.contains("PONG"))
        try daemon.child.stderr.waitFor(substring: "TLS handshake failed", timeout: 5)
    }

    func testAReloadPutsARenewedCertificateInForceAndRefusesABadOne() throws {
        let (daemon, port) = try startTLSDaemon()
        let before = try tlsClient(port, label: "before")
        XCTAssertEqual(try before.command("PING"), "+PONG")

        try files.selfSigned("server", commonName: "renewed")  // same paths: renewed in place
        daemon.child.send(signal: SIGHUP)
        try daemon.child.stderr.waitFor(substring: "configuration reloaded", timeout: 10)
        let after = try tlsClient(port, label: "after")
        XCTAssertEqual(try after.command("PING"), "+PONG")
        try after.child.stderr.waitFor(substring: "CN = renewed", timeout: 5)
        XCTAssertEqual(try before.command("PING"), "+PONG", "an open session keeps its context")

        try "not a certificate\n".write(toFile: files.path("server.crt"), atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        try daemon.child.stderr.waitFor(substring: "reload refused", timeout: 10)
        assertOutput(daemon.child.stderr, contains: "tls_cert")
        // The renewed context stays in force (the client trusts the renewed certificate, read back before).
        let third = try TLSClient(port: port, label: "after bad reload")
        tlsClients.append(third)
        XCTAssertEqual(try third.command("PING"), "+PONG")
        try third.child.stderr.waitFor(substring: "CN = renewed", timeout: 5)
    }

    func testSIGTERMDrainsOpenTLSSessions() throws {
        let (daemon, port) = try startTLSDaemon()
        let secure = try tlsClient(port)
        XCTAssertEqual(try secure.command("SUB X"), "+OK")
        XCTAssertEqual(daemon.stop(), 0, daemon.log)
        // Timed by subd's own log: the drain ends at once, not at the 5 s drain deadline.
        let drain = try XCTUnwrap(daemon.drainSeconds, daemon.log)
        XCTAssertLessThan(drain, 4.5, "closed at once, not at the drain deadline")
        XCTAssertTrue(secure.child.stdout.waitForEnd(timeout: 5), "the TLS client saw the end")
    }

    func testSubctlSpeaksTLSAndChecksTheServerCertificate() throws {
        let (daemon, port) = try startTLSDaemon()
        let server = "localhost:\(port)"  // the certificate's CN
        let trust = ["--tls", "--ca", files.path("server.crt")]
        let listener = try Subctl.listen(server: server, ["X"], extra: trust + ["--count", "1"])
        defer { listener.child.kill9IfRunning() }
        let plain = try subctl(daemon, "publish", ["X", "to TLS"])
        XCTAssertEqual(plain.status, 0, "\(plain)")
        XCTAssertEqual(try listener.readTextLine(), "to TLS")

        let plainListener = try listen(daemon, ["X"], extra: ["--count", "1"])
        let secure = try Subctl.run(["publish", "--server", server] + trust + ["X", "from TLS"])
        XCTAssertEqual(secure.status, 0, "\(secure)")
        XCTAssertEqual(try plainListener.readTextLine(), "from TLS")

        // Without --ca the self-signed certificate is not trusted; by IP address its name does not match.
        let untrusted = try Subctl.run(["ping", "--server", server, "--tls"])
        XCTAssertEqual(untrusted.status, 69, "\(untrusted)")
        XCTAssertTrue(untrusted.stderr.contains("self-signed certificate"), untrusted.stderr)
        XCTAssertTrue(untrusted.stderr.contains("(--ca names the CA that signed subd's certificate)"), untrusted.stderr)
        XCTAssertFalse(untrusted.stderr.contains("is subd running"), "subd answered: \(untrusted.stderr)")
        let wrongName = try Subctl.run(["ping", "--server", "127.0.0.1:\(port)"] + trust)
        XCTAssertEqual(wrongName.status, 69, "\(wrongName)")
        XCTAssertTrue(wrongName.stderr.contains("IP address mismatch"), wrongName.stderr)
        let misuse = try Subctl.run(["ping", "--server", server, "--ca", files.path("server.crt")])
        XCTAssertEqual(misuse.status, 64, "--ca without --tls: \(misuse)")
        // The TLS options may come before the command, as the other global options may.
        let leading = try Subctl.run(trust + ["--server", server, "list"])
        XCTAssertEqual(leading.status, 0, "\(leading)")
        XCTAssertEqual(leading.output, "X 0\n")
        // A shorthand IP address ("127.1") is a name, matched against the certificate like any other: refused.
        let shorthand = try Subctl.run(["ping", "--server", "127.1:\(port)"] + trust)
        XCTAssertEqual(shorthand.status, 69, "\(shorthand)")
    }

    /// A client that resumes its TLS session (as Go, Java or a reconnecting s_client do) is served again, client
    /// certificates required or not (a context that verifies clients needs a session id context).
    func testAResumedSessionIsServed() throws {
        let (_, port) = try startTLSDaemon(["tls_client_ca: \"\(files.path("server.crt"))\""])
        let result = try runOpenSSL([
            "s_client", "-connect", "127.0.0.1:\(port)", "-reconnect", "-tls1_2", "-CAfile", files.path("server.crt"),
            "-cert", files.path("server.crt"), "-key", files.path("server.key"),
        ])
        XCTAssertGreaterThanOrEqual(result.components(separatedBy: "Reused,").count - 1, 1, result)
        XCTAssertFalse(result.contains("alert internal error"), result)
    }

    /// Runs the `openssl` CLI with stdin at its end; returns what it printed (stdout and stderr).
    private func runOpenSSL(_ arguments: [String]) throws -> String {
        let child = try ChildProcess(
            executable: try TLSFiles.openssl(), arguments: arguments, stdinPipe: true, label: "openssl")
        try child.writeStdinAndClose([])
        XCTAssertNotNil(child.waitForExit(timeout: 30), "openssl \(arguments.first ?? "") did not end")
        child.stdout.waitForEnd(timeout: 5)
        return child.stdout.text + child.stderr.text
    }
}
