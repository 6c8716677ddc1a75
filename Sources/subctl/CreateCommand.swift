import ArgumentParser
import SubscriptionClient

/// `subctl create NUMBER...`
struct CreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create subscription numbers.",
        discussion: "Prints 'created NUMBER' or 'exists NUMBER' for each, in order."
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The numbers to create, e.g. SCIENCE or SCIENCE.physics.")
    var numbers: [String]

    func validate() throws {
        guard !numbers.isEmpty else { throw ValidationError("name at least one number to create") }
        for number in numbers { try Check.number(number) }
    }

    func run() async throws {
        let client = try await options.connect()
        for number in numbers {
            do {
                Output.line(try await client.create(number) ? "created \(number)" : "exists \(number)")
            } catch {
                throw Report.failure(error, endpoint: client.endpoint, number: number)
            }
        }
        await client.close()
    }
}
