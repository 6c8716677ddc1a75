import Foundation
import Synchronization

/// Everything the watchdog needs to say what arrived when a run times out.
final class ProgressBoard: Sendable {
    /// The publisher's counters.
    let publisher = PublisherProgress()
    /// The idle scenario's counters.
    let idle = IdleProgress()
    private let subscribers = Locked<[SubscriberProgress]>([])
    private let daemon = Locked<DaemonProcess?>(nil)
    private let certificate = Locked<ThrowawayCertificate?>(nil)

    /// Adds a subscriber to report on.
    func add(_ subscriber: SubscriberProgress) {
        subscribers.withLock { $0.append(subscriber) }
    }

    /// Records the started daemon, so a timeout can stop it.
    func setDaemon(_ started: DaemonProcess) {
        daemon.withLock { $0 = started }
    }

    /// Records the throwaway certificate of `--tls`, so a timeout removes its directory too.
    func setCertificate(_ made: ThrowawayCertificate) {
        certificate.withLock { $0 = made }
    }

    /// Prints what arrived, stops a started daemon, removes a throwaway certificate and exits with status 1.
    func timedOut(after seconds: Double, options: BenchOptions) -> Never {
        let total = options.messages + options.latencySamples
        var lines = ["subbench: timed out after \(BenchFormat.decimals(seconds, places: 0)) s"]
        if options.scenario == .idle {
            lines.append(
                "idle connections: \(idle.opened.load(ordering: .relaxed)) of \(options.connections) opened, "
                    + "\(idle.subscribed.load(ordering: .relaxed)) subscribed"
                    + (idle.closed.load(ordering: .relaxed) ? ", all closed since" : ""))
        } else {
            lines.append(
                "published \(publisher.sent.load(ordering: .relaxed)) of \(total) msgs, "
                    + "\(publisher.acknowledged.load(ordering: .relaxed)) acknowledged")
        }
        for subscriber in subscribers.withLock({ $0 }) {
            var line =
                "subscriber \(subscriber.index): received \(subscriber.received.load(ordering: .relaxed))"
                + " of \(total) msgs"
            if let failure = subscriber.failure.withLock({ $0 }) { line += " (stopped: \(failure))" }
            lines.append(line)
        }
        if let started = daemon.withLock({ $0 }) {
            _ = started.stop(seconds: 5)
            lines.append("subd's last stderr lines:")
            lines += started.log.recentLines.map { "  " + $0 }
        }
        certificate.withLock { $0 }?.remove()
        for line in lines { Console.out(line) }
        exit(1)
    }
}
