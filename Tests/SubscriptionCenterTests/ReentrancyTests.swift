import SubscriptionCenter
import XCTest

/// A customer's `receive` calls back into the center.
final class ReentrancyTests: XCTestCase {
    func testReceiveUnsubscribesItself() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let probe = Probe("p")
        try center.add(probe, to: "N")
        try center.add(probe, to: "*")
        probe.onReceive = { me, _, _ in center.removeAll(me) }
        XCTAssertEqual(try center.send("1", to: "N"), 1)
        XCTAssertEqual(try center.send("2", to: "N"), 0)
        XCTAssertEqual(probe.received.map(\.message), ["1"])
        XCTAssertEqual(center.subscriptionCount, 0)
    }

    func testReceiveUnsubscribesACustomerNotReachedYet() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let first = Probe("first")
        let second = Probe("second")
        try center.add(first, to: "N")
        try center.add(second, to: "N")
        try center.add(second, to: ">")
        first.onReceive = { _, _, _ in center.removeAll(second) }
        XCTAssertEqual(try center.send("m", to: "N"), 1)
        XCTAssertEqual(second.received.count, 0)
    }

    /// A nested send must not disturb the outer send's at-most-once bookkeeping.
    func testNestedSendDeliversEachMessageOnce() throws {
        let center = SubscriptionCenter<String>()
        try center.create("X")
        try center.create("Y")
        let log = DeliveryLog()
        let c1 = Probe("c1", log: log)
        let c2 = Probe("c2", log: log)
        try center.add(c1, to: "X")
        try center.add(c1, to: ">")
        try center.add(c2, to: "X")
        try center.add(c2, to: "*")
        try center.add(c2, to: "Y")
        var innerCount = -1
        c1.onReceive = { _, _, number in
            if number == "X" { innerCount = (try? center.send("inner", to: "Y")) ?? -2 }
        }
        XCTAssertEqual(try center.send("outer", to: "X"), 2)
        XCTAssertEqual(innerCount, 2)
        XCTAssertEqual(c1.received.map(\.message).sorted(), ["inner", "outer"])
        XCTAssertEqual(c2.received.map(\.message).sorted(), ["inner", "outer"])
        XCTAssertEqual(log.entries.count, 4)
    }

    func testReceiveResubscribesDuringSend() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let probe = Probe("p")
        try center.add(probe, to: "N")
        try center.add(probe, to: "*")
        probe.onReceive = { me, _, _ in
            center.removeAll(me)
            try? center.add(me, to: ">")
            try? center.add(me, to: "N")
        }
        XCTAssertEqual(try center.send("1", to: "N"), 1)
        XCTAssertEqual(probe.received.count, 1)
        probe.onReceive = nil
        XCTAssertEqual(try center.send("2", to: "N"), 1)
        XCTAssertEqual(probe.received.map(\.message), ["1", "2"])
    }

    func testReceiveSubscribesANewcomer() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let host = Probe("host")
        let newcomer = Probe("newcomer")
        try center.add(host, to: "N")
        host.onReceive = { _, _, _ in
            try? center.add(newcomer, to: "N")
            try? center.add(newcomer, to: ">")
        }
        XCTAssertEqual(try center.send("1", to: "N"), 1, "subscribers are those at the moment of the send")
        XCTAssertEqual(try center.send("2", to: "N"), 2)
        XCTAssertEqual(newcomer.received.map(\.message), ["2"])
    }

    func testReceiveRemovesTheNumber() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let log = DeliveryLog()
        let remover = Probe("remover", log: log)
        let exact = Probe("exact", log: log)
        let wildcard = Probe("wildcard", log: log)
        try center.add(remover, to: "N")
        try center.add(exact, to: "N")
        try center.add(wildcard, to: "*")
        remover.onReceive = { _, _, _ in _ = try? center.remove("N") }
        XCTAssertEqual(try center.send("m", to: "N"), 2)
        XCTAssertEqual(log.entries.map(\.customer), ["remover", "wildcard"])
        XCTAssertFalse(center.contains("N"))
        XCTAssertEqual(center.subscriptionCount, 1)
    }

    func testReceiveReleasesAnotherCustomer() throws {
        let center = SubscriptionCenter<String>()
        try center.create("N")
        let log = DeliveryLog()
        let first = Probe("first", log: log)
        var holder: [Probe] = [Probe("released", log: log)]
        try center.add(first, to: "N")
        try center.add(holder[0], to: "N")
        first.onReceive = { _, _, _ in holder.removeAll() }
        XCTAssertEqual(try center.send("m", to: "N"), 1)
        XCTAssertEqual(log.entries.map(\.customer), ["first"])
        XCTAssertEqual(center.customerCount, 1)
    }
}
