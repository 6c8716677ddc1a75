/// What the command handlers know and change about one client: its name, whether it authenticated, its user's
/// rights and its failed `HELLO`s. A plain value: the session keeps one, and each command gets it `inout`.
public struct ClientState {
    /// The name given with HELLO (or the user's, once one logged in), sent as `from=` on its publications.
    public var name: String?
    /// True once HELLO authenticated the session (or when nothing is configured to authenticate with).
    public var isAuthenticated: Bool
    /// What the session's user may do; nil for every right (no users configured, or the shared `auth_token`).
    public var rights: UserRights?
    /// How many `HELLO`s failed on this connection (each makes the next delay longer).
    public var authFailures: Int

    /// A client that has sent nothing yet: authenticated already when the server needs no authentication.
    @inlinable
    public init(name: String? = nil, isAuthenticated: Bool, rights: UserRights? = nil, authFailures: Int = 0) {
        self.name = name
        self.isAuthenticated = isAuthenticated
        self.rights = rights
        self.authFailures = authFailures
    }

    /// Logged in as a configured user (a HELLO with the user's secret, or a TLS client certificate naming the user):
    /// authenticated, with the user's rights, and the user's name, which it then keeps.
    @inlinable
    public mutating func logIn(as rights: UserRights) {
        isAuthenticated = true
        self.rights = rights
        name = rights.userName
    }
}
