/// A decoder that takes bytes as they arrive (the command parser, the NATS parser, the WebSocket frame decoder), so
/// the tests feed each of them the same ways.
public protocol IncrementalInput {
    /// Appends a copy of `bytes`.
    mutating func append(_ bytes: UnsafeRawBufferPointer)
    /// Lets the caller write up to the space given straight into the buffer (as read(2) does) and returns the count
    /// it wrote.
    @discardableResult
    mutating func withWritableTail(minimumCapacity: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Int)
        rethrows -> Int
}

/// How the input reaches a decoder.
public enum FeedMode: CustomStringConvertible, Sendable {
    /// One append with every byte.
    case allAtOnce
    /// One append per byte.
    case byteByByte
    /// Chunks of random size (0 to 97 bytes, sometimes thousands), written through `withWritableTail` or `append`,
    /// chosen by the seeded generator.
    case randomChunks(seed: UInt64)

    public var description: String {
        switch self {
        case .allAtOnce: return "all at once"
        case .byteByByte: return "one byte at a time"
        case .randomChunks(let seed): return "random chunks, seed \(seed)"
        }
    }

    /// Every mode, with a few seeds.
    public static let all: [FeedMode] = [.allAtOnce, .byteByByte] + (1...6).map { .randomChunks(seed: $0 &* 7919) }

    /// Feeds `input` to `decoder` in this mode, calling `drain` after every append (a whole input, a byte, a chunk).
    public func feed<Decoder: IncrementalInput>(
        _ input: [UInt8], to decoder: inout Decoder, drain: (inout Decoder) -> Void
    ) {
        switch self {
        case .allAtOnce:
            input.withUnsafeBytes { decoder.append($0) }
            drain(&decoder)
        case .byteByByte:
            for byte in input {
                withUnsafeBytes(of: byte) { decoder.append($0) }
                drain(&decoder)
            }
        case .randomChunks(let seed):
            var generator = SeededGenerator(seed: seed)
            var offset = 0
            while offset < input.count {
                let big = Int.random(in: 0..<8, using: &generator) == 0
                let size = min(input.count - offset, Int.random(in: 0...(big ? 5000 : 97), using: &generator))
                let chunk = input[offset..<(offset + size)]
                if Bool.random(using: &generator) {
                    // Ask for more space than is used, as a read(2) into the tail would.
                    let extra = Int.random(in: 0...64, using: &generator)
                    let written = decoder.withWritableTail(minimumCapacity: size + extra) { space in
                        precondition(space.count >= size + extra, "withWritableTail gave less space than asked")
                        chunk.withUnsafeBytes { space.copyMemory(from: $0) }
                        return size
                    }
                    precondition(written == size, "withWritableTail did not commit what was written")
                } else {
                    chunk.withUnsafeBytes { decoder.append($0) }
                }
                offset += size
                drain(&decoder)
            }
        }
    }
}
