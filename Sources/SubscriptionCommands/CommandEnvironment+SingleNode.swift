import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// A node alone: nobody else creates, removes or publishes, and nobody is told of interest. A cluster node's
/// environment implements these requirements itself.
extension CommandEnvironment {
    /// A node alone decides by itself.
    @inlinable public func createShared(_ number: String, retained: Bool) -> Reply? { nil }

    /// A node alone decides by itself.
    @inlinable public func removeShared(_ number: String) -> Reply? { nil }

    /// A node alone shares no retained number.
    @inlinable
    public func publishShared(_ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], sender: String?)
        -> Reply?
    { nil }

    /// A node alone has nobody to ask.
    @inlinable
    public func lookUp(
        _ number: String, notFound: ProtocolError,
        retry:
            @escaping @Sendable (inout ClientState, SubscriptionCenter<Publication>, Self) throws(ProtocolError)
            -> Reply
    ) -> Reply? { nil }

    /// A node alone has every value it answers.
    @inlinable
    public func requireCaughtUp(_ pattern: String, in center: SubscriptionCenter<Publication>) throws(ProtocolError) {}

    /// The center's fan-out only. (A closure written here, not a local function: debug builds allocated a context
    /// for the function, one more allocation per PUB than the budget.)
    @inlinable
    public func send(
        _ number: String, sender: String?, info: [InfoPair], payload: ArraySlice<UInt8>,
        in center: SubscriptionCenter<Publication>
    ) throws(CenterError) -> Delivery {
        let receivers = try center.send(to: number, from: sender) { (revision: UInt64?) in
            payload.withUnsafeBytes {
                Publication.make(number: number, sender: sender, revision: revision, info: info, payload: $0)
            }
        }
        return Delivery(receivers: receivers)
    }

    /// `+OK <receivers>`, at once.
    @inlinable public func reply(to delivery: Delivery) -> Reply { .count(delivery.receivers) }

    /// The center's subscription only.
    @inlinable
    public func subscribe(
        _ pattern: String, from: String?, group: String?, in center: SubscriptionCenter<Publication>
    ) throws(CenterError) {
        try center.add(customer, to: pattern, from: from, group: group)
    }

    /// The center's unsubscription only.
    @inlinable
    public func unsubscribe(_ pattern: String, in center: SubscriptionCenter<Publication>) {
        center.remove(customer, from: pattern)
    }
}
