/// What the client says in `CONNECT`.
public struct NATSConnectFields: Equatable, Sendable {
    /// The connection's name, shown in the server's monitoring (`connz`).
    public var name: String?
    /// False: the server never delivers the connection's own publications back to it (`echo: false`).
    public var echo: Bool
    /// The credentials, if any.
    public var authentication: NATSAuthentication?
    /// The client's version, sent as `version`.
    public var clientVersion: String

    /// Fields for a connection.
    public init(
        name: String? = nil, echo: Bool = true, authentication: NATSAuthentication? = nil,
        clientVersion: String = "0.1.0"
    ) {
        self.name = name
        self.echo = echo
        self.authentication = authentication
        self.clientVersion = clientVersion
    }

    /// The JSON object: `verbose: false` (no `+OK` per command), `pedantic: false`, `protocol: 1` (the server sends
    /// `INFO` again when the cluster changes), `headers: true`, `no_responders: true` (a request nobody serves is
    /// answered at once with status 503), and the credentials.
    public var json: String {
        var writer = JSONWriter()
        writer.add("verbose", false)
        writer.add("pedantic", false)
        writer.add("tls_required", false)
        writer.addIfPresent("name", name)
        writer.add("lang", "swift")
        writer.add("version", clientVersion)
        writer.add("protocol", 1)
        writer.add("echo", echo)
        writer.add("headers", true)
        writer.add("no_responders", true)
        switch authentication {
        case .token(let token): writer.add("auth_token", token)
        case .user(let user, let password):
            writer.add("user", user)
            writer.add("pass", password)
        case nil: break
        }
        return writer.result
    }
}

/// Credentials for a server that requires them.
public enum NATSAuthentication: Hashable, Sendable, CustomStringConvertible {
    /// A token (`authorization { token: ... }`), sent as `auth_token`.
    case token(String)
    /// A user and password (`authorization { user: ..., password: ... }`), sent as `user` and `pass`.
    case user(String, password: String)

    /// Says which kind, never the secret.
    public var description: String {
        switch self {
        case .token: return "token"
        case .user(let user, _): return "user \(user)"
        }
    }
}
