import SubscriptionWire
import XCTest

/// The one parser of server addresses, for a client (`--server`) and for a listener (`listen`, `--listen`).
final class ServerAddressTests: XCTestCase {
    func testClientForms() throws {
        let table: [(String, ServerAddress)] = [
            ("127.0.0.1:7827", .tcp(host: "127.0.0.1", port: 7827)),
            ("localhost:1", .tcp(host: "localhost", port: 1)),
            ("example.org:65535", .tcp(host: "example.org", port: 65535)),
            ("host:07827", .tcp(host: "host", port: 7827)),
            ("[::1]:7000", .tcp(host: "::1", port: 7000)),
            ("[fe80::1%eth0]:7", .tcp(host: "fe80::1%eth0", port: 7)),
            ("[::1]", .tcp(host: "::1", port: 7827)),
            ("subd.local", .tcp(host: "subd.local", port: 7827)),
            ("unix:/run/subd.sock", .unix(path: "/run/subd.sock")),
            ("unix:relative.sock", .unix(path: "relative.sock")),
            ("unix:/a b:c", .unix(path: "/a b:c")),
            ("/tmp/subd.sock", .unix(path: "/tmp/subd.sock")),
        ]
        for (text, address) in table {
            XCTAssertEqual(try ServerAddress(parsing: text, for: .connecting), address, text)
        }
    }

    func testListenerForms() throws {
        let table: [(String, ServerAddress)] = [
            ("127.0.0.1:0", .tcp(host: "127.0.0.1", port: 0)),
            ("0.0.0.0:7827", .tcp(host: "0.0.0.0", port: 7827)),
            ("[::]:65535", .tcp(host: "::", port: 65535)),
            ("unix:/run/subd/subd.sock", .unix(path: "/run/subd/subd.sock")),
        ]
        for (text, address) in table {
            XCTAssertEqual(try ServerAddress(parsing: text, for: .listening), address, text)
        }
    }

    func testInvalidForms() {
        let client = 1...65535
        let listener = 0...65535
        let table: [(String, ServerAddress.Use, ServerAddress.Problem)] = [
            ("", .connecting, .noHost),
            (":7827", .connecting, .noHost),
            ("[]:1", .connecting, .noHost),
            ("host:", .connecting, .badPort(allowed: client)),
            ("host:0", .connecting, .badPort(allowed: client)),
            ("host:65536", .connecting, .badPort(allowed: client)),
            ("host:x", .connecting, .badPort(allowed: client)),
            ("host:+5", .connecting, .badPort(allowed: client)),
            ("host:-1", .connecting, .badPort(allowed: client)),
            ("host: 1", .connecting, .badPort(allowed: client)),
            ("host:000007827", .connecting, .badPort(allowed: client)),
            ("host:99999999999999999999", .connecting, .badPort(allowed: client)),
            ("::1:7827", .connecting, .unbracketedIPv6),
            ("host:7827:1", .connecting, .unbracketedIPv6),
            ("[::1", .connecting, .unclosedBracket),
            ("[::1]x", .connecting, .textAfterBracket),
            ("[::1]7827", .connecting, .textAfterBracket),
            ("unix:", .connecting, .noPath),
            ("ho st:1", .connecting, .forbiddenByteInHost(0x20)),
            ("host\n:1", .connecting, .forbiddenByteInHost(0x0A)),
            ("127.0.0.1", .listening, .noPort),
            ("[::1]", .listening, .noPort),
            ("/tmp/subd.sock", .listening, .noPort),
            ("host:65536", .listening, .badPort(allowed: listener)),
            ("::1:7827", .listening, .unbracketedIPv6),
            ("unix:", .listening, .noPath),
            (":7827", .listening, .noHost),
        ]
        for (text, use, problem) in table {
            XCTAssertThrowsError(try ServerAddress(parsing: text, for: use), "'\(text)' \(use)") { error in
                XCTAssertEqual(error as? ServerAddress.Problem, problem, "'\(text)' \(use)")
            }
        }
    }

    func testDescriptionParsesBack() throws {
        let addresses: [ServerAddress] = [
            .tcp(host: "127.0.0.1", port: 1), .tcp(host: "::1", port: 2), .unix(path: "/a b"), .unix(path: "x.sock"),
        ]
        for address in addresses {
            XCTAssertEqual(try ServerAddress(parsing: address.description, for: .connecting), address)
            XCTAssertEqual(try ServerAddress(parsing: address.description, for: .listening), address)
        }
        XCTAssertEqual(ServerAddress.tcp(host: "::1", port: 9).description, "[::1]:9")
        XCTAssertEqual(ServerAddress.unix(path: "/run/s").description, "unix:/run/s")
    }

    func testProblemsSayWhatToWrite() {
        XCTAssertEqual(
            ServerAddress.Problem.badPort(allowed: 1...65535).description,
            "has no valid port (expected 1 to 65535 after ':')")
        XCTAssertTrue(ServerAddress.Problem.unbracketedIPv6.description.contains("[ADDRESS]:PORT"))
    }
}
