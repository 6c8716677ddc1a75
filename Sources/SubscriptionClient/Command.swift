import SubscriptionWire

/// Encodes the commands of docs/PROTOCOL.md into the bytes sent on the wire, after checking every argument with
/// the wire's rules (SubscriptionWire), so nothing the server would refuse as malformed is sent, and no line feed
/// can be smuggled in.
enum Command {
    static func hello(name: String?, token: String?) throws(ClientError) -> [UInt8] {
        var line = "HELLO"
        if let name {
            try checkClientName(name)
            line += " name=\(name)"
        }
        if let token {
            do throws(ClientName.Problem) {
                try ClientName.checkToken(token)
            } catch {
                throw .invalidToken(error)
            }
            line += " token=\(token)"
        }
        return bytes(line)
    }

    /// `CREATE <number>`, or `CREATE <number> retain` for a retained number (protocol 1.1).
    static func create(_ number: String, retained: Bool = false) throws(ClientError) -> [UInt8] {
        try checkNumber(number)
        return bytes(retained ? "CREATE \(number) retain" : "CREATE \(number)")
    }

    /// `GET <number>`: the current value of a retained number (protocol 1.1).
    static func get(_ number: String) throws(ClientError) -> [UInt8] {
        try checkNumber(number)
        return bytes("GET \(number)")
    }

    static func remove(_ number: String) throws(ClientError) -> [UInt8] {
        try checkNumber(number)
        return bytes("REMOVE \(number)")
    }

    /// `SUB <pattern>[ from=<client-name>][ group=<group-name>]`; a group name follows the client-name rule.
    static func sub(_ pattern: String, from: String?, group: String? = nil) throws(ClientError) -> [UInt8] {
        try checkPattern(pattern)
        var line = "SUB \(pattern)"
        if let from {
            try checkClientName(from)
            line += " from=\(from)"
        }
        if let group {
            do throws(ClientName.Problem) {
                try ClientName.check(group)
            } catch {
                throw .invalidGroupName(group, error)
            }
            line += " group=\(group)"
        }
        return bytes(line)
    }

    static func unsub(_ pattern: String) -> [UInt8] {
        bytes("UNSUB \(pattern)")
    }

    /// `PUB <number> <nbytes>[ <key>=<value>...]` LF payload LF, in one buffer.
    static func pub(_ number: String, _ payload: [UInt8], info: [InfoPair] = []) throws(ClientError) -> [UInt8] {
        try checkNumber(number)
        var line = "PUB \(number) \(payload.count)"
        if !info.isEmpty {
            do throws(InfoPair.Problem) {
                try InfoPair.check(info)
            } catch {
                throw .invalidInfo(error)
            }
            for pair in info { line += " \(pair.key)=\(pair.value)" }
        }
        var out = Array(line.utf8)
        out.reserveCapacity(out.count + payload.count + 2)
        out.append(UInt8(ascii: "\n"))
        out.append(contentsOf: payload)
        out.append(UInt8(ascii: "\n"))
        return out
    }

    /// `LIST [<pattern>]`, or with `kinds` the 1.1 form `LIST <pattern> kind` (lines that say plain or retained).
    /// A lone argument is always the pattern (`LIST kind` lists a number named `kind`), so all numbers with their
    /// kinds is `LIST > kind`.
    static func list(_ pattern: String?, kinds: Bool = false) throws(ClientError) -> [UInt8] {
        if let pattern { try checkPattern(pattern) }
        guard kinds else { return bytes(pattern.map { "LIST \($0)" } ?? "LIST") }
        return bytes("LIST \(pattern ?? ">") kind")
    }

    static let stats = bytes("STATS")
    static let ping = bytes("PING")
    static let quit = bytes("QUIT")

    private static func checkNumber(_ number: String) throws(ClientError) {
        do throws(Names.Problem) {
            try Names.checkNumber(number)
        } catch {
            throw .invalidName(number, error)
        }
    }

    private static func checkPattern(_ pattern: String) throws(ClientError) {
        do throws(Names.Problem) {
            try Names.checkPattern(pattern)
        } catch {
            throw .invalidName(pattern, error)
        }
    }

    private static func checkClientName(_ name: String) throws(ClientError) {
        do throws(ClientName.Problem) {
            try ClientName.check(name)
        } catch {
            throw .invalidClientName(name, error)
        }
    }

    private static func bytes(_ line: String) -> [UInt8] {
        var out = Array(line.utf8)
        out.append(UInt8(ascii: "\n"))
        return out
    }
}
