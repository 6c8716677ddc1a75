/// The confirmations of the cross-node `+OK <receivers>` (docs/CLUSTER.md, step 4): a publication waiting for them
/// carries the reply subject `subd.ack.<origin>`; a node that delivers it publishes there
/// `<counter> <its origin> <receivers>` for the copy of its plain subscription, and `<counter> <its origin>
/// <receivers> <group>` for the copy of a queue group's (docs/CLUSTER.md, steps 3 and 4: the two copies serve
/// different sessions, so each is confirmed and counted on its own). Written and read only here.
extension BridgeHeaders {
    /// The subject prefix of confirmations.
    static let ackPrefix = "subd.ack."

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
