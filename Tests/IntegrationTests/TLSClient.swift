import Foundation
import XCTest

/// A TLS client: the real `openssl s_client -quiet` (from `make deps-test`) connected to a subd TLS port, its stdin
/// piped (lines go out as they are written) and its stdout collected.
final class TLSClient {
    /// The running s_client.
    let child: ChildProcess

    /// Connects to `127.0.0.1:port`, trusting `caFile` when given, presenting `certificate`/`key` when given.
    init(
        port: UInt16, caFile: String? = nil, certificate: String? = nil, key: String? = nil, label: String = "s_client"
    )
        throws
    {
        var arguments = ["s_client", "-connect", "127.0.0.1:\(port)", "-quiet"]
        if let caFile { arguments += ["-CAfile", caFile, "-verify_return_error"] }
        if let certificate, let key { arguments += ["-cert", certificate, "-key", key] }
        child = try ChildProcess(
            executable: try TLSFiles.openssl(), arguments: arguments, stdinPipe: true, label: label)
    }

    /// Sends `line` and a LF.
    func sendLine(_ line: String) throws {
        guard let stdin = child.stdin else { throw HarnessError.process("s_client without stdin") }
        try stdin.write(contentsOf: Data((line + "\n").utf8))
    }

    /// The next line the server sent (without its LF).
    func readLine(timeout: TimeInterval = 5) throws -> String {
        String(decoding: try child.stdout.readLine(timeout: timeout), as: UTF8.self)
    }

    /// Sends `line` and returns the next line received.
    func command(_ line: String) throws -> String {
        try sendLine(line)
        return try readLine()
    }

    /// Ends the client.
    func close() {
        child.kill9IfRunning()
        _ = child.waitForExit(timeout: 5)
    }
}

/// Certificates made by the tests with the real `openssl` CLI, in a temporary directory.
struct TLSFiles {
    /// The directory holding them; the caller removes it.
    let directory: URL

    /// A new empty temporary directory.
    init() throws {
        directory = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "subd-tls-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The `openssl` executable.
    static func openssl() throws -> URL {
        for path in ["/usr/bin/openssl", "/usr/local/bin/openssl"]
        where FileManager.default.isExecutableFile(atPath: path) {
            return URL(fileURLWithPath: path)
        }
        throw XCTSkip("no openssl CLI (make deps-test installs it)")
    }

    /// Path of `name` in the directory.
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Makes a self-signed certificate for `commonName`: `<name>.crt` and `<name>.key` (RSA 2048, one day).
    /// Returns (certificate path, key path).
    @discardableResult
    func selfSigned(_ name: String, commonName: String) throws -> (certificate: String, key: String) {
        let certificate = path("\(name).crt")
        let key = path("\(name).key")
        let child = try ChildProcess(
            executable: try Self.openssl(),
            arguments: [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=\(commonName)", "-days", "1",
                "-keyout", key, "-out", certificate,
            ],
            label: "openssl req")
        guard child.waitForExit(timeout: 30) == 0 else {
            throw HarnessError.process("openssl req failed: \(child.stderr.text)")
        }
        return (certificate, key)
    }

    /// Removes the directory.
    func remove() {
        try? FileManager.default.removeItem(at: directory)
    }
}

extension Daemon {
    /// The port of the TLS listener, parsed from its `listening on tls 127.0.0.1:PORT` log line.
    func tlsPort() throws -> UInt16 { try listenerPort("tls") }
}
