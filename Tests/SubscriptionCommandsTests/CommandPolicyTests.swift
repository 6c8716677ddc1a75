import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire
import XCTest

/// The one policy every command passes (SubscriptionCommands/CommandPolicy.swift), without a socket: its table has a
/// row per verb, nothing passes before authentication but `HELLO`, `PING` and `QUIT`, a user's rights decide the
/// rest, and the daemon's `$SYS.` numbers are never written by a client.
final class CommandPolicyTests: XCTestCase {
    /// A client as the policy sees it: authenticated or not, with a user's rights or every right.
    private func client(authenticated: Bool, user: UserRights? = nil) -> ClientState {
        ClientState(isAuthenticated: authenticated, rights: user)
    }

    /// One command of each verb, naming `target` where the verb names a number or pattern.
    private func sample(_ verb: Verb, _ target: String = "SCIENCE") -> Command {
        switch verb {
        case .pub: return .publish(number: target, payload: [1], info: [])
        case .send: return .send(number: target, payload: [1])
        case .ping: return .ping(text: nil)
        case .sub: return .subscribe(pattern: target, from: nil, group: nil)
        case .unsub: return .unsubscribe(pattern: target)
        case .get: return .get(number: target)
        case .hello: return .hello(name: "lab", token: "secret")
        case .create: return .create(number: target, retained: false)
        case .remove: return .remove(number: target)
        case .list: return .list(pattern: nil, kinds: false)
        case .stats: return .stats
        case .quit: return .quit
        }
    }

    private func user(publish: [String] = [], subscribe: [String] = [], createRemove: Bool = false) -> UserRights {
        UserRights(
            userName: "alice", publish: PatternRules(allow: publish), subscribe: PatternRules(allow: subscribe),
            mayCreateAndRemove: createRemove, credential: "hash")
    }

    /// The error `command` gets, or nil when it passes.
    private func refusal(_ command: Command, _ subject: ClientState) -> ProtocolError? {
        do {
            try CommandPolicy.authorize(command, for: subject)
            return nil
        } catch {
            return error
        }
    }

    func testTheTableHasTheRowDocsProtocolGivesEachVerb() {
        let rows = Dictionary(grouping: Verb.allCases) { CommandPolicy.Requirement.of($0) }
        XCTAssertEqual(Set(rows[.nothing] ?? []), [.hello, .ping, .quit])
        XCTAssertEqual(Set(rows[.authenticated] ?? []), [.list, .stats, .unsub])
        XCTAssertEqual(Set(rows[.createRemove] ?? []), [.create, .remove])
        XCTAssertEqual(Set(rows[.publish] ?? []), [.pub, .send])
        XCTAssertEqual(Set(rows[.subscribe] ?? []), [.sub, .get])
        for verb in Verb.allCases { XCTAssertEqual(sample(verb).verb, verb, "Command.verb of \(verb)") }
    }

    func testBeforeAuthenticationOnlyHelloPingAndQuitPassMalformedOrNot() {
        let stranger = client(authenticated: false)
        for verb in Verb.allCases {
            let error = refusal(sample(verb), stranger)
            if CommandPolicy.Requirement.of(verb) == .nothing {
                XCTAssertNil(error, "\(verb)")
            } else {
                XCTAssertEqual(error?.code, .auth, "\(verb)")
            }
            let malformed = ProtocolError(.proto, "bad")
            let screened = CommandPolicy.screen(malformed, verb: verb, for: stranger)
            XCTAssertEqual(screened.code, CommandPolicy.Requirement.of(verb) == .nothing ? .proto : .auth, "\(verb)")
        }
        XCTAssertEqual(CommandPolicy.screen(ProtocolError(.unknown, "?"), verb: nil, for: stranger).code, .auth)
        let fatal = ProtocolError(.tooBig, "payload too big", closesConnection: true)
        XCTAssertEqual(CommandPolicy.screen(fatal, verb: .pub, for: stranger).code, .tooBig, "a fatal error stays")
        let member = client(authenticated: true)
        XCTAssertEqual(CommandPolicy.screen(ProtocolError(.proto, "bad"), verb: .sub, for: member).code, .proto)
    }

    func testWithoutUsersEveryVerbPassesButWritesToTheDaemonsNumbers() {
        let anyone = client(authenticated: true)
        for verb in Verb.allCases { XCTAssertNil(refusal(sample(verb), anyone), "\(verb)") }
        for verb in [Verb.pub, .send, .create, .remove] {
            XCTAssertEqual(refusal(sample(verb, "$SYS.stats"), anyone)?.code, .denied, "\(verb) of a $SYS. number")
        }
        XCTAssertNil(refusal(sample(.sub, "$SYS.>"), anyone), "subscribing to them is fine")
        XCTAssertNil(refusal(sample(.get, "$SYS.stats"), anyone))
    }

    func testAUsersRightsDecideEachRowAndTheOthersNeedNone() {
        let nobody = client(authenticated: true, user: user())
        for verb in Verb.allCases {
            let error = refusal(sample(verb), nobody)
            switch CommandPolicy.Requirement.of(verb) {
            case .nothing, .authenticated: XCTAssertNil(error, "\(verb) needs no right")
            case .createRemove, .publish, .subscribe: XCTAssertEqual(error?.code, .denied, "\(verb) without its right")
            }
        }
        let writer = client(
            authenticated: true, user: user(publish: ["SCIENCE.>"], subscribe: ["NEWS"], createRemove: true))
        XCTAssertNil(refusal(sample(.pub, "SCIENCE.physics"), writer))
        XCTAssertNil(refusal(sample(.send, "SCIENCE.physics"), writer))
        XCTAssertEqual(
            refusal(sample(.pub, "SPORTS"), writer)?.message, "user 'alice' may not publish to 'SPORTS'")
        XCTAssertNil(refusal(sample(.create, "ANYTHING"), writer))
        XCTAssertEqual(refusal(sample(.create, "$SYS.mine"), writer)?.code, .denied, "the right stops at $SYS.")
        XCTAssertNil(refusal(sample(.sub, "NEWS"), writer))
        XCTAssertNil(refusal(sample(.get, "NEWS"), writer))
        XCTAssertEqual(
            refusal(sample(.sub, "NEWS.>"), writer)?.message,
            "user 'alice' may not subscribe to every number 'NEWS.>' can match")
    }
}
