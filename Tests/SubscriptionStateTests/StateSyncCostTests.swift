import Glibc
import XCTest

@testable import SubscriptionState

/// What durability costs on this machine's disk, with the real system calls: printed, never asserted (a shared
/// machine's timings vary). Run alone: `swift test --filter StateSyncCostTests`.
final class StateSyncCostTests: XCTestCase {
    func testPrintTheCostOfCreatesAndCommits() throws {
        let directory = TemporaryDirectory()
        defer { directory.remove() }
        let (store, _, _) = try StateStore.open(directory: directory.path)
        // Small enough to stay well under a second on a fast disk and a few seconds on a slow one (~600 syncs).
        let rounds = 200

        var start = now()
        for i in 0..<rounds { try store.numberCreated("N\(i)", kind: .retained) }
        let creates = now() - start

        start = now()
        for i in 0..<rounds {
            try store.valuePublished(StoredValue(number: "N\(i)", revision: 1, payload: [UInt8](repeating: 7, count: 128)))
            try store.commit()
        }
        let commits = now() - start

        start = now()
        for revision in 2..<(2 + 100 * rounds) {
            let value = StoredValue(number: "N0", revision: UInt64(revision), payload: [UInt8](repeating: 7, count: 128))
            try store.valuePublished(value)
            if revision % 100 == 0 { try store.commit() }
        }
        let batches = now() - start

        start = now()
        for revision in 0..<(10 * rounds) {
            try store.valuePublished(
                StoredValue(number: "N1", revision: UInt64(2 + revision), payload: [UInt8](repeating: 7, count: 128)))
        }
        let appends = now() - start
        start = now()
        try store.flush()
        let flush = now() - start
        try store.close()

        func micro(_ nanoseconds: UInt64, _ count: Int) -> String {
            String(Double(nanoseconds) / Double(count) / 1000)
        }
        print("state sync cost: numberCreated (append + write + fdatasync): \(micro(creates, rounds)) µs each")
        print("state sync cost: valuePublished + commit (one 128-byte value, write + fdatasync): \(micro(commits, rounds)) µs each")
        print("state sync cost: 100 valuePublished + one commit: \(micro(batches, rounds)) µs per commit")
        print("state sync cost: valuePublished alone (encode + CRC of a 128-byte value): \(micro(appends, 10 * rounds)) µs each")
        print("state sync cost: flush of \(10 * rounds) values (one write, no sync): \(micro(flush, 1)) µs")
        print("state sync cost: \(store.counters)")
    }

    private func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
