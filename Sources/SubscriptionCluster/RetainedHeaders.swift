import SubscriptionNATS
import SubscriptionWire

/// The headers of a value in the retained bucket `subd_retained` (docs/CLUSTER.md, "Subjects and headers"): those of
/// a publication (``BridgeHeaders``: `Subd-Id`, `Subd-From`, `Subd-Info`) and `Subd-Rev: <revision>` and
/// `Subd-Gen: <generation>` (the numbers bucket's revision of the number's create), and `Subd-Ack` when its writer
/// waits for the other nodes' receivers (`BridgeHeaders+Acks.swift`).
extension BridgeHeaders {
    /// The value's revision.
    static let revision = "Subd-Rev"
    /// The number's generation.
    static let generation = "Subd-Gen"

    /// The headers of a retained value.
    static func encodeRetained(
        origin: String, counter: UInt64, sender: String?, info: [InfoPair], revision: UInt64, generation: UInt64,
        replyTo: String? = nil
    ) -> NATSHeaders {
        var headers = encode(origin: origin, counter: counter, sender: sender, info: info)
        headers.append(self.revision, String(revision))
        headers.append(self.generation, String(generation))
        if let replyTo { headers.append(ack, replyTo) }
        return headers
    }

    /// A retained value from a bucket entry's headers and payload; nil when a node did not write it (headers
    /// missing or invalid, a revision of 0).
    static func decodeRetained(_ headers: NATSHeaders?, payload: [UInt8]) -> RetainedCache.Value? {
        guard let parts = decode(headers), let headers,
            let revision = headers[self.revision].flatMap({ UInt64($0) }), revision > 0,
            let generation = headers[self.generation].flatMap({ UInt64($0) })
        else { return nil }
        return RetainedCache.Value(
            generation: generation, revision: revision, sender: parts.sender, info: parts.info, payload: payload,
            origin: parts.origin, counter: parts.counter)
    }
}
