import XCTest

@testable import SubscriptionServer

/// `listen` values go through the wire's address parser (its rules: SubscriptionWireTests' ServerAddressTests); a
/// bad one is a configuration error naming the key and the text.
final class ListenAddressTests: XCTestCase {
    func testParsesWithTheListenerRules() throws {
        XCTAssertEqual(try ListenAddress(parsing: "127.0.0.1:0"), .tcp(host: "127.0.0.1", port: 0))
        XCTAssertEqual(try ListenAddress(parsing: "[::1]:7827"), .tcp(host: "::1", port: 7827))
        XCTAssertEqual(try ListenAddress(parsing: "unix:/run/subd/subd.sock"), .unix(path: "/run/subd/subd.sock"))
    }

    func testRefusalNamesTheKeyAndTheText() {
        XCTAssertThrowsError(try ListenAddress(parsing: "127.0.0.1")) { error in
            XCTAssertEqual("\(error)", "listen: '127.0.0.1' has no port (expected HOST:PORT)")
        }
        XCTAssertThrowsError(try ListenAddress(parsing: "::1:7827")) { error in
            XCTAssertEqual((error as? ConfigurationError)?.key, "listen")
        }
    }
}
