import Synchronization

/// The publisher's counters, readable from the watchdog thread while main publishes.
final class PublisherProgress: Sendable {
    /// `PUB` frames written so far.
    let sent = Atomic<Int>(0)
    /// Replies (`+OK n` or `-ERR`) to them received so far.
    let acknowledged = Atomic<Int>(0)
}

/// What the replies to the publishes said.
struct ReplyCheck {
    /// `+OK <receivers>` replies whose count was not the expected one.
    var receiverMismatches = 0
    /// The first wrong reply seen, for the report.
    var firstMismatch: String?
    /// Which reply (from 1, in the order read) ``firstMismatch`` was.
    var firstMismatchAt = 0
    /// The replies read so far.
    var replies = 0
    /// `-ERR` replies to publishes.
    var errors = 0
    /// The first `-ERR` line seen.
    var firstError: String?
}

/// The single publisher connection (plain or TLS), driven from the main thread only, with blocking I/O.
///
/// All frames of one batch are written with one `send` (over TLS: one `SSL_write`): the batch buffer holds the same
/// prebuilt `PUB <number> <size>\n<payload>\n` frame many times over, so publishing copies nothing.
final class Publisher {
    private let connection: BenchConnection
    private let expectedReceivers: Int
    private let frameLength: Int
    private let framesPerBatch: Int
    private let batch: UnsafeMutableRawBufferPointer
    private let readBuffer: UnsafeMutableRawBufferPointer
    private var scanner = FrameScanner()
    /// Counters for the watchdog.
    let progress: PublisherProgress
    /// The replies checked so far.
    private(set) var check = ReplyCheck()

    /// Connects a publisher to `endpoint` (the TLS handshake included) that sends `size`-byte payloads to `number`
    /// and expects `expectedReceivers` per reply, keeping its counts in `progress`.
    init(
        endpoint: BenchEndpoint, number: String, size: Int, window: Int, expectedReceivers: Int,
        progress: PublisherProgress
    ) throws(BenchError) {
        connection = try endpoint.connect()
        self.progress = progress
        self.expectedReceivers = expectedReceivers
        var frame = Array("PUB \(number) \(size)\n".utf8)
        // A payload with every byte value, LF and CR included, so framing by length is really exercised.
        frame.append(contentsOf: (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        frame.append(0x0A)
        let frameLength = frame.count
        let framesPerBatch = max(1, min(window, (4 << 20) / frameLength))
        let batch = UnsafeMutableRawBufferPointer.allocate(byteCount: frameLength * framesPerBatch, alignment: 16)
        frame.withUnsafeBytes { bytes in
            for copy in 0..<framesPerBatch {
                (batch.baseAddress! + copy * frameLength).copyMemory(from: bytes.baseAddress!, byteCount: frameLength)
            }
        }
        self.frameLength = frameLength
        self.framesPerBatch = framesPerBatch
        self.batch = batch
        readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Subscriber.readSize, alignment: 16)
    }

    deinit {
        batch.deallocate()
        readBuffer.deallocate()
    }

    /// The negotiated TLS protocol and cipher, e.g. `TLSv1.3 TLS_AES_256_GCM_SHA384`; nil for plain TCP.
    var negotiated: String? {
        connection.negotiated
    }

    /// Sends a setup command (e.g. `CREATE BENCH`) and waits for its reply; `-ERR` throws.
    func command(_ line: String) throws(BenchError) {
        try connection.writeAll(line + "\n", what: "sending \(line)")
        var refusal: String?
        var replies = 0
        while replies == 0 {
            replies += try readReplies(checkingReceivers: false) { frame in
                if case .error(let text) = frame { refusal = text }
            }
        }
        if let refusal { throw .refused(command: line, reply: refusal) }
    }

    /// Publishes `count` messages keeping at most `window` unacknowledged; returns when all are acknowledged.
    func publish(count: Int, window: Int) throws(BenchError) {
        var sent = 0
        var acknowledged = 0
        // Refill in chunks so a trickle of replies does not turn into one tiny write per reply.
        let refill = max(1, window / 4)
        while acknowledged < count {
            let credit = min(window - (sent - acknowledged), count - sent)
            if credit > 0 && credit >= min(refill, count - sent) {
                try write(frames: credit)
                sent += credit
                progress.sent.store(sent, ordering: .relaxed)
            } else {
                acknowledged += try readReplies(checkingReceivers: true) { _ in }
                progress.acknowledged.store(acknowledged, ordering: .relaxed)
            }
        }
    }

    /// Publishes `samples` messages one at a time, each after the previous reply; returns each round-trip in ns.
    func roundTrips(samples: Int) throws(BenchError) -> [UInt64] {
        var times: [UInt64] = []
        times.reserveCapacity(samples)
        for _ in 0..<samples {
            let start = MonotonicClock.nanoseconds()
            try write(frames: 1)
            var replies = 0
            while replies == 0 { replies += try readReplies(checkingReceivers: true) { _ in } }
            times.append(MonotonicClock.nanoseconds() - start)
            progress.sent.add(1, ordering: .relaxed)
            progress.acknowledged.add(1, ordering: .relaxed)
        }
        return times
    }

    private func write(frames: Int) throws(BenchError) {
        var left = frames
        while left > 0 {
            let now = min(left, framesPerBatch)
            try connection.writeAll(UnsafeRawBufferPointer(rebasing: batch[..<(now * frameLength)]), what: "publishing")
            left -= now
        }
    }

    /// Reads once and returns how many replies there were; with `checkingReceivers` each must be `+OK <receivers>`.
    private func readReplies(checkingReceivers: Bool, _ observe: (ServerFrame) -> Void) throws(BenchError) -> Int {
        let length = try connection.read(into: readBuffer, what: "reading the publisher's replies")
        guard length > 0 else { throw .connectionClosed("to the publisher") }
        var replies = 0
        var check = self.check
        let expected = expectedReceivers
        try scanner.scan(UnsafeRawBufferPointer(rebasing: readBuffer[..<length])) { frame in
            switch frame {
            case .ok(let receivers):
                replies += 1
                check.replies += 1
                if checkingReceivers && receivers != expected {
                    check.receiverMismatches += 1
                    if check.firstMismatch == nil {
                        check.firstMismatch = receivers.map { "+OK \($0)" } ?? "+OK"
                        check.firstMismatchAt = check.replies
                    }
                }
            case .error(let line):
                replies += 1
                check.replies += 1
                check.errors += 1
                if check.firstError == nil { check.firstError = line }
            case .pong, .list:
                replies += 1
            case .message, .other:
                break
            }
            observe(frame)
        }
        self.check = check
        return replies
    }
}
