import ArgumentParser
import Glibc
import SubscriptionClient

/// The options every subcommand takes: where the server is and how the client names itself.
struct GlobalOptions: ParsableArguments {
    /// The server used when neither `--server` nor `$SUBD_SERVER` says otherwise.
    static let defaultServer = "127.0.0.1:7827"

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The server: HOST:PORT, [IPV6]:PORT or unix:PATH (default: $SUBD_SERVER, else \(defaultServer)).",
            valueName: "address"
        )
    )
    var server: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The client name sent with HELLO; listeners can filter on it with --from.",
            valueName: "name"
        )
    )
    var name: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The secret for a server with auth_token set (default: $SUBD_TOKEN).",
            valueName: "secret"
        )
    )
    var token: String?

    @Flag(name: .long, help: "Speak TLS to the server (a tls:// listener of subd).")
    var tls = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --tls: the PEM CA certificates to trust for the server's certificate (default: the system's).",
            valueName: "file"
        )
    )
    var ca: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "With --tls: a PEM client certificate to present (its CN may name the user); --key gives its key.",
            valueName: "file"
        )
    )
    var cert: String?

    @Option(name: .long, help: ArgumentHelp("With --tls: the PEM private key of --cert.", valueName: "file"))
    var key: String?

    func validate() throws {
        let endpoint = try endpoint()
        if !tls && (ca != nil || cert != nil || key != nil) {
            throw ValidationError("--ca, --cert and --key go with --tls")
        }
        if key != nil && cert == nil { throw ValidationError("--key goes with --cert") }
        if tls, case .unix = endpoint { throw ValidationError("--tls needs a TCP server address HOST:PORT") }
        if let name { try Check.clientName(name, what: "client name") }
    }

    /// The server address from `--server`, `$SUBD_SERVER` or the default.
    func endpoint() throws(ValidationError) -> Endpoint {
        let text = server ?? Self.environmentServer ?? Self.defaultServer
        do {
            return try Endpoint(parsing: text, for: .connecting)
        } catch {
            throw ValidationError("bad server address: '\(text)' \(error)")
        }
    }

    /// Connects and says HELLO; on failure prints the one error line and throws the exit code.
    func connect() async throws(ExitCode) -> SubscriptionClient {
        let endpoint = try checkedEndpoint()
        do {
            return try await connect(to: endpoint)
        } catch {
            throw Report.failure(error, endpoint: endpoint)
        }
    }

    /// The server address, or the usage error line and its exit code.
    func checkedEndpoint() throws(ExitCode) -> Endpoint {
        do {
            return try endpoint()
        } catch {
            Report.error(error.message)
            throw .validationFailure
        }
    }

    /// Connects to `endpoint` and says HELLO with these options; the error as it is (for a command that tries
    /// again, such as `listen` after losing the server).
    func connect(to endpoint: Endpoint) async throws(ClientError) -> SubscriptionClient {
        try await SubscriptionClient.connect(
            to: endpoint, name: name, token: token ?? Self.environment("SUBD_TOKEN"),
            tls: tls ? TLSOptions(caFile: ca, certificate: cert, key: key) : nil)
    }

    private static var environmentServer: String? { environment("SUBD_SERVER") }

    /// A non-empty environment variable.
    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        let text = String(cString: value)
        return text.isEmpty ? nil : text
    }
}
