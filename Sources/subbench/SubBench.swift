import Foundation

/// `subbench`: the fan-out load generator behind `make bench` (see `BenchOptions.usage`).
@main
enum SubBench {
    /// Parses the command line, runs one benchmark and exits with its status.
    static func main() {
        signal(SIGPIPE, SIG_IGN)
        let options: BenchOptions
        do {
            guard let parsed = try BenchOptions.parse(Array(CommandLine.arguments.dropFirst())) else {
                Console.out(BenchOptions.usage)
                exit(0)
            }
            options = parsed
        } catch {
            Console.error("\(error) (see subbench --help)")
            exit(64)
        }
        exit(BenchRun(options: options).execute())
    }
}
