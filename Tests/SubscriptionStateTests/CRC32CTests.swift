import TestSupport
import XCTest

@testable import SubscriptionState

/// The checksum of every header and record: CRC-32C's published check values, the eight-bytes-at-a-time loop
/// against the textbook bit-at-a-time definition, and the same checksum whether the bytes come whole, one at a time
/// or in random pieces.
final class CRC32CTests: XCTestCase {
    func testTheCheckValues() {
        XCTAssertEqual(CRC32C.checksum(Array("123456789".utf8)), 0xE306_9283)
        XCTAssertEqual(CRC32C.checksum([UInt8]()), 0)
        // RFC 3720 (iSCSI), B.4: 32 bytes of zeros, 32 of 0xFF.
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0, count: 32)), 0x8A91_36AA)
        XCTAssertEqual(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)), 0x62A8_AB43)
    }

    func testEveryLengthAndStartAgreesWithTheBitwiseDefinition() {
        var random = SeededGenerator(seed: 32)
        let bytes = (0..<300).map { _ in UInt8.random(in: 0...255, using: &random) }
        for start in 0..<9 {
            for end in start...bytes.count {
                let slice = Array(bytes[start..<end])
                XCTAssertEqual(CRC32C.checksum(slice), bitwise(slice), "bytes \(start)..<\(end)")
            }
        }
    }

    func testUpdatingInPiecesEqualsTheWhole() {
        let bytes = Array("the state that survives a restart".utf8)
        for cut in 0...bytes.count {
            let first = CRC32C.checksum(Array(bytes[..<cut]))
            XCTAssertEqual(CRC32C.update(first, Array(bytes[cut...])), CRC32C.checksum(bytes))
        }
    }

    func testOneByteAtATimeAndRandomPiecesEqualTheWhole() {
        var random = SeededGenerator(seed: 33)
        for count in [0, 1, 7, 8, 9, 63, 64, 65, 1000] {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &random) }
            let whole = CRC32C.checksum(bytes)
            XCTAssertEqual(bytes.reduce(0) { CRC32C.update($0, [$1]) }, whole, "\(count) bytes, one at a time")
            for _ in 0..<20 {
                var crc: UInt32 = 0
                var done = 0
                while done < count {
                    let piece = Int.random(in: 1...min(count - done, 20), using: &random)
                    crc = CRC32C.update(crc, Array(bytes[done..<done + piece]))
                    done += piece
                }
                XCTAssertEqual(crc, whole, "\(count) bytes in random pieces")
            }
        }
    }

    private func bitwise(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }
}
