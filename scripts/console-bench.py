#!/usr/bin/env python3
"""The web console's speed check (issue 24): does a subd that serves the console and 100 browser-side subscribers
keep the TCP figures of `make bench`?

Usage: scripts/console-bench.py BIN_DIR [--reps N] [--pin]

Starts one release subd (BIN_DIR/subd) with a TCP and a ws:// listener. Alternates, --reps times (default 3), three
runs of `make bench`'s first line (subbench: 1 publisher, 10 subscribers, 500,000 x 128 B, window 1000) against it
over TCP: "alone", with nothing else connected; "idle", while headless Chromium (Selenium) has the console open at /
with its listen pane on LOAD.> and 100 more subd.js clients in the page, each subscribed to LOAD.>; "busy", the same
while subctl publishes to LOAD.x at 100 messages/s (so every browser-side subscriber receives 100 msgs/s). Prints
each run's published and delivered rates, subd's CPU seconds per million messages published and the browser's CPU
seconds during the run, and the medians with their ratios to "alone". The browser runs on the same cores as subd
and subbench: the CPU figures tell subd's own cost apart from the browser's. Needs chromium, chromium-driver and
python3-selenium (`make deps-test`).

With --pin, subd and subbench run on CPU 0 only and everything else (this script, the browser, subctl) on CPU 1,
in all three ways: the figures then say whether subd keeps its pace when the browser does not take its core.
"""

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service


SUBD_CPUS = None  # with --pin: the CPUs subd and subbench may use


def on_subd_cpus():
    if SUBD_CPUS is not None:
        os.sched_setaffinity(0, SUBD_CPUS)


def start_subd(bin_dir):
    subd = subprocess.Popen(preexec_fn=on_subd_cpus, args=
        [os.path.join(bin_dir, "subd"), "--listen", "127.0.0.1:0", "--listen", "ws://127.0.0.1:0/subd",
         "--log-level", "info"],
        stderr=subprocess.PIPE, text=True)
    ports = {}
    deadline = time.time() + 10
    while len(ports) < 2 and time.time() < deadline:
        line = subd.stderr.readline()
        match = re.search(r"listening on (tcp|ws) 127\.0\.0\.1:(\d+)", line)
        if match:
            ports[match.group(1)] = int(match.group(2))
    if len(ports) < 2:
        subd.kill()
        sys.exit("console-bench: subd did not report its ports")
    return subd, ports["tcp"], ports["ws"]


def subbench(bin_dir, tcp):
    result = subprocess.run(
        [os.path.join(bin_dir, "subbench"), "--server", f"127.0.0.1:{tcp}", "--subscribers", "10", "--messages",
         "500000", "--size", "128", "--window", "1000", "--latency-samples", "0"],
        capture_output=True, text=True, preexec_fn=on_subd_cpus)
    if result.returncode != 0:
        sys.exit(f"console-bench: subbench failed ({result.returncode}): {result.stdout}{result.stderr}")
    out = result.stdout
    published = float(re.search(r"published .* = ([\d,]+) msgs/s", out).group(1).replace(",", ""))
    delivered = float(re.search(r"delivered .* = ([\d,]+) msgs/s", out).group(1).replace(",", ""))
    return published, delivered


def cpu_seconds(pids):
    """User and system CPU seconds the processes `pids` (and their reaped children) used so far."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            total += sum(int(value) for value in fields[11:15])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def browser_pids(driver):
    """Chromium's processes: chromedriver's descendants (from `ps`)."""
    table = subprocess.run(["ps", "-eo", "pid=,ppid="], capture_output=True, text=True).stdout.split()
    children = {}
    for pid, parent in zip(table[0::2], table[1::2]):
        children.setdefault(int(parent), []).append(int(pid))
    found, frontier = [], [driver.service.process.pid]
    while frontier:
        pid = frontier.pop()
        found.append(pid)
        frontier += children.get(pid, [])
    return found


def measured(bin_dir, tcp, subd, driver=None):
    """One subbench run: its rates, subd's CPU seconds per million messages published, and the browser's CPU
    seconds during the run."""
    browser = browser_pids(driver) if driver else []
    subd_before, browser_before = cpu_seconds([subd.pid]), cpu_seconds(browser)
    published, delivered = subbench(bin_dir, tcp)
    subd_cpu = cpu_seconds([subd.pid]) - subd_before
    return published, delivered, subd_cpu / 0.5, cpu_seconds(browser) - browser_before


def subctl(bin_dir, tcp, *words, **kwargs):
    return subprocess.Popen([os.path.join(bin_dir, "subctl"), "--server", f"127.0.0.1:{tcp}", *words], **kwargs)


def open_browser(ws):
    options = Options()
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_script_timeout(60)
    driver.get(f"http://127.0.0.1:{ws}/")
    # The console's own listen pane on LOAD.>, then 100 more clients of the page's origin, each subscribed.
    driver.find_element("id", "listen-pattern").clear()
    driver.find_element("id", "listen-pattern").send_keys("LOAD.>")
    driver.find_element("id", "listen-start").click()
    count = driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        import("/subd.js").then(async ({ connect }) => {
            const url = "ws://" + location.host + "/subd";
            window.__bench = { received: 0, clients: [] };
            for (let i = 0; i < 100; i++) {
                const client = await connect(url, { name: "bench" + i });
                await client.subscribe("LOAD.>", () => { window.__bench.received++; });
                window.__bench.clients.push(client);
            }
            done(window.__bench.clients.length);
        }).catch((e) => done("error: " + e));
    """)
    if count != 100:
        driver.quit()
        sys.exit(f"console-bench: the page's clients did not start: {count}")
    return driver


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bin_dir")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--pin", action="store_true")
    args = parser.parse_args()
    if args.pin:
        global SUBD_CPUS
        SUBD_CPUS = {0}
        os.sched_setaffinity(0, {1})  # this script and what it starts but subd and subbench: the browser, subctl
    subd, tcp, ws = start_subd(args.bin_dir)
    driver = None
    trickle = None
    try:
        subctl(args.bin_dir, tcp, "create", "LOAD.x", stdout=subprocess.DEVNULL).wait()
        # alone; the console and 100 idle browser subscribers; the same receiving 100 msgs/s each.
        names = ["alone", "idle", "busy"]
        runs = {name: [] for name in names}
        for rep in range(args.reps):
            runs["alone"].append(measured(args.bin_dir, tcp, subd))
            driver = open_browser(ws)
            time.sleep(1)
            runs["idle"].append(measured(args.bin_dir, tcp, subd, driver))
            trickle = subctl(args.bin_dir, tcp, "publish", "LOAD.x", "tick", "--count", "100000", "--interval",
                             "0.01", stdout=subprocess.DEVNULL)
            time.sleep(1)
            before = driver.execute_script("return window.__bench.received")
            runs["busy"].append(measured(args.bin_dir, tcp, subd, driver))
            after = driver.execute_script("return window.__bench.received")
            trickle.terminate()
            trickle.wait()
            driver.quit()
            driver = None
            for name in names:
                published, delivered, subd_cpu, browser_cpu = runs[name][-1]
                print(f"rep {rep + 1} {name:5} published {published:11,.0f} msgs/s  delivered {delivered:12,.0f} msgs/s"
                      f"  subd {subd_cpu:.2f} CPU s per million published  browser {browser_cpu:.2f} CPU s")
            print(f"        the page's 100 clients received {after - before:,} messages during the busy run")
        for index, what in enumerate(["published msgs/s", "delivered msgs/s", "subd CPU s per million published"]):
            alone = statistics.median(run[index] for run in runs["alone"])
            line = f"median {what}: alone {alone:,.2f}"
            for name in ["idle", "busy"]:
                value = statistics.median(run[index] for run in runs[name])
                line += f"; {name} {value:,.2f} (ratio {value / alone:.2f})"
            print(line)
    finally:
        if trickle and trickle.poll() is None:
            trickle.kill()
        if driver:
            driver.quit()
        subd.send_signal(signal.SIGTERM)
        subd.wait(timeout=10)


if __name__ == "__main__":
    main()
