import TestSupport
import XCTest

@testable import SubscriptionMQTT

/// Every packet type of both versions encoded and decoded back to the same value, fed whole, a byte at a time and
/// in random chunks: a client's packets by a server's decoder (after a CONNECT), a server's by a client's.
final class RoundTripTests: XCTestCase {
    /// Encodes `connect`, then `packets`, for `connect`'s version, and decodes them with a server's decoder.
    private func assertRoundTripFromClient(
        _ connect: MQTTConnect, _ packets: [MQTTPacket] = [], file: StaticString = #filePath, line: UInt = #line
    ) {
        var bytes: [UInt8] = []
        MQTTEncoder.encode(.connect(connect), version: connect.version, into: &bytes)
        for packet in packets { MQTTEncoder.encode(packet, version: connect.version, into: &bytes) }
        assertDecodes(bytes, [.connect(connect)] + packets, file: file, line: line)
    }

    /// Encodes `packets` for `version` and decodes them with a client's decoder.
    private func assertRoundTripFromServer(
        _ version: MQTTVersion, _ packets: [MQTTPacket], file: StaticString = #filePath, line: UInt = #line
    ) {
        var bytes: [UInt8] = []
        for packet in packets { MQTTEncoder.encode(packet, version: version, into: &bytes) }
        assertDecodes(bytes, packets, setup: .client(version), file: file, line: line)
    }

    func testConnect311() {
        assertRoundTripFromClient(MQTTConnect(version: .v311, cleanStart: true, keepAlive: 0, clientID: ""))
        assertRoundTripFromClient(
            MQTTConnect(
                version: .v311, cleanStart: false, keepAlive: 65535, clientID: "A𪛔",
                will: MQTTWill(topic: "last/will", payload: Fixtures.allBytes, qos: .atLeastOnce, retain: true),
                username: "user", password: Fixtures.allBytes))
        assertRoundTripFromClient(
            MQTTConnect(
                version: .v311, clientID: "c2", will: MQTTWill(topic: "w", payload: [], qos: .exactlyOnce),
                username: "only-user"))
    }

    func testConnect5() {
        assertRoundTripFromClient(MQTTConnect(version: .v5, clientID: ""))
        assertRoundTripFromClient(
            MQTTConnect(
                version: .v5, cleanStart: false, keepAlive: 10, clientID: "full",
                will: MQTTWill(
                    topic: "last/will", payload: Fixtures.allBytes, qos: .exactlyOnce, retain: true,
                    properties: Fixtures.willProperties),
                username: "user", password: Fixtures.allBytes, properties: Fixtures.connectProperties))
        // 5.0 allows a password without a user name.
        assertRoundTripFromClient(MQTTConnect(version: .v5, clientID: "p", password: [1, 2, 3]))
    }

    func testClientPackets311() {
        assertRoundTripFromClient(
            MQTTConnect(version: .v311, clientID: "c"), Fixtures.clientPackets(.v311) + [.disconnect(MQTTDisconnect())])
    }

    func testClientPackets5() {
        var disconnectProperties = MQTTProperties()
        disconnectProperties.sessionExpiryInterval = 0
        disconnectProperties.reasonString = "bye"
        disconnectProperties.userProperties = Fixtures.userProperties
        var authProperties = MQTTProperties()
        authProperties.authenticationMethod = "SCRAM-SHA-256"
        authProperties.authenticationData = Fixtures.allBytes
        authProperties.reasonString = "more"
        authProperties.userProperties = Fixtures.userProperties
        let session: [MQTTPacket] = [
            .auth(MQTTAuth(reasonCode: MQTTReasonCode.continueAuthentication, properties: authProperties)),
            .auth(MQTTAuth()),
            .auth(MQTTAuth(reasonCode: MQTTReasonCode.reAuthenticate)),
            .disconnect(MQTTDisconnect(reasonCode: MQTTReasonCode.disconnectWithWill)),
            .disconnect(MQTTDisconnect(reasonCode: 0, properties: disconnectProperties)),
            .disconnect(MQTTDisconnect()),
        ]
        assertRoundTripFromClient(MQTTConnect(version: .v5, clientID: "c"), Fixtures.clientPackets(.v5) + session)
    }

    func testServerPackets311() {
        assertRoundTripFromServer(.v311, Fixtures.serverPackets(.v311))
    }

    func testServerPackets5() {
        var disconnectProperties = MQTTProperties()
        disconnectProperties.serverReference = "elsewhere:1883"
        disconnectProperties.reasonString = "shutting down"
        let session: [MQTTPacket] = [
            .disconnect(MQTTDisconnect(reasonCode: MQTTReasonCode.serverMoved, properties: disconnectProperties)),
            .auth(MQTTAuth(reasonCode: MQTTReasonCode.continueAuthentication, properties: Fixtures.reasonProperties)),
        ]
        assertRoundTripFromServer(.v5, Fixtures.serverPackets(.v5) + session)
    }

    func testEveryPacketTypeIsCovered() {
        var types = Set<MQTTPacketType>()
        for version in [MQTTVersion.v311, .v5] {
            for packet in Fixtures.clientPackets(version) + Fixtures.serverPackets(version) {
                types.insert(packet.type)
            }
        }
        types.formUnion([.connect, .disconnect, .auth])
        XCTAssertEqual(types.count, 15)
    }

    func testALargePayload() {
        // 70,000 bytes: a three-byte remaining length, in every feeding mode.
        for version in [MQTTVersion.v311, .v5] {
            let publish = MQTTPacket.publish(
                MQTTPublish(topic: "big", qos: .atLeastOnce, packetID: 3, payload: Fixtures.payload(70_000)))
            assertDecodesAfterConnect(version, MQTTEncoder.encode(publish, version: version), [publish])
        }
        // 3 MB: a four-byte remaining length, whole and in random chunks.
        let publish = MQTTPacket.publish(MQTTPublish(topic: "huge", payload: Fixtures.payload(3_000_000)))
        let bytes = connectBytes(.v5) + MQTTEncoder.encode(publish, version: .v5)
        assertDecodes(
            bytes, [connectPacket(.v5), publish], modes: [.allAtOnce, .randomChunks(seed: 1), .randomChunks(seed: 2)])
    }
}
