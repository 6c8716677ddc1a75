import Foundation
import XCTest

/// `Examples/ShoppingCart`, run as built (`swift build` builds it beside the tests), must print the cart's story:
/// the totals, the retained count's old and new values, and a released controller that no post reaches.
final class ShoppingCartExampleTests: XCTestCase {
    func testShoppingCartPrintsTheCartAndTheCountsOldAndNew() throws {
        let executable = try Self.locate("shopping-cart")
        let process = Process()
        process.executableURL = executable
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        XCTAssertEqual(
            String(decoding: data, as: UTF8.self),
            """
            apple plus: total 1
            apple plus: total 2
            pear plus: total 3
            apple minus: total 2
            total: 2, observers: 1
            count: (none) -> 1 (revision 1)
            count: 1 -> 2 (revision 2)
            count: 2 -> 3 (revision 3)
            count: 3 -> 2 (revision 4)
            controller gone: a plus now reaches 0 observers

            """)
    }

    /// The built executable `name`, next to the test bundle (where SwiftPM puts every product of the build).
    static func locate(_ name: String) throws -> URL {
        var directories: [URL] = []
        for url in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments.first ?? ".")] {
            let resolved = url.resolvingSymlinksInPath()
            directories += [resolved, resolved.deletingLastPathComponent()]
        }
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            directories.append(bundle.bundleURL.deletingLastPathComponent())
        }
        for directory in directories {
            let candidate = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        let why = "no '\(name)' next to the tests: build with `swift build --build-tests`"
        throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: why])
    }
}
