import Dispatch
import Logging
import SubscriptionSystem

#if canImport(Glibc)
    import Glibc
#endif

/// The `metrics_listen` socket: accepts HTTP connections on the server's queue and gives each to a
/// ``MetricsConnection``, at most ``maxConnections`` at once (one more is answered 503 and closed), so the endpoint
/// cannot be used to use up the daemon's descriptors. Out of descriptors, accepting pauses as the server's own
/// listeners do. `@unchecked Sendable`: confined to the queue.
final class MetricsListener: @unchecked Sendable {
    /// Most metrics connections open at once.
    static let maxConnections = 64
    /// How long one exchange (request in, response out) may take, from the accept.
    static let deadline = DispatchTimeInterval.seconds(5)
    /// Most bytes a request head may take.
    static let maxHeadBytes = 8192

    /// The address bound (the real port for port 0).
    var address: ListenAddress { socket.address }
    /// `http://HOST:PORT/metrics` of ``address``.
    var url: String {
        guard case .tcp(let host, let port) = address else { return "\(address)" }
        return "http://\(host.contains(":") ? "[\(host)]" : host):\(port)\(MetricsRoute.path)"
    }

    private let socket: ListeningSocket
    private let queue: DispatchQueue
    private let logger: Logger
    private let exposition: () -> [UInt8]
    private var source: DispatchSourceRead?
    private var isPaused = false
    private var connections: [UInt64: MetricsConnection] = [:]
    private var nextID: UInt64 = 1

    /// Binds `address`; `exposition` makes the metrics text, on `queue`, for each `GET /metrics`.
    init(
        binding address: ListenAddress, queue: DispatchQueue, logger: Logger,
        exposition: @escaping () -> [UInt8]
    ) throws(SystemCallError) {
        self.socket = try ListeningSocket.bind(address, unixMode: 0o600)
        self.queue = queue
        self.logger = logger
        self.exposition = exposition
    }

    /// Starts accepting. On the queue.
    func start() {
        let source = DispatchSource.makeReadSource(fileDescriptor: socket.fd, queue: queue)
        // Strong capture: the listener lives until ``stop()`` cancels the source.
        source.setEventHandler { self.acceptConnections() }
        let fd = socket.fd
        source.setCancelHandler { Syscall.close(fd) }
        self.source = source
        source.resume()
    }

    /// Stops accepting and closes every metrics connection now. On the queue.
    func stop() {
        if let source {
            // A suspended source must be resumed before it is cancelled.
            if isPaused { source.resume() }
            source.cancel()
        }
        source = nil
        isPaused = false
        for connection in Array(connections.values) { connection.close() }
    }

    // MARK: Accepting

    private func acceptConnections() {
        for _ in 0..<64 {
            let accepted: Int32?
            do {
                accepted = try Syscall.accept(socket.fd)
            } catch {
                switch error.errno {
                case EMFILE, ENFILE, ENOBUFS, ENOMEM: return pause(after: error)
                default: continue  // that one connection failed (ECONNABORTED...)
                }
            }
            guard let fd = accepted else { return }
            guard connections.count < Self.maxConnections else {
                refuse(fd)
                continue
            }
            let connection = MetricsConnection(
                id: nextID, fd: fd, queue: queue, maxHeadBytes: Self.maxHeadBytes,
                respond: { [exposition] head in MetricsRoute.response(to: head, exposition: exposition) },
                onClose: { [unowned self] connection in self.connections[connection.id] = nil })
            nextID += 1
            connections[connection.id] = connection
            connection.start(deadline: Self.deadline)
        }
    }

    /// One connection too many: a 503, one try, and closed.
    private func refuse(_ fd: Int32) {
        let bytes = MetricsRoute.busy.encoded()
        _ = bytes.withUnsafeBytes { try? Syscall.send(fd, $0) }
        Syscall.shutdownWrite(fd)
        Syscall.close(fd)
        logger.notice("refused a metrics connection: \(Self.maxConnections) are open")
    }

    /// Out of descriptors or memory: the connection waits in the backlog, and accepting pauses 250 ms.
    private func pause(after error: SystemCallError) {
        guard let source, !isPaused else { return }
        isPaused = true
        source.suspend()
        logger.warning("metrics accept failed: \(error); accepting metrics connections pauses for 250 ms")
        queue.asyncAfter(deadline: .now() + .milliseconds(250)) {
            guard self.isPaused, let source = self.source else { return }
            self.isPaused = false
            source.resume()
        }
    }
}
