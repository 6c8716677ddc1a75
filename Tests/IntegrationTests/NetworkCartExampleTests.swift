import Foundation
import XCTest

/// `Examples/NetworkCart/main.swift`, run against a real subd (alone, and second in a list whose first server is
/// down), prints what docs/SWIFT.md says the cart prints. (The page's own copy of the cart, like every block of it, is
/// compiled and run by `make consumer-test`, scripts/consumer-test.sh.)
final class NetworkCartExampleTests: IntegrationTestCase {
    private static let printed = """
        1
        CART.changes cart plus [:]
        CART.count cart 1 ["unit": "items"]
        (none) -> 1
        CART.count is gone

        """

    func testTheNetworkCartPrintsWhatTheSwiftPageShows() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/SWIFT.md"), encoding: .utf8)
        XCTAssertTrue(page.contains("```text\n" + Self.printed + "```\n"), "docs/SWIFT.md shows what the cart prints")

        let gone = try Daemon()
        let down = gone.server
        XCTAssertEqual(gone.stop(), 0)
        let daemon = try startDaemon()
        for servers in [[daemon.server], [down, daemon.server]] {
            let example = try ChildProcess(
                executable: try BinaryLocator.executable("network-cart"), arguments: servers, environment: [:],
                label: "network-cart")
            XCTAssertEqual(example.waitForExit(timeout: 20), 0, example.stderr.text)
            example.stdout.waitForEnd(timeout: 5)
            XCTAssertEqual(example.stdout.text, Self.printed, "servers \(servers)")
        }
    }
}
