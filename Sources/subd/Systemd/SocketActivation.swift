import CSystemd

#if canImport(Glibc)
    import Glibc
#endif

/// A listening socket systemd passed in (socket activation).
struct InheritedSocket: Sendable {
    /// The descriptor (3, 4, ... in the order of the socket unit's `Listen*=` lines).
    var fd: Int32
    /// Its `FileDescriptorName=` (systemd's default is the socket unit's name).
    var name: String
}

/// A socket systemd passed in that subd cannot serve on.
struct SocketActivationError: Error, CustomStringConvertible {
    /// What was wrong, naming the descriptor.
    var description: String
}

/// Socket activation through sd_listen_fds_with_names(3).
enum SocketActivation {
    /// The listening sockets passed by systemd, checked to be listening stream sockets and marked close-on-exec
    /// (the server makes them non-blocking when it adopts them). Empty when subd was not socket-activated; then it
    /// binds its configured addresses itself. `LISTEN_PID`, `LISTEN_FDS` and `LISTEN_FDNAMES` are removed from the
    /// environment.
    static func inheritedSockets() throws(SocketActivationError) -> [InheritedSocket] {
        var names: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        let count = sd_listen_fds_with_names(1, &names)
        defer {
            if let names {
                for index in 0..<Int(max(count, 0)) { free(names[index]) }
                free(names)
            }
        }
        guard count >= 0 else {
            throw SocketActivationError(description: "sd_listen_fds failed: \(String(cString: strerror(-count)))")
        }
        var sockets: [InheritedSocket] = []
        for index in 0..<Int(count) {
            let fd = Int32(SD_LISTEN_FDS_START) + Int32(index)
            let name = names?[index].map { String(cString: $0) } ?? "unknown"
            guard sd_is_socket(fd, AF_UNSPEC, Int32(SOCK_STREAM.rawValue), 1) > 0 else {
                throw SocketActivationError(
                    description: "descriptor \(fd) ('\(name)') from systemd is not a listening stream socket; "
                        + "the socket unit must use ListenStream= with Accept=no"
                )
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            sockets.append(InheritedSocket(fd: fd, name: name))
        }
        return sockets
    }
}
