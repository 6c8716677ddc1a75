import SubscriptionCenter
import SubscriptionProtocol

/// What ``Server/reconfigure(_:)`` did.
public struct ReconfigureOutcome: Sendable, Equatable {
    /// Numbers created because the new configuration lists them and they did not exist.
    public var createdNumbers: [String] = []
    /// Keys whose new value takes a restart and was left as it runs (`listen`, `unix_socket`, `unix_socket_mode`,
    /// `state_dir`, `fsync`, `metrics_listen`, `threads`).
    public var needsRestart: [String] = []
}

extension ServerConfiguration {
    /// The parser's share of the limits.
    var protocolLimits: ProtocolLimits {
        ProtocolLimits(maxLine: maxLine, maxPayload: maxPayload)
    }
}

extension Server {
    /// Puts a reloaded configuration in force without dropping a listener or a client (SIGHUP).
    ///
    /// - `max_line`, `max_payload` and `max_pending` apply to every open session from its next command on;
    ///   `max_connections`, `max_subscriptions` and `max_numbers` to the next request they limit.
    /// - `auth_token` applies to the next `HELLO`, and `auth_failure_delay` to the next failed one; sessions that
    ///   are already in stay in.
    /// - `users` applies to the next `HELLO`, and to the sessions of users it changes (``applyUsers(_:)``).
    /// - TCP keepalive settings apply to the open TCP connections too; `command_timeout` and `auth_timeout` to every
    ///   open session from the next liveness check; a new `sys_interval` restarts the `$SYS.stats` timer.
    /// - Listed numbers that do not exist are created. Numbers dropped from the list stay: they are removed
    ///   explicitly (`REMOVE`), never behind their subscribers' backs.
    /// - `tls_cert`, `tls_key` and `tls_client_ca` are read again when TLS listeners run: new connections use the
    ///   new context, open ones keep theirs; files that do not load refuse the reload (the running context stays).
    /// - Listeners, the state directory and the threads stay as they are: a changed `listen`, `unix_socket`,
    ///   `unix_socket_mode`, `metrics_listen`, `state_dir`, `fsync` or `threads` is reported in
    ///   ``ReconfigureOutcome/needsRestart`` and takes effect at the next start.
    /// - `metrics_top_numbers` applies from the next scrape (counting per number starts, or stops and forgets, when
    ///   it turns from or to 0).
    ///
    /// All or nothing: when the listed numbers would not fit under `max_numbers`, it throws and changes nothing.
    /// `new` must have passed ``ServerConfiguration/validate()``.
    public func reconfigure(_ new: ServerConfiguration) throws(ConfigurationError) -> ReconfigureOutcome {
        let result: Result<ReconfigureOutcome, ConfigurationError> = queue.sync {
            var applied = new
            var outcome = ReconfigureOutcome()
            let running = configuration
            if new.listen != running.listen || new.tlsListen != running.tlsListen
                || new.webSocketListen != running.webSocketListen
            {
                outcome.needsRestart.append("listen")
            }
            if new.unixSocket != running.unixSocket { outcome.needsRestart.append("unix_socket") }
            if new.unixSocketMode != running.unixSocketMode { outcome.needsRestart.append("unix_socket_mode") }
            if new.stateDirectory != running.stateDirectory { outcome.needsRestart.append("state_dir") }
            if new.fsync != running.fsync { outcome.needsRestart.append("fsync") }
            if new.metricsListen != running.metricsListen { outcome.needsRestart.append("metrics_listen") }
            if new.threads != running.threads { outcome.needsRestart.append("threads") }
            applied.listen = running.listen
            applied.tlsListen = running.tlsListen
            applied.webSocketListen = running.webSocketListen
            applied.unixSocket = running.unixSocket
            applied.unixSocketMode = running.unixSocketMode
            applied.stateDirectory = running.stateDirectory
            applied.fsync = running.fsync
            applied.metricsListen = running.metricsListen
            applied.threads = running.threads

            var missing: [String] = []
            var seen = Set<[UInt8]>()
            for number in new.numbers where !center.contains(number) && seen.insert(Array(number.utf8)).inserted {
                missing.append(number)
            }
            guard center.clientNumberCount + missing.count <= new.maxNumbers else {
                return .failure(
                    ConfigurationError(
                        key: "numbers",
                        problem:
                            "\(missing.count) new number(s) would make \(center.clientNumberCount + missing.count), "
                            + "over max_numbers \(new.maxNumbers)"
                    ))
            }
            // TLS files are read again (a renewed certificate); a bad one refuses the whole reload and the running
            // context stays.
            var newTLSContext: TLSContext?
            if tlsContext != nil {
                do throws(ConfigurationError) {
                    newTLSContext = try Self.makeTLSContext(applied)
                } catch {
                    return .failure(error)
                }
            }
            configuration = applied
            if let newTLSContext { tlsContext = newTLSContext }
            if new.sysInterval != running.sysInterval { startSystemStats() }
            if new.users != running.users { applyUsers(new.users) }
            let numbersAsked = !center.exactSubscriptionGroups(of: SystemTopic.numbers.rawValue).isEmpty
            numberCounters.setEnabled(applied.countsNumbers || numbersAsked)
            center.limits = .init(maxSubscriptionsPerCustomer: new.maxSubscriptions, maxNumbers: new.maxNumbers)
            let keepaliveChanged = new.tcpKeepalive != running.tcpKeepalive
            for session in sessions.values {
                session.apply(limits: applied.protocolLimits, maxPending: applied.maxPending)
                if keepaliveChanged && session.isTCP {
                    do {
                        try new.tcpKeepalive.apply(to: session.fd)
                    } catch {
                        logger.warning(
                            "reload: cannot set TCP keepalive: \(error)", metadata: ["session": "\(session.id)"])
                    }
                }
            }
            for number in missing where (try? center.create(number)) == true {
                // One that cannot be saved is not created (saveCreated undoes it and logs why).
                guard (try? saveCreated(number, retained: false)) != nil else { continue }
                outcome.createdNumbers.append(number)
                post(.numberCreated, JSONObject([("number", .string(number)), ("kind", .string("plain"))]))
                mqttNumberCreated(number)
            }
            post(
                .configReloaded,
                JSONObject([
                    ("numbers_created", .strings(outcome.createdNumbers)),
                    ("needs_restart", .strings(outcome.needsRestart)),
                ]))
            loop.endOfTurn()
            return .success(outcome)
        }
        return try result.get()
    }
}
