import XCTest

/// Messages from one publisher to one number reach every subscriber in the order they were published.
final class DeliveryOrderTests: IntegrationTestCase {
    func testTenThousandMessagesFromOnePublisherArriveInOrder() throws {
        let total = 10_000
        let daemon = try startDaemon(DaemonConfig(numbers: ["ORDER"]))
        let exact = try connect(daemon, "exact subscriber")
        let wildcard = try connect(daemon, "wildcard subscriber")
        let publisher = try connect(daemon, "publisher")
        try subscribe(exact, "ORDER")
        try subscribe(wildcard, ">")
        let reading = [exact, wildcard].map { subscriber in
            Background("read \(subscriber.label)") {
                for expected in 0..<total {
                    let message = try subscriber.nextMessage()
                    guard message.number == "ORDER", message.text == "m\(expected)" else {
                        throw HarnessError.malformed("\(subscriber.label): message \(expected) is \(message)")
                    }
                }
            }
        }
        var sent = 0
        while sent < total {
            let count = min(500, total - sent)
            var batch: [UInt8] = []
            for index in sent..<sent + count {
                let text = "m\(index)"
                // Half SEND, half PUB: both paths must keep the order.
                if index.isMultiple(of: 2) {
                    batch += Array("SEND ORDER \(text)\n".utf8)
                } else {
                    batch += Array("PUB ORDER \(text.utf8.count)\n\(text)\n".utf8)
                }
            }
            try publisher.send(batch)
            for index in sent..<sent + count {
                let reply = try publisher.readReply()
                if reply != .ok("2") { return XCTFail("message \(index): \(reply)") }
            }
            sent += count
        }
        for task in reading { try task.wait(timeout: 30) }
    }

    func testOrderIsKeptPerPublisherWhenTwoPublishInterleave() throws {
        let perPublisher = 2_000
        let daemon = try startDaemon(DaemonConfig(numbers: ["MIX"]))
        let subscriber = try connect(daemon, "subscriber")
        try subscribe(subscriber, "MIX")
        let publishers = try ["a", "b"].map { name in (name, try connect(daemon, "publisher \(name)")) }
        let publishing = publishers.map { name, client in
            Background("publish \(name)") {
                var batch: [UInt8] = []
                for index in 0..<perPublisher { batch += Array("SEND MIX \(name) \(index)\n".utf8) }
                try client.send(batch)
                for _ in 0..<perPublisher {
                    let reply = try client.readReply()
                    guard reply == .ok("1") else { throw HarnessError.malformed("\(name): \(reply)") }
                }
            }
        }
        var next: [String: Int] = ["a": 0, "b": 0]
        for _ in 0..<(2 * perPublisher) {
            let words = try subscriber.nextMessage().text.split(separator: " ")
            guard words.count == 2, let index = Int(words[1]), let expected = next[String(words[0])] else {
                return XCTFail("unexpected message \(words)")
            }
            XCTAssertEqual(index, expected, "publisher \(words[0]) out of order")
            next[String(words[0])] = index + 1
        }
        for task in publishing { try task.wait(timeout: 30) }
    }
}
