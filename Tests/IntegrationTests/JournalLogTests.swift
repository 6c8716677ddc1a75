import Foundation
import Glibc
import XCTest

/// When stderr is the journal (`JOURNAL_STREAM` names stderr's device and inode), each log line starts with its
/// sd-daemon.h priority, so `journalctl -p warning` works.
final class JournalLogTests: IntegrationTestCase {
    /// Shell code that points `JOURNAL_STREAM` at the process's own stderr, as systemd does for a service whose
    /// output goes to the journal.
    private static let stderrAsJournal = #"export JOURNAL_STREAM="$(stat -L -c %d:%i /proc/self/fd/2)""#

    func testEveryLineCarriesItsPriorityWhenStderrIsTheJournal() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["A"], logLevel: "debug"), shellPrefix: Self.stderrAsJournal)
        _ = try connect(daemon)
        try daemon.child.stderr.waitFor(substring: "client connected", timeout: 5)
        // A changed unix_socket on reload is a warning (it takes a restart); a file that does not parse is an error.
        let socketPath = daemon.directory.appendingPathComponent("later.sock").path
        try DaemonConfig(numbers: ["A"], logLevel: "debug", extraLines: ["unix_socket: \"\(socketPath)\""]).yaml
            .write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        try daemon.child.stderr.waitFor(substring: "configuration reloaded", timeout: 5)
        try "max_line: abc\n".write(to: daemon.configFile, atomically: true, encoding: .utf8)
        daemon.child.send(signal: SIGHUP)
        try daemon.child.stderr.waitFor(substring: "reload refused", timeout: 5)

        let lines = daemon.log.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines.contains { $0.hasPrefix("<6>info listening on tcp 127.0.0.1:") }, daemon.log)
        XCTAssertTrue(lines.contains { $0.hasPrefix("<7>debug client connected") }, daemon.log)
        XCTAssertTrue(lines.contains { $0.hasPrefix("<4>warning reload: unix_socket changed") }, daemon.log)
        XCTAssertTrue(lines.contains { $0.hasPrefix("<3>error reload refused") }, daemon.log)
        for line in lines {
            XCTAssertNotNil(
                line.firstMatch(of: #/^<[2-7]>(debug|info|notice|warning|error|critical) /#),
                "a journal line without its priority: \(line)")
        }
    }

    func testPlainTimestampedLinesWhenJournalStreamIsNotStderr() throws {
        // Inherited from a parent whose stderr was the journal, but this stderr is a pipe.
        let daemon = try startDaemon(environment: ["JOURNAL_STREAM": "1:1"])
        let lines = daemon.log.split(separator: "\n")
        XCTAssertFalse(lines.isEmpty)
        for line in lines {
            XCTAssertNotNil(
                line.firstMatch(of: #/^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z (info|notice) /#),
                "expected a timestamped line: \(line)")
        }
    }
}
