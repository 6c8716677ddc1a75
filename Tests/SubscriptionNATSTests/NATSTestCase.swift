import Dispatch
import Foundation
import Logging
import TestSupport
import XCTest

@testable import SubscriptionNATS

/// A test case with real nats-server processes and clients of ours: everything it starts is stopped in its
/// tear-down, and its directory removed, also when the test fails.
class NATSTestCase: XCTestCase {
    private(set) var directory = ""
    private var servers: [NATSServerProcess] = []
    private var clients: [NATSClient] = []

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard NATSServerProcess.binary() != nil else { throw XCTSkip(NATSServerProcess.notInstalled) }
        directory = NSTemporaryDirectory() + "subd-nats-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    override func tearDown() {
        for client in clients { client.queue.sync { client.close() } }
        clients = []
        for server in servers { server.kill() }
        servers = []
        if !directory.isEmpty { try? FileManager.default.removeItem(atPath: directory) }
        super.tearDown()
    }

    /// Starts a server and keeps it for the tear-down.
    func startServer(_ configuration: NATSServerProcess.Configuration = .init()) throws -> NATSServerProcess {
        let server = try NATSServerProcess(configuration, directory: directory)
        servers.append(server)
        return server
    }

    /// Starts three servers clustered with JetStream and monitoring
    /// (``NATSServerProcess/startCluster(count:directory:keep:)``), kept for the tear-down.
    func startJetStreamCluster() throws -> [NATSServerProcess] {
        try NATSServerProcess.startCluster(directory: directory) { servers.append($0) }
    }

    /// A client of ours, on its own serial queue (the way subd's loop queue would be passed in), with its status
    /// changes and errors collected; connecting to `servers`.
    func makeClient(
        _ servers: [String], options: NATSClientOptions = NATSClientOptions(), label: String = "client"
    ) throws -> TestClient {
        let queue = DispatchQueue(label: "nats-test.\(label)")
        // Quiet: the tests check the statuses and errors the client reports, not its log lines.
        let client = NATSClient(
            queue: queue, logger: Logger(label: "nats-test", factory: { _ in SwiftLogNoOpLogHandler() }))
        clients.append(client)
        let test = TestClient(client: client)
        let addresses = try servers.map { try NATSServerAddress(parsing: $0) }
        try queue.sync {
            client.onStatusChange = { [statuses = test.statuses] in statuses.append($0) }
            client.onError = { [errors = test.errors] in errors.append($0) }
            try client.connect(servers: addresses, options: options)
        }
        return test
    }

    /// ``makeClient(_:options:label:)``, then waits until it is connected.
    func connectedClient(
        _ servers: [String], options: NATSClientOptions = NATSClientOptions(), label: String = "client",
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> TestClient {
        let test = try makeClient(servers, options: options, label: label)
        guard test.statuses.wait(for: { if case .connected = $0 { return true } else { return false } }) != nil else {
            throw HarnessFailure("\(label) did not connect: statuses \(test.statuses.all), errors \(test.errors.all)")
        }
        return test
    }
}

/// A client under test and what it reported.
struct TestClient: Sendable {
    let client: NATSClient
    let statuses = Collector<NATSStatus>()
    let errors = Collector<NATSError>()

    /// Runs `body` on the client's queue.
    func sync<T>(_ body: (NATSClient) throws -> T) rethrows -> T {
        try client.queue.sync { try body(client) }
    }

    /// Subscribes, collecting the messages.
    func subscribe(_ subject: String, queue group: String? = nil) throws -> (
        sid: UInt64, messages: Collector<NATSMessage>
    ) {
        let messages = Collector<NATSMessage>()
        let sid = try sync { try $0.subscribe(subject: subject, queue: group) { messages.append($0) } }
        return (sid, messages)
    }

    /// Publishes text.
    func publish(_ subject: String, _ text: String, headers: NATSHeaders? = nil) throws {
        try sync { try $0.publish(subject: subject, headers: headers, payload: Array(text.utf8)) }
    }

    /// Flushes and waits for the PONG: everything sent before is at the server.
    func flush(file: StaticString = #filePath, line: UInt = #line) {
        let done = Collector<Result<Void, NATSError>>()
        sync { $0.flush { done.append($0) } }
        guard let result = done.wait(count: 1)?.first else {
            return XCTFail("flush: no answer", file: file, line: line)
        }
        if case .failure(let error) = result { XCTFail("flush: \(error)", file: file, line: line) }
    }
}

/// Items appended from any thread, waited for by a test.
final class Collector<T: Sendable>: @unchecked Sendable {
    // @unchecked: every access to `items` holds `condition`.
    private let condition = NSCondition()
    private var items: [T] = []

    func append(_ item: T) {
        condition.lock()
        items.append(item)
        condition.broadcast()
        condition.unlock()
    }

    /// Everything so far.
    var all: [T] {
        condition.lock()
        defer { condition.unlock() }
        return items
    }

    /// Waits until at least `count` items came (nil after `timeout` seconds); returns all of them.
    func wait(count: Int, timeout: TimeInterval = 10) -> [T]? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while items.count < count {
            guard condition.wait(until: deadline) else { return nil }
        }
        return items
    }

    /// Waits until an item matching `predicate` came (nil after `timeout` seconds); returns it. Items before it
    /// are kept (see ``removeAll()``).
    func wait(for predicate: (T) -> Bool, timeout: TimeInterval = 10) -> T? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let found = items.first(where: predicate) { return found }
            guard condition.wait(until: deadline) else { return nil }
        }
    }

    /// Waits until everything so far satisfies `predicate` (false after `timeout` seconds).
    func wait(untilAll predicate: ([T]) -> Bool, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(items) {
            guard condition.wait(until: deadline) else { return false }
        }
        return true
    }

    /// Forgets what came so far.
    func removeAll() {
        condition.lock()
        items.removeAll()
        condition.unlock()
    }
}

/// The payload of a message as text.
func text(_ message: NATSMessage) -> String { String(decoding: message.payload, as: UTF8.self) }

/// True for a ``NATSStatus/connected(server:info:)``.
func isConnected(_ status: NATSStatus) -> Bool {
    if case .connected = status { return true }
    return false
}
