import Foundation

/// A command the tests run to completion: `mount`, `cc`, iproute2's tools.
enum ExternalTool {
    /// Runs `arguments` (the tool, found on PATH, then its arguments) and returns its stdout; throws, with its
    /// stderr, when it fails or runs longer than `timeout` seconds (with `missing` as a hint when it is not found).
    @discardableResult
    static func run(_ arguments: [String], timeout: TimeInterval = 60, missing: String? = nil) throws -> String {
        let command = arguments.joined(separator: " ")
        let child = try ChildProcess(
            executable: URL(fileURLWithPath: "/usr/bin/env"), arguments: arguments, label: arguments.first ?? "env")
        guard let status = child.waitForExit(timeout: timeout) else {
            child.kill9IfRunning()
            throw HarnessError.timeout("`\(command)` did not exit within \(timeout) s")
        }
        child.stdout.waitForEnd(timeout: 5)
        child.stderr.waitForEnd(timeout: 5)
        guard status == 0 else {
            let hint = status == 127 ? missing.map { " (\($0))" } ?? "" : ""
            throw HarnessError.process("`\(command)` exited with status \(status)\(hint): \(child.stderr.text)")
        }
        return child.stdout.text
    }

    /// A python3 that can import `module`: Debian's /usr/bin/python3 first (where Debian's `package` installs it),
    /// then the python3s of PATH (a pyenv one there may lack it). Throws, naming `package`, when none can: the test
    /// fails rather than skips, as `make deps-test` installs it.
    static func python(importing module: String, package: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        var tried: [String] = []
        for directory in ["/usr/bin"] + path.split(separator: ":").map(String.init) {
            let candidate = URL(fileURLWithPath: directory).appendingPathComponent("python3")
            guard FileManager.default.isExecutableFile(atPath: candidate.path), !tried.contains(candidate.path) else {
                continue
            }
            tried.append(candidate.path)
            let child = try ChildProcess(
                executable: candidate, arguments: ["-c", "import \(module)"], label: "python3")
            if child.waitForExit(timeout: 20) == 0 { return candidate }
        }
        throw HarnessError.missingBinary(
            "no python3 that imports \(module) (tried \(tried.joined(separator: ", "))); `make deps-test` installs "
                + "Debian's \(package)")
    }
}
