"""A WebSocket client for subd's integration tests (WebSocketTests), on python3-websockets 10 (asyncio).

Usage: websocket-client.py URL [--origin ORIGIN] [--ca CERT] [--no-subprotocol]

Connects to URL (offering the subprotocol subd unless --no-subprotocol; trusting CERT for wss://) and bridges the
connection to a TCP socket on 127.0.0.1 that the test connects to: what the test writes there goes out as one binary
message per read, and the data of every message received is written there as it is.

Written to stdout, a line each:
  port N            the bridge's port, once the upgrade is accepted
  subprotocol NAME  the subprotocol the server chose ("-" for none)
  refused STATUS    the upgrade was refused with this HTTP status (the script then ends)
  pong HEX          the answer to a ping came (websockets checks it carries the ping's payload)
  closed CODE       the connection ended, with the code of the server's close frame (1006 without one)
Read from stdin, a command a line (HEX: bytes in hexadecimal, possibly none):
  binary HEX        one binary message
  text HEX          one text message (the bytes must be UTF-8)
  fragments HEX...  one binary message, a fragment for each word
  ping HEX          a ping
  close CODE        the close handshake, with CODE
"""

import argparse
import asyncio
import ssl
import sys

import websockets


def say(*words):
    print(*words, flush=True)


async def bridge_to_socket(socket, connection):
    """Every message's data to the test's socket; then `closed CODE`, and the socket is closed."""
    try:
        async for message in connection:
            socket.write(message.encode() if isinstance(message, str) else message)
            await socket.drain()
    except websockets.exceptions.ConnectionClosed:
        pass
    say("closed", connection.close_code)
    socket.close()


async def bridge_from_socket(socket, connection):
    """What the test writes to its socket, a binary message per read."""
    while data := await socket.read(65536):
        await connection.send(data)


async def run_commands(connection):
    """The stdin commands, until stdin ends."""
    stdin = asyncio.StreamReader(limit=1 << 24)
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stdin), sys.stdin)
    while line := (await stdin.readline()).decode():
        command, *words = line.split()
        if command == "binary":
            await connection.send(bytes.fromhex("".join(words)))
        elif command == "text":
            await connection.send(bytes.fromhex("".join(words)).decode())
        elif command == "fragments":
            await connection.send([bytes.fromhex(word) for word in words])
        elif command == "ping":
            await (await connection.ping(bytes.fromhex("".join(words))))
            say("pong", "".join(words))
        elif command == "close":
            await connection.close(int(words[0]))


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--origin")
    parser.add_argument("--ca")
    parser.add_argument("--no-subprotocol", action="store_true")
    arguments = parser.parse_args()
    try:
        connection = await websockets.connect(
            arguments.url, origin=arguments.origin, subprotocols=None if arguments.no_subprotocol else ["subd"],
            ssl=ssl.create_default_context(cafile=arguments.ca) if arguments.ca else None,
            max_size=None, ping_interval=None, compression=None)
    except websockets.exceptions.InvalidStatusCode as error:
        say("refused", error.status_code)
        return
    accepted = asyncio.get_running_loop().create_future()
    server = await asyncio.start_server(lambda *streams: accepted.set_result(streams), "127.0.0.1", 0)
    say("port", server.sockets[0].getsockname()[1])
    say("subprotocol", connection.subprotocol or "-")
    reader, writer = await accepted
    commands = asyncio.create_task(run_commands(connection))
    sending = asyncio.create_task(bridge_from_socket(reader, connection))
    await bridge_to_socket(writer, connection)
    commands.cancel()
    sending.cancel()


asyncio.run(main())
