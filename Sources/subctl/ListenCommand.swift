import ArgumentParser
import Glibc
import SubscriptionClient
import SubscriptionSystem
import SubscriptionWire

/// `subctl listen PATTERN... [--count N] [--from NAME] [--group NAME] [--json]`
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

    func validate() throws {
        guard !patterns.isEmpty else { throw ValidationError("name at least one number or pattern to listen to") }
        for pattern in patterns { try Check.pattern(pattern) }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let from { try Check.clientName(from, what: "publisher name") }
        if let group { try Check.clientName(group, what: "group name") }
    }

    /// How the listening ended.
    private enum Outcome: Sendable {
        case interrupted
        case countReached
        case allRemoved
        /// stdout is gone (`subctl listen X | head -n 1`): stop quietly, like a pipeline expects.
        case outputClosed
        case failed(ClientError)
    }

    func run() async throws {
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        let client = try await options.connect()
        let subscription: Subscription
        do {
            subscription = try await client.subscribe(patterns, from: from, group: group)
        } catch {
            let missing = await Self.missingNumber(of: patterns, error: error, client: client)
            throw Report.failure(error, endpoint: client.endpoint, number: missing)
        }
        Report.error(
            "listening on \(subscription.patterns.joined(separator: ", "))" + (group.map { " (group \($0))" } ?? ""))

        let listening = Task { [count, json] in await Self.print(subscription, count: count, json: json) }
        signals.onSignal { listening.cancel() }
        switch await listening.value {
        case .interrupted, .countReached, .outputClosed:
            return
        case .allRemoved:
            throw Report.refused
        case .failed(let error):
            throw Report.failure(error, endpoint: client.endpoint)
        }
    }

    private static func print(_ subscription: Subscription, count: Int?, json: Bool) async -> Outcome {
        var received = 0
        do {
            for try await event in subscription {
                switch event {
                case .message(let message):
                    let written = json
                        ? Output.line(JSONLine.encode(message, receivedAt: UTCTimestamp.now()))
                        : Output.bytesLine(message.payload)
                            && (message.infoPairs.isEmpty || Output.line(Self.infoLine(message.infoPairs)))
                    if !written { return .outputClosed }
                    received += 1
                    if let count, received >= count { return .countReached }
                case .gone(let number):
                    Report.error("number '\(number)' was removed")
                }
            }
        } catch {
            return .failed(error)
        }
        return Task.isCancelled ? .interrupted : .allRemoved
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
        guard case .server(.notFound, _) = error else { return nil }
        for pattern in patterns where (try? Names.checkPattern(pattern)) == false {
            guard let found = try? await client.list(pattern) else { return nil }
            if !found.contains(where: { $0.number.utf8.elementsEqual(pattern.utf8) }) { return pattern }
        }
        return nil
    }
}
