// Types for subd.js, the JavaScript client of subd (docs/PROTOCOL.md over WebSocket, subprotocol `subd`).
// One ES module with no dependencies: `import { connect } from "./subd.js"`.

/** A payload: text (sent as its UTF-8 bytes) or bytes, sent and received byte for byte. */
export type Payload = string | Uint8Array;

/** Info pairs (the notification's userInfo): key -> value. Values are percent-encoded on the wire where they need
 *  to be (space, `=`, `%`, control characters) and decoded when received (a value that does not decode is kept as
 *  sent). An array keeps the order and is how they arrive. */
export type Info = Record<string, string> | Array<[string, string]>;

export interface ConnectOptions {
  /** The client name (`HELLO name=`): every message this client publishes carries `from=<name>`. With `user`, the
   *  user's name is the client name and this must be left out or equal to it. */
  name?: string;
  /** The secret: the daemon's `auth_token`, or, with `user`, the user's secret (`HELLO name=<user> token=<secret>`).
   *  Kept in memory for reconnecting only; never stored. */
  token?: string;
  /** A configured user to log in as. */
  user?: string;
  /** Reconnect after the connection is lost (default true): exponential backoff with full jitter from
   *  `reconnectDelay` ms (default 250) up to `maxReconnectDelay` ms (default 10000); subscriptions and watches are
   *  restored first, then the commands made meanwhile are sent. */
  reconnect?: boolean;
  reconnectDelay?: number;
  maxReconnectDelay?: number;
  /** Commands made while disconnected wait for the reconnect, at most this many (default 1000); past it they fail
   *  with a ConnectionError. */
  maxQueued?: number;
  /** Milliseconds to wait for the first connection and HELLO (default 10000). */
  timeout?: number;
  /** The WebSocket constructor to use (default: globalThis.WebSocket). */
  WebSocket?: typeof WebSocket;
}

/** A message as delivered (`MSG`). */
export interface Message {
  number: string;
  /** The payload, byte for byte. */
  payload: Uint8Array;
  /** The payload decoded as UTF-8 (replacement characters where it is not). */
  readonly text: string;
  /** `from=`: the publisher's name, when it gave one. */
  from?: string;
  /** `rev=`: the revision, for a retained number. */
  revision?: number;
  /** `group=`: the queue group it was delivered through. */
  group?: string;
  /** The info pairs, in the publisher's order, values percent-decoded. */
  info: Array<[string, string]>;
}

/** A change of a watched retained number. */
export interface Change {
  number: string;
  /** The value before (null: none, or not known to this watch yet). */
  old: Message | null;
  /** The value now. */
  new: Message;
  revision: number;
  /** Revisions this watch did not see between old and new (a reconnect, or a value replaced meanwhile), or
   *  undefined when none was missed: `{ from, to }` inclusive. */
  missed?: { from: number; to: number };
}

/** One line of `LIST`. */
export interface NumberInfo {
  number: string;
  subscribers: number;
  kind?: "plain" | "retained";
  /** The current revision of a retained number (0 before its first publication). */
  revision?: number;
}

export type ConnectionState = "connecting" | "connected" | "reconnecting" | "closed";

export declare class Client {
  /** The server's HELLO reply: version, protocol and session id. */
  readonly server: { version: string; protocol: string; session: number };
  readonly state: ConnectionState;
  /** `CREATE`: "created" or "exists". */
  create(number: string, options?: { retain?: boolean }): Promise<"created" | "exists">;
  /** `REMOVE`: how many subscribers were told `GONE`. */
  remove(number: string): Promise<number>;
  /** `PUB`: resolves to the receivers (`+OK <n>`). */
  publish(number: string, payload: Payload, info?: Info): Promise<number>;
  /** `SUB`: resolves once subscribed (retained values of matching numbers are handed to `handler` first); the
   *  resolved function unsubscribes (`UNSUB`). Several subscriptions may overlap: the server delivers each message
   *  once per session, and the client hands it to every handler whose pattern (and `from`, and `group`) matches.
   *  A group handler gets only the messages marked with its group (`group=`). All the handlers of one pattern must
   *  have the same group (or none): another rejects with a ProtoError (one session has one subscription per
   *  pattern). */
  subscribe(
    pattern: string,
    handler: (message: Message) => void,
    options?: { from?: string; group?: string },
  ): Promise<() => Promise<void>>;
  /** `GET`: the current value of a retained number, null when none was published yet. */
  get(number: string): Promise<Message | null>;
  /** Watches a retained number: `handler` gets each change with its old and new value (the current value first, as
   *  a change from null), revisions missed reported; restored after a reconnect. A revision below the last one
   *  (the number was removed and made again) is a change too, with `missed` from 1 when it is above 1. A plain
   *  number rejects with a ProtoError; the watch ends when the number is removed ("gone"). Resolves to the function
   *  that stops watching. */
  watch(number: string, handler: (change: Change) => void): Promise<() => Promise<void>>;
  /** `LIST [pattern] [kind]`. */
  list(pattern?: string, options?: { kind?: boolean }): Promise<NumberInfo[]>;
  /** `STATS`: key -> value (numbers as numbers). */
  stats(): Promise<Record<string, string | number>>;
  /** `PING`: the round trip in milliseconds. */
  ping(): Promise<number>;
  /** `QUIT`, then the connection closes; no reconnect. Commands still waiting fail with a ConnectionError. */
  close(): Promise<void>;
  /** Connection events: "connected" (also after each reconnect, once subscriptions are restored), "disconnected"
   *  (detail: the reason), "reconnecting" (detail: attempt and delay), "closed"; "gone" when a number this client
   *  subscribed to exactly was removed (detail: the number), also when a subscription could not be restored after
   *  a reconnect because its number is no longer there (NOTFOUND); "error" when one could not be restored for
   *  another reason (detail: { pattern, error }); its handlers are dropped either way. */
  addEventListener(type: string, listener: (event: CustomEvent) => void): void;
  removeEventListener(type: string, listener: (event: CustomEvent) => void): void;
}

/** Connects and says HELLO; rejects with a SubdError (AUTH, DENIED...) or a ConnectionError. */
export declare function connect(url: string, options?: ConnectOptions): Promise<Client>;

/** An `-ERR <CODE> <text>` reply (or an argument the client refused before sending it, with the code the server
 *  would have given). `code` is the protocol's code; a code this client does not know gives a plain SubdError. */
export declare class SubdError extends Error {
  constructor(code: string, message: string);
  readonly code: string;
}
export declare class ProtoError extends SubdError {}     // PROTO
export declare class UnknownError extends SubdError {}   // UNKNOWN
export declare class NameError extends SubdError {}      // NAME
export declare class NotFoundError extends SubdError {}  // NOTFOUND
export declare class TooBigError extends SubdError {}    // TOOBIG
export declare class AuthError extends SubdError {}      // AUTH
export declare class DeniedError extends SubdError {}    // DENIED
export declare class LimitError extends SubdError {}     // LIMIT
/** The connection was lost or closed before the reply came (the command may or may not have been carried out), or
 *  the first connection failed. */
export declare class ConnectionError extends Error {}

// Internal, exported for the tests (Tests/Browser); not part of the API and may change.
/** @internal The stream parser: `feed` bytes in any chunks; frames go to `emit`. */
export declare class _LineParser {
  constructor(emit: (frame: { type: "ok" | "err" | "list" | "msg" | "gone" | "push"; [key: string]: unknown }) => void);
  feed(bytes: Uint8Array): void;
}
/** @internal An info value percent-encoded as subctl does (space, control characters, `=`, `%` as `%XX`). */
export declare function _encodeInfoValue(value: string): string;
/** @internal An info value percent-decoded; kept as sent when it does not decode to UTF-8. */
export declare function _decodeInfoValue(value: string): string;
/** @internal Whether a pattern matches a number (docs/PROTOCOL.md, Patterns). */
export declare function _patternMatches(pattern: string, number: string): boolean;
