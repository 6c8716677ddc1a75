@preconcurrency import Glibc

/// Writes to stdout. stdout is line-buffered (see ``Subctl/main()``); payload bytes are flushed at once.
enum Output {
    /// Prints one line of text. Returns false once stdout cannot be written (e.g. its reader went away: SIGPIPE
    /// is ignored, so that shows up as EPIPE). The error indicator is checked, not only fflush's result: with line
    /// buffering the failed write happens inside fputc, and the later fflush has nothing left to fail on.
    @discardableResult
    static func line(_ text: String) -> Bool {
        fputs(text, stdout)
        fputc(0x0A, stdout)
        return fflush(stdout) == 0 && ferror(stdout) == 0
    }

    /// Writes `bytes` followed by LF, and flushes. Returns false once stdout cannot be written.
    @discardableResult
    static func bytesLine(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            if raw.count > 0 { _ = fwrite(raw.baseAddress, 1, raw.count, stdout) }
        }
        fputc(0x0A, stdout)
        return fflush(stdout) == 0 && ferror(stdout) == 0
    }

    /// Writes `bytes` exactly (no LF added), and flushes. Returns false once stdout cannot be written.
    @discardableResult
    static func bytes(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            if raw.count > 0 { _ = fwrite(raw.baseAddress, 1, raw.count, stdout) }
        }
        return fflush(stdout) == 0 && ferror(stdout) == 0
    }
}
