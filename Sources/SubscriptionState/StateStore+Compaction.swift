import SubscriptionWire

extension StateStore {
    /// Compacts the log (``compact(currentValue:)``) when it is longer than ``compaction`` allows; otherwise does
    /// nothing and returns nil. Call it after a turn's ``endOfTurn()``.
    @discardableResult
    public func compactIfNeeded(currentValue: (_ number: String) -> StoredValue?) throws(StateError)
        -> CompactionReport?
    {
        guard needsCompaction else { return nil }
        return try compact(currentValue: currentValue)
    }

    /// Rewrites the log as the live state alone: a `created` record per number in creation order, each retained
    /// one followed by its current value. The new log is written under ``temporaryFileName``, fdatasync'd,
    /// renamed over the log, and the directory fsync'd, so a crash at any moment leaves the old log or the new one.
    ///
    /// The store knows the numbers and revisions; `currentValue` gives the bytes of each retained number's current
    /// value (the center holds them), and must give the value at the revision the store last recorded. When the
    /// new log cannot be written, it is removed, the error thrown, and the store goes on with the old log.
    @discardableResult
    public func compact(currentValue: (_ number: String) -> StoredValue?) throws(StateError) -> CompactionReport {
        try checkUsable()
        try commit()
        let before = writtenBytes
        var file = try NewLogFile(path: temporaryPath, disk: disk)
        do {
            var buffer = LogFormat.header()
            for number in index.numbersInCreationOrder {
                LogFormat.appendCreated(number.name, kind: number.kind, to: &buffer)
                let revision = index.entries[ExactName(number.name)]!.revision
                if revision > 0 {
                    guard let value = currentValue(number.name), ExactName(value.number) == ExactName(number.name),
                        value.revision == revision
                    else {
                        preconditionFailure(
                            "StateStore.compact: currentValue(\(number.name)) is not the value at revision \(revision)")
                    }
                    LogFormat.appendValue(value, to: &buffer)
                }
                if buffer.count >= 1 << 20 {
                    try file.write(buffer)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            try file.write(buffer)
            try file.sync()
            try FileCalls.rename(file.path, over: logPath)
        } catch {
            file.abandon()
            throw error
        }
        assert(file.size == liveBytes, "a compacted log of \(file.size) bytes, where the index counts \(liveBytes)")
        try installCompactedLog(file.fd, size: file.size)
        return CompactionReport(bytesBefore: before, bytesAfter: file.size)
    }
}
