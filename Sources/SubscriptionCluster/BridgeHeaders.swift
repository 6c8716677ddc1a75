import SubscriptionNATS
import SubscriptionWire

/// How a publication travels between nodes (docs/CLUSTER.md, "Subjects and headers"): on subject `subd.m.<number>`,
/// with headers `Subd-Id: <origin> <counter>`, `Subd-From: <sender>` when the publisher named itself, and
/// `Subd-Info: k=v k2=v2` (the info pairs, in their order) when it gave any, and `Subd-Groups: g1 g2` (the queue
/// groups the publishing node served itself) when it served any. The one place these are written and read.
enum BridgeHeaders {
    /// The subject prefix of publications.
    static let subjectPrefix = "subd.m."
    /// The origin node's id and its counter.
    static let id = "Subd-Id"
    /// The publisher's name.
    static let from = "Subd-From"
    /// The info pairs.
    static let info = "Subd-Info"
    /// The queue groups served on the publishing node.
    static let groups = "Subd-Groups"

    /// The NATS subject of a number or pattern.
    static func subject(of name: String) -> String { subjectPrefix + name }

    /// The number a publication's subject names; nil for a subject that is not a publication's.
    static func number(ofSubject subject: String) -> String? {
        guard subject.hasPrefix(subjectPrefix) else { return nil }
        let number = String(subject.dropFirst(subjectPrefix.count))
        return number.isEmpty ? nil : number
    }

    /// What a publication of another node says: its origin and counter, its sender, its info pairs.
    typealias Parts = (origin: String, counter: UInt64, sender: String?, info: [InfoPair])

    /// `Subd-Id`'s value: `<origin> <counter>`.
    static func encodeID(origin: String, counter: UInt64) -> String {
        var bytes = Array(origin.utf8)
        bytes.append(UInt8(ascii: " "))
        ASCIIDecimal.append(counter, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The headers of a publication.
    static func encode(
        origin: String, counter: UInt64, sender: String?, info: [InfoPair], groups: [String] = []
    ) -> NATSHeaders {
        var headers = NATSHeaders()
        headers.append(id, encodeID(origin: origin, counter: counter))
        if let sender { headers.append(from, sender) }
        if !info.isEmpty { headers.append(self.info, info.map { "\($0.key)=\($0.value)" }.joined(separator: " ")) }
        // Group names hold no space (the client-name rule).
        if !groups.isEmpty { headers.append(self.groups, groups.joined(separator: " ")) }
        return headers
    }

    /// True when the headers say the publishing node served `group` itself (names compared by bytes).
    static func served(_ group: String, in headers: NATSHeaders?) -> Bool {
        guard let text = headers?[groups] else { return false }
        return text.utf8.split(separator: UInt8(ascii: " ")).contains { $0.elementsEqual(group.utf8) }
    }

    /// What a publication's headers say; nil when they are not a node's (no valid `Subd-Id`, or pairs that break
    /// the wire's rules).
    static func decode(_ headers: NATSHeaders?) -> Parts? {
        guard let headers, let idText = headers[id], let (origin, counter) = decodeID(idText) else { return nil }
        var pairs: [InfoPair] = []
        if let text = headers[info] {
            for word in text.split(separator: " ") {
                guard let equals = word.firstIndex(of: "=") else { return nil }
                pairs.append(InfoPair(key: String(word[..<equals]), value: String(word[word.index(after: equals)...])))
            }
            do {
                try InfoPair.check(pairs)
            } catch {
                return nil
            }
        }
        let sender = headers[from]
        if let sender, (try? ClientName.check(sender)) == nil { return nil }
        return (origin, counter, sender, pairs)
    }

    /// `Subd-Id`'s value: `<origin> <counter>`, one space, the counter decimal digits (read as bytes: every copy
    /// from another node is read here).
    static func decodeID(_ text: String) -> (origin: String, counter: UInt64)? {
        let utf8 = text.utf8
        guard let space = utf8.firstIndex(of: UInt8(ascii: " ")), space != utf8.startIndex else { return nil }
        guard let counter = ASCIIDecimal.value(of: utf8[utf8.index(after: space)...]) else { return nil }
        return (String(text[..<space]), counter)
    }
}
