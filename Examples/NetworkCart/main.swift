import SubscriptionClient
import SubscriptionWire  // InfoPair, Endpoint(parsing:for:)

// Where `make run` listens; a second argument, a second server, and so on (tried in turn when one is down).
let addresses = CommandLine.arguments.count > 1 ? Array(CommandLine.arguments.dropFirst()) : ["127.0.0.1:7827"]
let servers = try addresses.map { try Endpoint(parsing: $0, for: .connecting) }
let client = try await ReconnectingClient.connect(to: servers, name: "cart")
try await client.create("CART.changes")
try await client.create("CART.count", retained: true)

// Observations and watches go on across reconnections; a watch reports the revisions it missed while away.
let changes = try await client.observe("CART.>")
let counts = try await client.watch("CART.count")

try await client.post("CART.changes", text: "plus")  // returns 1: this client's own observation
try await client.post("CART.count", info: [InfoPair(key: "unit", value: "items")], text: "1")
print(try await client.value(of: "CART.count")?.revision ?? 0)  // 1

for try await note in changes.prefix(2) { print(note.number, note.from ?? "-", note.text ?? "", note.info) }
for try await change in counts.prefix(1) { print(change.old?.text ?? "(none)", "->", change.new.text ?? "") }

try await client.remove("CART.changes")
try await client.remove("CART.count")
do throws(ClientError) {
    try await client.remove("CART.count")
} catch .notFound {
    print("CART.count is gone")
} catch {
    print("refused:", error)  // every case is typed: .denied, .timeout, .outboundBufferFull, .connectionLost, ...
}
await client.close()
