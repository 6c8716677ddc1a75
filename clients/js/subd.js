// subd.js: the JavaScript client of subd. One ES module, no dependencies, no build step.
// It speaks the line protocol of docs/PROTOCOL.md over a WebSocket (subprotocol `subd`), in binary messages, so
// payloads are byte-exact. The API is declared in subd.d.ts; clients/js/README.md says how to use it.
//
//   import { connect } from "./subd.js";
//   const client = await connect("ws://127.0.0.1:7828/subd", { name: "dashboard" });
//   const stop = await client.subscribe("SCIENCE.>", (message) => console.log(message.number, message.text));
//   await client.publish("SCIENCE.physics", "V1.0", { unit: "EUR" });

const encoder = new TextEncoder();
const decoder = new TextDecoder(); // replacement characters where the bytes are not UTF-8
const strictDecoder = new TextDecoder("utf-8", { fatal: true });
const LF = 0x0a;

// ---------------------------------------------------------------------------------------------------------------
// Errors

/** An `-ERR <CODE> <text>` reply (docs/PROTOCOL.md, Error codes). `code` is the protocol's code; the message is the
 *  server's text (or the client's, for an argument refused before anything was sent). */
export class SubdError extends Error {
  /** @param {string} code  @param {string} message */
  constructor(code, message) {
    super(message);
    this.name = new.target.name;
    /** The protocol's code: PROTO, UNKNOWN, NAME, NOTFOUND, TOOBIG, AUTH, DENIED or LIMIT. */
    this.code = code;
  }
}
/** `PROTO`: a malformed command (a bad argument, an unknown or reserved info key, `GET` of a plain number...). */
export class ProtoError extends SubdError { constructor(message) { super("PROTO", message); } }
/** `UNKNOWN`: an unknown verb. */
export class UnknownError extends SubdError { constructor(message) { super("UNKNOWN", message); } }
/** `NAME`: an invalid number or pattern. */
export class NameError extends SubdError { constructor(message) { super("NAME", message); } }
/** `NOTFOUND`: no such number. */
export class NotFoundError extends SubdError { constructor(message) { super("NOTFOUND", message); } }
/** `TOOBIG`: a line or payload over the server's limit (the server closes the connection after it). */
export class TooBigError extends SubdError { constructor(message) { super("TOOBIG", message); } }
/** `AUTH`: authentication required, or failed. */
export class AuthError extends SubdError { constructor(message) { super("AUTH", message); } }
/** `DENIED`: the session may not do this. */
export class DeniedError extends SubdError { constructor(message) { super("DENIED", message); } }
/** `LIMIT`: a configured limit was reached. */
export class LimitError extends SubdError { constructor(message) { super("LIMIT", message); } }

/** The connection was lost or closed before the reply came (the command may or may not have been carried out), or
 *  the first connection failed. */
export class ConnectionError extends Error {
  /** @param {string} message  @param {{cause?: unknown}} [options] */
  constructor(message, options) {
    super(message, options);
    this.name = "ConnectionError";
  }
}

const ERRORS = {
  PROTO: ProtoError, UNKNOWN: UnknownError, NAME: NameError, NOTFOUND: NotFoundError,
  TOOBIG: TooBigError, AUTH: AuthError, DENIED: DeniedError, LIMIT: LimitError,
};

/** The typed error of a code; an unknown code (a later server's) is a plain SubdError. */
function errorOf(code, text) {
  const Type = ERRORS[code];
  return Type ? new Type(text) : new SubdError(code, text);
}

// ---------------------------------------------------------------------------------------------------------------
// Words, info pairs and patterns

const WORD = /^[^\x00-\x20\x7f]+$/; // no space, no control character, not empty
const INFO_KEY = /^[A-Za-z][A-Za-z0-9_.-]*$/;

/** Refuses a number or pattern that could not travel as one word (the server checks the rest: NAME). */
function checkNumber(value, what = "number") {
  if (typeof value !== "string" || !WORD.test(value)) {
    throw new NameError(`invalid ${what} ${JSON.stringify(value)}: it must be a non-empty string with no space or `
      + "control character");
  }
}

/** Refuses a client name, group name or token that could not travel as one word (the server checks the rest). */
function checkWord(value, what) {
  if (typeof value !== "string" || !WORD.test(value)) {
    throw new ProtoError(`invalid ${what}: it must be a non-empty string with no space or control character`);
  }
}

/**
 * Percent-encodes an info value as subctl does: each UTF-8 byte a value may not hold (space, control characters,
 * `=`) and `%` itself becomes `%XX` (upper-case hex); every other byte is kept. Internal; exported for the tests.
 * @param {string} value
 * @returns {string}
 */
export function _encodeInfoValue(value) {
  const out = [];
  for (const byte of encoder.encode(String(value))) {
    if (byte <= 0x20 || byte === 0x7f || byte === 0x3d || byte === 0x25) {
      out.push(0x25, ...encoder.encode(byte.toString(16).toUpperCase().padStart(2, "0")));
    } else {
      out.push(byte);
    }
  }
  return decoder.decode(Uint8Array.from(out));
}

/**
 * Decodes the `%XX` sequences of a received info value; a value whose `%` is not followed by two hex digits, or
 * whose decoded bytes are not UTF-8, is returned as sent. Internal; exported for the tests.
 * @param {string} value
 * @returns {string}
 */
export function _decodeInfoValue(value) {
  if (!value.includes("%")) return value;
  const bytes = encoder.encode(value);
  const out = [];
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x25) {
      out.push(bytes[i]);
      continue;
    }
    const high = hexValue(bytes[i + 1]);
    const low = hexValue(bytes[i + 2]);
    if (high < 0 || low < 0) return value;
    out.push(high * 16 + low);
    i += 2;
  }
  try {
    return strictDecoder.decode(Uint8Array.from(out));
  } catch {
    return value;
  }
}

function hexValue(byte) {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x41 + 10;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  return -1;
}

/** The ` key=value...` words of a PUB line, values percent-encoded. */
function infoWords(info) {
  if (info === undefined || info === null) return "";
  const pairs = Array.isArray(info) ? info : Object.entries(info);
  let words = "";
  for (const [key, value] of pairs) {
    if (typeof key !== "string" || !INFO_KEY.test(key)) {
      throw new ProtoError(`invalid info key ${JSON.stringify(key)}: it must be ASCII letters, digits, '_', '-' or `
        + "'.', starting with a letter");
    }
    words += ` ${key}=${_encodeInfoValue(value)}`;
  }
  return words;
}

/**
 * Whether `pattern` matches `number` (docs/PROTOCOL.md, Patterns): `*` is one token, `>` (last) one or more, and a
 * pattern whose first token is `*` or `>` never matches a `$SYS.` number. Internal; exported for the tests.
 * @param {string} pattern
 * @param {string} number
 * @returns {boolean}
 */
export function _patternMatches(pattern, number) {
  const p = pattern.split(".");
  const n = number.split(".");
  if ((p[0] === "*" || p[0] === ">") && n[0] === "$SYS") return false;
  for (let i = 0; i < p.length; i++) {
    if (p[i] === ">" && i === p.length - 1) return n.length > i;
    if (i >= n.length || (p[i] !== "*" && p[i] !== n[i])) return false;
  }
  return p.length === n.length;
}

// ---------------------------------------------------------------------------------------------------------------
// Messages and the stream parser

/** A message as delivered (`MSG`): see `Message` in subd.d.ts. */
class SubdMessage {
  constructor(number, payload, fields) {
    /** @type {string} */ this.number = number;
    /** @type {Uint8Array} */ this.payload = payload;
    if (fields.from !== undefined) this.from = fields.from;
    if (fields.revision !== undefined) this.revision = fields.revision;
    if (fields.group !== undefined) this.group = fields.group;
    /** @type {Array<[string, string]>} */ this.info = fields.info;
  }

  /** The payload decoded as UTF-8 (replacement characters where it is not). */
  get text() {
    return decoder.decode(this.payload);
  }
}

/** The fields of a MSG line's words after `<nbytes>`: the server's own keys and the info pairs (decoded). */
function messageFields(words) {
  const fields = { info: [] };
  for (const word of words) {
    const eq = word.indexOf("=");
    if (eq < 1) continue; // not key=value: ignored, as a later server's words would be
    const key = word.slice(0, eq);
    const value = word.slice(eq + 1);
    if (key === "from" || key === "group") fields[key] ??= value;
    else if (key === "rev") fields.revision ??= Number(value);
    else if (INFO_KEY.test(key)) fields.info.push([key, _decodeInfoValue(value)]);
  }
  return fields;
}

/**
 * Parses the server's byte stream into frames, whatever its chunks: a line or payload may be split across chunks
 * and a chunk may hold many. Each frame goes to the callback given to the constructor:
 * `{type: "ok", text}` (a `+` reply without the `+`), `{type: "err", code, text}`, `{type: "list", lines}`,
 * `{type: "msg", message}`, `{type: "gone", number}`, or `{type: "push", line}` for a push verb it does not know.
 * Internal; exported for the tests. `feed` throws on a stream that breaks the protocol (a bad `MSG` size, no LF
 * after a payload).
 */
export class _LineParser {
  #emit;
  #parts = []; // the start of a line not ended yet
  #header = null; // the MSG whose payload is being read
  #payload = null;
  #filled = 0;
  #needLF = false;
  #list = null; // the lines of a `*n` reply read so far
  #listSize = 0;

  /** @param {(frame: object) => void} emit */
  constructor(emit) {
    this.#emit = emit;
  }

  /** Takes the next bytes of the stream. @param {Uint8Array} bytes */
  feed(bytes) {
    let i = 0;
    while (i < bytes.length) {
      if (this.#needLF) i = this.#takeLF(bytes, i);
      else if (this.#payload) i = this.#takePayload(bytes, i);
      else i = this.#takeLine(bytes, i);
    }
  }

  #takeLine(bytes, i) {
    const end = bytes.indexOf(LF, i);
    if (end < 0) {
      this.#parts.push(bytes.slice(i));
      return bytes.length;
    }
    let line = bytes.subarray(i, end);
    if (this.#parts.length) {
      line = concat([...this.#parts, line]);
      this.#parts = [];
    }
    let text = decoder.decode(line);
    if (text.endsWith("\r")) text = text.slice(0, -1);
    this.#onLine(text);
    return end + 1;
  }

  #takePayload(bytes, i) {
    const count = Math.min(this.#payload.length - this.#filled, bytes.length - i);
    this.#payload.set(bytes.subarray(i, i + count), this.#filled);
    this.#filled += count;
    if (this.#filled === this.#payload.length) this.#needLF = true;
    return i + count;
  }

  #takeLF(bytes, i) {
    if (bytes[i] !== LF) throw new ProtoError("the server sent no LF after a MSG payload");
    const { number, fields } = this.#header;
    const message = new SubdMessage(number, this.#payload, fields);
    this.#header = this.#payload = null;
    this.#needLF = false;
    this.#emit({ type: "msg", message });
    return i + 1;
  }

  #onLine(line) {
    if (this.#list) {
      this.#list.push(line);
      if (this.#list.length === this.#listSize) this.#endList();
    } else if (line.startsWith("+")) {
      this.#emit({ type: "ok", text: line.slice(1) });
    } else if (line.startsWith("-")) {
      const match = /^-ERR +(\S+) ?(.*)$/.exec(line);
      this.#emit({ type: "err", code: match ? match[1] : "PROTO", text: match ? match[2] : line });
    } else if (line.startsWith("*")) {
      this.#startList(line);
    } else if (line.trim() !== "") {
      this.#onPush(line.split(" ").filter((word) => word !== ""));
    }
  }

  #startList(line) {
    const size = /^\*(\d+)$/.test(line) ? Number(line.slice(1)) : NaN;
    if (!Number.isSafeInteger(size)) throw new ProtoError(`the server sent a bad list reply '${line}'`);
    this.#list = [];
    this.#listSize = size;
    if (size === 0) this.#endList();
  }

  #endList() {
    const lines = this.#list;
    this.#list = null;
    this.#emit({ type: "list", lines });
  }

  #onPush(words) {
    const verb = words[0].toUpperCase();
    if (verb === "MSG") {
      if (words.length < 3 || !/^\d+$/.test(words[2])) throw new ProtoError("the server sent a bad MSG line");
      this.#header = { number: words[1], fields: messageFields(words.slice(3)) };
      this.#payload = new Uint8Array(Number(words[2]));
      this.#filled = 0;
      this.#needLF = this.#payload.length === 0;
    } else if (verb === "GONE" && words.length >= 2) {
      this.#emit({ type: "gone", number: words[1] });
    } else {
      this.#emit({ type: "push", line: words.join(" ") });
    }
  }
}

function concat(chunks) {
  const out = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// The client

/** Calls a handler of the application; what it throws is reported, never let into the client. */
function call(handler, argument) {
  try {
    handler(argument);
  } catch (error) {
    (globalThis.reportError ?? console.error)(error);
  }
}

/** The number in a `+OK <n>` reply text (`OK 3`, `OK removed 3`). */
function lastNumber(text) {
  return Number(text.split(" ").pop());
}

/** `fn` run at most once; later calls get the first call's promise. */
function once(fn) {
  let result;
  return () => (result ??= fn());
}

const START = Symbol("start");

/*
 * Subscriptions. The server keeps one subscription per pattern per session (a second SUB of the same pattern
 * replaces the first), and delivers each message once per session however many subscriptions match. So the client
 * keeps, per pattern, the set of local handlers (from subscribe() and watch()) and one server subscription whose
 * options cover them all:
 *   - `from=`: the handlers' common filter when they all have the same one, else none (each handler filters).
 *   - `group=`: all the handlers of a pattern must have the same group (or none): a second subscribe() of a
 *     pattern with another group is refused (ProtoError), since one session cannot be a group member and a plain
 *     subscriber, or a member of two groups, through one pattern.
 * Each subscribe()/watch() sends a SUB with the pattern's options, whose pushes give the new handler the current
 * values of the matching retained numbers. unsubscribe() sends UNSUB when the pattern's last handler goes, or a SUB
 * with narrower options when those change.
 *
 * Dispatch: every MSG goes to each active handler whose pattern matches its number, whose `from` (if any) equals
 * the message's `from=`, and, for a group handler, whose group equals the message's `group=`. A plain handler takes
 * a message whatever its `group=`: the server marks with group= a message this session got through a group
 * subscription, and a plain handler whose pattern and filter match would have been given it anyway. A group handler
 * takes only messages marked with its group: a message without group= came through a plain subscription of this
 * session, and the group may then have handed it to another member (the session is skipped), so taking it could
 * process it twice. (So a session should not subscribe plainly and through a group to the same numbers: the group
 * handler then sees only what the group chose this session for.)
 *
 * Retained numbers. SUB and GET push current values (MSG with rev=) before their +OK, and those pushes look like
 * publications. While a SUB whose pattern matches the number, or a GET of it, waits for its reply (it is then the
 * first command waiting: replies and their pushes come in order), a MSG with rev= is taken by that command; it is
 * also dispatched to the matching handlers only when its revision is above the last one this client saw for the
 * number (a value new to the client). Any other MSG is dispatched. A number's last revision is forgotten when it is
 * created, removed or GONE.
 */

/** A client of one subd server: see `Client` in subd.d.ts. Made by `connect()`. */
export class Client extends EventTarget {
  #url;
  #options;
  #ws = null;
  #parser = null;
  #state = "connecting";
  #server = null;
  #closing = false;
  #wake = null; // ends the wait before the next reconnection attempt
  /** Commands sent, waiting for their replies, in order. */
  #inflight = [];
  /** Commands made while not connected, sent once the connection is back. */
  #queued = [];
  /** pattern -> { handlers: Set, server: the options key last confirmed by the server, or null }. */
  #patterns = new Map();
  /** number -> the highest revision this client saw. */
  #revisions = new Map();

  /** Use `connect()`. @param {string} url  @param {object} options */
  constructor(url, options = {}) {
    super();
    const { name, token, user } = options;
    if (user !== undefined) checkWord(user, "user");
    if (name !== undefined) checkWord(name, "client name");
    if (token !== undefined) checkWord(token, "token");
    if (user !== undefined && name !== undefined && name !== user) {
      throw new ProtoError("with `user`, the client name is the user's: leave `name` out or make it the same");
    }
    this.#url = url;
    this.#options = {
      name: user ?? name, token, reconnect: options.reconnect ?? true,
      reconnectDelay: options.reconnectDelay ?? 250, maxReconnectDelay: options.maxReconnectDelay ?? 10000,
      maxQueued: options.maxQueued ?? 1000, timeout: options.timeout ?? 10000,
      WebSocket: options.WebSocket ?? globalThis.WebSocket,
    };
  }

  /** The server's HELLO reply: version, protocol and session id. */
  get server() {
    return this.#server;
  }

  /** "connecting", "connected", "reconnecting" or "closed". */
  get state() {
    return this.#state;
  }

  /** The first connection (used by `connect()`): rejects, and closes the client, when it fails. */
  async [START]() {
    try {
      await this.#open();
    } catch (error) {
      this.#finish(error);
      throw error;
    }
  }

  // -- Commands -------------------------------------------------------------------------------------------------

  /** `CREATE`: "created" or "exists". @param {string} number  @param {{retain?: boolean}} [options] */
  async create(number, options = {}) {
    checkNumber(number);
    const frame = await this.#command(`CREATE ${number}${options.retain ? " retain" : ""}\n`);
    const result = frame.text.split(" ")[1];
    if (result === "created") this.#revisions.delete(number);
    return result;
  }

  /** `REMOVE`: how many subscribers were told `GONE`. @param {string} number */
  async remove(number) {
    checkNumber(number);
    const frame = await this.#command(`REMOVE ${number}\n`);
    this.#revisions.delete(number);
    return lastNumber(frame.text);
  }

  /**
   * `PUB`: resolves to the number of receivers. A string payload is sent as its UTF-8 bytes, a Uint8Array byte for
   * byte; info values are percent-encoded where they need to be.
   * @param {string} number  @param {string | Uint8Array} payload  @param {object} [info]
   */
  async publish(number, payload, info) {
    checkNumber(number);
    const body = payloadBytes(payload);
    const head = encoder.encode(`PUB ${number} ${body.length}${infoWords(info)}\n`);
    const frame = await this.#command(concat([head, body, Uint8Array.of(LF)]));
    return lastNumber(frame.text);
  }

  /**
   * `SUB`: resolves, once subscribed, to the function that unsubscribes. The current values of the matching
   * retained numbers are handed to `handler` first. See the comment above the class for overlapping subscriptions.
   * @param {string} pattern  @param {(message: object) => void} handler
   * @param {{from?: string, group?: string}} [options]
   */
  async subscribe(pattern, handler, options = {}) {
    checkNumber(pattern, "pattern");
    if (options.from !== undefined) checkWord(options.from, "client name (from)");
    if (options.group !== undefined) checkWord(options.group, "group name");
    if (typeof handler !== "function") throw new TypeError("subscribe needs a handler function");
    const entry = { pattern, from: options.from, group: options.group, active: false, receive: handler };
    await this.#addHandler(entry);
    return once(() => this.#removeHandler(entry));
  }

  /** `GET`: the current value of a retained number, null when none was published yet. @param {string} number */
  async get(number) {
    checkNumber(number);
    const frame = await this.#command(`GET ${number}\n`, { claim: (n) => n === number });
    return lastNumber(frame.text) === 0 ? null : frame.taken.get(number) ?? null;
  }

  /**
   * Watches a retained number: `handler` gets `{number, old, new, revision, missed}` for each change, the current
   * value first (a change from null). A revision that does not follow the last one seen reports `missed` (a
   * reconnection); a revision lower than it (the number was made again) is a change too, with `missed` from 1 when
   * it is above 1. The watch is restored after a reconnection; it ends when the number is removed ("gone").
   * Resolves to the function that stops watching.
   * @param {string} number  @param {(change: object) => void} handler
   */
  async watch(number, handler) {
    checkNumber(number);
    if (typeof handler !== "function") throw new TypeError("watch needs a handler function");
    const entry = {
      pattern: number, active: false, last: null, revision: undefined,
      receive: (message) => watchReceive(entry, message, handler),
      settle: () => void (entry.revision ??= 0),
    };
    // GET first, sent with the SUB: it refuses a plain number (PROTO), which SUB would not.
    const check = this.#command(`GET ${number}\n`, { claim: (n) => n === number });
    const subscribed = this.#addHandler(entry);
    const [checked, done] = await Promise.allSettled([check, subscribed]);
    if (checked.status === "rejected") {
      if (done.status === "fulfilled") await this.#removeHandler(entry);
      throw checked.reason;
    }
    if (done.status === "rejected") throw done.reason;
    return once(() => this.#removeHandler(entry));
  }

  /** `LIST [pattern] [kind]`. @param {string} [pattern]  @param {{kind?: boolean}} [options] */
  async list(pattern, options = {}) {
    if (pattern !== undefined) checkNumber(pattern, "pattern");
    const target = pattern ?? (options.kind ? ">" : "");
    const frame = await this.#command(`LIST${target ? " " + target : ""}${options.kind ? " kind" : ""}\n`);
    return frame.lines.map(listEntry);
  }

  /** `STATS`: key -> value, numbers as numbers. */
  async stats() {
    const frame = await this.#command("STATS\n");
    const stats = {};
    for (const line of frame.lines) {
      const space = line.indexOf(" ");
      const key = space < 0 ? line : line.slice(0, space);
      const value = space < 0 ? "" : line.slice(space + 1);
      stats[key] = /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value;
    }
    return stats;
  }

  /** `PING`: the round trip in milliseconds. */
  async ping() {
    const start = performance.now();
    await this.#command("PING\n");
    return performance.now() - start;
  }

  /** `QUIT`, then the connection closes; no reconnection. Commands still waiting fail with a ConnectionError. */
  async close() {
    if (this.#state === "closed") return;
    const ws = this.#ws;
    if (this.#state === "connected" && ws) {
      const closed = new Promise((resolve) => ws.addEventListener("close", resolve, { once: true }));
      const bye = this.#command("QUIT\n").catch(() => {});
      this.#closing = true;
      const late = new Promise((resolve) => setTimeout(resolve, 2000));
      await Promise.race([closed, bye.then(() => late)]);
    }
    this.#closing = true;
    this.#finish("closed by the client");
  }

  // -- Sending and receiving ------------------------------------------------------------------------------------

  /**
   * Sends a command (or queues it while not connected) and resolves to its reply frame, plus `taken`: the retained
   * values it was pushed (by number). `line`: a string, bytes, or a function making them when sent.
   * `claim(number)`: whether a `MSG` with `rev=` arriving while this command is first in line answers it.
   * `onOk(frame)` runs as the reply is read, before the next push is.
   * @param {string | Uint8Array | (() => string)} line
   * @param {{claim?: (number: string) => boolean, onOk?: (reply: object) => void, now?: boolean}} [options]
   * @returns {Promise<any>}
   */
  #command(line, options = {}) {
    const { claim, onOk, now = false } = options;
    return new Promise((resolve, reject) => {
      const entry = { line, claim, taken: new Map(), onOk, resolve, reject };
      if (this.#closing || this.#state === "closed") reject(new ConnectionError("the client is closed"));
      else if (now || this.#state === "connected") this.#write(entry);
      else if (this.#queued.length >= this.#options.maxQueued) {
        reject(new ConnectionError(`not connected, and ${this.#options.maxQueued} commands wait already`));
      } else this.#queued.push(entry);
    });
  }

  #write(entry) {
    let bytes = typeof entry.line === "function" ? entry.line() : entry.line;
    if (typeof bytes === "string") bytes = encoder.encode(bytes);
    this.#inflight.push(entry);
    this.#ws.send(bytes);
  }

  #onData(ws, data) {
    if (ws !== this.#ws) return;
    const bytes = data instanceof ArrayBuffer ? new Uint8Array(data) : encoder.encode(String(data));
    try {
      this.#parser.feed(bytes);
    } catch (error) {
      (globalThis.reportError ?? console.error)(error);
      ws.close(); // the stream cannot be followed any more: start again
    }
  }

  #onFrame(frame) {
    if (frame.type === "msg") this.#onMessage(frame.message);
    else if (frame.type === "gone") this.#onGone(frame.number);
    else if (frame.type !== "push") this.#onReply(frame); // unknown push verbs are ignored
  }

  #onReply(frame) {
    const entry = this.#inflight.shift();
    if (!entry) return; // an unprompted -ERR (a revoked session): the close follows
    if (frame.type === "err") return entry.reject(errorOf(frame.code, frame.text));
    const reply = { ...frame, taken: entry.taken };
    try {
      entry.onOk?.(reply);
      entry.resolve(reply);
    } catch (error) {
      entry.reject(error);
    }
  }

  #onMessage(message) {
    const { number, revision } = message;
    const front = this.#inflight[0];
    const answers = revision !== undefined && front?.claim?.(number);
    if (answers) front.taken.set(number, message);
    if (revision !== undefined) {
      const seen = this.#revisions.get(number);
      if (answers && seen !== undefined && revision <= seen) return; // an answer, not new to this client
      this.#revisions.set(number, revision);
    }
    for (const [pattern, subscription] of this.#patterns) {
      if (!_patternMatches(pattern, number)) continue;
      for (const entry of [...subscription.handlers]) {
        if (entry.active && accepts(entry, message)) call(entry.receive, message);
      }
    }
  }

  #onGone(number) {
    this.#revisions.delete(number);
    const subscription = this.#patterns.get(number);
    if (subscription) {
      for (const entry of subscription.handlers) if (entry.active) subscription.handlers.delete(entry);
      subscription.server = null;
      if (subscription.handlers.size === 0) this.#patterns.delete(number);
    }
    this.#emit("gone", number);
  }

  // -- Subscriptions --------------------------------------------------------------------------------------------

  /** Adds a handler to its pattern and sends the SUB that gives it the current values; refuses a group conflict. */
  async #addHandler(entry) {
    let subscription = this.#patterns.get(entry.pattern);
    for (const other of subscription?.handlers ?? []) {
      if (other.group !== entry.group) {
        throw new ProtoError(`'${entry.pattern}' is subscribed already ${other.group ? "in group " + other.group
          : "without a group"} by this client: one pattern has one group per session`);
      }
    }
    if (!subscription) this.#patterns.set(entry.pattern, (subscription = { handlers: new Set(), server: null }));
    subscription.handlers.add(entry);
    try {
      await this.#sendSub(entry.pattern, [entry]);
    } catch (error) {
      subscription.handlers.delete(entry);
      if (subscription.handlers.size === 0 && this.#patterns.get(entry.pattern) === subscription) {
        this.#patterns.delete(entry.pattern);
      }
      throw error;
    }
  }

  /** Removes a handler: UNSUB when it was its pattern's last, a SUB when the pattern's options change. */
  async #removeHandler(entry) {
    const subscription = this.#patterns.get(entry.pattern);
    entry.active = false;
    if (!subscription?.handlers.delete(entry)) return;
    try {
      if (subscription.handlers.size === 0) {
        this.#patterns.delete(entry.pattern);
        await this.#command(`UNSUB ${entry.pattern}\n`);
      } else if (optionsKey(subscription) !== subscription.server) {
        await this.#sendSub(entry.pattern, []);
      }
    } catch (error) {
      if (!(error instanceof ConnectionError)) throw error; // without a connection there is no subscription
    }
  }

  /**
   * Sends `SUB <pattern>` with the options its handlers need (worked out when it is sent). On `+OK`, `targets`
   * become active and get the values it pushed (each target's `from` applied).
   */
  #sendSub(pattern, targets, now = false) {
    let key = null;
    const line = () => {
      key = optionsKey(this.#patterns.get(pattern));
      return `SUB ${pattern}${key}\n`;
    };
    const onOk = ({ taken }) => {
      const subscription = this.#patterns.get(pattern);
      if (subscription) subscription.server = key;
      for (const target of targets) {
        target.active = true;
        for (const message of taken.values()) {
          if (target.from === undefined || target.from === message.from) call(target.receive, message);
        }
        target.settle?.();
      }
    };
    return this.#command(line, { claim: (number) => _patternMatches(pattern, number), onOk, now });
  }

  /** After a reconnection: a SUB for every pattern with an active handler; watches get the values pushed. */
  #restore() {
    const restored = [];
    for (const [pattern, subscription] of this.#patterns) {
      subscription.server = null;
      const active = [...subscription.handlers].filter((entry) => entry.active);
      if (active.length === 0) continue;
      const watches = active.filter((entry) => entry.settle);
      restored.push(this.#sendSub(pattern, watches, true).catch((error) => {
        if (error instanceof ConnectionError) throw error;
        for (const entry of active) subscription.handlers.delete(entry);
        if (subscription.handlers.size === 0) this.#patterns.delete(pattern);
        if (error instanceof NotFoundError) this.#emit("gone", pattern);
        else this.#emit("error", { pattern, error });
      }));
    }
    return Promise.all(restored);
  }

  // -- The connection -------------------------------------------------------------------------------------------

  /** One connection attempt: the socket, HELLO, the subscriptions restored, then the queued commands sent. */
  #open() {
    return new Promise((resolve, reject) => {
      let ws;
      try {
        ws = new this.#options.WebSocket(this.#url, "subd");
      } catch (error) {
        return reject(new ConnectionError(`cannot connect to ${this.#url}: ${error.message}`, { cause: error }));
      }
      const fail = (error) => {
        clearTimeout(timer);
        reject(error);
        if (ws.readyState < 2) ws.close();
      };
      const timer = setTimeout(() => fail(new ConnectionError(`no connection to ${this.#url} within `
        + `${this.#options.timeout} ms`)), this.#options.timeout);
      ws.binaryType = "arraybuffer";
      this.#ws = ws;
      this.#parser = new _LineParser((frame) => this.#onFrame(frame));
      ws.onmessage = (event) => this.#onData(ws, event.data);
      ws.onerror = () => {}; // a close event follows
      ws.onclose = (event) => {
        this.#onClose(ws, event);
        fail(new ConnectionError(`the connection to ${this.#url} closed (${closeReason(event)})`));
      };
      ws.onopen = () => this.#handshake().then(() => {
        clearTimeout(timer);
        resolve();
      }, fail);
    });
  }

  async #handshake() {
    const { name, token } = this.#options;
    const words = (name !== undefined ? ` name=${name}` : "") + (token !== undefined ? ` token=${token}` : "");
    const hello = await this.#command(`HELLO${words}\n`, { now: true });
    const [, , version, protocol, session] = hello.text.split(" ");
    this.#server = {
      version: version ?? "", protocol: protocol?.replace(/^proto=/, "") ?? "",
      session: Number(session?.replace(/^session=/, "")),
    };
    await this.#restore();
    this.#state = "connected";
    for (const entry of this.#queued.splice(0)) this.#write(entry);
    this.#emit("connected", this.#server);
  }

  #onClose(ws, event) {
    if (ws !== this.#ws) return;
    this.#ws = null;
    const reason = closeReason(event);
    for (const entry of this.#inflight.splice(0)) {
      entry.reject(new ConnectionError(`the connection was lost (${reason}) before the reply`));
    }
    if (this.#state !== "connected") return; // a failed attempt: its caller goes on
    if (this.#closing) return this.#finish("closed by the client");
    this.#state = "reconnecting"; // before the event: what its listeners send waits for the connection
    this.#emit("disconnected", reason);
    if (!this.#options.reconnect) return this.#finish(reason);
    this.#reconnect();
  }

  /** Attempts again and again, after a random wait up to a limit that doubles each time (full jitter). */
  async #reconnect() {
    const { reconnectDelay, maxReconnectDelay } = this.#options;
    for (let attempt = 1; !this.#closing; attempt++) {
      const delay = Math.random() * Math.min(maxReconnectDelay, reconnectDelay * 2 ** (attempt - 1));
      this.#emit("reconnecting", { attempt, delay });
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.#wake = () => resolve(clearTimeout(timer));
      });
      if (this.#closing) return;
      try {
        return await this.#open();
      } catch (error) {
        // A refused HELLO (a changed secret, a removed user) would be refused again: give up.
        if (error instanceof AuthError || error instanceof DeniedError || error instanceof ProtoError) {
          return this.#finish(error);
        }
      }
    }
  }

  /** Closes for good: no reconnection, the queued commands fail, "closed". */
  #finish(reason) {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.#closing = true;
    this.#wake?.();
    for (const entry of this.#queued.splice(0)) entry.reject(new ConnectionError("the client was closed"));
    if (this.#ws && this.#ws.readyState < 2) this.#ws.close();
    this.#emit("closed", reason);
  }

  #emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
}

/** Whether a handler takes a message: its `from` filter, and its group (see the comment above Client). */
function accepts(entry, message) {
  return (entry.from === undefined || entry.from === message.from)
    && (entry.group === undefined || entry.group === message.group);
}

/** The ` from=... group=...` of the server subscription a pattern's handlers need. */
function optionsKey(subscription) {
  const handlers = [...(subscription?.handlers ?? [])];
  const from = handlers.every((entry) => entry.from === handlers[0].from) ? handlers[0]?.from : undefined;
  const group = handlers[0]?.group;
  return (from !== undefined ? ` from=${from}` : "") + (group !== undefined ? ` group=${group}` : "");
}

/** A watch's handling of one value: a change unless its revision is the last one seen (a duplicate). */
function watchReceive(entry, message, handler) {
  const { revision } = message;
  if (revision === undefined || revision === entry.revision) return;
  const change = { number: message.number, old: entry.last, new: message, revision };
  const previous = entry.revision;
  if (previous !== undefined) {
    const from = revision > previous ? previous + 1 : 1; // lower: the number was made again
    if (revision - 1 >= from) change.missed = { from, to: revision - 1 };
  }
  entry.last = message;
  entry.revision = revision;
  call(handler, change);
}

function payloadBytes(payload) {
  if (typeof payload === "string") return encoder.encode(payload);
  if (payload instanceof Uint8Array) return payload;
  if (payload instanceof ArrayBuffer) return new Uint8Array(payload);
  if (ArrayBuffer.isView(payload)) return new Uint8Array(payload.buffer, payload.byteOffset, payload.byteLength);
  throw new TypeError("a payload is a string or a Uint8Array");
}

/** One `LIST` line: `<number> <subscribers>[ plain | retained <rev>]`. */
function listEntry(line) {
  const [number, subscribers, kind, revision] = line.split(" ");
  const entry = { number, subscribers: Number(subscribers) };
  if (kind === "plain" || kind === "retained") entry.kind = kind;
  if (kind === "retained") entry.revision = Number(revision);
  return entry;
}

function closeReason(event) {
  return event?.reason ? `${event.code} ${event.reason}` : `code ${event?.code ?? "unknown"}`;
}

/**
 * Connects to a subd WebSocket listener and says HELLO (`name=`, `token=`; with `user`, `name=<user>`). Resolves
 * once connected; rejects with the typed error of a refused HELLO (AuthError, DeniedError...) or a ConnectionError,
 * and then does not reconnect.
 * @param {string} url  e.g. "ws://127.0.0.1:7828/subd"
 * @param {object} [options]  see ConnectOptions in subd.d.ts
 * @returns {Promise<Client>}
 */
export async function connect(url, options = {}) {
  const client = new Client(url, options);
  await client[START]();
  return client;
}
