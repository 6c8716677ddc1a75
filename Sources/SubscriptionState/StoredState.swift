import SubscriptionWire

/// A created number as the state keeps it: its name and its kind.
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
}

/// The current value of a retained number: the last publication to it, with its revision.
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
}

/// What a state directory held when it was opened: the numbers to create again, and the retained values to put
/// back.
public struct RecoveredState: Equatable, Sendable {
    /// Every created number, in the order the numbers were created (the oldest first).
    public var numbers: [StoredNumber]
    /// The current value of each retained number that has one, by number. A retained number that was never
    /// published to has none (revision 0).
    public var values: [String: StoredValue]

    /// A state of `numbers` and `values`.
    public init(numbers: [StoredNumber] = [], values: [String: StoredValue] = [:]) {
        self.numbers = numbers
        self.values = values
    }

    /// Nothing stored: a new state directory.
    public var isEmpty: Bool { numbers.isEmpty }

    /// The kind of `name`, or nil when it is not a stored number.
    public func kind(of name: String) -> StoredNumber.Kind? {
        numbers.first { $0.name == name }?.kind
    }
}
