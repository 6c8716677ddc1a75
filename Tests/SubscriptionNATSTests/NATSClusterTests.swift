import TestSupport
import XCTest

@testable import SubscriptionNATS

/// Three servers joined by routes: the client learns the others from INFO and moves to one when its own dies.
final class NATSClusterTests: NATSTestCase {
    func testTheClientFailsOverToAServerItLearnedFromConnectURLs() throws {
        let n1 = try startServer(.init(name: "n1", clusterRoutes: []))
        let n2 = try startServer(.init(name: "n2", clusterRoutes: [n1.routeURL]))
        let n3 = try startServer(.init(name: "n3", clusterRoutes: [n1.routeURL]))
        // Configured with n1 only.
        let client = try connectedClient([n1.address], options: NATSClientOptions(reconnectWait: .milliseconds(100)))
        let (_, messages) = try client.subscribe("subd.m.>")
        client.flush()
        // The cluster forms; n1 sends INFO again with every server's client address.
        let deadline = Date().addingTimeInterval(15)
        while client.sync({ $0.knownServers.count }) < 3 && Date() < deadline { usleep(10_000) }
        XCTAssertEqual(Set(client.sync { $0.knownServers.map(\.port) }), [n1.port, n2.port, n3.port])

        n1.kill()
        XCTAssertTrue(
            client.statuses.wait(untilAll: { $0.filter(isConnected).count == 2 }, timeout: 20),
            "\(client.statuses.all) \(client.errors.all)")
        let now = try XCTUnwrap(client.sync { $0.currentServer?.port })
        XCTAssertTrue([n2.port, n3.port].contains(now), "moved to n2 or n3, not \(now)")

        // The subscription was restored on the new server: a publication on the other one arrives.
        let elsewhere = now == n2.port ? n3 : n2
        let publisher = try connectedClient([elsewhere.address], label: "publisher")
        // Interest crosses the route asynchronously: publish until one arrives (15 s at most).
        var arrived = false
        let arrival = Date().addingTimeInterval(15)
        var index = 0
        while !arrived && Date() < arrival {
            try publisher.publish("subd.m.SCIENCE", "after failover \(index)")
            publisher.flush()
            arrived = messages.wait(count: 1, timeout: 0.05) != nil
            index += 1
        }
        XCTAssertTrue(arrived)
        XCTAssertTrue(text(messages.all[0]).hasPrefix("after failover"))
    }
}
