import Dispatch
import SubscriptionCenter
import SubscriptionProtocol
import SubscriptionSystem

extension Server {
    /// Creates the `$SYS.` numbers (at start, before anything else); `$SYS.state.` ones only with a state directory,
    /// `$SYS.cluster.` ones only with `cluster:`.
    func createSystemNumbers() throws(CenterError) {
        for topic in SystemTopic.allCases where !topic.needsStateDirectory || configuration.stateDirectory != nil {
            guard !topic.needsCluster || cluster != nil else { continue }
            guard !topic.needsMQTT || !configuration.mqttListen.isEmpty || !configuration.webSocketListen.isEmpty
            else { continue }
            try center.create(topic.rawValue)
        }
    }

    /// Publishes a system notification (`event` and `time` first, then `object`'s fields) at the end of the turn,
    /// outside any delivery or close that caused it (a slow consumer cut while the center delivers must not be
    /// told about itself from inside that delivery). Nothing is encoded when nobody can be subscribed to the topic.
    func post(_ topic: SystemTopic, _ object: @autoclosure () -> JSONObject) {
        guard center.mayHaveSubscribers(topic.rawValue) else { return }
        let stamped = JSONObject(
            [("event", .string(topic.event)), ("time", .string(UTCTimestamp.now()))] + object().fields)
        let payload = Array(stamped.line.utf8)
        loop.atEndOfTurn { [unowned self] in
            let receivers = try? center.send(to: topic.rawValue) { () -> Publication in
                Publication.make(number: topic.rawValue, payload: payload)
            }
            if let receivers, receivers > 0 {
                stats.messagesPublished += 1
                stats.messagesDelivered += UInt64(receivers)
            }
        }
    }

    /// A session's identity in a notification: its id, its name (null before HELLO) and its peer address.
    func identity(of session: Session) -> [(key: String, value: JSONObject.Value)] {
        identity(of: session, name: session.client.name)
    }

    /// A session's identity in a notification, its name given (a command's, from the client state it holds).
    func identity(of session: Session, name: String?) -> [(key: String, value: JSONObject.Value)] {
        [
            ("session", .unsigned(session.id)),
            ("name", name.map { .string($0) } ?? .null),
            ("address", .string(session.peerAddress)),
        ]
    }

    /// (Re)starts `$SYS.stats`: the STATS keys every `sys_interval` seconds, on the event loop; none when it is 0.
    func startSystemStats() {
        systemStatsTimer?.cancel()
        systemStatsTimer = nil
        let seconds = configuration.sysInterval
        guard seconds > 0 else { return }
        let period = DispatchTimeInterval.nanoseconds(Int(seconds * 1_000_000_000))
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + period, repeating: period)
        timer.setEventHandler { [unowned self] in
            let lines = self.currentStats().lines(uptime: ContinuousClock.now - self.startedAt)
            self.post(.stats, JSONObject(Self.statsFields(lines)))
            if let cluster = self.cluster { self.shareClusterStats(lines, through: cluster) }
            self.loop.endOfTurn()
        }
        systemStatsTimer = timer
        timer.resume()
    }

    /// Starts `$SYS.numbers`: once a second, while some session subscribes to it by that exact name (a pattern
    /// such as `$SYS.>` alone does not start it; it gets the events while they are posted), the busiest numbers'
    /// messages published. The per-number counting (``NumberCounters``, also the metrics') runs only then or while
    /// metrics show the busiest numbers: otherwise a publication pays nothing for it.
    func startNumberActivity() {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.numberActivityPeriod, repeating: Self.numberActivityPeriod)
        timer.setEventHandler { [unowned self] in
            self.postNumberActivity()
            self.loop.endOfTurn()
        }
        numberActivityTimer = timer
        timer.resume()
    }

    /// How often `$SYS.numbers` is posted.
    static let numberActivityPeriod = DispatchTimeInterval.seconds(1)

    /// One `$SYS.numbers` event, if asked for; counting starts or stops as the subscriptions to it come and go.
    func postNumberActivity() {
        let asked = !center.exactSubscriptionGroups(of: SystemTopic.numbers.rawValue).isEmpty
        let counts = asked || configuration.countsNumbers
        if counts != numberCounters.isEnabled { numberCounters.setEnabled(counts) }
        guard asked else { return }
        numberCounters.forget { !center.contains($0) }
        let busiest = numberCounters.busiest(NumberCounters.maxShown).map { (key: $0.number, count: $0.published) }
        post(.numbers, JSONObject([("interval_seconds", .unsigned(1)), ("published", .counts(busiest))]))
    }

    /// STATS lines as JSON fields: numeric values as numbers, the others (`version`) as strings.
    static func statsFields(_ lines: [String]) -> [(key: String, value: JSONObject.Value)] {
        lines.map { line in
            let parts = line.split(separator: " ", maxSplits: 1)
            let value = parts.count == 2 ? String(parts[1]) : ""
            return (String(parts[0]), UInt64(value).map { .unsigned($0) } ?? .string(value))
        }
    }
}
