import SubscriptionWire

/// Why the subscription center refused an operation.
public enum CenterError: Error, Equatable, Sendable {
    /// The name is not a valid number or pattern: the name as given, and why (protocol code `NAME`).
    case invalidName(String, Names.Problem)
    /// No number of this name exists (protocol code `NOTFOUND`).
    case notFound(String)
    /// A configured limit was reached; the text says which, for a person (protocol code `LIMIT`).
    case limit(String)
}

extension CenterError: CustomStringConvertible {
    /// A sentence a person can act on, e.g. `no such number: SCIENCE`.
    @inlinable public var description: String {
        switch self {
        case .invalidName(let name, let problem): return "invalid name '\(name)': it \(problem)"
        case .notFound(let number): return "no such number: \(number)"
        case .limit(let text): return "limit reached: \(text)"
        }
    }
}
