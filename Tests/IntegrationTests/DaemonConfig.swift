import Foundation

/// The limits and settings of one test's `subd`, written as the flat YAML file `subd --config` reads.
/// A nil value leaves the key out, so subd uses its default.
struct DaemonConfig {
    /// Numbers created at start (`numbers:`).
    var numbers: [String] = []
    /// `max_line`: longest command line in bytes.
    var maxLine: Int?
    /// `max_payload`: largest PUB/SEND payload in bytes.
    var maxPayload: Int?
    /// `max_pending`: unsent bytes after which a subscriber is cut off.
    var maxPending: Int?
    /// `max_connections`.
    var maxConnections: Int?
    /// `max_subscriptions`: per session.
    var maxSubscriptions: Int?
    /// `max_numbers`.
    var maxNumbers: Int?
    /// `tcp_keepalive_idle`: seconds of silence before the first keepalive probe; 0 turns TCP keepalive off.
    var tcpKeepaliveIdle: Int?
    /// `tcp_keepalive_interval`: seconds between keepalive probes.
    var tcpKeepaliveInterval: Int?
    /// `tcp_keepalive_count`: unanswered probes after which the peer is gone.
    var tcpKeepaliveCount: Int?
    /// `command_timeout`: seconds a started command may go without a new byte; 0 is off.
    var commandTimeout: Double?
    /// `auth_timeout`: seconds a connection may stay unauthenticated when `auth_token` is set; 0 is off.
    var authTimeout: Double?
    /// `log_level`; the harness needs at least `info` to see the `listening on` line. Always written, so the file is
    /// a YAML mapping even when every other key is left out.
    var logLevel = "info"
    /// Extra raw YAML lines, for tests of the config file itself.
    var extraLines: [String] = []

    /// The YAML text of this configuration.
    var yaml: String {
        var lines: [String] = ["# written by subd IntegrationTests"]
        if !numbers.isEmpty {
            lines.append("numbers: [" + numbers.map { "\"\($0)\"" }.joined(separator: ", ") + "]")
        }
        let limits: [(String, Int?)] = [
            ("max_line", maxLine), ("max_payload", maxPayload), ("max_pending", maxPending),
            ("max_connections", maxConnections), ("max_subscriptions", maxSubscriptions),
            ("max_numbers", maxNumbers), ("tcp_keepalive_idle", tcpKeepaliveIdle),
            ("tcp_keepalive_interval", tcpKeepaliveInterval), ("tcp_keepalive_count", tcpKeepaliveCount),
        ]
        for (key, value) in limits {
            if let value { lines.append("\(key): \(value)") }
        }
        let timeouts: [(String, Double?)] = [("command_timeout", commandTimeout), ("auth_timeout", authTimeout)]
        for (key, value) in timeouts {
            if let value { lines.append("\(key): \(value)") }
        }
        lines.append("log_level: \(logLevel)")
        lines += extraLines
        return lines.joined(separator: "\n") + "\n"
    }
}
