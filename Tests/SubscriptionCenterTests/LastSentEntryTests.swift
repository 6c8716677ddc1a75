import SubscriptionCenter
import XCTest

/// A send finds a recent send's number again by the bits of its `String` (`SentEntryCache`): the same string, a
/// string with the same bytes in other storage, a removed and re-made number, many numbers in turn, and long (not
/// small) strings, whose bits are their storage's address, all reach the right subscribers.
final class LastSentEntryTests: XCTestCase {
    func testTheLastNumberIsFoundAgainAndForgottenWithItsRemoval() throws {
        let center = SubscriptionCenter<String>()
        // Over 15 bytes: not a small string, so the bits compared are the storage's address.
        let long = "SCIENCE.physics.particles"
        try center.create(long)
        try center.create("SHORT")
        let first = Probe("first")
        try center.add(first, to: long)
        XCTAssertEqual(try center.send("1", to: long), 1)
        XCTAssertEqual(try center.send("2", to: long), 1, "the same string again")
        let copy = String(decoding: Array(long.utf8), as: UTF8.self)
        XCTAssertEqual(try center.send("3", to: copy), 1, "the same bytes in other storage")
        XCTAssertEqual(try center.send("4", to: "SHORT"), 0, "another number")
        XCTAssertEqual(first.received.map(\.message), ["1", "2", "3"])

        // Removed and made again: the entry of the last send is not used for the new number.
        XCTAssertEqual(try center.send("5", to: long), 1)
        try center.remove(long)
        XCTAssertThrowsError(try center.send("gone", to: long)) { error in
            XCTAssertEqual(error as? CenterError, .notFound(long))
        }
        try center.create(long)
        let second = Probe("second")
        try center.add(second, to: long)
        XCTAssertEqual(try center.send("6", to: long), 1)
        XCTAssertEqual(first.received.map(\.message), ["1", "2", "3", "5"], "removed with the number")
        XCTAssertEqual(second.received.map(\.message), ["6"])
    }

    /// Many long strings made and freed in turn: a new string at a freed one's address never finds the kept entry
    /// (the center holds the last string, so its address is not reused while it is kept).
    func testStringsMadeAndFreedNeverHitAnotherNumbersEntry() throws {
        let center = SubscriptionCenter<String>()
        var probes: [Probe] = []
        for index in 0..<50 {
            let number = "numbers.long.enough.\(index)"
            try center.create(number)
            let probe = Probe("p\(index)")
            try center.add(probe, to: number)
            probes.append(probe)
        }
        for round in 0..<20 {
            for index in 0..<50 {
                let number = String(decoding: Array("numbers.long.enough.\(index)".utf8), as: UTF8.self)
                XCTAssertEqual(try center.send("\(round)", to: number), 1)
            }
        }
        for probe in probes { XCTAssertEqual(probe.received.count, 20) }
    }

    /// 300 numbers sent to in turn by the same strings (as the daemon's parser hands them), so most are found by
    /// their bits, several sharing a slot: numbers removed among them fail, and once made again (by the very same
    /// strings) reach their new subscribers only.
    func testManyNumbersInTurnWithRemovalsAmongThem() throws {
        let center = SubscriptionCenter<String>()
        let numbers = (0..<300).map { "numbers.long.enough.\($0)" }
        var probes: [Probe] = []
        for number in numbers {
            try center.create(number)
            let probe = Probe(number)
            try center.add(probe, to: number)
            probes.append(probe)
        }
        for round in 0..<3 {
            for number in numbers { XCTAssertEqual(try center.send("\(round)", to: number), 1) }
        }
        let removed = Set(stride(from: 0, to: numbers.count, by: 7))
        for index in removed.sorted() { try center.remove(numbers[index]) }
        for (index, number) in numbers.enumerated() {
            if removed.contains(index) {
                XCTAssertThrowsError(try center.send("gone", to: number), "\(number) was removed")
            } else {
                XCTAssertEqual(try center.send("3", to: number), 1)
            }
        }
        var newProbes: [Int: Probe] = [:]
        for index in removed.sorted() {
            try center.create(numbers[index])
            let probe = Probe("new \(index)")
            try center.add(probe, to: numbers[index])
            newProbes[index] = probe
        }
        for number in numbers { XCTAssertEqual(try center.send("after", to: number), 1) }
        for (index, probe) in probes.enumerated() {
            let expected = removed.contains(index) ? ["0", "1", "2"] : ["0", "1", "2", "3", "after"]
            XCTAssertEqual(probe.received.map(\.message), expected, numbers[index])
        }
        for (index, probe) in newProbes { XCTAssertEqual(probe.received.map(\.message), ["after"], numbers[index]) }
    }
}
