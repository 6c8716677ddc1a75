import Foundation

/// Bytes of messages handed to one ``Subscription``'s stream and not yet taken by its consumer.
///
/// The connection adds as it delivers, the consumer's iterator subtracts as it takes; when a consumer falls far
/// behind, the connection stops reading the socket, so the backlog piles up at the server (which cuts a
/// subscriber past its `max_pending`) instead of growing this process without bound.
final class Backlog: @unchecked Sendable {
    /// Above this many bytes the connection stops reading.
    static let pauseAbove = 8 << 20
    /// Below this many bytes it reads again.
    static let resumeBelow = 2 << 20

    /// What one message counts for: its payload, its info pairs and a little for its bookkeeping.
    static func weight(of message: ReceivedMessage) -> Int {
        message.infoPairs.reduce(message.payload.count + 64) { $0 + $1.key.utf8.count + $1.value.utf8.count + 32 }
    }

    private let lock = NSLock()
    private var bytes = 0

    /// The bytes waiting now.
    var current: Int { lock.withLock { bytes } }

    /// Adds a delivered message; returns the new total.
    @discardableResult
    func add(_ weight: Int) -> Int {
        lock.withLock {
            bytes += weight
            return bytes
        }
    }

    /// Removes a taken message; returns true when this crossed below ``resumeBelow``.
    func remove(_ weight: Int) -> Bool {
        lock.withLock {
            let before = bytes
            bytes -= weight
            return before >= Self.resumeBelow && bytes < Self.resumeBelow
        }
    }
}
