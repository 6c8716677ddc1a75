import ArgumentParser
import SubscriptionWire

/// `publish --info KEY=VALUE`: the info pairs of a publication (docs/PROTOCOL.md, Info pairs).
///
/// The value is percent-encoded with ``InfoPair/percentEncoded(_:)``, which changes only the bytes a value may not
/// hold (space, control characters, `=`) and `%` itself, so any text travels and `listen --json` decodes it back.
enum InfoOption {
    /// The pairs of the `--info` arguments, in the order given.
    ///
    /// - Throws: a `ValidationError` (exit 64) naming the rule an argument breaks.
    static func pairs(_ arguments: [String]) throws(ValidationError) -> [InfoPair] {
        var pairs: [InfoPair] = []
        for argument in arguments {
            guard let equals = argument.utf8.firstIndex(of: UInt8(ascii: "=")) else {
                throw ValidationError("--info '\(argument)' is not KEY=VALUE")
            }
            let key = String(Substring(argument.utf8[..<equals]))
            let value = String(Substring(argument.utf8[argument.utf8.index(after: equals)...]))
            let pair = InfoPair(key: key, value: InfoPair.percentEncoded(value))
            do throws(InfoPair.Problem) {
                try InfoPair.checkKey(pair.key.utf8)
                try InfoPair.checkValue(pair.value.utf8)
            } catch {
                throw ValidationError("--info '\(argument)': \(error)")
            }
            pairs.append(pair)
        }
        do throws(InfoPair.Problem) {
            try InfoPair.check(pairs)
        } catch {
            throw ValidationError("--info: \(error)")
        }
        return pairs
    }
}
