#!/usr/bin/env bash
# The MQTT side-by-side (issue 25): the shared harness's load client (../shared/bench, `pubsub-bench`, built into
# $TMPDIR/pubsub-bench-build from there; nothing of it is copied here) against subd's MQTT listener, Debian's
# Mosquitto and subd's own line protocol, the three alternating, in one run; then QoS 1 through a persistent session:
# the publish-to-acknowledge rate (mosquitto_pub -q 1 --repeat) and the memory per queued message, subd beside
# Mosquitto.
#
#   scripts/mqtt-bench.sh BIN_DIR [--reps N] [--scenarios "fanout ingest wide bigfan latency"] [--harness DIR]
#                                 [--bench-args "..."] [--queued N]
#
# Prints one line per run (as the harness prints them, with target= in front) and a table of medians with the
# ratios the issue asks for: subd's MQTT front over Mosquitto, and over subd's own protocol. Needs mosquitto,
# mosquitto-clients and gcc (make bench-mqtt installs the first two and runs this on a release build).
set -euo pipefail
bin="$1"; shift
reps=3
scenarios="fanout ingest wide bigfan latency"
harness="$(cd "$(dirname "$0")/../../shared/bench" 2>/dev/null && pwd || true)"
bench_args=""
queued=100000
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --scenarios) scenarios="$2"; shift 2 ;;
    --harness) harness="$2"; shift 2 ;;
    --bench-args) bench_args="$2"; shift 2 ;;
    --queued) queued="$2"; shift 2 ;;
    *) echo "mqtt-bench: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$harness" ] && [ -f "$harness/bench.c" ] || {
  echo "mqtt-bench: no side-by-side harness (../shared/bench); give --harness DIR" >&2; exit 2; }
command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || { echo "mqtt-bench: no mosquitto" >&2; exit 2; }
mosquitto="$(command -v mosquitto || echo /usr/sbin/mosquitto)"
build="${TMPDIR:-/tmp}/pubsub-bench-build"
mkdir -p "$build"
make -s -C "$harness" OUTDIR="$build" >/dev/null
client="$build/pubsub-bench"

dir="$(mktemp -d /tmp/subd-mqtt-bench.XXXXXX)"
pids=()
finish() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$dir"; }
trap finish EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
line_port=$(free_port); mqtt_port=$(free_port); mosq_port=$(free_port)
"$bin/subd" --listen "127.0.0.1:$line_port" --listen "mqtt://127.0.0.1:$mqtt_port" --log-level warning \
  > "$dir/subd.log" 2>&1 &
subd_pid=$!; pids+=($subd_pid)
printf 'listener %s 127.0.0.1\nallow_anonymous true\n' "$mosq_port" > "$dir/mosquitto.conf"
"$mosquitto" -c "$dir/mosquitto.conf" > "$dir/mosquitto.log" 2>&1 &
mosq_pid=$!; pids+=($mosq_pid)
for port in $line_port $mqtt_port $mosq_port; do
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
done

results="$dir/results.txt"
: > "$results"
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
for scenario in $scenarios; do
  for rep in $(seq "$reps"); do
    for target in subd-mqtt mosquitto subd-line; do
      case "$target" in
        subd-mqtt) proto=mqtt; port=$mqtt_port; pid=$subd_pid ;;
        mosquitto) proto=mqtt; port=$mosq_port; pid=$mosq_pid ;;
        subd-line) proto=subd; port=$line_port; pid=$subd_pid ;;
      esac
      before=$(cpu_of "$pid")
      # shellcheck disable=SC2086
      out=$("$client" --proto "$proto" --port "$port" --scenario "$scenario" --timeout 60 $bench_args 2>/dev/null \
        | tail -n 1 || true)
      after=$(cpu_of "$pid")
      line="target=$target rep=$rep srv_cpu_s=$(awk -v a="$before" -v b="$after" 'BEGIN { printf "%.2f", (b - a) / 100 }') $out"
      echo "$line"
      echo "$line" >> "$results"
    done
  done
done

python3 - "$results" <<'PY'
import statistics, sys
rows = []
for line in open(sys.argv[1]):
    fields = dict(word.split("=", 1) for word in line.split() if "=" in word)
    rows.append(fields)
def median(scenario, target, key):
    values = [float(r[key]) for r in rows if r.get("scenario") == scenario and r["target"] == target and key in r
              and r.get("status") == "ok"]
    return statistics.median(values) if values else None
scenarios = []
for r in rows:
    if r.get("scenario") and r["scenario"] not in scenarios: scenarios.append(r["scenario"])
print()
print("| scenario | subd MQTT | Mosquitto | subd line | MQTT ÷ Mosquitto | MQTT ÷ line |")
print("| --- | --- | --- | --- | --- | --- |")
for s in scenarios:
    key = "p99_us" if s == "latency" else ("pub_rate" if s == "ingest" else "deliver_rate")
    m, q, l = (median(s, t, key) for t in ("subd-mqtt", "mosquitto", "subd-line"))
    def fmt(x): return "-" if x is None else f"{x:,.0f}"
    def ratio(a, b):
        if a is None or b is None or b == 0: return "-"
        # Latency: lower is better, so the ratio is the other's over this one (above 1: better).
        return f"{(b / a if s == 'latency' else a / b):.2f}"
    unit = "p99 µs" if s == "latency" else ("publish/s" if s == "ingest" else "deliveries/s")
    print(f"| {s} ({unit}) | {fmt(m)} | {fmt(q)} | {fmt(l)} | {ratio(m, q)} | {ratio(m, l)} |")
failed = [r for r in rows if r.get("status") != "ok"]
for r in failed:
    print(f"not ok: {r['target']} {r.get('scenario', '?')} rep {r['rep']}: status={r.get('status', 'none')}")
PY

# QoS 1 through a persistent session, on a fresh server of each kind (a heap that served the scenarios above has
# free memory a queue would reuse, and the RSS would not grow): a subscriber session (clean session off) subscribes
# at QoS 1 and goes away; mosquitto_pub -q 1 --repeat then publishes `queued` messages of 128 bytes, each once the
# one before is acknowledged (its rate is a round trip's: -M, its window, does not change it), and the server's RSS before and after gives the memory per queued message;
# then the session comes back and takes them all; last, scripts/mqtt-qos1-window.py publishes QoS 1 with 1 and with
# 100 messages unacknowledged (no subscriber). subd's max_pending and Mosquitto's max_queued_messages (the
# bounds of the queue) are raised to hold them all.
kill "$subd_pid" "$mosq_pid" 2>/dev/null || true
rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
payload=$(printf 'x%.0s' $(seq 128))
window_run() {  # NAME PORT: QoS 1 with 1 and 100 unacknowledged (a round trip's rate, and a busy publisher's)
  local name="$1" port="$2" window
  for window in 1 100; do
    printf '%s: QoS 1, no subscriber, %s in flight: %s\n' "$name" "$window" \
      "$(python3 "$(dirname "$0")/mqtt-qos1-window.py" "$port" "$qos1_count" "$window")"
  done
}
qos1_count=50000
queue_run() {  # NAME PID PORT
  local name="$1" pid="$2" port="$3" start end rss_before rss_after received
  for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  mosquitto_sub -p "$port" -i mqtt-bench-queue -c -q 1 -t 'queue/bench' -C 1 -W 1 > /dev/null 2>&1 || true
  sleep 0.2
  rss_before=$(rss_kib "$pid")
  start=$(date +%s.%N)
  # --repeat, not -l: mosquitto_pub 2.0.11 -l -q 1 stops reading its input early (about 34,000 lines of 100,000,
  # with either server) when the input comes faster than the acknowledgements.
  mosquitto_pub -p "$port" -q 1 -t 'queue/bench' --repeat "$queued" -m "$payload"
  end=$(date +%s.%N)
  sleep 0.5
  rss_after=$(rss_kib "$pid")
  awk -v name="$name" -v n="$queued" -v s="$start" -v e="$end" -v a="$rss_before" -v b="$rss_after" 'BEGIN {
    printf "%s: QoS 1 to a persistent session away: %d messages of 128 B published at %.0f msgs/s; ", name, n, n / (e - s)
    printf "RSS %.1f -> %.1f MiB: %.0f bytes per queued message\n", a / 1024, b / 1024, (b - a) * 1024 / n
  }'
  start=$(date +%s.%N)
  received=$(timeout 60 mosquitto_sub -p "$port" -i mqtt-bench-queue -c -q 1 -t 'queue/bench' -C "$queued" -W 50 \
    2>/dev/null | wc -l || true)
  end=$(date +%s.%N)
  awk -v name="$name" -v r="$received" -v n="$queued" -v s="$start" -v e="$end" \
    'BEGIN { printf "%s: the session, back: %d of %d queued messages delivered in %.2f s\n", name, r, n, e - s }'
}
echo
queue_port=$(free_port)
SUBD_MAX_PENDING=1073741824 "$bin/subd" --listen "127.0.0.1:$(free_port)" --listen "mqtt://127.0.0.1:$queue_port" \
  --log-level warning > "$dir/subd-queue.log" 2>&1 &
queue_pid=$!; pids+=($queue_pid)
queue_run "subd MQTT" "$queue_pid" "$queue_port"
window_run "subd MQTT" "$queue_port"
kill "$queue_pid"
queue_port=$(free_port)
printf 'listener %s 127.0.0.1\nallow_anonymous true\nmax_queued_messages %s\n' "$queue_port" "$((queued * 2))" \
  > "$dir/mosquitto-queue.conf"
"$mosquitto" -c "$dir/mosquitto-queue.conf" > "$dir/mosquitto-queue.log" 2>&1 &
queue_pid=$!; pids+=($queue_pid)
queue_run "Mosquitto" "$queue_pid" "$queue_port"
window_run "Mosquitto" "$queue_port"
