import TestSupport
import XCTest

/// Many commands per write, commands split into tiny writes, and replies never split by pushes.
final class PipeliningTests: IntegrationTestCase {
    private let script =
        "CREATE P\nSUB P\nPING one\nSEND P hello\nPUB P 3\na\nc\nLIST\nBOGUS\nUNSUB P\nSEND P gone\n"
        + "PING two\nQUIT\n"

    /// Reads the replies and pushes the script above must produce, then checks the connection closed.
    private func checkScriptOutcome(_ client: LineClient, file: StaticString = #filePath, line: UInt = #line) throws {
        let expected: [Reply] = [
            .ok("created"), .ok(), .status("PONG one"), .ok("1"), .ok("1"), .list(["P 1"]),
            .error(code: "UNKNOWN", message: ""), .ok(), .ok("0"), .status("PONG two"), .ok("bye"),
        ]
        for (index, want) in expected.enumerated() {
            let got = try client.readReply()
            if want.errorCode != nil {
                XCTAssertEqual(got.errorCode, want.errorCode, "reply \(index + 1)", file: file, line: line)
            } else {
                XCTAssertEqual(got, want, "reply \(index + 1)", file: file, line: line)
            }
        }
        XCTAssertEqual(
            client.takePushes(),
            [.message(Message("P", text: "hello")), .message(Message("P", text: "a\nc"))],
            file: file, line: line)
        try client.expectClosed()
    }

    func testManyCommandsInOneWriteAreAnsweredInOrder() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        try client.send(script)
        try checkScriptOutcome(client)
    }

    func testCommandsSentOneByteAtATimeAreParsed() throws {
        let daemon = try startDaemon()
        let client = try connect(daemon)
        for byte in script.utf8 { try client.send([byte]) }
        try checkScriptOutcome(client)
    }

    func testCommandsSentInRandomChunksAreParsed() throws {
        var generator = SeededGenerator(seed: 7)
        for round in 0..<3 {
            let daemon = try startDaemon()
            let client = try connect(daemon, "round \(round)")
            var bytes = Array(script.utf8)[...]
            while !bytes.isEmpty {
                let size = Int.random(in: 1...9, using: &generator)
                try client.send(Array(bytes.prefix(size)))
                bytes = bytes.dropFirst(size)
            }
            try checkScriptOutcome(client)
        }
    }

    func testHundredsOfPipelinedPubsAreAnsweredInOrder() throws {
        let daemon = try startDaemon(DaemonConfig(numbers: ["Q"]))
        let client = try connect(daemon)
        try subscribe(client, "Q")
        var batch: [UInt8] = []
        for index in 0..<500 {
            batch += Array("PUB Q \(String(index).utf8.count)\n\(index)\nPING \(index)\n".utf8)
        }
        try client.send(batch)
        for index in 0..<500 {
            XCTAssertEqual(try client.readReply(), .ok("1"), "PUB \(index)")
            XCTAssertEqual(try client.readReply(), .status("PONG \(index)"), "PING \(index)")
        }
        let texts = client.takePushes().compactMap { $0.message?.text }
        XCTAssertEqual(texts, (0..<500).map(String.init))
    }

    func testListReplyIsNeverSplitByPushes() throws {
        let numbers = (0..<40).map { String(format: "L.%02d", $0) }
        let daemon = try startDaemon(DaemonConfig(numbers: numbers))
        let lister = try connect(daemon, "lister")
        try subscribe(lister, ">")
        let publisher = try connect(daemon, "publisher")
        let stop = Flag()
        let published = Counter()
        // A push whose payload looks like list lines, so a split list would be noticed in either direction.
        let payload = Array("L.00 1\nL.01 1\n*2\n".utf8)
        let publishing = Background("publisher") {
            while !stop.isRaised {
                var batch: [UInt8] = []
                for _ in 0..<20 { batch += Array("PUB L.07 \(payload.count)\n".utf8) + payload + [0x0A] }
                try publisher.send(batch)
                for _ in 0..<20 {
                    let reply = try publisher.readReply()
                    guard reply == .ok("1") else { throw HarnessError.malformed("PUB got \(reply)") }
                }
                published.add(20)
            }
        }
        let expectedLines = numbers.map { "\($0) 1" }
        var pushesSeen = 0
        var lists = 0
        let deadline = Date(timeIntervalSinceNow: 20)
        // Go on until many pushes arrived while LISTs were being answered (and at least 200 LISTs).
        reading: while (lists < 200 || pushesSeen < 200) && Date() < deadline {
            try lister.send(Array(String(repeating: "LIST\n", count: 10).utf8))
            for _ in 0..<10 {
                let reply = try lister.readReply()
                guard reply == .list(expectedLines) else {
                    // After a split reply the stream is out of step: report the first one only.
                    XCTFail("LIST \(lists) was split or wrong: \(reply)")
                    break reading
                }
                lists += 1
            }
            for push in lister.takePushes() {
                XCTAssertEqual(push, .message(Message("L.07", payload)))
                pushesSeen += 1
            }
        }
        stop.raise()
        try publishing.wait(timeout: 10)
        XCTAssertGreaterThanOrEqual(pushesSeen, 200, "too few pushes arrived between the replies to test anything")
        XCTAssertGreaterThan(published.current, 0)
    }
}
