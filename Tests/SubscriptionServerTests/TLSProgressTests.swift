import XCTest

@testable import SubscriptionServer

/// What a TLS session waits for next, answer by answer, without OpenSSL.
final class TLSProgressTests: XCTestCase {
    func testTheHandshakeWaitsForWhatOpenSSLAsksAndEstablishesOnDone() {
        var progress = TLSProgress()
        progress.handshakeAnswered(.wantRead)
        XCTAssertEqual(progress.inputWaitsFor, .readable)
        XCTAssertFalse(progress.isEstablished)
        progress.handshakeAnswered(.wantWrite)
        XCTAssertEqual(progress.inputWaitsFor, .writable)
        progress.handshakeAnswered(.done(0))
        XCTAssertTrue(progress.isEstablished)
        XCTAssertEqual(progress.inputWaitsFor, .nothing)
    }

    func testAFailedHandshakeIsNotEstablished() {
        var progress = TLSProgress()
        progress.handshakeAnswered(.failed("wrong version number"))
        XCTAssertFalse(progress.isEstablished)
        XCTAssertEqual(progress.inputWaitsFor, .nothing)
    }

    func testABlockedWriteMustBeRetriedWithAtLeastAsManyBytes() {
        var progress = TLSProgress()
        progress.writeAnswered(.wantWrite, length: 16_384)
        XCTAssertEqual(progress.pendingWriteLength, 16_384)
        XCTAssertEqual(progress.outputWaitsFor, .writable)
        // A retry that blocks again never offers fewer bytes than the first attempt.
        progress.writeAnswered(.wantWrite, length: 100)
        XCTAssertEqual(progress.pendingWriteLength, 16_384)
        progress.writeAnswered(.wantRead, length: 16_384)
        XCTAssertEqual(progress.outputWaitsFor, .readable)
        progress.writeAnswered(.done(16_384), length: 16_384)
        XCTAssertNil(progress.pendingWriteLength)
        XCTAssertEqual(progress.outputWaitsFor, .nothing)
    }

    func testReadsRecordWhatTheyWaitFor() {
        var progress = TLSProgress()
        progress.readAnswered(.wantWrite)
        XCTAssertEqual(progress.inputWaitsFor, .writable)
        progress.readAnswered(.done(5))
        XCTAssertEqual(progress.inputWaitsFor, .nothing)
        progress.readAnswered(.closed)
        XCTAssertEqual(progress.inputWaitsFor, .nothing)
    }
}
