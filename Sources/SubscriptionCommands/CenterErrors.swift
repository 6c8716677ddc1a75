import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

extension ProtocolError {
    /// The wire error for a center error (docs/PROTOCOL.md, Error codes).
    public init(_ error: CenterError) {
        switch error {
        case .invalidName(let name, let problem):
            self.init(.name, "invalid name '\(name)': \(problem)")
        case .notFound(let number):
            self.init(.notFound, "no subscription number '\(number)' (CREATE it first)")
        case .limit(let what):
            self.init(.limit, what)
        }
    }

    /// Runs a center operation, turning its error into the wire's.
    @inlinable
    public static func fromCenter<Result>(_ body: () throws(CenterError) -> Result) throws(ProtocolError) -> Result {
        do {
            return try body()
        } catch {
            throw ProtocolError(error)
        }
    }
}
