import SubscriptionSystem

#if canImport(Glibc)
    import Glibc
#endif

/// What the process uses, read at each scrape (the `process_*` metrics Prometheus's own clients expose). Each value
/// is nil when it cannot be read (no `/proc`), and is then left out.
struct ProcessResources: Equatable {
    /// Resident memory in bytes (`VmRSS` of `/proc/self/status`).
    var residentBytes: UInt64?
    /// Open descriptors (the entries of `/proc/self/fd`).
    var openDescriptors: Int?
    /// The open-file limit in force (soft `RLIMIT_NOFILE`).
    var maxDescriptors: UInt64?
    /// User and system CPU time, in seconds (getrusage(2)).
    var cpuSeconds: Double?

    /// Reads them now: a read of `/proc/self/status`, a walk of `/proc/self/fd`, two cheap calls.
    static func current() -> ProcessResources {
        ProcessResources(
            residentBytes: residentBytes(), openDescriptors: openDescriptors(), maxDescriptors: maxDescriptors(),
            cpuSeconds: cpuSeconds())
    }

    /// The `VmRSS:` line of a `/proc/PID/status` text, in bytes (the kernel writes it in kB).
    static func residentBytes(inStatus text: some Sequence<UInt8>) -> UInt64? {
        let lines = text.split(separator: UInt8(ascii: "\n"))
        guard let line = lines.first(where: { $0.starts(with: "VmRSS:".utf8) }) else { return nil }
        let fields = line.dropFirst(6).split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
        guard fields.count == 2, fields[1].elementsEqual("kB".utf8),
            let kilobytes = UInt64(String(decoding: fields[0], as: UTF8.self))
        else { return nil }
        return kilobytes * 1024
    }

    // MARK: Private

    private static func residentBytes() -> UInt64? {
        guard let fd = try? Syscall.openForReading("/proc/self/status") else { return nil }
        defer { Syscall.close(fd) }
        var text: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        // The file is about 1.5 KiB; a bound keeps a strange one from growing the buffer.
        while text.count < 65_536 {
            let result = chunk.withUnsafeMutableBytes { try? Syscall.read(fd, $0) }
            guard case .processed(let count) = result, count > 0 else { break }
            text += chunk[..<count]
        }
        return residentBytes(inStatus: text)
    }

    private static func openDescriptors() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        var entries = 0
        while readdir(directory) != nil { entries += 1 }
        closedir(directory)
        // Less ".", ".." and the descriptor opendir itself holds.
        return max(0, entries - 3)
    }

    private static func maxDescriptors() -> UInt64? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        return UInt64(limit.rlim_cur)
    }

    private static func cpuSeconds() -> Double? {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return nil }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
