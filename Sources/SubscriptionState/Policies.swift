/// When retained values are made durable (the `fsync` configuration key). Numbers are not concerned: a `CREATE` or
/// `REMOVE` is always synced before its `+OK`.
public enum FsyncPolicy: String, CaseIterable, Equatable, Sendable {
    /// One fdatasync per event-loop turn that published to a retained number, after the turn's records are written
    /// and before its replies are flushed: an acknowledged value survives a crash of subd and a power loss. The
    /// default. Configuration value `turn`.
    case everyTurn = "turn"
    /// The turn's records are written to the kernel before its replies are flushed (so an acknowledged value
    /// survives a crash of subd) and fdatasync'd once a second by the server's timer: a power loss or kernel crash
    /// may lose the last second of acknowledged values. Configuration value `everysec`.
    case everySecond = "everysec"

    /// ``everyTurn``.
    public static let `default` = FsyncPolicy.everyTurn

    /// The policy a configuration value names (`turn`, `everysec`), or nil.
    public init?(configurationValue: String) {
        self.init(rawValue: configurationValue)
    }

    /// The configuration value that names this policy.
    public var configurationValue: String { rawValue }
}

/// When ``StateStore/compactIfNeeded(currentValue:)`` rewrites the log: once it is longer than `factor` times a
/// compacted log of the live state, and longer than `minimumBytes`. Writing the live state again costs, averaged
/// over the appends that made the log grow, 1 / (factor - 1) of their bytes.
public struct CompactionPolicy: Equatable, Sendable {
    /// How many times the live state the log may grow to.
    public var factor: Int
    /// A log shorter than this is never compacted.
    public var minimumBytes: Int

    /// A policy of `factor` (at least 2) and `minimumBytes`.
    public init(factor: Int, minimumBytes: Int) {
        precondition(factor >= 2, "a compaction factor below 2 would rewrite the log on every append")
        self.factor = factor
        self.minimumBytes = minimumBytes
    }

    /// 4 times the live state, and at least 1 MiB: the log stays under 4 times what it holds, and compaction adds
    /// a third to what appends write.
    public static let `default` = CompactionPolicy(factor: 4, minimumBytes: 1 << 20)
}

/// What opening a state directory found, for the caller to log (one line: ``description``).
public struct RecoveryReport: Equatable, Sendable {
    /// A torn write cut off the end of the log: the crash it came from interrupted an append.
    public struct Truncation: Equatable, Sendable {
        /// Where the cut record started; the log now ends here.
        public var offset: Int
        /// How many bytes were cut.
        public var bytes: Int
        /// What was found there, e.g. `a record cut short (20 of 61 bytes)`.
        public var reason: String
    }

    /// The log's path.
    public var path: String
    /// No log was there: a new, empty one was made.
    public var created: Bool
    /// Records replayed.
    public var records: Int
    /// Bytes of the log after recovery.
    public var bytes: Int
    /// Numbers and values recovered.
    public var numbers: Int
    /// Retained values recovered.
    public var values: Int
    /// The torn write cut off the end, if there was one (log it at warning level).
    public var truncation: Truncation?
    /// A compaction's temporary file was found and removed: a crash came before its rename, and the log was kept.
    public var removedTemporaryFile: Bool

    /// One line, e.g. `state: 3 numbers and 2 values from 7 records (412 bytes) in /var/lib/subd/subd-state.log`.
    public var description: String {
        var line =
            created
            ? "state: new log \(path)"
            : "state: \(numbers) numbers and \(values) values from \(records) records (\(bytes) bytes) in \(path)"
        if let truncation {
            line +=
                "; cut a write torn by a crash at offset \(truncation.offset) (\(truncation.bytes) bytes: "
                + "\(truncation.reason))"
        }
        if removedTemporaryFile { line += "; removed an unfinished compaction's temporary file" }
        return line
    }
}

/// What a compaction did.
public struct CompactionReport: Equatable, Sendable {
    /// Bytes of the log before.
    public var bytesBefore: Int
    /// Bytes of the log after: the live state.
    public var bytesAfter: Int
}

/// Counts of what the store did since it was opened (for STATS or metrics).
public struct StateCounters: Equatable, Sendable {
    /// Records appended.
    public var records = 0
    /// Bytes written to the log (records and compactions).
    public var bytesWritten = 0
    /// fdatasync and fsync calls made.
    public var syncs = 0
    /// Compactions done.
    public var compactions = 0
}
