import SubscriptionWire

/// Where a subd server listens: a TCP host and port, or a Unix stream socket. Parse one with
/// `Endpoint(parsing: text, for: .connecting)`; the rules are SubscriptionWire's ``ServerAddress``.
public typealias Endpoint = ServerAddress
