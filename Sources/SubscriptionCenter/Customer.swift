/// Something that can receive messages from the center. The center holds customers **weakly**: a customer that is
/// released by its owner is gone from every number at once, without an explicit unsubscribe.
///
/// In the daemon a customer is a client session; in tests it is any small class.
public protocol Customer<Message>: AnyObject {
    /// What the center delivers (for the daemon: a `Publication`, whose `MSG` frame is shared by every receiver).
    associatedtype Message

    /// Called once per matching send, however many of this customer's subscriptions match the number.
    /// Return false if the message could not be accepted (it is then not counted as received).
    ///
    /// It may call back into the center (subscribe, unsubscribe, send, ...).
    func receive(_ message: Message, on number: String) -> Bool

    /// Called when a number this customer was subscribed to exactly was removed (the daemon's `GONE` push); the
    /// subscription is gone already. Wildcard subscriptions that matched the number stay, and are not told.
    ///
    /// It may call back into the center.
    func numberRemoved(_ number: String)
}

/// The seed of the design: `NSNotificationCenter`, with its words mapped to ours.
///
/// | NSNotificationCenter            | subd                                                   |
/// | ------------------------------- | ------------------------------------------------------ |
/// | notification name               | subscription **number** (`SCIENCE.physics`)            |
/// | observer (held weakly)          | **customer** (a client session), held weakly too       |
/// | `addObserver(…, name: nil, …)`  | subscribing to the pattern `>` (every number)          |
/// | `object:` filter                | `from:`: only messages whose sender named itself so    |
/// | `post(name:object:)`            | `send(_:to:from:)`                                     |
/// | `removeObserver(_:)`            | `removeAll(_:)`                                        |
///
/// Unlike notification names, numbers are created and removed explicitly, and patterns may hold the
/// wildcards `*` (one token) and `>` (one or more trailing tokens).
public typealias Observer<Message> = any Customer<Message>
