/// Bytes from the server that do not follow the NATS client protocol. Each one ends the connection: the client
/// cannot know where the next frame starts, so it disconnects and reconnects.
public enum NATSProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A control line longer than the limit (``NATSParser/Limits/maxControlLine``), without its CRLF.
    case lineTooLong(limit: Int)
    /// An operation the client does not know (quoted, at most 32 bytes, control bytes as `?`).
    case unknownOperation(String)
    /// A known operation with missing, extra or malformed arguments.
    case malformedArguments(operation: String, reason: String)
    /// A message larger than the server's `max_payload` (headers included).
    case payloadTooBig(size: Int, limit: Int)
    /// A message's payload not followed by CRLF (the announced size was wrong).
    case missingCRLFAfterPayload(subject: String)
    /// A header block that is not `NATS/1.0 ...` lines ending in an empty line.
    case badHeaderBlock(String)
    /// An `INFO` whose JSON could not be read.
    case badInfo(String)

    public var description: String {
        switch self {
        case .lineTooLong(let limit): return "a control line longer than \(limit) bytes"
        case .unknownOperation(let text): return "unknown operation '\(text)'"
        case .malformedArguments(let operation, let reason): return "malformed \(operation): \(reason)"
        case .payloadTooBig(let size, let limit): return "a \(size)-byte message over the \(limit)-byte max_payload"
        case .missingCRLFAfterPayload(let subject): return "no CRLF after the payload of a message on '\(subject)'"
        case .badHeaderBlock(let reason): return "bad header block: \(reason)"
        case .badInfo(let reason): return "bad INFO: \(reason)"
        }
    }
}
