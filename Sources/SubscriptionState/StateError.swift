/// Why the state directory could not be opened, read or written. Every description is one line that names the file
/// (and, for damage, the byte offset), so subd can stop at start with it as it is.
public enum StateError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The log is damaged: `offset` is where the bad header or record starts, `problem` says what is wrong with it.
    /// Never a torn write at the end of the log (that is cut off and reported in ``RecoveryReport``); the file is
    /// left exactly as it was found.
    case corrupt(path: String, offset: Int, part: Part, problem: String)
    /// A system call failed: the operation (`open`, `write`, `fdatasync`...), the file or directory, the errno,
    /// and for a read the offset it was reading.
    case system(operation: String, path: String, errno: Int32, offset: Int? = nil)
    /// Another process (another subd) holds the state directory's lock.
    case locked(directory: String)
    /// An earlier failure left the store unable to promise durability (an fsync failed, or a failed append could
    /// not be undone); every call throws this from then on. The server should exit, and a restart recovers what
    /// is on disk.
    case unusable(cause: String)

    /// The part of the log a ``corrupt(path:offset:part:problem:)`` error is about.
    public enum Part: String, Equatable, Sendable {
        /// The fixed header at offset 0.
        case header
        /// A record.
        case record
    }

    public var description: String {
        switch self {
        case .corrupt(let path, let offset, let part, let problem):
            return "\(path): \(part.rawValue) at offset \(offset): \(problem)"
        case .system(let operation, let path, let errno, let offset):
            let at = offset.map { " at offset \($0)" } ?? ""
            return "\(operation) \(path)\(at): \(errorText(errno))"
        case .locked(let directory):
            return "\(directory): the state directory is in use by another process (its lock is held)"
        case .unusable(let cause):
            return "the state store stopped after a failure it cannot undo (\(cause)); restart to recover from disk"
        }
    }
}

/// `name` in single quotes for a message that must stay one line: control characters and line or paragraph
/// separators (a damaged log may hold any) are written as `\u{XX}`.
func quoted(_ name: String) -> String {
    var text = "'"
    for scalar in name.unicodeScalars {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator:
            text += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
        default:
            text.unicodeScalars.append(scalar)
        }
    }
    return text + "'"
}
