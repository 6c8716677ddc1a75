import Foundation
import XCTest

/// The MQTT interoperability cases of Eclipse Paho's test suite (paho.mqtt.testing, interoperability/client_test.py
/// for 3.1.1 and client_test5.py for 5.0), as `mqtt_interop.py` (beside this file; its docstring has the details)
/// checks them against a real subd with Debian's python3-paho-mqtt and a raw client of its own.
///
/// Each test runs one case in both versions (or in the one it exists in) against a subd of its own, so that a failure
/// names the case; the script's output (`PASS`, `FAIL` and `NOTE` lines) is the failure's message. The subd has two
/// users: `interop`, with every right (`$SYS.>` too), which every client logs in as, and `nosub`, which may not
/// subscribe to `test/nosubscribe` (Paho's subscribe-failure topic).
final class MQTTInteropTests: MQTTTestCase {
    func testBasic() throws { try runCases("v311_basic", "v5_basic") }

    func testRetainedMessages() throws { try runCases("v311_retained_messages", "v5_retained_messages") }

    func testOfflineMessageQueueing() throws {
        try runCases("v311_offline_message_queueing", "v5_offline_message_queueing_expiry")
    }

    func testWillMessage() throws { try runCases("v311_will_message", "v5_will_message") }

    func testOverlappingSubscriptions() throws {
        try runCases("v311_overlapping_subscriptions", "v5_overlapping_subscriptions")
    }

    func testKeepalive() throws { try runCases("v311_keepalive", "v5_keepalive") }

    func testRedeliveryOnReconnect() throws {
        try runCases("v311_redelivery_on_reconnect", "v5_redelivery_on_reconnect")
    }

    func testZeroLengthClientIdentifier() throws { try runCases("v311_zero_length_clientid", "v5_assigned_clientid") }

    func testSubscribeFailure() throws { try runCases("v311_subscribe_failure", "v5_subscribe_failure") }

    func testDollarTopics() throws { try runCases("v311_dollar_topics", "v5_dollar_topics") }

    func testUnsubscribe() throws { try runCases("v311_unsubscribe", "v5_unsubscribe") }

    func testSessionExpiry() throws { try runCases("v5_session_expiry") }

    func testFlowControl() throws { try runCases("v5_flow_control") }

    func testTopicAliases() throws { try runCases("v5_server_topic_alias", "v5_client_topic_alias") }

    func testMaximumPacketSize() throws { try runCases("v5_maximum_packet_size") }

    func testWillDelay() throws { try runCases("v5_will_delay") }

    func testSharedSubscriptions() throws { try runCases("v5_shared_subscriptions") }

    func testRequestResponse() throws { try runCases("v5_request_response") }

    func testSubscribeOptions() throws { try runCases("v5_subscribe_options") }

    func testSubscriptionIdentifiers() throws { try runCases("v5_subscription_identifiers") }

    func testUserProperties() throws { try runCases("v5_user_properties") }

    func testPayloadFormatAndContentType() throws { try runCases("v5_payload_format_and_content_type") }

    func testMessageExpiry() throws { try runCases("v5_message_expiry") }

    // MARK: Running the script

    /// The users' secret hashes, made once per test process.
    nonisolated(unsafe) private static var secretHashes: (interop: String, nosub: String)?

    /// The python3 that imports paho, found once per test process.
    nonisolated(unsafe) private static var foundPython: URL?

    /// A config with the suite's two users: `interop` (every right) and `nosub` (no subscribing to
    /// `test/nosubscribe`). Both may create numbers, which `mqtt_create: auto` needs of a publisher.
    private func interopConfig() throws -> DaemonConfig {
        if Self.secretHashes == nil {
            Self.secretHashes = (try hashSecret("interop-pw"), try hashSecret("nosub-pw"))
        }
        let (interop, nosub) = try XCTUnwrap(Self.secretHashes)
        return mqttConfig([
            "users:",
            "  - name: interop", "    secret_hash: \"\(interop)\"", "    publish: [\">\"]",
            "    subscribe: [\">\", \"$SYS.>\"]", "    create_remove: true",
            "  - name: nosub", "    secret_hash: \"\(nosub)\"", "    publish: [\">\"]", "    subscribe: [\">\"]",
            "    deny_subscribe: [\"test.nosubscribe\"]", "    create_remove: true",
        ])
    }

    /// Starts a subd and runs `mqtt_interop.py --only` the cases `names`; fails with the script's output unless it
    /// exits 0 having printed `PASS` for each of them.
    private func runCases(_ names: String..., file: StaticString = #filePath, line: UInt = #line) throws {
        let daemon = try startMQTTDaemon(try interopConfig())
        if Self.foundPython == nil {
            Self.foundPython = try ExternalTool.python(importing: "paho.mqtt.client", package: "python3-paho-mqtt")
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("mqtt_interop.py").path
        let arguments = [
            script, "--port", String(try daemon.mqttPort()), "--username", "interop", "--password", "interop-pw",
            "--nosub-username", "nosub", "--nosub-password", "nosub-pw", "--only", names.joined(separator: ","),
        ]
        let child = try ChildProcess(
            executable: try XCTUnwrap(Self.foundPython), arguments: arguments, label: "mqtt_interop.py")
        guard let status = child.waitForExit(timeout: 120) else {
            child.kill9IfRunning()
            return XCTFail(
                "mqtt_interop.py ran for over 120 s; it printed:\n\(child.stdout.text)", file: file, line: line)
        }
        child.stdout.waitForEnd(timeout: 5)
        child.stderr.waitForEnd(timeout: 5)
        let output = child.stdout.text
        let lines = output.split(separator: "\n").map(String.init)
        var reported = false
        for failure in lines where failure.hasPrefix("FAIL ") {
            XCTFail(failure, file: file, line: line)
            reported = true
        }
        for name in names
        where !lines.contains("PASS \(name)") && !lines.contains(where: { $0.hasPrefix("FAIL \(name):") }) {
            XCTFail("mqtt_interop.py printed neither PASS nor FAIL for \(name)", file: file, line: line)
            reported = true
        }
        if status != 0 && !reported {
            XCTFail(
                "mqtt_interop.py exited \(status); its output:\n\(output)\(child.stderr.text)", file: file, line: line)
        }
    }
}
