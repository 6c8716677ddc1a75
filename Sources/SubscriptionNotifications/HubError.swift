import SubscriptionCenter
import SubscriptionWire

/// Why a ``NotificationHub`` refused a call. Each case carries what a person needs to act on it; ``description`` is
/// one line of plain text. Compare cases, never descriptions.
public enum HubError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The name is not a valid number (or, to observe, pattern): the name as given, and why.
    case invalidName(String, Names.Problem)
    /// No number of this name exists: create it first (``NotificationHub/create(_:retained:)``).
    case notFound(String)
    /// The number exists but is a plain one: only a retained number has a value to read or watch.
    case notRetained(String)
    /// A sender name (`from:`) breaks the client-name rule of the wire (1 to 64 bytes, no space or control byte).
    case invalidSender(String, ClientName.Problem)
    /// A queue group name breaks the client-name rule of the wire.
    case invalidGroup(String, ClientName.Problem)
    /// The info pairs break the wire's info-pair rules (keys, values, at most 16, no key twice).
    case invalidInfo(InfoPair.Problem)
    /// A buffer limit below 1 was asked for.
    case invalidBufferLimit(Int)

    public var description: String {
        switch self {
        case .invalidName(let name, let problem): return "invalid name '\(name)': it \(problem)"
        case .notFound(let number): return "no such number: \(number) (create it first)"
        case .notRetained(let number): return "'\(number)' is not a retained number (create it with retained: true)"
        case .invalidSender(let name, let problem): return "invalid sender name '\(name)': it \(problem)"
        case .invalidGroup(let name, let problem): return "invalid group name '\(name)': it \(problem)"
        case .invalidInfo(let problem): return "invalid info pairs: \(problem)"
        case .invalidBufferLimit(let limit): return "a buffer limit must be at least 1 (got \(limit))"
        }
    }

    /// The center's refusal as the hub's. The hub sets no limits, so the center never refuses for one.
    init(_ error: CenterError) {
        switch error {
        case .invalidName(let name, let problem): self = .invalidName(name, problem)
        case .notFound(let number): self = .notFound(number)
        case .limit(let text): preconditionFailure("the hub's center sets no limits, yet refused: \(text)")
        }
    }
}

/// The checks every entry point makes before it takes the lock: the wire's rules, so that what is posted here could
/// travel to subd unchanged.
enum HubRules {
    static func checkNumber(_ number: String) throws(HubError) {
        do { try Names.checkNumber(number) } catch { throw .invalidName(number, error) }
    }

    static func checkPattern(_ pattern: String) throws(HubError) {
        do { try Names.checkPattern(pattern) } catch { throw .invalidName(pattern, error) }
    }

    static func checkSender(_ sender: String?) throws(HubError) {
        guard let sender else { return }
        do { try ClientName.check(sender) } catch { throw .invalidSender(sender, error) }
    }

    static func checkGroup(_ group: String?) throws(HubError) {
        guard let group else { return }
        do { try ClientName.check(group) } catch { throw .invalidGroup(group, error) }
    }

    static func checkInfo(_ info: [InfoPair]) throws(HubError) {
        guard !info.isEmpty else { return }
        do { try InfoPair.check(info) } catch { throw .invalidInfo(error) }
    }

    static func checkBufferLimit(_ limit: Int) throws(HubError) {
        guard limit >= 1 else { throw .invalidBufferLimit(limit) }
    }
}
