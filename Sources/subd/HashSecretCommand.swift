import SubscriptionServer

#if canImport(Glibc)
    import Glibc
#endif

/// `subd hash-secret [--iterations N]`: reads a user's secret from stdin and prints the `secret_hash` for the
/// config file's `users:` list, so the clear secret never has to be written into the file.
struct HashSecretCommand {
    /// `--iterations N`: PBKDF2 iterations, ``SecretHash/defaultIterations`` when not given.
    var iterations = SecretHash.defaultIterations

    /// The usage text for `--help` and usage errors.
    static let usage = """
        usage: subd hash-secret [--iterations N] < secret

        Reads a secret from stdin (one line; the trailing newline is dropped; asked for without echo on a
        terminal) and prints its salted hash for a user's secret_hash in the config file's users: list.
        The secret must be one HELLO token= can carry: not empty, no space, no control character.

        options:
          --iterations N       PBKDF2-HMAC-SHA256 iterations (default \(SecretHash.defaultIterations), \
        \(SecretHash.iterationRange.lowerBound) to \(SecretHash.iterationRange.upperBound))
          -h, --help           print this help and exit

        exit status: 0 printed, 64 usage error, 65 the secret cannot be used
        """

    /// Runs the verb with `arguments` (after `hash-secret`); returns the exit status.
    static func run(_ arguments: [String]) -> Int32 {
        var command = HashSecretCommand()
        var rest = arguments[...]
        while var argument = rest.popFirst() {
            // Accept --flag=value as well as --flag value, as the daemon's options do.
            if argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") {
                rest.insert(String(argument[argument.index(after: equals)...]), at: rest.startIndex)
                argument = String(argument[..<equals])
            }
            switch argument {
            case "-h", "--help":
                print(usage)
                return 0
            case "--iterations":
                let range = SecretHash.iterationRange
                guard let text = rest.popFirst(), let count = Int(text), range.contains(count) else {
                    return usageError(
                        "--iterations needs a whole number from \(range.lowerBound) to \(range.upperBound)")
                }
                command.iterations = count
            default:
                return usageError("unknown option '\(argument)'")
            }
        }
        guard let secret = String(validating: readSecret(), as: UTF8.self) else {
            writeToStandardError("subd hash-secret: the secret is not valid UTF-8\n")
            return 65  // EX_DATAERR
        }
        do {
            print(try SecretHash.make(secret: secret, iterations: command.iterations).encoded)
            return 0
        } catch {
            writeToStandardError("subd hash-secret: \(error)\n")
            return 65  // EX_DATAERR
        }
    }

    private static func usageError(_ message: String) -> Int32 {
        writeToStandardError("subd hash-secret: \(message)\n\n\(usage)\n")
        return 64  // EX_USAGE
    }

    /// Stdin up to its end (from a terminal: the first line, typed without echo), less one trailing newline (or
    /// CR LF). A second line stays in, and ``SecretHash/make(secret:iterations:)`` refuses its control byte.
    private static func readSecret() -> [UInt8] {
        let terminal = isatty(0) == 1
        var saved = termios()
        if terminal {
            writeToStandardError("secret: ")
            tcgetattr(0, &saved)
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            tcsetattr(0, TCSAFLUSH, &quiet)
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !(terminal && bytes.last == UInt8(ascii: "\n")) {
            let count = read(0, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        if terminal {
            tcsetattr(0, TCSAFLUSH, &saved)
            writeToStandardError("\n")
        }
        if bytes.last == UInt8(ascii: "\n") {
            bytes.removeLast()
            if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        }
        return bytes
    }
}
