import Dispatch
import SubscriptionSystem

extension Server {
    /// Binds `metrics_listen`, when set, and starts serving `GET /metrics` on the server's queue. On the queue.
    func startMetrics() throws(SystemCallError) {
        guard let address = configuration.metricsListen else { return }
        let listener: MetricsListener
        do throws(SystemCallError) {
            // Unowned: the server owns the listener, and stops it before it goes.
            listener = try MetricsListener(binding: address, queue: queue, logger: logger) { [unowned self] in
                self.metricsSnapshot().exposition()
            }
        } catch {
            throw SystemCallError("metrics_listen: \(error.operation)", errno: error.errno)
        }
        metricsListener = listener
        listener.start()
        logger.info("metrics on \(listener.url)")
    }

    /// Stops the metrics endpoint and closes its connections. On the queue.
    func stopMetrics() {
        metricsListener?.stop()
        metricsListener = nil
    }

    /// What a scrape shows now; numbers removed since the last scrape are forgotten first. On the queue.
    func metricsSnapshot() -> MetricsSnapshot {
        dispatchPrecondition(condition: .onQueue(queue))
        numberCounters.forget { !center.contains($0) }
        let busiest = numberCounters.busiest(configuration.metricsTopNumbers).map {
            MetricsSnapshot.NumberSample(
                number: $0.number, published: $0.published, subscribers: center.subscriberCount(of: $0.number))
        }
        let uptime = ContinuousClock.now - startedAt
        return MetricsSnapshot(
            stats: currentStats(),
            uptimeSeconds: Double(uptime.components.seconds) + Double(uptime.components.attoseconds) / 1e18,
            busiestNumbers: busiest, process: ProcessResources.current(), node: cluster?.node)
    }
}

extension ServerConfiguration {
    /// True when the per-number counters count: metrics are served and show some numbers.
    var countsNumbers: Bool { metricsListen != nil && metricsTopNumbers > 0 }
}
