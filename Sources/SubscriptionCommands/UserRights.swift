import SubscriptionWire

/// What an authenticated user's session may do, kept in its ``ClientState`` (nil there: every right, as with no
/// users or the shared `auth_token`). A class, so that the command path checks `rights == nil` without copying a
/// user's pattern lists, and so that the answers for the numbers a session publishes to are remembered (a publisher
/// usually sends to a few numbers many times).
public final class UserRights {
    /// The user's name.
    public let userName: String
    /// The numbers the user may `PUB` and `SEND` to.
    public let publish: PatternRules
    /// The patterns the user may `SUB`.
    public let subscribe: PatternRules
    /// Whether the user may `CREATE` and `REMOVE` numbers.
    public let mayCreateAndRemove: Bool
    /// The stored form of the secret the user logged in with, opaque here: a reload compares it to tell whether the
    /// user's secret changed.
    public let credential: String
    /// Whether ``publish`` permits each number published to lately; emptied when it grows past ``maxRemembered``.
    private var publishAnswers: [ExactName: Bool] = [:]
    /// How many numbers' answers are kept at most.
    public static let maxRemembered = 256

    /// The rights of the user `userName`.
    public init(
        userName: String, publish: PatternRules, subscribe: PatternRules, mayCreateAndRemove: Bool, credential: String
    ) {
        self.userName = userName
        self.publish = publish
        self.subscribe = subscribe
        self.mayCreateAndRemove = mayCreateAndRemove
        self.credential = credential
    }

    /// Whether the user may `PUB`/`SEND` to `number`.
    public func mayPublish(to number: String) -> Bool {
        let key = ExactName(number)
        if let known = publishAnswers[key] { return known }
        let answer = publish.permits(number: number)
        if publishAnswers.count >= Self.maxRemembered { publishAnswers.removeAll(keepingCapacity: true) }
        publishAnswers[key] = answer
        return answer
    }

    /// Whether the user may `SUB` to `pattern` (every number it can match is allowed) or `GET` a number.
    public func maySubscribe(to pattern: String) -> Bool {
        subscribe.permits(pattern: pattern)
    }
}
