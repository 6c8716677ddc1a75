import ArgumentParser
@preconcurrency import Glibc
import SubscriptionClient

/// Turns failures into the one stderr line subctl prints and the exit code it ends with (see the root
/// command's help: 1 refused, 64 usage, 69 unavailable).
enum Report {
    /// The server refused the command.
    static let refused = ExitCode(1)
    /// The server cannot be reached, or the connection was lost.
    static let unavailable = ExitCode(69)

    /// Prints `subctl: <text>` on stderr.
    static func error(_ text: String) {
        fputs("subctl: \(text)\n", stderr)
    }

    /// Prints the line for `error` and returns the exit code. `number` is the number the command was about,
    /// named in the hint for `NOTFOUND`.
    /// `number`: the number a NOTFOUND is about; `suggestCreate`: whether to say how to create it (not after a
    /// failed remove, where creating it is not what the user wants); `retained`: the command needs a retained number
    /// (get, watch), so the hint creates one, and `PROTO` (the server's answer for a plain number) says so.
    static func failure(
        _ error: ClientError, endpoint: Endpoint, number: String? = nil, suggestCreate: Bool = true,
        retained: Bool = false
    ) -> ExitCode {
        switch error {
        case .connectFailed(let target, let reason):
            // A TLS failure means subd answered: the hint is about trust, not about whether it runs.
            let hint =
                !reason.hasPrefix("TLS:")
                ? "is subd running?"
                : reason.contains("certificate") ? "--ca names the CA that signed subd's certificate" : nil
            Report.error("cannot connect to \(target): \(reason)" + (hint.map { " (\($0))" } ?? ""))
            return unavailable
        case .connectionLost:
            Report.error("lost the connection to \(endpoint)")
            return unavailable
        case .protocolViolation(let what):
            Report.error("\(endpoint) broke the subd protocol: \(what)")
            return unavailable
        case .notFound where number != nil:
            let number = number!
            let create = "subctl create \(number)" + (retained ? " --retain" : "")
            Report.error(
                suggestCreate
                    ? "no subscription number '\(number)' (create it with: \(create))"
                    : "no subscription number '\(number)'")
            return refused
        case .proto(let message) where retained && number != nil:
            let number = number!
            Report.error(
                "'\(number)' is not a retained number (server: \(message)); only a number created with "
                    + "'subctl create \(number) --retain' has a value, and an existing number keeps its kind")
            return refused
        case .proto, .unknown, .name, .notFound, .tooBig, .auth, .denied, .limit:
            Report.error("server refused: \(error)")
            return refused
        case .timeout, .outboundBufferFull:
            // subctl uses SubscriptionClient, which has no request timeout nor outbound buffer.
            Report.error(error.description)
            return unavailable
        case .invalidName, .invalidClientName, .invalidGroupName, .invalidToken, .invalidInfo, .invalidArgument:
            Report.error(error.description)
            return .validationFailure
        }
    }
}
