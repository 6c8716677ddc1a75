import ArgumentParser
@preconcurrency import Glibc

/// `subctl`: the command-line client of subd.
@main
struct Subctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "subctl",
        abstract: "Create numbers, publish, listen and inspect a subd publish/subscribe server.",
        discussion: """
            Every subcommand takes --server HOST:PORT or --server unix:PATH (default: $SUBD_SERVER, \
            else 127.0.0.1:7827), --name NAME (sent with HELLO; listeners can filter on it with --from) and \
            --token SECRET (default: $SUBD_TOKEN) for a server with auth_token set.

            Environment:
              SUBD_SERVER   the server when --server is not given (HOST:PORT, [IPV6]:PORT or unix:PATH)
              SUBD_TOKEN    the secret when --token is not given

            listen and watch connect and subscribe again after losing the server (--no-reconnect: exit instead).

            Load: 'subctl publish NUMBER MSG --count N [--interval S]'. A benchmark with throughput, latency and \
            memory figures: subbench, built beside subctl ('make bench' runs it; 'subbench --help'; with --tls \
            over TLS).

            Exit codes:
              0   success
              1   the server refused (an -ERR reply); listen: every number was removed;
                  watch: its number was removed; get: not retained, or no value yet
              64  usage error
              69  the server is unavailable, or the connection to it was lost
            """,
        subcommands: [
            CreateCommand.self, RemoveCommand.self, PublishCommand.self, ListenCommand.self, GetCommand.self,
            WatchCommand.self, ListCommand.self, StatsCommand.self, PingCommand.self,
        ]
    )

    /// Sets stdout to line buffering (output often goes to a pipe), then parses and runs the subcommand.
    static func main() async {
        setvbuf(stdout, nil, _IOLBF, 0)
        _ = signal(SIGPIPE, SIG_IGN)
        await main(movingGlobalOptions(Array(CommandLine.arguments.dropFirst())))
    }

    /// The global options may come before the subcommand too (`subctl --server X publish ...`, as with redis-cli
    /// or nats): they are moved behind the subcommand's name, where the subcommand's option group reads them.
    static func movingGlobalOptions(_ arguments: [String]) -> [String] {
        var leading: [String] = []
        var rest = arguments[...]
        let takingValue = ["--server", "--name", "--token", "--ca", "--cert", "--key"]
        while let first = rest.first {
            if takingValue.contains(first), rest.count >= 2 {
                leading += rest.prefix(2)
                rest = rest.dropFirst(2)
            } else if first == "--tls" || takingValue.contains(where: { first.hasPrefix($0 + "=") }) {
                leading.append(first)
                rest = rest.dropFirst()
            } else {
                break
            }
        }
        guard !leading.isEmpty, let subcommand = rest.first else { return arguments }
        return [subcommand] + leading + rest.dropFirst()
    }
}
