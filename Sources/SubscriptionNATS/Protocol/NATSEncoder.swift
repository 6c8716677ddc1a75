import SubscriptionWire

/// Writes the frames a client sends: `CONNECT`, `PUB`/`HPUB`, `SUB`, `UNSUB`, `PING`, `PONG`, each ending in CRLF.
/// Pure: appends to a byte array. Subjects, queue names and headers are checked with ``NATSSubject`` first, and
/// nothing is written when one is refused.
public enum NATSEncoder {
    /// `CONNECT {json}`.
    public static func connect(_ fields: NATSConnectFields, into out: inout [UInt8]) {
        out.append(contentsOf: "CONNECT ".utf8)
        out.append(contentsOf: fields.json.utf8)
        out.append(contentsOf: crlf)
    }

    /// `PUB <subject> [reply] <size>` and the payload, or `HPUB <subject> [reply] <header size> <total size>`, the
    /// header block and the payload when `headers` is given (even empty: the block then holds only `NATS/1.0`).
    /// Returns the message's size as the server counts it against `max_payload` (headers and payload).
    @discardableResult
    public static func publish(
        subject: String, replyTo: String? = nil, headers: NATSHeaders? = nil, payload: some Collection<UInt8>,
        into out: inout [UInt8]
    ) throws(NATSError) -> Int {
        try checkSubject(subject, wildcards: false)
        if let replyTo { try checkSubject(replyTo, wildcards: false) }
        guard let headers else {
            out.append(contentsOf: "PUB ".utf8)
            out.append(contentsOf: subject.utf8)
            if let replyTo {
                out.append(0x20)
                out.append(contentsOf: replyTo.utf8)
            }
            out.append(0x20)
            appendDecimal(payload.count, into: &out)
            out.append(contentsOf: crlf)
            out.append(contentsOf: payload)
            out.append(contentsOf: crlf)
            return payload.count
        }
        for field in headers.fields {
            do throws(NATSSubject.Problem) {
                try NATSSubject.checkHeader(field)
            } catch {
                throw .invalidHeader(name: field.name, problem: error)
            }
        }
        let headerCount = NATSHeaderBlock.encodedCount(headers)
        out.append(contentsOf: "HPUB ".utf8)
        out.append(contentsOf: subject.utf8)
        if let replyTo {
            out.append(0x20)
            out.append(contentsOf: replyTo.utf8)
        }
        out.append(0x20)
        appendDecimal(headerCount, into: &out)
        out.append(0x20)
        appendDecimal(headerCount + payload.count, into: &out)
        out.append(contentsOf: crlf)
        NATSHeaderBlock.encode(headers, into: &out)
        out.append(contentsOf: payload)
        out.append(contentsOf: crlf)
        return headerCount + payload.count
    }

    /// `SUB <subject> [queue] <sid>`.
    public static func subscribe(subject: String, queue: String?, sid: UInt64, into out: inout [UInt8])
        throws(NATSError)
    {
        try checkSubject(subject, wildcards: true)
        if let queue {
            do throws(NATSSubject.Problem) {
                try NATSSubject.checkQueue(queue)
            } catch {
                throw .invalidQueue(queue, problem: error)
            }
        }
        out.append(contentsOf: "SUB ".utf8)
        out.append(contentsOf: subject.utf8)
        if let queue {
            out.append(0x20)
            out.append(contentsOf: queue.utf8)
        }
        out.append(0x20)
        appendDecimal(sid, into: &out)
        out.append(contentsOf: crlf)
    }

    /// `UNSUB <sid> [max]`: with `max`, the subscription ends after that many more messages.
    public static func unsubscribe(sid: UInt64, max: Int? = nil, into out: inout [UInt8]) {
        out.append(contentsOf: "UNSUB ".utf8)
        appendDecimal(sid, into: &out)
        if let max {
            out.append(0x20)
            appendDecimal(max, into: &out)
        }
        out.append(contentsOf: crlf)
    }

    /// `PING`.
    public static func ping(into out: inout [UInt8]) { out.append(contentsOf: "PING\r\n".utf8) }

    /// `PONG`.
    public static func pong(into out: inout [UInt8]) { out.append(contentsOf: "PONG\r\n".utf8) }

    static let crlf: [UInt8] = [0x0D, 0x0A]

    private static func checkSubject(_ subject: String, wildcards: Bool) throws(NATSError) {
        do throws(NATSSubject.Problem) {
            try NATSSubject.check(subject, allowWildcards: wildcards)
        } catch {
            throw .invalidSubject(subject, problem: error)
        }
    }

    /// Appends the decimal digits of a non-negative integer, without making a String.
    static func appendDecimal<T: BinaryInteger>(_ value: T, into out: inout [UInt8]) {
        precondition(value >= 0, "a negative count or id: \(value)")
        ASCIIDecimal.append(UInt64(value), to: &out)
    }
}
