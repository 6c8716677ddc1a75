#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

extension StateStore {
    /// Opens the state directory `directory` (made, mode 0700, when missing; its parent must exist), locks it,
    /// and recovers what its log holds.
    ///
    /// - A missing log is a new state: an empty log is written (under the temporary name, synced, renamed, and the
    ///   directory synced), so the log file, once it exists, always has a whole header.
    /// - A write a crash tore at the end of the log is cut off (the file is truncated there and synced) and
    ///   reported in ``RecoveryReport/truncation``: the state is the one before that write.
    /// - A temporary file left by a compaction a crash interrupted is removed: the log was not replaced yet.
    /// - Anything else wrong with the log throws ``StateError/corrupt(path:offset:part:problem:)`` (one line naming
    ///   the file and the offset), and the file is left exactly as it is: subd must stop, never start empty.
    ///
    /// - Returns: the store, ready for the event loop; the recovered state, for the server to create the numbers
    ///   (without calling ``numberCreated(_:kind:)`` for them) and put the values back; and a report to log.
    public static func open(
        directory: String, policy: FsyncPolicy = .default, compaction: CompactionPolicy = .default,
        disk: any StateDisk = SystemDisk()
    ) throws(StateError) -> (StateStore, RecoveredState, RecoveryReport) {
        var directory = directory
        while directory.count > 1 && directory.hasSuffix("/") { directory.removeLast() }
        let logPath = directory + "/" + logFileName
        let temporaryPath = directory + "/" + temporaryFileName

        try FileCalls.makeDirectory(directory)
        let directoryFD = try FileCalls.open(directory, O_RDONLY | O_DIRECTORY)
        var logFD: Int32 = -1
        var opened = false
        defer {
            if !opened {
                if logFD >= 0 { FileCalls.close(logFD) }
                FileCalls.close(directoryFD)
            }
        }
        guard try FileCalls.tryLock(directoryFD, directory) else { throw .locked(directory: directory) }
        let removedTemporaryFile = try FileCalls.removeIfPresent(temporaryPath)

        var report = RecoveryReport(
            path: logPath, created: false, records: 0, bytes: LogFormat.headerSize, numbers: 0, values: 0,
            truncation: nil, removedTemporaryFile: removedTemporaryFile)
        var counters = StateCounters()
        let outcome: LogReplay.Outcome
        if let fd = try FileCalls.openIfPresent(logPath, O_RDWR | O_APPEND) {
            logFD = fd
            let bytes = try FileCalls.readAll(fd, logPath)
            outcome = try bytes.withUnsafeBytes { bytes in
                Result { () throws(StateError) in try LogReplay.replay(bytes, path: logPath) }
            }.get()
            if let reason = outcome.tornReason {
                try FileCalls.truncate(fd, logPath, to: outcome.validLength)
                counters.syncs += 1
                let error = disk.syncFile(fd)
                guard error == 0 else { throw .system(operation: "fdatasync", path: logPath, errno: error) }
                report.truncation = RecoveryReport.Truncation(
                    offset: outcome.validLength, bytes: bytes.count - outcome.validLength, reason: reason)
            }
        } else {
            var file = try NewLogFile(path: temporaryPath, disk: disk)
            do {
                try file.write(LogFormat.header())
                try file.sync()
                try FileCalls.rename(temporaryPath, over: logPath)
            } catch {
                file.abandon()
                throw error
            }
            logFD = file.fd
            counters.bytesWritten += file.size
            counters.syncs += 2
            let error = disk.syncDirectory(directoryFD)
            guard error == 0 else { throw .system(operation: "fsync", path: directory, errno: error) }
            outcome = LogReplay.Outcome(
                state: RecoveredState(), index: LiveIndex(), records: 0, validLength: file.size, tornReason: nil)
            report.created = true
        }
        report.records = outcome.records
        report.bytes = outcome.validLength
        report.numbers = outcome.state.numbers.count
        report.values = outcome.state.values.count

        let store = StateStore(
            directory: directory, policy: policy, compaction: compaction, disk: disk, directoryFD: directoryFD,
            logFD: logFD, index: outcome.index, writtenBytes: outcome.validLength)
        store.counters = counters
        opened = true
        return (store, outcome.state, report)
    }
}

/// A log being written under the temporary name (a new log, or a compaction): written, synced, then renamed over
/// the log by its caller; ``abandon()`` removes it when that fails.
struct NewLogFile {
    let path: String
    let disk: any StateDisk
    let fd: Int32
    private(set) var size = 0

    /// Creates (or empties) the file at `path`, open for appending.
    init(path: String, disk: any StateDisk) throws(StateError) {
        self.path = path
        self.disk = disk
        fd = try FileCalls.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND)
    }

    mutating func write(_ bytes: [UInt8]) throws(StateError) {
        let error = bytes.withUnsafeBytes { StateStore.writeAll($0, to: fd, disk).error }
        guard error == 0 else { throw .system(operation: "write", path: path, errno: error) }
        size += bytes.count
    }

    func sync() throws(StateError) {
        let error = disk.syncFile(fd)
        guard error == 0 else { throw .system(operation: "fdatasync", path: path, errno: error) }
    }

    /// Closes and removes the file (best effort: open removes a leftover one anyway).
    func abandon() {
        FileCalls.close(fd)
        _ = try? FileCalls.removeIfPresent(path)
    }
}
