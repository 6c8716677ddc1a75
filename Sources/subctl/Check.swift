import ArgumentParser

/// Checks of command-line words, so a bad one is a usage error (exit 64) before anything is sent.
enum Check {
    /// The longest number or pattern the protocol allows, in bytes.
    static let maxNameLength = 200

    /// A number or pattern: a word of at most ``maxNameLength`` bytes.
    static func name(_ text: String, what: String) throws(ValidationError) {
        try word(text, what: what)
        guard text.utf8.count <= maxNameLength else {
            throw ValidationError("the \(what) '\(text)' is longer than \(maxNameLength) bytes")
        }
    }

    /// Non-empty, with no space and no control character.
    static func word(_ text: String, what: String) throws(ValidationError) {
        guard !text.isEmpty else { throw ValidationError("the \(what) is empty") }
        guard !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw ValidationError("the \(what) '\(text)' holds a space or a control character")
        }
    }
}
