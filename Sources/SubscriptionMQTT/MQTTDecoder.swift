import SubscriptionWire

/// Turns the bytes a peer sends into ``MQTTPacket`` values, MQTT 3.1.1 or 5.0, refusing every malformed packet
/// with its reason code (``MQTTDecodeError``). A plain value: no sockets, no clock; the owner feeds it and acts on
/// its packets.
///
/// Feed it bytes with ``append(_:)`` or ``withWritableTail(minimumCapacity:_:)``, then call ``next()`` until it
/// returns nil. Whatever way the bytes are cut into appends, the packets (and the failure) are the same.
///
/// The first packet is read with the version its CONNECT names, and sets ``version``; every later packet is read
/// with it. Until a version is known (a test client that reads a server's packets sets ``version`` itself and
/// ``expectsConnectFirst`` to false) packets are read as 3.1.1.
///
/// When the checks are made: the fixed header's (packet type, reserved flags, the order of CONNECT) on its first
/// byte; the remaining length's as soon as its bytes are here, so a packet larger than ``maximumPacketSize`` is
/// refused without waiting for its body, and so is a length the packet type cannot have (a PINGREQ with a body);
/// everything else once the whole packet is here. A remaining length in more bytes than needed is accepted, as most
/// servers do.
///
/// What it enforces, besides each packet's layout (a field running past the end of the packet, or bytes left over
/// after the last one, is malformed):
/// - fixed header: type 0, AUTH in 3.1.1, reserved flags other than the specification's, PUBLISH with QoS 3 or with
///   DUP at QoS 0 are malformed; with ``expectsConnectFirst``, a first packet that is not CONNECT, or a second
///   CONNECT, is a protocol error;
/// - CONNECT: protocol `MQTT` at level 4 or 5 (another level, or `MQIsdp`, sets
///   ``MQTTDecodeError/unsupportedLevel``); connect flags (reserved bit 0; will QoS and retain without a will; will
///   QoS 3; in 3.1.1 a password without a user name); the will topic a topic name;
/// - strings well-formed UTF-8 without U+0000;
/// - 5.0 properties: each only in the packets the specification lists (a protocol error elsewhere), at most once
///   unless it may repeat, values in range (a protocol error), an unknown identifier malformed;
/// - PUBLISH: a topic name without `+` or `#` (0x90), empty only with a topic alias in 5.0; a packet identifier,
///   not 0, exactly at QoS 1 and 2; no subscription identifier in a client's PUBLISH;
/// - packet identifiers not 0 (a protocol error); SUBSCRIBE and UNSUBSCRIBE with at least one filter, each a valid
///   filter (0x8F), shared subscriptions `$share/<name>/<filter>` included; subscription options' reserved bits
///   and values.
///
/// After a failure the decoder is finished: ``next()`` returns nil and appended bytes are dropped.
///
/// Memory: a packet is held until it is whole, so when the owner drains ``next()`` until nil before each append, the
/// decoder holds fewer than ``maximumPacketSize`` bytes plus what that append adds. A PUBLISH's payload is a slice
/// of the decoder's buffer, not a copy: valid until the next append (copy it to keep it without pinning the buffer).
public struct MQTTDecoder {
    /// The most bytes a whole packet (fixed header included) may take; a longer one is refused with
    /// ``MQTTReasonCode/packetTooLarge`` as soon as its remaining length is read. Settable at any time; it applies to
    /// every packet not yet whole.
    public var maximumPacketSize: Int

    /// The version every packet after CONNECT is read with: nil until a CONNECT was decoded (the decoder sets it from
    /// that CONNECT; the owner may also set it, e.g. a test client decoding a server's packets).
    public var version: MQTTVersion?

    /// True (the default) when the first packet must be CONNECT and no other may be: the server's side, reading a
    /// client's packets (which also forbids a subscription identifier in PUBLISH). A test client reading a server's
    /// packets sets it to false.
    public var expectsConnectFirst = true
    /// The topic name of the last PUBLISH with one, as bytes and as the string made of them (checked): the next
    /// PUBLISH to the same topic reuses it.
    var lastTopic: (bytes: [UInt8], text: String)?

    /// The bytes received and not yet consumed by ``next()``.
    var input = InputBuffer()
    /// True once a CONNECT was decoded.
    var connectSeen = false
    /// True once a failure ended the stream.
    public private(set) var isFinished = false

    /// An empty decoder that accepts packets of at most `maximumPacketSize` bytes.
    public init(maximumPacketSize: Int) {
        self.maximumPacketSize = maximumPacketSize
    }

    /// The bytes held and not yet consumed by ``next()``: more than 0 means a packet is not finished.
    public var bufferedByteCount: Int { input.count }

    /// The bytes of storage the decoder holds (at least ``bufferedByteCount``), for memory accounting.
    public var bufferCapacity: Int { input.capacity }

    /// The version packets are read with now: ``version``, or 3.1.1 until one is known.
    var currentVersion: MQTTVersion { version ?? .v311 }

    /// Appends bytes received from the peer. Dropped once the decoder is finished.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if !isFinished { input.append(bytes) }
    }

    /// Lets the caller read(2) (or `SSL_read`) straight into the decoder's buffer: at least `minimumCapacity` free
    /// bytes at the tail, `body` called with them, the count it returns kept (0...space.count); once the decoder is
    /// finished, read and dropped. Returns `body`'s count. If `body` throws, nothing is kept.
    @discardableResult
    public mutating func withWritableTail(
        minimumCapacity: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        try input.withWritableTail(minimumCapacity: minimumCapacity, commit: !isFinished, body)
    }

    /// Frees the storage when the decoder holds no bytes (an idle connection keeps no read buffer).
    public mutating func releaseStorageIfEmpty() {
        input.releaseStorageIfEmpty()
    }

    /// The next whole packet, a failure, or nil when more bytes are needed. After a failure the decoder is finished
    /// (next() returns nil, appends are dropped).
    public mutating func next() -> Result<MQTTPacket, MQTTDecodeError>? {
        guard !isFinished else { return nil }
        let header: MQTTFixedHeader
        switch takeFixedHeader() {
        case .needMore: return nil
        case .failure(let error): return .failure(fail(error))
        case .header(let found): header = found
        }
        guard input.count >= header.packetCount else { return nil }
        let start = input.readIndex + header.headerCount
        var reader = MQTTReader(bytes: input.bytes, start: start, end: input.readIndex + header.packetCount)
        do {
            let packet = try decodeBody(header, &reader)
            input.readIndex += header.packetCount
            return .success(packet)
        } catch {
            return .failure(fail(error))
        }
    }

    /// Reads the body of a whole packet whose fixed header is `header`.
    private mutating func decodeBody(
        _ header: MQTTFixedHeader, _ reader: inout MQTTReader
    ) throws(MQTTDecodeError) -> MQTTPacket {
        switch header.type {
        case .connect:
            let connect = try reader.connect()
            connectSeen = true
            version = connect.version
            return .connect(connect)
        case .connack: return .connack(try reader.connAck(version: currentVersion))
        case .publish:
            return .publish(
                try reader.publish(
                    flags: header.flags, version: currentVersion, fromClient: expectsConnectFirst,
                    lastTopic: &lastTopic))
        case .puback: return .puback(try reader.ack(.puback, version: currentVersion))
        case .pubrec: return .pubrec(try reader.ack(.pubrec, version: currentVersion))
        case .pubrel: return .pubrel(try reader.ack(.pubrel, version: currentVersion))
        case .pubcomp: return .pubcomp(try reader.ack(.pubcomp, version: currentVersion))
        case .subscribe: return .subscribe(try reader.subscribe(version: currentVersion))
        case .suback: return .suback(try reader.subAck(version: currentVersion))
        case .unsubscribe: return .unsubscribe(try reader.unsubscribe(version: currentVersion))
        case .unsuback: return .unsuback(try reader.unsubAck(version: currentVersion))
        case .pingreq: return .pingreq
        case .pingresp: return .pingresp
        case .disconnect: return .disconnect(try reader.disconnect(version: currentVersion))
        case .auth: return .auth(try reader.auth())
        }
    }

    /// Ends the stream with `error`: drops every buffered byte and returns the error.
    mutating func fail(_ error: MQTTDecodeError) -> MQTTDecodeError {
        isFinished = true
        input.readIndex = 0
        input.writeIndex = 0
        return error
    }
}
