import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// `HELLO [name=<client-name>] [token=<secret>]`: names the session (its `from=`) and, with `auth_token` or `users`
/// set, authenticates it.
///
/// - `HELLO name=<user> token=<secret>` of a configured user: the secret is checked off the event loop
///   (``CommandEnvironment/verify(_:as:)``: a PBKDF2 takes milliseconds), while the session is held; then the client
///   has the user's rights and the user's name, which it cannot change (its `from=` is verified).
/// - `token=` equal to `auth_token`: every right, any name but a configured user's (the shared token works as it
///   always did).
/// - Once authenticated, a HELLO without a token only renames the session (not a user's session, and not to a
///   user's name: `DENIED`).
///
/// A failed HELLO (a wrong or missing secret, an unknown user) is counted (STATS `auth_failures`), logged, and slowed
/// down: the session sits out `auth_failure_delay` times the number of failures so far on this connection before its
/// `-ERR AUTH` goes out and its next command runs; the ``maxFailures``th failure closes the connection after its
/// reply (``failed(_:client:environment:held:)``).
public enum HelloCommand {
    /// The protocol version HELLO announces.
    public static let protocolVersion = "1.1"
    /// Failed HELLOs after which the connection is closed.
    public static let maxFailures = 10

    /// Runs `HELLO [name=] [token=]`.
    @inlinable
    public static func run<Environment: CommandEnvironment>(
        name: String?, token: String?, client: inout ClientState, center: SubscriptionCenter<Publication>,
        environment: Environment
    ) throws(ProtocolError) -> Reply {
        if let token {
            // The shared token first: whether it matches says nothing about the users.
            if let required = environment.authToken, SecretComparison.equal(token, required) {
                if let name { try checkNotAnotherUsersName(name, client, environment) }
                // A user's session that switches to the shared token does not keep the user's verified name.
                if client.rights != nil { client.name = nil }
                client.rights = nil
                client.isAuthenticated = true
                if let name { client.name = name }
                return welcome(environment)
            }
            if let name, environment.hasUsers { return environment.verify(token, as: name) }
            let error = ProtocolError(.auth, environment.hasUsers ? "wrong name or secret" : "wrong token")
            throw failed(error, client: &client, environment: environment)
        }
        if !client.isAuthenticated && environment.requiresAuthentication {
            let error = ProtocolError(.auth, "this server needs HELLO [name=<user>] token=<secret>")
            throw failed(error, client: &client, environment: environment)
        }
        if let name { try checkNotAnotherUsersName(name, client, environment) }
        client.isAuthenticated = true
        if let name { client.name = name }
        return welcome(environment)
    }

    /// A session may not take a configured user's name unless it logged in as that user (so `from=<user>` is always
    /// verified), and a user's session keeps its own name.
    @usableFromInline
    static func checkNotAnotherUsersName<Environment: CommandEnvironment>(
        _ name: String, _ client: ClientState, _ environment: Environment
    ) throws(ProtocolError) {
        if let rights = client.rights {
            guard name == rights.userName else {
                throw ProtocolError(.denied, "a session of user '\(rights.userName)' keeps its name")
            }
        } else if environment.isUser(name) {
            throw ProtocolError(.denied, "'\(name)' is a user's name: HELLO name=\(name) token=<that user's secret>")
        }
    }

    /// The reply to a successful HELLO.
    @inlinable
    public static func welcome<Environment: CommandEnvironment>(_ environment: Environment) -> Reply {
        .ok("subd \(environment.serverVersion) proto=\(protocolVersion) session=\(environment.sessionID)")
    }

    /// Counts, logs and slows down a failed HELLO (or closes the connection at the last allowed failure); returns the
    /// error to answer. `held`: the session is held already (its secret was being checked).
    @inlinable
    public static func failed<Environment: CommandEnvironment>(
        _ error: ProtocolError, client: inout ClientState, environment: Environment, held: Bool = false
    ) -> ProtocolError {
        client.authFailures += 1
        environment.countAuthFailure(error, failures: client.authFailures)
        if client.authFailures >= maxFailures {
            environment.close(.authFailures)
            if held { environment.release(after: 0) }
            return ProtocolError(.auth, "\(error.message); \(maxFailures) failures: closing the connection")
        }
        if !held { environment.hold() }
        environment.release(after: environment.authFailureDelay * Double(client.authFailures))
        return error
    }
}

/// Compares secrets in time that does not depend on where they differ.
public enum SecretComparison {
    /// True when `given` and `expected` are the same bytes; the time taken depends only on their lengths.
    public static func equal(_ given: String, _ expected: String) -> Bool {
        let left = Array(given.utf8)
        let right = Array(expected.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }
}
