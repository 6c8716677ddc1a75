import ArgumentParser
import SubscriptionClient
import SubscriptionWire

/// `subctl publish NUMBER [MESSAGE...] [--lines | --count N [--interval SECONDS]] [--info KEY=VALUE]...`
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish a message to a number.",
        discussion: """
            The message is the MESSAGE words joined by one space; without them, all of stdin is one message \
            (any bytes). Prints 'published to N receivers'; with --lines, 'published M messages (N deliveries)'.

            --info KEY=VALUE attaches an info pair (up to 16; with --lines, to every message). A key is 1 to 64 \
            ASCII letters, digits, '_', '-' and '.', starting with a letter, and not one of the server's own \
            (from, rev, group). The value is sent percent-encoded where it needs to be (space, '=', '%', control \
            characters), e.g. --info 'note=a b' is sent as note=a%20b; listen --json decodes it.

            --count N publishes the message N times, for quick load: pipelined in batches, or one every \
            --interval SECONDS (fractions allowed, e.g. 0.1). Prints 'published N messages (D deliveries)'.
            """
    )

    /// Lines published with one batch of pipelined PUB commands, at most.
    static let batchSize = 1024

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The number to publish to (it must exist: subctl create NUMBER).")
    var number: String

    @Argument(help: "The message, as words joined by one space. Without it, stdin is read.")
    var message: [String] = []

    @Flag(help: "Publish one message per line of stdin (the LF, and a CR before it, are stripped).")
    var lines = false

    @Option(help: ArgumentHelp("Publish the message this many times (quick load).", valueName: "n"))
    var count: Int?

    @Option(help: ArgumentHelp("With --count: wait this long between two messages.", valueName: "seconds"))
    var interval: Double?

    @Option(
        name: .customLong("info"),
        help: ArgumentHelp("An info pair to attach (repeatable; the value is percent-encoded).", valueName: "key=value")
    )
    var info: [String] = []

    func validate() throws {
        try Check.number(number)
        _ = try InfoOption.pairs(info)
        if lines && !message.isEmpty {
            throw ValidationError("--lines reads the messages from stdin; give no MESSAGE with it")
        }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
        if count != nil && lines { throw ValidationError("--count repeats one message; --lines reads many: give one") }
        if let interval {
            guard count != nil else { throw ValidationError("--interval goes with --count") }
            guard interval >= 0, interval.isFinite else {
                throw ValidationError("--interval must be 0 or more seconds")
            }
        }
    }

    func run() async throws {
        let pairs = try InfoOption.pairs(info)
        let client = try await options.connect()
        do {
            if lines {
                try await publishLines(client, info: pairs)
            } else {
                let payload =
                    message.isEmpty ? await StandardInput.readAll() : Array(message.joined(separator: " ").utf8)
                if let count {
                    try await publishRepeatedly(client, payload, count: count, info: pairs)
                } else {
                    let receivers = try await client.publish(number, payload, info: pairs)
                    Output.line("published to \(receivers) \(receivers == 1 ? "receiver" : "receivers")")
                }
            }
        } catch {
            throw Report.failure(error, endpoint: client.endpoint, number: number)
        }
        await client.close()
    }

    /// `--count`: the same payload `count` times, in pipelined batches, or one at a time `--interval` apart.
    private func publishRepeatedly(
        _ client: SubscriptionClient, _ payload: [UInt8], count: Int, info: [InfoPair]
    ) async throws(ClientError) {
        var messages = 0
        var deliveries = 0
        if let interval, interval > 0 {
            for index in 0..<count {
                if index > 0 {
                    do { try await Task.sleep(for: .seconds(interval)) } catch { break }
                }
                deliveries += try await client.publish(number, payload, info: info)
                messages += 1
            }
        } else {
            while messages < count {
                let batch = [[UInt8]](repeating: payload, count: min(Self.batchSize, count - messages))
                let receivers = try await client.publish(number, batch: batch, info: info)
                messages += receivers.count
                deliveries += receivers.reduce(0, +)
            }
        }
        Self.printTotals(messages: messages, deliveries: deliveries)
    }

    private static func printTotals(messages: Int, deliveries: Int) {
        Output.line(
            "published \(messages) \(messages == 1 ? "message" : "messages") "
                + "(\(deliveries) \(deliveries == 1 ? "delivery" : "deliveries"))")
    }

    private func publishLines(_ client: SubscriptionClient, info: [InfoPair]) async throws(ClientError) {
        var reader = StandardInput.LineReader()
        var messages = 0
        var deliveries = 0
        while let batch = await reader.nextLines(atMost: Self.batchSize) {
            let receivers = try await client.publish(number, batch: batch, info: info)
            messages += receivers.count
            deliveries += receivers.reduce(0, +)
        }
        Self.printTotals(messages: messages, deliveries: deliveries)
    }
}
