import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire

/// The configured users, and what a reload does to the sessions of users it changes.
extension Server {
    /// Whether a session must authenticate before anything but `HELLO`, `PING` and `QUIT`: with `auth_token` or
    /// `users` set.
    var requiresAuthentication: Bool {
        configuration.authToken != nil || !users.isEmpty
    }

    /// The configured users by name (byte-exact, as the wire compares names).
    static func directory(of users: [UserAccount]) -> [ExactName: UserAccount] {
        Dictionary(users.map { (ExactName($0.name), $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// Puts a reloaded `users` list in force for the sessions already open:
    /// - a session whose user is gone, or whose secret changed, is told `-ERR AUTH` and closed;
    /// - a session whose rights changed gets them at once; one holding a subscription the new rights no longer allow
    ///   is told `-ERR DENIED` and closed (the protocol has no push that ends a wildcard subscription; the client
    ///   reconnects and subscribes under its new rights);
    /// - sessions of the shared `auth_token`, or not yet authenticated, are left as they are.
    ///
    /// Both closes count as `closed_revoked`; the `-ERR` arrives as the reply to whatever the client sent last, and the
    /// connection closes right after it (as NATS does on an authorization change).
    func applyUsers(_ accounts: [UserAccount]) {
        users = Self.directory(of: accounts)
        for session in sessions.values {
            guard let rights = session.client.rights, session.machine.phase == .open else { continue }
            guard let user = users[ExactName(rights.userName)], user.secret.encoded == rights.credential else {
                logger.notice(
                    "reload: closing the session of a removed user",
                    metadata: [
                        "session": "\(session.id)", "user": "\(rights.userName)",
                    ])
                session.queueError(ProtocolError(.auth, "user '\(rights.userName)' was removed or changed: closing"))
                session.requestClose(.revoked)
                continue
            }
            guard !rights.describe(user) else { continue }
            let updated = UserRights(user)
            session.client.rights = updated
            let revoked = center.subscriptions(of: session).filter { !updated.maySubscribe(to: $0.pattern) }
            guard let first = revoked.first else { continue }
            logger.notice(
                "reload: closing a session whose user may no longer hold its subscriptions",
                metadata: [
                    "session": "\(session.id)", "user": "\(user.name)", "pattern": "\(first.pattern)",
                ])
            session.queueError(
                ProtocolError(
                    .denied, "user '\(user.name)' may no longer subscribe to '\(first.pattern)': closing, reconnect"))
            session.requestClose(.revoked)
        }
    }
}
