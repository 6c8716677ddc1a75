import Dispatch
import SubscriptionSystem

extension NATSClient {
    /// Performs what the state machine asked for, in order.
    func perform(_ actions: [NATSConnectionStateMachine.Action]) {
        for action in actions {
            switch action {
            case .openSocket(let server, let attempt):
                openSocket(to: server, attempt: attempt)
            case .sendConnect(let fields):
                NATSEncoder.connect(fields, into: &control.bytes)
                scheduleFlush()
            case .sendPing:
                if machine.phase == .connected {
                    NATSEncoder.ping(into: &output.bytes)
                } else {
                    NATSEncoder.ping(into: &control.bytes)
                }
                scheduleFlush()
            case .sendPong:
                if machine.phase == .connected {
                    NATSEncoder.pong(into: &output.bytes)
                } else {
                    NATSEncoder.pong(into: &control.bytes)
                }
                scheduleFlush()
            case .restoreSubscriptions:
                restoreSubscriptions()
            case .closeSocket:
                closeSocket()
            case .dropUnsentOutput:
                if !output.isEmpty { logger.debug("NATS: dropped \(output.count) unsent bytes of the lost connection") }
                output.removeAll()
            case .scheduleReconnect(let nanoseconds):
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(clamping: nanoseconds))) { [self] in
                    perform(machine.reconnectTimerFired(now: MonotonicClock.nanoseconds()))
                }
            case .completeFlush(let id):
                // Taken out first: the completion may flush again.
                let waiter = flushWaiters.removeValue(forKey: id)
                waiter?(.success(()))
            case .failFlushes(let ids, let error):
                for id in ids {
                    let waiter = flushWaiters.removeValue(forKey: id)
                    waiter?(.failure(error))
                }
            case .report(let status):
                report(status)
            case .reportError(let error):
                logger.debug("NATS: \(error)")
                onError?(error)
            }
        }
    }

    /// Sends `SUB` for every live subscription (and `UNSUB <remaining>` for those with a maximum), ahead of the
    /// held output, in the order they were made.
    private func restoreSubscriptions() {
        for (sid, record) in subscriptions.records.sorted(by: { $0.key < $1.key }) {
            // Checked when the subscription was made.
            try? NATSEncoder.subscribe(subject: record.subject, queue: record.queue, sid: sid, into: &control.bytes)
            if let maxMessages = record.maxMessages {
                NATSEncoder.unsubscribe(sid: sid, max: max(1, maxMessages - record.delivered), into: &control.bytes)
            }
        }
        scheduleFlush()
    }

    private func report(_ status: NATSStatus) {
        switch status {
        case .connected(let server, let info):
            serverInfo = info
            logger.info("NATS: connected to \(server) (\(info.serverName), \(info.version))")
        case .disconnected(let reason):
            logger.info("NATS: disconnected: \(reason)")
        case .closed(let reason):
            if let reason { logger.info("NATS: closed: \(reason)") }
            pingTimer?.cancel()
            pingTimer = nil
            control.removeAll()
            output.removeAll()
            let requests = inbox?.takeAll() ?? []
            // The handlers may hold the client (the request inbox's does): nothing is delivered any more.
            subscriptions = SubscriptionTable()
            inbox = nil
            for completion in requests { completion(.failure(.closed)) }
        }
        onStatusChange?(status)
        for observer in statusObservers.sorted(by: { $0.key < $1.key }) { observer.value(status) }
        if case .closed = status { statusObservers = [:] }
    }

    /// Starts the PING timer (``NATSClientOptions/pingInterval``); it lives until the client closes.
    func startPingTimer() {
        let interval = Self.interval(options.pingInterval)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        timer.setEventHandler { [self] in
            perform(machine.pingTimerFired(now: MonotonicClock.nanoseconds()))
        }
        pingTimer = timer
        timer.resume()
    }
}
