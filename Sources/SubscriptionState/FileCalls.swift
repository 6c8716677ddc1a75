#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The store's other system calls, each wrapped once: EINTR retried, a failure thrown as
/// ``StateError/system(operation:path:errno:offset:)`` naming the call and the file, EBADF and EFAULT treated as
/// bugs of the caller.
enum FileCalls {
    /// Runs `call` until it stops failing with EINTR; throws its errno otherwise.
    @discardableResult
    static func retrying<Result: BinaryInteger>(
        _ operation: String, _ path: String, offset: Int? = nil,
        _ call: () -> Result
    ) throws(StateError) -> Result {
        while true {
            let result = call()
            if result >= 0 { return result }
            let error = Glibc.errno
            switch error {
            case EINTR: continue
            case EBADF, EFAULT: preconditionFailure("\(operation) \(path) failed with \(error): descriptor misuse")
            default: throw .system(operation: operation, path: path, errno: error, offset: offset)
            }
        }
    }

    /// open(2) with O_CLOEXEC added to `flags`.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o600) throws(StateError) -> Int32 {
        try retrying("open", path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    /// open(2) of a file that may be missing: nil when it is.
    static func openIfPresent(_ path: String, _ flags: Int32) throws(StateError) -> Int32? {
        do {
            return try open(path, flags)
        } catch .system(_, _, ENOENT, _) {
            return nil
        }
    }

    /// mkdir(2) of `path` with mode 0700; an existing directory is fine.
    static func makeDirectory(_ path: String) throws(StateError) {
        do {
            try retrying("mkdir", path) { mkdir(path, 0o700) }
        } catch .system(_, _, EEXIST, _) {
        }
    }

    /// flock(2) LOCK_EX | LOCK_NB: false when another open description holds the lock.
    static func tryLock(_ fd: Int32, _ path: String) throws(StateError) -> Bool {
        do {
            try retrying("flock", path) { flock(fd, LOCK_EX | LOCK_NB) }
            return true
        } catch .system(_, _, EWOULDBLOCK, _) {
            return false
        }
    }

    /// The size of the open file `fd`.
    static func size(_ fd: Int32, _ path: String) throws(StateError) -> Int {
        var info = stat()
        try retrying("fstat", path) { fstat(fd, &info) }
        return Int(info.st_size)
    }

    /// The whole file `fd`, read with pread(2) from offset 0.
    static func readAll(_ fd: Int32, _ path: String) throws(StateError) -> [UInt8] {
        let size = try size(fd, path)
        var bytes = [UInt8](repeating: 0, count: size)
        var done = 0
        while done < size {
            let got = try retrying("read", path, offset: done) {
                bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, size - done, off_t(done)) }
            }
            // The file shrank while being read: only another process could do that, and the lock keeps them out.
            guard got > 0 else { throw .system(operation: "read", path: path, errno: EIO, offset: done) }
            done += got
        }
        return bytes
    }

    /// ftruncate(2) to `length`.
    static func truncate(_ fd: Int32, _ path: String, to length: Int) throws(StateError) {
        try retrying("ftruncate", path) { ftruncate(fd, off_t(length)) }
    }

    /// rename(2) of `from` over `to`.
    static func rename(_ from: String, over to: String) throws(StateError) {
        try retrying("rename", from) { Glibc.rename(from, to) }
    }

    /// unlink(2) of `path`: true when it was there.
    @discardableResult
    static func removeIfPresent(_ path: String) throws(StateError) -> Bool {
        do {
            try retrying("unlink", path) { unlink(path) }
            return true
        } catch .system(_, _, ENOENT, _) {
            return false
        }
    }

    /// close(2); errors after a close are not actionable (the data was synced before, where it mattered).
    static func close(_ fd: Int32) {
        let result = Glibc.close(fd)
        precondition(result == 0 || Glibc.errno != EBADF, "close(\(fd)) of a descriptor that is not open")
    }
}

/// strerror(3) of `errno`, e.g. `No space left on device`.
func errorText(_ errno: Int32) -> String {
    String(cString: strerror(errno))
}
