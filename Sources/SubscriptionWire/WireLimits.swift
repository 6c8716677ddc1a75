/// The size limits that are rules of the wire (docs/PROTOCOL.md, Limits), the same for every server and client.
///
/// The limits a daemon configures (`max_line`, `max_payload`) are not here: they belong to the parser's
/// `ProtocolLimits`. Each rule type names its limit too (``Names/maxLength``, ``ClientName/maxLength``,
/// ``InfoPair/maxCount``...), read from this table.
public enum WireLimits {
    /// The longest number or pattern, in bytes (docs/PROTOCOL.md, Words).
    public static let maxNameLength = 200
    /// The longest client name (`HELLO name=`, `SUB ... from=`, a group name), in bytes.
    public static let maxClientNameLength = 64
    /// The most info pairs one publication may carry (docs/PROTOCOL.md, Info pairs).
    public static let maxInfoPairs = 16
    /// The longest info key, in bytes.
    public static let maxInfoKeyLength = 64
    /// The longest info value, in bytes.
    public static let maxInfoValueLength = 1024
}
