import SubscriptionServer
import SubscriptionWire
import Yams

/// The config file's `users:` key, a list of mappings:
///
/// ```yaml
/// users:
///   - name: alice
///     secret_hash: "pbkdf2-sha256$100000$...$..."   # from `subd hash-secret`
///     publish: ["SCIENCE.>"]
///     subscribe: ["SCIENCE.>", "NEWS.*"]
///     deny_subscribe: ["SCIENCE.secret.>"]           # optional, as deny_publish
///     create_remove: true                            # optional, false by default
/// ```
///
/// swift-configuration's YAML reader takes lists of scalars only, so this key is read here from the document the
/// loader composed with Yams. Each problem is one ``ConfigurationError`` keyed `users[<index>] (<name>)` that
/// names the field; the names and patterns are checked by ``ServerConfiguration/validate()``.
enum UsersConfig {
    /// The fields of one user.
    static let fields: Set<String> = [
        "name", "secret_hash", "publish", "subscribe", "deny_publish", "deny_subscribe", "create_remove",
    ]

    /// The accounts listed under `users:` in `document`; none when the key is absent or empty.
    static func accounts(in document: Node.Mapping) throws(ConfigurationError) -> [UserAccount] {
        guard let list = document["users"], list.null == nil else { return [] }
        guard let entries = list.sequence else {
            throw ConfigurationError(key: "users", problem: "must be a list of users (- name: ..., secret_hash: ...)")
        }
        var accounts: [UserAccount] = []
        for (index, entry) in entries.enumerated() {
            guard let mapping = entry.mapping else {
                throw ConfigurationError(
                    key: "users[\(index)]", problem: "must be a mapping (name:, secret_hash:, ...)")
            }
            let name = mapping["name"].flatMap { $0.null == nil ? $0.scalar?.string : nil }
            let key = UserAccount.configKey(index: index, name: name)
            func fail(_ problem: String) -> ConfigurationError { ConfigurationError(key: key, problem: problem) }
            var seen: Set<String> = []
            for field in mapping.keys {
                let text = field.string ?? "\(field)"
                guard fields.contains(text) else {
                    throw fail("unknown field '\(text)' (fields: \(fields.sorted().joined(separator: ", ")))")
                }
                guard seen.insert(text).inserted else { throw fail("\(text) is given twice") }
            }
            guard let name else { throw fail("has no name (a string)") }
            guard let hashText = mapping["secret_hash"].flatMap({ $0.null == nil ? $0.scalar?.string : nil }) else {
                throw fail("has no secret_hash (a string; `subd hash-secret` makes one)")
            }
            let secret: SecretHash
            do {
                secret = try SecretHash(parsing: hashText)
            } catch {
                throw fail("secret_hash \(error)")
            }
            /// The patterns of a list field: absent or empty is none.
            func patterns(_ field: String) throws(ConfigurationError) -> [String] {
                guard let node = mapping[field], node.null == nil else { return [] }
                guard let items = node.sequence else {
                    throw fail("\(field) must be a list of patterns, e.g. [\"A.>\"]")
                }
                var patterns: [String] = []
                for (position, item) in items.enumerated() {
                    guard let text = item.scalar?.string, item.null == nil else {
                        throw fail("\(field)[\(position)] must be a pattern (a quoted string such as \"A.*\")")
                    }
                    patterns.append(text)
                }
                return patterns
            }
            var mayCreateAndRemove = false
            if let node = mapping["create_remove"] {
                guard let value = node.bool else {
                    throw fail("create_remove must be true or false, got '\(node.scalar?.string ?? "\(node)")'")
                }
                mayCreateAndRemove = value
            }
            accounts.append(
                UserAccount(
                    name: name, secret: secret,
                    publish: PatternRules(allow: try patterns("publish"), deny: try patterns("deny_publish")),
                    subscribe: PatternRules(allow: try patterns("subscribe"), deny: try patterns("deny_subscribe")),
                    mayCreateAndRemove: mayCreateAndRemove))
        }
        return accounts
    }
}
