import Foundation
import XCTest

@testable import SubscriptionNATS

/// JetStream's API replies and requests, as nats-server 2.9 writes and reads them, through ``JetStreamJSON``.
final class JetStreamJSONTests: XCTestCase {
    private func reply(_ json: String) -> NATSMessage {
        NATSMessage(subject: "_INBOX.x.1", sid: 1, replyTo: nil, headers: nil, payload: Array(json.utf8))
    }

    func testAPublishAcknowledgementGivesTheSequenceExactly() {
        XCTAssertEqual(try JetStreamAPI.decodeAck(reply(#"{"stream":"KV_b","seq":7}"#)).get(), 7)
        XCTAssertEqual(
            try JetStreamAPI.decodeAck(reply(#"{"stream":"KV_b","seq":18446744073709551615}"#)).get(), .max)
        XCTAssertEqual(
            JetStreamAPI.decodeAck(reply(#"{"stream":"KV_b","seq":5,"duplicate":true}"#)),
            .failure(.wrongLastSequence(current: 5)))
        XCTAssertEqual(
            JetStreamAPI.decodeAck(reply(#"{"stream":"KV_b"}"#)),
            .failure(.badResponse("a publish acknowledgement without a sequence")))
    }

    func testAnErrorReplyBecomesItsJetStreamError() {
        let wrong = #"""
            {"type":"io.nats.jetstream.api.v1.pub_ack_response",\#
            "error":{"code":400,"err_code":10071,"description":"wrong last sequence: 7"}}
            """#
        XCTAssertEqual(JetStreamAPI.decodeAck(reply(wrong)), .failure(.wrongLastSequence(current: 7)))
        let missing = #"{"error":{"code":404,"err_code":10059,"description":"stream not found"}}"#
        XCTAssertEqual(
            JetStreamAPI.decode(reply(missing), as: JetStreamJSON.StreamInfo.self), .failure(.streamNotFound))
        let other = #"{"error":{"code":503,"description":"JetStream system temporarily unavailable"}}"#
        XCTAssertEqual(
            JetStreamAPI.decode(reply(other), as: JetStreamJSON.StreamInfo.self),
            .failure(.api(status: 503, code: 0, description: "JetStream system temporarily unavailable")))
    }

    func testAnUnreadableReplyIsABadResponseThatSaysWhere() {
        for json in ["", "{", #"{"seq":"seven"}"#, #"{"seq":-1}"#] {
            guard case .failure(.badResponse(let reason)) = JetStreamAPI.decodeAck(reply(json)) else {
                return XCTFail("\(json) was read")
            }
            XCTAssertFalse(reason.isEmpty, json)
        }
        guard case .failure(.badResponse(let reason)) = JetStreamAPI.decodeAck(reply(#"{"seq":"seven"}"#)) else {
            return XCTFail("a string sequence was read")
        }
        XCTAssertTrue(reason.hasPrefix("seq: "), reason)
    }

    /// `STREAM.MSG.GET`'s reply carries the header block and the payload in base64.
    func testAMessageGetReplyIsAnEntryWithItsHeaders() throws {
        let block = "NATS/1.0\r\nNats-Msg-Id: k@3\r\nsubd-origin: n1\r\n\r\n"
        let json = """
            {"type":"io.nats.jetstream.api.v1.stream_msg_get_response","message":{"subject":"$KV.b.sensors.kitchen",\
            "seq":4,"hdrs":"\(Data(block.utf8).base64EncodedString())","data":"aGVsbG8=",\
            "time":"2026-11-27T20:54:38.123456789Z"}}
            """
        let get = try JetStreamAPI.decode(reply(json), as: JetStreamJSON.MessageGetReply.self).get()
        let entry = try KeyValueEntry.make(bucket: "b", fromMessageGet: get.message).get()
        XCTAssertEqual(entry.key, "sensors.kitchen")
        XCTAssertEqual(entry.revision, 4)
        XCTAssertEqual(entry.value, Array("hello".utf8))
        XCTAssertEqual(entry.operation, .put)
        XCTAssertEqual(entry.headers["subd-origin"], "n1")
        XCTAssertNil(entry.headers["Nats-Msg-Id"], "JetStream's own headers are left out")

        let deleted =
            #"{"message":{"subject":"$KV.b.k","seq":9,"hdrs":"TkFUUy8xLjANCktWLU9wZXJhdGlvbjogREVMDQoNCg=="}}"#
        let marker = try JetStreamAPI.decode(reply(deleted), as: JetStreamJSON.MessageGetReply.self).get()
        XCTAssertEqual(
            try KeyValueEntry.make(bucket: "b", fromMessageGet: marker.message).get(),
            KeyValueEntry(bucket: "b", key: "k", value: [], revision: 9, operation: .delete))
    }

    func testBadBase64IsABadResponse() {
        let json = #"{"message":{"subject":"$KV.b.k","seq":1,"data":"not base64!"}}"#
        guard
            case .failure(.badResponse(let reason)) = JetStreamAPI.decode(
                reply(json), as: JetStreamJSON.MessageGetReply.self)
        else { return XCTFail("bad base64 was read") }
        XCTAssertTrue(reason.hasPrefix("message.data: "), reason)
    }

    func testTheRepublishDestinationIsReadFromStreamInfo() throws {
        let json = """
            {"type":"io.nats.jetstream.api.v1.stream_info_response","total":0,"offset":0,"limit":0,\
            "config":{"name":"KV_b","subjects":["$KV.b.\\u003e"],"retention":"limits","max_consumers":-1,\
            "republish":{"src":"$KV.b.\\u003e","dest":"subd.kv.b.\\u003e"}},"created":"2026-11-27T20:54:38Z",\
            "state":{"messages":3,"bytes":120,"first_seq":1,"last_seq":3,"consumer_count":0},\
            "cluster":{"leader":"n1"}}
            """
        let info = try JetStreamAPI.decode(reply(json), as: JetStreamJSON.StreamInfo.self).get()
        XCTAssertEqual(info.config?.republish, JetStreamJSON.Republish(src: "$KV.b.>", dest: "subd.kv.b.>"))
    }

    func testRequestsAreOneLineWithNatsServersNames() throws {
        XCTAssertEqual(
            JSONCoding.encode(JetStreamJSON.MessageGetRequest(seq: 12, nextBySubject: "$KV.b.>")),
            #"{"next_by_subj":"$KV.b.>","seq":12}"#)
        XCTAssertEqual(
            JSONCoding.encode(JetStreamJSON.MessageGetRequest(lastBySubject: "$KV.b.a\"b")),
            #"{"last_by_subj":"$KV.b.a\"b"}"#)
        let configuration = KeyValueConfiguration(
            bucket: "b", replicas: 3, storage: .memory, maxBytes: 1024, maxAge: .seconds(60), updatesPrefix: "u")
        let json = JSONCoding.encode(configuration.streamConfig)
        XCTAssertFalse(json.contains("\n"), json)
        let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        XCTAssertEqual(object["name"] as? String, "KV_b")
        XCTAssertEqual(object["subjects"] as? [String], ["$KV.b.>"])
        XCTAssertEqual(object["num_replicas"] as? Int, 3)
        XCTAssertEqual(object["storage"] as? String, "memory")
        XCTAssertEqual(object["max_bytes"] as? Int, 1024)
        XCTAssertEqual(object["max_msg_size"] as? Int, -1)
        XCTAssertEqual(object["max_msgs_per_subject"] as? Int, 1)
        XCTAssertEqual(object["max_age"] as? Int, 60_000_000_000)
        XCTAssertEqual(object["duplicate_window"] as? Int, 60_000_000_000)
        XCTAssertEqual(object["allow_direct"] as? Bool, true)
        XCTAssertEqual(object["allow_rollup_hdrs"] as? Bool, true)
        XCTAssertEqual(object["deny_delete"] as? Bool, true)
        let republish = try XCTUnwrap(object["republish"] as? [String: String])
        XCTAssertEqual(republish, ["src": "$KV.b.>", "dest": "u.b.>"])
        XCTAssertTrue(
            JSONCoding.encode(KeyValueConfiguration(bucket: "r", history: 8).streamConfig)
                .contains(#""max_msgs_per_subject":8"#))
    }
}
