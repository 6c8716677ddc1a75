import XCTest

@testable import SubscriptionServer

/// What a scrape shows: every STATS key has its metric with the same value, the busiest numbers, the process.
final class MetricsSnapshotTests: XCTestCase {
    /// Counters with a different value each, so a metric showing the wrong one is seen.
    private func distinctStats() -> ServerStats {
        var stats = ServerStats()
        stats.connections = 3
        stats.totalConnections = 11
        stats.numbers = 4
        stats.subscriptions = 5
        stats.messagesPublished = 1_000
        stats.messagesDelivered = 2_500
        stats.bytesIn = 70_000
        stats.bytesOut = 90_000
        stats.protocolErrors = 6
        stats.refusedConnections = 7
        stats.acceptFailures = 8
        for (index, reason) in CloseReason.allCases.enumerated() { stats.closed[reason] = UInt64(100 + index) }
        var acks = ClusterAckCounters()
        (acks.waited, acks.timeouts, acks.late) = (40, 41, 42)
        stats.clusterAcks = acks
        stats.cluster = ClusterStatistics(dropped: 12, received: 13)
        return stats
    }

    /// `name{labels}` to value, from exposition text (a test's own small reader; the integration tests use the
    /// Python prometheus_client parser).
    private func samples(_ bytes: [UInt8]) -> [String: String] {
        var values: [String: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " ") else { continue }
            values[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return values
    }

    /// Regression guard: a STATS key added without a metric fails here.
    func testEveryStatsKeyHasAMetric() {
        var stats = ServerStats()
        stats.cluster = ClusterStatistics()  // a clustered node's keys too
        stats.clusterAcks = ClusterAckCounters()
        let keys = stats.lines(uptime: .zero).map { String($0.prefix(while: { $0 != " " })) }
        XCTAssertTrue(keys.contains("cluster_dropped"))
        XCTAssertTrue(keys.contains("cluster_late_acks"))
        for key in keys {
            XCTAssertNotNil(MetricsSnapshot.statsKeys[key], "STATS \(key) has no metric in MetricsSnapshot")
        }
    }

    func testEveryStatsValueIsShown() {
        let stats = distinctStats()
        let snapshot = MetricsSnapshot(stats: stats, uptimeSeconds: 12.5, busiestNumbers: [], process: .init())
        let values = samples(snapshot.exposition())
        for line in stats.lines(uptime: .seconds(12)) {
            let parts = line.split(separator: " ")
            let (key, value) = (String(parts[0]), String(parts[1]))
            let name = MetricsSnapshot.statsKeys[key]!
            switch key {
            case "version":
                XCTAssertEqual(values["\(name){version=\"\(value)\"}"], "1")
            case "uptime_seconds":
                XCTAssertEqual(values[name], "12.5")
            case _ where key.hasPrefix("closed_"):
                XCTAssertEqual(values["\(name){reason=\"\(key.dropFirst(7))\"}"], value, key)
            default:
                XCTAssertEqual(values[name], value, "\(key) as \(name)")
            }
        }
        XCTAssertEqual(values["subd_closed_connections_total{reason=\"slow_consumer\"}"], "\(stats.slowConsumers)")
    }

    func testBusiestNumbersAndProcess() {
        let snapshot = MetricsSnapshot(
            stats: ServerStats(), uptimeSeconds: 1,
            busiestNumbers: [
                .init(number: "A.b", published: 9, subscribers: 2), .init(number: "C", published: 4, subscribers: 0),
            ],
            process: .init(residentBytes: 4096, openDescriptors: 12, maxDescriptors: 1024, cpuSeconds: 0.5))
        let values = samples(snapshot.exposition())
        XCTAssertEqual(values["subd_number_messages_published_total{number=\"A.b\"}"], "9")
        XCTAssertEqual(values["subd_number_messages_published_total{number=\"C\"}"], "4")
        XCTAssertEqual(values["subd_number_subscribers{number=\"A.b\"}"], "2")
        XCTAssertEqual(values["subd_number_subscribers{number=\"C\"}"], "0")
        XCTAssertEqual(values["process_resident_memory_bytes"], "4096")
        XCTAssertEqual(values["process_open_fds"], "12")
        XCTAssertEqual(values["process_max_fds"], "1024")
        XCTAssertEqual(values["process_cpu_seconds_total"], "0.5")
    }

    func testUnreadableProcessFactsAreLeftOut() {
        let text = String(
            decoding: MetricsSnapshot(stats: ServerStats(), uptimeSeconds: 0, busiestNumbers: [], process: .init())
                .exposition(), as: UTF8.self)
        XCTAssertFalse(text.contains("process_"), text)
    }

    func testResidentBytesFromProcStatus() {
        let status = "Name:\tsubd\nVmPeak:\t  300000 kB\nVmRSS:\t   25432 kB\nRssAnon:\t 9000 kB\n"
        XCTAssertEqual(ProcessResources.residentBytes(inStatus: Array(status.utf8)), 25_432 * 1024)
        XCTAssertNil(ProcessResources.residentBytes(inStatus: Array("Name:\tx\n".utf8)))
        XCTAssertNil(ProcessResources.residentBytes(inStatus: Array("VmRSS:\tlots\n".utf8)))
    }

    func testThisProcessCanBeRead() {
        let process = ProcessResources.current()
        XCTAssertGreaterThan(process.residentBytes ?? 0, 1024 * 1024)
        XCTAssertGreaterThan(process.openDescriptors ?? 0, 2)
        XCTAssertNotNil(process.maxDescriptors)
        XCTAssertNotNil(process.cpuSeconds)
    }
}
