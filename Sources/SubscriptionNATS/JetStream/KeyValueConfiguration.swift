/// How a key-value bucket is made: a JetStream stream `KV_<bucket>` over `$KV.<bucket>.>` that keeps the latest
/// ``history`` messages per key (one by default), with direct gets, and that republishes every stored write on
/// `<updatesPrefix>.<bucket>.<key>` for watchers.
public struct KeyValueConfiguration: Equatable, Sendable {
    /// Where the stream keeps its data.
    public enum Storage: String, Equatable, Sendable {
        /// On disk (survives a server restart).
        case file
        /// In memory.
        case memory
    }

    /// The bucket's name: letters, digits, `_` and `-`.
    public var bucket: String
    /// How many servers keep a copy (1, 3 or 5 in a cluster).
    public var replicas: Int
    /// File or memory.
    public var storage: Storage
    /// The most bytes the bucket may hold; nil: no limit (the server's JetStream limits apply).
    public var maxBytes: Int?
    /// The largest value; nil: no limit but the server's `max_payload`.
    public var maxValueSize: Int?
    /// How long a value lives; nil: for ever.
    public var maxAge: Duration?
    /// How many of a key's latest writes the bucket keeps (1 to 64): the latest is its value; the ones before it
    /// let a watcher that missed writes (``KeyValueWatcher``, a gap) still read them after newer ones were stored.
    public var history: Int
    /// The subject prefix stored writes are republished under, for ``KeyValueWatcher``.
    public var updatesPrefix: String

    /// A bucket kept on file, one replica, one write per key, without limits, republishing under `subd.kv`.
    public init(
        bucket: String, replicas: Int = 1, storage: Storage = .file, maxBytes: Int? = nil, maxValueSize: Int? = nil,
        maxAge: Duration? = nil, history: Int = 1, updatesPrefix: String = "subd.kv"
    ) {
        precondition((1...64).contains(history), "a bucket keeps 1 to 64 writes per key")
        self.bucket = bucket
        self.replicas = replicas
        self.storage = storage
        self.maxBytes = maxBytes
        self.maxValueSize = maxValueSize
        self.maxAge = maxAge
        self.history = history
        self.updatesPrefix = updatesPrefix
    }

    /// True for a valid bucket name (letters, digits, `_`, `-`; not empty).
    public static func isValidBucketName(_ name: String) -> Bool {
        !name.isEmpty
            && name.utf8.allSatisfy { byte in
                (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                    || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
                    || byte == UInt8(ascii: "-")
            }
    }

    /// The stream configuration of `$JS.API.STREAM.CREATE.KV_<bucket>`. The same configuration sent twice is
    /// accepted both times, so every node may create the bucket it needs.
    var streamConfig: JetStreamJSON.StreamConfig {
        let maxAgeNanoseconds = maxAge.map { Int(clamping: NATSConnectionStateMachine.nanoseconds($0)) } ?? 0
        // JetStream's duplicate window may not be longer than the values live (2 minutes by default).
        let duplicateWindow = maxAgeNanoseconds > 0 ? min(maxAgeNanoseconds, 120_000_000_000) : 120_000_000_000
        return JetStreamJSON.StreamConfig(
            name: "KV_\(bucket)", subjects: ["$KV.\(bucket).>"], maxBytes: maxBytes ?? -1, maxAge: maxAgeNanoseconds,
            maxMessagesPerSubject: history, maxMessageSize: maxValueSize ?? -1, storage: storage.rawValue,
            replicas: replicas, duplicateWindow: duplicateWindow,
            republish: JetStreamJSON.Republish(src: "$KV.\(bucket).>", dest: "\(updatesPrefix).\(bucket).>"))
    }
}
