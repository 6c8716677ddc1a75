import SubscriptionCenter
import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire
import XCTest

/// `CREATE`, `REMOVE`, `LIST` and `GET` on a real center: what they answer, what they save before answering, and
/// what they tell on `$SYS.`.
final class NumberCommandTests: XCTestCase {
    func testCreateSavesThenTellsANewNumberAndAnswersExistsForAnOldOne() {
        var harness = Harness()
        harness.client.name = "lab"
        XCTAssertEqual(harness.run("CREATE SCIENCE retain"), .success(.ok("created")))
        XCTAssertEqual(harness.run("CREATE SCIENCE"), .success(.ok("exists")))
        XCTAssertEqual(harness.environment.log, ["saved created SCIENCE"], "saved once, before the reply")
        XCTAssertEqual(harness.environment.posted.map(\.event), [.numberCreated(number: "SCIENCE", retained: true)])
        XCTAssertEqual(harness.environment.posted.map(\.name), ["lab"], "told with the client that made it")
        XCTAssertEqual(try harness.center.retainedRevision(of: "SCIENCE"), 0, "it keeps its kind: retained")
    }

    func testCreateThatCannotBeSavedIsRefusedAndTellsNothing() {
        var harness = Harness()
        harness.environment.saveRefusal = ProtocolError(.limit, "disk full")
        XCTAssertEqual(harness.run("CREATE SCIENCE"), .failure(ProtocolError(.limit, "disk full")))
        XCTAssertTrue(harness.environment.posted.isEmpty)
    }

    func testCreatePastMaxNumbersIsLimit() {
        var harness = Harness()
        harness.center.limits.maxNumbers = 1
        XCTAssertEqual(harness.run("CREATE A"), .success(.ok("created")))
        XCTAssertEqual(Harness.code(harness.run("CREATE B")), .limit)
    }

    func testRemoveSavesFirstTellsTheSubscribersAndCountsThem() throws {
        var harness = Harness()
        try harness.center.create("SCIENCE")
        try harness.center.add(harness.environment.customer, to: "SCIENCE")
        XCTAssertEqual(harness.run("REMOVE SCIENCE"), .success(.ok("removed 1")))
        XCTAssertEqual(harness.environment.log, ["saved removed SCIENCE"])
        XCTAssertEqual(harness.environment.customer.gone, ["SCIENCE"])
        XCTAssertEqual(
            harness.environment.posted.map(\.event), [.numberRemoved(number: "SCIENCE", subscribersTold: 1)])
        XCTAssertEqual(Harness.code(harness.run("REMOVE SCIENCE")), .notFound)
    }

    func testRemoveThatCannotBeSavedLeavesTheNumber() throws {
        var harness = Harness()
        try harness.center.create("SCIENCE")
        harness.environment.saveRefusal = ProtocolError(.limit, "disk full")
        XCTAssertEqual(Harness.code(harness.run("REMOVE SCIENCE")), .limit)
        XCTAssertTrue(harness.center.contains("SCIENCE"))
    }

    func testListGivesSubscribersAndKindsAndAUserSeesWhatItMaySubscribeTo() throws {
        var harness = Harness()
        try harness.center.create("NEWS")
        try harness.center.create("SCIENCE", retained: true)
        try harness.center.add(harness.environment.customer, to: ">")
        XCTAssertEqual(harness.run("LIST"), .success(.list(["NEWS 1", "SCIENCE 1"])))
        XCTAssertEqual(harness.run("LIST > kind"), .success(.list(["NEWS 1 plain", "SCIENCE 1 retained 0"])))
        harness.client.rights = UserRights(
            userName: "alice", publish: PatternRules(allow: []), subscribe: PatternRules(allow: ["NEWS"]),
            mayCreateAndRemove: false, credential: "x")
        XCTAssertEqual(harness.run("LIST"), .success(.list(["NEWS 1"])))
    }

    func testGetPushesTheCurrentValueThenAnswersItsRevision() throws {
        var harness = Harness()
        try harness.center.create("SCIENCE", retained: true)
        XCTAssertEqual(harness.run("GET SCIENCE"), .success(.count(0)), "+OK 0 and no push before the first value")
        XCTAssertTrue(harness.environment.pushed.isEmpty)
        XCTAssertEqual(harness.run("PUB SCIENCE 2\nV1"), .success(.count(0)))
        XCTAssertEqual(harness.run("GET SCIENCE"), .success(.count(1)))
        XCTAssertEqual(harness.environment.pushed.map(\.payload), [Array("V1".utf8)])
        XCTAssertEqual(harness.environment.pushed.first?.revision, 1)
    }

    func testGetOfAPlainOrMissingNumberIsRefused() throws {
        var harness = Harness()
        try harness.center.create("NEWS")
        XCTAssertEqual(Harness.code(harness.run("GET NEWS")), .proto)
        XCTAssertEqual(Harness.code(harness.run("GET NOWHERE")), .notFound)
    }
}
