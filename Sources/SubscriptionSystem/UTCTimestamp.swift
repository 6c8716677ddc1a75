#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The wall-clock time as the project prints it: UTC, ISO 8601, milliseconds (`2026-11-21T20:26:00.123Z`), in log
/// lines, `$SYS.` notifications and `subctl listen --json`.
public enum UTCTimestamp {
    /// The current time.
    public static func now() -> String {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        var seconds = spec.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let date =
            pad(Int(parts.tm_year) + 1900, 4) + "-" + pad(Int(parts.tm_mon) + 1, 2) + "-"
            + pad(Int(parts.tm_mday), 2)
        let time = pad(Int(parts.tm_hour), 2) + ":" + pad(Int(parts.tm_min), 2) + ":" + pad(Int(parts.tm_sec), 2)
        return date + "T" + time + "." + pad(Int(spec.tv_nsec) / 1_000_000, 3) + "Z"
    }

    /// `value` in decimal, zero-padded on the left to `width` digits.
    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
