#!/usr/bin/env bash
# A local subd cluster (issue 11): three clustered nats-servers with JetStream and three subd nodes joined through
# them, on loopback ports, in a temporary directory. Prints how to point subctl at each node; Ctrl-C stops all six
# processes and removes the directory. `make cluster` builds subd and runs this.
#
#   scripts/cluster.sh [SUBD_BIN_DIR]      (default: .build/release)
#
# The nodes run `ack: all` (each +OK counts every node's receivers); SUBD_CLUSTER_ACK=local makes them count their own.
#
# Ports: NATS clients 4221-4223, NATS routes 6221-6223, subd 7821-7823 (the README's example).
set -euo pipefail

bin="${1:-.build/release}"
subd="$bin/subd"
[ -x "$subd" ] || { echo "cluster: no $subd (run: make release)" >&2; exit 1; }
nats="$(command -v nats-server || true)"
[ -n "$nats" ] || { [ -x /usr/sbin/nats-server ] && nats=/usr/sbin/nats-server; }
[ -n "$nats" ] || { echo "cluster: no nats-server (apt-get install nats-server, or make deps-test)" >&2; exit 1; }
for port in 4221 4222 4223 6221 6222 6223 7821 7822 7823; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "cluster: 127.0.0.1:$port is in use; stop what listens there first" >&2
    exit 1
  fi
done

dir="$(mktemp -d /tmp/subd-cluster.XXXXXX)"
pids=()
stop() {
  trap - INT TERM EXIT
  echo
  echo "cluster: stopping"
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap stop INT TERM EXIT

for i in 1 2 3; do
  cat > "$dir/nats$i.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:422$i
max_payload: 2097152   # room for subd's max_payload (1 MiB) plus the bridge's headers
jetstream { store_dir: "$dir/js$i", max_memory_store: 64MB, max_file_store: 256MB }
cluster { name: subd, listen: 127.0.0.1:622$i,
  routes: [nats-route://127.0.0.1:6221, nats-route://127.0.0.1:6222, nats-route://127.0.0.1:6223] }
CONF
  "$nats" -c "$dir/nats$i.conf" > "$dir/nats$i.log" 2>&1 &
  pids+=($!)
done
# Each node connects to its own nats-server first: they listen before the nodes start (a node that found its own not
# listening yet would take the next one in its list, and the cluster's shape would change from run to run).
for i in 1 2 3; do
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/422$i") 2>/dev/null && break
    sleep 0.1
  done
done
for i in 1 2 3; do
  cat > "$dir/subd$i.yaml" <<CONF
listen: ["127.0.0.1:782$i"]
log_level: info
cluster:
  servers: ["nats://127.0.0.1:422$i", "nats://127.0.0.1:4221", "nats://127.0.0.1:4222", "nats://127.0.0.1:4223"]
  node: node$i
  ack: ${SUBD_CLUSTER_ACK:-all}
CONF
  "$subd" --config "$dir/subd$i.yaml" > "$dir/subd$i.log" 2>&1 &
  pids+=($!)
done

# JetStream elects its leader within seconds; each subd logs "numbers caught up" once its bucket is open, and
# "interest bucket subd_interest open" once the others can expect its +OK confirmations.
deadline=$((SECONDS + 60))
until [ "$(grep -l 'numbers caught up' "$dir"/subd?.log 2>/dev/null | wc -l)" = 3 ] \
  && [ "$(grep -l 'interest bucket subd_interest open' "$dir"/subd?.log 2>/dev/null | wc -l)" = 3 ]; do
  for pid in "${pids[@]}"; do
    kill -0 "$pid" 2>/dev/null || { echo "cluster: a process exited; logs in $dir:" >&2; tail -n 5 "$dir"/*.log >&2; exit 1; }
  done
  [ "$SECONDS" -lt "$deadline" ] || { echo "cluster: not ready in 60 s; logs:" >&2; tail -n 5 "$dir"/*.log >&2; exit 1; }
  sleep 0.5
done

cat <<TEXT
cluster: ready: subd nodes on 127.0.0.1:7821, :7822 and :7823 (NATS on :4221-4223); logs in $dir
  subctl --server 127.0.0.1:7821 create SCIENCE           # created, on node1
  subctl --server 127.0.0.1:7823 listen SCIENCE           # a subscriber on node3 (another terminal)
  subctl --server 127.0.0.1:7822 publish SCIENCE V1.0     # published on node2: node3's listener prints V1.0 (1 receiver)
Ctrl-C stops the six processes.
TEXT
wait
