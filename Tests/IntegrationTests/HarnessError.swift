import Foundation

/// What went wrong in the test harness itself (as opposed to an assertion about subd's behaviour).
enum HarnessError: Error, CustomStringConvertible {
    /// The `subd` / `subctl` binaries could not be found; the text says where we looked.
    case missingBinary(String)
    /// Waiting for something (a reply, a line, an exit) took longer than allowed.
    case timeout(String)
    /// The peer closed the connection while a reply or push was still expected.
    case closed(String)
    /// The peer sent bytes that do not follow docs/PROTOCOL.md.
    case malformed(String)
    /// A system call failed; carries what was being done and errno.
    case system(String, Int32)
    /// A child process could not be started or did not behave as the harness needs.
    case process(String)

    var description: String {
        switch self {
        case .missingBinary(let text): return "missing binary: \(text)"
        case .timeout(let text): return "timed out: \(text)"
        case .closed(let text): return "connection closed: \(text)"
        case .malformed(let text): return "protocol violation: \(text)"
        case .system(let what, let code): return "\(what) failed: \(String(cString: strerror(code))) (errno \(code))"
        case .process(let text): return "process: \(text)"
        }
    }
}

/// Renders bytes for failure messages: printable ASCII as is, everything else escaped, cut after `limit` bytes.
func describeBytes<C: Collection>(_ bytes: C, limit: Int = 200) -> String where C.Element == UInt8 {
    var out = ""
    for byte in bytes.prefix(limit) {
        switch byte {
        case 0x0A: out += "\\n"
        case 0x0D: out += "\\r"
        case 0x20..<0x7F: out.append(Character(UnicodeScalar(byte)))
        default: out += String(format: "\\x%02x", byte)
        }
    }
    if bytes.count > limit { out += "…(\(bytes.count) bytes)" }
    return out
}
