/// How long a ``ReconnectingClient`` waits between attempts to connect: doubling from ``initial`` up to ``cap``, with
/// a random part (jitter) so that many clients that lost one server do not all come back at the same instant.
///
/// The wait after the n-th failure in a row (n from 1) is `min(cap, initial * 2^(n-1))`, less a random share of it of
/// at most ``jitter``: with `jitter` 0.5 it lies between half and all of it; with 0 it is exact.
///
/// ```swift
/// var backoff = Backoff(initial: .milliseconds(100), cap: .seconds(5), jitter: 0.5)
/// var random = SystemRandomNumberGenerator()
/// backoff.delay(afterFailures: 3, using: &random)   // between 200 and 400 ms
/// ```
public struct Backoff: Sendable, Equatable {
    /// The wait after the first failure (before jitter).
    public var initial: Duration
    /// The longest wait (before jitter).
    public var cap: Duration
    /// The largest share of a wait taken off at random, from 0 (none) to 1 (anything from 0 to the whole wait).
    public var jitter: Double

    /// A backoff from `initial` to `cap`, with `jitter` (clamped to 0...1).
    public init(initial: Duration = .milliseconds(100), cap: Duration = .seconds(5), jitter: Double = 0.5) {
        self.initial = max(initial, .zero)
        self.cap = max(cap, self.initial)
        self.jitter = min(max(jitter, 0), 1)
    }

    /// The wait after `failures` failed attempts in a row (zero for none).
    public func delay(afterFailures failures: Int, using random: inout some RandomNumberGenerator) -> Duration {
        guard failures > 0 else { return .zero }
        var base = initial
        for _ in 1..<min(failures, 63) where base < cap { base = base * 2 }
        base = min(base, cap)
        guard jitter > 0 else { return base }
        return base * (1 - jitter * Double.random(in: 0..<1, using: &random))
    }
}
