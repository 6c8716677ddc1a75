import SubscriptionWire

/// The one-to-one map between MQTT topic names and filters and subd's numbers and patterns (docs/PROTOCOL.md,
/// Words: a number is 1 to 200 bytes of UTF-8 with no space and no ASCII control byte, dot-separated non-empty
/// tokens, none exactly `*` or `>`; a pattern's tokens may be `*`, one token, or a last `>`, one or more).
///
/// The map:
/// - levels split at `/` become tokens joined by `.`;
/// - within a level, these bytes are percent-encoded with uppercase hex: `%` -> `%25`, `.` -> `%2E`, space -> `%20`,
///   each byte 0x01-0x1F and 0x7F -> `%XX`; every other byte (UTF-8 included) is kept;
/// - a level that is empty becomes the token `%`; a level that is exactly `*` becomes `%2A`, exactly `>` becomes
///   `%3E` (a `*` or `>` inside a longer level stays);
/// - the reverse (number -> topic) accepts ONLY what the forward direction produces: a token `%` (empty level),
///   `%2A`/`%3E` as whole tokens, and inside tokens only the escapes `%25 %2E %20 %01..%1F %7F` (uppercase); a
///   number with any other `%` use, or whose decoded topic would contain `+` or `#`, has NO topic (nil). So the map
///   is one-to-one: topic(number(t)) == t for every mappable topic t and number(topic(n)) == n for every n that has
///   a topic.
/// - filters: a level `+` -> token `*`; a last level `#` -> token `>`; other levels as in topics. MQTT `#` also
///   matches the parent level (`a/#` matches `a`), subd's `>` does not: so `patterns(forFilter:)` returns the
///   pattern(s) a filter needs: for `a/#` both `a.>` and `a`; for `#` alone just `>`; for `+/#` both `*.>` and `*`.
/// - shared subscriptions: `$share/<group>/<filter>` parsed into (group, filter).
///
/// A number with a `/` in a token has no topic either: the forward direction never writes one (`/` splits levels).
///
/// A topic is mappable when it is a valid topic name (at least one byte, no `+`, `#` or U+0000) whose number takes
/// at most 200 bytes. The empty topic has no number (it is no topic name), so the number `%` has no topic either.
///
/// ```swift
/// try MQTTTopicMap.number(forTopic: "sensors/room 1/temp.c")   // "sensors.room%201.temp%2Ec"
/// MQTTTopicMap.topic(forNumber: "a.%.b")                       // "a//b"
/// try MQTTTopicMap.patterns(forFilter: "a/+/#")                // pattern "a.*.>", parent "a.*"
/// ```
public enum MQTTTopicMap {
    /// The number a PUBLISH to `topic` goes to. Throws (0x90) when `topic` is no topic name (empty, or holding `+`,
    /// `#` or U+0000) or its number would be longer than ``Names/maxLength`` bytes.
    public static func number(forTopic topic: String) throws(MQTTTopicError) -> String {
        try MQTTTopicRules.checkName(topic.utf8)
        if topic.utf8.contains(0) { throw .name("holds U+0000") }
        var number: [UInt8] = []
        number.reserveCapacity(topic.utf8.count + 8)
        for (index, level) in topic.utf8.split(separator: MQTTTopicRules.slash, omittingEmptySubsequences: false)
            .enumerated()
        {
            if index > 0 { number.append(dot) }
            appendToken(level: level, to: &number)
        }
        do { try Names.check(number, allowWildcards: false) } catch {
            throw .name("maps to a number that \(error)")
        }
        return String(decoding: number, as: UTF8.self)
    }

    /// The topic name a publication to `number` is delivered to an MQTT client with; nil when the number has none
    /// (it is not a valid number, or not one that ``number(forTopic:)`` makes).
    public static func topic(forNumber number: String) -> String? {
        guard (try? Names.checkNumber(number)) != nil else { return nil }
        var topic: [UInt8] = []
        topic.reserveCapacity(number.utf8.count)
        var first = true
        for token in number.utf8.split(separator: dot, omittingEmptySubsequences: false) {
            if !first { topic.append(MQTTTopicRules.slash) }
            first = false
            guard appendLevel(token: token, to: &topic) else { return nil }
        }
        if topic.isEmpty { return nil }
        return String(decoding: topic, as: UTF8.self)
    }

    /// The patterns a subscription to `filter` needs (not a shared subscription: call ``sharedSubscription(_:)``
    /// first and pass its filter). Throws (0x8F) when `filter` is no valid topic filter or a pattern would be longer
    /// than ``Names/maxLength`` bytes.
    public static func patterns(forFilter filter: String) throws(MQTTTopicError) -> MQTTFilterPatterns {
        try MQTTTopicRules.checkPlainFilter(filter.utf8)
        if filter.utf8.contains(0) { throw .filter("holds U+0000") }
        var pattern: [UInt8] = []
        pattern.reserveCapacity(filter.utf8.count + 8)
        // Where the last level's token starts, to cut the parent pattern off before it.
        var lastTokenStart = 0
        var endsInHash = false
        for (index, level) in filter.utf8.split(separator: MQTTTopicRules.slash, omittingEmptySubsequences: false)
            .enumerated()
        {
            if index > 0 { pattern.append(dot) }
            lastTokenStart = pattern.count
            if level.elementsEqual(CollectionOfOne(MQTTTopicRules.plus)) {
                pattern.append(UInt8(ascii: "*"))
            } else if level.elementsEqual(CollectionOfOne(MQTTTopicRules.hash)) {
                pattern.append(UInt8(ascii: ">"))
                endsInHash = true
            } else {
                appendToken(level: level, to: &pattern)
            }
        }
        do { try Names.check(pattern, allowWildcards: true) } catch {
            throw .filter("maps to a pattern that \(error)")
        }
        let parent = endsInHash && lastTokenStart > 0 ? pattern[..<(lastTokenStart - 1)] : nil
        return MQTTFilterPatterns(
            pattern: String(decoding: pattern, as: UTF8.self),
            parent: parent.map { String(decoding: $0, as: UTF8.self) })
    }

    /// The share name (the group) and the filter of a shared subscription `$share/<group>/<filter>`; nil when
    /// `filter` does not start with `$share/`. Throws (0x8F) when it does but the share name is empty or holds `+`
    /// or `#`, or no `/` and filter follow it; the filter itself is not checked (``patterns(forFilter:)`` does).
    public static func sharedSubscription(_ filter: String) throws(MQTTTopicError) -> (group: String, filter: String)? {
        guard let (group, rest) = try MQTTTopicRules.sharedParts(filter.utf8) else { return nil }
        return (String(Substring(group)), String(Substring(rest)))
    }

    /// True when a number starting with `$` must not be delivered through this filter: MQTT's rule that a filter
    /// starting with + or # does not match topics starting with $ (section 4.7.2). Pass a shared subscription's
    /// filter, not the whole `$share/...`.
    public static func excludesDollarTopics(_ filter: String) -> Bool {
        let first = filter.utf8.first
        return first == MQTTTopicRules.plus || first == MQTTTopicRules.hash
    }

    /// The token separator of numbers.
    private static let dot = UInt8(ascii: ".")
    /// The escape character.
    private static let percent = UInt8(ascii: "%")
    /// The uppercase hex digits of escapes.
    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// True for the bytes escaped inside a level: `%`, `.`, space, 0x01 to 0x1F and 0x7F.
    private static func isEscaped(_ byte: UInt8) -> Bool {
        byte == percent || byte == dot || byte == 0x20 || (byte >= 0x01 && byte <= 0x1F) || byte == 0x7F
    }

    /// Appends the token of a topic or filter level that is not a wildcard.
    private static func appendToken(level: some Collection<UInt8>, to bytes: inout [UInt8]) {
        if level.isEmpty {
            bytes.append(percent)
        } else if level.elementsEqual(CollectionOfOne(UInt8(ascii: "*"))) {
            bytes.append(contentsOf: "%2A".utf8)
        } else if level.elementsEqual(CollectionOfOne(UInt8(ascii: ">"))) {
            bytes.append(contentsOf: "%3E".utf8)
        } else {
            for byte in level {
                if isEscaped(byte) {
                    bytes.append(percent)
                    bytes.append(hexDigits[Int(byte >> 4)])
                    bytes.append(hexDigits[Int(byte & 0x0F)])
                } else {
                    bytes.append(byte)
                }
            }
        }
    }

    /// Appends the topic level of a number's token; false when the token is not one ``appendToken(level:to:)``
    /// makes.
    private static func appendLevel(token: some Collection<UInt8>, to bytes: inout [UInt8]) -> Bool {
        if token.elementsEqual(CollectionOfOne(percent)) { return true }
        if token.elementsEqual("%2A".utf8) {
            bytes.append(UInt8(ascii: "*"))
            return true
        }
        if token.elementsEqual("%3E".utf8) {
            bytes.append(UInt8(ascii: ">"))
            return true
        }
        var iterator = token.makeIterator()
        while let byte = iterator.next() {
            // A `/` would split the level in two: no level holds one.
            if byte == MQTTTopicRules.plus || byte == MQTTTopicRules.hash || byte == MQTTTopicRules.slash {
                return false
            }
            guard byte == percent else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return false
            }
            let escaped = high << 4 | low
            guard isEscaped(escaped) else { return false }
            bytes.append(escaped)
        }
        return true
    }

    /// The value of an uppercase hex digit, nil for any other byte.
    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}

/// The subd patterns one MQTT topic filter subscribes to.
public struct MQTTFilterPatterns: Sendable, Hashable {
    /// The filter's pattern: `a.*.>` for `a/+/#`.
    public var pattern: String
    /// For a filter ending in `#` after other levels, the pattern of the parent level that `#` matches too (`a.*` for
    /// `a/+/#`), which `>` does not; nil otherwise (`#` alone has none: `>` matches every number).
    public var parent: String?

    /// The patterns `pattern` and `parent`.
    public init(pattern: String, parent: String? = nil) {
        self.pattern = pattern
        self.parent = parent
    }
}
