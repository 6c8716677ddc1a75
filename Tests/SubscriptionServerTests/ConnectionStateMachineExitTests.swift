import Testing

@testable import SubscriptionServer

/// The events ``ConnectionStateMachine`` calls impossible stop the process with their reason (each provoked in a
/// child process: Swift Testing's exit tests), and the same events where they may come do not.
@Suite struct ConnectionStateMachineExitTests {
    /// An event where it cannot come, after the steps that lead there.
    enum ImpossibleEvent: String, Codable, Sendable, CaseIterable {
        case releaseWithoutHold, secondRelease, secondBlock, secondBlockWhileClosing, retryWithoutBlock
        case secondRetryWhileClosing, deadlineWhileOpen

        /// What the failure says.
        var message: String {
            switch self {
            case .releaseWithoutHold, .secondRelease: "penaltyEnded() on an open connection that holds nothing"
            case .secondBlock, .secondBlockWhileClosing: "tlsInputBlocked() while already waiting for room"
            case .retryWithoutBlock, .secondRetryWhileClosing: "tlsInputUnblocked() without tlsInputBlocked()"
            case .deadlineWhileOpen: "closeDeadlinePassed() on an open connection"
            }
        }

        /// Drives a new machine there; `late`: the same steps, but the connection is closed before the last event.
        func provoke(late: Bool = false) {
            var machine = ConnectionStateMachine(marks: .init(maxPending: 32 << 20))
            switch self {
            case .releaseWithoutHold: break
            case .secondRelease: _ = (machine.penaltyStarted(), machine.penaltyEnded())
            case .secondBlock: _ = machine.tlsInputBlocked()
            case .secondBlockWhileClosing: _ = (machine.tlsInputBlocked(), machine.closeRequested(.client))
            case .retryWithoutBlock: break
            case .secondRetryWhileClosing:
                _ = (machine.tlsInputBlocked(), machine.closeRequested(.client), machine.tlsInputUnblocked())
            case .deadlineWhileOpen: break
            }
            if late { _ = machine.failed(.reset) }
            switch self {
            case .releaseWithoutHold, .secondRelease: _ = machine.penaltyEnded()
            case .secondBlock, .secondBlockWhileClosing: _ = machine.tlsInputBlocked()
            case .retryWithoutBlock, .secondRetryWhileClosing: _ = machine.tlsInputUnblocked()
            case .deadlineWhileOpen: _ = machine.closeDeadlinePassed()
            }
        }
    }

    @Test(arguments: ImpossibleEvent.allCases)
    func anImpossibleEventStopsTheProcessWithItsReason(_ event: ImpossibleEvent) async throws {
        let result = try await #require(processExitsWith: .failure, observing: [\.standardErrorContent]) { [event] in
            event.provoke()
        }
        let standardError = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(standardError.contains(event.message), "\(standardError)")
    }

    /// Once closed the same events are late ones (a retry or a release fired after the close): nothing happens.
    @Test(arguments: ImpossibleEvent.allCases)
    func theSameEventAfterTheCloseIsANoOp(_ event: ImpossibleEvent) async {
        await #expect(processExitsWith: .success) { [event] in
            event.provoke(late: true)
        }
    }
}
