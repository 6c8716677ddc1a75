import SubscriptionWire

/// One user of the config file's `users:` list: who may authenticate with `HELLO name=<name> token=<secret>`, and
/// what the session may then do (docs/PROTOCOL.md, Users and permissions).
public struct UserAccount: Sendable, Equatable {
    /// The user name, a valid client name; the session's `from=` once authenticated.
    public var name: String
    /// The stored hash of the user's secret (`secret_hash`).
    public var secret: SecretHash
    /// The numbers the user may `PUB` and `SEND` to (`publish`, less `deny_publish`).
    public var publish: PatternRules
    /// The patterns the user may `SUB` (`subscribe`, less `deny_subscribe`).
    public var subscribe: PatternRules
    /// Whether the user may `CREATE` and `REMOVE` numbers (`create_remove`).
    public var mayCreateAndRemove: Bool

    /// A user named `name` with the secret `secret` and these rights.
    public init(
        name: String, secret: SecretHash, publish: PatternRules, subscribe: PatternRules,
        mayCreateAndRemove: Bool = false
    ) {
        self.name = name
        self.secret = secret
        self.publish = publish
        self.subscribe = subscribe
        self.mayCreateAndRemove = mayCreateAndRemove
    }

    /// Where a user is in the config file, for an error: `users[2] (alice)`, or `users[2]` without a name.
    public static func configKey(index: Int, name: String?) -> String {
        name.map { "users[\(index)] (\($0))" } ?? "users[\(index)]"
    }

    /// Checks the name (the client-name rule) and both pattern lists; the error's key is ``configKey(index:name:)``
    /// and its problem names the field (`name`, `publish`, `deny_subscribe`, ...).
    func validate(index: Int) throws(ConfigurationError) {
        let key = Self.configKey(index: index, name: name)
        do {
            try ClientName.check(name)
        } catch {
            throw ConfigurationError(key: key, problem: "name \(error) (a user name is a client name)")
        }
        for (rules, field) in [(publish, "publish"), (subscribe, "subscribe")] {
            do {
                try rules.validate()
            } catch {
                let list = error.list == .allow ? field : "deny_\(field)"
                throw ConfigurationError(
                    key: key, problem: "\(list) pattern \(error.entry.debugDescription) \(error.problem)")
            }
        }
    }
}
