import Glibc

/// Nanoseconds of `CLOCK_MONOTONIC`, cheap enough to read around every single publish.
enum MonotonicClock {
    /// The current reading in nanoseconds.
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
