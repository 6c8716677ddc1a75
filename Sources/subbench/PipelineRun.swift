import Dispatch
import Foundation
import Glibc
import Synchronization

/// The `--scenario pipeline` run: one connection CREATEs a number, SUBs it, and pipelines `SEND` commands to it
/// without reading, until all are written or writes stall for 1 s (subd stops reading a client whose own output
/// piles up, which is right); subd's RSS is sampled then. Next the connection reads every `MSG` push and `+OK 1`
/// reply, checking their order, while the rest is written; subd's peak RSS must stay within `--max-rss-mib`.
struct PipelineRun {
    /// How long the socket must take nothing before the writer counts it as stalled.
    private static let stallMilliseconds: Int32 = 1000

    /// The parsed command line.
    let options: BenchOptions

    /// Runs the scenario against `host:port` (`pid`, when known, gives subd's RSS); prints the report lines and
    /// returns what went wrong, if anything.
    func measure(host: String, port: String, pid: Int32?, board: ProgressBoard) throws(BenchError) -> [String] {
        let socket = try BenchSocket.connect(host: host, port: port)
        defer { socket.close() }
        try setUp(socket)
        let count = options.messages
        Console.out("subbench: pipeline \(count) self-delivered SENDs x \(options.size) B without reading")

        let stream = SendStream(number: options.number, size: options.size, count: count)
        let start = MonotonicClock.nanoseconds()
        let stalled = try stream.writeUntilStall(
            socket, progress: board.publisher, milliseconds: Self.stallMilliseconds)
        let written = BenchFormat.grouped(stream.framesWritten)
        Console.out(
            stalled
                ? "wrote \(written) of \(BenchFormat.grouped(count)) SENDs, then writes stalled for 1 s "
                    + "(subd paused reading)"
                : "wrote all \(written) SENDs without a stall")
        // The kernel updates VmHWM lazily, so a later reading can be a little lower: the report keeps the highest.
        var peakSeen = 0
        if let pid, let now = residentBytes(pid: pid), let peak = peakResidentBytes(pid: pid) {
            peakSeen = peak
            Console.out("subd RSS then: \(BenchFormat.mebibytes(now)) MiB (VmHWM \(BenchFormat.mebibytes(peak)) MiB)")
        }

        let reader = PipelineReader.start(socket: socket, count: count, progress: board.publisher)
        do {
            try stream.writeRest(socket, progress: board.publisher)
            // Its +PONG comes after every reply and push of the SENDs: the reader's counts are final then.
            try socket.writeAll("PING\n", what: "sending PING after the SENDs")
        } catch {
            socket.shutdown()  // wakes the reader
            _ = reader.wait()
            throw error
        }
        let tally = reader.wait()
        let elapsed = (tally.finishedAt > start ? tally.finishedAt : MonotonicClock.nanoseconds()) - start
        Console.out(
            "read \(tally.messages) MSG pushes and \(tally.replies) replies; all done in "
                + "\(BenchFormat.seconds(elapsed)) s")

        var problems = tally.problems(expected: count)
        if let pid, let last = peakResidentBytes(pid: pid) {
            let peak = max(peakSeen, last)
            Console.out("subd peak RSS: \(BenchFormat.mebibytes(peak)) MiB (limit \(options.maxResidentMiB) MiB)")
            if peak > options.maxResidentMiB << 20 {
                problems.append(
                    "subd's peak RSS \(BenchFormat.mebibytes(peak)) MiB is over the limit of "
                        + "\(options.maxResidentMiB) MiB (--max-rss-mib)")
            }
        } else {
            Console.out("subd peak RSS: not measured" + (pid == nil ? " (give --pid with --server)" : ""))
        }
        return problems
    }

    /// `CREATE <number>` and `SUB <number>`, each answered `+OK ...`; an `-ERR` throws.
    private func setUp(_ socket: BenchSocket) throws(BenchError) {
        let commands = ["CREATE \(options.number)", "SUB \(options.number)"]
        try socket.writeAll(commands.map { $0 + "\n" }.joined(), what: "sending CREATE and SUB")
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 4096, alignment: 16)
        defer { buffer.deallocate() }
        var scanner = FrameScanner()
        var replies: [ServerFrame] = []
        while replies.count < commands.count {
            let length = try socket.read(into: buffer, what: "reading the CREATE and SUB replies")
            guard length > 0 else { throw .connectionClosed("before it answered CREATE and SUB") }
            try scanner.scan(UnsafeRawBufferPointer(rebasing: buffer[..<length])) { frame in
                if case .message = frame { return }
                replies.append(frame)
            }
        }
        for (command, reply) in zip(commands, replies) {
            if case .error(let line) = reply { throw .refused(command: command, reply: line) }
        }
    }
}

/// The pipelined `SEND <number> <payload>` commands, built a batch at a time into one buffer: each payload is its
/// 10-digit sequence number (from 0) followed by filler letters, `size` bytes in all.
final class SendStream {
    /// How many commands the stream holds.
    let count: Int
    private let frameLength: Int
    private let payloadOffset: Int
    private let framesPerBatch: Int
    private let batch: UnsafeMutableRawBufferPointer
    /// Sequence number of the first command in the batch, how many the batch holds, and how many of its bytes
    /// are written.
    private var batchFirst = 0
    private var batchFrames = 0
    private var offset = 0

    /// A stream of `count` commands to `number` with `size`-byte payloads (`size` at least 10).
    init(number: String, size: Int, count: Int) {
        precondition(size >= 10, "the payload holds a 10-digit sequence number")
        let prefix = Array("SEND \(number) ".utf8)
        var frame = prefix
        // Letters only: no space (trailing spaces are trimmed), no CR or LF.
        frame.append(contentsOf: (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) })
        frame.append(0x0A)
        self.count = count
        frameLength = frame.count
        payloadOffset = prefix.count
        framesPerBatch = max(1, (1 << 20) / frame.count)
        batch = UnsafeMutableRawBufferPointer.allocate(byteCount: frame.count * framesPerBatch, alignment: 16)
        frame.withUnsafeBytes { bytes in
            for copy in 0..<framesPerBatch {
                (batch.baseAddress! + copy * frame.count).copyMemory(from: bytes.baseAddress!, byteCount: frame.count)
            }
        }
    }

    deinit {
        batch.deallocate()
    }

    /// Commands written completely so far.
    var framesWritten: Int { batchFirst + offset / frameLength }

    private var batchBytes: Int { batchFrames * frameLength }

    private var isDone: Bool { batchFirst + batchFrames == count && offset == batchBytes }

    /// Writes without blocking until every command is written (returns false) or the socket takes nothing for
    /// `milliseconds` (returns true).
    func writeUntilStall(_ socket: BenchSocket, progress: PublisherProgress, milliseconds: Int32)
        throws(BenchError) -> Bool
    {
        while !isDone {
            if offset == batchBytes { prepareNextBatch() }
            let pending = UnsafeRawBufferPointer(rebasing: batch[offset..<batchBytes])
            let written = try socket.writeAvailable(pending, what: "pipelining SENDs")
            if written > 0 {
                offset += written
                progress.sent.store(framesWritten, ordering: .relaxed)
            } else if try !socket.waitWritable(milliseconds: milliseconds) {
                return true
            }
        }
        return false
    }

    /// Writes every command not written yet, blocking while the socket is full.
    func writeRest(_ socket: BenchSocket, progress: PublisherProgress) throws(BenchError) {
        while !isDone {
            if offset == batchBytes { prepareNextBatch() }
            try socket.writeAll(UnsafeRawBufferPointer(rebasing: batch[offset..<batchBytes]), what: "pipelining SENDs")
            offset = batchBytes
            progress.sent.store(framesWritten, ordering: .relaxed)
        }
    }

    /// Moves on to the next batch and writes each command's sequence number into its payload.
    private func prepareNextBatch() {
        batchFirst += batchFrames
        batchFrames = min(framesPerBatch, count - batchFirst)
        offset = 0
        for index in 0..<batchFrames {
            var sequence = batchFirst + index
            let digits = batch.baseAddress! + index * frameLength + payloadOffset
            for position in stride(from: 9, through: 0, by: -1) {
                digits.storeBytes(of: UInt8(ascii: "0") + UInt8(sequence % 10), toByteOffset: position, as: UInt8.self)
                sequence /= 10
            }
        }
    }
}

/// What the reader saw on the pipelining connection.
struct PipelineTally: Sendable {
    /// `MSG` pushes read.
    var messages = 0
    /// Replies read (`+OK ...` and `-ERR ...`), the final `+PONG` not included.
    var replies = 0
    /// Replies other than `+OK 1`.
    var wrongReplies = 0
    /// The first reply other than `+OK 1`.
    var firstWrongReply: String?
    /// The first `MSG` whose sequence number was not the next one.
    var firstOutOfOrder: String?
    /// The first point where pushes and replies were more than one apart (each SEND's push comes next to its own
    /// reply, before or after it).
    var firstOutOfStep: String?
    /// Frames that are neither a `MSG` nor a reply to a SEND (a list, an unknown push).
    var unexpected = 0
    /// Why reading stopped early, if it did.
    var failure: String?
    /// Monotonic nanoseconds at which the final `+PONG` came; 0 if it did not.
    var finishedAt: UInt64 = 0

    /// Every way this differs from `expected` SENDs each answered by exactly one `MSG` and one `+OK 1`, in order.
    func problems(expected: Int) -> [String] {
        var problems: [String] = []
        if let failure {
            problems.append("reading stopped after \(messages) MSG pushes and \(replies) replies: \(failure)")
        }
        if messages != expected { problems.append("\(messages) MSG pushes arrived for \(expected) SENDs") }
        if replies != expected { problems.append("\(replies) replies arrived for \(expected) SENDs") }
        if wrongReplies > 0 {
            problems.append("\(wrongReplies) replies were not '+OK 1' (first: '\(firstWrongReply ?? "")')")
        }
        if let firstOutOfOrder { problems.append("MSG pushes out of order: \(firstOutOfOrder)") }
        if let firstOutOfStep { problems.append("pushes and replies out of step: \(firstOutOfStep)") }
        if unexpected > 0 { problems.append("\(unexpected) frames that are neither MSG nor a reply to SEND") }
        return problems
    }
}

/// Reads the pipelining connection on its own thread until the `+PONG` that follows the last SEND's reply.
final class PipelineReader: Sendable {
    private let tally = Locked(PipelineTally())
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading `socket`, expecting `count` SENDs' pushes and replies; replies go to `progress.acknowledged`.
    static func start(socket: BenchSocket, count: Int, progress: PublisherProgress) -> PipelineReader {
        let reader = PipelineReader()
        let thread = Thread {
            let result = reader.read(socket, progress: progress)
            reader.tally.withLock { $0 = result }
            // A writer blocked on a connection nobody reads any more would wait forever.
            if result.finishedAt == 0 { socket.shutdown() }
            reader.done.signal()
        }
        thread.name = "pipeline-reader"
        thread.start()
        return reader
    }

    /// Waits for the reader to finish and returns what it saw.
    func wait() -> PipelineTally {
        done.wait()
        done.signal()
        return tally.withLock { $0 }
    }

    private func read(_ socket: BenchSocket, progress: PublisherProgress) -> PipelineTally {
        var tally = PipelineTally()
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Subscriber.readSize, alignment: 16)
        defer { buffer.deallocate() }
        var scanner = FrameScanner(readsSequence: true)
        do throws(BenchError) {
            while tally.finishedAt == 0 {
                let length = try socket.read(into: buffer, what: "reading the pipelined replies")
                guard length > 0 else { throw .connectionClosed("before the last reply") }
                try scanner.scan(UnsafeRawBufferPointer(rebasing: buffer[..<length])) { frame in
                    Self.count(frame, into: &tally)
                }
                progress.acknowledged.store(tally.replies, ordering: .relaxed)
            }
        } catch {
            tally.failure = error.description
        }
        return tally
    }

    private static func count(_ frame: ServerFrame, into tally: inout PipelineTally) {
        switch frame {
        case .message(let sequence):
            if sequence != tally.messages && tally.firstOutOfOrder == nil {
                let got = sequence.map { "sequence \($0)" } ?? "no sequence number"
                tally.firstOutOfOrder = "MSG number \(tally.messages + 1) carried \(got), not \(tally.messages)"
            }
            tally.messages += 1
        case .ok(let receivers):
            tally.replies += 1
            if receivers != 1 {
                tally.wrongReplies += 1
                if tally.firstWrongReply == nil { tally.firstWrongReply = receivers.map { "+OK \($0)" } ?? "+OK" }
            }
        case .error(let line):
            tally.replies += 1
            tally.wrongReplies += 1
            if tally.firstWrongReply == nil { tally.firstWrongReply = line }
        case .pong:
            tally.finishedAt = MonotonicClock.nanoseconds()
        case .list, .other:
            tally.unexpected += 1
        }
        if abs(tally.messages - tally.replies) > 1 && tally.firstOutOfStep == nil {
            tally.firstOutOfStep = "\(tally.messages) MSG pushes and \(tally.replies) replies"
        }
    }
}
