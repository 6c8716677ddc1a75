import XCTest

@testable import SubscriptionServer

/// What the metrics endpoint answers to each kind of request, and the bytes of a response.
final class MetricsRouteTests: XCTestCase {
    private func head(_ method: String, _ target: String) -> HTTPRequestHead {
        HTTPRequestHead(method: method, target: target, minorVersion: 1, fields: [.init(name: "Host", value: "a")])
    }

    private func respond(_ method: String, _ target: String) -> (HTTPResponse, rendered: Bool) {
        var rendered = false
        let response = MetricsRoute.response(to: head(method, target)) {
            rendered = true
            return Array("m 1\n".utf8)
        }
        return (response, rendered)
    }

    func testGetMetrics() {
        let (response, rendered) = respond("GET", "/metrics")
        XCTAssertTrue(rendered)
        XCTAssertEqual(response.status, 200)
        XCTAssertEqual(
            String(decoding: response.encoded(), as: UTF8.self),
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\nContent-Length: 4\r\n"
                + "Connection: close\r\n\r\nm 1\n")
    }

    func testHeadSaysTheLengthWithoutTheBody() {
        let (response, _) = respond("HEAD", "/metrics?x")
        XCTAssertEqual(response.status, 200)
        let text = String(decoding: response.encoded(), as: UTF8.self)
        XCTAssertTrue(text.hasSuffix("Content-Length: 4\r\nConnection: close\r\n\r\n"), text)
    }

    func testOtherPathsAreNotFoundAndNotRendered() {
        for target in ["/", "/metrics/", "/Metrics", "/metricsx", "*", "http://a/metrics"] {
            let (response, rendered) = respond("GET", target)
            XCTAssertEqual(response.status, 404, target)
            XCTAssertFalse(rendered, target)
        }
    }

    func testOtherMethodsOnMetricsAreNotAllowed() {
        for method in ["POST", "PUT", "DELETE", "get", "OPTIONS"] {
            let (response, rendered) = respond(method, "/metrics")
            XCTAssertEqual(response.status, 405, method)
            XCTAssertFalse(rendered, method)
            XCTAssertEqual(response.fields.first { $0.name == "Allow" }?.value, "GET, HEAD")
        }
    }

    func testRefusedHeads() {
        XCTAssertEqual(MetricsRoute.response(to: .malformed("x")).status, 400)
        XCTAssertEqual(MetricsRoute.response(to: .tooLarge).status, 431)
        XCTAssertEqual(MetricsRoute.response(to: .unsupportedVersion).status, 505)
        XCTAssertEqual(MetricsRoute.timeout.status, 408)
        XCTAssertEqual(MetricsRoute.busy.status, 503)
        let text = String(decoding: MetricsRoute.response(to: .malformed("no version")).encoded(), as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("HTTP/1.1 400 Bad Request\r\n"), text)
        XCTAssertTrue(text.hasSuffix("\r\n\r\nbad request: no version\n"), text)
        XCTAssertTrue(text.contains("\r\nConnection: close\r\n"), text)
    }
}
