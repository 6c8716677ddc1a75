import ArgumentParser
import SubscriptionWire

/// Checks of command-line words with the wire's rules (SubscriptionWire), so a bad one is a usage error (exit 64)
/// that names the rule before anything is sent.
enum Check {
    /// A number.
    static func number(_ text: String) throws(ValidationError) {
        do throws(Names.Problem) {
            try Names.checkNumber(text)
        } catch {
            throw ValidationError("the number '\(text)' \(error)")
        }
    }

    /// A number or a pattern with wildcards.
    static func pattern(_ text: String) throws(ValidationError) {
        do throws(Names.Problem) {
            try Names.checkPattern(text)
        } catch {
            throw ValidationError("the pattern '\(text)' \(error)")
        }
    }

    /// A client name (`--name`, `--from`); `what` is how the message calls it.
    static func clientName(_ text: String, what: String) throws(ValidationError) {
        do throws(ClientName.Problem) {
            try ClientName.check(text)
        } catch {
            throw ValidationError("the \(what) '\(text)' \(error)")
        }
    }
}
