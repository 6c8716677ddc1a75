import Foundation
import SubscriptionClient
import XCTest

/// Gathers what an `AsyncSequence` of the client library yields, on a task of its own, so a test can wait for the
/// first n elements with a deadline (and see the error or end that came after them).
final class Collector<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var elements: [Element] = []
    private var end: Result<Void, any Error>?
    private var task: Task<Void, Never>?

    init<Sequence: AsyncSequence & Sendable>(_ sequence: Sequence) where Sequence.Element == Element {
        task = Task { [self] in
            do {
                for try await element in sequence { lock.withLock { elements.append(element) } }
                lock.withLock { end = .success(()) }
            } catch {
                lock.withLock { end = .failure(error) }
            }
        }
    }

    /// What came so far.
    var received: [Element] { lock.withLock { elements } }
    /// How the sequence ended, once it did.
    var ending: Result<Void, any Error>? { lock.withLock { end } }

    /// Waits until `count` elements came (fails the test after `timeout` seconds) and returns them all.
    @discardableResult
    func wait(
        for count: Int, timeout: TimeInterval = 10, file: StaticString = #filePath, line: UInt = #line
    ) async throws -> [Element] {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while received.count < count {
            if Date() > deadline {
                XCTFail(
                    "\(count) elements not within \(timeout) s; got \(received), end \(String(describing: ending))",
                    file: file, line: line)
                throw HarnessError.process("collector timed out")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        return received
    }

    /// Waits until an element matches `predicate`; returns it.
    @discardableResult
    func wait(
        until what: String, timeout: TimeInterval = 10, file: StaticString = #filePath, line: UInt = #line,
        _ predicate: (Element) -> Bool
    ) async throws -> Element {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let found = received.first(where: predicate) { return found }
            if Date() > deadline {
                XCTFail("not within \(timeout) s: \(what); got \(received)", file: file, line: line)
                throw HarnessError.process("collector timed out")
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Stops gathering.
    func cancel() {
        task?.cancel()
    }
}

extension IntegrationTestCase {
    /// The library's address of `daemon`'s TCP port.
    func endpoint(_ daemon: Daemon) -> Endpoint {
        .tcp(host: "127.0.0.1", port: Int(daemon.port))
    }

    /// Quick backoff and timeouts, so the reconnect tests take a second or two.
    var quickOptions: ReconnectingClient.Options {
        ReconnectingClient.Options(
            connectTimeout: .seconds(2), requestTimeout: .seconds(5),
            backoff: Backoff(initial: .milliseconds(50), cap: .milliseconds(400), jitter: 0.5))
    }
}
