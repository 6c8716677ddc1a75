import Dispatch
import Foundation
import Synchronization

/// What one subscriber has seen so far; written by its thread, readable from any thread at any time.
final class SubscriberProgress: Sendable {
    /// The subscriber's position among all subscribers, from 0.
    let index: Int
    /// `MSG` frames received so far.
    let received = Atomic<Int>(0)
    /// Monotonic nanoseconds at which `received` reached the throughput target; 0 until then.
    let throughputDoneAt = Atomic<UInt64>(0)
    /// Why the subscriber stopped early, if it did.
    let failure = Mutex<String?>(nil)

    /// Progress of the subscriber numbered `index`.
    init(index: Int) {
        self.index = index
    }
}

/// The points of a run that main waits for, one `DispatchGroup` each; every subscriber leaves each group once
/// (also when it fails, so that main never waits for a dead connection).
///
/// A drain is a `PING` that main writes once every publish of a phase got its `+OK`: each of those messages was
/// queued for the subscriber before the `PING` was read, so when the `+PONG` arrives the subscriber has all of them
/// and its count is final for the phase; there is no need to wait for a count that a lost message never completes.
struct SubscriberMilestones: Sendable {
    /// Left when the `SUB` got its `+OK`.
    let subscribed = DispatchGroup()
    /// Left at the first `+PONG`: the throughput phase's messages are all in.
    let throughputDrained = DispatchGroup()
    /// Left at the second `+PONG`: the latency samples are all in too, the subscriber is done.
    let finalDrained = DispatchGroup()

    fileprivate var all: [DispatchGroup] { [subscribed, throughputDrained, finalDrained] }
}

/// One subscriber connection, read by its own thread with blocking I/O.
struct Subscriber: Sendable {
    /// Size of each read: big reads keep the subscriber from being the bottleneck.
    static let readSize = 256 * 1024

    /// Its counters.
    let progress: SubscriberProgress
    /// Its connection; main writes `PING` on it to drain.
    let socket: BenchSocket

    /// Connects, then starts a thread that subscribes to `number` and counts messages, leaving each of
    /// `milestones` when reached; the time the count reaches `throughputTarget` is recorded.
    static func start(
        index: Int, host: String, port: String, number: String, throughputTarget: Int,
        milestones: SubscriberMilestones
    ) throws(BenchError) -> Subscriber {
        let socket = try BenchSocket.connect(host: host, port: port)
        let subscriber = Subscriber(progress: SubscriberProgress(index: index), socket: socket)
        for group in milestones.all { group.enter() }
        let thread = Thread {
            subscriber.run(number: number, throughputTarget: throughputTarget, milestones: milestones)
        }
        thread.name = "subscriber-\(index)"
        thread.start()
        return subscriber
    }

    /// Asks the server for a `+PONG`; when it arrives every message acknowledged to the publisher before is in.
    ///
    /// A failed write is not reported here: the connection is then broken, and the reading thread records why.
    func requestDrain() {
        try? socket.writeAll("PING\n", what: "sending PING to subscriber \(progress.index)")
    }

    private func run(number: String, throughputTarget: Int, milestones: SubscriberMilestones) {
        var pending = milestones.all
        func reach(_ group: DispatchGroup) {
            guard let position = pending.firstIndex(where: { $0 === group }) else { return }
            pending.remove(at: position)
            group.leave()
        }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.readSize, alignment: 16)
        defer { buffer.deallocate() }
        do throws(BenchError) {
            try socket.writeAll("SUB \(number)\n", what: "sending SUB")
            var scanner = FrameScanner()
            var subscribed = false
            var drains = 0
            var count = 0
            while drains < 2 {
                let length = try socket.read(into: buffer, what: "reading messages")
                guard length > 0 else {
                    throw .connectionClosed("to subscriber \(progress.index) after \(count) messages")
                }
                var refusal: String?
                try scanner.scan(UnsafeRawBufferPointer(rebasing: buffer[..<length])) { frame in
                    switch frame {
                    case .message: count += 1
                    case .ok: subscribed = true
                    case .pong: drains += 1
                    case .error(let line): refusal = refusal ?? line
                    case .list, .other: break
                    }
                }
                if let refusal { throw .refused(command: "SUB \(number)", reply: refusal) }
                progress.received.store(count, ordering: .relaxed)
                if subscribed { reach(milestones.subscribed) }
                if count >= throughputTarget, progress.throughputDoneAt.load(ordering: .relaxed) == 0 {
                    progress.throughputDoneAt.store(MonotonicClock.nanoseconds(), ordering: .relaxed)
                }
                if drains >= 1 { reach(milestones.throughputDrained) }
                if drains >= 2 { reach(milestones.finalDrained) }
            }
        } catch {
            progress.failure.withLock { $0 = error.description }
        }
        for group in pending { group.leave() }
    }
}
