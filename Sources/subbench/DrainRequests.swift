import Glibc
import Synchronization

/// Main's requests that a subscriber send `PING` (a drain), passed to the subscriber's thread, which does all I/O
/// on its connection itself (a TLS session must not be written by main while the thread reads it).
///
/// `request()` counts up an atomic and writes a byte to a pipe; the thread polls the pipe's read end beside its
/// socket, so a request wakes it even while no message comes, and it sends one `PING` per request it has not sent.
final class DrainRequests: Sendable {
    /// How many drains main has asked for so far.
    private let requested = Atomic<Int>(0)
    /// The pipe's read end, polled and emptied by the subscriber's thread (non-blocking).
    let wakeFD: Int32
    /// The pipe's write end, written by main (non-blocking: a full pipe already wakes the thread).
    private let signalFD: Int32

    /// Makes the pipe.
    init() throws(BenchError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .io(what: "making a wake-up pipe", errno: errno) }
        for fd in ends {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeFD = ends[0]
        signalFD = ends[1]
    }

    deinit {
        close(wakeFD)
        close(signalFD)
    }

    /// Asks for one more `PING` and wakes the thread; from main.
    func request() {
        requested.add(1, ordering: .releasing)
        var byte: UInt8 = 1
        // A full pipe (EAGAIN) is fine: the thread is woken already and reads the count, not the bytes.
        while write(signalFD, &byte, 1) < 0 && errno == EINTR {}
    }

    /// How many drains were asked for so far; from the subscriber's thread.
    var count: Int {
        requested.load(ordering: .acquiring)
    }

    /// Empties the pipe after poll reported it readable; from the subscriber's thread.
    func clearWake() {
        var bytes: (UInt64, UInt64) = (0, 0)
        // Reads into a 16-byte local that lives across the call; the count is not needed, only an empty pipe.
        while withUnsafeMutableBytes(of: &bytes, { read(wakeFD, $0.baseAddress, $0.count) }) > 0 {}
    }
}
