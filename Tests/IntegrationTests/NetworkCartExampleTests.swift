import Foundation
import XCTest

/// The README's "From Swift" network example is `Examples/NetworkCart/main.swift` word for word, and, run against a
/// real subd (alone, and second in a list whose first server is down), prints what the README says it prints.
final class NetworkCartExampleTests: IntegrationTestCase {
    private static let printed = """
        1
        CART.changes cart plus [:]
        CART.count cart 1 ["unit": "items"]
        (none) -> 1
        CART.count is gone

        """

    func testTheReadmeNetworkExampleIsTheExampleAndPrintsWhatTheReadmeShows() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(
            contentsOf: root.appendingPathComponent("Examples/NetworkCart/main.swift"), encoding: .utf8)
        XCTAssertTrue(readme.contains("```swift\n" + source + "```\n"), "README shows Examples/NetworkCart/main.swift")
        XCTAssertTrue(readme.contains("```\n" + Self.printed + "```\n"), "README shows what it prints")

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
