import SubscriptionNATS

/// The confirmations of the cross-node `+OK <receivers>` (docs/CLUSTER.md, step 4): a publication waiting for them
/// carries the reply subject `subd.ack.<origin>`; a node that delivers it publishes there
/// `<counter> <its origin> <receivers>` for the copy of its plain subscription, and `<counter> <its origin>
/// <receivers> <group>` for the copy of a queue group's (docs/CLUSTER.md, steps 3 and 4: the two copies serve
/// different sessions, so each is confirmed and counted on its own). A bucket write that waits the same way (a
/// `REMOVE`'s delete, a retained value; steps 5 and 6) cannot carry a reply subject (the write's own is JetStream's
/// acknowledgement): it carries `Subd-Id: <origin> <counter>` and `Subd-Ack: subd.ack.<origin>`, and a node that
/// applies it as its watch sees it stored confirms there as for a publication. Written and read only here.
extension BridgeHeaders {
    /// The subject prefix of confirmations.
    static let ackPrefix = "subd.ack."
    /// The header of a bucket write that names the subject its confirmations go to.
    static let ack = "Subd-Ack"

    /// The headers of a `REMOVE`'s delete: `Subd-Id`, and `Subd-Ack` with `replyTo` when the remover waits.
    static func encodeRemoval(origin: String, counter: UInt64, replyTo: String?) -> NATSHeaders {
        var headers = NATSHeaders()
        headers.append(id, "\(origin) \(counter)")
        if let replyTo { headers.append(ack, replyTo) }
        return headers
    }

    /// Who asks a bucket write to be confirmed: its writer's origin, the counter to confirm and the subject (a
    /// confirmation subject, `subd.ack.<origin>`); nil when the write asks for none (no `Subd-Ack`, `ack: local`),
    /// or its headers are not a node's.
    static func confirmationRequest(
        in headers: NATSHeaders?
    ) -> (origin: String, counter: UInt64, subject: String)? {
        guard let headers, let subject = headers[ack], subject.hasPrefix(ackPrefix), let idText = headers[id] else {
            return nil
        }
        let parts = idText.split(separator: " ")
        guard parts.count == 2, let counter = UInt64(parts[1]) else { return nil }
        return (String(parts[0]), counter, subject)
    }

    /// The subject a node's confirmations come to.
    static func ackSubject(of origin: String) -> String { ackPrefix + origin }

    /// A confirmation's payload.
    static func encodeConfirmation(counter: UInt64, origin: String, receivers: Int, group: String? = nil) -> [UInt8] {
        Array("\(counter) \(origin) \(receivers)\(group.map { " " + $0 } ?? "")".utf8)
    }

    /// What a confirmation says; nil for a payload that is not one.
    static func decodeConfirmation(
        _ payload: [UInt8]
    ) -> (counter: UInt64, origin: String, receivers: Int, group: String?)? {
        let words = payload.split(separator: UInt8(ascii: " "))
        guard words.count == 3 || words.count == 4, let counter = UInt64(String(decoding: words[0], as: UTF8.self)),
            let receivers = Int(String(decoding: words[2], as: UTF8.self)), receivers >= 0
        else { return nil }
        let group = words.count == 4 ? String(decoding: words[3], as: UTF8.self) : nil
        return (counter, String(decoding: words[1], as: UTF8.self), receivers, group)
    }
}
