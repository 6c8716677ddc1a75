/// The confirmations of the cross-node `+OK <receivers>` (docs/CLUSTER.md, step 4): a publication waiting for them
/// carries the reply subject `subd.ack.<origin>`; a node that delivers it publishes there
/// `<counter> <its origin> <receivers>`. Written and read only here.
extension BridgeHeaders {
    /// The subject prefix of confirmations.
    static let ackPrefix = "subd.ack."

    /// The subject a node's confirmations come to.
    static func ackSubject(of origin: String) -> String { ackPrefix + origin }

    /// A confirmation's payload.
    static func encodeConfirmation(counter: UInt64, origin: String, receivers: Int) -> [UInt8] {
        Array("\(counter) \(origin) \(receivers)".utf8)
    }

    /// What a confirmation says; nil for a payload that is not one.
    static func decodeConfirmation(_ payload: [UInt8]) -> (counter: UInt64, origin: String, receivers: Int)? {
        let words = payload.split(separator: UInt8(ascii: " "))
        guard words.count == 3, let counter = UInt64(String(decoding: words[0], as: UTF8.self)),
            let receivers = Int(String(decoding: words[2], as: UTF8.self)), receivers >= 0
        else { return nil }
        return (counter, String(decoding: words[1], as: UTF8.self), receivers)
    }
}
