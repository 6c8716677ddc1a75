import ArgumentParser
import Glibc
import SubscriptionClient
import SubscriptionSystem
import SubscriptionWire

/// `subctl listen PATTERN... [--count N] [--from NAME] [--group NAME] [--json | --raw] [--no-reconnect]`
struct ListenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "listen",
        abstract: "Print the messages published to numbers matching the patterns.",
        discussion: """
            Once subscribed, prints 'subctl: listening on PATTERN[, PATTERN...]' on stderr (followed by \
            ' (group NAME)' with --group). Then each message is \
            written to stdout as its payload bytes and LF, followed, when the publisher attached info pairs, by \
            one line '  info: KEY=VALUE...' (two spaces; the pairs in the publisher's order, values as sent); or \
            as one JSON object per line with --json. Runs until \
            Ctrl-C or SIGTERM (exit 0), until --count messages came (exit 0), or until every number listened \
            to was removed (exit 1), or until stdout is closed, as with '| head' (exit 0).

            With --group NAME the listener joins a queue group: of all the listeners in one group, one receives \
            each message, in turn; listeners without a group still receive every message.

            With --raw each payload is written exactly as received, nothing added (no LF, no info line), e.g. to \
            pipe a binary stream.

            When the connection to the server is lost (subd restarted, the network went away), listen says \
            'subctl: lost the connection to SERVER; reconnecting' on stderr, connects again (waiting 0.1 s, then \
            twice as long each time, at most 2 s), subscribes again and says 'subctl: reconnected to SERVER'; \
            --count goes on counting. A number that is not there after the reconnection (a subd restarted \
            without its state) is waited for the same way. Messages published while it was not subscribed are \
            not received. With --no-reconnect it exits at the first loss instead (exit 69).
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Numbers or patterns: `*` matches one token, `>` one or more at the end (e.g. SCIENCE.>).")
    var patterns: [String]

    @Option(help: ArgumentHelp("Exit after this many messages.", valueName: "n"))
    var count: Int?

    @Option(help: ArgumentHelp("Only messages from the publisher that said --name NAME.", valueName: "name"))
    var from: String?

    @Option(
        help: ArgumentHelp(
            "Join this queue group: each message goes to one member of the group, in turn.", valueName: "name"))
    var group: String?

    @Flag(help: "Print one JSON object per message: number, payload (or payload_base64), from, info, received_at.")
    var json = false

    @Flag(help: "Write each payload exactly as received: no LF after it, no info line.")
    var raw = false

    @Flag(help: "Exit when the connection is lost (exit 69) instead of connecting and subscribing again.")
    var noReconnect = false

    func validate() throws {
        guard !patterns.isEmpty else { throw ValidationError("name at least one number or pattern to listen to") }
        for pattern in patterns { try Check.pattern(pattern) }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let from { try Check.clientName(from, what: "publisher name") }
        if let group { try Check.clientName(group, what: "group name") }
        if json && raw { throw ValidationError("--json and --raw are two ways to print: give one") }
    }

    /// How the listening ended.
    private enum Outcome: Sendable {
        case interrupted
        case countReached
        case allRemoved
        /// stdout is gone (`subctl listen X | head -n 1`): stop quietly, like a pipeline expects.
        case outputClosed
        /// The error, and the number a `NOTFOUND` is about when it can be told.
        case failed(ClientError, number: String?)
    }

    func run() async throws {
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        let endpoint = try options.checkedEndpoint()
        let listening = Task { [self] in await listen(at: endpoint) }
        signals.onSignal { listening.cancel() }
        switch await listening.value {
        case .interrupted, .countReached, .outputClosed:
            return
        case .allRemoved:
            throw Report.refused
        case .failed(let error, let number):
            throw Report.failure(error, endpoint: endpoint, number: number)
        }
    }

    /// Connects, subscribes and prints until the end; after a lost connection, again (``Reconnection``) unless
    /// `--no-reconnect`.
    private func listen(at endpoint: Endpoint) async -> Outcome {
        var reconnection = Reconnection(endpoint: endpoint, isEnabled: !noReconnect)
        var received = 0
        while true {
            if Task.isCancelled { return .interrupted }
            let client: SubscriptionClient
            let subscription: Subscription
            do {
                client = try await options.connect(to: endpoint)
            } catch {
                if await reconnection.retry(after: error, missing: { nil }) { continue }
                return Task.isCancelled ? .interrupted : .failed(error, number: nil)
            }
            do {
                subscription = try await client.subscribe(patterns, from: from, group: group)
            } catch {
                let missing = { await Self.missingNumber(of: patterns, error: error, client: client) }
                if await reconnection.retry(after: error, missing: missing) {
                    await client.close()
                    continue
                }
                return Task.isCancelled ? .interrupted : .failed(error, number: await missing())
            }
            reconnection.subscribed()
            Report.error(
                "listening on \(subscription.patterns.joined(separator: ", "))" + (group.map { " (group \($0))" } ?? "")
            )
            let (outcome, count) = await Self.print(
                subscription, count: self.count.map { $0 - received }, json: json, raw: raw)
            received += count
            if case .failed(let error, _) = outcome {
                if await reconnection.lost(error, closing: client) { continue }
                if Task.isCancelled { return .interrupted }
            }
            return outcome
        }
    }

    /// Prints the subscription's messages until it ends, `count` of them came, or stdout closed; returns how it
    /// ended and how many messages it printed.
    private static func print(_ subscription: Subscription, count: Int?, json: Bool, raw: Bool) async
        -> (Outcome, Int)
    {
        var received = 0
        do {
            for try await event in subscription {
                switch event {
                case .message(let message):
                    let written =
                        if json {
                            Output.line(JSONLine.encode(message, receivedAt: UTCTimestamp.now()))
                        } else if raw {
                            Output.bytes(message.payload)
                        } else {
                            Output.bytesLine(message.payload)
                                && (message.infoPairs.isEmpty || Output.line(Self.infoLine(message.infoPairs)))
                        }
                    if !written { return (.outputClosed, received) }
                    received += 1
                    if let count, received >= count { return (.countReached, received) }
                case .gone(let number):
                    Report.error("number '\(number)' was removed")
                }
            }
        } catch {
            return (.failed(error, number: nil), received)
        }
        return (Task.isCancelled ? .interrupted : .allRemoved, received)
    }

    /// The line printed after a payload that came with info pairs: `  info: unit=EUR note=a%20b`. Values are shown
    /// as sent, so the line splits at spaces; `--json` decodes them.
    static func infoLine(_ pairs: [InfoPair]) -> String {
        "  info: " + pairs.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    }

    /// After `NOTFOUND`, the first exact pattern (no wildcard token) that is not a number, to name it in
    /// the error line; nil when it cannot be told.
    private static func missingNumber(of patterns: [String], error: ClientError, client: SubscriptionClient) async
        -> String?
    {
        guard case .notFound = error else { return nil }
        for pattern in patterns where (try? Names.checkPattern(pattern)) == false {
            guard let found = try? await client.list(pattern) else { return nil }
            if !found.contains(where: { $0.number.utf8.elementsEqual(pattern.utf8) }) { return pattern }
        }
        return nil
    }
}
