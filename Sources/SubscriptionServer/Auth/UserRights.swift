import SubscriptionWire

/// What an authenticated user's session may do, kept by the session (nil there: every right, as with no users or
/// the shared `auth_token`). A class, so that the command path checks `session.rights == nil` without copying a
/// user's pattern lists, and so that the answers for the numbers a session publishes to are remembered (a
/// publisher usually sends to a few numbers many times).
final class UserRights {
    /// The user, as the configuration in force describes it.
    let user: UserAccount
    /// Whether ``UserAccount/publish`` permits each number published to lately; emptied when it grows past
    /// ``maxRemembered``.
    private var publishAnswers: [ExactName: Bool] = [:]
    /// How many numbers' answers are kept at most.
    static let maxRemembered = 256

    init(_ user: UserAccount) {
        self.user = user
    }

    /// Whether the user may `PUB`/`SEND` to `number`.
    func mayPublish(to number: String) -> Bool {
        let key = ExactName(number)
        if let known = publishAnswers[key] { return known }
        let answer = user.publish.permits(number: number)
        if publishAnswers.count >= Self.maxRemembered { publishAnswers.removeAll(keepingCapacity: true) }
        publishAnswers[key] = answer
        return answer
    }

    /// Whether the user may `SUB` to `pattern` (every number it can match is allowed) or `GET` a number.
    func maySubscribe(to pattern: String) -> Bool {
        user.subscribe.permits(pattern: pattern)
    }
}
