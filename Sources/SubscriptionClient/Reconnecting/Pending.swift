import Dispatch

/// What one caller of a ``ReconnectingClient`` waits for (a reply, a subscription): given exactly once, by whichever
/// comes first of the answer, the request timeout, or the client giving up on the command (closed, buffer refused).
final class Pending<Value: Sendable>: Sendable {
    typealias Outcome = Result<Value, ClientError>

    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        var outcome: Outcome?
        var timer: DispatchWorkItem?
    }

    private let state = Guarded(State())

    init() {}

    /// Waits for the outcome. `start` runs first (it hands the command on, and may give the outcome at once); when
    /// `timeout` passes after it without an outcome, `timedOut` runs and the outcome is
    /// ``ClientError/timeout(verb:after:)``.
    func wait(
        verb: String, timeout: Duration?, timedOut: @escaping @Sendable () -> Void, start: () -> Void
    ) async -> Outcome {
        await withCheckedContinuation { continuation in
            let early: Outcome? = state.withLock { state in
                if let outcome = state.outcome { return outcome }
                state.continuation = continuation
                return nil
            }
            if let early {
                continuation.resume(returning: early)
                return
            }
            start()
            guard let timeout else { return }
            let timer = DispatchWorkItem { [self] in
                timedOut()
                finish(.failure(.timeout(verb: verb, after: timeout)))
            }
            let armed = state.withLock { state in
                guard state.outcome == nil else { return false }
                state.timer = timer
                return true
            }
            if armed {
                DispatchQueue.global().asyncAfter(
                    deadline: .now() + SubscriptionClient.interval(timeout), execute: timer)
            }
        }
    }

    /// Gives the outcome; later ones are ignored (a reply that comes after the timeout).
    func finish(_ outcome: Outcome) {
        let (continuation, timer) = state.withLock {
            state -> (CheckedContinuation<Outcome, Never>?, DispatchWorkItem?) in
            guard state.outcome == nil else { return (nil, nil) }
            state.outcome = outcome
            defer {
                state.continuation = nil
                state.timer = nil
            }
            return (state.continuation, state.timer)
        }
        timer?.cancel()
        continuation?.resume(returning: outcome)
    }
}
