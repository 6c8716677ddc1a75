#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// The system calls whose outcome decides what reaches the disk: appending, cutting an append back off, syncing a
/// file, syncing a directory. The store makes them through this protocol so that tests can count them (the
/// group-commit rule) or make them fail (a full disk, an I/O error) without timing or a broken device; ``SystemDisk``
/// is the real one.
public protocol StateDisk {
    /// write(2) of `bytes` to `fd`, with EINTR retried: the count written (at least 1 when `bytes` is not empty), or
    /// the errno as a negative number.
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int
    /// fdatasync(2) of the file `fd` (its data and its size, all an append needs), EINTR retried: 0, or the errno.
    func syncFile(_ fd: Int32) -> Int32
    /// fsync(2) of the directory `fd`, so a rename or a new name in it lasts, EINTR retried: 0, or the errno.
    func syncDirectory(_ fd: Int32) -> Int32
    /// ftruncate(2) of the file `fd` to `length`, EINTR retried: 0, or the errno. (A default implementation makes
    /// the system call, so a disk written before this requirement need not change.)
    func truncateFile(_ fd: Int32, to length: Int) -> Int32
}

extension StateDisk {
    /// ftruncate(2), EINTR retried.
    public func truncateFile(_ fd: Int32, to length: Int) -> Int32 {
        while ftruncate(fd, off_t(length)) != 0 {
            if Glibc.errno != EINTR { return Glibc.errno }
        }
        return 0
    }
}

/// The system's calls.
public struct SystemDisk: StateDisk {
    /// The system's calls.
    public init() {}

    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        while true {
            let written = Glibc.write(fd, bytes.baseAddress, bytes.count)
            if written >= 0 { return written }
            if Glibc.errno != EINTR { return -Int(Glibc.errno) }
        }
    }

    public func syncFile(_ fd: Int32) -> Int32 {
        retryingInterrupts { fdatasync(fd) }
    }

    public func syncDirectory(_ fd: Int32) -> Int32 {
        retryingInterrupts { fsync(fd) }
    }

    private func retryingInterrupts(_ call: () -> Int32) -> Int32 {
        while call() != 0 {
            if Glibc.errno != EINTR { return Glibc.errno }
        }
        return 0
    }
}
