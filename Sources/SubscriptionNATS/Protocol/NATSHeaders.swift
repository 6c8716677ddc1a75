import SubscriptionWire

/// The headers of a NATS message (`HPUB`/`HMSG`): an optional status from the block's first line
/// (`NATS/1.0 503`, `NATS/1.0 404 Message Not Found`) and named fields, in the order they came.
///
/// Names are kept as written. The NATS server compares the names it reads (`Nats-Expected-Last-Subject-Sequence`)
/// exactly, so write them in that form; ``subscript(_:)`` finds a name in any ASCII case.
public struct NATSHeaders: Equatable, Sendable, ExpressibleByDictionaryLiteral {
    /// One header field (names compared in any ASCII case).
    public typealias Field = HeaderField

    /// The fields, in order; a name may appear more than once.
    public var fields: [Field]
    /// The status code of the first line (`503` for no responders, `404`, `408`, `100` for flow control), nil
    /// without one.
    public var status: Int?
    /// The text after the status code (`Message Not Found`), empty without one.
    public var statusDescription: String

    /// No fields, no status.
    public init() {
        self.init([])
    }

    /// Headers with `fields` (and a status, for a test's server side).
    public init(_ fields: [Field], status: Int? = nil, statusDescription: String = "") {
        self.fields = fields
        self.status = status
        self.statusDescription = statusDescription
    }

    /// `["Name": "value", ...]`, in the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements.map { Field(name: $0.0, value: $0.1) })
    }

    /// True without fields and status.
    public var isEmpty: Bool { fields.isEmpty && status == nil }

    /// The first value of `name`, compared in any ASCII case; nil when there is none.
    public subscript(_ name: String) -> String? {
        fields.first { Self.sameName($0.name, name) }?.value
    }

    /// Every value of `name`, in order.
    public func values(of name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    /// Adds a field at the end.
    public mutating func append(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Replaces every field named `name` (any case) by one with `value`, at the place of the first.
    public mutating func set(_ name: String, _ value: String) {
        if let first = fields.firstIndex(where: { Self.sameName($0.name, name) }) {
            fields[first].value = value
            var index = fields.index(after: first)
            while index < fields.endIndex {
                if Self.sameName(fields[index].name, name) { fields.remove(at: index) } else { index += 1 }
            }
        } else {
            append(name, value)
        }
    }

    static func sameName(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lowered($0) == lowered($1) }
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }
}

extension NATSHeaders {
    /// Appends this header block as NATS writes it (`NATS/1.0`, the fields, an empty line), for headers carried
    /// inside a payload (the cluster bridge's batches of publications).
    public func encodeBlock(into bytes: inout [UInt8]) {
        NATSHeaderBlock.encode(self, into: &bytes)
    }

    /// How many bytes ``encodeBlock(into:)`` appends.
    public var encodedBlockCount: Int { NATSHeaderBlock.encodedCount(self) }

    /// The headers of a whole block as ``encodeBlock(into:)`` writes it; `block` is read during the call only.
    public init(block: UnsafeRawBufferPointer) throws(NATSProtocolError) {
        self = try NATSHeaderBlock.parse(block)
    }
}
