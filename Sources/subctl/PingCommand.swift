import ArgumentParser
import SubscriptionClient

/// `subctl ping`
struct PingCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ping",
        abstract: "Check that the server answers.",
        discussion: "Prints 'PONG' and the round-trip time, e.g. 'PONG 0.21 ms'."
    )

    @OptionGroup var options: GlobalOptions

    func run() async throws {
        let client = try await options.connect()
        do {
            let elapsed = try await client.ping()
            Output.line("PONG \(Self.milliseconds(elapsed)) ms")
        } catch {
            throw Report.failure(error, endpoint: client.endpoint)
        }
        await client.close()
    }

    /// `duration` in milliseconds with two decimals, e.g. `0.21`.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let hundredths = seconds * 100_000 + (attoseconds + 5_000_000_000_000) / 10_000_000_000_000
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }
}
