import XCTest

@testable import SubscriptionClient

final class EndpointTests: XCTestCase {
    func testValidForms() throws {
        let table: [(String, Endpoint)] = [
            ("127.0.0.1:7827", .tcp(host: "127.0.0.1", port: 7827)),
            ("localhost:1", .tcp(host: "localhost", port: 1)),
            ("example.org:65535", .tcp(host: "example.org", port: 65535)),
            ("[::1]:7000", .tcp(host: "::1", port: 7000)),
            ("[::1]", .tcp(host: "::1", port: 7827)),
            ("subd.local", .tcp(host: "subd.local", port: 7827)),
            ("unix:/run/subd.sock", .unix(path: "/run/subd.sock")),
            ("unix:relative.sock", .unix(path: "relative.sock")),
            ("/tmp/subd.sock", .unix(path: "/tmp/subd.sock")),
        ]
        for (text, endpoint) in table {
            XCTAssertEqual(try Endpoint(parsing: text), endpoint, text)
        }
    }

    func testInvalidForms() {
        let table = [
            "", ":7827", "host:", "host:0", "host:65536", "host:x", "host:+5", "host:-1", "::1:7827", "[::1",
            "[::1]x", "[]:1", "unix:", "ho st:1", "host:7827:1",
        ]
        for text in table {
            XCTAssertThrowsError(try Endpoint(parsing: text), "'\(text)'") { error in
                guard case .invalidArgument = error as? ClientError else { return XCTFail("\(text): \(error)") }
            }
        }
    }

    func testDescriptionParsesBack() throws {
        for endpoint: Endpoint in [.tcp(host: "127.0.0.1", port: 1), .tcp(host: "::1", port: 2), .unix(path: "/a b")] {
            XCTAssertEqual(try Endpoint(parsing: endpoint.description), endpoint)
        }
        XCTAssertEqual(Endpoint.tcp(host: "::1", port: 9).description, "[::1]:9")
    }
}
