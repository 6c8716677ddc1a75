import DequeModule
import SubscriptionMQTT
import SubscriptionProtocol

/// The MQTT front of one connection (docs/PROTOCOL.md, "MQTT"): what a ``Session`` carrying MQTT keeps besides the
/// connection itself. Its decoder reads the packets; `Server+MQTT.swift` handles them, turning publications and
/// subscriptions into the line protocol's commands, which run through the same policy, handlers and environments
/// (so users' rights, saved state, `$SYS.` and the cluster apply as they do to a line client); each command's reply
/// comes back in order through the session's replies (``Session/queue(_:)``) and is turned into the MQTT
/// acknowledgement its ``Expectation`` says.
///
/// Confined to the loop's queue (`@unchecked Sendable`). **Exclusivity.** Its `#if !DEBUG @exclusivity(unchecked)`
/// properties keep the invariant stated on ``EventLoop`` (touched only on the loop's queue, never through two
/// overlapping accesses); debug builds check it.
final class MQTTConnection: @unchecked Sendable {
    /// Where the connection is.
    enum Phase: Equatable {
        /// Nothing but a CONNECT may come.
        case awaitingConnect
        /// A CONNECT is being checked (a user's secret, off the loop); nothing more is read meanwhile.
        case connecting
        /// CONNACK sent: the client is bound to its session.
        case connected
        /// A DISCONNECT came, or the server is closing the connection: nothing more is handled.
        case ended
    }

    /// What a command's reply (or a response's turn) becomes, in the order the commands ran.
    enum Expectation {
        /// Nothing to send (a QoS 0 publication, a create before a publication or a subscription).
        case nothing
        /// A QoS 1 publication's PUBACK.
        case puback(UInt16)
        /// A QoS 2 publication's PUBREC (the identifier is then held until its PUBREL).
        case pubrec(UInt16)
        /// One filter of a SUBSCRIBE: its reason code is made from the reply (the granted QoS, or the refusal, which
        /// `undo` takes back from the session); `last`: the SUBACK goes out with it. Indirect: its payload is far
        /// larger than the others', and every publication's expectation is copied in and out (a large enum is
        /// copied with memcpy, which was 5% of an MQTT fan-out's profile).
        indirect case subscribe(index: Int, qos: MQTTQoS, last: Bool, undo: SubscribeUndo?)
        /// A create a filter or a publication needed: a refusal is remembered for the command after it.
        case create
        /// These bytes, as they are (a PINGRESP, a PUBCOMP, an UNSUBACK): in order with the replies.
        case bytes([UInt8])
    }

    /// What a refused `SUB` of a filter takes back: the filter's subscription as it was before (nil: none), and the
    /// plain customer's patterns it had begun to hold.
    struct SubscribeUndo {
        var key: MQTTSubscriptionKey
        var previous: MQTTSubscription?
        var newlyHeld: [String]
    }

    /// A command waiting to run: what runs, for which customer, with what MQTT part for the publication it makes,
    /// and (a `SUB`) whether the retained values it pushes are sent.
    struct PendingCommand {
        var command: Command
        var customer: MQTTCustomer
        var message: MQTTMessage? = nil
        var sendsRetained = true
    }

    /// The SUBSCRIBE whose filters are running: its identifier, each filter's reason code so far, and whether the
    /// retained values its subscriptions push are sent.
    struct Subscribing {
        var packetID: UInt16
        var reasonCodes: [UInt8]
        /// The reason string of the first refusal (5.0, when the client asked for problem information).
        var reason: String?
        /// False for a filter whose retain handling says not to send them (2, or 1 with the subscription there).
        var sendsRetained: Bool
    }

    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var decoder: MQTTDecoder
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var phase = Phase.awaitingConnect
    /// The version of the CONNECT (3.1.1 until one came).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var version = MQTTVersion.v311
    /// The keepalive in force, in seconds (0: none).
    var keepAlive: UInt16 = 0
    /// The client's session once connected.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var client: MQTTClientSession?
    /// The will of this connection, until a DISCONNECT discards it.
    var will: MQTTWill?
    /// Topic aliases the client set (5.0): alias to topic.
    var topicAliases: [UInt16: String] = [:]
    /// True when a 5.0 client takes reason strings and user properties in acknowledgements (Request Problem
    /// Information, 1 by default).
    var sendsProblemInformation = true
    /// The expectation of the command running now, when none waited before it (a publication's, the usual case): its
    /// reply, which comes during the run, takes it without a trip through ``expectations``; one still here after the
    /// run (its reply comes later) goes to the back of ``expectations``.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var directExpectation: Expectation?
    /// The replies awaited, in command order.
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var expectations = Deque<Expectation>()
    /// Commands of a packet not run yet (a packet that needs several runs them one at a time, so that one that must
    /// wait stops the ones behind it).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var pendingCommands = Deque<PendingCommand>()
    /// The SUBSCRIBE being answered.
    var subscribing: Subscribing?
    /// Retained values pushed by the SUBSCRIBE being answered, sent after its SUBACK.
    var retainedAfterSuback: [(Publication, MQTTDelivery)] = []
    /// A refusal of the create run before the current command (its reason, if the command fails for want of the
    /// number).
    var createRefusal: ProtocolError?
    /// QoS 1 and 2 publications of the client not acknowledged yet (its Receive Maximum towards subd).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var inboundUnacknowledged = 0
    /// The last topic published, its number, and the center's ``SubscriptionCenter/removals`` when the number was
    /// known to exist (a publisher repeats its topic: one map and one look-up per change, or per number removed).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var lastTopic: (topic: String, number: String, removals: UInt64)?
    /// The topics of the QoS 0 publications without flags or properties to plain numbers this client made lately:
    /// the next such publication to one of them takes the decoder's one-pass path (``MQTTDecoder/peekSimplePublish()``,
    /// `Server.mqttTakeSimplePublish`).
    #if !DEBUG
        @exclusivity(unchecked)
    #endif
    var simpleTopics = MQTTTopicCache()
    /// True once ``simpleTopics`` holds a topic.
    var hasSimpleTopics = false
    /// True while a step that sends the session's waiting messages is scheduled (``Server/mqttOutputDrained(_:)``).
    var isSendingQueued = false
    /// True once the connection ended as the client asked (DISCONNECT with 0x00): its will is not published.
    var willDiscarded = false

    init(maximumPacketSize: Int) {
        decoder = MQTTDecoder(maximumPacketSize: maximumPacketSize)
    }

    /// The next expectation, for a reply that came; `.nothing` when none waits (a reply no packet asked for).
    func takeExpectation() -> Expectation {
        if let direct = directExpectation {
            directExpectation = nil
            return direct
        }
        return expectations.popFirst() ?? .nothing
    }
}
