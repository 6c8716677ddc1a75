import ArgumentParser
import SubscriptionClient

/// `subctl remove NUMBER...`
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "remove",
        abstract: "Remove subscription numbers; their subscribers are told GONE.",
        discussion:
            "Prints 'removed NUMBER (K subscribers told)' ('subscriber' when K is 1) for each, in order; "
            + "stops at the first failure."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The numbers to remove.")
    var numbers: [String]

    func validate() throws {
        guard !numbers.isEmpty else { throw ValidationError("name at least one number to remove") }
        for number in numbers { try Check.number(number) }
    }

    func run() async throws {
        let client = try await options.connect()
        for number in numbers {
            do {
                let told = try await client.remove(number)
                Output.line("removed \(number) (\(told) \(told == 1 ? "subscriber" : "subscribers") told)")
            } catch {
                throw Report.failure(error, endpoint: client.endpoint, number: number, suggestCreate: false)
            }
        }
        await client.close()
    }
}
