import Foundation
import Glibc
import XCTest

extension XCTestCase {
    /// Starts the built subd with `--config file --listen 127.0.0.1:0` and checks that it comes up (its log says
    /// where it listens within 10 s) and stops with status 0 on SIGTERM; a failure names `what` and shows subd's log.
    func assertSubdStarts(
        config file: URL, environment: [String: String?] = [:], _ what: String, line: UInt = #line
    ) throws {
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subd"),
            arguments: ["--config", file.path, "--listen", "127.0.0.1:0"],
            environment: Daemon.environment(environment), label: "subd")
        defer { child.kill9IfRunning() }
        do {
            try child.stderr.waitFor(substring: "listening on tcp 127.0.0.1:", timeout: 10)
        } catch {
            return XCTFail("subd did not start with \(what): \(error)\n\(child.stderr.text)", line: line)
        }
        child.send(signal: SIGTERM)
        XCTAssertEqual(child.waitForExit(timeout: 10), 0, "subd with \(what) on SIGTERM", line: line)
    }
}
