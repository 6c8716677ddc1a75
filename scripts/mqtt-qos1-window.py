#!/usr/bin/env python3
"""QoS 1 publish-to-acknowledge rate with a window, for scripts/mqtt-bench.sh (issue 25).

Usage: mqtt-qos1-window.py PORT COUNT WINDOW [TOPIC]

Connects to an MQTT 3.1.1 server on 127.0.0.1:PORT (clean session), publishes COUNT QoS 1 messages of 128 bytes
to TOPIC ("queue/window"), keeping WINDOW of them unacknowledged, and prints one line:
`acks_per_s=N count=COUNT window=WINDOW`. mosquitto_pub sends its next message only once the last one is
acknowledged, so its rate is a round trip's; this one keeps the server busy, as a device with a backlog does. The
client is plain Python on one socket (no paho: its own cost would be what is measured). Exits 1 when the server
answers with anything but the PUBACKs, in order.
"""

import socket
import sys
import time


def varint(value):
    out = bytearray()
    while True:
        byte = value % 128
        value //= 128
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def main():
    port, count, window = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    topic = (sys.argv[4] if len(sys.argv) > 4 else "queue/window").encode()
    connection = socket.create_connection(("127.0.0.1", port))
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    client_id = b"qos1-window"
    body = b"\x00\x04MQTT\x04\x02\x00\x3c" + len(client_id).to_bytes(2, "big") + client_id
    connection.sendall(bytes([0x10]) + varint(len(body)) + body)
    ack = connection.recv(4)
    if len(ack) < 4 or ack[0] != 0x20 or ack[3] != 0:
        print(f"CONNECT refused: {ack!r}", file=sys.stderr)
        return 1
    payload = b"x" * 128

    def publish(packet_id):
        variable = len(topic).to_bytes(2, "big") + topic + packet_id.to_bytes(2, "big") + payload
        return bytes([0x32]) + varint(len(variable)) + variable

    def packet_id(index):
        return index % 65535 + 1

    sent = acked = 0
    pending = b""
    start = time.monotonic()
    burst = bytearray()
    while sent < min(window, count):
        burst += publish(packet_id(sent))
        sent += 1
    connection.sendall(burst)
    while acked < count:
        data = connection.recv(65536)
        if not data:
            print("the server closed the connection", file=sys.stderr)
            return 1
        pending += data
        burst = bytearray()
        while len(pending) >= 4:
            expected = bytes([0x40, 0x02]) + packet_id(acked).to_bytes(2, "big")
            if pending[:4] != expected:
                print(f"expected {expected!r}, got {pending[:4]!r}", file=sys.stderr)
                return 1
            pending = pending[4:]
            acked += 1
            if sent < count:
                burst += publish(packet_id(sent))
                sent += 1
        if burst:
            connection.sendall(burst)
    elapsed = time.monotonic() - start
    connection.sendall(b"\xe0\x00")
    connection.close()
    print(f"acks_per_s={count / elapsed:.0f} count={count} window={window}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
