import SubscriptionWire

/// The topics one MQTT client published to lately whose numbers are plain and exist, each checked, mapped and looked
/// up once: a QoS 0 PUBLISH to one of them again costs a hash and a byte compare (``Server/mqttTakeSimplePublish``),
/// as the line protocol's `NumberCache` spares a repeated `PUB` its checks. Emptied whenever a number is removed
/// anywhere (``SubscriptionCenter/removals`` changed), so a number it names always exists. A slot holds one topic; a
/// topic whose ``probes`` slots are taken replaces the first, so the table never grows.
struct MQTTTopicCache {
    /// Slots in the table.
    static let capacity = 256
    /// Slots a topic may take, from the one its hash picks.
    static let probes = 8

    private struct Slot {
        var hash = 0
        var topic: [UInt8] = []
        /// The topic as a string: what a delivery to `number` is sent under (the topic map is one-to-one).
        var name = ""
        var number = ""
    }

    /// A topic found: its number, and its name (the topic a PUBLISH to the number's MQTT subscribers carries).
    struct Hit {
        var number: String
        var topic: String
    }

    private var slots: [Slot] = []
    /// The center's removals when the entries were made.
    private var removals: UInt64 = 0

    /// The number of the topic whose name is `topic`'s bytes, nil when it is not here (or a number was removed
    /// since: the cache starts again).
    mutating func number(of topic: ArraySlice<UInt8>, removals: UInt64) -> Hit? {
        guard !slots.isEmpty else { return nil }
        guard removals == self.removals else {
            slots = []
            return nil
        }
        let hash = topic.withUnsafeBytes { NameBytes.hash($0, seed: 0) }
        return slots.withUnsafeBufferPointer { slots in
            for step in 0..<Self.probes {
                // Read in place (a copy of the slot would retain and release its three buffers per probe).
                let index = (hash &+ step) & (Self.capacity - 1)
                guard slots[index].hash == hash, slots[index].topic.count == topic.count else { continue }
                let same = slots[index].topic.withUnsafeBytes { cached in
                    topic.withUnsafeBytes { NameBytes.equal(cached, $0) }
                }
                if same { return Hit(number: slots[index].number, topic: slots[index].name) }
            }
            return nil
        }
    }

    /// Remembers that `topic` is the plain, existing number `number`, as of the center's `removals`.
    mutating func insert(_ topic: String, number: String, removals: UInt64) {
        if slots.isEmpty || removals != self.removals {
            slots = [Slot](repeating: Slot(), count: Self.capacity)
            self.removals = removals
        }
        let bytes = Array(topic.utf8)
        let hash = bytes.withUnsafeBytes { NameBytes.hash($0, seed: 0) }
        var free = hash & (Self.capacity - 1)
        for step in 0..<Self.probes where slots[(hash &+ step) & (Self.capacity - 1)].topic.isEmpty {
            free = (hash &+ step) & (Self.capacity - 1)
            break
        }
        slots[free] = Slot(hash: hash, topic: bytes, name: topic, number: number)
    }
}
