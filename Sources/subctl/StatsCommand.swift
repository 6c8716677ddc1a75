import ArgumentParser
import SubscriptionClient

/// `subctl stats`
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show the server's statistics.",
        discussion: "Prints one line 'KEY VALUE' per statistic, as the server sends them."
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let client = try await options.connect()
        do {
            for entry in try await client.stats() {
                Output.line("\(entry.key) \(entry.value)")
            }
        } catch {
            throw Report.failure(error, endpoint: client.endpoint)
        }
        await client.close()
    }
}
