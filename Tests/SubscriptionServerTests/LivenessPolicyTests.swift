import XCTest

@testable import SubscriptionServer

/// `command_timeout` and `auth_timeout` as a pure decision over a session's facts and the time.
final class LivenessPolicyTests: XCTestCase {
    private let second: UInt64 = 1_000_000_000
    private var policy: LivenessPolicy {
        LivenessPolicy(commandTimeoutNanoseconds: 2 * second, authTimeoutNanoseconds: 5 * second)
    }

    private func facts(
        lastInputAt: UInt64 = 0, partial: Bool = true, reading: Bool = true, authenticated: Bool = true
    ) -> LivenessPolicy.Facts {
        .init(
            connectedAt: 0, lastInputAt: lastInputAt, hasPartialCommand: partial, isReading: reading,
            isAuthenticated: authenticated)
    }

    func testAPartialCommandWithoutNewBytesExpiresAtTheTimeout() {
        XCTAssertNil(policy.expiry(of: facts(lastInputAt: second), now: 3 * second - 1, authenticationRequired: false))
        let expiry = policy.expiry(of: facts(lastInputAt: second), now: 3 * second, authenticationRequired: false)
        XCTAssertEqual(expiry?.reason, .commandTimeout)
        XCTAssertEqual(expiry?.error.code, .limit)
        XCTAssertEqual(expiry?.error.message, "command not completed within command_timeout (2 s)")
        XCTAssertEqual(expiry?.error.closesConnection, false, "the session closes gracefully after the line")
    }

    func testIdleConnectionsAndPausedReadingNeverExpireForCommands() {
        XCTAssertNil(policy.expiry(of: facts(partial: false), now: 100 * second, authenticationRequired: false))
        XCTAssertNil(
            policy.expiry(of: facts(reading: false), now: 100 * second, authenticationRequired: false),
            "while subd does not read, the client cannot make progress")
    }

    func testUnauthenticatedConnectionsExpireOnlyWhenAuthenticationIsRequired() {
        let silent = facts(partial: false, authenticated: false)
        XCTAssertNil(policy.expiry(of: silent, now: 5 * second - 1, authenticationRequired: true))
        XCTAssertEqual(policy.expiry(of: silent, now: 5 * second, authenticationRequired: true)?.reason, .authTimeout)
        XCTAssertEqual(
            policy.expiry(of: silent, now: 5 * second, authenticationRequired: true)?.error.message,
            "not authenticated within auth_timeout (5 s)")
        XCTAssertNil(policy.expiry(of: silent, now: 50 * second, authenticationRequired: false))
        XCTAssertNil(
            policy.expiry(of: facts(partial: false), now: 50 * second, authenticationRequired: true),
            "authenticated")
    }

    func testZeroTurnsEachRuleOff() {
        let off = LivenessPolicy(commandTimeoutNanoseconds: 0, authTimeoutNanoseconds: 0)
        XCTAssertTrue(off.isOff)
        XCTAssertFalse(policy.isOff)
        XCTAssertNil(off.expiry(of: facts(authenticated: false), now: 1_000 * second, authenticationRequired: true))
    }

    func testSecondsAreShownWholeOrWithTheirFraction() {
        XCTAssertEqual(LivenessPolicy.seconds(60 * second), "60 s")
        XCTAssertEqual(LivenessPolicy.seconds(LivenessPolicy.nanoseconds(0.5)), "0.5 s")
    }
}
