import ArgumentParser
import Glibc
import SubscriptionClient

/// `subctl watch NUMBER [--json] [--count N] [--after REV] [--no-reconnect]`
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print each change of a retained number as 'old -> new'.",
        discussion: """
            Once subscribed, prints 'subctl: watching NUMBER' on stderr. Then each change of the number's value is \
            one line on stdout, 'OLD -> NEW': the payloads as UTF-8 text (bytes that are not UTF-8 shown as U+FFFD, \
            LF and CR as \\n and \\r, so that a change is one line). The first line is the value the number has when \
            the watch starts, '(none) -> NEW' (nothing is printed for a number with no value yet, until its first \
            publication). With --json, one object per change: number, old (null for the first), new, revision, \
            from, info (values percent-decoded) and missed; a payload that is not UTF-8 is old_base64/new_base64.

            A revision that does not follow the previous one is reported on stderr: 'subctl: missed revisions 4 to \
            6 of NUMBER ...', or 'subctl: the revision of NUMBER went back from 7 to 2 ...' (the number was \
            created again, or the server lost its state); with --json, "missed" says how many revisions were \
            missed (0 when none, null when the revision went back). --after REV resumes a watch after the last \
            revision you saw: the current value is printed only when it is newer, and what was missed is reported.

            When the connection to the server is lost, watch says so on stderr, connects again as listen does \
            (waiting 0.1 s, then twice as long each time, at most 2 s), resumes after the last value it printed \
            (so the next line's OLD is that value, and revisions published meanwhile are reported as missed) and \
            says 'subctl: reconnected to SERVER'. With --no-reconnect it exits at the first loss (exit 69).

            Runs until Ctrl-C or SIGTERM (exit 0), until --count changes were printed (exit 0), until the number is \
            removed (exit 1), or until stdout is closed (exit 0).
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The retained number to watch (subctl create NUMBER --retain).")
    var number: String

    @Flag(help: "Print one JSON object per change: number, old, new, revision, from, info, missed.")
    var json = false

    @Option(help: ArgumentHelp("Exit after this many changes.", valueName: "n"))
    var count: Int?

    @Option(
        help: ArgumentHelp(
            "Resume after this revision (the last one you saw): report the revisions missed since.",
            valueName: "rev"))
    var after: Int?

    @Flag(help: "Exit when the connection is lost (exit 69) instead of connecting and resuming the watch.")
    var noReconnect = false

    func validate() throws {
        try Check.number(number)
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if let after, after < 0 { throw ValidationError("--after must be a revision, 0 or more") }
    }

    /// How the watching ended.
    private enum Outcome: Sendable {
        case interrupted
        case countReached
        case removed
        /// stdout is gone (`subctl watch X | head -n 1`): stop quietly, like a pipeline expects.
        case outputClosed
        case failed(ClientError)
    }

    func run() async throws {
        let signals = SignalWatcher(signals: [SIGINT, SIGTERM])
        let endpoint = try options.checkedEndpoint()
        let watching = Task { [self] in await watch(at: endpoint) }
        signals.onSignal { watching.cancel() }
        switch await watching.value {
        case .interrupted, .countReached, .outputClosed:
            return
        case .removed:
            Report.error("number '\(number)' was removed")
            throw Report.refused
        case .failed(let error):
            throw Report.failure(error, endpoint: endpoint, number: number, retained: true)
        }
    }

    /// Connects, watches and prints until the end; after a lost connection, again (``Reconnection``), resuming after
    /// the last value printed, unless `--no-reconnect`.
    private func watch(at endpoint: Endpoint) async -> Outcome {
        var reconnection = Reconnection(endpoint: endpoint, isEnabled: !noReconnect)
        var printed = 0
        var last: RetainedValue?
        while true {
            if Task.isCancelled { return .interrupted }
            let client: SubscriptionClient
            let watch: Watch
            do {
                client = try await options.connect(to: endpoint)
                if let last {
                    watch = try await client.watch(number, after: last)
                } else if let after {
                    watch = try await client.watch(number, afterRevision: after)
                } else {
                    watch = try await client.watch(number)
                }
            } catch {
                if await reconnection.retry(after: error, missing: { [number] in number }) { continue }
                return Task.isCancelled ? .interrupted : .failed(error)
            }
            reconnection.subscribed()
            Report.error("watching \(number)")
            let outcome = await Self.print(watch, count: count.map { $0 - printed }, json: json) { change in
                printed += 1
                last = change.new
            }
            if case .failed(let error) = outcome {
                if await reconnection.lost(error, closing: client) { continue }
                if Task.isCancelled { return .interrupted }
            }
            return outcome
        }
    }

    /// Prints the watch's changes until it ends, `count` were printed, or stdout closed; `printedOne` is told of each.
    private static func print(
        _ watch: Watch, count: Int?, json: Bool, printedOne: (Watch.Change) -> Void
    ) async -> Outcome {
        var printed = 0
        do {
            for try await change in watch {
                if let gap = change.gap { Report.error(describe(gap, of: change)) }
                let written = Output.line(json ? JSONLine.encode(change) : line(change))
                if !written { return .outputClosed }
                printedOne(change)
                printed += 1
                if let count, printed >= count { return .countReached }
            }
        } catch {
            return .failed(error)
        }
        return Task.isCancelled ? .interrupted : .removed
    }

    /// `OLD -> NEW`, `(none) -> NEW` for the first change.
    static func line(_ change: Watch.Change) -> String {
        (change.old.map { shown($0.payload) } ?? "(none)") + " -> " + shown(change.new.payload)
    }

    /// A payload as one line of text: UTF-8 (bytes that are not, as U+FFFD), LF and CR as `\n` and `\r`.
    static func shown(_ payload: [UInt8]) -> String {
        var out = ""
        for scalar in String(decoding: payload, as: UTF8.self).unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// The stderr line for a gap before `change`.
    static func describe(_ gap: Watch.Gap, of change: Watch.Change) -> String {
        switch gap {
        case .missed(let revisions) where revisions.count == 1:
            return "missed revision \(revisions.lowerBound) of '\(change.number)' (1 change not seen)"
        case .missed(let revisions):
            return "missed revisions \(revisions.lowerBound) to \(revisions.upperBound) of '\(change.number)' "
                + "(\(revisions.count) changes not seen)"
        case .wentBack(let from):
            return "the revision of '\(change.number)' went back from \(from) to \(change.revision): the number was "
                + "removed and created again, or the server lost its state; changes in between may be missed"
        }
    }
}
