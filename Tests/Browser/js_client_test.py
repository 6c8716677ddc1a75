#!/usr/bin/python3
"""Tests clients/js/subd.js in a real headless Chromium against real subd processes.

    /usr/bin/python3 Tests/Browser/js_client_test.py --bin-dir /tmp/new-bin

Needs Debian's chromium, chromium-driver and python3-selenium (run it with /usr/bin/python3). It starts:
  - a subd without authentication and a subd with auth_token and a user (both on a TCP and a ws:// listener),
  - an HTTP server on 127.0.0.1 that serves subd.js and Tests/Browser/js-client-tests.{html,js},
  - headless Chromium through chromedriver, which opens the page with the ws:// URLs in its query string.
The page runs its cases (every call of the API) and reports them in window.__results. Then this script drives
the page (window.__phase) for the cross-checks with subctl (page -> `subctl listen --json`, `subctl publish
--info` -> page) and for the restart: subd killed with SIGKILL and started again on the same ports with its state
directory, the page's client reconnecting, restoring its subscription and watch, and receiving what subctl
publishes. Every case is printed with PASS/FAIL; the browser's console is printed when one failed. Exit status 0
only when every case passed. Every process started is stopped, also on failure.
"""

import argparse
import http.server
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FILES = {
    "/subd.js": (ROOT / "clients" / "js" / "subd.js", "text/javascript; charset=utf-8"),
    "/js-client-tests.js": (HERE / "js-client-tests.js", "text/javascript; charset=utf-8"),
    "/js-client-tests.html": (HERE / "js-client-tests.html", "text/html; charset=utf-8"),
}
TOKEN = "tok3n-for-tests"
USER = "alice"
SECRET = "secret"


class Failure(Exception):
    """A check of this script that failed."""


def check(condition, what):
    if not condition:
        raise Failure(what)


def same(actual, expected, what):
    if actual != expected:
        raise Failure(f"{what}: expected {expected!r}, got {actual!r}")


def wait_for(predicate, what, timeout=10.0, interval=0.05):
    """Polls predicate() until it returns something true; returns it."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise Failure(f"timed out waiting for {what}")
        time.sleep(interval)


class Subd:
    """One subd process, its stderr in a file; the ports it listens on are read from its log."""

    def __init__(self, bin_dir, workdir, label, config=None, tcp_port=0, ws_port=0):
        self.bin_dir, self.workdir, self.label, self.config = bin_dir, workdir, label, config
        self.log = Path(workdir) / f"subd-{label}.log"
        args = [str(Path(bin_dir) / "subd"), "--listen", f"127.0.0.1:{tcp_port}",
                "--listen", f"ws://127.0.0.1:{ws_port}/subd", "--log-level", "info"]
        if config:
            args += ["--config", str(config)]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                            cwd=workdir, start_new_session=True)
        text = wait_for(self._ready, f"subd {label} to be ready (log: {self.log})")
        self.tcp_port = int(re.findall(r"listening on tcp 127\.0\.0\.1:(\d+)", text)[-1])
        self.ws_port = int(re.findall(r"listening on ws 127\.0\.0\.1:(\d+)/subd", text)[-1])
        self.server = f"127.0.0.1:{self.tcp_port}"
        self.ws_url = f"ws://127.0.0.1:{self.ws_port}/subd"

    def _ready(self):
        text = self.log.read_text(errors="replace")
        if self.process.poll() is not None:
            raise Failure(f"subd {self.label} exited ({self.process.returncode}):\n{text}")
        return text if " ready " in text else None

    def kill(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.kill()


def start_subd(bin_dir, workdir, label, config=None, tcp_port=0, ws_port=0, attempts=20):
    """Starts subd; on fixed ports, tries again while the port is not free yet (after a SIGKILL)."""
    for attempt in range(attempts):
        log = Path(workdir) / f"subd-{label}.log"
        if log.exists():
            log.rename(log.with_suffix(f".{int(time.time() * 1000)}.log"))
        try:
            return Subd(bin_dir, workdir, label, config, tcp_port, ws_port)
        except Failure as error:
            if attempt == attempts - 1 or not (tcp_port or ws_port) or "in use" not in str(error):
                raise
            time.sleep(0.1)
    raise AssertionError("unreachable")


class Handler(http.server.BaseHTTPRequestHandler):
    """Serves subd.js and the test page, nothing else."""

    def do_GET(self):
        path = urllib.parse.urlparse(self.path).path
        if path not in FILES:
            self.send_error(404)
            return
        file, content_type = FILES[path]
        body = file.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Run:
    """The cases of one run, printed as they end."""

    def __init__(self):
        self.cases = []

    def add(self, name, ok, detail="", ms=None):
        self.cases.append((name, ok, detail))
        timing = f" ({ms} ms)" if ms is not None else ""
        print(f"{'PASS' if ok else 'FAIL'} {name}{timing}", flush=True)
        if not ok:
            print("     " + str(detail).replace("\n", "\n     "), flush=True)

    def case(self, name, fn):
        start = time.monotonic()
        try:
            fn()
        except Exception as error:  # every failure is reported as the case's, the run goes on
            detail = str(error) if isinstance(error, Failure) else f"{type(error).__name__}: {error}"
            self.add(name, False, detail, round((time.monotonic() - start) * 1000))
            return False
        self.add(name, True, ms=round((time.monotonic() - start) * 1000))
        return True

    @property
    def failed(self):
        return [case for case in self.cases if not case[1]]


def subctl(bin_dir, *args, check_status=True):
    result = subprocess.run([str(Path(bin_dir) / "subctl"), *args], capture_output=True, text=True, timeout=20)
    if check_status and result.returncode != 0:
        raise Failure(f"subctl {' '.join(args)} exited {result.returncode}: {result.stderr.strip()}")
    return result


def call(driver, name, *args):
    """Calls window.__phase[name](...args) in the page and returns what its promise resolves to."""
    result = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        Promise.resolve().then(() => window.__phase[arguments[0]](...arguments[1]))
          .then((value) => done({ ok: true, value: value ?? null }),
                (error) => done({ ok: false, error: String(error && error.stack || error) }));
    """, name, list(args))
    if not result["ok"]:
        raise Failure(f"window.__phase.{name} failed: {result['error']}")
    return result["value"]


def start_browser(url):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--no-first-run", "--disable-extensions"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path="/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(30)
    driver.get(url)
    return driver


def descendants(pid):
    """The ids of the processes below `pid` (read from /proc), to make sure the browser's are gone at the end."""
    children = {}
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry.name))
        except (ValueError, OSError, IndexError):
            continue
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def quit_browser(driver):
    """Quits Chromium and chromedriver; kills, by id, whatever of theirs still runs 5 s later."""
    process = getattr(getattr(driver, "service", None), "process", None)
    pids = ([process.pid] + descendants(process.pid)) if process else []
    try:
        driver.quit()
    except Exception:
        pass
    end = time.monotonic() + 5
    while any(alive(pid) for pid in pids) and time.monotonic() < end:
        time.sleep(0.05)
    for pid in pids:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def browser_log(driver):
    lines = []
    try:
        lines += [f"[{entry['level']}] {entry['message']}" for entry in driver.get_log("browser")]
    except Exception as error:
        lines.append(f"(no browser log: {error})")
    try:
        lines += ["[page] " + line for line in driver.execute_script("return window.__log || []")]
    except Exception as error:
        lines.append(f"(no page log: {error})")
    return lines


def run_page_cases(driver, run, timeout):
    """Waits for the page's own cases and adds them to the run."""
    started = time.monotonic()
    end = started + timeout
    seen = 0
    while True:
        results = driver.execute_script("return window.__results || null")
        if results is None and time.monotonic() - started > 15:
            run.add("page: the cases started", False, "no window.__results after 15 s: the page or subd.js did not "
                    "load (a syntax error? see the browser console)")
            return
        cases = results["cases"] if results else []
        for case in cases[seen:]:
            run.add("page: " + case["name"], case["ok"], case.get("error") or "", case["ms"])
        seen = len(cases)
        if results and results["done"]:
            return
        if time.monotonic() > end:
            run.add("page: every case ended", False, f"timed out after {timeout} s, {seen} cases ended")
            return
        time.sleep(0.1)


def cross_checks(driver, run, bin_dir, plain):
    """The page and subctl, each way, info pairs included."""
    server = ["--server", plain.server]
    subctl(bin_dir, "create", *server, "XC.fromPage", "XC.toPage")

    def page_to_subctl():
        listen = subprocess.Popen([str(Path(bin_dir) / "subctl"), "listen", *server, "XC.fromPage", "--json",
                                   "--count", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        lines = queue.Queue()
        readers = [threading.Thread(target=lambda s=stream: [lines.put((s, line)) for line in s], daemon=True)
                   for stream in (listen.stdout, listen.stderr)]
        try:
            for reader in readers:
                reader.start()
            wait_for(lambda: any("listening" in line for _, line in list(lines.queue)), "subctl listen")
            text = "hello from the page \u2713 with a LF\nin it"
            info = {"note": "a b=c%", "uni": "h\u00e9llo \u2713", "plain": "EUR"}
            same(call(driver, "publish", "XC.fromPage", text, info), 1, "receivers: subctl listen")
            same(listen.wait(10), 0, "subctl listen --count 1 exit status")
            for reader in readers:
                reader.join(5)
            got = [json.loads(line) for stream, line in list(lines.queue) if stream is listen.stdout]
            same(len(got), 1, "messages printed by subctl listen --json")
            same([got[0]["number"], got[0]["payload"], got[0]["from"], got[0]["info"]],
                 ["XC.fromPage", text, "page", info], "what subctl listen --json printed")
        finally:
            if listen.poll() is None:
                listen.kill()
            listen.wait()

    def subctl_to_page():
        call(driver, "subscribe", "XC.toPage")
        result = subctl(bin_dir, "publish", *server, "--name", "subctl-pub", "XC.toPage", "text", "from", "subctl",
                        "--info", "k=v w", "--info", "eq=a=b", "--info", "pct=100%", "--info", "uni=\u00e9\u2713")
        check("1 receiver" in result.stdout, f"subctl published to the page: {result.stdout.strip()}")
        received = wait_for(lambda: driver.execute_script("return window.__phase.received['XC.toPage']"),
                            "the page to receive subctl's message")
        same(received, [{"text": "text from subctl", "from": "subctl-pub",
                         "info": [["k", "v w"], ["eq", "a=b"], ["pct", "100%"], ["uni", "\u00e9\u2713"]]}],
             "what the page received")

    run.case("subctl: a message published from the page reaches `subctl listen --json`, info decoded", page_to_subctl)
    run.case("subctl: `subctl publish --info` reaches the page's handler with its info pairs", subctl_to_page)


def restart_check(driver, run, bin_dir, workdir):
    """subd killed (SIGKILL) and started again on the same ports: the page's client comes back by itself."""
    config = Path(workdir) / "restart.yaml"
    config.write_text(f"state_dir: {Path(workdir) / 'state'}\n")
    (Path(workdir) / "state").mkdir()
    holder = {"subd": start_subd(bin_dir, workdir, "restart", config)}

    def rc_state():
        return driver.execute_script("return window.__phase.restartState()")

    def restart():
        first = holder["subd"]
        server = ["--server", first.server]
        subctl(bin_dir, "create", *server, "RC.plain")
        subctl(bin_dir, "create", *server, "--retain", "RC.value")
        subctl(bin_dir, "publish", *server, "RC.value", "v1")
        changes = call(driver, "restartSetup", first.ws_url, "RC.plain", "RC.value")
        same(changes, [{"old": None, "new": "v1", "revision": 1, "missed": None}], "the watch's first change")
        first.kill()
        # Down: the client tries again and again with growing waits.
        wait_for(lambda: sum(e["type"] == "reconnecting" for e in rc_state()["events"]) >= 3,
                 "three reconnection attempts while subd is down")
        driver.execute_script("""
            const rc = window.__phase.rc;
            rc.TestSocket.hold = true;
            rc.client.publish('RC.plain', 'queued during the outage').then(
              (n) => { rc.queued = n; }, (e) => { rc.queued = String(e); });
        """)
        holder["subd"] = start_subd(bin_dir, workdir, "restart", config, first.tcp_port, first.ws_port)
        # Values the client misses: published before it is let back in.
        subctl(bin_dir, "publish", *server, "RC.value", "v2")
        subctl(bin_dir, "publish", *server, "RC.value", "v3")
        driver.execute_script("const s = window.__phase.rc.TestSocket; s.sent.length = 0; s.hold = false;")
        state = wait_for(lambda: (lambda s: s if s["state"] == "connected" and len(s["changes"]) >= 2 else None)(
            rc_state()), "the client to reconnect")
        same(state["sent"][:4], ["HELLO name=page-rc", "SUB RC.plain", "SUB RC.value", "PUB RC.plain 24"],
             "what the client sent once back: HELLO, the subscription and the watch, then the queued command")
        same(driver.execute_script("return window.__phase.rc.queued"), 1,
             "the queued publication's receivers (the restored subscription)")
        same(state["changes"][1], {"old": "v1", "new": "v3", "revision": 3, "missed": {"from": 2, "to": 2}},
             "the change across the restart, with the missed revision")
        types = [e["type"] for e in state["events"]]
        same([types[0], types[-1]], ["disconnected", "connected"], "first and last events")
        attempts = [e["detail"] for e in state["events"] if e["type"] == "reconnecting"]
        same([a["attempt"] for a in attempts], list(range(1, len(attempts) + 1)), "attempts count up")
        for a in attempts:
            bound = min(800, 100 * 2 ** (a["attempt"] - 1))
            check(0 <= a["delay"] <= bound, f"attempt {a['attempt']} waited {a['delay']:.0f} ms, bound {bound}")
        # After the restart: subctl's messages reach the restored subscription and watch.
        subctl(bin_dir, "publish", *server, "--name", "subctl-rc", "RC.plain", "after", "the", "restart",
               "--info", "k=v w")
        subctl(bin_dir, "publish", *server, "RC.value", "v4")
        state = wait_for(lambda: (lambda s: s if len(s["got"]) >= 2 and len(s["changes"]) >= 3 else None)(
            rc_state()), "subctl's messages after the restart")
        same(state["got"], [{"text": "queued during the outage", "from": "page-rc", "info": []},
                            {"text": "after the restart", "from": "subctl-rc", "info": [["k", "v w"]]}],
             "the subscription's messages")
        same(state["changes"][2], {"old": "v3", "new": "v4", "revision": 4, "missed": None}, "the next change")
        time.sleep(0.2)
        same(len(rc_state()["changes"]), 3, "no duplicate change")

    try:
        run.case("restart: subd killed and started again on the same ports; the client reconnects with backoff, "
                 "restores its subscription and watch first, reports the missed revision, receives subctl's "
                 "messages", restart)
    finally:
        holder["subd"].stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", default=os.environ.get("SUBD_BIN_DIR", "/tmp/new-bin"),
                        help="the directory holding subd and subctl")
    parser.add_argument("--only", help="run only the page cases whose name holds this text (and skip the rest)")
    parser.add_argument("--timeout", type=float, default=60, help="seconds to wait for the page's cases")
    args = parser.parse_args()
    for tool in ("subd", "subctl"):
        if not os.access(Path(args.bin_dir) / tool, os.X_OK):
            sys.exit(f"no {tool} in {args.bin_dir} (--bin-dir)")

    # SIGTERM (a CI timeout) ends the run through the `finally` below, which stops every process started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    started = time.monotonic()
    run = Run()
    workdir = tempfile.mkdtemp(prefix="subd-js-tests-")
    servers, driver, httpd = [], None, None
    try:
        secret_hash = subprocess.run([str(Path(args.bin_dir) / "subd"), "hash-secret", "--iterations", "10000"],
                                     input=SECRET, capture_output=True, text=True, check=True).stdout.strip()
        auth_config = Path(workdir) / "auth.yaml"
        auth_config.write_text(
            f'auth_token: "{TOKEN}"\nauth_failure_delay: 0.1\nusers:\n  - name: {USER}\n'
            f'    secret_hash: "{secret_hash}"\n    publish: ["A.>"]\n    subscribe: ["A.>"]\n'
            "    create_remove: true\n")
        plain = start_subd(args.bin_dir, workdir, "plain")
        servers.append(plain)
        auth = start_subd(args.bin_dir, workdir, "auth", auth_config)
        servers.append(auth)

        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            closed_port = probe.getsockname()[1]
        query = urllib.parse.urlencode({"ws": plain.ws_url, "authws": auth.ws_url, "token": TOKEN, "user": USER,
                                        "secret": SECRET, "closedport": closed_port,
                                        **({"only": args.only} if args.only else {})})
        url = f"http://127.0.0.1:{httpd.server_address[1]}/js-client-tests.html?{query}"
        driver = start_browser(url)
        run_page_cases(driver, run, args.timeout)
        if not args.only:
            cross_checks(driver, run, args.bin_dir, plain)
            restart_check(driver, run, args.bin_dir, workdir)
        if run.failed and driver:
            print("\nbrowser console:")
            for line in browser_log(driver):
                print("  " + line)
    except Exception as error:
        run.add("setup", False, f"{type(error).__name__}: {error}")
        if driver:
            for line in browser_log(driver):
                print("  " + line)
    finally:
        if driver:
            quit_browser(driver)
        if httpd:
            httpd.shutdown()
            httpd.server_close()
        for server in servers:
            server.stop()
        if run.failed:
            print(f"\nsubd logs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)

    passed = len(run.cases) - len(run.failed)
    print(f"\n{passed} passed, {len(run.failed)} failed, {time.monotonic() - started:.1f} s")
    sys.exit(0 if run.cases and not run.failed else 1)


if __name__ == "__main__":
    main()
