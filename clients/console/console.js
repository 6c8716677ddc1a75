// The subd web console: a client like any other, with the rights of the user it logs in as.
// It uses only the API of clients/js/subd.d.ts. Every list is capped and DOM updates are batched per animation
// frame, so the page keeps up with a busy daemon and never grows without bound.
import { connect } from "./subd.js";
import * as subd from "./subd.js";

const LISTEN_CAP = 500; // listen rows kept
const SYS_CAP = 200; // $SYS events kept
const NUMBERS_CAP = 200; // number rows rendered
const CHANGES_CAP = 100; // retained changes kept
const TEXT_CAP = 2000; // characters of a payload shown
const HEX_CAP = 256; // bytes of a binary payload shown
const RATE_SMOOTHING = 0.5; // weight of the newest second in a number's shown rate
const LIST_EVERY = 2000;
const STATS_EVERY = 2000;

const $ = (id) => document.getElementById(id);
const strictUTF8 = new TextDecoder("utf-8", { fatal: true });
const nf = new Intl.NumberFormat("en-US");
const fmt = (n) => nf.format(n);

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = text;
  return e;
}

function clock(ms) {
  const d = new Date(ms);
  const p = (n, w = 2) => String(n).padStart(w, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

/** "CODE: the server's text" for a SubdError, "connection: ..." for a ConnectionError. */
function errText(e) {
  if (!e) return "error";
  let msg = String(e.message ?? e);
  const code = e.code;
  if (code) {
    msg = msg.replace(new RegExp(`^(-ERR )?${code}:? ?`), "");
    return `${code}: ${msg}`;
  }
  if (isConnErr(e)) return `connection: ${msg}`;
  return msg;
}

const isConnErr = (e) =>
  !!e && ((typeof subd.ConnectionError === "function" && e instanceof subd.ConnectionError) || (!e.code && e.name === "ConnectionError"));

/** Shows a line of feedback; kind: "ok", "err", "warn" or "" (neutral). */
function say(node, text, kind = "", e = null) {
  node.textContent = text;
  node.dataset.kind = kind;
  if (e && e.code) node.dataset.code = e.code;
  else delete node.dataset.code;
}

/** A payload for display: UTF-8 text, or hex when the bytes are not UTF-8. */
function payloadView(m) {
  const b = m.payload;
  if (!(b instanceof Uint8Array)) return { text: String(m.text ?? ""), cls: "" };
  if (b.length === 0) return { text: "(empty)", cls: "empty" };
  let text;
  try {
    text = strictUTF8.decode(b);
  } catch {
    const n = Math.min(b.length, HEX_CAP);
    let hex = "";
    for (let i = 0; i < n; i++) hex += (i ? " " : "") + b[i].toString(16).padStart(2, "0");
    if (b.length > n) hex += ` … (${fmt(b.length)} bytes)`;
    return { text: hex, cls: "hex" };
  }
  if (text.length > TEXT_CAP) text = `${text.slice(0, TEXT_CAP)} … (${fmt(b.length)} bytes)`;
  return { text, cls: "" };
}

function tags(m, into) {
  const add = (cls, text) => {
    const t = el("span", `tag ${cls}`, text);
    into.append(" ", t);
    return t;
  };
  if (m.from !== undefined && m.from !== null) add("from", `from=${m.from}`);
  if (m.revision !== undefined && m.revision !== null) add("rev", `rev=${m.revision}`);
  if (m.group !== undefined && m.group !== null) add("group", `group=${m.group}`);
  for (const [k, v] of m.info || []) add("info", `${k}=${v}`).dataset.key = k;
}

// ---- where to connect -------------------------------------------------------------------------------------------

function wsURL() {
  const q = new URLSearchParams(location.search).get("ws");
  if (q) return q;
  let path = document.querySelector('meta[name="subd-ws-path"]')?.getAttribute("content") || "/";
  if (path.includes("%SUBD_WS_PATH%")) path = "/";
  if (!path.startsWith("/")) path = `/${path}`;
  return `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
}
const URL_WS = wsURL();

// ---- state ----------------------------------------------------------------------------------------------------

let client = null;
let generation = 0;
let loggedInAs = null;
let retryTimer = 0;
let failures = 0;
const detachers = new Map();

const ui = {};
for (const id of [
  "status", "server-version", "server-session", "server-user", "server-url", "server-stats", "login", "login-form",
  "login-reason", "login-user", "login-secret", "login-error", "login-open", "login-cancel", "numbers-filter",
  "numbers-count", "numbers-error", "rates-status", "numbers-body", "listen-form", "listen-pattern", "listen-stop",
  "listen-clear", "listen-status", "listen-list", "listen-count", "sys-status", "sys-dropped", "sys-list",
  "sys-hide-stats", "pub-form", "pub-number", "pub-payload", "pub-info", "pub-result", "pub-create", "pub-retain",
  "ret-form", "ret-number", "ret-stop", "ret-get", "ret-status", "ret-current", "ret-changes",
]) ui[id.replace(/-(\w)/g, (_, c) => c.toUpperCase())] = $(id);

// ---- frame batching -------------------------------------------------------------------------------------------

let frameAsked = false;
function schedule() {
  if (frameAsked) return;
  frameAsked = true;
  requestAnimationFrame(frame);
}
function frame() {
  frameAsked = false;
  flushListen();
  flushSys();
  flushChanges();
  if (numbersDirty) renderNumbers();
}

function trim(list, cap) {
  let removed = 0;
  while (list.childElementCount > cap) {
    list.lastElementChild.remove();
    removed++;
  }
  return removed;
}

// ---- connection -----------------------------------------------------------------------------------------------

function setStatus(state, text) {
  ui.status.dataset.state = state;
  ui.status.textContent = text;
}

function showServer(c) {
  const s = c?.server;
  ui.serverVersion.textContent = s ? `subd ${s.version} (proto ${s.protocol})` : "–";
  ui.serverSession.textContent = s ? String(s.session) : "–";
  ui.serverUser.textContent = loggedInAs ?? "anonymous";
}

/** Connects (again), as `creds.user` with `creds.token` when given. The secret lives only in this call and in the
 *  client, which keeps it for reconnecting. */
async function start(creds = {}) {
  const gen = ++generation;
  clearTimeout(retryTimer);
  // A session in place stays until the new one is in: a failed login leaves the page as it was.
  const kept = () => client && client.state !== "closed";
  if (!kept()) setStatus("connecting", "connecting");
  const options = {};
  if (creds.user) options.user = creds.user;
  if (creds.token) options.token = creds.token;
  let c;
  try {
    c = await connect(URL_WS, options);
  } catch (e) {
    if (gen !== generation) return;
    if (e && (e.code === "AUTH" || e.code === "DENIED")) {
      if (!kept()) setStatus("closed", "login required");
      showLogin(creds.token ? "Login failed." : "This server asks for authentication.", creds.token ? e : null);
      return;
    }
    if (creds.token) {
      if (!kept()) setStatus("closed", "closed");
      showLogin("Could not connect.", e);
      return;
    }
    if (kept()) return;
    failures++;
    const delay = Math.min(10000, 1000 * 2 ** Math.min(failures - 1, 4));
    setStatus("closed", `closed (${errText(e)}); retrying in ${Math.round(delay / 1000)} s`);
    retryTimer = setTimeout(() => start(), delay);
    return;
  }
  if (gen !== generation) {
    c.close().catch(() => {});
    return;
  }
  dropClient();
  failures = 0;
  client = c;
  loggedInAs = creds.user || (creds.token ? "(shared token)" : null);
  attach(c);
  hideLogin();
  setStatus("connected", "connected");
  showServer(c);
  subscribeAll(c);
}

function dropClient() {
  const old = client;
  client = null;
  if (!old) return;
  const off = detachers.get(old);
  if (off) off();
  detachers.delete(old);
  old.close().catch(() => {});
}

function attach(c) {
  const on = {
    connected: () => {
      setStatus("connected", "connected");
      showServer(c);
      rates.clear(); // counts start again on the server's side when it is asked again
      pollList();
    },
    disconnected: (ev) => {
      listen.revs.clear(); // after a reconnect the current values come again, as on a new subscription
      const d = ev?.detail;
      const why = typeof d === "string" ? d : d?.reason ?? d?.message ?? "";
      setStatus("reconnecting", `disconnected${why ? ` (${why instanceof Error ? why.message : why})` : ""}`);
    },
    reconnecting: (ev) => {
      const a = ev?.detail?.attempt;
      setStatus("reconnecting", a ? `reconnecting (attempt ${a})` : "reconnecting");
    },
    closed: (ev) => {
      if (client !== c) return;
      client = null;
      const why = ev?.detail;
      setStatus("closed", "closed");
      if (why?.code === "AUTH" || why?.code === "DENIED") showLogin("The server refused the session when reconnecting.", why);
      else if (loggedInAs) showLogin("The session was closed. Log in again.");
      else retryTimer = setTimeout(() => start(), 2000);
    },
    gone: (ev) => {
      const d = ev?.detail;
      const n = typeof d === "string" ? d : d?.number;
      if (n && listen.pattern === n) {
        endListen();
        say(ui.listenStatus, `GONE: '${n}' was removed; the subscription ended`, "warn");
      }
      if (n && watch.number === n) {
        endWatch();
        say(ui.retStatus, `GONE: '${n}' was removed; the watch ended`, "warn");
      }
    },
  };
  for (const [t, f] of Object.entries(on)) c.addEventListener(t, f);
  detachers.set(c, () => {
    for (const [t, f] of Object.entries(on)) c.removeEventListener(t, f);
  });
}

/** A command answered AUTH: the server wants a login (again). */
function maybeAuth(e) {
  if (e && e.code === "AUTH" && ui.login.hidden) showLogin("The server asks for authentication.", e);
}

function subscribeAll(c) {
  // Rates: the daemon's per-number counts, posted every second to $SYS.numbers while someone asks for them.
  rate.subscribed = false;
  rates.clear();
  say(ui.ratesStatus, "");
  c.subscribe("$SYS.numbers", onNumbersEvent).then(
    () => {
      if (client !== c) return;
      rate.subscribed = true;
    },
    (e) => {
      if (client !== c) return;
      if (e?.code === "DENIED") {
        say(ui.ratesStatus, `rates need subscribe rights to $SYS.numbers (${errText(e)})`, "err", e);
      }
      else say(ui.ratesStatus, `no rates: ${errText(e)}`, "err", e);
      maybeAuth(e);
      numbersDirty = true;
      schedule();
    },
  );
  say(ui.sysStatus, "subscribing to $SYS.> …");
  c.subscribe("$SYS.>", onSys).then(
    () => client === c && say(ui.sysStatus, "subscribed to $SYS.>", "ok"),
    (e) => {
      if (client !== c) return;
      say(ui.sysStatus, e?.code === "DENIED" ? `${errText(e)} (no $SYS events for this user)` : errText(e), "err", e);
      maybeAuth(e);
    },
  );
  if (listen.pattern) startListen(listen.pattern);
  if (watch.number) startWatch(watch.number);
  pollList();
  pollStats();
}

// ---- numbers and rates ----------------------------------------------------------------------------------------

const rate = { subscribed: false };
const rates = new Map(); // number -> { count, at (ms), rate (msgs/s) }
let numbers = [];
let numbersLoaded = false;
let numbersDirty = false;
let listBusy = false;
const numberRows = new Map(); // number -> <tr>

/** A `$SYS.numbers` event: each number's messages published so far on the daemon; the rate is the difference from
 *  the last event over the time between them (smoothed), and a number missing from the event is idle. */
function onNumbersEvent(m) {
  let ev;
  try {
    ev = JSON.parse(m.text);
  } catch {
    return;
  }
  const published = ev && typeof ev.published === "object" ? ev.published : null;
  if (!published) return;
  const at = Number.isFinite(Date.parse(ev.time)) ? Date.parse(ev.time) : Date.now();
  const seen = new Set();
  for (const [name, count] of Object.entries(published)) {
    if (typeof count !== "number") continue;
    seen.add(name);
    const last = rates.get(name);
    if (!last) {
      rates.set(name, { count, at, rate: 0 });
      continue;
    }
    const seconds = (at - last.at) / 1000;
    if (seconds <= 0) continue;
    // A count below the last one started again from 0 (the number was made again, or forgotten and counted anew).
    const now = (count >= last.count ? count - last.count : count) / seconds;
    last.rate = last.rate ? RATE_SMOOTHING * now + (1 - RATE_SMOOTHING) * last.rate : now;
    last.count = count;
    last.at = at;
  }
  for (const [name, r] of rates) if (!seen.has(name)) r.rate = 0;
  if (rates.size > 5000) {
    for (const name of rates.keys()) if (!seen.has(name)) rates.delete(name);
  }
  numbersDirty = true;
  schedule();
}

function rateOf(name) {
  return rates.get(name)?.rate ?? 0;
}

async function pollList() {
  const c = client;
  if (!c || c.state !== "connected" || listBusy) return;
  listBusy = true;
  try {
    const got = await c.list(">", { kind: true });
    if (c !== client) return;
    numbers = got;
    numbersLoaded = true;
    say(ui.numbersError, "");
    numbersDirty = true;
    schedule();
  } catch (e) {
    if (c === client && !isConnErr(e)) say(ui.numbersError, errText(e), "err", e);
    maybeAuth(e);
  } finally {
    listBusy = false;
  }
}

function setCell(td, text) {
  if (td.textContent !== text) td.textContent = text;
}

function renderNumbers() {
  numbersDirty = false;
  const filter = ui.numbersFilter.value.trim();
  const matching = filter ? numbers.filter((n) => n.number.includes(filter)) : numbers;
  const withRates = rate.subscribed;
  const items = matching.map((n) => ({ n, rate: withRates ? Math.round(rateOf(n.number) * 10) / 10 : 0 }));
  items.sort((a, b) => b.rate - a.rate || (a.n.number < b.n.number ? -1 : a.n.number > b.n.number ? 1 : 0));
  const shown = items.slice(0, NUMBERS_CAP);
  const body = ui.numbersBody;
  const keep = new Set();
  let prev = null;
  for (const { n, rate: r } of shown) {
    let tr = numberRows.get(n.number);
    if (!tr) {
      tr = el("tr");
      tr.dataset.number = n.number;
      const name = el("td", "name", n.number);
      name.title = n.number;
      tr.append(name, el("td", "kind"), el("td", "r rev"), el("td", "r subs"), el("td", "r rate"));
      numberRows.set(n.number, tr);
    }
    const [, kind, rev, subs, rt] = tr.children;
    setCell(kind, n.kind ?? "");
    kind.dataset.kind = n.kind ?? "";
    setCell(rev, n.kind === "retained" ? String(n.revision ?? 0) : "");
    setCell(subs, fmt(n.subscribers));
    setCell(rt, withRates ? (r >= 100 ? fmt(Math.round(r)) : r.toFixed(1)) : "–");
    rt.dataset.active = r > 0 ? "1" : "";
    const want = prev ? prev.nextSibling : body.firstChild;
    if (want !== tr) body.insertBefore(tr, want);
    prev = tr;
    keep.add(n.number);
  }
  for (const [name, tr] of numberRows) {
    if (!keep.has(name)) {
      tr.remove();
      numberRows.delete(name);
    }
  }
  let text = numbersLoaded ? `showing ${fmt(shown.length)} of ${fmt(matching.length)}` : "loading…";
  if (filter) text += ` matching “${filter}” (${fmt(numbers.length)} numbers)`;
  ui.numbersCount.textContent = text;
}

// ---- server stats ---------------------------------------------------------------------------------------------

let statsBusy = false;
async function pollStats() {
  const c = client;
  if (!c || c.state !== "connected" || statsBusy) return;
  statsBusy = true;
  try {
    const s = await c.stats();
    if (c !== client) return;
    const up = Number(s.uptime_seconds) || 0;
    const upText = up >= 3600 ? `${Math.floor(up / 3600)} h ${Math.floor((up % 3600) / 60)} min` : up >= 60 ? `${Math.floor(up / 60)} min` : `${up} s`;
    const n = (k, one, many = `${one}s`) => `${typeof s[k] === "number" ? fmt(s[k]) : "?"} ${s[k] === 1 ? one : many}`;
    ui.serverStats.textContent = `up ${upText} · ${n("connections", "connection")} · ${n("numbers", "number")} · ${n("messages_published", "published", "published")} · ${n("messages_delivered", "delivered", "delivered")}`;
  } catch (e) {
    maybeAuth(e);
  } finally {
    statsBusy = false;
  }
}

// ---- $SYS events ----------------------------------------------------------------------------------------------

const SYS_FIELDS = {
  "client.connected": ["session", "address"],
  "client.disconnected": ["session", "name", "address", "reason"],
  "number.created": ["number", "kind", "session", "name", "origin"],
  "number.removed": ["number", "subscribers_told", "session", "name", "origin"],
  slow_consumer: ["session", "name", "address", "pending_bytes", "max_pending"],
  "config.reloaded": ["numbers_created", "needs_restart"],
  stats: ["connections", "numbers", "subscriptions", "messages_published", "messages_delivered", "slow_consumers"],
  "state.failed": ["error", "stopped"],
  "state.recovered": ["failures"],
  "cluster.node": ["node", "state", "age_seconds", "connections", "numbers"],
};
const sys = { pending: [], received: 0, dropped: 0 };

function onSys(m) {
  if (m.number === "$SYS.numbers") return; // the rates of the numbers pane, every second: not listed as events
  sys.received++;
  sys.pending.push({ m, at: Date.now() });
  if (sys.pending.length > SYS_CAP) {
    sys.pending.shift();
    sys.dropped++;
  }
  schedule();
}

function sysValue(v) {
  if (v === null || v === undefined) return "–";
  if (Array.isArray(v)) return v.length ? v.join(", ") : "[]";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function sysRow({ m, at }) {
  let ev;
  try {
    ev = JSON.parse(m.text);
  } catch {
    ev = null;
  }
  const li = el("li", "event");
  const name = ev?.event ?? m.number.replace(/^\$SYS\./, "");
  li.dataset.event = name;
  const t = ev?.time ? Date.parse(ev.time) : at;
  li.append(el("time", null, clock(Number.isFinite(t) ? t : at)), " ", el("span", "ev", name));
  if (!ev || typeof ev !== "object") {
    li.append(el("span", "raw", m.text));
    return li;
  }
  if (ev.session !== undefined) li.dataset.session = String(ev.session);
  const keys = SYS_FIELDS[name] ?? Object.keys(ev).filter((k) => k !== "event" && k !== "time").slice(0, 10);
  for (const k of keys) {
    if (!(k in ev)) continue;
    const f = el("span", "field");
    f.append(el("span", "k", `${k}=`), el("span", "v", sysValue(ev[k])));
    li.append(" ", f);
  }
  if ((name === "client.disconnected" && !["client", "shutdown"].includes(ev.reason)) || name === "state.recovered") li.classList.add("warn");
  if (name === "slow_consumer" || name === "state.failed") li.classList.add("bad");
  li.title = JSON.stringify(ev);
  return li;
}

function flushSys() {
  if (!sys.pending.length) return;
  const items = sys.pending;
  sys.pending = [];
  const frag = document.createDocumentFragment();
  for (let i = items.length - 1; i >= 0; i--) frag.append(sysRow(items[i]));
  ui.sysList.prepend(frag);
  sys.dropped += trim(ui.sysList, SYS_CAP);
  ui.sysDropped.textContent = sys.dropped ? `${fmt(sys.dropped)} older events dropped (${SYS_CAP} kept)` : "";
}

// ---- listen ---------------------------------------------------------------------------------------------------

const listen = { pattern: null, token: null, unsub: null, pending: [], received: 0, rendered: 0, dropped: 0, lastAt: 0, revs: new Map() };
const lags = []; // receive -> render, ms, the last 5000

function onListen(m) {
  if (m.revision !== undefined && m.revision !== null) {
    // A retained value pushed again (another subscription or a watch of the number) is not a new message.
    if (m.revision <= (listen.revs.get(m.number) ?? -1)) return;
    if (listen.revs.size >= 20000) listen.revs.clear();
    listen.revs.set(m.number, m.revision);
  }
  const t = performance.now();
  listen.received++;
  listen.lastAt = t;
  listen.pending.push({ m, t, wall: Date.now() });
  if (listen.pending.length > LISTEN_CAP) {
    listen.pending.shift();
    listen.dropped++;
  }
  schedule();
}

function listenRow({ m, t, wall }) {
  const li = el("li", "msg");
  li.dataset.number = m.number;
  li.dataset.receivedAt = t.toFixed(1);
  const meta = el("div", "meta");
  meta.append(el("time", null, clock(wall)), " ", el("span", "num", m.number));
  tags(m, meta);
  if (m.payload instanceof Uint8Array) meta.append(" ", el("span", "size muted", `${fmt(m.payload.length)} B`));
  const v = payloadView(m);
  li.append(meta, el("pre", `payload ${v.cls}`, v.text));
  return li;
}

function flushListen() {
  if (!listen.pending.length) return;
  const items = listen.pending;
  listen.pending = [];
  const frag = document.createDocumentFragment();
  const rows = [];
  for (let i = items.length - 1; i >= 0; i--) {
    const li = listenRow(items[i]);
    rows.push(li);
    frag.append(li);
  }
  ui.listenList.prepend(frag);
  trim(ui.listenList, LISTEN_CAP);
  const now = performance.now();
  const stamp = now.toFixed(1);
  for (const li of rows) li.dataset.renderedAt = stamp;
  for (const it of items) lags.push(now - it.t);
  if (lags.length > 5000) lags.splice(0, lags.length - 5000);
  listen.rendered += items.length;
  ui.listenCount.textContent = `${fmt(listen.received)} received${listen.dropped ? `, ${fmt(listen.dropped)} not shown` : ""} · last ${LISTEN_CAP} kept`;
}

async function startListen(pattern) {
  stopListen(true);
  const c = client;
  if (!c) {
    say(ui.listenStatus, "not connected", "err");
    return;
  }
  const token = {};
  listen.token = token;
  listen.pattern = pattern;
  listen.revs.clear();
  say(ui.listenStatus, `subscribing to ${pattern} …`);
  try {
    const unsub = await c.subscribe(pattern, (m) => listen.token === token && onListen(m));
    if (listen.token !== token || client !== c) {
      unsubscribe(unsub);
      return;
    }
    listen.unsub = unsub;
    ui.listenStop.disabled = false;
    say(ui.listenStatus, `listening on ${pattern}`, "ok");
  } catch (e) {
    if (listen.token !== token) return;
    endListen();
    say(ui.listenStatus, errText(e), "err", e);
    maybeAuth(e);
  }
}

function endListen() {
  listen.token = null;
  listen.pattern = null;
  listen.unsub = null;
  ui.listenStop.disabled = true;
}

function stopListen(quiet) {
  unsubscribe(listen.unsub);
  endListen();
  if (!quiet) say(ui.listenStatus, "stopped");
}

/** Ends a subscription without waiting: when its connection is gone, so is the subscription. */
function unsubscribe(unsub) {
  try {
    unsub?.().catch?.(() => {});
  } catch {
    /* nothing left to end */
  }
}

// ---- retained -------------------------------------------------------------------------------------------------

const watch = { number: null, token: null, unsub: null, pending: [], shownRev: -1 };

function showCurrent(number, m, how) {
  const box = ui.retCurrent;
  box.replaceChildren();
  const head = el("div", "meta");
  head.append(el("span", "num", number));
  if (!m) {
    head.append(" ", el("span", "muted", `no value yet (${how})`));
    box.append(head);
    box.dataset.revision = "0";
    return;
  }
  head.append(" ", el("span", "rev-big", `rev ${m.revision ?? "?"}`));
  tags({ from: m.from, group: m.group, info: m.info }, head);
  head.append(" ", el("span", "muted small", `${how} ${clock(Date.now())}`));
  const v = payloadView(m);
  box.append(head, el("pre", `payload ${v.cls}`, v.text));
  box.dataset.revision = String(m.revision ?? "");
}

function onChange(ch) {
  watch.pending.push({ ch, at: Date.now() });
  if (watch.pending.length > CHANGES_CAP) watch.pending.shift();
  schedule();
}

function changeRow({ ch, at }) {
  const li = el("li", "change");
  li.dataset.revision = String(ch.revision);
  li.append(el("time", null, clock(at)), " ", el("span", "rev", `rev ${ch.revision}`), " ");
  const o = ch.old ? payloadView(ch.old) : { text: "(none)", cls: "empty" };
  const n = payloadView(ch.new);
  li.append(el("code", `old ${o.cls}`, o.text), " ", el("span", "arrow", "→"), " ", el("code", `new ${n.cls}`, n.text));
  if (ch.missed) {
    const { from, to } = ch.missed;
    li.append(" ", el("span", "missed", from === to ? `missed rev ${from}` : `missed revs ${from}–${to}`));
    li.classList.add("warn");
  }
  return li;
}

function flushChanges() {
  if (!watch.pending.length) return;
  const items = watch.pending;
  watch.pending = [];
  const frag = document.createDocumentFragment();
  for (let i = items.length - 1; i >= 0; i--) {
    const { ch } = items[i];
    // The watch's first change (from null) is the value already shown by the GET that started it.
    if (ch.old === null && ch.revision <= watch.shownRev) continue;
    frag.append(changeRow(items[i]));
  }
  const last = items[items.length - 1].ch;
  if (last.revision > watch.shownRev) {
    watch.shownRev = last.revision;
    showCurrent(last.number ?? watch.number, last.new, "changed");
  }
  ui.retChanges.prepend(frag);
  trim(ui.retChanges, CHANGES_CAP);
}

async function startWatch(number) {
  stopWatch(true);
  const c = client;
  if (!c) {
    say(ui.retStatus, "not connected", "err");
    return;
  }
  const token = {};
  watch.token = token;
  watch.number = number;
  watch.shownRev = -1;
  say(ui.retStatus, `watching ${number} …`);
  try {
    const current = await c.get(number); // NOTFOUND, DENIED, or not retained (PROTO) show here
    if (watch.token !== token) return;
    ui.retChanges.replaceChildren();
    showCurrent(number, current, "current");
    watch.shownRev = current?.revision ?? 0;
    const unsub = await c.watch(number, (ch) => watch.token === token && onChange(ch));
    if (watch.token !== token || client !== c) {
      unsubscribe(unsub);
      return;
    }
    watch.unsub = unsub;
    ui.retStop.disabled = false;
    say(ui.retStatus, `watching ${number}`, "ok");
  } catch (e) {
    if (watch.token !== token) return;
    endWatch();
    say(ui.retStatus, errText(e), "err", e);
    maybeAuth(e);
  }
}

function endWatch() {
  watch.token = null;
  watch.number = null;
  watch.unsub = null;
  ui.retStop.disabled = true;
}

function stopWatch(quiet) {
  unsubscribe(watch.unsub);
  endWatch();
  if (!quiet) say(ui.retStatus, "stopped");
}

async function getOnce(number) {
  const c = client;
  if (!c) return say(ui.retStatus, "not connected", "err");
  say(ui.retStatus, `GET ${number} …`);
  try {
    const m = await c.get(number);
    showCurrent(number, m, "get");
    say(ui.retStatus, m ? `GET ${number}: rev ${m.revision}` : `GET ${number}: no value yet`, "ok");
  } catch (e) {
    say(ui.retStatus, errText(e), "err", e);
    maybeAuth(e);
  }
}

// ---- publish --------------------------------------------------------------------------------------------------

function parseInfo(text) {
  const pairs = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, "");
    if (!line.trim()) continue;
    const eq = line.indexOf("=");
    if (eq < 1) throw new Error(`info line ${i + 1}: write key=value`);
    pairs.push([line.slice(0, eq).trim(), line.slice(eq + 1)]);
  }
  return pairs;
}

async function publish() {
  const c = client;
  const number = ui.pubNumber.value.trim();
  if (!c) return say(ui.pubResult, "not connected", "err");
  let info;
  try {
    info = parseInfo(ui.pubInfo.value);
  } catch (e) {
    return say(ui.pubResult, e.message, "err");
  }
  say(ui.pubResult, "publishing …");
  try {
    const n = await c.publish(number, ui.pubPayload.value, info);
    say(ui.pubResult, `published to ${fmt(n)} receiver${n === 1 ? "" : "s"}`, "ok");
    ui.pubResult.dataset.receivers = String(n);
  } catch (e) {
    say(ui.pubResult, errText(e), "err", e);
    maybeAuth(e);
  }
}

async function create() {
  const c = client;
  const number = ui.pubNumber.value.trim();
  if (!c) return say(ui.pubResult, "not connected", "err");
  if (!number) return say(ui.pubResult, "type a number to create", "err");
  try {
    const r = await c.create(number, { retain: ui.pubRetain.checked });
    say(ui.pubResult, `${r} ${number}`, "ok");
    pollList();
  } catch (e) {
    say(ui.pubResult, errText(e), "err", e);
    maybeAuth(e);
  }
}

// ---- login ----------------------------------------------------------------------------------------------------

function showLogin(reason, e = null) {
  ui.login.hidden = false;
  ui.loginReason.textContent = reason;
  if (e) say(ui.loginError, errText(e), "err", e);
  else say(ui.loginError, "");
  (ui.loginUser.value ? ui.loginSecret : ui.loginUser).focus();
}

function hideLogin() {
  ui.login.hidden = true;
  say(ui.loginError, "");
}

// ---- wiring ---------------------------------------------------------------------------------------------------

function bind() {
  ui.serverUrl.textContent = URL_WS;
  ui.loginForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const user = ui.loginUser.value.trim();
    const token = ui.loginSecret.value;
    ui.loginSecret.value = ""; // the page keeps no copy of the secret
    say(ui.loginError, "logging in …");
    start({ user, token });
  });
  ui.loginCancel.addEventListener("click", hideLogin);
  ui.loginOpen.addEventListener("click", () => showLogin("Log in as a configured user, or with the server's shared token."));
  ui.numbersFilter.addEventListener("input", () => {
    numbersDirty = true;
    schedule();
  });
  ui.listenForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const p = ui.listenPattern.value.trim();
    if (p) startListen(p);
  });
  ui.listenStop.addEventListener("click", () => stopListen(false));
  ui.listenClear.addEventListener("click", () => {
    ui.listenList.replaceChildren();
    listen.pending = [];
  });
  ui.sysHideStats.addEventListener("change", () => ui.sysList.classList.toggle("hide-stats", ui.sysHideStats.checked));
  ui.pubForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    publish();
  });
  ui.pubCreate.addEventListener("click", create);
  ui.retForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const n = ui.retNumber.value.trim();
    if (n) startWatch(n);
  });
  ui.retStop.addEventListener("click", () => stopWatch(false));
  ui.retGet.addEventListener("click", () => {
    const n = ui.retNumber.value.trim();
    if (n) getOnce(n);
  });
  setInterval(pollList, LIST_EVERY);
  setInterval(pollStats, STATS_EVERY);
  setInterval(() => {
    numbersDirty = true;
    schedule();
  }, 1000);
}

function quantile(sorted, q) {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

// Hooks for tests and for a curious person's devtools.
window.__console = {
  stats() {
    const s = lags.slice().sort((a, b) => a - b);
    return {
      state: client?.state ?? "closed",
      url: URL_WS,
      listenPattern: listen.pattern,
      listenReceived: listen.received,
      listenRendered: listen.rendered,
      listenDropped: listen.dropped,
      listenPending: listen.pending.length,
      listenRows: ui.listenList.childElementCount,
      lastListenReceivedAt: listen.lastAt,
      lagCount: s.length,
      lagP50: quantile(s, 0.5),
      lagP99: quantile(s, 0.99),
      lagMax: s.length ? s[s.length - 1] : null,
      sysReceived: sys.received,
      sysRows: ui.sysList.childElementCount,
      numbersTotal: numbers.length,
      numberRows: ui.numbersBody.childElementCount,
      ratesSubscribed: rate.subscribed,
      domElements: document.getElementsByTagName("*").length,
    };
  },
  lags: () => lags.slice(),
  resetLags() {
    lags.length = 0;
  },
  rate: (number) => Math.round(rateOf(number) * 10) / 10,
};

bind();
start();
