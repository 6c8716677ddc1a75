import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

extension CommandEnvironment {
    /// What a command that met `error` in the center for `name` answers: with `lookUp` allowed and `notFound`, the
    /// other nodes are asked first (``lookUp(_:notFound:retry:)``, the command run again through what `retry` makes);
    /// otherwise, or with nobody to ask, the wire's error is thrown.
    @inlinable
    public func lookUpOrThrow(
        _ error: CenterError, _ name: String, lookUp: Bool,
        retry: () -> @Sendable (inout ClientState, SubscriptionCenter<Publication>, Self) throws(ProtocolError) -> Reply
    ) throws(ProtocolError) -> Reply {
        if case .notFound = error, lookUp, let later = self.lookUp(name, notFound: ProtocolError(error), retry: retry())
        {
            return later
        }
        throw ProtocolError(error)
    }
}
