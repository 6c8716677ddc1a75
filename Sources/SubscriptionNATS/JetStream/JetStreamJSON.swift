#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The JSON shapes of the JetStream API calls the key-value buckets make (nats-server's `$JS.API.…` requests and
/// replies, and a write's publish acknowledgement), read and written with ``JSONCoding``. Only the members the client
/// uses are declared; the others are ignored.
enum JetStreamJSON {
    /// A reply: either its `"error"` object or the call's own shape (`Body`), decoded from the same object.
    struct Reply<Body: Decodable>: Decodable {
        /// The error, when the call failed.
        var error: APIError?
        /// The call's own members, when it did not.
        var body: Body?

        private enum CodingKeys: String, CodingKey { case error }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            error = try container.decodeIfPresent(APIError.self, forKey: .error)
            body = error == nil ? try Body(from: decoder) : nil
        }
    }

    /// `"error": {"code": 400, "err_code": 10071, "description": "wrong last sequence: 7"}`.
    struct APIError: Decodable, Equatable {
        /// The HTTP-like status.
        var code: Int
        /// JetStream's own error code (``JetStreamError/Code``); 0 when missing.
        var errorCode: Int
        /// The server's text.
        var description: String

        private enum CodingKeys: String, CodingKey {
            case code
            case errorCode = "err_code"
            case description
        }

        init(code: Int, errorCode: Int, description: String) {
            self.code = code
            self.errorCode = errorCode
            self.description = description
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            code = try container.decodeIfPresent(Int.self, forKey: .code) ?? 0
            errorCode = try container.decodeIfPresent(Int.self, forKey: .errorCode) ?? 0
            description = try container.decodeIfPresent(String.self, forKey: .description) ?? ""
        }
    }

    /// A write's acknowledgement: `{"stream": "KV_b", "seq": 7}`, with `"duplicate": true` when its `Nats-Msg-Id`
    /// was seen within the stream's duplicate window.
    struct PublishAck: Decodable, Equatable {
        /// The stream's sequence of the write (of the first write, for a duplicate).
        var seq: UInt64?
        /// True for a duplicate (nothing stored).
        var duplicate: Bool?
    }

    /// `STREAM.CREATE` and `STREAM.INFO` reply: the stream's configuration, of which the client reads the
    /// republish destination, and its state, of which it reads the last sequence.
    struct StreamInfo: Decodable, Equatable {
        /// The configuration.
        var config: Config?
        /// What the stream holds.
        var state: State?

        /// The part of a stream's state read back.
        struct State: Decodable, Equatable {
            /// The sequence of the last message stored (0: none yet).
            var lastSequence: UInt64?

            enum CodingKeys: String, CodingKey {
                case lastSequence = "last_seq"
            }
        }

        /// The part of a stream configuration read back.
        struct Config: Decodable, Equatable {
            /// Where stored writes are republished, if anywhere.
            var republish: Republish?
        }
    }

    /// `"republish": {"src": "$KV.b.>", "dest": "subd.kv.b.>"}`.
    struct Republish: Codable, Equatable {
        /// The stream subjects whose stored writes are republished (nats-server may leave it out: `omitempty`).
        var src: String?
        /// Where: `dest` with the subject's tokens after `src`'s wildcard.
        var dest: String
    }

    /// `STREAM.MSG.GET` request: the last message of a subject, or the first at or after a sequence on a subject
    /// filter.
    struct MessageGetRequest: Encodable, Equatable {
        /// The first sequence to look at (with ``nextBySubject``).
        var seq: UInt64?
        /// The subject whose last message is wanted.
        var lastBySubject: String?
        /// The subject filter of the next message from ``seq``.
        var nextBySubject: String?

        private enum CodingKeys: String, CodingKey {
            case seq
            case lastBySubject = "last_by_subj"
            case nextBySubject = "next_by_subj"
        }
    }

    /// `STREAM.MSG.GET` reply: `{"message": {"subject", "seq", "hdrs", "data", "time"}}`, the header block and
    /// the payload in base64 (`Data`'s default decoding, which refuses text that is not base64).
    struct MessageGetReply: Decodable, Equatable {
        /// The stored message.
        var message: StoredMessage

        /// One stored message.
        struct StoredMessage: Decodable, Equatable {
            /// Its subject, `$KV.<bucket>.<key>`.
            var subject: String
            /// Its stream sequence.
            var seq: UInt64
            /// Its header block (`NATS/1.0\r\n…`), if it has headers.
            var hdrs: Data?
            /// Its payload; missing for an empty one.
            var data: Data?
        }
    }

    /// `STREAM.CREATE` request: a key-value bucket's stream (``KeyValueConfiguration/streamConfig``).
    struct StreamConfig: Encodable, Equatable {
        var name: String
        var subjects: [String]
        var retention = "limits"
        var maxConsumers = -1
        var maxMessages = -1
        var maxBytes: Int
        /// Nanoseconds; 0: for ever.
        var maxAge: Int
        var maxMessagesPerSubject = 1
        var maxMessageSize: Int
        var storage: String
        var discard = "new"
        var replicas: Int
        /// Nanoseconds.
        var duplicateWindow: Int
        var allowDirect = true
        var mirrorDirect = false
        var denyDelete = true
        var denyPurge = false
        var allowRollupHeaders = true
        var republish: Republish

        private enum CodingKeys: String, CodingKey {
            case name, subjects, retention, storage, discard, republish
            case maxConsumers = "max_consumers"
            case maxMessages = "max_msgs"
            case maxBytes = "max_bytes"
            case maxAge = "max_age"
            case maxMessagesPerSubject = "max_msgs_per_subject"
            case maxMessageSize = "max_msg_size"
            case replicas = "num_replicas"
            case duplicateWindow = "duplicate_window"
            case allowDirect = "allow_direct"
            case mirrorDirect = "mirror_direct"
            case denyDelete = "deny_delete"
            case denyPurge = "deny_purge"
            case allowRollupHeaders = "allow_rollup_hdrs"
        }
    }
}
