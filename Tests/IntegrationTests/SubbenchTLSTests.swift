import Foundation
import XCTest

/// `subbench --tls` end to end: the real subbench starts the real subd on a `tls://` listener with a throwaway
/// certificate it makes with the `openssl` command, and measures a small fan-out over TLS.
final class SubbenchTLSTests: XCTestCase {
    /// What one finished subbench run printed and how it exited.
    private struct Run {
        var status: Int32
        var stdout: String
        var stderr: String

        var description: String { "exit \(status)\nstdout:\n\(stdout)\nstderr:\n\(stderr)" }
    }

    /// A private `$TMPDIR` for subbench, so the test sees that its certificate directory is gone afterwards.
    private var scratch: URL!

    override func setUpWithError() throws {
        try super.setUpWithError()
        _ = try TLSFiles.openssl()  // skips without the openssl command, as the TLS tests do
        scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent(
            "subbench-tls-test-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    override func tearDown() {
        if let scratch { try? FileManager.default.removeItem(at: scratch) }
        super.tearDown()
    }

    /// 1 publisher, 3 subscribers, 20,000 messages over TLS: every message arrives (exit 0), the report says TLS
    /// and the negotiated protocol, and the throwaway certificate's directory is removed.
    func testFanOutOverTLS() throws {
        let subd = try BinaryLocator.executable("subd").path
        let run = try subbench(
            ["--tls", "--subd", subd, "--subscribers", "3", "--messages", "20000", "--timeout", "60"], timeout: 90)
        XCTAssertEqual(run.status, 0, run.description)
        let report = run.stdout.split(separator: "\n").first { $0.hasPrefix("subbench: fan-out") }.map(String.init)
        XCTAssertEqual(
            report?.hasPrefix("subbench: fan-out over TLS 1 publisher -> 3 subscribers, 20000 msgs x 128 B"), true,
            run.description)
        XCTAssertNotNil(report?.firstMatch(of: /, TLSv1\.[23] [A-Z0-9_-]+$/), run.description)
        XCTAssertNotNil(run.stdout.firstMatch(of: /delivered +60000 msgs/), run.description)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: scratch.path), [], "left behind")
    }

    /// `--tls` goes with the fan-out scenario only, and `--ca` with `--tls`: usage errors (64) that say so.
    func testTLSOutsideFanOutIsAUsageError() throws {
        let subd = try BinaryLocator.executable("subd").path
        let pipeline = try subbench(["--tls", "--scenario", "pipeline", "--subd", subd], timeout: 10)
        XCTAssertEqual(pipeline.status, 64, pipeline.description)
        XCTAssertTrue(pipeline.stderr.contains("--tls goes with the fan-out scenario only"), pipeline.description)
        let idle = try subbench(["--scenario", "idle", "--tls", "--subd", subd], timeout: 10)
        XCTAssertEqual(idle.status, 64, idle.description)
        let ca = try subbench(["--ca", "ca.pem", "--server", "127.0.0.1:7827"], timeout: 10)
        XCTAssertEqual(ca.status, 64, ca.description)
        XCTAssertTrue(ca.stderr.contains("--ca goes with --tls"), ca.description)
    }

    /// `--subscribers-at` (a cluster's other nodes) goes with the fan-out scenario and `--server`, not with `--tls`.
    func testSubscribersAtNeedsServerAndFanOut() throws {
        let subd = try BinaryLocator.executable("subd").path
        let spawned = try subbench(["--subd", subd, "--subscribers-at", "127.0.0.1:7822"], timeout: 10)
        XCTAssertEqual(spawned.status, 64, spawned.description)
        XCTAssertTrue(
            spawned.stderr.contains("--subscribers-at goes with the fan-out scenario and --server"),
            spawned.description)
        let tls = try subbench(
            ["--server", "127.0.0.1:7821", "--tls", "--subscribers-at", "127.0.0.1:7822"], timeout: 10)
        XCTAssertEqual(tls.status, 64, tls.description)
        let malformed = try subbench(["--server", "127.0.0.1:7821", "--subscribers-at", "nowhere"], timeout: 10)
        XCTAssertEqual(malformed.status, 64, malformed.description)
    }

    /// Runs the real subbench (next to subd) to completion with `TMPDIR` set to the test's scratch directory.
    private func subbench(_ arguments: [String], timeout: TimeInterval) throws -> Run {
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subbench"), arguments: arguments,
            environment: ["TMPDIR": scratch.path], label: "subbench")
        guard let status = child.waitForExit(timeout: timeout) else {
            child.kill9IfRunning()
            throw HarnessError.timeout(
                "subbench \(arguments.joined(separator: " ")) did not exit within \(timeout) s; stdout: "
                    + "\(child.stdout.text) stderr: \(child.stderr.text)")
        }
        _ = child.stdout.waitForEnd(timeout: 5)
        _ = child.stderr.waitForEnd(timeout: 5)
        return Run(status: status, stdout: child.stdout.text, stderr: child.stderr.text)
    }
}
