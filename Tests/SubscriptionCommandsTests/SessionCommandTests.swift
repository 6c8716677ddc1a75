import SubscriptionCenter
import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire
import XCTest

/// `HELLO`, `PING`, `STATS`, `QUIT` and the dispatch's own part (the policy first, `DENIED` counted).
final class SessionCommandTests: XCTestCase {
    private func stranger(token: String? = nil, users: [String] = []) -> Harness {
        var harness = Harness()
        harness.client.isAuthenticated = false
        harness.environment.authToken = token
        harness.environment.users = users
        harness.environment.requiresAuthentication = token != nil || !users.isEmpty
        return harness
    }

    func testHelloNamesTheClientAndWelcomesIt() {
        var harness = Harness()
        XCTAssertEqual(harness.run("HELLO name=lab"), .success(.ok("subd 9.9.9 proto=1.1 session=7")))
        XCTAssertEqual(harness.client.name, "lab")
    }

    func testTheSharedTokenAuthenticatesWithEveryRight() {
        var harness = stranger(token: "secret")
        XCTAssertEqual(harness.run("HELLO name=lab token=secret"), .success(.ok("subd 9.9.9 proto=1.1 session=7")))
        XCTAssertTrue(harness.client.isAuthenticated)
        XCTAssertNil(harness.client.rights)
        XCTAssertEqual(harness.client.name, "lab")
    }

    func testAFailedHelloIsCountedAndSitsOutALongerDelayEachTime() {
        var harness = stranger(token: "secret")
        XCTAssertEqual(harness.run("HELLO token=wrong"), .failure(ProtocolError(.auth, "wrong token")))
        XCTAssertEqual(Harness.code(harness.run("HELLO")), .auth, "no token where one is needed")
        XCTAssertEqual(harness.client.authFailures, 2)
        XCTAssertFalse(harness.client.isAuthenticated)
        XCTAssertEqual(
            harness.environment.log, ["auth failure 1", "hold", "release 0.5", "auth failure 2", "hold", "release 1.0"])
    }

    func testTheLastAllowedFailureClosesTheConnection() {
        var harness = stranger(token: "secret")
        harness.client.authFailures = HelloCommand.maxFailures - 1
        let result = harness.run("HELLO token=wrong")
        XCTAssertEqual(
            result,
            .failure(ProtocolError(.auth, "wrong token; \(HelloCommand.maxFailures) failures: closing the connection")))
        XCTAssertEqual(harness.environment.log, ["auth failure 10", "close authFailures"])
    }

    func testAUsersSecretIsVerifiedByTheEnvironment() {
        var harness = stranger(users: ["alice"])
        XCTAssertEqual(harness.run("HELLO name=alice token=pw"), .success(.later))
        XCTAssertEqual(harness.environment.log, ["verify alice"])
        XCTAssertFalse(harness.client.isAuthenticated, "not before the check answered")
    }

    func testNobodyTakesAUsersNameAndAUserKeepsItsOwn() {
        var harness = Harness()
        harness.environment.users = ["alice"]
        XCTAssertEqual(Harness.code(harness.run("HELLO name=alice")), .denied)
        harness.client.logIn(
            as: UserRights(
                userName: "bob", publish: PatternRules(allow: []), subscribe: PatternRules(allow: []),
                mayCreateAndRemove: false, credential: "x"))
        XCTAssertEqual(harness.client.name, "bob")
        XCTAssertEqual(Harness.code(harness.run("HELLO name=carol")), .denied)
        XCTAssertEqual(harness.environment.log, ["denied", "denied"], "each DENIED counted")
    }

    func testBeforeAuthenticationThePolicyAnswersFirst() throws {
        var harness = stranger(token: "secret")
        try harness.center.create("SCIENCE")
        XCTAssertEqual(Harness.code(harness.run("PUB SCIENCE 1\nx")), .auth)
        XCTAssertEqual(harness.run("PING"), .success(.pong(nil)))
        XCTAssertEqual(harness.run("PING hi there"), .success(.pong("hi there")))
        XCTAssertTrue(harness.environment.log.isEmpty, "nothing ran, nothing counted")
    }

    func testStatsAreTheEnvironmentsLines() {
        var harness = Harness()
        XCTAssertEqual(harness.run("STATS"), .success(.list(["uptime 1"])))
    }

    func testQuitSaysByeAndAsksToClose() {
        var harness = Harness()
        XCTAssertEqual(harness.run("QUIT"), .success(.ok("bye")))
        XCTAssertEqual(harness.environment.log, ["close quit"])
    }
}
