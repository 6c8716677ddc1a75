/// Which server a ``ReconnectingClient`` tries next and how long it waits first: a plain value, no sockets and no
/// clock (the client sleeps and connects; this only decides).
///
/// The servers are tried in the order given, starting with the first; each failed attempt moves on to the next one
/// (round robin) and makes the next wait longer (``Backoff``). After a connection is lost, the first attempt goes at
/// once to the server that was lost (a restart or a blip is the usual cause), and the waits start again from the
/// shortest.
struct ReconnectSchedule: Sendable {
    /// The servers, in the order to try them; never empty.
    let servers: [Endpoint]
    /// The waits.
    let backoff: Backoff
    /// The server of the next attempt.
    private(set) var index = 0
    /// Attempts failed since the last connection (or the start).
    private(set) var failures = 0

    init(servers: [Endpoint], backoff: Backoff) {
        precondition(!servers.isEmpty, "a ReconnectSchedule needs at least one server")
        self.servers = servers
        self.backoff = backoff
    }

    /// The server of the next attempt.
    var endpoint: Endpoint { servers[index] }

    /// How long to wait before the next attempt.
    func delay(using random: inout some RandomNumberGenerator) -> Duration {
        backoff.delay(afterFailures: failures, using: &random)
    }

    /// The attempt failed: the next goes to the next server, after a longer wait.
    mutating func failed() {
        failures += 1
        index = (index + 1) % servers.count
    }

    /// The attempt succeeded: the server stays the one to try first after a loss, with no wait.
    mutating func connected() {
        failures = 0
    }
}
