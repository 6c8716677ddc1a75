import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionWire

/// The command path's one entry: the policy first (``CommandPolicy``), then the verb's handler (one file each, in
/// Handlers/). A new verb is its handler file, its row in ``CommandPolicy/Requirement/of(_:)`` and its case here.
public enum CommandDispatch {
    /// Runs `command` for `client`: its reply, or the error to answer (a `DENIED` one counted). The command is
    /// consumed: its payload and names move into the handler without reference counting. Always inlined: the caller's
    /// environment is then never passed whole (a server's, made for the command, would be retained and released).
    @inlinable @inline(__always)
    public static func run<Environment: CommandEnvironment>(
        _ command: consuming Command, client: inout ClientState, center: SubscriptionCenter<Publication>,
        environment: Environment
    ) throws(ProtocolError) -> Reply {
        do {
            try CommandPolicy.authorize(command, for: client)
            switch consume command {
            case .hello(let name, let token):
                return try HelloCommand.run(
                    name: name, token: token, client: &client, center: center, environment: environment)
            case .create(let number, let retained):
                return try CreateCommand.run(
                    number, retained: retained, client: &client, center: center, environment: environment)
            case .remove(let number):
                return try RemoveCommand.run(number, client: &client, center: center, environment: environment)
            case .subscribe(let pattern, let from, let group):
                return try SubscribeCommand.run(
                    pattern, from: from, group: group, client: &client, center: center, environment: environment)
            case .unsubscribe(let pattern):
                return UnsubscribeCommand.run(pattern, client: &client, center: center, environment: environment)
            case .publish(let number, let payload, let info):
                return try PublishCommand.run(
                    number, payload: payload, info: info, client: &client, center: center, environment: environment)
            case .send(let number, let payload):
                return try PublishCommand.run(
                    number, payload: payload, info: [], client: &client, center: center, environment: environment)
            case .list(let pattern, let kinds):
                return try ListCommand.run(
                    pattern, kinds: kinds, client: &client, center: center, environment: environment)
            case .get(let number):
                return try GetCommand.run(number, client: &client, center: center, environment: environment)
            case .stats:
                return StatsCommand.run(client: &client, center: center, environment: environment)
            case .ping(let text):
                return PingCommand.run(text, client: &client, center: center, environment: environment)
            case .quit:
                return QuitCommand.run(client: &client, center: center, environment: environment)
            }
        } catch {
            if error.code == .denied { environment.countDenied() }
            throw error
        }
    }
}
