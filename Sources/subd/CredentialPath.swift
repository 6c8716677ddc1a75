import Foundation
import SubscriptionServer

extension ConfigLoader {
    /// A file path from the configuration, where `credential:NAME` names a credential systemd passed in
    /// (`LoadCredential=NAME:/path` in the unit): the file `NAME` in `$CREDENTIALS_DIRECTORY`, readable by the
    /// service's dynamic user even when the original is not. Any other value is a path as written.
    static func credentialPath(_ value: String, _ key: String) throws(ConfigurationError) -> String {
        let prefix = "credential:"
        guard value.hasPrefix(prefix) else { return value }
        let name = String(value.dropFirst(prefix.count))
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw ConfigurationError(key: key, problem: "'\(value)' must name a credential: credential:NAME")
        }
        guard let directory = ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
            throw ConfigurationError(
                key: key, problem: "'\(value)' needs systemd's LoadCredential= ($CREDENTIALS_DIRECTORY is not set)")
        }
        return directory + "/" + name
    }
}
