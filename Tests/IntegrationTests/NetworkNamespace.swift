import Foundation
import Glibc

/// iproute2's tools (`ip`, `ss`), run to completion for the tests that need a network namespace or socket timers.
enum IPRoute2 {
    /// Runs `arguments` (the tool, then its arguments) and returns its stdout
    /// (``ExternalTool/run(_:timeout:missing:)``).
    @discardableResult
    static func run(_ arguments: [String], timeout: TimeInterval = 10) throws -> String {
        try ExternalTool.run(arguments, timeout: timeout, missing: "is iproute2 installed? `make test` installs it")
    }
}

/// A network namespace joined to this one by a veth pair, so that a client inside it reaches subd over a link the
/// test can cut: `cutLink()` takes the namespace's end down, and the path dies without a FIN or RST.
///
/// This side is `hostAddress`/30 on `hostInterface`, the namespace's side `namespaceAddress`/30. Names carry this
/// process's id and a sequence number; the /30 is one no interface uses yet. Needs root (CAP_NET_ADMIN). `remove()`
/// deletes the namespace and both ends of the pair; call it in a `defer`, so a failing test cleans up too.
final class NetworkNamespace {
    private static let made = Counter()

    /// The namespace's name, e.g. `subd-it-4242-1`.
    let name: String
    /// The veth end in this namespace.
    let hostInterface: String
    /// The veth end inside the namespace.
    let namespaceInterface: String
    /// The IPv4 address of `hostInterface` (subd listens there).
    let hostAddress: String
    /// The IPv4 address of `namespaceInterface` (the client connects from there).
    let namespaceAddress: String

    /// Creates the namespace and the veth pair, addresses both ends and brings them up; on a failure, removes what
    /// it made and throws.
    init() throws {
        Self.made.add()
        let sequence = Self.made.current
        let pid = getpid()
        name = "subd-it-\(pid)-\(sequence)"
        hostInterface = "sk\(pid)h\(sequence)"
        namespaceInterface = "sk\(pid)n\(sequence)"
        // Test processes run side by side (Tests/run-parallel.sh): one at a time picks a free subnet and takes it.
        let lock = try Self.lockSubnets()
        defer { close(lock) }
        let subnet = try Self.unusedSubnet()
        hostAddress = "\(subnet).1"
        namespaceAddress = "\(subnet).2"
        do {
            try IPRoute2.run(["ip", "netns", "add", name])
            try IPRoute2.run(["ip", "link", "add", hostInterface, "type", "veth", "peer", "name", namespaceInterface])
            try IPRoute2.run(["ip", "link", "set", namespaceInterface, "netns", name])
            try IPRoute2.run(["ip", "addr", "add", "\(hostAddress)/30", "dev", hostInterface])
            try IPRoute2.run(["ip", "link", "set", hostInterface, "up"])
            try IPRoute2.run(["ip", "-n", name, "addr", "add", "\(namespaceAddress)/30", "dev", namespaceInterface])
            try IPRoute2.run(["ip", "-n", name, "link", "set", namespaceInterface, "up"])
            try IPRoute2.run(["ip", "-n", name, "link", "set", "lo", "up"])
        } catch {
            remove()
            throw error
        }
    }

    /// `ip netns exec NAME`: put it before a command (run through `/usr/bin/env`) to run that inside the namespace.
    var execPrefix: [String] { ["ip", "netns", "exec", name] }

    /// Takes the namespace's end of the link down: from then on nothing crosses it, and no FIN or RST is sent.
    func cutLink() throws {
        try IPRoute2.run(["ip", "-n", name, "link", "set", namespaceInterface, "down"])
    }

    /// Deletes the namespace (which deletes the veth end in it, and so its peer) and the host end in case it is
    /// left; errors are ignored, so it may be called more than once.
    func remove() {
        _ = try? IPRoute2.run(["ip", "netns", "delete", name])
        _ = try? IPRoute2.run(["ip", "link", "delete", hostInterface])
    }

    /// An exclusive lock (flock) shared by every test process of this machine, held while a namespace picks its
    /// subnet and puts its address on its link; released when the returned descriptor is closed.
    private static func lockSubnets() throws -> Int32 {
        let fd = open("/tmp/subd-it-netns.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw HarnessError.system("open /tmp/subd-it-netns.lock", errno) }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let error = errno
                close(fd)
                throw HarnessError.system("flock /tmp/subd-it-netns.lock", error)
            }
        }
        return fd
    }

    /// The first three octets of a 10.213.x.0/30 that no interface has an address in (`ip -4 -o addr`).
    private static func unusedSubnet() throws -> String {
        let inUse = try IPRoute2.run(["ip", "-4", "-o", "addr", "show"])
        for third in 0..<256 {
            let subnet = "10.213.\(third)"
            if !inUse.contains(" \(subnet).") { return subnet }
        }
        throw HarnessError.process("no free 10.213.x.0/30 subnet for a test namespace; addresses in use:\n\(inUse)")
    }
}
