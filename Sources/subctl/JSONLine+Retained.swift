import SubscriptionClient

/// The `--json` lines of `get` and `watch`. Payloads are text when they are valid UTF-8, else base64 under the name
/// with `_base64` added (as `listen --json` does); `from` is null when the publisher did not name itself; `info` is
/// always there, its values percent-decoded.
extension JSONLine {
    /// `get --json`: `{"number":"PRICE","payload":"12","revision":3,"from":"lab","info":{"unit":"EUR"}}`.
    static func encode(_ value: RetainedValue) -> String {
        "{\"number\":" + quoted(value.number) + "," + payloadMember("payload", value.payload)
            + ",\"revision\":\(value.revision)"
            + ",\"from\":" + (value.from.map(quoted) ?? "null")
            + ",\"info\":" + infoObject(value.infoPairs) + "}"
    }

    /// `watch --json`: `{"number":"PRICE","old":"11","new":"12","revision":3,"from":"lab","info":{},"missed":0}`.
    /// `old` is null for the first change; `revision`, `from` and `info` are the new value's; `missed` is how many
    /// revisions were missed before this one (0 when none), or null when the revision went back (the number was
    /// created again, or the server lost its state) and that cannot be told.
    static func encode(_ change: Watch.Change) -> String {
        let old = change.old.map { payloadMember("old", $0.payload) } ?? "\"old\":null"
        let missed = change.gap.map { $0.missedCount.map(String.init) ?? "null" } ?? "0"
        return "{\"number\":" + quoted(change.number) + "," + old + "," + payloadMember("new", change.new.payload)
            + ",\"revision\":\(change.revision)"
            + ",\"from\":" + (change.from.map(quoted) ?? "null")
            + ",\"info\":" + infoObject(change.infoPairs)
            + ",\"missed\":" + missed + "}"
    }

    /// `"name":"text"`, or `"name_base64":"..."` when `payload` is not valid UTF-8.
    private static func payloadMember(_ name: String, _ payload: [UInt8]) -> String {
        if let text = String(validating: payload, as: UTF8.self) { return quoted(name) + ":" + quoted(text) }
        return quoted(name + "_base64") + ":\"" + base64(payload) + "\""
    }
}
