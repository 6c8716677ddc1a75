import SubscriptionWire

/// The commands whose arguments need more than one name.
extension LineParser {
    /// `PUB <number> <nbytes>[ <key>=<value>...]`: checks nbytes now (a size over `maxPayload`, however many digits
    /// it has, is `TOOBIG`), the number and the info pairs once the payload is consumed (so a bad one leaves the
    /// stream in step).
    func parsePublish(_ line: inout LineReader) -> LineOutcome {
        guard let number = line.word(), let size = line.word() else {
            return .failure(ErrorText.missingArgument(.pub))
        }
        var count = 0
        for byte in buffer[size] {
            guard byte >= ASCII.zero && byte <= ASCII.nine else {
                return .failure(ErrorText.invalidPayloadSize(buffer[size]))
            }
            // Saturates: a size of any length over the limit is TOOBIG, not a malformed number.
            let (times10, overflow1) = count.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - ASCII.zero))
            count = overflow1 || overflow2 ? .max : sum
        }
        guard count <= limits.maxPayload else {
            return .failure(ErrorText.payloadTooBig(buffer[size], limit: limits.maxPayload))
        }
        // Most PUBs carry no pairs: nothing to parse, nothing to keep.
        guard !line.isAtEnd else { return .publishHeader(number: number, count: count, info: .success([])) }
        return .publishHeader(number: number, count: count, info: parseInfoPairs(&line))
    }

    /// The `<key>=<value>` pairs after a `PUB`'s size, checked by the wire's rule (``InfoPair``).
    private func parseInfoPairs(_ line: inout LineReader) -> Result<[InfoPair], ProtocolError> {
        var pairs: [InfoPair] = []
        while let word = line.word() {
            guard let (key, value) = line.keyValue(word) else {
                return .failure(ErrorText.malformedInfoPair(buffer[word]))
            }
            guard pairs.count < InfoPair.maxCount else {
                var total = pairs.count + 1
                while line.word() != nil { total += 1 }
                return .failure(ErrorText.infoPair(.tooMany(total)))
            }
            do throws(InfoPair.Problem) {
                try InfoPair.checkKey(buffer[key])
                try InfoPair.checkValue(buffer[value])
            } catch {
                return .failure(ErrorText.infoPair(error))
            }
            let pair = InfoPair(
                key: String(decoding: buffer[key], as: UTF8.self), value: String(decoding: buffer[value], as: UTF8.self)
            )
            if pairs.contains(where: { $0.key == pair.key }) {
                return .failure(ErrorText.infoPair(.duplicateKey(pair.key)))
            }
            pairs.append(pair)
        }
        return .success(pairs)
    }

    /// `SEND <number> <text>`: the text is everything after the one space that follows the number.
    func parseSend(_ line: inout LineReader) -> LineOutcome {
        guard let numberRange = line.word() else { return .failure(ErrorText.missingArgument(.send)) }
        // `word()` stops on the space right after the number, or at the end of the line.
        guard line.position < line.end else { return .failure(ErrorText.missingSendText) }
        let text = (line.position + 1)..<line.end
        guard text.count <= limits.maxPayload else {
            return .failure(ErrorText.textTooBig(text.count, limit: limits.maxPayload))
        }
        switch name(line, numberRange, pattern: false) {
        case .success(let number): return .command(.send(number: number, payload: line.bytes[text]))
        case .failure(let error): return .failure(error)
        }
    }

    /// `PING [<text>]`: the text is the rest of the line after the verb and its spaces, kept as is.
    func parsePing(_ line: inout LineReader) -> LineOutcome {
        line.skipSpaces()
        let rest = line.rest
        guard !rest.isEmpty else { return .command(.ping(text: nil)) }
        return .command(.ping(text: String(decoding: buffer[rest], as: UTF8.self)))
    }

    /// `SUB <pattern> [from=<client-name>] [group=<group-name>]`, the keys in any order, each at most once; a group
    /// name follows the client-name rule.
    func parseSubscribe(_ line: inout LineReader) -> LineOutcome {
        guard let patternRange = line.word() else { return .failure(ErrorText.missingArgument(.sub)) }
        var from: String?
        var group: String?
        while let option = line.word() {
            guard let (key, value) = line.keyValue(option) else {
                return .failure(ErrorText.unexpectedArgument(.sub, buffer[option]))
            }
            guard let name = ClientName.validate(buffer[value]) else {
                return .failure(ErrorText.invalidClientName(buffer[value]))
            }
            if line.matches(key, "from") {
                guard from == nil else { return .failure(ErrorText.repeatedKey(.sub, "from")) }
                from = name
            } else if line.matches(key, "group") {
                guard group == nil else { return .failure(ErrorText.repeatedKey(.sub, "group")) }
                group = name
            } else {
                return .failure(ErrorText.unknownKey(.sub, buffer[key]))
            }
        }
        switch name(line, patternRange, pattern: true) {
        case .success(let pattern): return .command(.subscribe(pattern: pattern, from: from, group: group))
        case .failure(let error): return .failure(error)
        }
    }

    /// `LIST [<pattern> [kind]]`: one argument is always the pattern (so `LIST kind` lists a number named `kind`).
    func parseList(_ line: inout LineReader) -> LineOutcome {
        guard let patternRange = line.word() else { return .command(.list(pattern: nil, kinds: false)) }
        var kinds = false
        if let option = line.word() {
            guard line.isAtEnd else { return .failure(ErrorText.extraArgument(.list)) }
            guard line.matches(option, "kind") else {
                return .failure(ErrorText.unexpectedArgument(.list, buffer[option]))
            }
            kinds = true
        }
        switch name(line, patternRange, pattern: true) {
        case .success(let pattern): return .command(.list(pattern: pattern, kinds: kinds))
        case .failure(let error): return .failure(error)
        }
    }

    /// `CREATE <number> [retain]`.
    func parseCreate(_ line: inout LineReader) -> LineOutcome {
        guard let numberRange = line.word() else { return .failure(ErrorText.missingArgument(.create)) }
        var retained = false
        if let option = line.word() {
            guard line.isAtEnd else { return .failure(ErrorText.extraArgument(.create)) }
            guard line.matches(option, "retain") else {
                return .failure(ErrorText.unexpectedArgument(.create, buffer[option]))
            }
            retained = true
        }
        switch name(line, numberRange, pattern: false) {
        case .success(let number): return .command(.create(number: number, retained: retained))
        case .failure(let error): return .failure(error)
        }
    }

    /// `HELLO [name=<client-name>] [token=<secret>]`, keys in any order, each at most once.
    func parseHello(_ line: inout LineReader) -> LineOutcome {
        var name: String?
        var token: String?
        while let word = line.word() {
            guard let (key, value) = line.keyValue(word) else {
                return .failure(ErrorText.unexpectedArgument(.hello, buffer[word]))
            }
            if line.matches(key, "name") {
                guard name == nil else { return .failure(ErrorText.repeatedKey(.hello, "name")) }
                guard let client = ClientName.validate(buffer[value]) else {
                    return .failure(ErrorText.invalidClientName(buffer[value]))
                }
                name = client
            } else if line.matches(key, "token") {
                guard token == nil else { return .failure(ErrorText.repeatedKey(.hello, "token")) }
                guard !value.isEmpty, let secret = ClientName.printableUTF8(buffer[value]) else {
                    return .failure(ErrorText.invalidToken)
                }
                token = secret
            } else {
                return .failure(ErrorText.unknownKey(.hello, buffer[key]))
            }
        }
        return .command(.hello(name: name, token: token))
    }
}
