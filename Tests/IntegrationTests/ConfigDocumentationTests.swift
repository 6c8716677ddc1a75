import Foundation
import XCTest

/// config/subd.yaml documents the configuration once and truly: every key the loader's table has (as
/// `subd --print-config-keys` prints it) appears in the file exactly once, with the loader's default, and the file
/// shows no key the loader does not read. The file's convention is stated at its top; ``DocumentedKeys`` reads it.
final class ConfigDocumentationTests: XCTestCase {
    func testConfigFileDocumentsEveryKeyOnceWithItsDefault() throws {
        let table = try Self.keyTable()
        XCTAssertGreaterThan(table.count, 20, "subd --print-config-keys printed too few keys: \(table)")
        let text = try String(contentsOf: Self.configFile, encoding: .utf8)
        let problems = DocumentedKeys.problems(of: text, against: table)
        XCTAssertTrue(problems.isEmpty, "\n" + problems.joined(separator: "\n"))
    }

    /// The keys the file sets load as they are (so the defaults shown are values subd takes).
    func testConfigFileStartsSubd() throws {
        try assertSubdStarts(
            config: Self.configFile, environment: ["STATE_DIRECTORY": String?.none], "config/subd.yaml")
    }

    /// The check itself catches a wrong default, a key gone from the file, an unknown key and a key shown twice.
    func testTheCheckNamesTheKeyThatIsWrong() throws {
        let table = try Self.keyTable()
        let text = try String(contentsOf: Self.configFile, encoding: .utf8)
        // Each edit of the file, and the problem the check must name for it.
        let edits: [(old: String, new: String, problem: String)] = [
            ("\nmax_line: 65536\n", "\nmax_line: 65535\n", "`max_line` shows 65535, but subd's default is 65536"),
            ("\n# state_dir: /var/lib/subd\n", "\n# state_dir is /var/lib/subd\n", "does not document `state_dir`"),
            ("\n#   ack: all ", "\n#   ack: local ", "`cluster.ack` shows local, but subd's default is all"),
            ("\nlog_level: info\n", "\nlog_level: info\n# log_levels: info\n", "`log_levels` is not a key subd reads"),
            ("\nlog_level: info\n", "\nlog_level: info\n# log_level: info\n", "documents `log_level` 2 times"),
            ("\n# state_dir: /var/lib/subd\n", "\nstate_dir: /var/lib/subd\n", "`state_dir` has no default"),
        ]
        for edit in edits {
            XCTAssertTrue(text.contains(edit.old), "config/subd.yaml has no '\(edit.old)' to change")
            let problems = DocumentedKeys.problems(
                of: text.replacingOccurrences(of: edit.old, with: edit.new), against: table)
            XCTAssertTrue(problems.contains { $0.contains(edit.problem) }, "\(edit.problem): \(problems)")
        }
    }

    // MARK: Helpers

    /// config/subd.yaml of this repository, found from this file's own path (Tests/IntegrationTests/...).
    static var configFile: URL {
        URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent()  // IntegrationTests
            .deletingLastPathComponent()  // Tests
            .deletingLastPathComponent()  // repository root
            .appendingPathComponent("config").appendingPathComponent("subd.yaml")
    }

    /// The loader's table, from `subd --print-config-keys`.
    static func keyTable() throws -> [DocumentedKeys.TableKey] {
        let child = try ChildProcess(
            executable: try BinaryLocator.executable("subd"), arguments: ["--print-config-keys"],
            environment: Daemon.environment(), label: "subd --print-config-keys")
        defer { child.kill9IfRunning() }
        let status = child.waitForExit(timeout: 10)
        _ = child.stdout.waitForEnd(timeout: 5)
        guard status == 0 else {
            throw HarnessError.process("subd --print-config-keys exited with \(String(describing: status))")
        }
        return try child.stdout.text.split(separator: "\n").map { line in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 3, let space = fields[2].firstIndex(of: " ") else {
                throw HarnessError.process("subd --print-config-keys printed a line without 3 fields: \(line)")
            }
            let word = fields[2][..<space]
            let rest = String(fields[2][fields[2].index(after: space)...])
            switch word {
            case "default": return DocumentedKeys.TableKey(name: fields[0], defaultValue: rest)
            case "unset": return DocumentedKeys.TableKey(name: fields[0], defaultValue: nil)
            default: throw HarnessError.process("subd --print-config-keys: neither default nor unset: \(line)")
            }
        }
    }
}

/// Reads the keys config/subd.yaml documents, by the convention stated at its top: a key line is `key: value`, or
/// commented out `# key: value` (a `#` and one space, then the line as written); nested keys are indented under their
/// parent, the fields of a list entry after `- `; a value that is an example may end with `# default: <default>`.
/// Any other comment is prose. Lists are written in flow style (`["a", "b"]`).
enum DocumentedKeys {
    /// A key of the loader's table.
    struct TableKey {
        /// `max_line`, `cluster.node`, `users[].name`.
        var name: String
        /// The default as the file writes it; nil when the key has none (unset until given).
        var defaultValue: String?
    }

    /// A key line of the file.
    struct Line {
        /// The key's full name, as the table names it.
        var name: String
        /// 1-based.
        var number: Int
        var isCommentedOut: Bool
        /// The value shown, without a trailing comment.
        var value: String
        /// What a trailing `# default: ...` says.
        var statedDefault: String?
    }

    /// Every way the file departs from the table, one line each naming the key; empty when it documents it truly.
    static func problems(of text: String, against table: [TableKey]) -> [String] {
        let (lines, unreadable) = keyLines(of: text)
        var problems = unreadable
        let byName = Dictionary(table.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        let documented = Dictionary(grouping: lines, by: \.name)
        for key in table {
            let shown = documented[key.name] ?? []
            if shown.isEmpty {
                problems.append(
                    "config/subd.yaml does not document `\(key.name)`, a key subd reads ("
                        + (key.defaultValue.map { "default \($0)" } ?? "no default") + ")")
            } else if shown.count > 1 {
                problems.append(
                    "config/subd.yaml documents `\(key.name)` \(shown.count) times (lines "
                        + shown.map { String($0.number) }.joined(separator: ", ") + "): once only")
            }
        }
        for line in lines {
            let place = "config/subd.yaml:\(line.number):"
            guard let key = byName[line.name] else {
                problems.append("\(place) `\(line.name)` is not a key subd reads (subd --print-config-keys)")
                continue
            }
            guard let expected = key.defaultValue else {
                if !line.isCommentedOut {
                    problems.append(
                        "\(place) `\(line.name)` has no default, so it is commented out: `# \(line.name): <example>`")
                }
                if let stated = line.statedDefault {
                    problems.append("\(place) `\(line.name)` says default: \(stated), but it has no default")
                }
                continue
            }
            if let stated = line.statedDefault {
                if stated != expected {
                    problems.append(
                        "\(place) `\(line.name)` says default: \(stated), but subd's default is \(expected)")
                } else if !line.isCommentedOut {
                    problems.append("\(place) `\(line.name)` is set to an example: show the default \(expected)")
                }
            } else if line.value != expected {
                problems.append("\(place) `\(line.name)` shows \(line.value), but subd's default is \(expected)")
            }
        }
        return problems
    }

    /// The key lines of `text`, and the lines that are neither a key nor a comment.
    static func keyLines(of text: String) -> (lines: [Line], problems: [String]) {
        var lines: [Line] = []
        var problems: [String] = []
        // The keys that enclose the current line: their column and full name.
        var parents: [(column: Int, name: String)] = []
        var lists: Set<String> = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            guard !raw.allSatisfy({ $0 == " " }) else { continue }
            let isCommentedOut = raw.hasPrefix("# ")
            if raw.hasPrefix("#") && !isCommentedOut { continue }
            let rest = isCommentedOut ? raw.dropFirst(2) : raw[...]
            let indent = rest.prefix { $0 == " " }.count
            var body = rest.dropFirst(indent)
            if body.hasPrefix("#") { continue }
            let isListEntry = body.hasPrefix("- ")
            if isListEntry { body = body.dropFirst(2) }
            let name = body.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
            let afterName = body.dropFirst(name.count)
            guard !name.isEmpty, afterName.hasPrefix(":"), afterName.dropFirst().first.map({ $0 == " " }) ?? true else {
                if !isCommentedOut {
                    problems.append(
                        "config/subd.yaml:\(number): neither `key: value` nor a comment (lists in flow style)")
                }
                continue
            }
            let column = indent + (isListEntry ? 2 : 0)
            while let last = parents.last, last.column >= column { parents.removeLast() }
            var fullName = String(name)
            if let parent = parents.last?.name {
                if isListEntry { lists.insert(parent) }
                fullName = parent + (lists.contains(parent) ? "[]." : ".") + name
            }
            parents.append((column, fullName))
            let (value, comment) = splitComment(afterName.dropFirst())
            let prefix = "default: "
            lines.append(
                Line(
                    name: fullName, number: number, isCommentedOut: isCommentedOut, value: value,
                    statedDefault: comment.hasPrefix(prefix) ? String(comment.dropFirst(prefix.count)) : nil))
        }
        return (lines, problems)
    }

    /// A value and its trailing comment (after ` #` outside double quotes), both trimmed.
    private static func splitComment(_ text: Substring) -> (value: String, comment: String) {
        var inQuotes = false
        var previous: Character = " "
        for index in text.indices {
            let character = text[index]
            if character == "\"" && previous != "\\" { inQuotes.toggle() }
            if character == "#" && !inQuotes && previous == " " {
                return (trimmed(text[..<index]), trimmed(text[text.index(after: index)...]))
            }
            previous = character
        }
        return (trimmed(text), "")
    }

    private static func trimmed(_ text: Substring) -> String {
        text.trimmingCharacters(in: .whitespaces)
    }
}
