import SubscriptionWire
import TestSupport
import XCTest

/// The byte compare and the seeded hash every name-keyed table uses (``NameBytes``).
final class NameBytesTests: XCTestCase {
    /// Every length from 0 to 40 (the 8-byte words and every tail): a copy is equal and hashes alike; changing any
    /// one byte makes it different.
    func testEqualityAndHashAgreeAtEveryLength() {
        var generator = SeededGenerator(seed: 7)
        for length in 0...40 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let copy = bytes
            bytes.withUnsafeBytes { a in
                copy.withUnsafeBytes { b in
                    XCTAssertTrue(NameBytes.equal(a, b), "length \(length)")
                    XCTAssertEqual(NameBytes.hash(a, seed: 99), NameBytes.hash(b, seed: 99))
                }
            }
            for position in 0..<length {
                var changed = bytes
                changed[position] ^= UInt8.random(in: 1...255, using: &generator)
                bytes.withUnsafeBytes { a in
                    changed.withUnsafeBytes { b in
                        XCTAssertFalse(NameBytes.equal(a, b), "length \(length), byte \(position)")
                    }
                }
            }
        }
    }

    /// A String made from part of a longer one (a token), or from bytes, is compared and hashed by its own bytes;
    /// a String that is not contiguous UTF-8 (bridged) would take the copying path, which agrees.
    func testStringsFromSlicesAndBytes() {
        let long = "SCIENCE.physics.quantum.entanglement"
        let token = String(long.split(separator: ".")[2])
        let fromBytes = String(decoding: Array("quantum".utf8), as: UTF8.self)
        XCTAssertTrue(NameBytes.equal(token, fromBytes))
        XCTAssertFalse(NameBytes.equal(token, "quantu"))
        XCTAssertFalse(NameBytes.equal(String(long.dropLast()), long))
        XCTAssertEqual(NameBytes.hash(token, seed: 3), NameBytes.hash(fromBytes, seed: 3))
        XCTAssertEqual(NameBytes.hash(long, seed: 3), Array(long.utf8).withUnsafeBytes { NameBytes.hash($0, seed: 3) })
        XCTAssertTrue(NameBytes.equal("", String(long.dropFirst(long.count))))
    }

    /// Canonically equivalent spellings (equal Swift Strings) are different names.
    func testCanonicalEquivalentsDiffer() {
        XCTAssertFalse(NameBytes.equal("caf\u{E9}", "cafe\u{301}"))
        XCTAssertNotEqual(NameBytes.hash("caf\u{E9}", seed: 1), NameBytes.hash("cafe\u{301}", seed: 1))
    }

    /// 200,000 names as a client might make them, two seeds: no two share a 64-bit hash (a bad mix would collide
    /// on names that differ in one digit or in their length), and a name's hash depends on the seed.
    func testNoCollisionsAmongSimilarNames() {
        let names = (0..<100_000).map { "bench.\($0)" } + (0..<100_000).map { "n\(String($0, radix: 36)).x.y" }
        for seed in [0, 0x5EED] {
            let hashes = Set(names.map { NameBytes.hash($0, seed: seed) })
            XCTAssertEqual(hashes.count, names.count, "seed \(seed)")
        }
        let differing = names.prefix(1000).filter {
            NameBytes.hash($0, seed: 1) != NameBytes.hash($0, seed: 2)
        }
        XCTAssertEqual(differing.count, 1000)
    }

    /// The low bits (the bucket a table of 1,024 picks) spread evenly: no bucket gets more than 4 times its share.
    func testLowBitsSpread() {
        var buckets = [Int](repeating: 0, count: 1024)
        for index in 0..<102_400 { buckets[NameBytes.hash("SCIENCE.\(index)", seed: 11) & 1023] += 1 }
        XCTAssertLessThan(buckets.max()!, 400)
        XCTAssertGreaterThan(buckets.min()!, 25)
    }
}
