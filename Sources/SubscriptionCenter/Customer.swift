import SubscriptionWire

/// Something that can receive messages from the center. By default the center holds customers **weakly**: a
/// customer that is released by its owner is gone from every number at once, without an explicit unsubscribe.
///
/// A customer whose owner always ends it explicitly (the daemon's sessions: a closing session leaves the center at
/// once) may ask to be held strongly instead (``retention``): it then stays until its last subscription is removed
/// (``SubscriptionCenter/removeAll(_:)``), and no weak reference to it is ever made, which spares every delivery a
/// weak load and the slow reference counting of an object with weak references.
///
/// In the daemon a customer is a client session; in tests it is any small class.
public protocol Customer<Message>: AnyObject {
    /// What the center delivers (for the daemon: a `Publication`, whose `MSG` frame is shared by every receiver).
    associatedtype Message

    /// Called once per matching send, however many of this customer's subscriptions match the number.
    /// Return false if the message could not be accepted (it is then not counted as received).
    ///
    /// It may call back into the center (subscribe, unsubscribe, send, ...).
    @inlinable func receive(_ message: Message, on number: String) -> Bool

    /// Called instead of ``receive(_:on:)`` when the message reaches this customer through its subscription in a
    /// queue group: of all the group's matching subscriptions, this one was chosen (round-robin). The default
    /// forwards to ``receive(_:on:)``; the daemon marks the message `group=<name>`.
    @inlinable func receive(_ message: Message, on number: String, throughGroup group: String) -> Bool

    /// Called when a number this customer was subscribed to exactly was removed (the daemon's `GONE` push); the
    /// subscription is gone already. Wildcard subscriptions that matched the number stay, and are not told.
    ///
    /// It may call back into the center.
    @inlinable func numberRemoved(_ number: String)

    /// How the center holds this customer; ``CustomerRetention/weak`` unless the customer says otherwise.
    @inlinable var retention: CustomerRetention { get }
}

/// How the center holds a customer.
public enum CustomerRetention: Sendable {
    /// Weakly: a released customer is gone from the center at once (NSNotificationCenter's observers).
    case weak
    /// Strongly, until its last subscription is removed: for customers whose owner ends them explicitly with
    /// ``SubscriptionCenter/removeAll(_:)`` (a forgotten call keeps the customer alive; it never dangles).
    case untilRemoved
}

extension Customer {
    /// Weakly, by default.
    @inlinable public var retention: CustomerRetention { .weak }

    /// As any other delivery, by default.
    @inlinable public func receive(_ message: Message, on number: String, throughGroup group: String) -> Bool {
        receive(message, on: number)
    }
}

/// The seed of the design: `NSNotificationCenter`, with its words mapped to ours.
///
/// | NSNotificationCenter            | subd                                                   |
/// | ------------------------------- | ------------------------------------------------------ |
/// | notification name               | subscription **number** (`SCIENCE.physics`)            |
/// | observer (held weakly)          | **customer**: weakly, or until removed (a session)     |
/// | `addObserver(…, name: nil, …)`  | subscribing to the pattern `>` (every number)          |
/// | `object:` filter                | `from:`: only messages whose sender named itself so    |
/// | `post(name:object:)`            | `send(_:to:from:)`                                     |
/// | `removeObserver(_:)`            | `removeAll(_:)`                                        |
///
/// Unlike notification names, numbers are created and removed explicitly, and patterns may hold the
/// wildcards `*` (one token) and `>` (one or more trailing tokens).
public typealias Observer<Message> = any Customer<Message>
