// libFuzzer target for the whole command path (`make fuzz-path`): the parser, the handlers' center calls and the
// center, for several sessions at once. The Makefile compiles this file together with the center's sources into one
// module (so its internals, the two-way index, are visible here); the parser and the wire's rules are linked in as
// libraries. Not part of any SwiftPM target.
//
// The input is split at 0x00 bytes into chunks; a chunk's first byte picks the session (its value modulo 4), the rest
// is wire bytes fed to that session's CommandParser. Each command the parser gives is run as the server's handlers
// run it against the center (Sources/SubscriptionServer/Commands/*.swift: CREATE [retain], REMOVE, SUB [from=]
// [group=], UNSUB, PUB/SEND, GET, LIST, HELLO name=, QUIT), with fake customers that collect what they receive, and
// against a simple model (sets and dictionaries, a brute-force matcher). After every command the center must agree
// with the model: its counts, list(), every customer's subscriptions, what a PUB reached and what it reports, and
// its internal index both ways (customer → patterns, number/trie → subscriptions, queue group counts).
//
// Sessions 0–2 are clients under the command policy ($SYS numbers may not be created, removed or published to);
// session 3 stands in for the daemon itself, which writes its own $SYS numbers, so those paths are reached too.
// A QUIT, or a parser error that closes the connection, ends the session as the server does (removeAll) and the next
// chunk for that slot starts a new one.

// libFuzzer target for the whole command path (`make fuzz-path`): the parser, the real dispatch (the policy and the
// handlers of SubscriptionCommands, with a fuzzing CommandEnvironment) and the center, for several sessions at once.
// The Makefile builds the center with -enable-testing (so its internals, the two-way index, are visible here through
// @testable import) and the commands, the parser and the wire's rules as libraries. Not part of any SwiftPM target.
//
// The input is split at 0x00 bytes into chunks; a chunk's first byte picks the session (its value modulo 4), the rest
// is wire bytes fed to that session's CommandParser. Each command the parser gives runs through CommandDispatch.run,
// as the server runs it, with fake customers that collect what they receive, and against a simple model (sets and
// dictionaries, a brute-force matcher): its reply must be the model's. After every command the center must agree
// with the model: its counts, list(), every customer's subscriptions, what a PUB reached and what it reports, and
// its internal index both ways (customer → patterns, number/trie → subscriptions, queue group counts).
//
// Every session is a client under the command policy: $SYS numbers may not be created, removed or published to. The
// daemon's own numbers are created at the start, as the server does, so subscribing to them and wildcards meeting
// them are reached. A QUIT, or a parser error that closes the connection, ends the session as the server does
// (removeAll) and the next chunk for that slot starts a new one.

import SubscriptionCommands
import SubscriptionProtocol
import SubscriptionWire

@testable import SubscriptionCenter

/// One delivery a fake session received.
struct Received {
    let message: Publication
    let number: [UInt8]
    let group: [UInt8]?
}

/// A fake session: held until removed, as the daemon's are; every fourth delivery to session 2 is refused (as a
/// session that cannot queue it), so the returned count is checked against acceptances, not calls.
final class FuzzSession: Customer {
    let slot: Int
    var client = ClientState(isAuthenticated: true)
    var parser = CommandParser(limits: ProtocolLimits(maxLine: 256, maxPayload: 256))
    var deliveries: [Received] = []
    var gone: [[UInt8]] = []
    var calls = 0
    var quitting = false

    init(slot: Int) { self.slot = slot }

    var retention: CustomerRetention { .untilRemoved }

    private func accept() -> Bool {
        calls += 1
        return slot != 2 || calls % 4 != 0
    }

    func receive(_ message: Publication, on number: String) -> Bool {
        let accepted = accept()
        if accepted { deliveries.append(Received(message: message, number: Array(number.utf8), group: nil)) }
        return accepted
    }

    func receive(_ message: Publication, on number: String, throughGroup group: String) -> Bool {
        let accepted = accept()
        if accepted {
            deliveries.append(Received(message: message, number: Array(number.utf8), group: Array(group.utf8)))
        }
        return accepted
    }

    func numberRemoved(_ number: String) { gone.append(Array(number.utf8)) }
}

/// A single node with no state directory, no users and no token: what the handlers ask of it goes to the session.
struct FuzzEnvironment: CommandEnvironment {
    let customer: FuzzSession
    var sessionID: UInt64 { UInt64(customer.slot) }
    var queuedBytes: Int { 0 }
    var maxPending: Int { .max / 2 }
    var serverVersion: String { "fuzz" }
    var authToken: String? { nil }
    var hasUsers: Bool { false }
    var requiresAuthentication: Bool { false }
    var authFailureDelay: Double { 0 }

    func push(_ value: Publication) { _ = customer.receive(value, on: value.number) }
    func hold() {}
    func release(after seconds: Double) {}
    func close(_ reason: CloseRequest) { customer.quitting = true }
    func answerLater(_ start: (_ answer: @escaping @Sendable (Result<Reply, ProtocolError>) -> Void) -> Void) -> Reply {
        check(false, "a single node answered later")
        return .later
    }
    func isUser(_ name: String) -> Bool { false }
    func verify(_ secret: String, as name: String) -> Reply { .later }
    func statsLines() -> [String] { [] }
    func stage(
        _ number: String, payload: ArraySlice<UInt8>, info: [InfoPair], sender: String?
    ) throws(ProtocolError) -> Reply? { nil }
    func saveCreated(_ number: String, retained: Bool) throws(ProtocolError) {}
    func saveRemoved(_ number: String) throws(ProtocolError) {}
    func post(_ event: SystemEvent, by client: ClientState) {}
    func countPublished(to number: String, receivers: Int) {}
    func countAuthFailure(_ error: ProtocolError, failures: Int) {}
    func countDenied() {}
}

typealias Bytes = [UInt8]

func bytes(_ text: String) -> Bytes { Array(text.utf8) }

func text(_ bytes: Bytes) -> String { String(decoding: bytes, as: UTF8.self) }

func check(_ condition: @autoclosure () -> Bool, _ what: @autoclosure () -> String) {
    if !condition() {
        print("INVARIANT FAILED: \(what())")
        fatalError("invariant failed: \(what())")
    }
}

/// Brute-force matching, independent of the trie and of Names.matches: `*` one token, `>` one or more trailing
/// tokens, and a wildcard first token never matches a `$SYS` number.
func referenceMatches(_ pattern: Bytes, _ number: Bytes) -> Bool {
    let p = pattern.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map(Array.init)
    let n = number.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).map(Array.init)
    if n.first == bytes("$SYS"), let first = p.first, first == bytes("*") || first == bytes(">") { return false }
    for (index, token) in p.enumerated() {
        if token == bytes(">") && index == p.count - 1 { return n.count > index }
        if index >= n.count { return false }
        if token != bytes("*") && token != n[index] { return false }
    }
    return p.count == n.count
}

func isWildcard(_ pattern: Bytes) -> Bool {
    pattern.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        .contains { $0.elementsEqual(bytes("*")) || $0.elementsEqual(bytes(">")) }
}

func isSystemName(_ name: Bytes) -> Bool {
    name.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false).first.map { Array($0) } == bytes("$SYS")
}

/// The obviously-correct model of the center.
struct Model {
    struct Number {
        var retained: Bool
        var revision: UInt64 = 0
        var value: Bytes?
        var sender: String?
    }
    struct Sub: Equatable {
        var from: String?
        var group: String?
    }

    static let maxNumbers = 10
    static let maxSubscriptions = 6

    var numbers: [Bytes: Number] = [:]
    /// slot → pattern → filter and group.
    var subscriptions: [Int: [Bytes: Sub]] = [:]

    var clientNumberCount: Int { numbers.keys.filter { !isSystemName($0) }.count }

    func subscriberCount(of number: Bytes) -> Int {
        guard numbers[number] != nil else { return 0 }
        return subscriptions.values.filter { $0.keys.contains { referenceMatches($0, number) } }.count
    }

    func list(_ pattern: Bytes) -> [Bytes] {
        if !isWildcard(pattern) { return numbers[pattern] == nil ? [] : [pattern] }
        return numbers.keys.filter { referenceMatches(pattern, $0) }.sorted { $0.lexicographicallyPrecedes($1) }
    }
}

/// One run: the center, the sessions and the model.
final class Run {
    let center = SubscriptionCenter<Publication>(
        limits: .init(maxSubscriptionsPerCustomer: Model.maxSubscriptions, maxNumbers: Model.maxNumbers),
        matchCacheCapacity: 3)
    var sessions: [FuzzSession] = (0..<4).map { FuzzSession(slot: $0) }
    var model = Model()
    var step = 0

    /// The daemon's own numbers, made at the start as the server makes them.
    static let systemNumbers = ["$SYS.stats", "$SYS.client.connected", "$SYS.number.created"]

    init() {
        for number in Self.systemNumbers {
            _ = try? center.create(number)
            model.numbers[bytes(number)] = Model.Number(retained: false)
        }
    }

    func feed(slot: Int, _ chunk: UnsafeRawBufferPointer) {
        sessions[slot].parser.append(chunk)
        while let result = sessions[slot].parser.next() {
            step += 1
            switch result {
            case .success(let command):
                run(command, slot: slot)
                if sessions[slot].quitting { close(slot) }
            case .failure(let error):
                if error.closesConnection { close(slot) }
            }
            checkInvariants()
        }
    }

    /// The server's sessionClosed: out of the center; the slot gets a fresh session.
    func close(_ slot: Int) {
        center.removeAll(sessions[slot])
        model.subscriptions[slot] = nil
        sessions[slot] = FuzzSession(slot: slot)
    }

    /// Runs `command` for `session` through the real dispatch, as the server does.
    func dispatch(_ command: Command, _ session: FuzzSession) -> Result<Reply, ProtocolError> {
        do {
            let environment = FuzzEnvironment(customer: session)
            return .success(
                try CommandDispatch.run(command, client: &session.client, center: center, environment: environment))
        } catch {
            return .failure(error)
        }
    }

    /// The policy's $SYS rule: a client never writes the daemon's numbers (DENIED, nothing changed).
    func deniedSystem(_ number: String, _ result: Result<Reply, ProtocolError>, _ context: String) -> Bool {
        guard Names.isSystem(number) else { return false }
        guard case .failure(let error) = result, error.code == .denied else {
            check(false, "\(context): a write to a $SYS number was not denied: \(result)")
            return true
        }
        return true
    }

    func run(_ command: Command, slot: Int) {
        let session = sessions[slot]
        let context = "step \(step) session \(slot) \(command)"
        switch command {
        case .hello(let name, let token):
            // Without auth_token or users configured, a HELLO with a token fails (AUTH) and changes nothing.
            let before = session.client.name
            let result = dispatch(command, session)
            if token == nil {
                check(result == .success(.ok("subd fuzz proto=1.1 session=\(slot)")), "\(context): \(result)")
                check(session.client.name == (name ?? before), "\(context): name \(String(describing: name))")
            } else {
                check(
                    result == .failure(ProtocolError(.auth, "wrong token")) && session.client.name == before,
                    "\(context): \(result)")
            }
        case .create(let number, let retained):
            let result = dispatch(command, session)
            guard !deniedSystem(number, result, context) else { return }
            let key = bytes(number)
            let exists = model.numbers[key] != nil
            let overLimit = !exists && model.clientNumberCount >= Model.maxNumbers
            switch result {
            case .success(let reply):
                check(!overLimit, "\(context): created past the limit")
                check(reply == .ok(exists ? "exists" : "created"), "\(context): \(reply), model says exists \(exists)")
                if !exists { model.numbers[key] = Model.Number(retained: retained) }
            case .failure(let error):
                check(
                    overLimit && error == ProtocolError(.limit, "at most \(Model.maxNumbers) numbers may exist"),
                    "\(context): \(error)")
            }
        case .remove(let number):
            let key = bytes(number)
            let goneBefore = sessions.map(\.gone.count)
            let result = dispatch(command, session)
            guard !deniedSystem(number, result, context) else { return }
            guard case .success(let reply) = result else {
                return check(model.numbers[key] == nil && Self.code(result) == .notFound, "\(context): \(result)")
            }
            check(model.numbers.removeValue(forKey: key) != nil, "\(context): removed a number the model lacks")
            let expected = Set(model.subscriptions.filter { $0.value[key] != nil }.map(\.key))
            check(reply == .ok("removed \(expected.count)"), "\(context): \(reply), model \(expected.sorted())")
            for other in sessions {
                let added = other.gone.count - goneBefore[other.slot]
                check(
                    added == (expected.contains(other.slot) ? 1 : 0) && (added == 0 || other.gone.last == key),
                    "\(context): session \(other.slot) got \(added) GONE")
            }
            for slot in expected { model.subscriptions[slot]![key] = nil }
            model.subscriptions = model.subscriptions.filter { !$0.value.isEmpty }
        case .subscribe(let pattern, let from, let group):
            subscribe(command, session, pattern, from: from, group: group, context)
        case .unsubscribe(let pattern):
            let key = bytes(pattern)
            model.subscriptions[slot]?.removeValue(forKey: key)
            if model.subscriptions[slot]?.isEmpty == true { model.subscriptions[slot] = nil }
            check(dispatch(command, session) == .success(.ok()), "\(context): UNSUB is always +OK")
        case .publish(let number, let payload, _):
            publish(command, session, number, Array(payload), context)
        case .send(let number, let payload):
            publish(command, session, number, Array(payload), context)
        case .get(let number):
            get(command, session, number, context)
        case .list(let pattern, let kinds):
            let result = dispatch(command, session)
            let expected = model.list(bytes(pattern ?? ">")).map { number -> String in
                let entry = model.numbers[number]!
                let line = "\(text(number)) \(model.subscriberCount(of: number))"
                guard kinds else { return line }
                return line + (entry.retained ? " retained \(entry.revision)" : " plain")
            }
            check(result == .success(.list(expected)), "\(context): listed \(result), model \(expected)")
        case .quit:
            check(dispatch(command, session) == .success(.ok("bye")) && session.quitting, "\(context): QUIT")
        case .stats:
            check(dispatch(command, session) == .success(.list([])), "\(context): STATS")
        case .ping(let text):
            check(dispatch(command, session) == .success(.pong(text)), "\(context): PING")
        }
    }

    static func code(_ result: Result<Reply, ProtocolError>) -> ErrorCode? {
        if case .failure(let error) = result { return error.code }
        return nil
    }

    func get(_ command: Command, _ session: FuzzSession, _ number: String, _ context: String) {
        let before = session.deliveries.count
        let result = dispatch(command, session)
        guard let entry = model.numbers[bytes(number)] else {
            return check(Self.code(result) == .notFound, "\(context): GET of a missing number: \(result)")
        }
        guard entry.retained else { return check(Self.code(result) == .proto, "\(context): GET of a plain number") }
        check(result == .success(.count(Int(entry.revision))), "\(context): \(result), model \(entry.revision)")
        let pushed = session.deliveries[before...]
        if session.slot != 2 {
            check(pushed.count == (entry.value == nil ? 0 : 1), "\(context): pushed \(pushed.count)")
        }
        for value in pushed {
            check(
                value.message.payload == entry.value! && value.message.sender == entry.sender
                    && value.message.revision == entry.revision, "\(context): value differs")
        }
    }

    func subscribe(
        _ command: Command, _ session: FuzzSession, _ pattern: String, from: String?, group: String?,
        _ context: String
    ) {
        let slot = session.slot
        let key = bytes(pattern)
        // The current values pushed first: matching retained numbers with a value, from the filter's sender.
        let expectedValues = model.list(key).filter { number in
            guard let entry = model.numbers[number], entry.retained, entry.value != nil else { return false }
            return from == nil || entry.sender.map(bytes) == from.map(bytes)
        }
        let mine = model.subscriptions[slot] ?? [:]
        let before = session.deliveries.count
        let result = dispatch(command, session)
        guard case .success(let reply) = result else {
            guard case .failure(let error) = result else { return }
            switch error.code {
            case .notFound:
                check(!isWildcard(key) && model.numbers[key] == nil, "\(context): \(error)")
            case .limit:
                check(mine[key] == nil && mine.count >= Model.maxSubscriptions, "\(context): \(error)")
            default:
                check(false, "\(context): \(error)")
            }
            check(session.deliveries.count == before, "\(context): refused, yet values were pushed")
            return
        }
        check(reply == .ok(), "\(context): \(reply)")
        check(isWildcard(key) || model.numbers[key] != nil, "\(context): subscribed to a missing number")
        check(mine[key] != nil || mine.count < Model.maxSubscriptions, "\(context): subscribed past the limit")
        model.subscriptions[slot, default: [:]][key] = Model.Sub(from: from, group: group)
        let pushed = session.deliveries[before...]
        if slot != 2 {
            check(
                pushed.map(\.number) == expectedValues,
                "\(context): current values \(pushed.map { text($0.number) }), model \(expectedValues.map(text))")
        }
        for value in pushed {
            let entry = model.numbers[value.number]!
            check(
                value.message.revision == entry.revision && value.message.payload == entry.value,
                "\(context): current value of \(text(value.number))")
        }
    }

    func publish(_ command: Command, _ session: FuzzSession, _ number: String, _ payload: [UInt8], _ context: String) {
        let key = bytes(number)
        let sender = session.client.name
        let before = sessions.map(\.deliveries.count)
        let result = dispatch(command, session)
        guard !deniedSystem(number, result, context) else { return }
        guard case .success(.count(let accepted)) = result else {
            return check(model.numbers[key] == nil && Self.code(result) == .notFound, "\(context): \(result)")
        }
        guard var entry = model.numbers[key] else { return check(false, "\(context): sent to a missing number") }
        if entry.retained {
            entry.revision += 1
            entry.value = payload
            entry.sender = sender
            model.numbers[key] = entry
            let slot = try? center.retainedSlot(of: number)
            check(
                slot?.revision == entry.revision && slot?.value?.revision == entry.revision
                    && slot?.value?.payload == payload, "\(context): the retained value's revision")
        }

        // Who must get it: every session with a matching non-group subscription whose filter passes, directly; then,
        // per queue group with matching passing members not served yet, one of them.
        var direct: Set<Int> = []
        var groups: [Bytes: Set<Int>] = [:]
        for (slot, patterns) in model.subscriptions {
            for (pattern, sub) in patterns where referenceMatches(pattern, key) {
                if let from = sub.from, sender.map(bytes) != bytes(from) { continue }
                if let group = sub.group { groups[bytes(group), default: []].insert(slot) } else { direct.insert(slot) }
            }
        }
        var received: [Int: Received] = [:]
        for other in sessions {
            let new = other.deliveries[before[other.slot]...]
            check(new.count <= 1, "\(context): session \(other.slot) got the message \(new.count) times")
            if let delivery = new.first { received[other.slot] = delivery }
        }
        check(accepted == received.count, "\(context): send reports \(accepted), customers accepted \(received.count)")
        // Made once: every receiver has the same frame (a group's delivery is its marked copy).
        let made = received.values.filter { $0.group == nil }.map { ObjectIdentifier($0.message) }
        check(Set(made).count <= 1, "\(context): message made \(Set(made).count) times")
        for (slot, delivery) in received {
            check(
                delivery.number == key && bytes(delivery.message.number) == key && delivery.message.payload == payload
                    && delivery.message.sender == sender
                    && delivery.message.revision == (entry.retained ? entry.revision : nil),
                "\(context): session \(slot) got the wrong message")
            if let group = delivery.group {
                check(
                    !direct.contains(slot) && groups[group]?.contains(slot) == true,
                    "\(context): session \(slot) served through group \(text(group)) it is no matching member of")
            } else {
                check(
                    direct.contains(slot), "\(context): session \(slot) got it directly without a direct subscription")
            }
        }
        // Session 2 refuses every fourth delivery: what it refused is not in `received`.
        for slot in direct where slot != 2 {
            check(
                received[slot] != nil && received[slot]!.group == nil, "\(context): direct subscriber \(slot) missed it"
            )
        }
        for (group, members) in groups {
            let served = received.filter { members.contains($0.key) && $0.value.group == group }.count
            check(served <= 1, "\(context): group \(text(group)) served \(served) times")
            let waiting = members.subtracting(direct)
            if !waiting.isEmpty && !waiting.contains(2) {
                check(waiting.contains { received[$0] != nil }, "\(context): group \(text(group)) not served")
            }
        }
    }

    func checkInvariants() {
        let context = "step \(step)"
        let total = model.subscriptions.values.reduce(0) { $0 + $1.count }
        let wildcards = model.subscriptions.values.reduce(0) { $0 + $1.keys.filter(isWildcard).count }
        check(
            center.numberCount == model.numbers.count,
            "\(context): numberCount \(center.numberCount) != \(model.numbers.count)")
        check(center.clientNumberCount == model.clientNumberCount, "\(context): clientNumberCount")
        check(
            center.subscriptionCount == total, "\(context): subscriptionCount \(center.subscriptionCount) != \(total)")
        check(
            center.customerCount == model.subscriptions.count,
            "\(context): customerCount \(center.customerCount) != \(model.subscriptions.count)")
        for session in sessions {
            let expected = (model.subscriptions[session.slot] ?? [:])
                .map { SubscriptionInfo(pattern: text($0.key), from: $0.value.from, group: $0.value.group) }
                .sorted { bytes($0.pattern).lexicographicallyPrecedes(bytes($1.pattern)) }
            let got = center.subscriptions(of: session)
            check(
                got.count == expected.count
                    && zip(got, expected).allSatisfy {
                        bytes($0.pattern) == bytes($1.pattern) && $0.from.map(bytes) == $1.from.map(bytes)
                            && $0.group.map(bytes) == $1.group.map(bytes)
                    }, "\(context): subscriptions of \(session.slot): \(got) != \(expected)")
        }
        do {
            let listed = try center.list()
            check(listed.map { bytes($0.number) } == model.list(bytes(">")), "\(context): list() differs")
        } catch {
            check(false, "\(context): list() threw")
        }
        for number in model.numbers.keys {
            check(center.contains(text(number)), "\(context): \(text(number)) missing")
            check(
                center.subscriberCount(of: text(number)) == model.subscriberCount(of: number),
                "\(context): subscriberCount of \(text(number))")
        }

        // The two-way index.
        check(center.customers.count == model.subscriptions.count, "\(context): customer records")
        check(center.trie.count == wildcards, "\(context): trie holds \(center.trie.count), model \(wildcards)")
        if wildcards == 0 { check(center.trie.nodeCount == 0, "\(context): empty trie keeps nodes") }
        var exact = 0
        for (key, entry) in center.numbers {
            check(model.numbers[Array(key.string.utf8)] != nil, "\(context): center has \(key.string)")
            check((entry.retained != nil) == model.numbers[Array(key.string.utf8)]!.retained, "\(context): kind")
            for subscription in entry.subscribers.items {
                exact += 1
                check(subscription.isActive, "\(context): inactive subscription listed on \(key.string)")
                check(
                    subscription.record.patterns[key] == false,
                    "\(context): number → customer without customer → number")
                check(center.customers[subscription.record.key] === subscription.record, "\(context): orphan record")
            }
        }
        check(exact == total - wildcards, "\(context): \(exact) exact subscriptions, model \(total - wildcards)")
        var groupCounts: [Bytes: Int] = [:]
        for sub in model.subscriptions.values.flatMap(\.values) {
            if let group = sub.group { groupCounts[bytes(group), default: 0] += 1 }
        }
        check(center.queueGroups.count == groupCounts.count, "\(context): \(center.queueGroups.count) queue groups")
        for (name, group) in center.queueGroups {
            check(groupCounts[Array(name.string.utf8)] == group.subscriptions, "\(context): group \(name.string) count")
        }
        for (identity, record) in center.customers {
            check(record.key == identity && record.customer != nil, "\(context): record key")
            let session = record.customer as! FuzzSession
            check(sessions[session.slot] === session, "\(context): a closed session's record is left")
            let mine = model.subscriptions[session.slot] ?? [:]
            check(record.patterns.count == mine.count && !record.patterns.isEmpty, "\(context): record patterns")
            for (pattern, wild) in record.patterns {
                let model = mine[Array(pattern.string.utf8)]
                check(model != nil && wild == isWildcard(Array(pattern.string.utf8)), "\(context): record pattern")
                let subscription =
                    wild
                    ? center.trie.subscription(of: record, tokens: NameKey.tokens(of: pattern.string))
                    : center.numbers[pattern]?.subscribers.subscription(of: record)
                check(
                    subscription != nil && subscription!.record === record && subscription!.isActive,
                    "\(context): customer → \(pattern.string) without the subscription")
                check(
                    subscription!.from.map(bytes) == model!.from.map(bytes)
                        && subscription!.group.map(bytes) == model!.group.map(bytes),
                    "\(context): filter or group of \(pattern.string)")
            }
        }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzCommandPath(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeRawBufferPointer(start: data, count: size)
    let run = Run()
    var start = 0
    while start < size {
        var end = start
        while end < size && input[end] != 0 { end += 1 }
        if end > start {
            let slot = Int(input[start] % 4)
            run.feed(slot: slot, UnsafeRawBufferPointer(rebasing: input[(start + 1)..<end]))
        }
        start = end + 1
    }
    for slot in 0..<4 { run.close(slot) }
    run.checkInvariants()
    check(
        run.center.customers.isEmpty && run.center.trie.nodeCount == 0 && run.center.queueGroups.isEmpty,
        "everything closed, yet the center holds subscriptions")
    return 0
}
