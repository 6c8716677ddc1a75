import ArgumentParser
import SubscriptionClient

/// `subctl list [PATTERN]`
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the numbers with their subscriber counts and kinds.",
        discussion: """
            Prints one line per number, sorted by number: 'NUMBER SUBSCRIBERS' for a plain number, \
            'NUMBER SUBSCRIBERS retained rev REVISION' for a retained one (rev 0: nothing published yet).
            """
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
            for entry in try await client.listKinds(pattern) {
                switch entry.kind {
                case .plain: Output.line("\(entry.number) \(entry.subscribers)")
                case .retained(let revision):
                    Output.line("\(entry.number) \(entry.subscribers) retained rev \(revision)")
                }
            }
        } catch {
            throw Report.failure(error, endpoint: client.endpoint)
        }
        await client.close()
    }
}
