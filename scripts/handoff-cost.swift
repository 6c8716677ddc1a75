// What a hand-off between two loops costs (issue 26, docs/BENCHMARKS.md "Issue 26"): the primitive the many-loop
// design in docs/ARCHITECTURE.md would use, measured alone, since the design is not built yet. Two serial Dispatch
// queues stand for two loops. The producer's "turn" appends `turn` entries (a pointer pair, as a session and a
// publication would be) to the consumer's inbox under a pthread mutex, and wakes the consumer with one
// `queue.async` when the inbox was empty; the consumer swaps the inbox out whole under the lock and reads every
// entry. Each side's CPU is read with CLOCK_THREAD_CPUTIME_ID around its own blocks, so the figures are CPU per
// entry on each side, not wall time; those leave out what a wake costs before the woken block starts (the worker
// thread's return from the kernel, libdispatch's start and park), so the process's CPU over the whole run
// (getrusage, both sides and Dispatch's own threads) is given too. Also: one uncontended lock and unlock (what a
// command would pay for the center's lock with `threads` above 1).
//
//   make bench-handoff        (swiftc -O scripts/handoff-cost.swift, then runs it)
import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// CPU time of the calling thread, in nanoseconds.
func threadCPU() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// CPU time of the whole process (user and system), in nanoseconds.
func processCPU() -> UInt64 {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    let user = UInt64(usage.ru_utime.tv_sec) * 1_000_000_000 + UInt64(usage.ru_utime.tv_usec) * 1_000
    let system = UInt64(usage.ru_stime.tv_sec) * 1_000_000_000 + UInt64(usage.ru_stime.tv_usec) * 1_000
    return user + system
}

/// Wall clock, in nanoseconds.
func wall() -> UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
}

/// The inbox: entries appended under the mutex by any loop, swapped out whole by its owner. Shared between the two
/// queues only through `lock` (every access to `entries` and `spare` is inside it, or on the owner's queue after a
/// swap, when nobody else can reach the swapped-out array): `@unchecked Sendable` on that invariant.
final class Inbox: @unchecked Sendable {
    private var lock = pthread_mutex_t()
    private var entries: [(UnsafeRawPointer, UnsafeRawPointer)] = []
    private var spare: [(UnsafeRawPointer, UnsafeRawPointer)] = []

    init() {
        pthread_mutex_init(&lock, nil)
        entries.reserveCapacity(4096)
        spare.reserveCapacity(4096)
    }

    /// Appends a turn's entries; true when the inbox was empty (the owner must be woken).
    func append(_ count: Int, _ first: UnsafeRawPointer, _ second: UnsafeRawPointer) -> Bool {
        pthread_mutex_lock(&lock)
        let wasEmpty = entries.isEmpty
        for _ in 0..<count { entries.append((first, second)) }
        pthread_mutex_unlock(&lock)
        return wasEmpty
    }

    /// Takes every entry and reads them; returns how many there were.
    func drain() -> Int {
        pthread_mutex_lock(&lock)
        swap(&entries, &spare)
        pthread_mutex_unlock(&lock)
        var sum = 0
        for entry in spare { sum &+= Int(bitPattern: entry.0) &+ Int(bitPattern: entry.1) }
        let count = spare.count
        spare.removeAll(keepingCapacity: true)
        if sum == 42 { print("") }  // keeps the reads
        return count
    }
}

/// Counters the consumer keeps on its own queue and hands back at the end.
final class Side: @unchecked Sendable {
    var cpu: UInt64 = 0
    var drained = 0
    var wakes = 0
}

func measureHandOff(
    turn: Int, total: Int
) -> (producer: Double, consumer: Double, process: Double, wakes: Int, wall: Double) {
    let producerQueue = DispatchQueue(label: "loop.0")
    let consumerQueue = DispatchQueue(label: "loop.1")
    let inbox = Inbox()
    let consumer = Side()
    let producer = Side()
    let done = DispatchSemaphore(value: 0)
    let producerDone = DispatchSemaphore(value: 0)
    let start = wall()
    let startCPU = processCPU()
    producerQueue.async {
        let first = UnsafeRawPointer(bitPattern: 0x1000)!
        let second = UnsafeRawPointer(bitPattern: 0x2000)!
        var sent = 0
        while sent < total {
            let began = threadCPU()
            let count = min(turn, total - sent)
            let wake = inbox.append(count, first, second)
            if wake {
                consumerQueue.async {
                    let began = threadCPU()
                    consumer.wakes += 1
                    consumer.drained += inbox.drain()
                    consumer.cpu += threadCPU() - began
                    if consumer.drained == total { done.signal() }
                }
            }
            sent += count
            producer.cpu += threadCPU() - began
        }
        producerDone.signal()
    }
    done.wait()
    producerDone.wait()
    let elapsed = Double(wall() - start)
    let process = Double(processCPU() - startCPU) / Double(total)
    return (
        Double(producer.cpu) / Double(total), Double(consumer.cpu) / Double(total), process, consumer.wakes, elapsed
    )
}

func measureLock(_ count: Int) -> Double {
    var lock = pthread_mutex_t()
    pthread_mutex_init(&lock, nil)
    let began = threadCPU()
    for _ in 0..<count {
        pthread_mutex_lock(&lock)
        pthread_mutex_unlock(&lock)
    }
    return Double(threadCPU() - began) / Double(count)
}

setvbuf(stdout, nil, _IOLBF, 0)
let total = 4_000_000
_ = measureLock(1_000_000)
print(String(format: "uncontended lock+unlock: %.1f ns", measureLock(10_000_000)))
for turn in [1, 10, 100, 1000] {
    _ = measureHandOff(turn: turn, total: total / 10)
    let run = measureHandOff(turn: turn, total: total)
    print(
        String(
            format: "hand-off, %4ld entries per turn: CPU per entry: producer %.1f ns, consumer %.1f ns, the "
                + "process %.1f ns; %ld wakes for %ld entries; wall %.1f ns per entry",
            turn, run.producer, run.consumer, run.process, run.wakes, total, run.wall / Double(total)))
}
