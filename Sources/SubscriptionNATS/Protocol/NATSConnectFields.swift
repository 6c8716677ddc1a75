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
    /// answered at once with status 503), and the credentials. One line, keys sorted.
    public var json: String {
        var wire = Wire(name: name, version: clientVersion, echo: echo)
        switch authentication {
        case .token(let token): wire.authToken = token
        case .user(let user, let password): (wire.user, wire.pass) = (user, password)
        case nil: break
        }
        return JSONCoding.encode(wire)
    }

    /// `CONNECT`'s members as nats-server names them (nil members are left out).
    private struct Wire: Encodable {
        var verbose = false
        var pedantic = false
        var tlsRequired = false
        var name: String?
        var lang = "swift"
        var version: String
        var `protocol` = 1
        var echo: Bool
        var headers = true
        var noResponders = true
        var authToken: String?
        var user: String?
        var pass: String?

        init(name: String?, version: String, echo: Bool) {
            self.name = name
            self.version = version
            self.echo = echo
        }

        private enum CodingKeys: String, CodingKey {
            case verbose, pedantic, name, lang, version, `protocol`, echo, headers, user, pass
            case tlsRequired = "tls_required"
            case noResponders = "no_responders"
            case authToken = "auth_token"
        }
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
