import COpenSSL
import Glibc

/// Where the fan-out scenario's connections go, and whether they speak TLS (`--tls`) and WebSocket (`--ws`).
struct BenchEndpoint: Sendable {
    /// The daemon's host (a name or an IP address; with TLS the certificate must name it).
    let host: String
    /// The daemon's port.
    let port: String
    /// The TLS context for `--tls`; nil for plain TCP.
    let tls: TLSClientContext?
    /// The path of the daemon's WebSocket listener for `--ws`; nil for the line protocol straight over the stream.
    var webSocketPath: String? = nil

    /// Opens a blocking connection, with the TLS handshake done when `tls` is set and the WebSocket upgrade when
    /// `webSocketPath` is.
    func connect() throws(BenchError) -> BenchConnection {
        let socket = try BenchSocket.connect(host: host, port: port)
        let connection: BenchConnection
        if let tls {
            do throws(BenchError) {
                connection = BenchConnection(socket: socket, ssl: try tls.handshake(on: socket, host: host))
            } catch {
                socket.close()
                throw error
            }
        } else {
            connection = BenchConnection(socket: socket, ssl: nil)
        }
        if let webSocketPath { try connection.upgrade(host: host, port: port, path: webSocketPath) }
        return connection
    }
}

/// One blocking connection of the fan-out scenario, plain TCP or TLS over it: the publisher and the subscribers read
/// and write through it the same way. The plain path is one branch in front of `recv`/`send`.
///
/// `@unchecked Sendable`: an OpenSSL `SSL` must not be used by two threads at once. A connection is made by one
/// thread and from then on read and written only by the one thread that owns it (main for the publisher, its own
/// thread for a subscriber). The one call another thread may make is ``shutdown()``, which touches only the file
/// descriptor, never the `SSL`.
final class BenchConnection: @unchecked Sendable {
    /// The TCP connection underneath; closed in deinit.
    let socket: BenchSocket
    /// The TLS session over `socket`, owned (freed in deinit); nil for plain TCP.
    private let ssl: OpaquePointer?
    /// The WebSocket framing once ``upgrade(host:port:path:)`` succeeded; nil for the line protocol straight over
    /// the stream.
    private var webSocket: WebSocketClientFraming?
    /// A frame's header and payload together, reused by every write over WebSocket.
    private var frameBuffer: [UInt8] = []

    /// Takes ownership of `socket` and of `ssl` (a session on that socket whose handshake is done), if any.
    init(socket: BenchSocket, ssl: OpaquePointer?) {
        self.socket = socket
        self.ssl = ssl
    }

    deinit {
        if let ssl { SSL_free(ssl) }
        socket.close()
    }

    /// The socket's file descriptor, for poll(2).
    var fd: Int32 { socket.fd }

    /// True when the TLS session holds bytes read from the socket but not yet handed out (decrypted data, or whole
    /// records read ahead): the socket will not poll readable for them, so they must be read without polling.
    /// Always false for plain TCP.
    var hasBufferedBytes: Bool {
        guard let ssl else { return false }
        return SSL_has_pending(ssl) == 1
    }

    /// The negotiated protocol and cipher, e.g. `TLSv1.3 TLS_AES_256_GCM_SHA384`; nil for plain TCP.
    var negotiated: String? {
        guard let ssl else { return nil }
        let version = String(cString: SSL_get_version(ssl))
        guard let cipher = SSL_get_current_cipher(ssl), let name = SSL_CIPHER_get_name(cipher) else { return version }
        return "\(version) \(String(cString: name))"
    }

    /// Reads once; blocks until bytes come unless the TLS session already holds some. Returns the count, 0 at the
    /// end of the stream, or nil when a TLS record without application data was all there was (a session ticket):
    /// poll again.
    func readAvailable(into buffer: UnsafeMutableRawBufferPointer, what: String) throws(BenchError) -> Int? {
        guard webSocket != nil else { return try readStream(into: buffer, what: what) }
        guard let count = try readStream(into: buffer, what: what), count > 0 else { return 0 }
        let payload = webSocket!.unframe(buffer, count: count)
        // Only headers or a control frame: nothing for the reader yet (or the close frame: the end).
        if payload == 0 { return webSocket!.isClosed ? 0 : nil }
        return payload
    }

    /// One read of the stream under the WebSocket framing, as ``readAvailable(into:what:)`` describes.
    private func readStream(into buffer: UnsafeMutableRawBufferPointer, what: String) throws(BenchError) -> Int? {
        guard let ssl else { return try socket.read(into: buffer, what: what) }
        ERR_clear_error()
        // SSL_read writes at most `buffer.count` bytes at `buffer.baseAddress`, the caller's live buffer.
        let result = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        if result > 0 { return Int(result) }
        let savedErrno = errno
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return nil
        case SSL_ERROR_ZERO_RETURN: return 0
        case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
            if savedErrno == 0 { return 0 }
            throw .io(what: what, errno: savedErrno)
        default:
            throw .tls("\(what): \(openSSLErrors())")
        }
    }

    /// Reads once, blocking until application bytes come; returns the count, 0 at the end of the stream.
    func read(into buffer: UnsafeMutableRawBufferPointer, what: String) throws(BenchError) -> Int {
        while true {
            if let length = try readAvailable(into: buffer, what: what) { return length }
        }
    }

    /// Writes all of `bytes`, blocking until the kernel took them (as TLS records when over TLS, as one WebSocket
    /// frame after ``upgrade(host:port:path:)``).
    func writeAll(_ bytes: UnsafeRawBufferPointer, what: String) throws(BenchError) {
        guard webSocket != nil else { return try writeStream(bytes, what: what) }
        frameBuffer.removeAll(keepingCapacity: true)
        frameBuffer += WebSocketClientFraming.header(payloadCount: bytes.count)
        frameBuffer.append(contentsOf: bytes)
        try withBytes(frameBuffer) { frame throws(BenchError) in try writeStream(frame, what: what) }
    }

    /// Sends the HTTP/1.1 upgrade request for `path` and reads the answer: from then on every write is a frame and
    /// every read is unframed. Throws unless the answer is `101`.
    func upgrade(host: String, port: String, path: String) throws(BenchError) {
        let request =
            "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: subd\r\n\r\n"
        try writeAll(request, what: "sending the WebSocket upgrade")
        var head: [UInt8] = []
        let byte = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1)
        defer { byte.deallocate() }
        // Byte by byte up to the empty line: the server sends nothing after its answer until asked, so nothing of
        // the stream is read here.
        while !head.reversed().starts(with: Array("\n\r\n\r".utf8)) {
            let count = try read(into: byte, what: "reading the WebSocket upgrade's answer")
            guard count == 1, head.count < 8192 else { throw .connectionClosed("during the WebSocket upgrade") }
            head.append(byte[0])
        }
        let statusLine = String(decoding: head.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        guard statusLine.hasPrefix("HTTP/1.1 101") else {
            throw .daemon("the WebSocket upgrade was refused: \(statusLine)")
        }
        webSocket = WebSocketClientFraming()
    }

    /// Writes all of `bytes` to the stream under the WebSocket framing, blocking until the kernel took them.
    private func writeStream(_ bytes: UnsafeRawBufferPointer, what: String) throws(BenchError) {
        guard let ssl else { return try socket.writeAll(bytes, what: what) }
        // `bytes` stays valid for the whole call (the caller's); `pointer + remaining` is always its end.
        guard var pointer = bytes.baseAddress else { return }
        var remaining = bytes.count
        while remaining > 0 {
            ERR_clear_error()
            let result = SSL_write(ssl, pointer, Int32(clamping: remaining))
            if result > 0 {
                pointer += Int(result)
                remaining -= Int(result)
                continue
            }
            let savedErrno = errno
            switch SSL_get_error(ssl, result) {
            // Blocking socket: only a record to process first (none expected from subd); the retry passes the same
            // bytes, as OpenSSL requires.
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: continue
            case SSL_ERROR_ZERO_RETURN: throw .connectionClosed("while \(what)")
            case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
                throw savedErrno == 0 ? .connectionClosed("while \(what)") : .io(what: what, errno: savedErrno)
            default:
                throw .tls("\(what): \(openSSLErrors())")
            }
        }
    }

    /// Writes a short command line such as `SUB BENCH\n`.
    func writeAll(_ text: String, what: String) throws(BenchError) {
        try withBytes(Array(text.utf8)) { bytes throws(BenchError) in try writeAll(bytes, what: what) }
    }

    /// Stops both directions of the socket, waking the owning thread blocked in poll or a read; safe from any
    /// thread (it does not touch the TLS session).
    func shutdown() {
        socket.shutdown()
    }
}
