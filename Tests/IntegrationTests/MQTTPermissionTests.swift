import Foundation
import XCTest

/// A user's rights apply per number to an MQTT client logged in as that user (docs/PROTOCOL.md, Users and
/// permissions; MQTT, Publishing and Subscribing): a publication outside them gets 5.0's PUBACK 0x87 and is
/// acknowledged and dropped in 3.1.1; a subscription outside them gets SUBACK 0x87 / 0x80; a will outside them is
/// refused at CONNECT.
final class MQTTPermissionTests: MQTTTestCase {
    private func config() throws -> DaemonConfig {
        mqttConfig(
            numbers: ["public.x", "private.x"],
            [
                "users:",
                "  - name: limited", "    secret_hash: \"\(try hashSecret("limited-pw"))\"",
                "    publish: [\"public.>\"]", "    subscribe: [\"public.>\"]",
                "  - name: admin", "    secret_hash: \"\(try hashSecret("admin-pw"))\"",
                "    publish: [\">\"]", "    subscribe: [\">\"]",
            ])
    }

    private func limited(_ daemon: Daemon, version: UInt8, will: MQTTEncode.Will? = nil) throws -> (
        MQTTRawClient, MQTTConnAck
    ) {
        let client = try raw(daemon, version: version, "limited v\(version)")
        let ack = try client.connect(
            clientID: "limited\(version)", username: "limited", password: Array("limited-pw".utf8), will: will)
        return (client, ack)
    }

    func testPublicationsAndSubscriptionsOutsideTheUsersRightsAreRefused() throws {
        let daemon = try startMQTTDaemon(try config())
        let admin = try connect(daemon, "admin")
        XCTAssertTrue(try admin.command("HELLO name=admin token=admin-pw").description.hasPrefix("+OK subd"))
        try subscribe(admin, ">")
        let before = try stats(admin)

        let (v5, ack5) = try limited(daemon, version: 5)
        XCTAssertEqual(ack5.code, 0)
        let denied = try XCTUnwrap(try v5.publish("private/x", Array("secret".utf8), qos: 1, packetID: 1))
        XCTAssertEqual(denied.code, 0x87, "5.0: not authorized")
        XCTAssertNotNil(denied.properties.reasonString)
        XCTAssertEqual(try v5.publish("public/x", Array("v5 public".utf8), qos: 1, packetID: 2)?.code, 0x00)
        try v5.publish("private/x", Array("secret qos 0".utf8))
        XCTAssertEqual(try v5.subscribe([("private/#", 1)]).codes, [0x87])
        XCTAssertEqual(try v5.subscribe([("public/x", 1), ("private/x", 1), ("#", 0)]).codes, [1, 0x87, 0x87])

        let (v311, ack4) = try limited(daemon, version: 4)
        XCTAssertEqual(ack4.code, 0)
        try v311.send(
            MQTTEncode.publish(version: 4, topic: "private/x", payload: Array("secret".utf8), qos: 1, packetID: 9))
        XCTAssertEqual(
            try v311.nextFrame(), MQTTFrame(type: MQTTType.puback, flags: 0, body: [0, 9]),
            "3.1.1: acknowledged (and dropped)")
        XCTAssertEqual(try v311.publish("public/x", Array("v311 public".utf8), qos: 1, packetID: 10)?.code, 0)
        XCTAssertEqual(try v311.subscribe([("private/#", 1)]).codes, [0x80])
        // public/+ (public.*), not public/#: that one is public.> and public, and the user may not subscribe to
        // public (docs/PROTOCOL.md: the rights are checked for every pattern of a filter).
        XCTAssertEqual(try v311.subscribe([("public/+", 1), ("private/x", 0)]).codes, [1, 0x80])

        let delivered = try admin.pushesBeforePing().compactMap(\.message)
        XCTAssertEqual(
            delivered,
            [
                Message("public.x", text: "v5 public", from: "limited"),
                Message("public.x", text: "v311 public", from: "limited"),
            ], "only the allowed publications, from= the user's name")
        XCTAssertEqual(try admin.pub("private.x", Array("for admins".utf8)), .ok("1"), "only the admin's own SUB")
        XCTAssertEqual(try admin.pub("public.x", Array("for all".utf8)), .ok("3"))
        XCTAssertEqual(
            try v5.framesBeforePing().map { try $0.publish(version: 5).text }, ["v311 public", "for all"],
            "what public/x got since it subscribed")
        XCTAssertEqual(try v311.nextPublish().text, "for all")
        assertCounter("mqtt_refused", grewBy: 8, from: before, to: try stats(admin))
    }

    func testAWillOutsideTheUsersRightsIsRefusedAtConnect() throws {
        let daemon = try startMQTTDaemon(try config())
        let will = MQTTEncode.Will(topic: "private/will", payload: Array("bye".utf8))
        let (v5, ack5) = try limited(daemon, version: 5, will: will)
        XCTAssertEqual(ack5.code, 0x87)
        XCTAssertEqual(try v5.packetsUntilClosed(), [])
        let (v311, ack4) = try limited(daemon, version: 4, will: will)
        XCTAssertEqual(ack4.code, 5, "3.1.1: not authorized")
        XCTAssertEqual(try v311.packetsUntilClosed(), [])
        let (allowed, ack) = try limited(daemon, version: 5, will: .init(topic: "public/x", payload: Array("bye".utf8)))
        XCTAssertEqual(ack.code, 0)
        XCTAssertEqual(try allowed.framesBeforePing(), [])
        try allowed.send(MQTTEncode.disconnect(version: 5))
        XCTAssertEqual(try allowed.packetsUntilClosed(), [])
    }
}
