import Glibc

/// Unbuffered report output: each line goes straight to the file descriptor, so nothing waits in a buffer when a
/// run is stopped and no thread touches C's shared `stdout`/`stderr` objects.
enum Console {
    /// Writes `line` and a newline to standard output.
    static func out(_ line: String) {
        write(line + "\n", to: STDOUT_FILENO)
    }

    /// Writes `subbench: ` + `line` and a newline to standard error.
    static func error(_ line: String) {
        write("subbench: " + line + "\n", to: STDERR_FILENO)
    }

    /// Writes `line` and a newline to standard error as it is (e.g. a quoted line of subd's log).
    static func errorQuote(_ line: String) {
        write(line + "\n", to: STDERR_FILENO)
    }

    private static func write(_ text: String, to fd: Int32) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
