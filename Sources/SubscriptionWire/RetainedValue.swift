/// The current value of a retained number (docs/PROTOCOL.md, Retained numbers): the latest
/// publication to it, with the revision it was given (KVO's value). One type for the in-process hub
/// (`NotificationHub.value(of:)`, each `NotificationHub.Change`) and the network clients (`SubscriptionClient.get`,
/// each `Watch.Change`), so a value moves between them as it is.
///
/// ```swift
/// if let price = try await client.get("PRICE") {
///     print(price.text ?? "", "revision", price.revision, price.info["unit"] ?? "")
/// }
/// ```
public struct RetainedValue: Sendable, Equatable {
    /// The retained number.
    public var number: String
    /// The payload, byte for byte.
    public var payload: [UInt8]
    /// The revision of this publication (`rev=`): 1 for the first publication to the number, then one more for each.
    public var revision: Int
    /// The publisher's name (`HELLO name=`, or the poster's `from:`), when it gave one.
    public var from: String?
    /// The publisher's info pairs in the order it gave them, values exactly as sent.
    public var infoPairs: [InfoPair]

    /// Makes a value.
    public init(number: String, payload: [UInt8], revision: Int, from: String? = nil, info: [InfoPair] = []) {
        self.number = number
        self.payload = payload
        self.revision = revision
        self.from = from
        self.infoPairs = info
    }

    /// The info pairs by key (the notification's `userInfo`), values exactly as sent; should a key come twice, its
    /// first value.
    public var info: [String: String] {
        Dictionary(infoPairs.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    /// The payload as text, or nil when it is not valid UTF-8.
    public var text: String? {
        String(validating: payload, as: UTF8.self)
    }
}
