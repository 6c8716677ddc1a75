import XCTest

@testable import SubscriptionServer

/// The connection state machine, event by event, without a socket: what each event returns and where it leaves
/// the connection. Every way a peer can go ends in `.close`.
final class ConnectionStateMachineTests: XCTestCase {
    private typealias Machine = ConnectionStateMachine
    private let marks = Machine.FlowMarks(maxPending: 32 << 20)

    private func open() -> Machine { Machine(marks: marks) }

    func testFlowMarksArePauseAtFourMiBOrHalfOfMaxPendingAndResumeAtAQuarter() {
        XCTAssertEqual(Machine.FlowMarks(maxPending: 32 << 20).pauseAbove, 4 << 20)
        XCTAssertEqual(Machine.FlowMarks(maxPending: 32 << 20).resumeBelow, 1 << 20)
        XCTAssertEqual(Machine.FlowMarks(maxPending: 2 << 20).pauseAbove, 1 << 20)
    }

    func testOutputPastThePauseMarkPausesReadingOnceAndDrainingResumesIt() {
        var machine = open()
        XCTAssertEqual(machine.commandRan(outputHeld: 4 << 20), [], "at the mark, not past it")
        XCTAssertEqual(machine.commandRan(outputHeld: (4 << 20) + 1), .pauseReading)
        XCTAssertFalse(machine.isReading)
        XCTAssertEqual(machine.commandRan(outputHeld: 8 << 20), [], "already paused")
        XCTAssertEqual(
            machine.flushed(outputIsEmpty: false, outputHeld: 2 << 20), .proceed(.armWriteSource),
            "above the resume mark: still paused, the full socket is watched")
        XCTAssertEqual(
            machine.flushed(outputIsEmpty: false, outputHeld: (1 << 20) - 1), .proceed(.resumeReading),
            "below a quarter of the mark: reading resumes (the write source is already armed)")
        XCTAssertTrue(machine.isReading)
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .proceed(.disarmWriteSource))
        XCTAssertFalse(machine.isWriteArmed)
    }

    func testEndOfInputWhileReadingClosesGracefullyAndClosesOnceTheRepliesAreOut() {
        var machine = open()
        XCTAssertEqual(
            machine.inputEnded(outputIsEmpty: false), .proceed([.stopServing, .startCloseDeadline, .flush]))
        XCTAssertEqual(machine.phase, .closing)
        XCTAssertEqual(machine.flushed(outputIsEmpty: false, outputHeld: 100), .proceed(.armWriteSource))
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .close(.client))
        XCTAssertEqual(machine.phase, .closed)
        XCTAssertTrue(
            machine.isWriteArmed, "closing keeps the flag: the source is still running and is cancelled as is")
    }

    func testCloseRequestFlushesShutsDownTheWriteSideThenWaitsForThePeer() {
        var machine = open()
        XCTAssertEqual(machine.closeRequested(.client), [.stopServing, .startCloseDeadline, .flush])
        XCTAssertEqual(machine.closeRequested(.protocolError), [], "a second request changes nothing")
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .proceed(.shutDownOutput))
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .none, "shut down once")
        XCTAssertEqual(machine.inputEnded(outputIsEmpty: true), .close(.client))
    }

    func testCloseRequestWhilePausedResumesReadingToSeeThePeerClose() {
        var machine = open()
        _ = machine.commandRan(outputHeld: 5 << 20)
        XCTAssertEqual(
            machine.closeRequested(.commandTimeout), [.stopServing, .startCloseDeadline, .resumeReading, .flush])
        XCTAssertFalse(machine.isReadSourceSuspended)
        XCTAssertFalse(machine.isReading, "closing: input is drained, not run")
    }

    func testEveryFailureClosesAtOnceWithItsReasonAndOnlyOnce() {
        for reason in CloseReason.allCases {
            var machine = open()
            XCTAssertEqual(machine.failed(reason), .close(reason))
            XCTAssertEqual(machine.failed(.reset), .none, "closed is final")
            XCTAssertEqual(machine.inputEnded(outputIsEmpty: true), .none)
            XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .none)
            XCTAssertEqual(machine.drain(), .none)
        }
    }

    func testAResetDuringAGracefulCloseKeepsTheReasonTheCloseStartedWith() {
        var machine = open()
        _ = machine.closeRequested(.commandTimeout)
        XCTAssertEqual(machine.failed(.reset), .close(.commandTimeout))
    }

    func testAResetWhilePausedClosesAndKeepsThePausedFlagForTheSourceTearDown() {
        var machine = open()
        _ = machine.commandRan(outputHeld: 5 << 20)
        XCTAssertEqual(machine.failed(.reset), .close(.reset))
        XCTAssertTrue(
            machine.isReadSourceSuspended, "the suspended read source must be resumed before it is cancelled")
    }

    /// The deadline fired while open is impossible (ConnectionStateMachineExitTests); fired after the close, nothing.
    func testCloseDeadlineClosesOnlyAClosingConnection() {
        var machine = open()
        _ = machine.closeRequested(.client)
        XCTAssertEqual(machine.closeDeadlinePassed(), .close(.client))
        XCTAssertEqual(machine.closeDeadlinePassed(), .none)
    }

    func testDrainClosesOpenConnectionsOnceTheirOutputIsOutWithoutWaitingForThePeer() {
        var machine = open()
        XCTAssertEqual(machine.drain(), .proceed([.stopServing, .startCloseDeadline, .flush]))
        XCTAssertEqual(machine.flushed(outputIsEmpty: false, outputHeld: 10), .proceed(.armWriteSource))
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .close(.shutdown))
    }

    /// A drain (or a timeout) while replies are in flight: the connection waits for them (they flush again when
    /// they come) and closes once they are out, not when the output first runs empty.
    func testAClosingConnectionWaitsForItsRepliesInFlight() {
        var machine = open()
        _ = machine.drain()
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0, awaitingReplies: true), .proceed([]))
        XCTAssertEqual(machine.phase, .closing, "not closed, and the write side not shut down, while they wait")
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .close(.shutdown))

        var timedOut = open()
        _ = timedOut.closeRequested(.commandTimeout)
        XCTAssertEqual(timedOut.flushed(outputIsEmpty: true, outputHeld: 0, awaitingReplies: true), .proceed([]))
        XCTAssertEqual(timedOut.flushed(outputIsEmpty: true, outputHeld: 0), .proceed(.shutDownOutput))
    }

    func testDrainClosesAConnectionAlreadyWaitingForItsPeerAtOnce() {
        var machine = open()
        _ = machine.closeRequested(.client)
        _ = machine.flushed(outputIsEmpty: true, outputHeld: 0)
        guard case .closing(let closing) = machine.state else { return XCTFail("\(machine.state)") }
        XCTAssertTrue(closing.isOutputShutDown)
        XCTAssertEqual(machine.drain(), .close(.client))
    }

    /// Regression: a closing session whose peer had closed while output was still queued read EOF again on every
    /// turn (an ended socket stays readable), spinning a core until the output drained or the deadline passed.
    func testAClosingConnectionWhoseInputEndsBeforeItsOutputPausesReadingThenClosesAfterTheFlush() {
        var machine = open()
        _ = machine.closeRequested(.client)
        XCTAssertEqual(machine.inputEnded(outputIsEmpty: false), .proceed(.pauseReading))
        XCTAssertEqual(machine.inputEnded(outputIsEmpty: false), .none, "paused once")
        XCTAssertEqual(machine.flushed(outputIsEmpty: false, outputHeld: 10), .proceed(.armWriteSource))
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .close(.client))
        XCTAssertTrue(machine.isReadSourceSuspended, "the suspended read source is resumed before it is cancelled")
    }

    func testEndOfInputWhileOpenClosesAndThenPausesWhileTheRepliesAreOut() {
        var machine = open()
        XCTAssertEqual(
            machine.inputEnded(outputIsEmpty: false), .proceed([.stopServing, .startCloseDeadline, .flush]))
        XCTAssertEqual(machine.inputEnded(outputIsEmpty: false), .proceed(.pauseReading), "the EOF reported again")
        XCTAssertEqual(machine.flushed(outputIsEmpty: true, outputHeld: 0), .close(.client))
    }

    /// The end of input read while replies are in flight: the connection stays open with reading suspended (once,
    /// whatever else suspended it), and the replies' landing resumes it so the end is read again.
    func testAnEndOfInputBeforeTheRepliesInFlightWaitsForThemWithReadingSuspended() {
        var machine = open()
        XCTAssertEqual(machine.inputEndedBeforeReplies(), .pauseReading)
        XCTAssertEqual(machine.phase, .open)
        XCTAssertTrue(machine.isReadSourceSuspended)
        XCTAssertEqual(machine.inputEndedBeforeReplies(), [], "once")
        XCTAssertEqual(machine.penaltyStarted(), [], "already suspended")
        XCTAssertEqual(machine.repliesLanded(), [], "the hold still suspends it")
        XCTAssertEqual(machine.penaltyEnded(), [.resumeReading, .flush])
        XCTAssertFalse(machine.isReadSourceSuspended)
        XCTAssertEqual(machine.repliesLanded(), [], "nothing waited")

        machine = open()
        XCTAssertEqual(machine.inputEndedBeforeReplies(), .pauseReading)
        XCTAssertEqual(machine.repliesLanded(), .resumeReading, "the end is read again")
        XCTAssertEqual(
            machine.inputEnded(outputIsEmpty: false), .proceed([.stopServing, .startCloseDeadline, .flush]))
    }

    func testNewMarksApplyToTheNextCommand() {
        var machine = open()
        machine.marks = .init(maxPending: 1 << 20)
        XCTAssertEqual(machine.commandRan(outputHeld: (512 << 10) + 1), .pauseReading)
    }

    func testAPenaltyStopsCommandsAndOutputAndSuspendsTheSourceOnceWhateverPausedFirst() {
        var machine = open()
        XCTAssertEqual(machine.penaltyStarted(), .pauseReading)
        XCTAssertFalse(machine.isReading)
        XCTAssertTrue(machine.isOutputHeld)
        XCTAssertTrue(machine.isReadSourceSuspended)
        XCTAssertEqual(machine.penaltyStarted(), [], "already sitting out")
        XCTAssertEqual(machine.commandRan(outputHeld: 8 << 20), [], "no second suspend of the source")
        XCTAssertEqual(machine.penaltyEnded(), [.resumeReading, .flush])
        XCTAssertFalse(machine.isReadSourceSuspended)
        XCTAssertFalse(machine.isOutputHeld)
        // A second release is impossible: ConnectionStateMachineExitTests.

        // Flow control first, then a penalty: the source is suspended once; the penalty's end flushes, and the
        // drained output resumes reading.
        var paused = open()
        XCTAssertEqual(paused.commandRan(outputHeld: (4 << 20) + 1), .pauseReading)
        XCTAssertEqual(paused.penaltyStarted(), [], "the source is already suspended")
        XCTAssertEqual(
            paused.flushed(outputIsEmpty: true, outputHeld: 0), .proceed([]),
            "below the resume mark, but the penalty keeps the source suspended")
        XCTAssertEqual(paused.penaltyEnded(), [.resumeReading, .flush])
        XCTAssertTrue(paused.isReading)
        XCTAssertFalse(paused.isReadSourceSuspended)
    }

    func testAPenaltyThatOutlastsTheConnectionsOpenPhaseStillFlushesItsReplyOnClose() {
        var machine = open()
        _ = machine.penaltyStarted()
        _ = machine.closeRequested(.authTimeout)
        XCTAssertEqual(machine.phase, .closing)
        XCTAssertEqual(
            machine.penaltyEnded(), [.resumeReading, .flush],
            "what it held goes out, and the closing drain reads on to the peer's end")
        XCTAssertFalse(machine.isReadSourceSuspended, "nothing left suspended for the tear-down")
    }

    /// Random sequences of every event where it can come (a release only of a hold, a retry only after a block, the
    /// deadline only once closing began; any of them once closed): the read source's suspends and resumes (as the
    /// actions order them) always balance to what the machine says, never go below zero or above one, and the write
    /// source is never armed while output is held. A session torn down resumes a suspended source once
    /// (``isReadSourceSuspended``).
    func testRandomEventsKeepBothSourcesInStep() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var machine = open()
            var suspends = 0
            var armed = false
            var closed = false
            func apply(_ actions: Machine.Actions) {
                if actions.contains(.pauseReading) { suspends += 1 }
                if actions.contains(.resumeReading) { suspends -= 1 }
                if actions.contains(.armWriteSource) { armed = true }
                if actions.contains(.disarmWriteSource) { armed = false }
            }
            for _ in 0..<30 where !closed {
                let held = Int.random(in: 0...(6 << 20), using: &generator)
                let empty = Bool.random(using: &generator)
                var outcome: Machine.Outcome = .none
                switch Int.random(in: 0..<13, using: &generator) {
                case 0: apply(machine.commandRan(outputHeld: held))
                case 1: outcome = machine.inputEnded(outputIsEmpty: empty)
                case 2: apply(machine.closeRequested(.authTimeout))
                case 3: outcome = machine.drain()
                case 4: outcome = machine.flushed(outputIsEmpty: empty, outputHeld: held)
                case 5: apply(machine.penaltyStarted())
                case 6 where machine.isOutputHeld || machine.phase != .open: apply(machine.penaltyEnded())
                case 7 where machine.phase != .open: outcome = machine.closeDeadlinePassed()
                case 8: outcome = machine.failed(.reset)
                case 9 where !machine.isWaitingForRoom: apply(machine.tlsInputBlocked())
                case 10 where machine.isWaitingForRoom || machine.phase == .closed: apply(machine.tlsInputUnblocked())
                case 11: apply(machine.inputEndedBeforeReplies())
                case 12: apply(machine.repliesLanded())
                default: continue
                }
                switch outcome {
                case .proceed(let actions): apply(actions)
                case .close: closed = true
                }
                XCTAssertTrue((0...1).contains(suspends), "suspends \(suspends)")
                if !closed {
                    XCTAssertEqual(suspends == 1, machine.isReadSourceSuspended)
                    XCTAssertEqual(armed, machine.isWriteArmed)
                    if machine.isOutputHeld { XCTAssertFalse(armed, "armed while output is held") }
                }
            }
            // After the close nothing the machine does touches the sources again; at the end, the hold and the wait
            // for room end as the session ends them.
            if machine.isOutputHeld || machine.phase == .closed { apply(machine.penaltyEnded()) }
            if machine.isWaitingForRoom || machine.phase == .closed { apply(machine.tlsInputUnblocked()) }
            apply(machine.repliesLanded())
            XCTAssertTrue((0...1).contains(suspends))
            if !closed { XCTAssertEqual(suspends == 1, machine.isReadSourceSuspended) }
        }
    }
}
