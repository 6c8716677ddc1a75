import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

/// The write end of the self-pipe, read by the C signal handler. Set once, before any handler is installed.
nonisolated(unsafe) private var signalPipeWriteEnd: Int32 = -1

/// Signals delivered through a self-pipe (redis, mosquitto): the handler, installed synchronously with
/// sigaction(2), only writes the signal number into a pipe; a Dispatch read source on the daemon's queue turns it
/// into a call. A libdispatch signal source alone registers asynchronously, so a signal that arrives right after
/// start-up could still kill the process or be lost; this way every signal after ``init`` is seen.
final class SignalPipe: @unchecked Sendable {
    private let readEnd: Int32
    private var source: DispatchSourceRead?

    /// Creates the pipe and installs the handler for `signals`. Call once per process.
    init(signals: [Int32]) {
        var ends: [Int32] = [-1, -1]
        precondition(pipe(&ends) == 0, "pipe failed: \(errno)")
        for end in ends {
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        }
        readEnd = ends[0]
        signalPipeWriteEnd = ends[1]
        for number in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(signalPipeWriteEnd, &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            precondition(sigaction(number, &action, nil) == 0, "sigaction(\(number)) failed: \(errno)")
        }
    }

    /// Calls `handler` on `queue` with each signal number received. The source is kept here: a released source
    /// would silently stop delivering.
    func start(on queue: DispatchQueue, _ handler: @escaping (Int32) -> Void) {
        let readEnd = self.readEnd
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: queue)
        source.setEventHandler {
            var bytes = [UInt8](repeating: 0, count: 16)
            while true {
                let count = read(readEnd, &bytes, bytes.count)
                guard count > 0 else { return }
                for byte in bytes[..<count] { handler(Int32(byte)) }
            }
        }
        self.source = source
        source.resume()
    }
}
