import Glibc

/// One complete thing the scanner found in the server's byte stream.
enum ServerFrame {
    /// A whole `MSG` push: header line, payload and the LF after it; with `readsSequence`, the decimal number the
    /// payload starts with (nil when it starts with no digit, or when the scanner does not read payloads).
    case message(sequence: Int?)
    /// `+OK`, with its argument when that is a decimal integer (`+OK 10`), else nil (`+OK created`).
    case ok(Int?)
    /// `+PONG` with or without text.
    case pong
    /// An `-ERR` reply; the whole line.
    case error(String)
    /// A whole `*<n>` list reply.
    case list
    /// Any other reply or push line (e.g. `GONE`), which the benchmark ignores.
    case other
}

/// Walks the server's bytes once with a small state machine, without a String per message.
///
/// Lines are parsed in place in the read buffer; only a line split across two reads is copied. A `MSG` payload is
/// skipped by count; only a scanner made with `readsSequence` looks at its leading digits.
struct FrameScanner {
    private enum State {
        case line
        case payload(remaining: Int)
        case payloadEnd
        case listLines(remaining: Int)
    }

    /// What a complete line asks the scanner to do.
    private enum LineResult {
        case frame(ServerFrame)
        case payload(Int)
        case list(Int)
        case blank
        case malformed(String)
    }

    private var state = State.line
    private var partial: [UInt8] = []
    private let maxLine: Int
    private let readsSequence: Bool
    /// The leading decimal number of the current payload so far, and whether its digits may still go on.
    private var sequence: Int?
    private var sequenceOpen = false

    /// A scanner that rejects control lines longer than `maxLine` bytes; with `readsSequence`, each `MSG` frame
    /// carries the decimal number its payload starts with.
    init(maxLine: Int = 65536, readsSequence: Bool = false) {
        self.maxLine = maxLine
        self.readsSequence = readsSequence
        partial.reserveCapacity(256)
    }

    /// Consumes `bytes` (any split of the stream) and calls `emit` for each frame completed in them, in order.
    mutating func scan(_ bytes: UnsafeRawBufferPointer, _ emit: (ServerFrame) -> Void) throws(BenchError) {
        guard let base = bytes.baseAddress else { return }
        let end = bytes.count
        var index = 0
        while index < end {
            switch state {
            case .payload(let remaining):
                let taken = min(remaining, end - index)
                if sequenceOpen { readSequence(UnsafeRawBufferPointer(start: base + index, count: taken)) }
                index += taken
                state = taken == remaining ? .payloadEnd : .payload(remaining: remaining - taken)
            case .payloadEnd:
                guard base.load(fromByteOffset: index, as: UInt8.self) == 0x0A else {
                    throw .protocolViolation("no LF after a MSG payload")
                }
                index += 1
                state = .line
                emit(.message(sequence: sequence))
            case .line, .listLines:
                let start = base + index
                guard let newline = memchr(start, 0x0A, end - index) else {
                    partial.append(contentsOf: UnsafeRawBufferPointer(start: start, count: end - index))
                    guard partial.count <= maxLine else {
                        throw .protocolViolation("a line longer than \(maxLine) bytes")
                    }
                    return
                }
                let length = UnsafeRawPointer(newline) - start
                let result: LineResult
                if partial.isEmpty {
                    result = Self.parse(line: UnsafeRawBufferPointer(start: start, count: length))
                } else {
                    partial.append(contentsOf: UnsafeRawBufferPointer(start: start, count: length))
                    result = partial.withUnsafeBytes { Self.parse(line: $0) }
                    partial.removeAll(keepingCapacity: true)
                }
                index += length + 1
                try apply(result, emit)
            }
        }
    }

    private mutating func apply(_ result: LineResult, _ emit: (ServerFrame) -> Void) throws(BenchError) {
        if case .listLines(let remaining) = state {
            if case .blank = result { return }
            if remaining > 1 {
                state = .listLines(remaining: remaining - 1)
            } else {
                state = .line
                emit(.list)
            }
            return
        }
        switch result {
        case .frame(let frame): emit(frame)
        case .payload(let count):
            state = .payload(remaining: count)
            sequence = nil
            sequenceOpen = readsSequence
        case .list(let count):
            if count == 0 { emit(.list) } else { state = .listLines(remaining: count) }
        case .blank: break
        case .malformed(let text): throw .protocolViolation(text)
        }
    }

    /// Adds the leading digits of `bytes` (more of the current payload) to `sequence`; stops at the first other byte.
    private mutating func readSequence(_ bytes: UnsafeRawBufferPointer) {
        for byte in bytes {
            guard byte >= 0x30 && byte <= 0x39, (sequence ?? 0) < Int.max / 10 - 9 else {
                sequenceOpen = false
                return
            }
            sequence = (sequence ?? 0) * 10 + Int(byte - 0x30)
        }
    }

    /// Classifies one line (LF removed; a CR before it is ignored).
    private static func parse(line raw: UnsafeRawBufferPointer) -> LineResult {
        var line = raw
        if let last = line.last, last == 0x0D { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
        guard let first = line.first else { return .blank }
        switch first {
        case UInt8(ascii: "M") where startsWith(line, "MSG "):
            // MSG <number> <nbytes>[ key=value...]
            var index = 4
            while index < line.count, line[index] == 0x20 { index += 1 }
            while index < line.count, line[index] != 0x20 { index += 1 }
            while index < line.count, line[index] == 0x20 { index += 1 }
            guard let count = decimal(line, from: index, stoppingAtSpace: true) else {
                return .malformed("bad MSG line '\(String(decoding: line, as: UTF8.self))'")
            }
            return .payload(count)
        case UInt8(ascii: "+"):
            if startsWith(line, "+OK") {
                guard line.count > 3, line[3] == 0x20 else { return .frame(.ok(nil)) }
                return .frame(.ok(decimal(line, from: 4, stoppingAtSpace: false)))
            }
            return .frame(startsWith(line, "+PONG") ? .pong : .other)
        case UInt8(ascii: "-"):
            return .frame(.error(String(decoding: line, as: UTF8.self)))
        case UInt8(ascii: "*"):
            guard let count = decimal(line, from: 1, stoppingAtSpace: false) else {
                return .malformed("bad list header '\(String(decoding: line, as: UTF8.self))'")
            }
            return .list(count)
        default:
            return .frame(.other)
        }
    }

    private static func startsWith(_ line: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        let length = prefix.utf8CodeUnitCount
        guard line.count >= length, let base = line.baseAddress else { return false }
        return memcmp(base, prefix.utf8Start, length) == 0
    }

    /// The decimal integer at `from`, ending at the line's end (or a space when `stoppingAtSpace`).
    private static func decimal(_ line: UnsafeRawBufferPointer, from: Int, stoppingAtSpace: Bool) -> Int? {
        var value = 0
        var index = from
        while index < line.count {
            let byte = line[index]
            if byte == 0x20 && stoppingAtSpace { break }
            guard byte >= 0x30 && byte <= 0x39, value < Int.max / 10 - 9 else { return nil }
            value = value * 10 + Int(byte - 0x30)
            index += 1
        }
        return index > from ? value : nil
    }
}
