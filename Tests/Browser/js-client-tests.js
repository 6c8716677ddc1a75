// The browser tests of clients/js/subd.js, run against real subd processes by Tests/Browser/js_client_test.py
// (which serves this page and subd.js side by side and reads window.__results). Query string:
//   ws      a ws:// listener of a subd without authentication
//   authws  a ws:// listener of a subd with auth_token `token` and the user `user` (secret `secret`, rights A.>)
//   closedport  a local port nothing listens on
// The page runs every case in turn; window.__phase holds helpers the Python script drives afterwards (the
// cross-checks with subctl and the restart of subd).
import * as subd from "./subd.js";

const {
  connect, SubdError, ProtoError, NameError, NotFoundError, TooBigError, AuthError, DeniedError,
  ConnectionError, _LineParser, _encodeInfoValue, _decodeInfoValue, _patternMatches,
} = subd;

const params = new URLSearchParams(location.search);
const WS = params.get("ws");
const AUTH_WS = params.get("authws");
const TOKEN = params.get("token");
const USER = params.get("user");
const SECRET = params.get("secret");
const CLOSED_PORT = params.get("closedport");
const encoder = new TextEncoder();

// -- Console capture, for the report of a failed run ----------------------------------------------------------

window.__log = [];
for (const level of ["log", "info", "warn", "error"]) {
  const original = console[level].bind(console);
  console[level] = (...args) => {
    window.__log.push(`${level}: ${args.map(String).join(" ")}`);
    original(...args);
  };
}
window.addEventListener("error", (event) => window.__log.push(`uncaught: ${event.message}`));
window.addEventListener("unhandledrejection", (event) => window.__log.push(`unhandled rejection: ${event.reason}`));

// -- A small harness ---------------------------------------------------------------------------------------------

const cases = [];
let opened = [];

/** Declares a case; `fn` gets a unique prefix for the numbers it makes. */
function test(name, fn, timeout = 10000) {
  cases.push({ name, fn, timeout });
}

class Failure extends Error {}

function check(condition, what) {
  if (!condition) throw new Failure(what);
}

function same(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Failure(`${what}: expected ${e}, got ${a}`);
}

/** Awaits `promise`, which must reject with an error of `Type` (and `code`); returns the error. */
async function rejects(promise, Type, code, what) {
  let error;
  try {
    await promise;
  } catch (caught) {
    error = caught;
  }
  if (error === undefined) throw new Failure(`${what}: expected ${Type.name}, but it resolved`);
  if (!(error instanceof Type)) {
    throw new Failure(`${what}: expected ${Type.name}, got ${error.name}: ${error.message}`);
  }
  if (code !== undefined && error.code !== code) throw new Failure(`${what}: expected code ${code}, got ${error.code}`);
  return error;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `predicate()` holds (every 5 ms, at most `ms`). */
async function until(predicate, what, ms = 4000) {
  const end = performance.now() + ms;
  while (!predicate()) {
    if (performance.now() > end) throw new Failure(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** A client closed at the end of the case. */
async function open(url, options) {
  const client = await connect(url, options);
  opened.push(client);
  return client;
}

/** After a ping round trip on every given client: what was going to arrive has arrived. */
async function settle(...clients) {
  for (const client of clients) await client.ping();
  await sleep(30);
}

function bytesOf(text) {
  return [...encoder.encode(text)];
}

/** A WebSocket for `connect({WebSocket})` that records the first line of each message sent, can drop the
 *  connection (as a network failure would: nothing more is read) and can hold new connections off (they go to a
 *  path the server refuses, so they fail as when it is down). */
function makeTestSocket() {
  class TestSocket extends WebSocket {
    static sent = [];
    static hold = false;
    static sockets = [];
    constructor(url, protocols) {
      super(TestSocket.hold ? url.replace(/\/[^/]*$/, "/held-off") : url, protocols);
      TestSocket.sockets.push(this);
    }
    send(data) {
      const bytes = data instanceof Uint8Array ? data : new Uint8Array(data);
      const end = bytes.indexOf(10);
      TestSocket.sent.push(new TextDecoder().decode(bytes.subarray(0, end < 0 ? bytes.length : end)));
      super.send(data);
    }
    // What arrives after drop() is lost, as on a network that failed: the client must not see a late reply.
    set onmessage(handler) {
      super.onmessage = (event) => this.dropped || handler(event);
    }
    get onmessage() {
      return super.onmessage;
    }
    static drop() {
      const socket = TestSocket.sockets.at(-1);
      socket.dropped = true;
      socket.close();
    }
  }
  return TestSocket;
}

/** Records a client's events: [type, detail]. */
function recordEvents(client) {
  const events = [];
  for (const type of ["connected", "disconnected", "reconnecting", "closed", "gone", "error"]) {
    client.addEventListener(type, (event) => events.push([type, event.detail]));
  }
  return events;
}

// -- The stream parser and the helpers ---------------------------------------------------------------------------

/** A stream with every kind of frame, and the frames it must give. */
function parserStream() {
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  const parts = [
    "+OK subd 0.1.0 proto=1.1 session=7\n",
    "MSG A.b 5 from=lab rev=3 group=g unit=EUR note=a%20b%3Dc $x=1 junk\n12\n34\n",
    "*3\nMSG X 1\nGONE Y\n+OK\n",
    "GONE A.b\n",
    "NEWVERB some words\n",
    "-ERR NOTFOUND no subscription number 'Q' (CREATE it first)\n",
    "MSG E 0\n\n",
    "MSG caf\u00e9.\u00e9 2 k=%C3%A9 bad=%zz\nok\n",
    "MSG BIN 256\n", all, "\n",
    "*0\n",
    "+PONG hi  there \n",
    "+OK 5\r\n",
  ];
  const bytes = [];
  for (const part of parts) bytes.push(...(typeof part === "string" ? encoder.encode(part) : part));
  const frames = [
    { type: "ok", text: "OK subd 0.1.0 proto=1.1 session=7" },
    { type: "msg", number: "A.b", payload: bytesOf("12\n34"), from: "lab", revision: 3, group: "g",
      info: [["unit", "EUR"], ["note", "a b=c"]] },
    { type: "list", lines: ["MSG X 1", "GONE Y", "+OK"] },
    { type: "gone", number: "A.b" },
    { type: "push", line: "NEWVERB some words" },
    { type: "err", code: "NOTFOUND", text: "no subscription number 'Q' (CREATE it first)" },
    { type: "msg", number: "E", payload: [], info: [] },
    { type: "msg", number: "caf\u00e9.\u00e9", payload: bytesOf("ok"), info: [["k", "\u00e9"], ["bad", "%zz"]] },
    { type: "msg", number: "BIN", payload: [...all], info: [] },
    { type: "list", lines: [] },
    { type: "ok", text: "PONG hi  there " },
    { type: "ok", text: "OK 5" },
  ];
  return { bytes: Uint8Array.from(bytes), frames };
}

/** Feeds `bytes` to a parser in chunks of the sizes `next()` gives; returns the frames, messages made plain. */
function parse(bytes, next) {
  const frames = [];
  const parser = new _LineParser((frame) => {
    if (frame.type !== "msg") return frames.push(frame);
    const { number, payload, from, revision, group, info } = frame.message;
    const plain = { type: "msg", number, payload: [...payload], from, revision, group, info };
    check(frame.message.text === new TextDecoder().decode(payload), "message.text is its payload as UTF-8");
    frames.push(JSON.parse(JSON.stringify(plain)));
  });
  for (let at = 0; at < bytes.length;) {
    const size = Math.max(1, next());
    parser.feed(bytes.slice(at, at + size));
    at += size;
  }
  return frames;
}

test("parser: a stream fed whole, one byte at a time and in random chunks gives the same frames", async () => {
  const { bytes, frames } = parserStream();
  same(parse(bytes, () => bytes.length), frames, "fed whole");
  same(parse(bytes, () => 1), frames, "fed one byte at a time");
  let seed = 12345;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let round = 0; round < 200; round++) {
    const largest = 1 + Math.floor(random() * 64);
    same(parse(bytes, () => 1 + Math.floor(random() * largest)), frames, `random chunks, round ${round}`);
  }
  // Two streams back to back in one chunk, the second split inside a multi-byte character.
  const twice = new Uint8Array([...bytes, ...bytes]);
  same(parse(twice, () => bytes.length + 90), [...frames, ...frames], "two streams, split after 90 bytes");
});

test("parser: a payload not followed by LF, or a bad MSG size, breaks the stream", async () => {
  const parser = new _LineParser(() => {});
  await rejects((async () => parser.feed(encoder.encode("MSG A 1\nxy")))(), ProtoError, "PROTO", "no LF");
  const other = new _LineParser(() => {});
  await rejects((async () => other.feed(encoder.encode("MSG A -1\n")))(), ProtoError, "PROTO", "bad size");
});

test("info values: percent-encoded as subctl does, decoded back, kept as sent when they do not decode", async () => {
  same(_encodeInfoValue("a b"), "a%20b", "space");
  same(_encodeInfoValue("x=y"), "x%3Dy", "=");
  same(_encodeInfoValue("100%"), "100%25", "%");
  same(_encodeInfoValue("t\tn\nr\r\u0000\u007f"), "t%09n%0Ar%0D%00%7F", "control characters");
  same(_encodeInfoValue("h\u00e9llo \u2713 \u{1F600}"), "h\u00e9llo%20\u2713%20\u{1F600}", "non-ASCII kept");
  same(_encodeInfoValue("EUR"), "EUR", "nothing to encode");
  for (const value of ["a b", "x=y", "100% sure", "h\u00e9llo \u2713 \u{1F600}", "t\tn\n", "%41", "%"]) {
    same(_decodeInfoValue(_encodeInfoValue(value)), value, `round trip of ${JSON.stringify(value)}`);
  }
  same(_decodeInfoValue("%c3%a9"), "\u00e9", "lower-case hex");
  same(_decodeInfoValue("%zz"), "%zz", "not hex: kept");
  same(_decodeInfoValue("50%"), "50%", "a % at the end: kept");
  same(_decodeInfoValue("%C3"), "%C3", "not UTF-8: kept");
  same(_decodeInfoValue("%FF%FE"), "%FF%FE", "not UTF-8: kept");
});

test("patterns: * is one token, > one or more at the end, $SYS. only through a literal first token", async () => {
  const cases = [
    ["A", "A", true], ["A", "A.b", false], ["A.*", "A.b", true], ["A.*", "A", false], ["A.*", "A.b.c", false],
    ["A.>", "A.b", true], ["A.>", "A.b.c", true], ["A.>", "A", false], [">", "A", true], [">", "A.b.c", true],
    ["*.b", "A.b", true], ["A.*.c", "A.b.c", true], ["A.*.c", "A.b.d", false], ["A.b*", "A.bc", false],
    [">", "$SYS.stats", false], ["*.stats", "$SYS.stats", false], ["$SYS.>", "$SYS.client.connected", true],
    ["$SYS.*", "$SYS.stats", true], [">", "$price", true], ["*", "$SYS", false], ["*", "$SYSTEM", true],
  ];
  for (const [pattern, number, expected] of cases) {
    same(_patternMatches(pattern, number), expected, `${pattern} against ${number}`);
  }
});

// -- Connecting ------------------------------------------------------------------------------------------------

test("connect: HELLO's reply gives the version, protocol 1.1 and the session id", async () => {
  const first = await open(WS);
  const second = await open(WS);
  same(first.state, "connected", "state");
  check(/^\d+\.\d+\.\d+/.test(first.server.version), `a version: ${first.server.version}`);
  same(first.server.protocol, "1.1", "protocol");
  check(Number.isInteger(first.server.session) && first.server.session > 0, "a session id");
  check(second.server.session > first.server.session, "session ids count up");
});

test("connect: the name is every published message's from=; no name, no from", async (P) => {
  const named = await open(WS, { name: "lab-1" });
  const anonymous = await open(WS);
  const listener = await open(WS);
  await named.create(P);
  const got = [];
  await listener.subscribe(P, (message) => got.push(message));
  same(await named.publish(P, "x"), 1, "receivers");
  same(await anonymous.publish(P, "y"), 1, "receivers");
  await until(() => got.length === 2, "two messages");
  same(got.map((m) => [m.text, m.from]), [["x", "lab-1"], ["y", undefined]], "messages and their from");
});

test("connect: an unreachable server or a refused upgrade rejects with ConnectionError", async () => {
  const url = new URL(WS);
  await rejects(connect(`ws://127.0.0.1:${CLOSED_PORT}/subd`, { timeout: 3000 }), ConnectionError, undefined,
    "a port nothing listens on");
  await rejects(connect(`ws://${url.host}/not-subd`, { timeout: 3000 }), ConnectionError, undefined, "wrong path");
  await rejects(connect(WS, { name: "has space" }), ProtoError, "PROTO", "a name that is not one word");
});

test("close: sends QUIT, then every command fails with ConnectionError and nothing reconnects", async () => {
  const TestSocket = makeTestSocket();
  const client = await connect(WS, { WebSocket: TestSocket });
  const events = recordEvents(client);
  await client.close();
  same(client.state, "closed", "state");
  same(TestSocket.sent, ["HELLO", "QUIT"], "lines sent");
  await rejects(client.ping(), ConnectionError, undefined, "a command after close");
  await sleep(300);
  same(TestSocket.sockets.length, 1, "sockets opened");
  same(events.map(([type]) => type), ["closed"], "events");
  await client.close(); // twice is harmless
});

// -- Numbers ---------------------------------------------------------------------------------------------------

test("create: plain and retained, 'created' then 'exists'", async (P) => {
  const client = await open(WS);
  same(await client.create(`${P}.a`), "created", "plain");
  same(await client.create(`${P}.a`), "exists", "plain again");
  same(await client.create(`${P}.b`, { retain: true }), "created", "retained");
  same(await client.create(`${P}.b`), "exists", "retained again, without retain");
  same(await client.create(`${P}.a`, { retain: true }), "exists", "plain again, with retain");
  same(await client.list(`${P}.*`, { kind: true }), [
    { number: `${P}.a`, subscribers: 0, kind: "plain" },
    { number: `${P}.b`, subscribers: 0, kind: "retained", revision: 0 },
  ], "kinds kept");
});

test("remove: counts the subscribers told GONE, fires 'gone', ends exact subscriptions only", async (P) => {
  const a = await open(WS);
  const b = await open(WS);
  const N = `${P}.n`;
  await a.create(N);
  const got = { a: [], b: [], wild: [] };
  await a.subscribe(N, (m) => got.a.push(m.text));
  await b.subscribe(N, (m) => got.b.push(m.text));
  await b.subscribe(`${P}.*`, (m) => got.wild.push(m.text));
  const gone = { a: [], b: [] };
  a.addEventListener("gone", (event) => gone.a.push(event.detail));
  b.addEventListener("gone", (event) => gone.b.push(event.detail));
  same(await a.remove(N), 2, "subscribers told GONE");
  await until(() => gone.b.length === 1, "b's gone event");
  same(gone, { a: [N], b: [N] }, "gone events");
  await rejects(a.remove(N), NotFoundError, "NOTFOUND", "removed twice");
  await a.create(N);
  same(await a.publish(N, "again"), 1, "receivers once made again: b's wildcard only");
  await until(() => got.wild.length === 1, "the wildcard's message");
  await settle(a, b);
  same(got, { a: [], b: [], wild: ["again"] }, "messages");
});

// -- Publishing and subscribing ----------------------------------------------------------------------------------

test("publish: receivers counted (the publisher too); a text payload arrives as its UTF-8 bytes", async (P) => {
  const publisher = await open(WS);
  const s1 = await open(WS);
  const s2 = await open(WS);
  await publisher.create(P);
  same(await publisher.publish(P, "nobody"), 0, "no subscriber");
  const got = [];
  await s1.subscribe(P, (m) => got.push(m));
  await s2.subscribe(P, (m) => got.push(m));
  const text = "h\u00e9llo \u2713 \u{1F600}";
  same(await publisher.publish(P, text), 2, "two subscribers");
  await publisher.subscribe(P, () => {});
  same(await publisher.publish(P, "own"), 3, "the publisher subscribed too");
  await until(() => got.length === 4, "four messages");
  same(got[0].text, text, "text");
  same([...got[0].payload], bytesOf(text), "payload bytes");
  same(got[0].info, [], "no info");
  same(got[0].number, P, "number");
  same(got[0].revision, undefined, "no revision on a plain number");
});

test("publish: a Uint8Array with all 256 byte values (LF, NUL, CR...), a large one and an empty one, byte-exact",
  async (P) => {
    const publisher = await open(WS);
    const subscriber = await open(WS);
    await publisher.create(P);
    const got = [];
    await subscriber.subscribe(P, (m) => got.push(m.payload));
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    const tricky = encoder.encode("\nMSG X 3\nabc\n+OK\r\n*2\n");
    const large = Uint8Array.from({ length: 300000 }, (_, i) => (i * 7919 + (i >> 8)) & 0xff);
    for (const payload of [all, tricky, large, new Uint8Array(0), all.subarray(250)]) {
      same(await publisher.publish(P, payload), 1, "receivers");
    }
    await until(() => got.length === 5, "five messages");
    same([...got[0]], [...all], "all 256 byte values");
    same([...got[1]], [...tricky], "a payload that looks like protocol lines");
    check(got[2].length === large.length && got[2].every((byte, i) => byte === large[i]), "the large payload");
    same(got[3].length, 0, "the empty payload");
    same([...got[4]], [250, 251, 252, 253, 254, 255], "a subarray sends only its bytes");
  });

test("subscribe: an exact number, * and > get exactly the numbers they match", async (P) => {
  const publisher = await open(WS);
  const subscriber = await open(WS);
  const numbers = [`${P}.A.x`, `${P}.A.y`, `${P}.A.x.z`, `${P}.A`, `${P}.B.x`];
  for (const number of numbers) await publisher.create(number);
  const got = { exact: [], star: [], rest: [] };
  await subscriber.subscribe(`${P}.A.x`, (m) => got.exact.push(m.number));
  await subscriber.subscribe(`${P}.A.*`, (m) => got.star.push(m.number));
  await subscriber.subscribe(`${P}.A.>`, (m) => got.rest.push(m.number));
  const receivers = [];
  for (const number of numbers) receivers.push(await publisher.publish(number, number));
  same(receivers, [1, 1, 1, 0, 0], "receivers");
  await settle(publisher, subscriber);
  same(got, {
    exact: [`${P}.A.x`],
    star: [`${P}.A.x`, `${P}.A.y`],
    rest: [`${P}.A.x`, `${P}.A.y`, `${P}.A.x.z`],
  }, "numbers received per handler");
});

test("subscribe: > never gets $SYS. numbers, $SYS.client.* does", async () => {
  const client = await open(WS);
  const all = [];
  const system = [];
  await client.subscribe(">", (m) => all.push(m.number));
  await client.subscribe("$SYS.client.*", (m) => system.push(JSON.parse(m.text)));
  const other = await open(WS);
  await until(() => system.some((event) => event.event === "client.connected"), "$SYS.client.connected");
  await other.close();
  await until(() => system.some((event) => event.event === "client.disconnected"), "$SYS.client.disconnected");
  await settle(client);
  same(all.filter((number) => number.startsWith("$SYS")), [], "$SYS numbers through >");
});

test("subscribe: a from filter passes one publisher; an unfiltered handler of the pattern gets all", async (P) => {
  const alice = await open(WS, { name: "alice-f" });
  const bob = await open(WS, { name: "bob-f" });
  const subscriber = await open(WS);
  await alice.create(P);
  const onlyAlice = [];
  const all = [];
  await subscriber.subscribe(P, (m) => onlyAlice.push(m.text), { from: "alice-f" });
  same(await bob.publish(P, "b1"), 0, "the server filters on from=");
  same(await alice.publish(P, "a1"), 1, "alice's passes");
  const stopAll = await subscriber.subscribe(P, (m) => all.push(m.text));
  same(await bob.publish(P, "b2"), 1, "the pattern's subscription widened");
  same(await alice.publish(P, "a2"), 1, "one receiver: the session, once");
  await until(() => all.length === 2 && onlyAlice.length === 2, "messages");
  await settle(subscriber);
  same(onlyAlice, ["a1", "a2"], "the from=alice-f handler");
  same(all, ["b2", "a2"], "the unfiltered handler");
  await stopAll();
  same(await bob.publish(P, "b3"), 0, "narrowed again to from=alice-f");
});

test("subscribe: a queue group shares the messages, each marked with its group; a plain one gets all", async (P) => {
  const w1 = await open(WS);
  const w2 = await open(WS);
  const plain = await open(WS);
  const publisher = await open(WS);
  await publisher.create(P);
  const got = { w1: [], w2: [], plain: [] };
  await w1.subscribe(P, (m) => got.w1.push(m), { group: "workers" });
  await w2.subscribe(P, (m) => got.w2.push(m), { group: "workers" });
  await plain.subscribe(P, (m) => got.plain.push(m));
  for (let i = 0; i < 4; i++) same(await publisher.publish(P, `job${i}`), 2, "receivers: one member and plain");
  await until(() => got.w1.length + got.w2.length === 4 && got.plain.length === 4, "the jobs");
  await settle(w1, w2, plain);
  same([got.w1.length, got.w2.length], [2, 2], "shared in turn");
  check([...got.w1, ...got.w2].every((m) => m.group === "workers"), "group= on the members' messages");
  same(got.plain.map((m) => [m.text, m.group]), [0, 1, 2, 3].map((i) => [`job${i}`, undefined]), "plain");
  await rejects(w1.subscribe(P, () => {}), ProtoError, "PROTO", "a plain handler on a group member's pattern");
  await rejects(w1.subscribe(P, () => {}, { group: "other" }), ProtoError, "PROTO", "another group");
});

test("subscribe: overlapping handlers of one client each get a message once; unsubscribe stops one", async (P) => {
  const client = await open(WS);
  const publisher = await open(WS);
  const N = `${P}.o.a`;
  await publisher.create(N);
  const count = { exact1: 0, exact2: 0, star: 0, rest: 0 };
  const stop1 = await client.subscribe(N, () => count.exact1++);
  const stop2 = await client.subscribe(N, () => count.exact2++);
  const stop3 = await client.subscribe(`${P}.o.*`, () => count.star++);
  const stop4 = await client.subscribe(`${P}.o.>`, () => count.rest++);
  same(await publisher.publish(N, "m1"), 1, "one session receives it");
  await until(() => count.rest === 1, "m1");
  await settle(client);
  same(count, { exact1: 1, exact2: 1, star: 1, rest: 1 }, "each handler once");
  await stop2();
  same(await publisher.publish(N, "m2"), 1, "receivers");
  await until(() => count.rest === 2, "m2");
  await settle(client);
  same(count, { exact1: 2, exact2: 1, star: 2, rest: 2 }, "the unsubscribed handler stopped");
  await stop1();
  await stop3();
  same(await publisher.publish(N, "m3"), 1, "> still subscribed");
  await until(() => count.rest === 3, "m3");
  await stop4();
  await stop4(); // twice is harmless
  same(await publisher.publish(N, "m4"), 0, "no subscription left on the server");
  await settle(client);
  same(count, { exact1: 2, exact2: 1, star: 2, rest: 3 }, "final counts");
});

// -- Retained numbers --------------------------------------------------------------------------------------------

test("get: null before the first publication, then the value with its revision, from and info", async (P) => {
  const client = await open(WS, { name: "getter" });
  const R = `${P}.r`;
  await client.create(R, { retain: true });
  await client.create(`${P}.plain`);
  same(await client.get(R), null, "no value yet");
  same(await client.publish(R, "v1", { unit: "EUR" }), 0, "receivers");
  const first = await client.get(R);
  same([first.number, first.text, first.revision, first.from, first.info], [R, "v1", 1, "getter", [["unit", "EUR"]]],
    "the value");
  await client.publish(R, "v2");
  const second = await client.get(R);
  same([second.text, second.revision, second.info], ["v2", 2, []], "the next value");
  await rejects(client.get(`${P}.plain`), ProtoError, "PROTO", "a plain number");
  await rejects(client.get(`${P}.missing`), NotFoundError, "NOTFOUND", "a missing number");
});

test("subscribe to a retained number: its current value comes first, once per handler", async (P) => {
  const client = await open(WS);
  const publisher = await open(WS);
  const R = `${P}.r`;
  await publisher.create(R, { retain: true });
  await publisher.publish(R, "current");
  const exact = [];
  const wild = [];
  await client.subscribe(R, (m) => exact.push([m.text, m.revision]));
  same(exact, [["current", 1]], "the value, before subscribe resolved");
  await client.subscribe(`${P}.*`, (m) => wild.push([m.text, m.revision]));
  same(wild, [["current", 1]], "the second handler's own copy");
  await settle(client);
  same(exact, [["current", 1]], "no duplicate for the first handler");
  same(await publisher.publish(R, "next"), 1, "receivers");
  await until(() => wild.length === 2, "next");
  await settle(client);
  same([exact, wild], [[["current", 1], ["next", 2]], [["current", 1], ["next", 2]]], "each handler once");
});

test("watch: the current value as a change from null, then old -> new, no duplicates", async (P) => {
  const client = await open(WS);
  const publisher = await open(WS);
  const R = `${P}.r`;
  await publisher.create(R, { retain: true });
  await publisher.publish(R, "v1");
  const changes = [];
  const summary = () => changes.map((c) => [c.number, c.old?.text ?? null, c.new.text, c.revision, c.missed]);
  const stop = await client.watch(R, (change) => changes.push(change));
  same(summary(), [[R, null, "v1", 1, undefined]], "the current value first");
  await publisher.publish(R, "v2");
  await until(() => changes.length === 2, "v2");
  await client.subscribe(R, () => {}); // another handler of the same pattern: pushes again, no new change
  await client.get(R);
  await publisher.publish(R, "v3");
  await until(() => changes.length === 3, "v3");
  await settle(client, publisher);
  same(summary(), [[R, null, "v1", 1, undefined], [R, "v1", "v2", 2, undefined], [R, "v2", "v3", 3, undefined]],
    "changes");
  await stop();
  await publisher.publish(R, "v4");
  await settle(client, publisher);
  same(changes.length, 3, "no change after stop");
  const E = `${P}.empty`;
  await publisher.create(E, { retain: true });
  const fresh = [];
  await client.watch(E, (change) => fresh.push([change.old, change.new.text, change.revision, change.missed]));
  same(fresh, [], "no value, no change yet");
  await publisher.publish(E, "first");
  await until(() => fresh.length === 1, "the first value");
  same(fresh, [[null, "first", 1, undefined]], "the first publication, from null");
  await publisher.create(`${P}.plain`);
  await rejects(client.watch(`${P}.plain`, () => {}), ProtoError, "PROTO", "a plain number");
  await rejects(client.watch(`${P}.missing`, () => {}), NotFoundError, "NOTFOUND", "a missing number");
});

test("reconnect: in-flight commands fail, the subscription and watch are restored first, queued commands "
  + "follow, missed revisions are reported", async (P) => {
  const TestSocket = makeTestSocket();
  const client = await open(WS, { WebSocket: TestSocket, reconnectDelay: 20, maxReconnectDelay: 80, maxQueued: 3 });
  const events = recordEvents(client);
  const publisher = await open(WS);
  const N = `${P}.n`;
  const R = `${P}.r`;
  await publisher.create(N);
  await publisher.create(R, { retain: true });
  await publisher.publish(R, "r1");
  const got = [];
  const changes = [];
  await client.subscribe(N, (m) => got.push(m.text));
  await client.watch(R, (c) => changes.push([c.old?.text ?? null, c.new.text, c.revision, c.missed]));
  TestSocket.hold = true;
  const random = Math.random;
  Math.random = () => 0.99; // full jitter at its top: each wait close to its bound, so the doubling shows
  const inflight = client.ping();
  TestSocket.drop();
  await rejects(inflight, ConnectionError, undefined, "a command in flight");
  await until(() => client.state === "reconnecting", "reconnecting");
  const queued = [client.publish(N, "queued"), client.ping(), client.ping()];
  await rejects(client.ping(), ConnectionError, undefined, "past maxQueued");
  await publisher.publish(R, "r2");
  await publisher.publish(R, "r3");
  await until(() => events.filter(([type]) => type === "reconnecting").length >= 4, "four attempts");
  Math.random = random;
  TestSocket.sent.length = 0;
  TestSocket.hold = false;
  await until(() => client.state === "connected", "connected again");
  same(await queued[0], 1, "the queued publication reached the restored subscription");
  await Promise.all(queued);
  same(TestSocket.sent.slice(0, 6), ["HELLO", `SUB ${N}`, `SUB ${R}`, `PUB ${N} 6`, "PING", "PING"],
    "HELLO, the subscriptions, then the queued commands");
  same(changes, [[null, "r1", 1, undefined], ["r1", "r3", 3, { from: 2, to: 2 }]], "the missed revision");
  await until(() => got.length === 1, "the queued message");
  await publisher.publish(R, "r4");
  await publisher.publish(N, "after");
  await until(() => got.length === 2 && changes.length === 3, "after the reconnection");
  same(changes[2], ["r3", "r4", 4, undefined], "the next change");
  same(got, ["queued", "after"], "messages");
  const types = events.map(([type]) => type);
  same(types[0], "disconnected", "first event");
  same(types.at(-1), "connected", "last event");
  const attempts = events.filter(([type]) => type === "reconnecting").map(([, detail]) => detail);
  attempts.forEach(({ attempt, delay }, i) => {
    same(attempt, i + 1, "attempts count up");
    check(delay >= 0 && delay <= Math.min(80, 20 * 2 ** i), `attempt ${attempt}'s delay ${delay} within its bound`);
  });
  same(attempts.slice(0, 4).map(({ delay }) => Math.round(delay * 10) / 10), [19.8, 39.6, 79.2, 79.2],
    "the bounds double from reconnectDelay up to maxReconnectDelay (waits with Math.random() at 0.99)");
});

test("reconnect: false closes the client when the connection is lost", async () => {
  const TestSocket = makeTestSocket();
  const client = await open(WS, { WebSocket: TestSocket, reconnect: false });
  const events = recordEvents(client);
  let fromListener = null;
  client.addEventListener("disconnected", () => { fromListener = client.ping(); });
  TestSocket.drop();
  await until(() => client.state === "closed", "closed");
  same(events.map(([type]) => type), ["disconnected", "closed"], "events");
  await rejects(fromListener, ConnectionError, undefined, "a command sent by a 'disconnected' listener");
  await rejects(client.ping(), ConnectionError, undefined, "a command after it");
});

// -- LIST, STATS, PING ------------------------------------------------------------------------------------------

test("list: with and without kind, with and without a pattern", async (P) => {
  const client = await open(WS);
  const other = await open(WS);
  await client.create(`${P}.a`);
  await client.create(`${P}.b`, { retain: true });
  await client.publish(`${P}.b`, "1");
  await client.publish(`${P}.b`, "2");
  await other.subscribe(`${P}.a`, () => {});
  same(await client.list(`${P}.*`), [{ number: `${P}.a`, subscribers: 1 }, { number: `${P}.b`, subscribers: 0 }],
    "without kind");
  same(await client.list(`${P}.*`, { kind: true }), [
    { number: `${P}.a`, subscribers: 1, kind: "plain" },
    { number: `${P}.b`, subscribers: 0, kind: "retained", revision: 2 },
  ], "with kind");
  const all = await client.list();
  check(all.some((e) => e.number === `${P}.a` && e.subscribers === 1 && e.kind === undefined), "LIST: a");
  check(!all.some((e) => e.number.startsWith("$SYS")), "LIST shows no $SYS. number");
  const allKinds = await client.list(undefined, { kind: true });
  check(allKinds.some((e) => e.number === `${P}.b` && e.kind === "retained" && e.revision === 2), "LIST > kind: b");
  same(await client.list(`${P}.nothing.*`), [], "nothing matches");
  check((await client.list("$SYS.>")).some((e) => e.number === "$SYS.stats"), "LIST $SYS.>");
});

test("stats: every key, numbers as numbers", async () => {
  const client = await open(WS);
  const stats = await client.stats();
  same(typeof stats.version, "string", "version");
  for (const key of ["uptime_seconds", "connections", "total_connections", "numbers", "messages_published"]) {
    same(typeof stats[key], "number", key);
  }
  check(stats.connections >= 1, "connections");
  check(stats.messages_published >= 1, "messages published by the cases before");
});

test("ping: the round trip in milliseconds", async () => {
  const client = await open(WS);
  const ms = await client.ping();
  check(typeof ms === "number" && ms >= 0 && ms < 5000, `a round trip: ${ms}`);
});

// -- Errors ------------------------------------------------------------------------------------------------------

test("errors: each -ERR code rejects with its class (a SubdError with .code); the client goes on", async (P) => {
  const client = await open(WS);
  await client.create(P);
  const notFound = await rejects(client.subscribe(`${P}.missing`, () => {}), NotFoundError, "NOTFOUND", "SUB");
  check(notFound instanceof SubdError && notFound.message.includes(`${P}.missing`), "a SubdError with the text");
  await rejects(client.publish(`${P}.missing`, "x"), NotFoundError, "NOTFOUND", "PUB to a missing number");
  await rejects(client.create("a..b"), NameError, "NAME", "CREATE of a bad number");
  await rejects(client.subscribe("A.>.B", () => {}), NameError, "NAME", "SUB of a bad pattern");
  await rejects(client.publish(P, "x", { from: "me" }), ProtoError, "PROTO", "a reserved info key (server)");
  await rejects(client.publish(P, "x", { "bad key": "v" }), ProtoError, "PROTO", "a bad info key (client)");
  await rejects(client.publish(P, "x", { k: "" }), ProtoError, "PROTO", "an empty info value (server)");
  await rejects(client.publish("has space", "x"), NameError, "NAME", "a number with a space (client)");
  await rejects(client.publish("A\nPING", "x"), NameError, "NAME", "a number with a LF (client)");
  await rejects(client.subscribe(P, () => {}, { from: "a b" }), ProtoError, "PROTO", "a bad from (client)");
  await rejects(client.create("$SYS.mine"), DeniedError, "DENIED", "CREATE of a $SYS. number");
  same(await client.publish(P, "still fine"), 0, "the connection goes on");
});

test("errors: TooBigError for a payload over max_payload; the client reconnects by itself", async (P) => {
  const client = await open(WS, { reconnectDelay: 10 });
  const events = recordEvents(client);
  await client.create(P);
  await rejects(client.publish(P, new Uint8Array(1048577)), TooBigError, "TOOBIG", "a payload of 1 MiB + 1");
  await until(() => events.some(([type]) => type === "connected"), "connected again");
  same(await client.publish(P, "small"), 0, "publishing again");
});

// -- Authentication and users ------------------------------------------------------------------------------------

test("auth_token: no token and a wrong token are AuthError, the token logs in", async () => {
  await rejects(connect(AUTH_WS), AuthError, "AUTH", "no token");
  const TestSocket = makeTestSocket();
  await rejects(connect(AUTH_WS, { token: "wrong", WebSocket: TestSocket, reconnectDelay: 10 }), AuthError, "AUTH",
    "a wrong token");
  await sleep(200);
  same(TestSocket.sockets.length, 1, "connections made: a refused HELLO is not tried again");
  const client = await open(AUTH_WS, { token: TOKEN, name: "token-holder" });
  same(await client.create("Z.token"), "created", "every right");
  await rejects(connect(AUTH_WS, { token: TOKEN, name: USER }), DeniedError, "DENIED", "a user's name with the token");
});

test("users: a user logs in with its secret; what its rights do not cover is DeniedError", async () => {
  const alice = await open(AUTH_WS, { user: USER, token: SECRET });
  same(await alice.create("A.users"), "created", "create_remove");
  const got = [];
  await alice.subscribe("A.>", (m) => got.push([m.number, m.from]));
  same(await alice.publish("A.users", "hi"), 1, "publish within A.>");
  await until(() => got.length === 1, "the message");
  same(got, [["A.users", USER]], "from= is the user");
  await rejects(alice.publish("B.x", "no"), DeniedError, "DENIED", "publish outside the rights");
  await rejects(alice.subscribe("B.>", () => {}), DeniedError, "DENIED", "subscribe outside the rights");
  await rejects(alice.get("B.x"), DeniedError, "DENIED", "get outside the rights");
  await rejects(connect(AUTH_WS, { user: USER, token: "wrong" }), AuthError, "AUTH", "a wrong secret");
  await rejects(connect(AUTH_WS, { user: "mallory", token: "x" }), AuthError, "AUTH", "an unknown user");
  await rejects(connect(AUTH_WS, { user: USER, name: "bob", token: SECRET }), ProtoError, "PROTO", "name != user");
  const same_name = await open(AUTH_WS, { user: USER, name: USER, token: SECRET });
  same(same_name.state, "connected", "name equal to user");
});

// -- Info pairs --------------------------------------------------------------------------------------------------

test("info pairs: spaces, =, %, control characters and Unicode round-trip, percent-encoded on the wire",
  async (P) => {
    const TestSocket = makeTestSocket();
    const publisher = await open(WS, { WebSocket: TestSocket });
    const subscriber = await open(WS);
    await publisher.create(P);
    const got = [];
    await subscriber.subscribe(P, (m) => got.push(m.info));
    const info = [["note", "a b"], ["eq", "x=y"], ["pct", "100% sure"], ["uni", "h\u00e9llo \u2713 \u{1F600}"],
      ["ctl", "tab\there\nline"], ["plain", "EUR"], ["lit", "%41 stays"]];
    same(await publisher.publish(P, "x", info), 1, "receivers");
    same(TestSocket.sent.at(-1), `PUB ${P} 1 note=a%20b eq=x%3Dy pct=100%25%20sure `
      + "uni=h\u00e9llo%20\u2713%20\u{1F600} ctl=tab%09here%0Aline plain=EUR lit=%2541%20stays", "the PUB line");
    await publisher.publish(P, "y", { a: "1 2", b: "=" });
    await until(() => got.length === 2, "two messages");
    same(got[0], info, "pairs in order, decoded");
    same(got[1], [["a", "1 2"], ["b", "="]], "an object's pairs");
  });

// -- Helpers the Python script drives after the cases -------------------------------------------------------------

const phase = { clients: {}, received: {}, rc: null };
window.__phase = phase;

/** Cross-check: publishes from the page (name "page") to a number a `subctl listen --json` listens to. */
phase.publish = async (number, text, info) => {
  phase.clients.publisher ??= await connect(WS, { name: "page" });
  return phase.clients.publisher.publish(number, text, info);
};

/** Cross-check: subscribes from the page; what arrives is in phase.received[number]. */
phase.subscribe = async (number) => {
  phase.clients.subscriber ??= await connect(WS, { name: "page-listener" });
  phase.received[number] = [];
  await phase.clients.subscriber.subscribe(number, (m) => {
    phase.received[number].push({ text: m.text, from: m.from ?? null, info: m.info });
  });
};

/** Restart: a client with a subscription to `plain` and a watch of `retained`, on `url`, with its record. */
phase.restartSetup = async (url, plain, retained) => {
  const TestSocket = makeTestSocket();
  const client = await connect(url, { name: "page-rc", WebSocket: TestSocket, reconnectDelay: 100,
    maxReconnectDelay: 800 });
  const rc = { TestSocket, client, events: [], got: [], changes: [], queued: null, sentAfter: null };
  phase.rc = rc;
  for (const type of ["connected", "disconnected", "reconnecting", "closed", "gone", "error"]) {
    client.addEventListener(type, (event) => rc.events.push({ type, detail: event.detail, at: performance.now() }));
  }
  await client.subscribe(plain, (m) => rc.got.push({ text: m.text, from: m.from ?? null, info: m.info }));
  await client.watch(retained, (c) => rc.changes.push({ old: c.old?.text ?? null, new: c.new.text,
    revision: c.revision, missed: c.missed ?? null }));
  return rc.changes;
};

/** Restart: what the Python script polls. */
phase.restartState = () => {
  const rc = phase.rc;
  return { state: rc.client.state, events: rc.events, got: rc.got, changes: rc.changes, sent: rc.TestSocket.sent };
};

// -- Running ---------------------------------------------------------------------------------------------------

function show(result) {
  const item = document.createElement("li");
  item.className = result.ok ? "pass" : "fail";
  item.textContent = `${result.ok ? "PASS" : "FAIL"} ${result.name} (${result.ms} ms)`;
  if (!result.ok) {
    const detail = document.createElement("pre");
    detail.textContent = result.error;
    item.append(detail);
  }
  document.getElementById("cases").append(item);
}

async function run() {
  window.__results = { done: false, cases: [] };
  const only = params.get("only");
  for (const [index, { name, fn, timeout }] of cases.entries()) {
    if (only && !name.includes(only)) continue;
    const start = performance.now();
    let error = null;
    try {
      await Promise.race([fn(`T${index}`), sleep(timeout).then(() => {
        throw new Failure(`timed out after ${timeout} ms`);
      })]);
    } catch (caught) {
      error = caught instanceof Failure ? caught.message : `${caught?.name}: ${caught?.message}\n${caught?.stack}`;
    }
    const clients = opened;
    opened = [];
    await Promise.race([Promise.allSettled(clients.map((client) => client.close())), sleep(3000)]);
    const result = { name, ok: error === null, error, ms: Math.round(performance.now() - start) };
    window.__results.cases.push(result);
    show(result);
  }
  const failed = window.__results.cases.filter((result) => !result.ok).length;
  document.getElementById("summary").textContent = `${window.__results.cases.length - failed} passed, ${failed} failed`;
  window.__results.done = true;
}

run();
