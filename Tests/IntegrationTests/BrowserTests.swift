import Foundation
import XCTest

/// The JavaScript client and the web console in a real browser (issue 24): Debian's headless Chromium, driven by
/// Selenium (`python3-selenium`, `chromium-driver`), against real subd processes that the scripts in Tests/Browser
/// start themselves (they kill and restart subd on the same ports to see the page reconnect). Each script prints a
/// line per case and exits 0 only when every case passed; its whole output is shown on failure.
final class BrowserTests: XCTestCase {
    /// `clients/js/subd.js`: every call against a real subd, payloads byte for byte, typed errors, users, the stream
    /// parser fed whole, byte by byte and in random chunks, and the reconnect (Tests/Browser/js_client_test.py).
    func testTheJavaScriptClientInChromium() throws {
        try runScript("js_client_test.py")
    }

    /// The console served by subd at `/` of its ws:// listener: subctl's message in the listen pane, the page's
    /// publication at `subctl listen`, `$SYS` events, a watch's old -> new, the reconnect after subd is killed and
    /// started again, DENIED for a user without rights, 100 messages/s rendered without falling behind, the page's
    /// weight, 1,000 numbers capped (Tests/Browser/console_test.py). Its screenshot goes to .build/console.png
    /// (`make screenshot` writes docs/console.png).
    func testTheWebConsoleInChromium() throws {
        let screenshot = Self.repository.appendingPathComponent(".build/console.png").path
        try runScript("console_test.py", ["--screenshot", screenshot])
    }

    /// Runs a script of Tests/Browser with `--bin-dir` (the subd and subctl under test) and `arguments`.
    private func runScript(_ name: String, _ arguments: [String] = []) throws {
        let python = try ExternalTool.python(importing: "selenium", package: "python3-selenium")
        for tool in ["chromium", "chromedriver"] where !Self.onPath(tool) {
            throw HarnessError.missingBinary(
                "no \(tool); `make deps-test` installs Debian's chromium and chromium-driver")
        }
        let script = Self.repository.appendingPathComponent("Tests/Browser/\(name)").path
        let child = try ChildProcess(
            executable: python, arguments: [script, "--bin-dir", try BinaryLocator.directory().path] + arguments,
            label: name)
        let status = child.waitForExit(timeout: 300)
        if status == nil { child.kill9IfRunning() }
        child.stdout.waitForEnd(timeout: 5)
        child.stderr.waitForEnd(timeout: 5)
        let output = child.stdout.text + child.stderr.text
        XCTAssertEqual(status, 0, "\(name) failed (status \(status.map(String.init) ?? "none: timed out")):\n\(output)")
        // Each script prints one line per case; none may be missing or skipped.
        XCTAssertFalse(output.contains("SKIP"), "\(name) skipped a case:\n\(output)")
    }

    private static func onPath(_ tool: String) -> Bool {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":").contains {
            FileManager.default.isExecutableFile(atPath: "\($0)/\(tool)")
        }
    }

    /// The repository's root, from this file's place in it.
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
}
