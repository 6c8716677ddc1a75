import ArgumentParser
import SubscriptionClient

/// `subctl publish NUMBER [MESSAGE...] [--lines]`
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish a message to a number.",
        discussion: """
            The message is the MESSAGE words joined by one space; without them, all of stdin is one message \
            (any bytes). Prints 'published to N receivers'; with --lines, 'published M messages (N deliveries)'.
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

    func validate() throws {
        try Check.number(number)
        if lines && !message.isEmpty {
            throw ValidationError("--lines reads the messages from stdin; give no MESSAGE with it")
        }
    }

    func run() async throws {
        let client = try await options.connect()
        do {
            if lines {
                try await publishLines(client)
            } else {
                let payload =
                    message.isEmpty ? await StandardInput.readAll() : Array(message.joined(separator: " ").utf8)
                let receivers = try await client.publish(number, payload)
                Output.line("published to \(receivers) \(receivers == 1 ? "receiver" : "receivers")")
            }
        } catch {
            throw Report.failure(error, endpoint: client.endpoint, number: number)
        }
        await client.close()
    }

    private func publishLines(_ client: SubscriptionClient) async throws(ClientError) {
        var reader = StandardInput.LineReader()
        var messages = 0
        var deliveries = 0
        while let batch = await reader.nextLines(atMost: Self.batchSize) {
            let receivers = try await client.publish(number, batch: batch)
            messages += receivers.count
            deliveries += receivers.reduce(0, +)
        }
        Output.line(
            "published \(messages) \(messages == 1 ? "message" : "messages") "
                + "(\(deliveries) \(deliveries == 1 ? "delivery" : "deliveries"))")
    }
}
