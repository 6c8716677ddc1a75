import SubscriptionCenter
import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire
import XCTest

/// `PUB` and `SEND`: the fan-out through the center, the count, the staging of a saved retained value.
final class PublishCommandTests: XCTestCase {
    func testAPublicationReachesTheSubscribersWithTheClientsNameAndIsCounted() throws {
        var harness = Harness()
        harness.client.name = "lab"
        try harness.center.create("SCIENCE")
        try harness.center.add(harness.environment.customer, to: "SCIENCE")
        XCTAssertEqual(harness.run("PUB SCIENCE 4 unit=K\nV1.0"), .success(.count(1)))
        XCTAssertEqual(harness.run("SEND SCIENCE V2"), .success(.count(1)))
        let received = harness.environment.customer.received.map(\.message)
        XCTAssertEqual(received.map(\.payload), [Array("V1.0".utf8), Array("V2".utf8)])
        XCTAssertEqual(received.map(\.sender), ["lab", "lab"])
        XCTAssertEqual(received.first?.info, [InfoPair(key: "unit", value: "K")])
        XCTAssertEqual(harness.environment.log, ["published SCIENCE 1", "published SCIENCE 1"])
    }

    func testAPublicationNobodyReceivesIsStillCountedWithNoReceiver() throws {
        var harness = Harness()
        try harness.center.create("SCIENCE")
        XCTAssertEqual(harness.run("PUB SCIENCE 1\nx"), .success(.count(0)))
        XCTAssertEqual(harness.environment.log, ["published SCIENCE 0"])
    }

    func testAPublicationToAMissingNumberIsNotFoundAndCountsNothing() {
        var harness = Harness()
        XCTAssertEqual(Harness.code(harness.run("PUB NOWHERE 1\nx")), .notFound)
        XCTAssertTrue(harness.environment.log.isEmpty)
    }

    func testARetainedValueTheEnvironmentSavesIsStagedNotSent() throws {
        var harness = Harness()
        harness.environment.stages = true
        harness.client.name = "lab"
        try harness.center.create("SCIENCE", retained: true)
        XCTAssertEqual(harness.run("PUB SCIENCE 2\nV1"), .success(.staged))
        XCTAssertEqual(harness.environment.log, ["stage SCIENCE V1 from lab"])
        XCTAssertEqual(try harness.center.retainedRevision(of: "SCIENCE"), 0, "not current before it is saved")
        harness.environment.saveRefusal = ProtocolError(.limit, "disk full")
        XCTAssertEqual(Harness.code(harness.run("PUB SCIENCE 2\nV2")), .limit)
    }

    func testARetainedNumbersValueBecomesCurrentWithTheNextRevision() throws {
        var harness = Harness()
        try harness.center.create("SCIENCE", retained: true)
        XCTAssertEqual(harness.run("PUB SCIENCE 2\nV1"), .success(.count(0)))
        XCTAssertEqual(harness.run("PUB SCIENCE 2\nV2"), .success(.count(0)))
        let slot = try XCTUnwrap(try harness.center.retainedSlot(of: "SCIENCE"))
        XCTAssertEqual(slot.revision, 2)
        XCTAssertEqual(slot.value?.payload, Array("V2".utf8))
    }
}
