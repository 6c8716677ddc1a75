import Dispatch
import Foundation
import Glibc
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
    let failure = Locked<String?>(nil)

    /// Progress of the subscriber numbered `index`.
    init(index: Int) {
        self.index = index
    }
}

/// The points of a run that main waits for, one `DispatchGroup` each; every subscriber leaves each group once
/// (also when it fails, so that main never waits for a dead connection).
///
/// A drain is a `PING` that each subscriber's thread writes when main asks (``Subscriber/requestDrain()``) once
/// every publish of a phase got its `+OK`: each of those messages was queued for the subscriber before the `PING`
/// was read, so when the `+PONG` arrives the subscriber has all of them and its count is final for the phase; there
/// is no need to wait for a count that a lost message never completes.
struct SubscriberMilestones: Sendable {
    /// Left when the `SUB` got its `+OK`.
    let subscribed = DispatchGroup()
    /// Left at the first `+PONG`: the throughput phase's messages are all in.
    let throughputDrained = DispatchGroup()
    /// Left at the second `+PONG`: the latency samples are all in too, the subscriber is done.
    let finalDrained = DispatchGroup()

    fileprivate var all: [DispatchGroup] { [subscribed, throughputDrained, finalDrained] }
}

/// One subscriber connection; its own thread does all the I/O on it with blocking calls (a TLS session must not be
/// used by two threads at once): `SUB`, every read, and the drain `PING`s main asks for through ``DrainRequests``.
struct Subscriber: Sendable {
    /// Size of each read: big reads keep the subscriber from being the bottleneck.
    static let readSize = 256 * 1024

    /// Its counters.
    let progress: SubscriberProgress
    /// Its connection, used by its thread only; main may call `shutdown()` on it to wake the thread at the end.
    let connection: BenchConnection
    /// Main's drain requests to its thread.
    private let drains: DrainRequests

    /// Connects to `endpoint` (the TLS handshake included), then starts a thread that subscribes to `number` and
    /// counts messages, leaving each of `milestones` when reached; the time the count reaches `throughputTarget` is
    /// recorded.
    static func start(
        index: Int, endpoint: BenchEndpoint, number: String, throughputTarget: Int, milestones: SubscriberMilestones
    ) throws(BenchError) -> Subscriber {
        let subscriber = Subscriber(
            progress: SubscriberProgress(index: index), connection: try endpoint.connect(), drains: try DrainRequests())
        for group in milestones.all { group.enter() }
        let thread = Thread {
            subscriber.run(number: number, throughputTarget: throughputTarget, milestones: milestones)
        }
        thread.name = "subscriber-\(index)"
        thread.start()
        return subscriber
    }

    /// Asks the subscriber's thread to send the server a `PING`; when its `+PONG` arrives every message
    /// acknowledged to the publisher before is in. A failed write is recorded by the thread as its failure.
    func requestDrain() {
        drains.request()
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
            try connection.writeAll("SUB \(number)\n", what: "sending SUB")
            var waiter = SubscriberWaiter(connection: connection, drains: drains)
            var pingsSent = 0
            var scanner = FrameScanner()
            var subscribed = false
            var pongs = 0
            var count = 0
            while pongs < 2 {
                while pingsSent < drains.count {
                    try connection.writeAll("PING\n", what: "sending PING to subscriber \(progress.index)")
                    pingsSent += 1
                }
                guard try waiter.socketReadable() else { continue }
                guard let length = try connection.readAvailable(into: buffer, what: "reading messages") else {
                    continue  // a TLS record without application data
                }
                guard length > 0 else {
                    throw .connectionClosed("to subscriber \(progress.index) after \(count) messages")
                }
                var refusal: String?
                // The scanner reads the `length` bytes just read into `buffer`, which lives until the loop ends.
                try scanner.scan(UnsafeRawBufferPointer(rebasing: buffer[..<length])) { frame in
                    switch frame {
                    case .message: count += 1
                    case .ok: subscribed = true
                    case .pong: pongs += 1
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
                if pongs >= 1 { reach(milestones.throughputDrained) }
                if pongs >= 2 { reach(milestones.finalDrained) }
            }
        } catch {
            progress.failure.withLock { $0 = error.description }
        }
        for group in pending { group.leave() }
    }
}

/// A subscriber thread's wait for its socket or for main's drain request, whichever comes first.
private struct SubscriberWaiter {
    private let connection: BenchConnection
    private let drains: DrainRequests
    /// The socket and the wake-up pipe, polled together.
    private var entries: [pollfd]

    /// Waits on `connection`'s socket and `drains`' pipe.
    init(connection: BenchConnection, drains: DrainRequests) {
        self.connection = connection
        self.drains = drains
        entries = [
            pollfd(fd: connection.fd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: drains.wakeFD, events: Int16(POLLIN), revents: 0),
        ]
    }

    /// True when a read will find something (the TLS session holds bytes already, or the socket polled readable,
    /// closed or failed); false when only a drain request woke the thread (its pipe is emptied).
    mutating func socketReadable() throws(BenchError) -> Bool {
        if connection.hasBufferedBytes { return true }
        while true {
            // poll(2) fills in `revents` of the two entries of this array, which it is handed for the call only.
            let ready = entries.withUnsafeMutableBufferPointer { poll($0.baseAddress, 2, -1) }
            if ready >= 0 { break }
            if errno == EINTR { continue }
            throw .io(what: "waiting for messages", errno: errno)
        }
        if entries[1].revents != 0 { drains.clearWake() }
        return entries[0].revents != 0
    }
}
