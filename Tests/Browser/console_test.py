#!/usr/bin/python3
"""The web console (clients/console) in a real headless Chromium against real subd processes.

    /usr/bin/python3 Tests/Browser/console_test.py --bin-dir DIR [--screenshot docs/console.png]

DIR holds subd and subctl. By default the page is the one the daemon serves on its ws:// listener
(http://127.0.0.1:<wsport>/). --serve-static serves clients/console/* and --subd-js FILE from Python instead, with the
daemon's headers (the same Content-Security-Policy), and opens it with ?ws=ws://127.0.0.1:<wsport>/subd: for working
on the console before a daemon that serves it is built.

Needs Debian's chromium, chromium-driver and python3-selenium (run with /usr/bin/python3). Prints each case's result,
the browser's console log for a failed case, and exits 0 only when every case passed.
"""

import argparse
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request
from pathlib import Path

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

REPO = Path(__file__).resolve().parents[2]
CONSOLE = REPO / "clients" / "console"
CSP = ("default-src 'self'; connect-src 'self' ws: wss:; img-src 'self' data:; style-src 'self'; "
       "script-src 'self'; frame-ancestors 'none'")
WS_PATH = "/subd"
SECRET = "secret"


class Failure(AssertionError):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)


def wait_for(fn, what, timeout=10.0, every=0.05):
    """Polls fn until it returns something truthy; returns that."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = fn()
            if last:
                return last
        except (Failure, WebDriverException, KeyError, TypeError, ValueError) as e:
            last = f"{type(e).__name__}: {e}"
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout} s waiting for {what} (last: {last!r})")
        time.sleep(every)


# ---- processes -----------------------------------------------------------------------------------------------------

class Daemon:
    """A subd on 127.0.0.1 with a TCP and a ws:// listener (port 0 picks free ports)."""

    def __init__(self, bin_dir, config=None, tcp_port=0, ws_port=0):
        self.bin_dir, self.config = bin_dir, config
        self.tcp_port, self.ws_port = tcp_port, ws_port
        self.proc = None
        self.log = []

    def start(self, tries=20):
        for attempt in range(tries):
            if self._start_once():
                return self
            self.stop()
            time.sleep(0.25)  # the port may still be held by the process just killed
        raise Failure("subd did not start:\n" + "\n".join(self.log[-20:]))

    def _start_once(self):
        args = [str(self.bin_dir / "subd"), "--listen", f"127.0.0.1:{self.tcp_port}",
                "--listen", f"ws://127.0.0.1:{self.ws_port}{WS_PATH}", "--log-level", "info"]
        if self.config:
            args += ["--config", str(self.config)]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True)
        ports = {}
        ready = threading.Event()

        def read(proc):
            for line in proc.stderr:
                line = line.rstrip("\n")
                self.log.append(line)
                m = re.search(r"listening on (tcp|ws) 127\.0\.0\.1:(\d+)", line)
                if m:
                    ports[m.group(1)] = int(m.group(2))
                if " ready " in line or "tcp" in ports and "ws" in ports:
                    ready.set()
            ready.set()

        threading.Thread(target=read, args=(self.proc,), daemon=True).start()
        ready.wait(10)
        if self.proc.poll() is not None or "tcp" not in ports or "ws" not in ports:
            return False
        self.tcp_port, self.ws_port = ports["tcp"], ports["ws"]
        return True

    @property
    def server(self):
        return f"127.0.0.1:{self.tcp_port}"

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(5)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


class Subctl:
    def __init__(self, bin_dir):
        self.path = str(bin_dir / "subctl")
        self.running = []

    def run(self, daemon, *args, timeout=20, extra=()):
        r = subprocess.run([self.path, *args[:1], "--server", daemon.server, *extra, *args[1:]],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        check(r.returncode == 0, f"subctl {' '.join(args)} exited {r.returncode}: {r.stdout} {r.stderr}")
        return r.stdout

    def start(self, daemon, *args, extra=()):
        p = subprocess.Popen([self.path, *args[:1], "--server", daemon.server, *extra, *args[1:]],
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.running.append(p)
        return p

    def stop_all(self):
        for p in self.running:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(3)
                except subprocess.TimeoutExpired:
                    p.kill()
        self.running = []


def line_reader(stream):
    """Lines of a pipe, read on a thread: returns (lines, event set at each line)."""
    lines, ev = [], threading.Event()

    def read():
        for line in stream:
            lines.append(line.rstrip("\n"))
            ev.set()

    threading.Thread(target=read, daemon=True).start()
    return lines


def static_server(subd_js):
    """Serves the console as the daemon will: the four paths, %SUBD_WS_PATH% replaced, the same CSP; else 404."""
    files = {"/console.js": (CONSOLE / "console.js", "text/javascript; charset=utf-8"),
             "/console.css": (CONSOLE / "console.css", "text/css; charset=utf-8"),
             "/subd.js": (Path(subd_js), "text/javascript; charset=utf-8")}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            path = self.path.split("?", 1)[0]
            if path == "/":
                body = (CONSOLE / "index.html").read_bytes().replace(b"%SUBD_WS_PATH%", WS_PATH.encode())
                ctype = "text/html; charset=utf-8"
            elif path in files:
                body, ctype = files[path][0].read_bytes(), files[path][1]
            else:
                body, ctype = b"not found\n", "text/plain; charset=utf-8"
            self.send_response(200 if ctype != "text/plain; charset=utf-8" else 404)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


# ---- the test run ------------------------------------------------------------------------------------------------

class Run:
    def __init__(self, args):
        self.args = args
        self.bin_dir = Path(args.bin_dir).resolve()
        self.tmp = Path(tempfile.mkdtemp(prefix="console-test-"))
        self.subctl = Subctl(self.bin_dir)
        self.daemons = []
        self.static = None
        self.driver = None
        self.log = []  # the browser's console, as read so far
        self.results = []

    # -- set-up

    def daemon(self, config=None, **ports):
        d = Daemon(self.bin_dir, config, **ports).start()
        self.daemons.append(d)
        return d

    def write_config(self, name, text):
        p = self.tmp / name
        p.write_text(text)
        return p

    def page_url(self, d):
        if self.static:
            return f"http://127.0.0.1:{self.static.server_address[1]}/?ws=ws://127.0.0.1:{d.ws_port}{WS_PATH}"
        return f"http://127.0.0.1:{d.ws_port}/"

    def base_url(self, d):
        if self.static:
            return f"http://127.0.0.1:{self.static.server_address[1]}"
        return f"http://127.0.0.1:{d.ws_port}"

    def open_browser(self):
        o = webdriver.ChromeOptions()
        o.binary_location = "/usr/bin/chromium"
        for a in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000",
                  "--disable-gpu", "--no-first-run", "--disable-extensions"):
            o.add_argument(a)
        o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=o)
        self.driver.set_script_timeout(10)

    # -- page helpers

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def text(self, id_):
        return self.js("const e = document.getElementById(arguments[0]); return e ? e.textContent : null;", id_)

    def attr(self, id_, name):
        return self.js("const e = document.getElementById(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;",
                       id_, name)

    def fill(self, id_, value):
        e = self.driver.find_element(By.ID, id_)
        e.clear()
        if value:
            e.send_keys(value)

    def click(self, id_):
        self.driver.find_element(By.ID, id_).click()

    def stats(self):
        return self.js("return window.__console.stats();")

    def state(self):
        return self.attr("status", "data-state")

    def wait_connected(self, timeout=15):
        wait_for(lambda: self.state() == "connected", "the status to be connected", timeout)

    def listen_rows(self):
        return self.js("""
            return [...document.querySelectorAll('#listen-list li.msg')].slice(0, 50).map(li => ({
              number: li.dataset.number,
              payload: li.querySelector('pre.payload').textContent,
              info: [...li.querySelectorAll('.tag.info')].map(t => t.textContent),
              tags: [...li.querySelectorAll('.tag')].map(t => t.textContent)}));""")

    def find_listen_row(self, payload, number=None):
        for r in self.listen_rows():
            if r["payload"] == payload and (number is None or r["number"] == number):
                return r
        return None

    def ensure_listen(self, pattern):
        if self.stats().get("listenPattern") == pattern and "listening on" in (self.text("listen-status") or ""):
            return
        self.fill("listen-pattern", pattern)
        self.click("listen-start")
        wait_for(lambda: self.text("listen-status") == f"listening on {pattern}", f"listening on {pattern}")

    def read_browser_log(self):
        try:
            entries = self.driver.get_log("browser")
        except WebDriverException:
            entries = []
        self.log.extend(entries)
        return entries

    # -- cases

    def case(self, n, title, fn):
        start = time.monotonic()
        self.read_browser_log()
        seen = len(self.log)
        try:
            fn()
            new = self.read_browser_log()
            csp = [e["message"] for e in new if "Content Security Policy" in e.get("message", "")]
            check(not csp, f"the page broke its Content-Security-Policy: {csp}")
            ok, why = True, ""
        except Exception as e:  # noqa: BLE001 - every failure is reported, and the run goes on
            ok = False
            why = f"{type(e).__name__}: {e}"
            if not isinstance(e, Failure):
                why += "\n" + traceback.format_exc()
            self.read_browser_log()
        took = time.monotonic() - start
        print(f"case {n:>2} {'PASS' if ok else 'FAIL'}  {title} ({took:.1f} s)", flush=True)
        if not ok:
            print("    " + why.replace("\n", "\n    "))
            print("    browser console:")
            for e in self.log[seen:] or [{"level": "-", "message": "(empty)"}]:
                print(f"      {e.get('level')} {e.get('message')}")
        self.results.append((n, ok))
        return ok

    def c1_loads(self, d):
        self.driver.get(self.page_url(d))
        self.wait_connected()
        version = subprocess.run([str(self.bin_dir / "subd"), "--version"], capture_output=True, text=True).stdout
        shown = self.text("server-version")
        check(re.search(r"\d+\.\d+\.\d+", version) and re.search(r"\d+\.\d+\.\d+", version).group(0) in shown,
              f"server version shown {shown!r}, subd --version says {version!r}")
        session = self.text("server-session")
        check(re.fullmatch(r"\d+", session or "") and int(session) >= 1, f"session shown {session!r}")
        check(self.attr("login", "hidden") is not None, "the login form is shown on a server without auth")
        check(self.text("status") == "connected", f"status text {self.text('status')!r}")
        print(f"    server {shown}, session {session}, url {self.stats()['url']}")

    def c2_listen(self, d):
        self.subctl.run(d, "create", "NEWS")
        for pattern, code in (("NOPE", "NOTFOUND"), ("a..b", "NAME")):
            self.fill("listen-pattern", pattern)
            self.click("listen-start")
            shown = wait_for(lambda: (lambda t: t if t.startswith(code + ": ") else None)(self.text("listen-status")),
                             f"{code} for listening on {pattern}")
            check(self.attr("listen-status", "data-kind") == "err", f"{code} is not shown as an error")
            print(f"    listen {pattern}: {shown!r}")
        self.ensure_listen("NEWS")
        self.subctl.run(d, "publish", "NEWS", "hello", "--info", "k=v")
        row = wait_for(lambda: self.find_listen_row("hello", "NEWS"), "'hello' in the listen pane")
        check(row["info"] == ["k=v"], f"info pairs shown {row['info']}")

    def c3_publish(self, d):
        listener = self.subctl.start(d, "listen", "NEWS", "--json")
        err = line_reader(listener.stderr)
        out = line_reader(listener.stdout)
        wait_for(lambda: any("listening on" in l for l in err), "subctl listen to subscribe")
        self.fill("pub-number", "NEWS")
        self.fill("pub-payload", "from the page")
        self.fill("pub-info", "lang=en fr\nunit=EUR")
        self.click("pub-submit")
        result = wait_for(lambda: re.fullmatch(r"published to (\d+) receivers?", self.text("pub-result") or ""),
                          "the receiver count")
        # subctl's session and the page's own (it listens to NEWS)
        check(int(result.group(1)) == 2, f"receivers {result.group(0)!r}, expected 2")
        line = wait_for(lambda: out[:1], "subctl listen --json to print the message")[0]
        msg = json.loads(line)
        check(msg["number"] == "NEWS" and msg["payload"] == "from the page", f"subctl got {msg}")
        check(msg["info"] == {"lang": "en fr", "unit": "EUR"}, f"subctl got info {msg['info']}")
        row = wait_for(lambda: self.find_listen_row("from the page", "NEWS"), "the page's own message in its listen pane")
        check(row["info"] == ["lang=en fr", "unit=EUR"], f"the page shows info {row['info']}")
        listener.terminate()

    def c4_sys(self, d):
        wait_for(lambda: self.text("sys-status") == "subscribed to $SYS.>", "the $SYS subscription")
        before = self.js("""return Math.max(0, ...[...document.querySelectorAll('#sys-list li[data-event="client.connected"]')]
                                .map(li => Number(li.dataset.session)));""")
        self.subctl.run(d, "ping")
        ev = wait_for(lambda: self.js("""
            const li = [...document.querySelectorAll('#sys-list li[data-event="client.connected"]')]
              .find(li => Number(li.dataset.session) > arguments[0]);
            return li ? li.textContent : null;""", before), "a client.connected event for subctl")
        check(re.search(r"address=127\.0\.0\.1:\d+", ev), f"the event line {ev!r} has no address")
        wait_for(lambda: self.js("""return !!document.querySelector('#sys-list li[data-event="client.disconnected"]');"""),
                 "its client.disconnected event")
        print(f"    {ev}")

    def c5_retained(self, d):
        self.subctl.run(d, "create", "PRICE", "--retain")
        self.fill("ret-number", "PRICE")
        self.click("ret-watch")
        wait_for(lambda: self.text("ret-status") == "watching PRICE", "watching PRICE")
        self.subctl.run(d, "publish", "PRICE", "10.50")
        self.subctl.run(d, "publish", "PRICE", "10.75")

        def change():
            return self.js("""
                const li = document.querySelector('#ret-changes li');
                return li && li.dataset.revision === '2' ? {old: li.querySelector('.old').textContent,
                  new: li.querySelector('.new').textContent, text: li.textContent} : null;""")
        c = wait_for(change, "the change 10.50 -> 10.75 at rev 2")
        check(c["old"] == "10.50" and c["new"] == "10.75", f"change shown {c}")
        check(self.attr("ret-current", "data-revision") == "2" and "10.75" in self.text("ret-current"),
              f"current value shown {self.text('ret-current')!r}")
        row = wait_for(lambda: self.js("""
            const tr = document.querySelector('#numbers-body tr[data-number="PRICE"]');
            return tr && tr.children[2].textContent === '2' ? [...tr.children].map(td => td.textContent) : null;"""),
            "PRICE as retained rev 2 in the numbers pane", timeout=6)
        check(row[1] == "retained", f"PRICE row {row}")
        print(f"    {c['text']}; numbers row {row}")
        if self.args.screenshot:
            self.fill("numbers-filter", "")
            self.js("document.activeElement && document.activeElement.blur();")
            time.sleep(1.2)  # one rate tick and one list poll more
            path = Path(self.args.screenshot)
            if not path.is_absolute():
                path = Path.cwd() / path
            path.parent.mkdir(parents=True, exist_ok=True)
            self.driver.save_screenshot(str(path))
            print(f"    screenshot: {path}")
        self.fill("ret-number", "NEWS")
        self.click("ret-get")
        plain = wait_for(lambda: (lambda t: t if t.startswith("PROTO: ") else None)(self.text("ret-status")),
                         "PROTO for a GET of a plain number")
        print(f"    get NEWS: {plain!r}")
        self.fill("ret-number", "PRICE")

    def c6_reconnect(self, d):
        self.ensure_listen("NEWS")
        d.kill()
        wait_for(lambda: self.state() in ("reconnecting", "closed"), "the page to see the daemon gone")
        seen = self.text("status")
        time.sleep(0.5)
        d.start()  # same ports, same state_dir: NEWS and PRICE are still there
        self.wait_connected(timeout=30)
        wait_for(lambda: self.text("listen-status") == "listening on NEWS", "the listen pane still listening")
        self.subctl.run(d, "publish", "NEWS", "after the restart")
        wait_for(lambda: self.find_listen_row("after the restart", "NEWS"), "a message after the restart", timeout=10)
        print(f"    status went {seen!r} -> {self.text('status')!r}, session now {self.text('server-session')}")

    def c8_lag(self, d):
        self.ensure_listen("NEWS")
        self.js("window.__console.resetLags();")
        s0 = self.stats()
        pub = self.subctl.start(d, "publish", "NEWS", "x", "--count", "500", "--interval", "0.01")
        time.sleep(4.6)  # several of the daemon's one-second counts inside the burst
        # The rate the pane shows, beside what the page itself received of NEWS in the last three seconds: the
        # publisher's pace depends on the machine's load, so the shown rate is checked against the real one.
        mid_rate, mid_now, mid_rx = self.js("""return [window.__console.rate('NEWS'), performance.now(),
            [...document.querySelectorAll('#listen-list li.msg')].map(li => Number(li.dataset.receivedAt))];""")
        mid_real = sum(1 for t in mid_rx if mid_now - 3000 <= t <= mid_now) / 3
        mid_cell = self.js("""const tr = document.querySelector('#numbers-body tr[data-number="NEWS"]');
                              return tr ? tr.children[4].textContent : null;""")
        check(pub.wait(30) == 0, f"subctl publish --count exited {pub.returncode}: {pub.stderr.read()}")
        published_at = time.monotonic()
        s1 = wait_for(lambda: (lambda s: s if s["listenReceived"] - s0["listenReceived"] >= 500 else None)(self.stats()),
                      "all 500 messages received", timeout=10)
        behind = time.monotonic() - published_at
        s1 = wait_for(lambda: (lambda s: s if s["listenRendered"] - s0["listenRendered"] >= 500 else None)(self.stats()),
                      "all 500 messages rendered", timeout=10)
        received = s1["listenReceived"] - s0["listenReceived"]
        rendered = s1["listenRendered"] - s0["listenRendered"]
        dropped = s1["listenDropped"] - s0["listenDropped"]
        times = self.js("""return [...document.querySelectorAll('#listen-list li.msg')].map(li =>
                             [Number(li.dataset.receivedAt), Number(li.dataset.renderedAt)]);""")
        rx = sorted(t[0] for t in times)
        dom_lags = sorted(t[1] - t[0] for t in times)
        rate = (len(rx) - 1) / ((rx[-1] - rx[0]) / 1000) if len(rx) > 1 and rx[-1] > rx[0] else 0
        p99 = dom_lags[int(0.99 * len(dom_lags))] if dom_lags else None
        print(f"    received {received}, rendered {rendered}, not shown {dropped}, rows {s1['listenRows']}")
        print(f"    receive rate {rate:.1f} msgs/s, the last message {behind:.2f} s after the publisher ended; "
              f"render lag (receive -> DOM) p50 {s1['lagP50']:.1f} ms, "
              f"p99 {s1['lagP99']:.1f} ms, max {s1['lagMax']:.1f} ms (from the rows: p99 {p99:.1f} ms)")
        print(f"    rate shown for NEWS mid-burst: {mid_rate} msgs/s (cell {mid_cell!r}); "
              f"received in the 3 s before: {mid_real:.1f} msgs/s")
        check(received == 500 and rendered == 500 and dropped == 0, "not every message was received and rendered")
        check(s1["listenRows"] == 500 and len(times) == 500, f"listen rows {s1['listenRows']}, expected the cap of 500")
        # Bounds with room for a loaded machine (CI runs six tests at once on two cores); measured unloaded in
        # docs/BENCHMARKS.md. A page that renders once a second, or falls behind the stream, still fails them.
        check(s1["lagCount"] == 500 and s1["lagP99"] < 750 and p99 < 750, "render lag p99 over 750 ms")
        check(behind < 3, f"the page received the last message {behind:.2f} s after the publisher ended: it fell behind")
        check(mid_real > 0 and abs(mid_rate - mid_real) <= max(25, 0.4 * mid_real),
              f"the numbers pane's rate for NEWS was {mid_rate} while the page received {mid_real:.1f} msgs/s")

    def c9_weight(self, d):
        base = self.base_url(d)
        total = 0
        sizes = {}
        for path in ("/", "/console.js", "/console.css", "/subd.js"):
            with urllib.request.urlopen(base + path, timeout=5) as r:
                body = r.read()
                check(r.status == 200, f"GET {path}: {r.status}")
                if path == "/":
                    check(r.headers.get("Content-Security-Policy") == CSP, f"CSP of /: {r.headers.get('Content-Security-Policy')}")
                    check(b"%SUBD_WS_PATH%" not in body and WS_PATH.encode() in body, "the ws path was not filled in")
            sizes[path] = len(body)
            total += len(body)
        try:
            urllib.request.urlopen(base + "/nothing-here", timeout=5)
            check(False, "GET /nothing-here was not 404")
        except urllib.error.HTTPError as e:
            check(e.code == 404, f"GET /nothing-here: {e.code}")
        print("    " + ", ".join(f"{p} {n:,} B" for p, n in sizes.items()) + f"; total {total:,} B = {total / 1024:.1f} KiB")
        check(total < 100 * 1024, f"page weight {total} B is over 100 KiB")

    def c10_many(self, d):
        with socket.create_connection(("127.0.0.1", d.tcp_port), timeout=10) as s:
            s.sendall("".join(f"CREATE BULK.{i}\n" for i in range(1000)).encode())
            buf = b""
            while buf.count(b"\n") < 1000:
                chunk = s.recv(65536)
                check(chunk, "the connection closed while creating numbers")
                buf += chunk
            replies = buf.decode().splitlines()
            check(all(r.startswith("+OK") for r in replies), f"CREATE replies: {[r for r in replies if not r.startswith('+OK')][:3]}")
            s.sendall(b"QUIT\n")

        def count():
            m = re.match(r"showing ([\d,]+) of ([\d,]+)", self.text("numbers-count") or "")
            return m and (int(m.group(1).replace(",", "")), int(m.group(2).replace(",", "")))
        shown, total = wait_for(lambda: (lambda c: c if c and c[1] >= 1000 else None)(count()),
                                "the numbers pane to list 1,000+ numbers", timeout=8)
        check(shown == 200, f"showing {shown} of {total}")
        self.fill("numbers-filter", "BULK.")
        wait_for(lambda: count() == (200, 1000), "'showing 200 of 1,000' with the filter BULK.")
        label = self.text("numbers-count")
        st = self.stats()
        check(st["numberRows"] == 200, f"{st['numberRows']} number rows in the DOM")
        check(st["sysRows"] <= 200, f"{st['sysRows']} $SYS rows in the DOM")
        check("older events dropped" in (self.text("sys-dropped") or ""), "the $SYS pane does not say it dropped events")
        check(st["domElements"] < 8000, f"{st['domElements']} elements in the page")
        time.sleep(2.2)  # a list poll and a few renders later the DOM is still capped
        st2 = self.stats()
        check(st2["numberRows"] == 200 and st2["domElements"] <= st["domElements"] + 50,
              f"the DOM grew: {st['domElements']} -> {st2['domElements']} elements")
        self.fill("numbers-filter", "")
        print(f"    {label!r}; {st['numberRows']} number rows, {st['sysRows']} $SYS rows, "
              f"{st['domElements']} elements; {self.text('sys-dropped')!r}")

    def c7_login(self):
        h = subprocess.run([str(self.bin_dir / "subd"), "hash-secret", "--iterations", "10000"], input=SECRET,
                           capture_output=True, text=True, check=True).stdout.strip()
        cfg = self.write_config("users.yaml", f"""users:
  - name: viewer
    secret_hash: "{h}"
    subscribe: ["NEWS.>"]
  - name: admin
    secret_hash: "{h}"
    publish: [">"]
    subscribe: [">", "$SYS.>"]
    create_remove: true
""")
        d = self.daemon(cfg)
        admin = ("--name", "admin", "--token", SECRET)
        self.subctl.run(d, "create", "NEWS.today", extra=admin)
        self.driver.get(self.page_url(d))
        wait_for(lambda: self.attr("login", "hidden") is None, "the login form")
        check(self.state() == "closed", f"status {self.state()!r} while the login is asked")
        # a wrong secret
        self.fill("login-user", "viewer")
        self.fill("login-secret", "wrong")
        self.click("login-submit")
        err = wait_for(lambda: (lambda t: t if t.startswith("AUTH") else None)(self.text("login-error") or ""),
                       "an AUTH error for the wrong secret")
        check(self.attr("login-error", "data-kind") == "err", "the AUTH error is not shown as an error")
        print(f"    wrong secret: {err!r}")
        # the right one
        self.fill("login-user", "viewer")
        self.fill("login-secret", SECRET)
        self.click("login-submit")
        self.wait_connected()
        check(self.attr("login", "hidden") is not None, "the login form stayed")
        check(self.text("server-user") == "viewer", f"user shown {self.text('server-user')!r}")
        stored = self.js("""return {local: localStorage.length, session: sessionStorage.length, cookie: document.cookie,
                                    field: document.getElementById('login-secret').value};""")
        check(stored == {"local": 0, "session": 0, "cookie": "", "field": ""}, f"the secret may be kept: {stored}")
        # what the viewer may not do
        sys_msg = wait_for(lambda: (lambda t: t if "DENIED" in t else None)(self.text("sys-status") or ""),
                           "the $SYS pane's DENIED message")
        check(self.attr("sys-status", "data-kind") == "err", "$SYS DENIED is not shown as an error")
        rates = wait_for(lambda: (lambda t: t if "rates need subscribe rights to $SYS.numbers" in t else None)(
            self.text("rates-status") or ""), "the rates' DENIED message")
        self.fill("pub-number", "NEWS.today")
        self.fill("pub-payload", "not allowed")
        self.fill("pub-info", "")
        self.click("pub-submit")
        pub = wait_for(lambda: (lambda t: t if t.startswith("DENIED") else None)(self.text("pub-result") or ""),
                       "DENIED for the publish")
        check("viewer" in pub and "NEWS.today" in pub, f"the DENIED text {pub!r} is not the server's")
        color = self.js("return getComputedStyle(document.getElementById('pub-result')).color;")
        rgb = [int(x) for x in re.findall(r"\d+", color)[:3]]
        check(rgb[0] > 150 and rgb[1] < 130 and rgb[2] < 130, f"DENIED is shown in {color}, not red")
        # and what it may
        self.ensure_listen("NEWS.>")
        self.subctl.run(d, "publish", "NEWS.today", "for viewers", extra=admin)
        wait_for(lambda: self.find_listen_row("for viewers", "NEWS.today"), "the viewer's listen pane to get a message")
        print(f"    publish: {pub!r} ({color}); $SYS: {sys_msg!r}; numbers: {rates!r}")

    # -- all of it

    def main(self):
        if self.args.serve_static:
            subd_js = self.args.subd_js or REPO / "clients" / "js" / "subd.js"
            check(Path(subd_js).is_file(), f"--serve-static needs the client: {subd_js} does not exist (--subd-js FILE)")
            self.static = static_server(subd_js)
        state = self.tmp / "state"
        state.mkdir()
        cfg = self.write_config("subd.yaml", f"state_dir: {state}\nsys_interval: 2\n")
        d = self.daemon(cfg)
        print(f"subd: tcp {d.tcp_port}, ws {d.ws_port}; page {self.page_url(d)}"
              f"{' (served by Python: --serve-static)' if self.static else ''}", flush=True)
        if not self.static:
            try:
                with urllib.request.urlopen(self.page_url(d), timeout=5) as r:
                    served = b'name="subd-ws-path"' in r.read()
            except (urllib.error.URLError, OSError) as e:
                served = False
                print(f"GET {self.page_url(d)}: {e}")
            if not served:
                print("this subd does not serve the console on its ws:// listener; "
                      "--serve-static --subd-js FILE tests the page served from Python")
                for n in (1, 2, 3, 4, 5, 6, 8, 9, 10, 7):
                    print(f"case {n:>2} FAIL  (the page is not served)")
                    self.results.append((n, False))
                print(f"0 passed, {len(self.results)} failed")
                return False
        self.open_browser()
        self.case(1, "the page loads, connected, server version and session", lambda: self.c1_loads(d))
        self.case(2, "listen pane shows a subctl publish with its info pair", lambda: self.c2_listen(d))
        self.case(3, "publish form reaches subctl listen --json; receiver count", lambda: self.c3_publish(d))
        self.case(4, "$SYS pane shows client.connected", lambda: self.c4_sys(d))
        self.case(5, "retained watch shows old -> new", lambda: self.c5_retained(d))
        self.case(6, "reconnects after SIGKILL and a restart", lambda: self.c6_reconnect(d))
        self.case(8, "100 msgs/s for 5 s: every message rendered, small lag", lambda: self.c8_lag(d))
        self.case(9, "page weight under 100 KiB", lambda: self.c9_weight(d))
        self.case(10, "1,000 numbers: 'showing 200 of 1,000', DOM capped", lambda: self.c10_many(d))
        self.case(7, "users: login, wrong secret AUTH, DENIED shown", self.c7_login)
        passed = sum(1 for _, ok in self.results if ok)
        failed = len(self.results) - passed
        print(f"{passed} passed, {failed} failed")
        return failed == 0

    def cleanup(self):
        if self.driver:
            try:
                self.driver.quit()
            except Exception:  # noqa: BLE001
                pass
        self.subctl.stop_all()
        for d in self.daemons:
            d.stop()
        if self.static:
            self.static.shutdown()
        shutil.rmtree(self.tmp, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin-dir", required=True, help="the directory with subd and subctl")
    ap.add_argument("--screenshot", help="save a screenshot of the page with data in every pane here")
    ap.add_argument("--serve-static", action="store_true",
                    help="serve the console from Python (development) instead of from the daemon")
    ap.add_argument("--subd-js", help="with --serve-static: the client to serve as /subd.js "
                                      "(default clients/js/subd.js)")
    args = ap.parse_args()

    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)  # so that a killed run still cleans up its processes
    run = Run(args)
    started = time.monotonic()
    try:
        ok = run.main()
    except BaseException:  # noqa: BLE001 - interrupted or broken: report, clean up, fail
        traceback.print_exc()
        ok = False
    finally:
        run.cleanup()
    print(f"took {time.monotonic() - started:.1f} s")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
