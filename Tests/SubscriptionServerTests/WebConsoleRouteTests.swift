import Foundation
import SubscriptionWebConsole
import SubscriptionWebSocket
import XCTest

@testable import SubscriptionServer

/// The web console on a WebSocket listener (issue 24): which plain requests get a file, with which headers, and
/// that the files built into the binary are the repository's, byte for byte.
final class WebConsoleRouteTests: XCTestCase {
    private func request(_ target: String, method: String = "GET", upgrade: Bool = false) -> WebSocketUpgradeRequest {
        var fields: [WebSocketUpgradeRequest.Field] = [.init(name: "Host", value: "127.0.0.1:7829")]
        if upgrade {
            fields += [.init(name: "Upgrade", value: "WebSocket"), .init(name: "Connection", value: "Upgrade")]
        }
        return WebSocketUpgradeRequest(method: method, target: target, minorVersion: 1, fields: fields)
    }

    private func field(_ name: String, of response: HTTPResponse) -> String? {
        response.fields.first { $0.name == name }?.value
    }

    func testEveryFileIsServedWithItsTypeAndTheConsolesPolicy() throws {
        let types = [
            "/": "text/html; charset=utf-8", "/console.js": "text/javascript; charset=utf-8",
            "/console.css": "text/css; charset=utf-8", "/subd.js": "text/javascript; charset=utf-8",
        ]
        XCTAssertEqual(Set(WebConsole.files.map(\.path)), Set(types.keys))
        for (path, type) in types {
            let response = try XCTUnwrap(WebConsoleRoute.response(to: request(path), webSocketPath: "/subd"), path)
            XCTAssertEqual(response.status, 200, path)
            XCTAssertEqual(field("Content-Type", of: response), type, path)
            XCTAssertEqual(field("Content-Security-Policy", of: response), WebConsoleRoute.contentSecurityPolicy)
            XCTAssertEqual(field("Cache-Control", of: response), "no-cache")
            XCTAssertFalse(response.body.isEmpty, path)
            let encoded = String(decoding: response.encoded(), as: UTF8.self)
            XCTAssertTrue(encoded.contains("Content-Length: \(response.body.count)\r\nConnection: close\r\n\r\n"))
        }
        let query = try XCTUnwrap(WebConsoleRoute.response(to: request("/subd.js?v=2"), webSocketPath: "/subd"))
        XCTAssertEqual(query.body, WebConsole.file(at: "/subd.js")?.bytes, "the query is not part of the path")
        let head = try XCTUnwrap(
            WebConsoleRoute.response(to: request("/subd.js", method: "HEAD"), webSocketPath: "/subd"))
        XCTAssertFalse(head.sendsBody)
        XCTAssertEqual(head.body.count, WebConsole.file(at: "/subd.js")?.bytes.count, "HEAD: the length, no body")
    }

    /// An upgrade (even of `/`, when the WebSocket path is `/`), another method or another path is the handshake's.
    func testUpgradesOtherMethodsAndOtherPathsAreLeftToTheHandshake() {
        XCTAssertNil(WebConsoleRoute.response(to: request("/", upgrade: true), webSocketPath: "/"))
        XCTAssertNil(WebConsoleRoute.response(to: request("/subd.js", upgrade: true), webSocketPath: "/subd"))
        XCTAssertNil(WebConsoleRoute.response(to: request("/", method: "POST"), webSocketPath: "/subd"))
        for path in ["/subd", "/index.html", "/../subd.js", "/subd.js/", "//subd.js", "/SUBD.JS", ""] {
            XCTAssertNil(WebConsoleRoute.response(to: request(path), webSocketPath: "/subd"), path)
        }
    }

    /// The page learns the listener's WebSocket path where it holds the placeholder, HTML-escaped.
    func testThePageCarriesTheListenersWebSocketPath() throws {
        let source = try String(
            contentsOf: Self.repository.appendingPathComponent("clients/console/index.html"), encoding: .utf8)
        XCTAssertTrue(source.contains(WebConsole.webSocketPathPlaceholder), "index.html has the placeholder")
        let page = String(decoding: WebConsole.page(webSocketPath: "/a\"<b>&"), as: UTF8.self)
        XCTAssertFalse(page.contains(WebConsole.webSocketPathPlaceholder))
        XCTAssertTrue(page.contains("/a&quot;&lt;b&gt;&amp;"))
        let served = try XCTUnwrap(WebConsoleRoute.response(to: request("/"), webSocketPath: "/live"))
        XCTAssertEqual(
            String(decoding: served.body, as: UTF8.self),
            source.replacing(WebConsole.webSocketPathPlaceholder, with: "/live"))
    }

    /// What the plugin built in is each file of the repository, byte for byte (any byte a raw string literal could
    /// change: quotes, backslashes, `#`, line ends).
    func testTheFilesBuiltInAreTheRepositorysByteForByte() throws {
        let sources = [
            "/": "clients/console/index.html", "/console.js": "clients/console/console.js",
            "/console.css": "clients/console/console.css", "/subd.js": "clients/js/subd.js",
        ]
        for file in WebConsole.files {
            let url = Self.repository.appendingPathComponent(try XCTUnwrap(sources[file.path]))
            XCTAssertEqual(file.bytes, Array(try Data(contentsOf: url)), file.path)
        }
    }

    /// The repository's root, from this file's place in it.
    private static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
}
