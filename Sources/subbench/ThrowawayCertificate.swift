import Foundation
import Glibc

/// The certificate and key of a subd that `subbench --tls --subd PATH` starts: a self-signed P-256 certificate for
/// `127.0.0.1` and `localhost`, valid one day, made with the `openssl` command in a fresh temporary directory that
/// `remove()` deletes at the end of the run.
struct ThrowawayCertificate: Sendable {
    /// The temporary directory holding both files (under `$TMPDIR`, else `/tmp`).
    let directory: String

    /// The PEM certificate: subd's `tls_cert`, and the one CA the bench clients trust.
    var certificatePath: String { directory + "/cert.pem" }

    /// The PEM private key: subd's `tls_key`.
    var keyPath: String { directory + "/key.pem" }

    /// Makes the directory and runs `openssl req -x509 ...` in it; throws when there is no `openssl` command or it
    /// fails (with its last stderr lines).
    static func make() throws(BenchError) -> ThrowawayCertificate {
        guard let openssl = findInPath("openssl") else {
            throw .tls(
                "--tls needs the openssl command to make a throwaway certificate and there is none in PATH "
                    + "(Debian: apt-get install openssl; `make bench` installs it)")
        }
        let certificate = ThrowawayCertificate(directory: try makeDirectory())
        let process = Process()
        process.executableURL = URL(fileURLWithPath: openssl)
        process.arguments = [
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
            "-keyout", certificate.keyPath, "-out", certificate.certificatePath, "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
        ]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            certificate.remove()
            throw .tls("cannot start \(openssl): \(error)")
        }
        // openssl req writes a few lines at most: they fit the pipe, so reading after the exit cannot block it.
        process.waitUntilExit()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            certificate.remove()
            let lines = text.split(separator: "\n").suffix(5).joined(separator: "; ")
            throw .tls(
                "openssl req could not make the throwaway certificate (status \(process.terminationStatus))"
                    + (lines.isEmpty ? "" : ": \(lines)"))
        }
        return certificate
    }

    /// Deletes the directory and both files; a failure is of no interest (it is a temporary directory).
    func remove() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A new private directory `subbench-tls-XXXXXX` under `$TMPDIR` (else `/tmp`).
    private static func makeDirectory() throws(BenchError) -> String {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array((base + "/subbench-tls-XXXXXX").utf8CString)
        // mkdtemp fills in the X's of the NUL-terminated template in place; the array outlives the call.
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) != nil }
        guard made else { throw .io(what: "making a temporary directory in \(base)", errno: errno) }
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The first executable `name` in the directories of `$PATH`, if any.
    private static func findInPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}
