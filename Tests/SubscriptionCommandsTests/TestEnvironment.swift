import SubscriptionCenter
import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire

/// A session as the center sees it in these tests: it keeps what it receives and the numbers it is told are gone.
final class TestCustomer: Customer {
    /// What it received, in order: the number and the message.
    var received: [(number: String, message: Publication)] = []
    /// The numbers it was told are gone.
    var gone: [String] = []

    var retention: CustomerRetention { .untilRemoved }

    func receive(_ message: Publication, on number: String) -> Bool {
        received.append((number, message))
        return true
    }

    func numberRemoved(_ number: String) { gone.append(number) }
}

/// An environment that records what a handler asked of it, with settings a test sets. A single node: the
/// other-node requirements keep ``CommandEnvironment``'s single-node implementations, so the handlers are tested
/// with the very code a single node runs.
final class Recorder: CommandEnvironment, @unchecked Sendable {
    /// The session as a customer.
    let customer = TestCustomer()
    let sessionID: UInt64 = 7
    var queuedBytes = 0
    var maxPending = 1 << 20
    let serverVersion = "9.9.9"
    var authToken: String?
    var users: [String] = []
    var requiresAuthentication = false
    var authFailureDelay = 0.5
    /// Set to make the saved state refuse (as a failing disk).
    var saveRefusal: ProtocolError?
    /// Set to make ``stage(_:payload:info:sender:)`` stage (a state directory saving retained numbers).
    var stages = false

    /// Everything asked, in order, as short words a test compares.
    var log: [String] = []
    /// The values pushed to the session.
    var pushed: [Publication] = []
    /// The `$SYS` events posted, with the name of the client that made them.
    var posted: [(event: SystemEvent, name: String?)] = []
    /// The answers given later.
    var answers: [Result<Reply, ProtocolError>] = []

    var hasUsers: Bool { !users.isEmpty }

    func push(_ value: Publication) { pushed.append(value) }
    func hold() { log.append("hold") }
    func release(after seconds: Double) { log.append("release \(seconds)") }
    func close(_ reason: CloseRequest) { log.append("close \(reason)") }

    func answerLater(_ start: (_ answer: @escaping @Sendable (Result<Reply, ProtocolError>) -> Void) -> Void) -> Reply {
        log.append("hold")
        start { [self] in answers.append($0) }
        return .later
    }

    func isUser(_ name: String) -> Bool { users.contains(name) }

    func verify(_ secret: String, as name: String) -> Reply {
        log.append("verify \(name)")
        return .later
    }

    func statsLines() -> [String] { ["uptime 1"] }

    func stage(
        _ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], sender: String?
    ) throws(ProtocolError) -> Reply? {
        guard stages else { return nil }
        if let saveRefusal { throw saveRefusal }
        log.append("stage \(number) \(String(decoding: payload, as: UTF8.self)) from \(sender ?? "-")")
        return .staged
    }

    func saveCreated(_ number: String, retained: Bool) throws(ProtocolError) {
        if let saveRefusal { throw saveRefusal }
        log.append("saved created \(number)")
    }

    func saveRemoved(_ number: String) throws(ProtocolError) {
        if let saveRefusal { throw saveRefusal }
        log.append("saved removed \(number)")
    }

    func post(_ event: SystemEvent, by client: ClientState) { posted.append((event, client.name)) }
    func countPublished(to number: String, receivers: Int) { log.append("published \(number) \(receivers)") }
    func countAuthFailure(_ error: ProtocolError, failures: Int) { log.append("auth failure \(failures)") }
    func countDenied() { log.append("denied") }
}

/// A center, a client and a recorder, and the dispatch between them.
struct Harness {
    let center = SubscriptionCenter<Publication>()
    var client = ClientState(isAuthenticated: true)
    let environment = Recorder()

    /// Runs `command` through ``CommandDispatch``: the reply, or the error.
    mutating func run(_ command: Command) -> Result<Reply, ProtocolError> {
        do {
            return .success(try CommandDispatch.run(command, client: &client, center: center, environment: environment))
        } catch {
            return .failure(error)
        }
    }

    /// Runs a line of the protocol (parsed by the real parser): the reply, or the error.
    mutating func run(_ line: String) -> Result<Reply, ProtocolError> {
        var parser = CommandParser()
        Array((line + "\n").utf8).withUnsafeBytes { parser.append($0) }
        guard let parsed = parser.next() else { return .failure(ProtocolError(.proto, "incomplete: \(line)")) }
        switch parsed {
        case .success(let command): return run(command)
        case .failure(let error): return .failure(error)
        }
    }

    /// The error code of `result`, nil for a reply.
    static func code(_ result: Result<Reply, ProtocolError>) -> ErrorCode? {
        if case .failure(let error) = result { return error.code }
        return nil
    }
}
