import Dispatch
import SubscriptionSystem

/// One TCP connection of a ``NATSClient``: its descriptor and its two Dispatch sources. Confined to the client's
/// queue (`@unchecked Sendable`: every property is touched only there).
///
/// The sources are created by the client (a nonisolated class, so their handlers carry no actor isolation), kept
/// here strongly until cancelled, and the descriptor is closed only when both cancel handlers have run, so no
/// source ever watches a descriptor number that was reused. A suspended source is resumed before it is cancelled
/// (Dispatch requires it).
final class NATSSocket: @unchecked Sendable {
    /// The socket.
    let fd: Int32
    /// The server it goes to.
    let server: NATSServerAddress
    /// Watches for input; made once the TCP connection is up.
    var readSource: DispatchSourceRead?
    /// Watches for room: first for the non-blocking connect to finish, then for output that did not fit.
    var writeSource: DispatchSourceWrite?
    /// True while the write source is suspended.
    var isWriteSuspended = false
    /// True once the TCP connection is up.
    var isEstablished = false
    /// True once ``cancel()`` ran.
    private(set) var isCancelled = false
    /// Sources not yet through their cancel handler.
    private var liveSources = 0

    init(fd: Int32, server: NATSServerAddress) {
        self.fd = fd
        self.server = server
    }

    /// Registers a source made for this socket (its cancel handler must call ``sourceCancelled()``).
    func adopt(read source: DispatchSourceRead) {
        readSource = source
        liveSources += 1
    }

    /// Registers the write source (its cancel handler must call ``sourceCancelled()``); it starts resumed.
    func adopt(write source: DispatchSourceWrite) {
        writeSource = source
        isWriteSuspended = false
        liveSources += 1
    }

    /// Stops watching for room.
    func suspendWrites() {
        guard let writeSource, !isWriteSuspended, !isCancelled else { return }
        isWriteSuspended = true
        writeSource.suspend()
    }

    /// Watches for room again.
    func resumeWrites() {
        guard let writeSource, isWriteSuspended, !isCancelled else { return }
        isWriteSuspended = false
        writeSource.resume()
    }

    /// Cancels both sources (resuming a suspended one first); the descriptor closes when both are done. Without
    /// sources, closes it at once.
    func cancel() {
        guard !isCancelled else { return }
        isCancelled = true
        if liveSources == 0 {
            Syscall.close(fd)
            return
        }
        if let writeSource {
            if isWriteSuspended {
                isWriteSuspended = false
                writeSource.resume()
            }
            writeSource.cancel()
        }
        readSource?.cancel()
    }

    /// A source's cancel handler ran; the last one closes the descriptor.
    func sourceCancelled() {
        liveSources -= 1
        if liveSources == 0 {
            readSource = nil
            writeSource = nil
            Syscall.close(fd)
        }
    }
}
