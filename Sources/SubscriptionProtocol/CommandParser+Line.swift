import SubscriptionWire

/// What one command line turned out to be.
enum LineOutcome {
    /// Only spaces and CRs: skipped.
    case blank
    /// A complete command.
    case command(Command)
    /// A malformed command.
    case failure(ProtocolError)
    /// A valid `PUB` line: the payload of `count` bytes follows. `number` (absolute indexes) is not checked yet;
    /// `info` is the pairs, or the error to answer once the payload is consumed.
    case publishHeader(number: Range<Int>, count: Int, info: Result<[InfoPair], ProtocolError>)
}

/// Parses one command line of the parser's buffer: the line-level half of ``CommandParser``, kept in its own small
/// value (the buffer's reference and the limits) so that ``CommandParser/next()``, which mutates the parser, calls it
/// without copying the whole parser first (a non-mutating method of the parser, called from a mutating one, made a
/// 144-byte copy with its retains and releases on every command).
struct LineParser {
    /// The parser's buffer (shared storage, not a copy).
    let buffer: [UInt8]
    /// The limits in force.
    let limits: ProtocolLimits
}

extension LineParser {
    /// Parses the command line in `buffer[content]` (LF and CR already dropped).
    /// The verb that `content`'s first word spells, or nil.
    func verb(of content: Range<Int>) -> Verb? {
        var line = LineReader(bytes: buffer, position: content.lowerBound, end: content.upperBound)
        guard let verbRange = line.word() else { return nil }
        return Verb.find(buffer, verbRange)
    }

    func parseLine(_ content: Range<Int>) -> LineOutcome {
        var line = LineReader(bytes: buffer, position: content.lowerBound, end: content.upperBound)
        // Only a line that starts with a space or a CR can be blank: a command's line is not scanned for that.
        if content.isEmpty { return .blank }
        let first = buffer[content.lowerBound]
        if (first == ASCII.space || first == ASCII.cr) && line.isBlank { return .blank }
        guard let verbRange = line.word() else { return .blank }
        guard let verb = Verb.find(buffer, verbRange) else {
            return .failure(ErrorText.unknownVerb(buffer[verbRange]))
        }
        switch verb {
        case .pub: return parsePublish(&line)
        case .send: return parseSend(&line)
        case .ping: return parsePing(&line)
        case .sub: return parseSubscribe(&line)
        case .unsub: return oneName(&line, verb, pattern: true).map { .unsubscribe(pattern: $0) }
        case .hello: return parseHello(&line)
        case .create: return parseCreate(&line)
        case .get: return oneName(&line, verb, pattern: false).map { .get(number: $0) }
        case .remove: return oneName(&line, verb, pattern: false).map { .remove(number: $0) }
        case .list: return parseList(&line)
        case .stats: return line.isAtEnd ? .command(.stats) : .failure(ErrorText.extraArgument(verb))
        case .quit: return line.isAtEnd ? .command(.quit) : .failure(ErrorText.extraArgument(verb))
        }
    }

    /// A number (or, with `pattern`, a pattern) in `line[range]`, checked with `Names.check`.
    func name(_ line: LineReader, _ range: Range<Int>, pattern: Bool) -> Result<String, ProtocolError> {
        let bytes = line.bytes[range]
        do {
            try Names.check(bytes, allowWildcards: pattern)
        } catch {
            return .failure(CommandParser.invalidName(pattern ? "pattern" : "number", bytes, error))
        }
        return .success(String(decoding: bytes, as: UTF8.self))
    }

    /// The single name argument of CREATE, REMOVE and UNSUB.
    func oneName(_ line: inout LineReader, _ verb: Verb, pattern: Bool) -> Result<String, ProtocolError> {
        guard let range = line.word() else { return .failure(ErrorText.missingArgument(verb)) }
        guard line.isAtEnd else { return .failure(ErrorText.extraArgument(verb)) }
        return name(line, range, pattern: pattern)
    }
}

extension Result where Success == String, Failure == ProtocolError {
    /// Turns a checked name into the command built from it.
    fileprivate func map(_ makeCommand: (String) -> Command) -> LineOutcome {
        switch self {
        case .success(let name): return .command(makeCommand(name))
        case .failure(let error): return .failure(error)
        }
    }
}
