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
    /// One user's fields as read so far; a field left out keeps the value it starts with, its default.
    struct Draft {
        var name = ""
        var secret: SecretHash?
        var publish: [String] = []
        var subscribe: [String] = []
        var denyPublish: [String] = []
        var denySubscribe: [String] = []
        var mayCreateAndRemove = false
    }

    private static let defaults = Draft()

    /// The fields of one user, in the order config/subd.yaml documents them, each with its default and how it is read.
    static let fields: [ConfigField<Draft>] = [
        ConfigField("name", "a user name", missing: "has no name (a string)") {
            node, draft, fail throws(ConfigurationError) in
            guard let text = node.scalar?.string else { throw fail("has no name (a string)") }
            draft.name = text
        },
        ConfigField(
            "secret_hash", "the output of `subd hash-secret`",
            missing: "has no secret_hash (a string; `subd hash-secret` makes one)"
        ) {
            node, draft, fail throws(ConfigurationError) in
            guard let text = node.scalar?.string else {
                throw fail("has no secret_hash (a string; `subd hash-secret` makes one)")
            }
            do {
                draft.secret = try SecretHash(parsing: text)
            } catch {
                throw fail("secret_hash \(error)")
            }
        },
        patterns("publish", \.publish),
        patterns("subscribe", \.subscribe),
        patterns("deny_publish", \.denyPublish),
        patterns("deny_subscribe", \.denySubscribe),
        ConfigField("create_remove", "true or false", .value(String(defaults.mayCreateAndRemove))) {
            node, draft, fail throws(ConfigurationError) in
            guard let value = node.bool else {
                throw fail("create_remove must be true or false, got '\(node.scalar?.string ?? "\(node)")'")
            }
            draft.mayCreateAndRemove = value
        },
    ]

    /// A list of patterns; absent or empty is none.
    private static func patterns(
        _ name: String, _ path: WritableKeyPath<Draft, [String]> & Sendable
    ) -> ConfigField<Draft> {
        ConfigField(name, "a list of patterns", .value(ConfigKeyInfo.list(defaults[keyPath: path]))) {
            node, draft, fail throws(ConfigurationError) in
            guard let items = node.sequence else {
                throw fail("\(name) must be a list of patterns, e.g. [\"A.>\"]")
            }
            var patterns: [String] = []
            for (position, item) in items.enumerated() {
                guard let text = item.scalar?.string, item.null == nil else {
                    throw fail("\(name)[\(position)] must be a pattern (a quoted string such as \"A.*\")")
                }
                patterns.append(text)
            }
            draft[keyPath: path] = patterns
        }
    }

    /// The accounts listed under `users:` in `document`; none when the key is absent or empty.
    static func accounts(in document: Node.Mapping) throws(ConfigurationError) -> [UserAccount] {
        guard let list = document["users"], list.null == nil else { return [] }
        guard let entries = list.sequence else {
            throw ConfigurationError(key: "users", problem: "must be a list of users (- name: ..., secret_hash: ...)")
        }
        let names = fields.map(\.info.name)
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
                guard names.contains(text) else {
                    throw fail("unknown field '\(text)' (fields: \(names.sorted().joined(separator: ", ")))")
                }
                guard seen.insert(text).inserted else { throw fail("\(text) is given twice") }
            }
            var draft = Draft()
            try ConfigField.read(fields, from: mapping, into: &draft) { _, problem in fail(problem) }
            guard let secret = draft.secret else { preconditionFailure("secret_hash is required, so it was read") }
            accounts.append(
                UserAccount(
                    name: draft.name, secret: secret,
                    publish: PatternRules(allow: draft.publish, deny: draft.denyPublish),
                    subscribe: PatternRules(allow: draft.subscribe, deny: draft.denySubscribe),
                    mayCreateAndRemove: draft.mayCreateAndRemove))
        }
        return accounts
    }
}
