#!/usr/bin/env bash
# The cluster line of `make bench` (issue 11): starts the local cluster of scripts/cluster.sh (3 nats-servers, 3 subd
# nodes), then subbench publishes on node 1 while its 10 subscribers are on nodes 2 and 3, and stops the cluster.
#
#   scripts/cluster-bench.sh BIN_DIR [subbench options...]
#
# The nodes run `ack: local` (SUBD_CLUSTER_ACK, unless set), so each +OK counts the publisher's node's receivers: none
# (--expect-receivers 0; with SUBD_CLUSTER_ACK=all give --expect-receivers 10 after the options).
set -euo pipefail
bin="$1"; shift
out="$(mktemp /tmp/subd-cluster-bench.XXXXXX)"
SUBD_CLUSTER_ACK="${SUBD_CLUSTER_ACK:-local}" "$(dirname "$0")/cluster.sh" "$bin" > "$out" 2>&1 &
cluster=$!
finish() { kill -TERM "$cluster" 2>/dev/null || true; wait "$cluster" 2>/dev/null || true; rm -f "$out"; }
trap finish EXIT
for _ in $(seq 120); do
  grep -q "cluster: ready" "$out" && break
  kill -0 "$cluster" 2>/dev/null || { cat "$out" >&2; exit 1; }
  sleep 0.5
done
grep -q "cluster: ready" "$out" || { echo "cluster-bench: the cluster did not get ready:" >&2; cat "$out" >&2; exit 1; }
# The CPU time the hypervisor gave others over the run (/proc/stat's steal): on a shared virtual machine it moves the
# figures more than anything measured, so a round is compared with others of a like steal.
read -r -a before < /proc/stat
status=0
"$bin/subbench" --server 127.0.0.1:7821 --subscribers-at 127.0.0.1:7822 --subscribers-at 127.0.0.1:7823 \
  --expect-receivers 0 --number CLUSTERBENCH "$@" || status=$?
read -r -a after < /proc/stat
total=0
for i in 1 2 3 4 5 6 7 8; do total=$((total + after[i] - before[i])); done
if [ "$total" -gt 0 ]; then
  echo "cpu steal: $((100 * (after[8] - before[8]) / total))% of the run"
fi
exit "$status"
