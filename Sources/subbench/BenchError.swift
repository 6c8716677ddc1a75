import Glibc

/// Everything that can stop a benchmark run, each with a message a person can act on.
enum BenchError: Error, CustomStringConvertible {
    /// The command line is wrong; the text says what to change.
    case usage(String)
    /// A TCP connection to the server could not be opened.
    case connect(target: String, errno: Int32)
    /// A system call on an open connection failed.
    case io(what: String, errno: Int32)
    /// The server closed a connection while the benchmark still needed it.
    case connectionClosed(String)
    /// The server sent bytes that break the line protocol.
    case protocolViolation(String)
    /// The server answered a setup command (`CREATE`, `SUB`) with `-ERR`.
    case refused(command: String, reply: String)
    /// The subd binary could not be started or did not report its port.
    case daemon(String)
    /// A system limit (open files) is too low for the run; the text says which and what to change.
    case limit(String)
    /// `--tls` could not be set up (the throwaway certificate, the TLS context) or a TLS session failed; the text
    /// says what and, for OpenSSL's failures, its reasons.
    case tls(String)

    var description: String {
        switch self {
        case .usage(let text):
            return text
        case .connect(let target, let code):
            return "cannot connect to \(target): \(errnoText(code)) (is subd running?)"
        case .io(let what, let code):
            return "\(what) failed: \(errnoText(code))"
        case .connectionClosed(let what):
            return "the server closed the connection \(what)"
        case .protocolViolation(let text):
            return "protocol violation from the server: \(text)"
        case .refused(let command, let reply):
            return "the server refused '\(command)': \(reply)"
        case .daemon(let text), .limit(let text):
            return text
        case .tls(let text):
            return "TLS: \(text)"
        }
    }
}

/// The C library's text for an errno value, e.g. "connection refused".
func errnoText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return String(cString: text).lowercased()
}

/// Calls `body` with the storage of `bytes`, passing its error on as it is (`withUnsafeBytes` rethrows untyped).
func withBytes(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(BenchError) -> Void) throws(BenchError) {
    let failure: BenchError? = bytes.withUnsafeBytes { buffer in
        do throws(BenchError) {
            try body(buffer)
            return nil
        } catch {
            return error
        }
    }
    if let failure { throw failure }
}
