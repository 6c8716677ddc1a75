import Foundation
import XCTest

/// `web_console` with the real subd and `curl`: a `ws://` listener answers a plain `GET` of `/` with the console page
/// (the listener's WebSocket path filled in), of `/console.js`, `/console.css` and `/subd.js` with the files of this
/// repository byte for byte, anything else as before (404, 426), and still upgrades WebSocket clients; the files
/// served count as connections a client closed, not as protocol errors. With `web_console: false`, upgrades only.
/// (The page itself is tested in a browser: BrowserTests.)
final class WebConsoleTests: IntegrationTestCase {
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// `curl` of `url`: the status, the header lines, and the body's bytes.
    private func get(_ url: String, method: String = "GET") throws -> (status: Int, head: String, body: [UInt8]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("web-console-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let head = directory.appendingPathComponent("head").path
        let body = directory.appendingPathComponent("body").path
        var arguments = ["curl", "-s", "-D", head, "-o", body, "-w", "%{http_code}", url]
        if method == "HEAD" { arguments.insert("-I", at: 1) }
        let status = try ExternalTool.run(arguments, missing: "apt-get install curl")
        return (
            Int(status) ?? 0, try String(contentsOfFile: head, encoding: .utf8),
            Array((try? Data(contentsOf: URL(fileURLWithPath: body))) ?? Data())
        )
    }

    private func file(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: Self.repository.appendingPathComponent(path)))
    }

    func testTheListenerServesTheConsoleBesideTheWebSocket() throws {
        let daemon = try startDaemon(DaemonConfig(), extraArguments: ["--listen", "ws://127.0.0.1:0/live"])
        let base = "http://127.0.0.1:\(try daemon.webSocketPort())"

        let page = try get(base + "/")
        XCTAssertEqual(page.status, 200)
        XCTAssertTrue(page.head.contains("Content-Type: text/html; charset=utf-8"), page.head)
        XCTAssertTrue(page.head.contains("Content-Security-Policy: default-src 'self'"), page.head)
        let source = String(decoding: try file("clients/console/index.html"), as: UTF8.self)
        XCTAssertTrue(source.contains("%SUBD_WS_PATH%"))
        XCTAssertEqual(String(decoding: page.body, as: UTF8.self), source.replacing("%SUBD_WS_PATH%", with: "/live"))

        for (path, source, type) in [
            ("/subd.js", "clients/js/subd.js", "text/javascript"),
            ("/console.js", "clients/console/console.js", "text/javascript"),
            ("/console.css", "clients/console/console.css", "text/css"),
        ] {
            let served = try get(base + path)
            XCTAssertEqual(served.status, 200, path)
            XCTAssertTrue(served.head.contains("Content-Type: \(type); charset=utf-8"), served.head)
            XCTAssertEqual(served.body, try file(source), "\(path) is \(source) byte for byte")
        }
        let head = try get(base + "/subd.js", method: "HEAD")
        XCTAssertEqual(head.status, 200)
        XCTAssertTrue(head.head.contains("Content-Length: \(try file("clients/js/subd.js").count)"), head.head)
        XCTAssertEqual(try get(base + "/nothing.js").status, 404)
        XCTAssertEqual(try get(base + "/live").status, 426, "the WebSocket path without an upgrade, as before")

        // The same listener still upgrades: a real client publishes, a TCP client receives.
        let tcp = try connect(daemon)
        XCTAssertEqual(try tcp.command("CREATE PAGE"), .ok("created"))
        try subscribe(tcp, "PAGE")
        guard case .open(let webSocket) = try PythonWebSocket.open(base.replacing("http:", with: "ws:") + "/live")
        else {
            return XCTFail("the upgrade was refused")
        }
        defer { webSocket.end() }
        try webSocket.lines.send("SEND PAGE hi\n")
        XCTAssertEqual(try webSocket.lines.readReply(), .ok("1"))
        XCTAssertEqual(try tcp.nextMessage().payload, Array("hi".utf8))
        let stats = try self.stats(tcp)
        XCTAssertEqual(stats["protocol_errors"], "2", "the 404 and the 426 only, not the files served")
    }

    func testWithTheConsoleOffTheListenerAnswersUpgradesOnly() throws {
        let daemon = try startDaemon(
            DaemonConfig(), extraArguments: ["--listen", "ws://127.0.0.1:0/subd"],
            environment: ["SUBD_WEB_CONSOLE": "false"])
        let base = "http://127.0.0.1:\(try daemon.webSocketPort())"
        XCTAssertEqual(try get(base + "/").status, 404)
        XCTAssertEqual(try get(base + "/subd.js").status, 404)
        XCTAssertEqual(try get(base + "/subd").status, 426)
    }
}
