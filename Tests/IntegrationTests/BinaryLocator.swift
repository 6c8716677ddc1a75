import Foundation

/// Finds the `subd` and `subctl` executables under test.
///
/// Order: the directory in env `SUBD_BIN_DIR`; else the directory that holds the running test bundle (with
/// `swift test` that is the SwiftPM bin dir, where `swift build` puts `subd` and `subctl`).
enum BinaryLocator {
    /// The directory holding `subd` and `subctl`, or an error saying where we looked.
    static func directory() throws -> URL {
        let fileManager = FileManager.default
        if let explicit = ProcessInfo.processInfo.environment["SUBD_BIN_DIR"], !explicit.isEmpty {
            let dir = URL(fileURLWithPath: explicit)
            guard fileManager.isExecutableFile(atPath: dir.appendingPathComponent("subd").path) else {
                throw HarnessError.missingBinary("SUBD_BIN_DIR=\(explicit) holds no executable 'subd'")
            }
            return dir
        }
        let candidates = candidateDirectories()
        for dir in candidates where fileManager.isExecutableFile(atPath: dir.appendingPathComponent("subd").path) {
            return dir
        }
        let looked = candidates.map(\.path).joined(separator: ", ")
        throw HarnessError.missingBinary(
            "no executable 'subd' found (looked in: \(looked)); run `swift build` first or set SUBD_BIN_DIR")
    }

    /// The full path of the executable `name` (`subd` or `subctl`) in `directory()`.
    static func executable(_ name: String) throws -> URL {
        let url = try directory().appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw HarnessError.missingBinary("\(url.path) does not exist or is not executable")
        }
        return url
    }

    /// Directories that may hold the binaries: around the main bundle, the test executable and any `.xctest`.
    private static func candidateDirectories() -> [URL] {
        var dirs: [URL] = []
        func add(_ url: URL) {
            let dir = url.standardizedFileURL.resolvingSymlinksInPath()
            if !dirs.contains(dir) { dirs.append(dir) }
        }
        // With `swift test` on Linux the bundle is an executable `.xctest` file inside the bin dir; on macOS it is
        // a directory inside it. Either way the bin dir is the bundle's own directory or its parent.
        for url in [Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments.first ?? ".")] {
            let resolved = url.resolvingSymlinksInPath()
            add(resolved)
            add(resolved.deletingLastPathComponent())
        }
        for bundle in Bundle.allBundles where bundle.bundleURL.pathExtension == "xctest" {
            add(bundle.bundleURL.deletingLastPathComponent())
        }
        return dirs
    }
}
