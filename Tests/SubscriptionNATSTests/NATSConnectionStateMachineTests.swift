import XCTest

@testable import SubscriptionNATS

/// The connection's life as a plain value: events in, actions out, no sockets and no clock.
final class NATSConnectionStateMachineTests: XCTestCase {
    typealias Machine = NATSConnectionStateMachine
    private let a = NATSServerAddress(host: "10.0.0.1", port: 4222)
    private let b = NATSServerAddress(host: "10.0.0.2", port: 4222)
    private let second: UInt64 = 1_000_000_000

    private func options(
        reconnectWait: Duration = .seconds(2), maxReconnectAttempts: Int? = nil, maxPingsOutstanding: Int = 2
    ) -> NATSClientOptions {
        NATSClientOptions(
            name: "node-a", echo: false, authentication: .token("t"), reconnectWait: reconnectWait,
            maxReconnectAttempts: maxReconnectAttempts, maxPingsOutstanding: maxPingsOutstanding)
    }

    private func info(_ urls: [String] = [], tls: Bool = false) -> NATSServerInfo {
        NATSServerInfo(serverID: "S", serverName: "n1", version: "2.9.10", tlsRequired: tls, connectURLs: urls)
    }

    /// A machine through the handshake with server `a`.
    private func connected(_ options: NATSClientOptions? = nil, urls: [String] = []) -> Machine {
        var machine = Machine(options: options ?? self.options())
        XCTAssertEqual(machine.start(servers: [a], now: 0), [.openSocket(a, attempt: 1)])
        XCTAssertEqual(machine.socketOpened(), [])
        _ = machine.infoReceived(info(urls), now: 0)
        _ = machine.pongReceived()
        XCTAssertEqual(machine.phase, .connected)
        return machine
    }

    func testHandshakeSendsConnectAndPingAndConnectsAtThePong() {
        var machine = Machine(options: options())
        XCTAssertEqual(machine.phase, .idle)
        XCTAssertEqual(machine.start(servers: [a, b], now: 0), [.openSocket(a, attempt: 1)])
        XCTAssertEqual(machine.phase, .connecting)
        XCTAssertEqual(machine.pongReceived(), [], "a PONG before the socket is nothing")
        XCTAssertEqual(machine.socketOpened(), [])
        XCTAssertEqual(machine.phase, .awaitingInfo)
        let fields = NATSConnectFields(name: "node-a", echo: false, authentication: .token("t"))
        XCTAssertEqual(machine.infoReceived(info(), now: 0), [.sendConnect(fields), .sendPing])
        XCTAssertEqual(machine.phase, .awaitingPong)
        XCTAssertEqual(machine.pingReceived(), [.sendPong], "the server's PING is answered during the handshake too")
        XCTAssertEqual(machine.pongReceived(), [.restoreSubscriptions, .report(.connected(server: a, info: info()))])
        XCTAssertEqual(machine.phase, .connected)
    }

    func testCredentialsInTheServersURLWin() {
        let withUser = NATSServerAddress(host: "h", port: 1, authentication: .user("u", password: "p"))
        var machine = Machine(options: options())
        _ = machine.start(servers: [withUser], now: 0)
        _ = machine.socketOpened()
        XCTAssertEqual(
            machine.infoReceived(info(), now: 0).first,
            .sendConnect(NATSConnectFields(name: "node-a", echo: false, authentication: .user("u", password: "p"))))
    }

    func testFlushesAndLivenessPingsShareThePongsInOrder() {
        var machine = connected()
        XCTAssertEqual(machine.flushRequested(id: 1), [.sendPing])
        XCTAssertEqual(machine.pingTimerFired(now: 0), [.sendPing])
        XCTAssertEqual(machine.flushRequested(id: 2), [.sendPing])
        XCTAssertEqual(machine.outstandingPings, 1)
        XCTAssertEqual(machine.pongReceived(), [.completeFlush(1)])
        XCTAssertEqual(machine.pongReceived(), [])
        XCTAssertEqual(machine.outstandingPings, 0)
        XCTAssertEqual(machine.pongReceived(), [.completeFlush(2)])
        XCTAssertEqual(machine.pongReceived(), [], "an unexpected PONG changes nothing")
    }

    func testTooManyUnansweredPingsReplaceTheConnection() {
        var machine = connected(options(maxPingsOutstanding: 2))
        XCTAssertEqual(machine.pingTimerFired(now: 0), [.sendPing])
        XCTAssertEqual(machine.pingTimerFired(now: 0), [.sendPing])
        XCTAssertEqual(machine.flushRequested(id: 9), [.sendPing])
        let actions = machine.pingTimerFired(now: 10 * second)
        XCTAssertEqual(
            actions,
            [
                .closeSocket, .dropUnsentOutput, .failFlushes([9], .staleConnection),
                .report(.disconnected(reason: .staleConnection)), .openSocket(a, attempt: 2),
            ], "the only server was tried 10 s ago: at once again")
        XCTAssertEqual(machine.outstandingPings, 0)
    }

    func testALostConnectionMovesToTheNextServerAtOnceAndWaitsBeforeRetryingTheSame() {
        var machine = Machine(options: options(reconnectWait: .seconds(2)))
        _ = machine.start(servers: [a, b], now: 0)
        _ = machine.socketOpened()
        _ = machine.infoReceived(info(), now: 0)
        _ = machine.pongReceived()
        let lost = NATSError.connectionFailed(server: "10.0.0.1:4222", reason: "the server closed the connection")
        XCTAssertEqual(
            machine.socketFailed(lost, now: second),
            [
                .closeSocket, .dropUnsentOutput, .report(.disconnected(reason: lost)), .openSocket(b, attempt: 2),
            ])
        // b refuses: a was tried 1 s ago (at 0), so wait 1 s more for it.
        let refused = NATSError.connectionFailed(server: "10.0.0.2:4222", reason: "Connection refused")
        XCTAssertEqual(
            machine.socketFailed(refused, now: second),
            [
                .closeSocket, .reportError(refused), .scheduleReconnect(afterNanoseconds: second),
            ])
        XCTAssertEqual(machine.phase, .waitingToReconnect)
        XCTAssertEqual(machine.reconnectTimerFired(now: 2 * second), [.openSocket(a, attempt: 3)])
        XCTAssertEqual(machine.phase, .connecting)
    }

    func testServersFromInfoAreTriedAfterTheConfiguredOnes() {
        var machine = connected(urls: ["10.0.0.1:4222", "10.0.0.9:4222", "bad:url:x"])
        XCTAssertEqual(machine.knownServers, [a, NATSServerAddress(host: "10.0.0.9", port: 4222)])
        // A later INFO (the cluster changed) teaches more.
        _ = machine.infoReceived(info(["10.0.0.8:4223"]), now: 0)
        XCTAssertEqual(machine.knownServers.count, 3)
        let actions = machine.socketFailed(.connectionFailed(server: "a", reason: "reset"), now: second)
        XCTAssertEqual(actions.last, .openSocket(NATSServerAddress(host: "10.0.0.9", port: 4222), attempt: 2))
    }

    func testDiscoveryCanBeTurnedOff() {
        var options = options()
        options.discoverServers = false
        let machine = connected(options, urls: ["10.0.0.9:4222"])
        XCTAssertEqual(machine.knownServers, [a])
    }

    func testAnErrorDuringTheHandshakeFailsTheAttempt() {
        var machine = Machine(options: options())
        _ = machine.start(servers: [a, b], now: 0)
        _ = machine.socketOpened()
        _ = machine.infoReceived(info(), now: 0)
        XCTAssertEqual(
            machine.errorReceived("Authorization Violation", now: 0),
            [
                .closeSocket, .reportError(.serverError("Authorization Violation")), .openSocket(b, attempt: 2),
            ])
    }

    func testAnErrorOnceConnectedIsOnlyReported() {
        var machine = connected()
        XCTAssertEqual(
            machine.errorReceived("Permissions Violation for Publish to \"x\"", now: 0),
            [.reportError(.serverError("Permissions Violation for Publish to \"x\""))])
        XCTAssertEqual(machine.phase, .connected)
    }

    func testAServerThatRequiresTLSIsGivenUp() {
        var machine = Machine(options: options())
        _ = machine.start(servers: [a, b], now: 0)
        _ = machine.socketOpened()
        XCTAssertEqual(
            machine.infoReceived(info(tls: true), now: 0),
            [
                .closeSocket, .reportError(.tlsRequired(server: "10.0.0.1:4222")), .openSocket(b, attempt: 2),
            ])
    }

    func testAConnectTimeoutEndsOnlyItsOwnAttempt() {
        var machine = Machine(options: options())
        _ = machine.start(servers: [a, b], now: 0)
        XCTAssertEqual(machine.connectTimedOut(attempt: 7, now: 0), [], "another attempt's timer")
        let timedOut = NATSError.connectionFailed(server: "10.0.0.1:4222", reason: "timed out")
        XCTAssertEqual(
            machine.connectTimedOut(attempt: 1, now: 0),
            [
                .closeSocket, .reportError(timedOut), .openSocket(b, attempt: 2),
            ])
        _ = machine.socketOpened()
        _ = machine.infoReceived(info(), now: 0)
        _ = machine.pongReceived()
        XCTAssertEqual(machine.connectTimedOut(attempt: 2, now: 0), [], "connected: the timer is late")
    }

    func testAProtocolViolationReplacesTheConnection() {
        var machine = connected()
        let actions = machine.protocolViolation(.unknownOperation("X"), now: 0)
        XCTAssertEqual(
            actions.prefix(3),
            [
                .closeSocket, .dropUnsentOutput, .report(.disconnected(reason: .protocolError(.unknownOperation("X")))),
            ])
    }

    func testEveryServerFailingTooOftenClosesTheClient() {
        var machine = Machine(options: options(reconnectWait: .zero, maxReconnectAttempts: 2))
        _ = machine.start(servers: [a], now: 0)
        let refused = NATSError.connectionFailed(server: "10.0.0.1:4222", reason: "Connection refused")
        XCTAssertEqual(
            machine.socketFailed(refused, now: 0), [.closeSocket, .reportError(refused), .openSocket(a, attempt: 2)])
        XCTAssertEqual(
            machine.socketFailed(refused, now: 0),
            [
                .closeSocket, .reportError(refused), .report(.closed(reason: refused)),
            ])
        XCTAssertEqual(machine.phase, .closed)
        XCTAssertEqual(machine.flushRequested(id: 1), [.failFlushes([1], .closed)])
    }

    func testASuccessfulConnectionForgetsTheFailures() {
        var machine = Machine(options: options(reconnectWait: .zero, maxReconnectAttempts: 2))
        _ = machine.start(servers: [a], now: 0)
        _ = machine.socketFailed(.connectionFailed(server: "a", reason: "refused"), now: 0)
        _ = machine.socketOpened()
        _ = machine.infoReceived(info(), now: 0)
        _ = machine.pongReceived()
        _ = machine.socketFailed(.connectionFailed(server: "a", reason: "reset"), now: 0)
        // One failure after the connection, not three: it goes on.
        XCTAssertEqual(
            machine.socketFailed(.connectionFailed(server: "a", reason: "refused"), now: 0).last,
            .openSocket(a, attempt: 4))
    }

    func testFlushWhileNotConnectedFailsAtOnce() {
        var machine = Machine(options: options())
        _ = machine.start(servers: [a], now: 0)
        XCTAssertEqual(machine.flushRequested(id: 3), [.failFlushes([3], .notConnected)])
    }

    func testCloseFailsPendingFlushesAndIsFinal() {
        var machine = connected()
        _ = machine.flushRequested(id: 4)
        XCTAssertEqual(
            machine.closeRequested(), [.closeSocket, .failFlushes([4], .closed), .report(.closed(reason: nil))])
        XCTAssertEqual(machine.closeRequested(), [])
        XCTAssertEqual(machine.pingReceived(), [])
        XCTAssertEqual(machine.reconnectTimerFired(now: 0), [])
        XCTAssertEqual(machine.socketFailed(.notConnected, now: 0), [])
    }

    func testCloseWhileWaitingToReconnectHasNoSocketToClose() {
        var machine = Machine(options: options())
        _ = machine.start(servers: [a], now: 0)
        _ = machine.socketFailed(.connectionFailed(server: "a", reason: "refused"), now: 0)
        XCTAssertEqual(machine.phase, .waitingToReconnect)
        XCTAssertEqual(machine.closeRequested(), [.report(.closed(reason: nil))])
    }
}
