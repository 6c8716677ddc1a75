#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// One resolved socket address (a copy of what getaddrinfo(3) gave).
struct ResolvedAddress: @unchecked Sendable {
    // @unchecked: a plain byte copy of a sockaddr, never shared mutably.
    /// AF_INET or AF_INET6.
    var family: Int32
    /// The sockaddr's bytes.
    var storage: sockaddr_storage
    /// Its length.
    var length: socklen_t
}

/// Resolves a host and port for a TCP connection.
enum AddressResolver {
    /// True when `host` is an IPv4 or IPv6 literal: resolving it never blocks.
    static func isNumeric(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// The addresses of `host:port` (may block on DNS for a name: call it off the client's queue then).
    static func resolve(host: String, port: Int) -> Result<[ResolvedAddress], NATSError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        if isNumeric(host) { hints.ai_flags = AI_NUMERICHOST }
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        let server = host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        guard status == 0, let first = list else {
            let reason = status == EAI_SYSTEM ? String(cString: strerror(errno)) : String(cString: gai_strerror(status))
            return .failure(.connectionFailed(server: server, reason: reason))
        }
        defer { freeaddrinfo(list) }
        var addresses: [ResolvedAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let info = entry {
            entry = info.pointee.ai_next
            var storage = sockaddr_storage()
            let length = info.pointee.ai_addrlen
            // getaddrinfo's address is at most a sockaddr_storage (that is what the type is for), and valid until
            // freeaddrinfo: it is copied out here, within that time.
            precondition(Int(length) <= MemoryLayout<sockaddr_storage>.size, "a \(length)-byte socket address")
            withUnsafeMutableBytes(of: &storage) { raw in
                raw.copyMemory(from: UnsafeRawBufferPointer(start: info.pointee.ai_addr, count: Int(length)))
            }
            addresses.append(ResolvedAddress(family: info.pointee.ai_family, storage: storage, length: length))
        }
        return addresses.isEmpty
            ? .failure(.connectionFailed(server: server, reason: "no address")) : .success(addresses)
    }
}
