/// subd's command line: a handful of flags that override the config file and the environment.
struct DaemonArguments {
    /// `--config FILE`: the YAML file to read; nil means `/etc/subd/subd.yaml` if it exists.
    var configFile: String?
    /// `--listen HOST:PORT`, repeatable: replaces the `listen` list.
    var listen: [String] = []
    /// `--unix PATH`: also serve this Unix socket.
    var unixSocket: String?
    /// `--log-level LEVEL`.
    var logLevel: String?
    /// `--help` was given.
    var wantsHelp = false
    /// `--version` was given.
    var wantsVersion = false
    /// `--print-config-keys` was given: print every configuration key, its kind and its default, then exit.
    var wantsConfigKeys = false

    /// The usage text for `--help` and usage errors.
    static let usage = """
        usage: subd [--config FILE] [--listen HOST:PORT]... [--unix PATH] [--log-level LEVEL]
               subd --print-config-keys
               subd hash-secret [--iterations N]    (reads a secret on stdin, prints the users: secret_hash)

        Runs the subd publish/subscribe daemon in the foreground.

        options:
          --config FILE        YAML config file (default: /etc/subd/subd.yaml when it exists)
          --listen HOST:PORT   listen on this TCP address; repeat for more; port 0 picks a free port
                               (replaces the config's `listen` list)
          --unix PATH          also listen on a Unix socket at PATH (replaces the config's `unix_socket`)
          --log-level LEVEL    trace, debug, info, notice, warning, error or critical
          --print-config-keys  print every config key (nested ones as users[].name, cluster.node), what it
                               takes and its default, tab-separated, and exit
          --version            print the version and exit
          -h, --help           print this help and exit

        Every config key but users and cluster can also be set in the environment as SUBD_<KEY> (e.g.
        SUBD_MAX_PAYLOAD=4096; lists comma-separated).
        Precedence: command line, then environment, then config file, then built-in defaults.
        """

    /// A usage problem: printed with the usage text, exit code 64.
    struct UsageError: Error {
        /// What was wrong.
        var message: String
    }

    /// Parses `arguments` (without the program name).
    init(parsing arguments: [String]) throws(UsageError) {
        var rest = arguments[...]
        func value(for flag: String) throws(UsageError) -> String {
            guard let next = rest.popFirst(), !next.hasPrefix("--") else {
                throw UsageError(message: "\(flag) needs a value")
            }
            return next
        }
        while let argument = rest.popFirst() {
            // Accept --flag=value as well as --flag value.
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                rest.insert(String(argument[argument.index(after: equals)...]), at: rest.startIndex)
                try apply(String(argument[..<equals]), value: value)
                continue
            }
            try apply(argument, value: value)
        }
    }

    private mutating func apply(_ flag: String, value: (String) throws(UsageError) -> String) throws(UsageError) {
        switch flag {
        case "--config": configFile = try value(flag)
        case "--listen": listen.append(try value(flag))
        case "--unix": unixSocket = try value(flag)
        case "--log-level": logLevel = try value(flag)
        case "-h", "--help": wantsHelp = true
        case "--version": wantsVersion = true
        case "--print-config-keys": wantsConfigKeys = true
        default: throw UsageError(message: "unknown option '\(flag)'")
        }
    }
}
