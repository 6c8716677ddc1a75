import TestSupport
import XCTest

@testable import SubscriptionProtocol

/// Many commands sent back to back, with binary PUB payloads and mixed line endings.
final class ParserPipelineTests: XCTestCase {
    func testMixedPipeline() {
        let binary = (0...255).map { UInt8($0) }
        let lfs: [UInt8] = [0x0A, 0x0A, 0x0D, 0x0A, 0x41, 0x0A]
        var input: [UInt8] = []
        input += bytes("HELLO name=pub1\r\n")
        input += bytes("CREATE SCIENCE\n")
        input += bytes("SUB SCIENCE.> from=pub1\r\n")
        input += bytes("PUB SCIENCE 256\n") + binary + bytes("\n")
        input += bytes("PUB SCIENCE.physics 6\r\n") + lfs + bytes("\r\n")
        input += bytes("SEND SCIENCE  spaced text \r\n")
        input += bytes("\r\n")
        input += bytes("PUB SCIENCE 0\n\n")
        input += bytes("PING are you there\n")
        input += bytes("BOGUS verb\n")
        input += bytes("PUB SCIENCE 3\r\nPUB\r\n")
        input += bytes("LIST\nSTATS\r\nUNSUB SCIENCE.>\nREMOVE SCIENCE\nQUIT\n")
        assertParses(
            input,
            [
                .success(.hello(name: "pub1", token: nil)),
                .success(.create(number: "SCIENCE", retained: false)),
                .success(.subscribe(pattern: "SCIENCE.>", from: "pub1", group: nil)),
                publish("SCIENCE", binary),
                publish("SCIENCE.physics", lfs),
                send("SCIENCE", " spaced text "),
                publish("SCIENCE", []),
                .success(.ping(text: "are you there")),
                .failure(ProtocolError(.unknown, "unknown command 'BOGUS'")),
                publish("SCIENCE", bytes("PUB")),
                .success(.list(pattern: nil, kinds: false)),
                .success(.stats),
                .success(.unsubscribe(pattern: "SCIENCE.>")),
                .success(.remove(number: "SCIENCE")),
                .success(.quit),
            ])
    }

    /// Random pipelines of valid commands (and a few that fail but keep the connection), built together with
    /// the results they must give.
    func testRandomPipelines() {
        for seed in UInt64(0)..<60 {
            var generator = SeededGenerator(seed: 1000 + seed)
            var input: [UInt8] = []
            var expected: [ParseResult] = []
            for _ in 0..<Int.random(in: 1...40, using: &generator) {
                let (command, result) = Self.randomCommand(using: &generator)
                input += command
                expected.append(contentsOf: result)
            }
            let results = parseInAllModes(input, seeds: (seed * 7)..<(seed * 7 + 7))
            XCTAssertEqual(results, expected, "seed \(seed)")
        }
    }

    private static let numbers = ["A", "SCIENCE", "SCIENCE.physics", "a.b.c", "ÉTÉ.x", "n-1_2"]
    private static let patterns = ["*", ">", "SCIENCE.*", "a.*.c", "a.>", "A"]

    private static func randomCommand(using generator: inout SeededGenerator) -> ([UInt8], [ParseResult]) {
        let end = Bool.random(using: &generator) ? "\n" : "\r\n"
        let number = numbers.randomElement(using: &generator)!
        let pattern = patterns.randomElement(using: &generator)!
        switch Int.random(in: 0..<12, using: &generator) {
        case 0, 1, 2:
            let count = Int.random(in: 0...600, using: &generator)
            let payload = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            return (bytes("PUB \(number) \(count)\(end)") + payload + bytes(end), [publish(number, payload)])
        case 3:
            let text = String(repeating: " x", count: Int.random(in: 0...20, using: &generator))
            return (bytes("SEND \(number) \(text)\(end)"), [send(number, text)])
        case 4:
            return (
                bytes("sub \(pattern) from=me\(end)"), [.success(.subscribe(pattern: pattern, from: "me", group: nil))]
            )
        case 5:
            return (bytes("UNSUB \(pattern)\(end)"), [.success(.unsubscribe(pattern: pattern))])
        case 6:
            return (bytes("PING  \(number) \(end)"), [.success(.ping(text: "\(number) "))])
        case 7:
            return (bytes("   \(end)"), [])
        case 8:
            return (bytes("CREATE \(number)\(end)"), [.success(.create(number: number, retained: false))])
        case 9:
            // An invalid number fails after its payload is consumed; the next command must still parse.
            let wildcard = patterns.filter { $0 != "A" }.randomElement(using: &generator)!
            let problem = "has a wildcard token ('*' or '>'), which a number may not have"
            let error = ProtocolError(.name, "invalid number '\(wildcard)': \(problem)")
            return (bytes("PUB \(wildcard) 2\(end)ab\(end)"), [.failure(error)])
        case 10:
            return (bytes("LIST \(pattern)\(end)"), [.success(.list(pattern: pattern, kinds: false))])
        default:
            return (bytes("NOPE\(end)"), [.failure(ProtocolError(.unknown, "unknown command 'NOPE'"))])
        }
    }
}
