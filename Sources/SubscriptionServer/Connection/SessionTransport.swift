import SubscriptionProtocol
import SubscriptionSystem

/// How a session's bytes travel: the socket itself (TCP or a Unix socket), a TLS session over it (`tls://`), or
/// WebSocket frames over either (`ws://`, `wss://`). The one seam between a connection and the front it carries
/// (``Session``: the line protocol's parser, client state and customer role): the front reads through
/// ``read(into:readSize:)`` and writes its ``OutputQueue`` through ``write(_:loop:)``, whatever is underneath.
/// Each layer's write state is a plain value (``OutputQueue``, `WebSocketStreamFraming`, ``TLSProgress``); the
/// system calls are ``OutputWriter``'s and the TLS stream's.
///
/// The plain socket costs one check of ``tls`` and one of ``webSocket`` per read or write call, no more.
struct SessionTransport {
    /// The socket.
    let fd: Int32
    /// The TLS session on a `tls://` or `wss://` listener's connection; nil on a plain one.
    let tls: TLSStream?
    /// The WebSocket layer on a `ws://` or `wss://` listener's connection (over ``tls`` for `wss://`); nil when the
    /// bytes are the line protocol's stream itself.
    let webSocket: WebSocketTransport?

    /// True while a TLS handshake or a WebSocket upgrade is under way: the liveness check counts it as a command
    /// not finished (`command_timeout` ends a stalled one).
    var isOpening: Bool {
        tls?.progress.isEstablished == false || webSocket?.isAwaitingUpgrade == true
    }

    /// True when a read that found nothing waits for room to write first (a TLS record to send).
    var inputWaitsForRoom: Bool { tls?.progress.inputWaitsFor == .writable }

    /// Reads once: on a plain or TLS connection straight into `parser`'s buffer (at least `readSize` bytes of room);
    /// on a WebSocket connection into its layer, whose ``WebSocketTransport/takeInput(into:_:)`` then hands the
    /// line protocol's bytes to the parser.
    func read(into parser: inout CommandParser, readSize: Int) throws(SystemCallError) -> IOResult {
        if let webSocket { return try webSocket.read(from: fd, tls: tls) }
        var outcome: Result<IOResult, SystemCallError> = .success(.wouldBlock)
        let fd = self.fd
        let tls = self.tls
        parser.withWritableTail(minimumCapacity: readSize) { Self.read(fd, tls, into: $0, outcome: &outcome) }
        return try outcome.get()
    }

    /// One read(2) of `fd`, or `SSL_read` of `tls`, into `space`, made to be the body of a buffer's
    /// `withWritableTail` (which cannot throw): returns the bytes to keep and puts the read's result in `outcome`.
    static func read(
        _ fd: Int32, _ tls: TLSStream?, into space: UnsafeMutableRawBufferPointer,
        outcome: inout Result<IOResult, SystemCallError>
    ) -> Int {
        do throws(SystemCallError) {
            let result = if let tls { try tls.read(into: space) } else { try Syscall.read(fd, space) }
            outcome = .success(result)
            if case .processed(let n) = result { return n }
        } catch {
            outcome = .failure(error)
        }
        return 0
    }

    /// Writes as much of `output` as the connection takes, with `loop`'s iovecs and scratch buffer; returns the
    /// bytes written (frame headers included), or nil when nothing can go out yet (a TLS handshake not done).
    func write(_ output: inout OutputQueue, loop: EventLoop) throws(SystemCallError) -> Int? {
        if let tls {
            guard tls.progress.isEstablished else { return nil }
            guard let webSocket else {
                return try OutputWriter.write(&output, through: tls, scratch: loop.writeScratch)
            }
            return try OutputWriter.write(
                &output, framedBy: &webSocket.framing, through: tls, scratch: loop.writeScratch)
        }
        guard let webSocket else {
            return try OutputWriter.write(
                &output, to: fd, vectors: loop.vectors, maxVectors: loop.maxVectors, scratch: loop.writeScratch)
        }
        return try OutputWriter.write(
            &output, framedBy: &webSocket.framing, to: fd, vectors: loop.vectors, maxVectors: loop.maxVectors,
            scratch: loop.writeScratch)
    }

    /// Shuts down the write side: TLS's close_notify first, then the socket's FIN.
    func shutdownWrite() {
        tls?.shutdown()
        Syscall.shutdownWrite(fd)
    }
}
