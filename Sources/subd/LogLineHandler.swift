#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Logging

/// subd's log format: one line per event on stderr, written with a single write(2) so lines from different
/// threads never interleave:
///
///     2026-11-21T20:31:57.123Z info listening on tcp 127.0.0.1:7827
///     2026-11-21T20:32:00.456Z warning slow consumer cut off: ... session=7 pending=33554688
struct LogLineHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = Self.timestamp()
        line += " \(event.level) \(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        for key in merged.keys.sorted() {
            line += " \(key)=\(merged[key]!)"
        }
        line += "\n"
        line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }

    /// UTC time with milliseconds, ISO 8601.
    private static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let millis = now.tv_nsec / 1_000_000
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec, millis
        )
    }
}
