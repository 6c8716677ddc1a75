import SubscriptionWire

/// A created number as the state keeps it: its name and its kind. Two are equal when their names have the same
/// bytes (``ExactName``; not `String ==`, under which canonically equivalent spellings are equal) and their kinds are.
public struct StoredNumber: Equatable, Hashable, Sendable {
    /// What a number is: plain (messages pass through), or retained (its current value and revision are kept).
    public enum Kind: UInt8, Equatable, Hashable, Sendable {
        /// `CREATE <number>`.
        case plain = 0
        /// `CREATE <number> retain`.
        case retained = 1
    }

    /// The number's name, as the wire spells it.
    public var name: String
    /// Its kind, fixed when it was created.
    public var kind: Kind

    /// A number named `name` of kind `kind`.
    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }

    /// Same name bytes, same kind.
    public static func == (lhs: StoredNumber, rhs: StoredNumber) -> Bool {
        lhs.kind == rhs.kind && ExactName(lhs.name) == ExactName(rhs.name)
    }

    /// Hashes the name's bytes and the kind.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactName(name))
        hasher.combine(kind)
    }
}

/// The current value of a retained number: the last publication to it, with its revision. Two are equal when they
/// hold the same bytes: the number, the sender and the info pairs are compared as bytes (``ExactName``), not as
/// Swift Strings.
public struct StoredValue: Equatable, Hashable, Sendable {
    /// The retained number it belongs to.
    public var number: String
    /// Its revision: 1 for the first publication after the number was created, then one more per publication.
    public var revision: UInt64
    /// The publisher's client name (`HELLO name=`), if it gave one.
    public var sender: String?
    /// The publication's info pairs, in the publisher's order.
    public var info: [InfoPair]
    /// The message bytes.
    public var payload: [UInt8]

    /// A value of `number` at `revision`.
    public init(number: String, revision: UInt64, sender: String? = nil, info: [InfoPair] = [], payload: [UInt8]) {
        self.number = number
        self.revision = revision
        self.sender = sender
        self.info = info
        self.payload = payload
    }

    /// Same number, revision, sender, info pairs and payload, every text compared by its bytes.
    public static func == (lhs: StoredValue, rhs: StoredValue) -> Bool {
        lhs.revision == rhs.revision && lhs.payload == rhs.payload && ExactName(lhs.number) == ExactName(rhs.number)
            && lhs.sender.map { ExactName($0) } == rhs.sender.map { ExactName($0) }
            && lhs.info.elementsEqual(rhs.info) { left, right in
                ExactName(left.key) == ExactName(right.key) && ExactName(left.value) == ExactName(right.value)
            }
    }

    /// Hashes the number's bytes, the revision and the payload.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ExactName(number))
        hasher.combine(revision)
        hasher.combine(payload)
    }
}

/// What a state directory held when it was opened: the numbers to create again, and the retained values to put
/// back.
public struct RecoveredState: Equatable, Sendable {
    /// Every created number, in the order the numbers were created (the oldest first).
    public var numbers: [StoredNumber]
    /// The current value of each retained number that has one, by number. A retained number that was never
    /// published to has none (revision 0). Keyed by the name's bytes: `caf\u{E9}` and `cafe\u{301}` are two
    /// numbers with a value each, as on the wire (a `String` key would merge them).
    public var values: [ExactName: StoredValue]

    /// A state of `numbers` and `values`.
    public init(numbers: [StoredNumber] = [], values: [ExactName: StoredValue] = [:]) {
        self.numbers = numbers
        self.values = values
    }

    /// Nothing stored: a new state directory.
    public var isEmpty: Bool { numbers.isEmpty }

    /// The kind of the number whose bytes are `name`'s, or nil when it is not a stored number.
    public func kind(of name: String) -> StoredNumber.Kind? {
        let exact = ExactName(name)
        return numbers.first { ExactName($0.name) == exact }?.kind
    }

    /// The current value of the number whose bytes are `name`'s, or nil when it has none.
    public func value(of name: String) -> StoredValue? {
        values[ExactName(name)]
    }
}
