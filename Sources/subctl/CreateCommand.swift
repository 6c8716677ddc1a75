import ArgumentParser
import SubscriptionClient

/// `subctl create NUMBER... [--retain]`
struct CreateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create subscription numbers.",
        discussion: """
            Prints 'created NUMBER' or 'exists NUMBER' for each, in order. With --retain the numbers are retained: \
            each keeps its latest publication and gives every publication the next revision (see get and watch). \
            A number that exists keeps the kind it has.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Argument(help: "The numbers to create, e.g. SCIENCE or SCIENCE.physics.")
    var numbers: [String]

    @Flag(help: "Create retained numbers, which keep their latest value (CREATE NUMBER retain).")
    var retain = false

    func validate() throws {
        guard !numbers.isEmpty else { throw ValidationError("name at least one number to create") }
        for number in numbers { try Check.number(number) }
    }

    func run() async throws {
        let client = try await options.connect()
        for number in numbers {
            do {
                let created = try await client.create(number, retained: retain)
                Output.line(created ? "created \(number)" : "exists \(number)")
            } catch {
                throw Report.failure(error, endpoint: client.endpoint, number: number)
            }
        }
        await client.close()
    }
}
