/// MQTT's rules for topic names and topic filters (section 4.7, shared subscriptions 4.8.2), on bytes, written once
/// for the decoder and ``MQTTTopicMap``. U+0000 and UTF-8 are the strings' rules, checked where they are read.
enum MQTTTopicRules {
    /// The level separator.
    static let slash = UInt8(ascii: "/")
    /// The single-level wildcard.
    static let plus = UInt8(ascii: "+")
    /// The multi-level wildcard.
    static let hash = UInt8(ascii: "#")
    /// What a shared subscription's filter starts with.
    static let sharePrefix: [UInt8] = Array("$share/".utf8)

    /// Checks a topic name: at least one byte, and no wildcard character (`+` or `#`).
    static func checkName(_ bytes: some Collection<UInt8>) throws(MQTTTopicError) {
        if bytes.isEmpty { throw .name("is empty") }
        for byte in bytes where byte == plus || byte == hash {
            throw .name("holds '\(Character(Unicode.Scalar(byte)))', a wildcard, which a topic name may not have")
        }
    }

    /// Checks a topic filter, a shared subscription's included: true when it is one (`$share/<name>/<filter>`).
    @discardableResult
    static func checkFilter(_ bytes: some Collection<UInt8>) throws(MQTTTopicError) -> Bool {
        guard let (_, filter) = try sharedParts(bytes) else {
            try checkPlainFilter(bytes)
            return false
        }
        try checkPlainFilter(filter)
        return true
    }

    /// The share name and the filter of a shared subscription, nil when `bytes` does not start with `$share/`.
    /// Throws when it does but breaks the rules: the share name must be non-empty and hold no `+`, `#` or `/`, and a
    /// `/` must follow it (the filter is not checked here).
    static func sharedParts<Bytes: Collection<UInt8>>(
        _ bytes: Bytes
    ) throws(MQTTTopicError) -> (name: Bytes.SubSequence, filter: Bytes.SubSequence)? {
        guard bytes.starts(with: sharePrefix) else { return nil }
        let rest = bytes.dropFirst(sharePrefix.count)
        guard let slash = rest.firstIndex(of: slash) else {
            throw .filter("is a shared subscription without a filter ($share/<name>/<filter>)")
        }
        let name = rest[rest.startIndex..<slash]
        if name.isEmpty { throw .filter("is a shared subscription with an empty share name") }
        if name.contains(plus) || name.contains(hash) {
            throw .filter("is a shared subscription whose share name holds a wildcard")
        }
        return (name, rest[rest.index(after: slash)...])
    }

    /// Checks a filter that is not a shared subscription: at least one byte; `+` only as a whole level; `#` only as
    /// a whole level that is the last one.
    static func checkPlainFilter(_ bytes: some Collection<UInt8>) throws(MQTTTopicError) {
        if bytes.isEmpty { throw .filter("is empty") }
        // The wildcard the current level starts with, and the bytes of that level so far.
        var wildcard: UInt8?
        var levelCount = 0
        for byte in bytes {
            if byte == slash {
                if wildcard == hash { throw .filter("has '#' before its last level") }
                wildcard = nil
                levelCount = 0
            } else if byte == plus || byte == hash {
                if levelCount > 0 { throw notAWholeLevel(byte) }
                wildcard = byte
                levelCount = 1
            } else {
                if let wildcard { throw notAWholeLevel(wildcard) }
                levelCount += 1
            }
        }
    }

    /// The failure of a wildcard that shares its level with other bytes.
    private static func notAWholeLevel(_ wildcard: UInt8) -> MQTTTopicError {
        .filter("has '\(Character(Unicode.Scalar(wildcard)))' inside a level (a wildcard must be a whole level)")
    }
}
