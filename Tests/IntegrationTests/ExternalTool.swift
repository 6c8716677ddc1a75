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
}
