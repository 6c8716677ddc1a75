import XCTest

@testable import SubscriptionServer

/// The connection state as an enum: what each place carries after each event, the TLS wait for room and holds as
/// they cross into closing, and every event coming late (after the close) as a no-op. The impossible events are
/// provoked in ConnectionStateMachineExitTests.
final class ConnectionStateTransitionTests: XCTestCase {
    private typealias Machine = ConnectionStateMachine

    private func open() -> Machine { Machine(marks: .init(maxPending: 32 << 20)) }

    func testEachPlaceCarriesOnlyWhatItHas() {
        var machine = open()
        XCTAssertEqual(machine.state, .open(.init()))
        _ = machine.commandRan(outputHeld: 5 << 20)
        XCTAssertEqual(machine.state, .open(.init(input: .pausedForOutput)))
        _ = machine.inputEnded(outputIsEmpty: false)
        XCTAssertEqual(
            machine.state, .closing(.init(reason: .client, input: .ended, sides: .init(), isDraining: false)),
            "flow control's pause stays behind in the open phase")
        _ = machine.flushed(outputIsEmpty: false, outputHeld: 10)
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .close(.client))
        XCTAssertEqual(machine.state, .closed(.init(reason: .client, isReadSourceSuspended: false, isWriteArmed: true)))
        XCTAssertEqual(machine.phase, .closed)
    }

    func testAWaitForRoomSuspendsTheReadSourceOnceBesideFlowControl() {
        var machine = open()
        XCTAssertEqual(machine.tlsInputBlocked(), .pauseReading)
        XCTAssertTrue(machine.isWaitingForRoom)
        XCTAssertEqual(machine.commandRan(outputHeld: 5 << 20), [], "already suspended")
        XCTAssertEqual(machine.tlsInputUnblocked(), [], "flow control still holds the source")
        XCTAssertFalse(machine.isWaitingForRoom)
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .proceed(.resumeReading))
        XCTAssertTrue(machine.isReading)
        XCTAssertFalse(machine.isReadSourceSuspended)
    }

    func testAWaitForRoomOutlastsTheOpenPhaseAndItsRetryResumesTheDrainingRead() {
        var machine = open()
        _ = machine.tlsInputBlocked()
        XCTAssertEqual(
            machine.closeRequested(.commandTimeout), [.stopServing, .startCloseDeadline, .flush],
            "the wait keeps the source suspended")
        XCTAssertEqual(machine.tlsInputUnblocked(), .resumeReading)

        var closed = open()
        _ = closed.tlsInputBlocked()
        XCTAssertEqual(closed.failed(.reset), .close(.reset))
        XCTAssertTrue(closed.isReadSourceSuspended, "the tear-down resumes it before cancelling it")
        XCTAssertEqual(closed.tlsInputUnblocked(), [], "the retry fired after the close")
    }

    func testAHoldDisarmsAWatchingWriteSourceAndItsEndFlushesToArmItAgain() {
        var machine = open()
        XCTAssertEqual(machine.flushed(outputIsEmpty: false, outputHeld: 10), .proceed(.armWriteSource))
        XCTAssertEqual(machine.penaltyStarted(), [.disarmWriteSource, .pauseReading])
        XCTAssertFalse(machine.isWriteArmed)
        XCTAssertEqual(machine.flushed(outputIsEmpty: false, outputHeld: 10), .proceed([]), "held: never armed")
        XCTAssertEqual(machine.penaltyEnded(), [.resumeReading, .flush])
        XCTAssertEqual(machine.flushed(outputIsEmpty: false, outputHeld: 10), .proceed(.armWriteSource))
    }

    /// A command answered later that is run again inside its hold asks for the hold again; its one answer ends it.
    func testHoldsDoNotNestOneReleaseEndsThem() {
        var machine = open()
        XCTAssertEqual(machine.penaltyStarted(), .pauseReading)
        XCTAssertEqual(machine.penaltyStarted(), [])
        XCTAssertEqual(machine.penaltyEnded(), [.resumeReading, .flush])
        XCTAssertFalse(machine.isOutputHeld)
        XCTAssertTrue(machine.isReading)
    }

    func testAHoldAskedForWhileClosingIsNotRecordedAndItsReleaseIsNothing() {
        var machine = open()
        _ = machine.closeRequested(.client)
        XCTAssertEqual(machine.penaltyStarted(), [])
        XCTAssertFalse(machine.isOutputHeld)
        XCTAssertEqual(machine.penaltyEnded(), [])
    }

    func testADrainWhileClosingClosesOnceTheOutputIsOutUnderTheFirstReason() {
        var machine = open()
        _ = machine.closeRequested(.commandTimeout)
        XCTAssertEqual(machine.flushed(outputIsEmpty: false, outputHeld: 10), .proceed(.armWriteSource))
        XCTAssertEqual(machine.drain(), .none)
        XCTAssertEqual(machine.drain(), .none, "a second drain")
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .close(.commandTimeout))
    }

    /// Timers and delayed releases that fire after the close, and a command's last steps after a failure closed
    /// the session: nothing, and the state the tear-down reads stays as the close left it.
    func testEveryEventAfterTheCloseIsANoOp() {
        var machine = open()
        _ = machine.flushed(outputIsEmpty: false, outputHeld: 10)
        _ = machine.tlsInputBlocked()
        _ = machine.penaltyStarted()
        XCTAssertEqual(machine.failed(.slowConsumer), .close(.slowConsumer))
        let closed = machine.state
        XCTAssertEqual(closed, .closed(.init(reason: .slowConsumer, isReadSourceSuspended: true, isWriteArmed: false)))
        XCTAssertEqual(machine.penaltyEnded(), [])
        XCTAssertEqual(machine.tlsInputUnblocked(), [])
        XCTAssertEqual(machine.tlsInputBlocked(), [])
        XCTAssertEqual(machine.penaltyStarted(), [])
        XCTAssertEqual(machine.commandRan(outputHeld: 8 << 20), [])
        XCTAssertEqual(machine.closeRequested(.client), [])
        XCTAssertEqual(machine.closeDeadlinePassed(), .none)
        XCTAssertEqual(machine.inputEnded(outputIsEmpty: true), .none)
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .none)
        XCTAssertEqual(machine.drain(), .none)
        XCTAssertEqual(machine.failed(.reset), .none)
        XCTAssertEqual(machine.state, closed)
        XCTAssertFalse(machine.isReading)
        XCTAssertFalse(machine.isOutputHeld)
        XCTAssertFalse(machine.isWaitingForRoom)
    }
}
