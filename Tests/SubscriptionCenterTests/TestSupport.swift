import SubscriptionCenter

/// A record of deliveries shared by several probes, so that calls to a released probe are still visible.
final class DeliveryLog {
    /// (probe name, number, message) in delivery order.
    var entries: [(customer: String, number: String, message: String)] = []

    /// How many deliveries the named probe got.
    func count(for customer: String) -> Int { entries.filter { $0.customer == customer }.count }
}

/// A customer for tests: logs what it receives and can run a hook inside `receive`.
final class Probe: Customer {
    typealias Message = String

    let name: String
    let log: DeliveryLog
    /// What `receive` returns.
    var accepts = true
    /// Run inside `receive`, after logging (for re-entrancy tests).
    var onReceive: ((Probe, String, String) -> Void)?
    /// (number, message) received by this probe.
    private(set) var received: [(number: String, message: String)] = []
    /// The numbers this probe was told were removed, in order.
    private(set) var removedNumbers: [String] = []

    init(_ name: String, log: DeliveryLog = DeliveryLog(), accepts: Bool = true) {
        self.name = name
        self.log = log
        self.accepts = accepts
    }

    func receive(_ message: String, on number: String) -> Bool {
        received.append((number, message))
        log.entries.append((name, number, message))
        onReceive?(self, message, number)
        return accepts
    }

    func numberRemoved(_ number: String) {
        removedNumbers.append(number)
    }
}
