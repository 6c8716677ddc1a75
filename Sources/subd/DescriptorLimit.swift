#if canImport(Glibc)
    import Glibc
#endif

/// The open-file limit: each connection is one descriptor, so subd raises its soft limit to the hard limit at start
/// (as redis and nats-server do); the hard limit is the administrator's (`LimitNOFILE=` under systemd).
enum DescriptorLimit {
    /// Raises the soft RLIMIT_NOFILE to the hard one; returns the limit in force.
    static func raise() -> UInt64 {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { return UInt64(raised.rlim_cur) }
        }
        return UInt64(limit.rlim_cur)
    }
}
