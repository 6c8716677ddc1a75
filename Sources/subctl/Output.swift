@preconcurrency import Glibc

/// Writes to stdout. stdout is line-buffered (see ``Subctl/main()``); payload bytes are flushed at once.
enum Output {
    /// Prints one line of text.
    static func line(_ text: String) {
        fputs(text, stdout)
        fputc(0x0A, stdout)
        fflush(stdout)
    }

    /// Writes `bytes` followed by LF, and flushes.
    static func bytesLine(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            if raw.count > 0 { _ = fwrite(raw.baseAddress, 1, raw.count, stdout) }
        }
        fputc(0x0A, stdout)
        fflush(stdout)
    }
}
