import Foundation
import Logging
import SubscriptionSystem

#if canImport(Glibc)
    import Glibc
#endif

/// subd's log format: one line per event on stderr, written with a single write(2) so lines from different
/// threads never interleave:
///
///     2026-11-21T20:31:57.123Z info listening on tcp 127.0.0.1:7827
///     2026-11-21T20:32:00.456Z warning slow consumer cut off: ... session=7 pending=33554688
///
/// When stderr is the journal (systemd sets `JOURNAL_STREAM` to its device and inode), each line starts with its
/// syslog priority instead of a timestamp (the journal stamps lines itself), so `journalctl -p warning` works:
///
///     <6>info listening on tcp 127.0.0.1:7827
///     <4>warning slow consumer cut off: ... session=7 pending=33554688
struct LogLineHandler: LogHandler {
    /// The level every subd logger shares; setting it here sets it for all of them.
    let levelSwitch: LogLevelSwitch
    /// True when lines carry `<N>` priority prefixes for the journal.
    let journal: Bool
    var metadata: Logger.Metadata = [:]

    var logLevel: Logger.Level {
        get { levelSwitch.level }
        set { levelSwitch.level = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var line = journal ? Self.priorityPrefix(event.level) : UTCTimestamp.now() + " "
        line += "\(event.level) \(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        for key in merged.keys.sorted() {
            line += " \(key)=\(merged[key]!)"
        }
        // One event, one line: a line break inside a message would start a line without a priority.
        line = line.replacingOccurrences(of: "\n", with: " ") + "\n"
        line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    }

    /// The sd-daemon.h prefix for `level`: `<7>` debug (and trace) up to `<2>` critical.
    static func priorityPrefix(_ level: Logger.Level) -> String {
        switch level {
        case .trace, .debug: return "<7>"
        case .info: return "<6>"
        case .notice: return "<5>"
        case .warning: return "<4>"
        case .error: return "<3>"
        case .critical: return "<2>"
        }
    }

    /// True when stderr is the stream `JOURNAL_STREAM` names (`DEVICE:INODE`), as systemd.exec(5) advises checking:
    /// a child that inherited the variable but has its stderr elsewhere gets plain lines.
    static func standardErrorIsJournal() -> Bool {
        guard let value = getenv("JOURNAL_STREAM").map({ String(cString: $0) }) else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }
}
