import Foundation
import XCTest

/// The config file's `users:` list and `subd hash-secret`, which makes the `secret_hash` for it: a real subd starts
/// with users whose hashes the real verb printed, and a bad `users:` block stops it at start with one line that
/// names the user and the field.
final class UsersConfigTests: IntegrationTestCase {
    // MARK: subd hash-secret

    func testHashSecretPrintsAnEncodedHashOfTheFirstLine() throws {
        let result = try hashSecret(stdin: "s3cret!\n")
        XCTAssertEqual(result.status, 0, result.stderr)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(lines.count, 2, "one line and its newline: \(result.stdout.debugDescription)")
        let fields = lines[0].split(separator: "$", omittingEmptySubsequences: false)
        XCTAssertEqual(fields.count, 4, result.stdout)
        XCTAssertEqual(fields.first, "pbkdf2-sha256")
        XCTAssertEqual(fields.count == 4 ? fields[1] : nil, "100000")
        XCTAssertEqual(fields.count == 4 ? Data(base64Encoded: String(fields[2]))?.count : nil, 16, "salt bytes")
        XCTAssertEqual(fields.count == 4 ? Data(base64Encoded: String(fields[3]))?.count : nil, 32, "hash bytes")
        XCTAssertFalse(result.stdout.contains("s3cret!"), "the clear secret is not printed")
    }

    func testHashSecretOfOneSecretTwiceGivesTwoSaltsAndTheLastNewlineIsOptional() throws {
        let first = try hashSecret(stdin: "same\n", arguments: ["--iterations", "10000"])
        let second = try hashSecret(stdin: "same", arguments: ["--iterations=10000"])
        XCTAssertEqual([first.status, second.status], [0, 0], first.stderr + second.stderr)
        XCTAssertTrue(first.stdout.hasPrefix("pbkdf2-sha256$10000$"), first.stdout)
        XCTAssertNotEqual(first.stdout, second.stdout, "each hash has its own random salt")
    }

    func testHashSecretRefusesASecretHELLOCouldNotCarry() throws {
        let cases = [
            ("", "the secret is empty"), ("\n", "the secret is empty"), ("two words\n", "holds a space"),
            ("line one\nline two\n", "holds a space"), ("first\nsecond\n", "holds the control character 0xa"),
        ]
        for (stdin, words) in cases {
            let result = try hashSecret(stdin: stdin)
            XCTAssertEqual(result.status, 65, "\(stdin.debugDescription): \(result.stderr)")
            XCTAssertEqual(result.stdout, "", "nothing printed for \(stdin.debugDescription)")
            XCTAssertTrue(result.stderr.contains(words), "\(stdin.debugDescription): \(result.stderr)")
        }
    }

    func testHashSecretUsageErrorsExit64() throws {
        for arguments in [["--bogus"], ["--iterations"], ["--iterations", "12"], ["--iterations", "many"]] {
            let result = try hashSecret(stdin: "s3cret!\n", arguments: arguments)
            XCTAssertEqual(result.status, 64, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("usage: subd hash-secret"), "\(arguments): \(result.stderr)")
        }
        let help = try hashSecret(stdin: "", arguments: ["--help"])
        XCTAssertEqual(help.status, 0)
        XCTAssertTrue(help.stdout.contains("usage: subd hash-secret"), help.stdout)
    }

    // MARK: users: in the config file

    func testSubdStartsWithUsersWhoseHashesHashSecretMade() throws {
        let alice = try madeHash("alice-secret")
        let bob = try madeHash("bob-secret")
        let config = DaemonConfig(
            maxLine: 300,
            extraLines: [
                "users:",
                "  - name: alice",
                "    secret_hash: \"\(alice)\"",
                "    publish: [\"SCIENCE.>\", \"NEWS\"]",
                "    subscribe:",
                "      - \"SCIENCE.>\"",
                "      - \"*.alerts\"",
                "    deny_publish: [\"SCIENCE.secret.>\"]",
                "    create_remove: true",
                "  - name: bob",
                "    secret_hash: '\(bob)'",
                "    subscribe: [\">\"]",
                "    deny_subscribe: [\"SCIENCE.secret.>\"]",
                "  - name: carol",
                "    secret_hash: \(alice)",
                "    publish: []",
                "    create_remove: false",
            ])
        let daemon = try startDaemon(config)
        let client = try connect(daemon)
        assertOpen(client, "a daemon with three users")
        // The keys beside users: are still read (the file provider gets the document without users:).
        try client.sendLine("PING " + String(repeating: "x", count: 400))
        assertError(try client.readReply(), "TOOBIG", "max_line: 300 next to users:")
    }

    func testAnEmptyUsersListIsNoUsers() throws {
        let daemon = try startDaemon(DaemonConfig(extraLines: ["users: []"]))
        assertOpen(try connect(daemon), "users: []")
        let other = try startDaemon(DaemonConfig(extraLines: ["users:"]))
        assertOpen(try connect(other), "users: with nothing after it")
    }

    func testABadUsersBlockStopsTheStartWithOneLineNamingUserAndField() throws {
        let hash = try madeHash("s3cret!")
        let alice = ["  - name: alice", "    secret_hash: \"\(hash)\""]
        let cases: [(lines: [String], words: [String])] = [
            (alice + ["    publsh: [\"A\"]"], ["users[0] (alice): unknown field 'publsh'", "secret_hash"]),
            (alice + ["    publish: [\"A..B\"]"], ["users[0] (alice): publish pattern \"A..B\" has an empty token"]),
            (alice + ["    deny_subscribe: [\"A.>.B\"]"], ["users[0] (alice): deny_subscribe pattern \"A.>.B\""]),
            (alice + ["    subscribe: \"A.>\""], ["users[0] (alice): subscribe must be a list of patterns"]),
            (alice + ["    create_remove: sometimes"], ["users[0] (alice): create_remove must be true or false"]),
            (
                alice + ["  - name: bob", "    secret_hash: \"\(hash)\""] + alice,
                ["users[2] (alice): name is also users[0]'s"]
            ),
            (
                ["  - name: alice", "    secret_hash: \"pbkdf2-sha256$100000$abc\""],
                ["users[0] (alice): secret_hash has 3 '$'-separated fields", "subd hash-secret"]
            ),
            (
                ["  - name: alice", "    secret_hash: \"\(hash.dropLast(4))\""],
                ["users[0] (alice): secret_hash has a hash that is not padded base64 of 32 bytes"]
            ),
            (["  - name: alice", "    secret_hash: s3cret!"], ["users[0] (alice): secret_hash has 1 '$'-separated"]),
            (["  - name: alice"], ["users[0] (alice): has no secret_hash"]),
            (["  - secret_hash: \"\(hash)\""], ["users[0]: has no name"]),
            (
                ["  - name: \"two words\"", "    secret_hash: \"\(hash)\""],
                ["users[0] (two words): name holds a space"]
            ),
            (["  - alice"], ["users[0]: must be a mapping"]),
        ]
        for (lines, words) in cases {
            let result = try runSubd(DaemonConfig(extraLines: ["users:"] + lines))
            let context = lines.joined(separator: "\n")
            XCTAssertEqual(result.status, 78, "\(context)\n\(result.lines)")
            XCTAssertEqual(result.lines.count, 1, "one line for:\n\(context)\ngot: \(result.lines)")
            for word in words {
                XCTAssertTrue(
                    result.lines.first?.contains(word) == true, "'\(word)' for:\n\(context)\ngot: \(result.lines)")
            }
            XCTAssertFalse(result.lines.joined().contains("s3cret!"), "no clear secret in the error: \(result.lines)")
        }
        let notAList = try runSubd(DaemonConfig(extraLines: ["users: alice"]))
        XCTAssertEqual(notAList.status, 78)
        XCTAssertTrue(notAList.lines.first?.contains("users: must be a list of users") == true, "\(notAList.lines)")
    }

    // MARK: Helpers

    /// Runs `subd hash-secret` with `stdin`; its exit status and output.
    private func hashSecret(stdin: String, arguments: [String] = []) throws -> (
        status: Int32?, stdout: String, stderr: String
    ) {
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subd"), arguments: ["hash-secret"] + arguments,
            stdinPipe: true, label: "subd hash-secret")
        defer { child.kill9IfRunning() }
        try child.writeStdinAndClose(Array(stdin.utf8))
        let status = child.waitForExit(timeout: 10)
        _ = child.stdout.waitForEnd(timeout: 5)
        _ = child.stderr.waitForEnd(timeout: 5)
        return (status, child.stdout.text, child.stderr.text)
    }

    /// The `secret_hash` `subd hash-secret` prints for `secret`.
    private func madeHash(_ secret: String) throws -> String {
        let result = try hashSecret(stdin: secret + "\n")
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.trimmingCharacters(in: .newlines)
    }

    /// Starts subd with `config` and waits for it to exit (a bad config); its status and stderr lines.
    private func runSubd(_ config: DaemonConfig) throws -> (status: Int32?, lines: [String]) {
        let file = URL(fileURLWithPath: "/tmp/subd-it-users-\(UUID().uuidString.prefix(8)).yaml")
        try config.yaml.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subd"),
            arguments: ["--config", file.path, "--listen", "127.0.0.1:0"], environment: Daemon.environment(),
            label: "subd")
        defer { child.kill9IfRunning() }
        let status = child.waitForExit(timeout: 10)
        _ = child.stderr.waitForEnd(timeout: 5)
        return (status, child.stderr.text.split(separator: "\n").map(String.init))
    }
}
