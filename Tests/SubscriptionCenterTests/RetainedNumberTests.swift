import SubscriptionCenter
import XCTest

/// Retained numbers in the center: the current value and its revision, kept whether or not anyone received it.
final class RetainedNumberCenterTests: XCTestCase {
    func testEachSendToARetainedNumberGetsTheNextRevisionAndBecomesTheValue() throws {
        let center = SubscriptionCenter<String>()
        try center.create("R", retained: true)
        try center.create("P")
        var revisions: [UInt64?] = []
        XCTAssertEqual(
            try center.send(to: "R", from: "a") { revision in
                revisions.append(revision)
                return "one"
            }, 0)
        XCTAssertEqual(
            try center.send(to: "R", from: "b") { revision in
                revisions.append(revision)
                return "two"
            }, 0)
        XCTAssertEqual(revisions, [1, 2], "made, and numbered, with no receiver")
        let slot = try XCTUnwrap(try center.retainedSlot(of: "R"))
        XCTAssertEqual(slot.revision, 2)
        XCTAssertEqual(slot.value, "two")
        XCTAssertEqual(slot.sender, "b")
        XCTAssertNil(try center.retainedSlot(of: "P"), "a plain number has none")
        XCTAssertEqual(try center.retainedRevision(of: "R"), 2, "the revision without the value")
        XCTAssertNil(try center.retainedRevision(of: "P"), "none for a plain number")
        XCTAssertThrowsError(try center.retainedRevision(of: "NOPE"))
        var madeForPlain = false
        XCTAssertEqual(
            try center.send(to: "P") { (_: UInt64?) in
                madeForPlain = true
                return "x"
            }, 0)
        XCTAssertFalse(madeForPlain, "a plain number's message is made only for a receiver")
        XCTAssertThrowsError(try center.retainedSlot(of: "NOPE"))
    }

    func testRetainedValuesMatchInByteOrderWithTheFromFilterAndSkipEmptyOnes() throws {
        let center = SubscriptionCenter<String>()
        for number in ["A.b", "A.a", "A.c", "B.a"] { try center.create(number, retained: true) }
        try center.create("A.plain")
        try center.send("b", to: "A.b", from: "x")
        try center.send("a", to: "A.a", from: "y")
        try center.send("p", to: "A.plain", from: "x")
        XCTAssertEqual(center.retainedValues(matching: "A.*").map(\.number), ["A.a", "A.b"])
        XCTAssertEqual(center.retainedValues(matching: "A.*", from: "x").map(\.number), ["A.b"])
        XCTAssertEqual(center.retainedValues(matching: "A.a").map(\.slot.value), ["a"])
        XCTAssertEqual(center.retainedValues(matching: "a..b").count, 0, "an invalid pattern matches nothing")
        XCTAssertEqual(
            try center.list(matching: ">").map(\.retainedRevision), [1, 1, 0, nil, 0], "A.a A.b A.c A.plain B.a")
    }

    func testCreatingAnExistingNumberKeepsItsKindAndRemovingForgetsTheValue() throws {
        let center = SubscriptionCenter<String>()
        try center.create("R", retained: true)
        XCTAssertFalse(try center.create("R"))
        XCTAssertNotNil(try center.retainedSlot(of: "R"))
        try center.send("v", to: "R")
        try center.remove("R")
        try center.create("R", retained: true)
        XCTAssertEqual(try center.retainedSlot(of: "R")?.revision, 0)
        XCTAssertEqual(center.retainedValues(matching: ">").count, 0)
    }
}
