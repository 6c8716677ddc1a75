import ArgumentParser
import SubscriptionClient

/// `subctl list [PATTERN]`
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the numbers with their subscriber counts.",
        discussion: "Prints one line 'NUMBER SUBSCRIBERS' per number, sorted by number."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "Only the numbers this pattern matches (`*` one token, `>` one or more at the end).")
    var pattern: String?

    func validate() throws {
        if let pattern { try Check.pattern(pattern) }
    }

    func run() async throws {
        let client = try await options.connect()
        do {
            for entry in try await client.list(pattern) {
                Output.line("\(entry.number) \(entry.subscribers)")
            }
        } catch {
            throw Report.failure(error, endpoint: client.endpoint)
        }
        await client.close()
    }
}
