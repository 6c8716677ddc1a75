import ArgumentParser
import SubscriptionClient

/// `subctl get NUMBER [--json]`
struct GetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "get",
        abstract: "Print the current value of a retained number.",
        discussion: """
            Prints the latest payload published to NUMBER (its bytes and LF), or with --json one object: number, \
            payload (or payload_base64), revision, from, info. Exits 1 with one line on stderr when the number does \
            not exist, is not retained (subctl create NUMBER --retain), or has no value yet (nothing was published \
            to it).
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The retained number to read.")
    var number: String

    @Flag(help: "Print one JSON object: number, payload (or payload_base64), revision, from, info.")
    var json = false

    func validate() throws {
        try Check.number(number)
    }

    func run() async throws {
        let client = try await options.connect()
        let value: RetainedValue?
        do {
            value = try await client.get(number)
        } catch {
            throw Report.failure(error, endpoint: client.endpoint, number: number, retained: true)
        }
        await client.close()
        guard let value else {
            Report.error("'\(number)' has no value yet (revision 0: nothing was published to it)")
            throw Report.refused
        }
        if json {
            Output.line(JSONLine.encode(value))
        } else {
            Output.bytesLine(value.payload)
        }
    }
}
