/// The size limits the command parser enforces (both answer `TOOBIG` and close the connection).
public struct ProtocolLimits: Sendable, Equatable {
    /// The longest command line in bytes, not counting the LF and a CR right before it.
    public var maxLine: Int = 65_536
    /// The largest payload in bytes: the `<nbytes>` of `PUB`, or the text of `SEND`.
    public var maxPayload: Int = 1_048_576

    /// Makes limits; `maxLine` must be at least 1 and `maxPayload` at least 0.
    public init(maxLine: Int = 65_536, maxPayload: Int = 1_048_576) {
        precondition(maxLine >= 1, "maxLine must be at least 1, got \(maxLine)")
        precondition(maxPayload >= 0, "maxPayload must not be negative, got \(maxPayload)")
        self.maxLine = maxLine
        self.maxPayload = maxPayload
    }
}
