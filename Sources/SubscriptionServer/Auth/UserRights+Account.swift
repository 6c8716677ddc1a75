import SubscriptionCommands

extension UserRights {
    /// The rights of a configured user.
    convenience init(_ user: UserAccount) {
        self.init(
            userName: user.name, publish: user.publish, subscribe: user.subscribe,
            mayCreateAndRemove: user.mayCreateAndRemove, credential: user.secret.encoded)
    }

    /// True when these rights were made from `user` as it is now (same name, secret and rights).
    func describe(_ user: UserAccount) -> Bool {
        userName == user.name && credential == user.secret.encoded && publish == user.publish
            && subscribe == user.subscribe && mayCreateAndRemove == user.mayCreateAndRemove
    }
}
