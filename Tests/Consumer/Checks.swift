import SubscriptionClient
import SubscriptionNotifications
import SubscriptionWire
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The subd that docs/SWIFT.md's blocks talk to: they write `"127.0.0.1:7827"` (where `make run` listens), which
/// scripts/consumer-test.sh replaces by this name.
let docServer = CommandLine.arguments.count == 4 ? CommandLine.arguments[3] : "127.0.0.1:7827"

/// Prints `message` on stderr and exits with status 1.
func fail(_ message: String) -> Never {
    var line = "consumer: FAILED: \(message)\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
    exit(1)
}

/// Fails with `message` unless `condition` holds.
func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fail(message()) }
}

/// What a closure observer received (a class: a `Mutex` cannot be captured by an escaping closure).
final class Received: Sendable {
    let notes = Mutex<[NotificationHub.Notification]>([])
}

/// Info pairs as the checks send them: two keys, one value percent-encoded (it has a space).
let checkInfo = [InfoPair(key: "color", value: "red"), InfoPair(key: "note", value: InfoPair.percentEncoded("a b"))]

/// NotificationHub in process: a closure observer of a wildcard pattern gets a post with its sender, info pairs and
/// text; the post counts it; once its token is cancelled it is neither called nor counted.
func checkHub() throws {
    let hub = NotificationHub()
    expect(try hub.create("CONSUMER.hub"), "CONSUMER.hub existed in a new hub")
    let received = Received()
    let token = try hub.addObserver(for: "CONSUMER.>") { note in received.notes.withLock { $0.append(note) } }
    let observers = try hub.post("CONSUMER.hub", from: "tester", info: checkInfo, text: "hello")
    expect(observers == 1, "post returned \(observers) observers, not 1")
    let notes = received.notes.withLock { $0 }
    expect(notes.count == 1, "the observer got \(notes.count) notifications, not 1: \(notes)")
    let note = notes[0]
    expect(note.number == "CONSUMER.hub", "number \(note.number)")
    expect(note.from == "tester", "from \(note.from ?? "nil")")
    expect(note.text == "hello", "text \(note.text ?? "nil")")
    expect(note.infoPairs == checkInfo, "info pairs \(note.infoPairs)")
    expect(note.info["note"].flatMap(InfoPair.percentDecoded) == "a b", "info \(note.info)")
    token.cancel()
    let after = try hub.post("CONSUMER.hub", text: "after")
    expect(after == 0, "a post after cancel() reached \(after) observers")
    expect(received.notes.withLock { $0.count } == 1, "the observer was called after cancel()")
    print("consumer: NotificationHub: posted and observed in process")
}

/// SubscriptionClient against the subd at `address`: a listener subscribed to a pattern gets what a publisher
/// publishes (payload, sender, info pairs), and `publish` counts it as the one receiver.
func checkNetwork(_ address: String) async throws {
    let server = try Endpoint(parsing: address, for: .connecting)
    let listener = try await SubscriptionClient.connect(to: server, name: "listener")
    let publisher = try await SubscriptionClient.connect(to: server, name: "publisher")
    expect(try await publisher.create("CONSUMER.net"), "CONSUMER.net existed already on \(address)")
    let subscription = try await listener.subscribe(["CONSUMER.>"])
    let receivers = try await publisher.publish("CONSUMER.net", text: "over the wire", info: checkInfo)
    expect(receivers == 1, "publish returned \(receivers) receivers, not 1")
    var events = subscription.makeAsyncIterator()
    guard case .message(let message)? = try await events.next() else { fail("the subscription ended") }
    expect(message.number == "CONSUMER.net", "number \(message.number)")
    expect(message.payload == Array("over the wire".utf8), "payload \(message.payload)")
    expect(message.from == "publisher", "from \(message.from ?? "nil")")
    expect(message.infoPairs == checkInfo, "info pairs \(message.infoPairs)")
    let told = try await publisher.remove("CONSUMER.net")
    expect(told == 0, "REMOVE told \(told) exact subscribers (the listener's pattern is a wildcard)")
    await listener.close()
    await publisher.close()
    print("consumer: SubscriptionClient: published to and listened on subd at \(address)")
}
