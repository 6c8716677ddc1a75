/// What a user may publish to, or subscribe to: patterns allowed, and patterns denied even where an allowed one
/// matches (docs/PROTOCOL.md, Users and permissions). A user has one for publishing and one for subscribing.
///
/// ```swift
/// let rules = PatternRules(allow: ["SCIENCE.>"], deny: ["SCIENCE.secret.>"])
/// rules.permits(number: "SCIENCE.physics")        // true  (PUB, SEND)
/// rules.permits(number: "SCIENCE.secret.x")       // false
/// rules.permits(pattern: "SCIENCE.*")             // true  (SUB)
/// rules.permits(pattern: "SCIENCE.>")             // false: it could match SCIENCE.secret.x
/// ```
///
/// Names are compared byte for byte (UTF-8), as ``Names/matches(pattern:number:)`` does, `$SYS` rule included.
public struct PatternRules: Sendable, Equatable {
    /// The allowed patterns: a number is allowed when one of them matches it. Empty allows nothing.
    ///
    /// `["SCIENCE.*", "NEWS.>"]` allows `SCIENCE.physics` and `NEWS.a.b`, not `SCIENCE.a.b`.
    public var allow: [String]

    /// The denied patterns: a number is denied when one of them matches it, whatever ``allow`` says.
    ///
    /// With `allow: [">"]`, `deny: ["ADMIN.>"]` denies `ADMIN.users` and allows `NEWS`.
    public var deny: [String]

    /// Rules that allow the numbers `allow` matches except those `deny` matches. Check them with ``validate()``.
    ///
    /// `PatternRules(allow: ["SCIENCE.>"], deny: ["SCIENCE.secret.>"])`
    public init(allow: [String], deny: [String] = []) {
        self.allow = allow
        self.deny = deny
    }

    /// Every number: the rights of a user with every right (the single `auth_token`). `>` matches every number
    /// but the daemon's own, which `$SYS` and `$SYS.>` match.
    ///
    /// `PatternRules.everything.permits(pattern: ">")` and `.permits(pattern: "$SYS.>")` are both true.
    public static let everything = PatternRules(allow: [">", Names.systemToken, Names.systemPrefix + ">"], deny: [])

    /// No number at all.
    ///
    /// `PatternRules.nothing.permits(number: "A")` is false.
    public static let nothing = PatternRules(allow: [], deny: [])

    /// Whether a `PUB` or `SEND` to `number` (a valid number) is allowed: some allowed pattern matches it and no
    /// denied one does.
    ///
    /// `PatternRules(allow: ["A.*"], deny: ["A.x"]).permits(number: "A.y")` is true; `"A.x"` and `"A.y.z"` are
    /// not permitted.
    public func permits(number: String) -> Bool {
        allow.contains { Names.matches(pattern: $0, number: number) }
            && !deny.contains { Names.matches(pattern: $0, number: number) }
    }

    /// Whether a `SUB` of `pattern` (a valid pattern) is allowed: every number it could match is allowed
    /// (``Names/covers(_:_:)``, the allowed patterns together) and no denied pattern could match a number it
    /// matches (``Names/overlaps(_:_:)``).
    ///
    /// With `allow: ["SCIENCE.*"]`, `SCIENCE.*` and `SCIENCE.physics` are permitted, `SCIENCE.>` is not.
    /// With `allow: [">"]`, `deny: ["ADMIN.>"]`, `NEWS.>` is permitted, `*.users` is not (it matches `ADMIN.users`).
    public func permits(pattern: String) -> Bool {
        Names.covers(allow, pattern) && !deny.contains { Names.overlaps($0, pattern) }
    }

    /// Checks that every allowed and denied entry is a valid pattern, throwing about the first that is not.
    ///
    /// `try PatternRules(allow: ["A.>.B"]).validate()` throws `Problem(list: .allow, entry: "A.>.B",
    /// problem: .fullWildcardNotLast)`.
    public func validate() throws(Problem) {
        for entry in allow {
            do { try Names.checkPattern(entry) } catch { throw Problem(list: .allow, entry: entry, problem: error) }
        }
        for entry in deny {
            do { try Names.checkPattern(entry) } catch { throw Problem(list: .deny, entry: entry, problem: error) }
        }
    }

    /// An entry of the rules that is not a valid pattern, and why.
    ///
    /// Described as, for example, `deny pattern "A..B" has an empty token (two dots in a row, or a dot at an end)`.
    public struct Problem: Error, Equatable, Sendable, CustomStringConvertible {
        /// Which list an entry is in.
        ///
        /// `.allow` for an entry of ``PatternRules/allow``.
        public enum List: String, Sendable {
            /// ``PatternRules/allow``.
            case allow
            /// ``PatternRules/deny``.
            case deny
        }

        /// The list the entry is in.
        ///
        /// `.deny` when the bad entry is in ``PatternRules/deny``.
        public var list: List
        /// The entry as given.
        ///
        /// `"A..B"`.
        public var entry: String
        /// Why the entry is not a valid pattern.
        ///
        /// `.emptyToken` for `"A..B"`.
        public var problem: Names.Problem

        /// A problem with `entry` of `list`.
        ///
        /// `Problem(list: .allow, entry: "", problem: .empty)`.
        public init(list: List, entry: String, problem: Names.Problem) {
            self.list = list
            self.entry = entry
            self.problem = problem
        }

        /// A sentence a person can act on.
        ///
        /// `allow pattern "A.>.B" has '>' before its last token`.
        public var description: String { "\(list.rawValue) pattern \(entry.debugDescription) \(problem)" }
    }
}
