"""A real MQTT client for subd's integration tests (MQTT*Tests.swift), on Debian's python3-paho-mqtt 1.6.1.

Usage: mqtt_client.py OPTIONS

OPTIONS is one JSON object:
  port (required), host ("127.0.0.1"), version (4: MQTT 3.1.1, 5: MQTT 5.0; default 5), client_id (""),
  clean (true; 3.1.1's clean session, 5.0's clean start), keepalive (60), username, password,
  properties (CONNECT properties, by paho's names: {"SessionExpiryInterval": 10, ...}),
  will ({"topic", "payload" (hex), "qos", "retain", "properties"}),
  transport ("tcp" or "websockets"), path (the WebSocket path, "/mqtt"), cafile (TLS, trusting that certificate),
  lifetime (seconds after which the script ends by itself, 60).

paho makes and sends every packet; the script reports what the server sent, byte for byte, so the test decodes it
with its own decoder. Written to stdout, one JSON object a line:
  {"event": "packet", "type": T, "flags": F, "body": HEX}  each packet from the server, before paho handles it
  {"event": "sent", "op": OP, "mid": N}                  a command was handed to paho (mid: its packet id, or 0)
  {"event": "closed", "rc": N}                           the connection ended (paho's on_disconnect)
  {"event": "error", "message": TEXT}                    a command failed in paho
Read from stdin, one JSON object a line (each answered with "sent" or "error"):
  {"op": "publish", "topic": T, "payload": HEX, "qos": Q, "retain": B, "properties": {...}}
  {"op": "subscribe", "filters": [[FILTER, QOS, NO_LOCAL, RETAIN_AS_PUBLISHED, RETAIN_HANDLING], ...],
   "properties": {...}}
  {"op": "unsubscribe", "filters": [FILTER, ...]}
  {"op": "ping"}                                         a PINGREQ (its PINGRESP is a barrier for the test)
  {"op": "disconnect", "reason": N, "properties": {...}} a DISCONNECT, then the connection closes
paho acknowledges QoS 1 and 2 messages itself. The script ends at the end of stdin (without a DISCONNECT) or after
its lifetime.
"""

import json
import os
import sys
import threading

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCodes
from paho.mqtt.subscribeoptions import SubscribeOptions

OUTPUT = threading.Lock()


def say(**fields):
    with OUTPUT:
        sys.stdout.write(json.dumps(fields) + "\n")
        sys.stdout.flush()


def properties(kind, given):
    """paho Properties of packet type `kind` from a JSON object of paho's property names; None for none."""
    if not given:
        return None
    made = Properties(kind)
    for name, value in given.items():
        if name == "UserProperty":
            value = [tuple(pair) for pair in value]
        setattr(made, name, value)
    return made


class TappedClient(mqtt.Client):
    """paho's client, reporting every packet the server sends before paho handles it."""

    def _packet_handle(self):
        packet = self._in_packet
        say(event="packet", type=packet["command"] >> 4, flags=packet["command"] & 0x0F,
            body=bytes(packet["packet"]).hex())
        return super()._packet_handle()


def run(options):
    version = mqtt.MQTTv5 if options.get("version", 5) == 5 else mqtt.MQTTv311
    clean = options.get("clean", True)
    if version == mqtt.MQTTv5:
        client = TappedClient(options.get("client_id", ""), protocol=version,
                              transport=options.get("transport", "tcp"))
    else:
        client = TappedClient(options.get("client_id", ""), clean_session=clean, protocol=version,
                              transport=options.get("transport", "tcp"))
    if options.get("transport") == "websockets":
        client.ws_set_options(path=options.get("path", "/mqtt"))
    if "cafile" in options:
        client.tls_set(ca_certs=options["cafile"])
    if "username" in options:
        client.username_pw_set(options["username"], options.get("password"))
    will = options.get("will")
    if will:
        client.will_set(will["topic"], bytes.fromhex(will.get("payload", "")), will.get("qos", 0),
                        will.get("retain", False), properties(PacketTypes.WILLMESSAGE, will.get("properties")))

    def on_disconnect(client, userdata, rc, properties=None):
        say(event="closed", rc=rc.value if isinstance(rc, ReasonCodes) else rc)

    client.on_disconnect = on_disconnect
    connect = {"keepalive": options.get("keepalive", 60)}
    if version == mqtt.MQTTv5:
        connect["clean_start"] = clean
        connect["properties"] = properties(PacketTypes.CONNECT, options.get("properties"))
    client.connect(options.get("host", "127.0.0.1"), options["port"], **connect)
    client.loop_start()

    for line in sys.stdin:
        command = json.loads(line)
        op = command["op"]
        try:
            mid = 0
            if op == "publish":
                info = client.publish(command["topic"], bytes.fromhex(command.get("payload", "")),
                                      command.get("qos", 0), command.get("retain", False),
                                      properties(PacketTypes.PUBLISH, command.get("properties")))
                mid = info.mid
            elif op == "subscribe":
                if version == mqtt.MQTTv5:
                    filters = [(f[0], SubscribeOptions(qos=f[1], noLocal=f[2], retainAsPublished=f[3],
                                                       retainHandling=f[4])) for f in command["filters"]]
                    _, mid = client.subscribe(filters,
                                              properties=properties(PacketTypes.SUBSCRIBE, command.get("properties")))
                else:
                    _, mid = client.subscribe([(f[0], f[1]) for f in command["filters"]])
            elif op == "unsubscribe":
                _, mid = client.unsubscribe(command["filters"])
            elif op == "ping":
                client._send_pingreq()
            elif op == "disconnect":
                reason = None
                if version == mqtt.MQTTv5:
                    reason = ReasonCodes(PacketTypes.DISCONNECT, identifier=command.get("reason", 0))
                client.disconnect(reason, properties(PacketTypes.DISCONNECT, command.get("properties")))
            else:
                raise ValueError("unknown op " + op)
            say(event="sent", op=op, mid=mid)
        except Exception as error:  # reported to the test, which fails on it
            say(event="error", message="%s: %r" % (op, error))
    os._exit(0)


def main():
    options = json.loads(sys.argv[1])
    lifetime = threading.Timer(options.get("lifetime", 60), lambda: os._exit(3))
    lifetime.daemon = True
    lifetime.start()
    try:
        run(options)
    except Exception as error:
        say(event="error", message="connect: %r" % (error,))
        os._exit(2)


if __name__ == "__main__":
    main()
