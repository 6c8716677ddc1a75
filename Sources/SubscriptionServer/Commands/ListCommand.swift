import SubscriptionCenter
import SubscriptionProtocol

/// `LIST [<pattern>]`: the existing numbers that match, sorted by their bytes, each with how many sessions a
/// message to it would reach.
enum ListCommand {
    static func run(_ pattern: String?, _ context: CommandContext) throws(ProtocolError) -> Reply {
        let numbers = try context.inCenter { center throws(CenterError) in try center.list(matching: pattern ?? ">") }
        return .list(numbers.map { "\($0.number) \($0.subscribers)" })
    }
}
