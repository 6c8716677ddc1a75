import SubscriptionWire

/// Where the parts of a ``Publication`` lie in its frame.
public struct PublicationLayout: Sendable {
    /// Bytes of the whole `MSG` frame.
    var frameCount: Int
    /// The memory the publication holds (frame, header and object), charged to every queue it waits in.
    var heldBytes: Int
    /// Bytes of the number, which starts right after `MSG `.
    var numberCount: Int
    /// Where the sender's name starts (after `from=`), and its bytes; 0 and 0 without a sender.
    var senderOffset: Int
    var senderCount: Int
    /// Where the info pairs start (the first key) and the bytes up to the end of the last value; 0 and 0 without.
    var infoOffset: Int
    var infoCount: Int
    /// The info pairs given.
    var infoPairCount: Int
    /// The revision of a retained number's publication (`rev=`); 0 for a plain number's.
    var revision: UInt64
    /// Where the payload starts, and its bytes.
    var payloadOffset: Int
    var payloadCount: Int
    /// How many output-queue entries refer to the publication (``Publication/queueReferences``).
    @usableFromInline var queueReferences = 0
    /// What another front attached (``Publication/attachment``): a retained reference's bits, 0 for none. Bits, not
    /// a reference, so that the layout stays a plain value whose copies cost no reference counting.
    var attachmentBits: UInt = 0
}

/// One message sent to a number (the notification: its name, its object, its `userInfo` and its payload), as the center
/// fans it out.
///
/// The `MSG` push is encoded once, when the publication is made, into the publication's own single allocation: `MSG
/// <number> <nbytes>[ from=<sender>][ rev=<revision>][ group=<group>][ <key>=<value>...]` LF, payload, LF. Every socket
/// receiver queues a reference to these same bytes (redis shared objects, mosquitto's message store), and a receiver
/// that is not a socket (a test, a bridge, the daemon itself) reads the parts through ``number``, ``sender``, ``info``
/// and ``withPayload(_:)`` without parsing anything. Immutable once made, but for the output queues' count of their
/// references (``queueReferences``). (Not `Sendable`: `ManagedBuffer` is not, and
/// the daemon shares a publication only on its one queue.)
///
/// ```swift let publication = Publication.make(number: "SCIENCE", sender: "lab", info: [InfoPair(key: "unit", value:
/// "EUR")],
///                                    payload: Array("12".utf8))
/// publication.number        // "SCIENCE" publication.info          // [unit=EUR] ```
public final class Publication: ManagedBuffer<PublicationLayout, UInt8> {
    /// What a publication costs beyond its frame bytes: the object header, the layout and the allocator's header.
    public static let overhead = 120

    /// Makes a publication, encoding its frame. The number must be a valid number, the sender a valid client name
    /// and the pairs valid (``InfoPair/check(_:)``): the parser has checked them for the wire.
    public static func make(
        number: String, sender: String?, revision: UInt64? = nil, group: String? = nil, info: [InfoPair],
        payload: UnsafeRawBufferPointer
    ) -> Publication {
        withBytes(of: number) { numberBytes in
            Self.withOptionalBytes(of: sender) { senderBytes in
                make(
                    number: numberBytes, sender: senderBytes, revision: revision, group: group, info: info,
                    payload: payload)
            }
        }
    }

    /// This publication as delivered through a queue group: the same parts, its frame marked `group=<group>`.
    public func delivered(throughGroup group: String) -> Publication {
        withPayload {
            Publication.make(
                number: number, sender: sender, revision: revision, group: group, info: info, payload: $0)
        }
    }

    /// ``make(number:sender:revision:info:payload:)`` for a payload in an array.
    public static func make(
        number: String, sender: String? = nil, revision: UInt64? = nil, info: [InfoPair] = [], payload: [UInt8]
    ) -> Publication {
        payload.withUnsafeBytes { make(number: number, sender: sender, revision: revision, info: info, payload: $0) }
    }

    private static func make(
        number: UnsafeBufferPointer<UInt8>, sender: UnsafeBufferPointer<UInt8>?, revision: UInt64?, group: String?,
        info: [InfoPair], payload: UnsafeRawBufferPointer
    ) -> Publication {
        var size = 4 + number.count + 1 + Decimal.byteCount(payload.count) + 1 + payload.count + 1
        if let sender { size += 6 + sender.count }
        if let revision { size += 5 + Decimal.byteCount(Int(revision)) }
        if let group { size += 7 + group.utf8.count }
        for pair in info { size += 2 + pair.key.utf8.count + pair.value.utf8.count }
        let capacity = size
        let made = Publication.create(minimumCapacity: capacity) { _ in
            PublicationLayout(
                frameCount: size, heldBytes: capacity + overhead, numberCount: number.count, senderOffset: 0,
                senderCount: 0, infoOffset: 0, infoCount: 0, infoPairCount: info.count, revision: revision ?? 0,
                payloadOffset: 0, payloadCount: payload.count)
        }
        let publication = unsafeDowncast(made, to: Publication.self)
        publication.withUnsafeMutablePointers { layout, bytes in
            var writer = FrameWriter(base: UnsafeMutableRawPointer(bytes))
            writer.write("MSG ")
            writer.write(UnsafeRawBufferPointer(number))
            writer.write(byte: ASCII.space)
            writer.write(decimal: payload.count)
            if let sender {
                writer.write(" from=")
                layout.pointee.senderOffset = writer.offset
                layout.pointee.senderCount = sender.count
                writer.write(UnsafeRawBufferPointer(sender))
            }
            if let revision {
                writer.write(" rev=")
                writer.write(decimal: Int(revision))
            }
            if let group {
                writer.write(" group=")
                writer.write(group)
            }
            for (index, pair) in info.enumerated() {
                writer.write(byte: ASCII.space)
                if index == 0 { layout.pointee.infoOffset = writer.offset }
                writer.write(pair.key)
                writer.write(byte: ASCII.equals)
                writer.write(pair.value)
            }
            if !info.isEmpty { layout.pointee.infoCount = writer.offset - layout.pointee.infoOffset }
            writer.write(byte: ASCII.lf)
            layout.pointee.payloadOffset = writer.offset
            writer.write(payload)
            writer.write(byte: ASCII.lf)
            precondition(writer.offset == size, "MSG frame is \(writer.offset) bytes, expected \(size)")
        }
        return publication
    }

    /// A publication whose frame is `frame` as it is: another front's encoding of a message (an MQTT PUBLISH), made
    /// once for every subscriber of that front and queued, shared or copied into the frame log, as a `MSG` frame is.
    /// Only its frame, ``frameCount`` and ``heldBytes`` mean something: it has no number, sender, info or payload.
    public static func rendition(frame: UnsafeRawBufferPointer) -> Publication {
        let made = Publication.create(minimumCapacity: frame.count) { _ in
            PublicationLayout(
                frameCount: frame.count, heldBytes: frame.count + overhead, numberCount: 0, senderOffset: 0,
                senderCount: 0, infoOffset: 0, infoCount: 0, infoPairCount: 0, revision: 0, payloadOffset: 0,
                payloadCount: 0)
        }
        let publication = unsafeDowncast(made, to: Publication.self)
        if let source = frame.baseAddress, !frame.isEmpty {
            let bytes = source.assumingMemoryBound(to: UInt8.self)
            publication.withUnsafeMutablePointerToElements { $0.update(from: bytes, count: frame.count) }
        }
        return publication
    }

    /// Calls `body` with `text`'s UTF-8 bytes where they lie (a native or small string, on every publish: `withUTF8`,
    /// which may have to make the string contiguous first, cost about 30 ns more), or with a copy.
    static func withBytes<R>(of text: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    private static func withOptionalBytes<R>(of text: String?, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard let text else { return body(nil) }
        return withBytes(of: text) { body($0) }
    }

    // The layout is read through its pointer: the `header` property is an exclusivity-checked access, which showed
    // up in profiles at several percent of the fan-out hot path.
    private var layout: PublicationLayout { withUnsafeMutablePointerToHeader { $0.pointee } }

    private func string(_ offset: Int, _ count: Int) -> String {
        withUnsafeMutablePointerToElements {
            String(decoding: UnsafeBufferPointer(start: $0 + offset, count: count), as: UTF8.self)
        }
    }

    /// The number it was sent to.
    public var number: String { string(4, layout.numberCount) }

    /// True when its number starts with `$` (a system number: MQTT's wildcards at the first level do not match it),
    /// read in place, without making the number's string.
    public var numberStartsWithDollar: Bool {
        layout.numberCount > 0 && withUnsafeMutablePointerToElements { $0[4] } == UInt8(ascii: "$")
    }

    /// The publisher's name (from `HELLO name=`), if it gave one.
    public var sender: String? {
        let layout = layout
        return layout.senderOffset == 0 ? nil : string(layout.senderOffset, layout.senderCount)
    }

    /// The info pairs, in the order given (values as sent).
    public var info: [InfoPair] {
        let layout = layout
        guard layout.infoPairCount > 0 else { return [] }
        return string(layout.infoOffset, layout.infoCount).split(separator: " ").map { word in
            let equals = word.utf8.firstIndex(of: ASCII.equals)!
            return InfoPair(key: String(word[..<equals]), value: String(word[word.index(after: equals)...]))
        }
    }

    /// The revision of a retained number's publication (its `rev=`); nil for a plain number's.
    public var revision: UInt64? {
        let revision = layout.revision
        return revision == 0 ? nil : revision
    }

    /// The payload's size in bytes.
    public var payloadCount: Int { layout.payloadCount }

    /// Calls `body` with the payload's bytes (valid only inside `body`).
    public func withPayload<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let layout = layout
        return try withUnsafeMutablePointerToElements {
            try body(UnsafeRawBufferPointer(start: $0 + layout.payloadOffset, count: layout.payloadCount))
        }
    }

    /// A copy of the payload.
    public var payload: [UInt8] { withPayload { Array($0) } }

    /// The start of the encoded `MSG` frame; stable for the publication's lifetime (for writev(2)).
    public var frameBase: UnsafeMutablePointer<UInt8> { withUnsafeMutablePointerToElements { $0 } }

    /// Bytes of the encoded `MSG` frame.
    public var frameCount: Int { withUnsafeMutablePointerToHeader { $0.pointee.frameCount } }

    /// The memory the publication holds (its frame and bookkeeping), charged in full to every queue it waits in.
    public var heldBytes: Int { withUnsafeMutablePointerToHeader { $0.pointee.heldBytes } }

    /// How many output-queue entries refer to this publication: kept by the daemon's output queues, which hold one
    /// strong reference for all of them (taken when this goes from 0 to 1, given back when it returns to 0) instead of
    /// an atomic retain per entry. Invariant: read and written only on the one queue that owns every output queue
    /// the publication is in (the server's), so a plain integer suffices; it is the one mutable part of a
    /// publication, and it says nothing about the message.
    @inlinable package var queueReferences: Int {
        get { withUnsafeMutablePointerToHeader { $0.pointee.queueReferences } }
        set { withUnsafeMutablePointerToHeader { $0.pointee.queueReferences = newValue } }
    }

    /// A copy of the encoded frame (for tests and tools).
    public var frame: [UInt8] { Array(UnsafeBufferPointer(start: frameBase, count: frameCount)) }

    /// What a front other than the line protocol keeps with the message (MQTT's QoS and properties, and its encoded
    /// packets): set once, right after the publication is made and before anyone receives it; nil for none.
    ///
    /// Kept as the bits of a reference retained once (``PublicationLayout/attachmentBits``) and released by
    /// `deinit`. Invariant: set at most once, on the queue that owns the publication, before it is delivered;
    /// read only while the publication lives (``PublicationTests`` set, read and free one).
    public var attachment: AnyObject? {
        get {
            let bits = withUnsafeMutablePointerToHeader { $0.pointee.attachmentBits }
            guard bits != 0, let raw = UnsafeRawPointer(bitPattern: bits) else { return nil }
            return Unmanaged<AnyObject>.fromOpaque(raw).takeUnretainedValue()
        }
        set {
            let old = withUnsafeMutablePointerToHeader { $0.pointee.attachmentBits }
            precondition(old == 0, "a publication's attachment is set once")
            guard let newValue else { return }
            let bits = UInt(bitPattern: Unmanaged.passRetained(newValue).toOpaque())
            withUnsafeMutablePointerToHeader { $0.pointee.attachmentBits = bits }
        }
    }

    /// True when an attachment is set (read without retaining it).
    public var hasAttachment: Bool { withUnsafeMutablePointerToHeader { $0.pointee.attachmentBits != 0 } }

    deinit {
        let bits = withUnsafeMutablePointerToHeader { $0.pointee.attachmentBits }
        if bits != 0, let raw = UnsafeRawPointer(bitPattern: bits) {
            Unmanaged<AnyObject>.fromOpaque(raw).release()
        }
    }
}

/// Writes bytes one after another at a raw pointer; the caller has sized the space exactly.
private struct FrameWriter {
    let base: UnsafeMutableRawPointer
    var offset = 0

    mutating func write(_ text: StaticString) {
        (base + offset).copyMemory(from: text.utf8Start, byteCount: text.utf8CodeUnitCount)
        offset += text.utf8CodeUnitCount
    }

    mutating func write(_ bytes: UnsafeRawBufferPointer) {
        if let source = bytes.baseAddress, !bytes.isEmpty {
            (base + offset).copyMemory(from: source, byteCount: bytes.count)
        }
        offset += bytes.count
    }

    mutating func write(_ text: String) {
        Publication.withBytes(of: text) { write(UnsafeRawBufferPointer($0)) }
    }

    mutating func write(byte: UInt8) {
        base.storeBytes(of: byte, toByteOffset: offset, as: UInt8.self)
        offset += 1
    }

    mutating func write(decimal value: Int) {
        offset += Decimal.write(value, to: base + offset)
    }
}
