import ArgumentParser
import SubscriptionClient

/// `subctl stats`, and `subctl stats --cluster`
struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Show the server's statistics, or the whole cluster's.",
        discussion: """
            Prints one line 'KEY VALUE' per statistic, as the server sends them.

            With --cluster (a node with cluster:), waits for the node's next $SYS.cluster.node events (posted every \
            sys_interval seconds) and prints one line 'node NAME STATE AGE_SECONDS' per node of the cluster (STATE: \
            up, stale or lost), then 'KEY VALUE' lines with each counter summed over the nodes that are not lost. \
            Fails when none came within --wait seconds.
            """
    )

    @OptionGroup var options: GlobalOptions

    @Flag(help: "Sum every node's statistics and list the nodes (waits for the next $SYS.cluster.node events).")
    var cluster = false

    @Option(help: ArgumentHelp("With --cluster: how long to wait for the events, in seconds.", valueName: "seconds"))
    var wait: Double = 15

    func run() async throws {
        let client = try await options.connect()
        var printed = true
        do {
            if cluster {
                printed = try await Self.printCluster(client, wait: wait)
            } else {
                for entry in try await client.stats() {
                    Output.line("\(entry.key) \(entry.value)")
                }
            }
        } catch {
            throw Report.failure(error, endpoint: client.endpoint)
        }
        await client.close()
        guard printed else {
            throw ValidationError(
                "no $SYS.cluster.node event within \(wait) s: is the node clustered (cluster:), sys_interval > 0?")
        }
    }

    /// Subscribes to `$SYS.cluster.node`, reads one post (as many reports as its `nodes` field says), then prints
    /// the nodes and the totals. False when no event came within `wait` seconds.
    private static func printCluster(_ client: SubscriptionClient, wait: Double) async throws(ClientError) -> Bool {
        let subscription = try await client.subscribe(["$SYS.cluster.node"])
        let timeout = Task {
            try await Task.sleep(for: .seconds(wait))
            await client.close()
        }
        defer { timeout.cancel() }
        var reports: [String: ClusterNodeReport] = [:]
        do {
            for try await event in subscription {
                guard case .message(let message) = event,
                    let fields = FlatJSON.fields(of: String(decoding: message.payload, as: UTF8.self)),
                    let report = ClusterNodeReport(fields: fields)
                else { continue }
                reports[report.node] = report
                if reports.count >= report.nodes { break }
            }
        } catch {
            // Closed by the timeout: what came is printed.
        }
        guard !reports.isEmpty else { return false }
        let listed = reports.values.sorted { $0.node < $1.node }
        for report in listed {
            Output.line("node \(report.node) \(report.state) \(report.ageSeconds)")
        }
        for entry in ClusterStats.totals(of: listed) {
            Output.line("\(entry.key) \(entry.value)")
        }
        return true
    }
}
