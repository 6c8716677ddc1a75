#!/usr/bin/env bash
# What one delivery costs subd's one loop (issue 26, docs/BENCHMARKS.md "Issue 26"): the shared harness's load client
# (../shared/bench, pubsub-bench, built into $TMPDIR/pubsub-bench-build) against one release subd, and subd's CPU
# time (/proc/PID/stat) over each run, per publication and per delivery. ingest (no subscriber, at the same message
# size) gives a publication's cost when nobody receives it; each other run's deliveries are charged what is left,
# which includes framing the message once (the center makes it only when someone will receive it).
#
#   scripts/delivery-cost.sh BIN_DIR [--reps N] [--harness DIR]
set -euo pipefail
bin="$1"; shift
reps=3
harness="$(cd "$(dirname "$0")/../../shared/bench" 2>/dev/null && pwd || true)"
while [ $# -gt 0 ]; do
  case "$1" in
    --reps) reps="$2"; shift 2 ;;
    --harness) harness="$2"; shift 2 ;;
    *) echo "delivery-cost: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$harness" ] && [ -f "$harness/bench.c" ] || {
  echo "delivery-cost: no side-by-side harness (../shared/bench); give --harness DIR" >&2; exit 2; }
build="${TMPDIR:-/tmp}/pubsub-bench-build"
mkdir -p "$build"
make -s -C "$harness" OUTDIR="$build" >/dev/null
client="$build/pubsub-bench"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin/subd" --listen "127.0.0.1:$port" --log-level warning > /dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; wait 2>/dev/null || true' EXIT
for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
run() {  # LABEL ARGS...: prints LABEL, publications, deliveries, server CPU s
  local label="$1"; shift
  local before after out
  before=$(cpu_of "$pid")
  out=$("$client" --proto subd --port "$port" --timeout 60 "$@" 2>/dev/null | tail -n 1 || true)
  after=$(cpu_of "$pid")
  python3 - "$label" "$before" "$after" "$out" "$(getconf CLK_TCK)" <<'PY'
import sys
label, before, after, out, ticks = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4], int(sys.argv[5])
fields = dict(w.split("=", 1) for w in out.split() if "=" in w)
delivered = int(fields.get("delivered", "0/0").split("/")[0])
msgs = int(fields.get("msgs", "0"))
print(f"{label} {msgs} {delivered} {(after - before) / ticks:.2f} {fields.get('status', 'none')}")
PY
}
results=$(mktemp)
for rep in $(seq "$reps"); do
  run ingest --scenario ingest >> "$results"
  run ingest-32 --scenario ingest --size 32 >> "$results"
  run fanout --scenario fanout >> "$results"
  run wide --scenario wide >> "$results"
  run wide-1000x32 --scenario wide --subs 1000 --size 32 --msgs 200000 >> "$results"
  run fanout-32 --scenario fanout --size 32 >> "$results"
done
python3 - "$results" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
bad = [r for r in rows if r[4] != "ok"]
for r in bad: print("not ok:", " ".join(r))
def per(label):
    runs = [r for r in rows if r[0] == label and r[4] == "ok"]
    return statistics.median(float(r[3]) / int(r[1]) for r in runs) * 1e9 if runs else None
publication = {"128": per("ingest"), "32": per("ingest-32")}
for size, cost in publication.items():
    if cost is not None: print(f"a publication nobody receives (ingest, {size} B): {cost:.0f} ns of subd CPU")
for label, size in (("fanout", "128"), ("fanout-32", "32"), ("wide", "128"), ("wide-1000x32", "32")):
    runs = [r for r in rows if r[0] == label and r[4] == "ok"]
    if not runs or publication[size] is None: continue
    per_delivery = statistics.median(
        (float(r[3]) - publication[size] * 1e-9 * int(r[1])) / int(r[2]) for r in runs) * 1e9
    print(f"{label}: {per_delivery:.0f} ns of subd CPU per delivery beyond ingest's cost, {len(runs)} runs")
PY
rm -f "$results"
