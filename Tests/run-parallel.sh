#!/usr/bin/env bash
# Runs the XCTest tests of a test bundle (SwiftPM's .xctest executable on Linux) in JOBS processes at once, each
# process one unit: one test method of IntegrationTests and SubscriptionNATSTests (they start subd, subctl and
# nats-server processes and mostly wait on sockets and timers), one test class of the other modules (in-process and
# quick). Units known to take longest start first, so none of them is left to run alone at the end.
#
#   Tests/run-parallel.sh BUNDLE [--jobs N] [--skip REGEX] [--times FILE] [--list]
#
# --skip leaves out the tests whose `Module.Class/method` matches the extended REGEX (e.g. the allocation guard,
# which runs alone afterwards). --times FILE: each unit's seconds are written there (slowest first), and read back
# from there to order the next run (the order below is the fallback). --list prints the units in order, runs none.
#
# Each unit's output goes to its own file; a unit that fails (a failed assertion, a crash, no test executed, or more
# than UNIT_TIMEOUT seconds) has its whole output printed as soon as it ends and again, with every other failure, at
# the end. The last line is `N passed, N failed` (tests, skipped ones apart); the exit status is 1 when any unit
# failed or when fewer tests ran than the bundle lists.
set -u

bundle=""
jobs=6
skip='^$'
times=""
list_only=false
while [ $# -gt 0 ]; do
    case "$1" in
    --jobs) jobs=$2; shift 2 ;;
    --skip) skip=$2; shift 2 ;;
    --times) times=$2; shift 2 ;;
    --list) list_only=true; shift ;;
    -*) echo "run-parallel.sh: unknown option $1" >&2; exit 64 ;;
    *) bundle=$1; shift ;;
    esac
done
if [ ! -x "$bundle" ]; then
    echo "run-parallel.sh: no test bundle at '$bundle' (build it with 'swift build --build-tests')" >&2
    exit 64
fi
unit_timeout=${UNIT_TIMEOUT:-600}

# Slowest first when there is no --times file from an earlier run (the longest or busiest in the debug build).
fallback_first=(
    IntegrationTests.ResetLeakTests/testThousandClientsResetMidCommandLeaveNoSessionBehind
    IntegrationTests.FlowControlTests/testSmallCommandsWithHugeRepliesArePausedMidRead
    IntegrationTests.ClusterQueueTests/
    IntegrationTests.ClusterBridgeTests/
    IntegrationTests.LivenessTests/testAVanishedPeer
    IntegrationTests.LivenessTests/testKeepaliveClosesSessionWhosePeerVanished
    SubscriptionNATSTests.KeyValueConcurrentUpdateTests/
    SubscriptionNATSTests.KeyValueClusterTests/
    IntegrationTests.ClusterAckTests/
    IntegrationTests.ClusterRetainedTests/
    SubscriptionWireTests.CoverageTests
    SubscriptionProtocolTests.ParserLimitTests
    SubscriptionCenterTests.IndexConsistencyTests
    SubscriptionStateTests.LogReplayPropertyTests
    IntegrationTests.MetricsTests/testASlowClientIsClosedAfterFiveSeconds
    IntegrationTests.SystemdNotifyTests/
    IntegrationTests.FlowControlTests/
    SubscriptionNATSTests.KeyValueWatchTests/
    IntegrationTests.LivenessTests/
)

work=$(mktemp -d "${TMPDIR:-/tmp}/subd-tests.XXXXXX")
trap 'rm -rf "$work"' EXIT

listing=$("$bundle" --list-tests) || { echo "run-parallel.sh: $bundle --list-tests failed" >&2; exit 1; }
# A listed test (`Module.Class/method`; the listing has a header line too) whose name this script cannot take apart
# would never run: say so and stop, rather than pass without it.
test_name='^[A-Za-z0-9_]+\.[A-Za-z0-9_]+/[A-Za-z0-9_]+$'
odd=$(printf '%s\n' "$listing" | grep -E '^[^[:space:]]+/[^[:space:]]+$' | grep -Ev "$test_name")
if [ -n "$odd" ]; then
    echo "run-parallel.sh: $bundle lists tests this script cannot run one by one (ASCII names only):" >&2
    printf '    %s\n' "$odd" >&2
    exit 1
fi
mapfile -t all < <(printf '%s\n' "$listing" | grep -E "$test_name" | grep -Ev -- "$skip")
[ "${#all[@]}" -gt 0 ] || { echo "run-parallel.sh: no tests listed by $bundle" >&2; exit 1; }

# The units: a method of the process-starting modules, a class of the others.
mapfile -t units < <(printf '%s\n' "${all[@]}" | awk -F'[./]' '
    $1 == "IntegrationTests" || $1 == "SubscriptionNATSTests" { print; next }
    !seen[$1 "." $2]++ { print $1 "." $2 }')

# Order: by the times of an earlier run when there are any, else the fallback list first; the rest as listed.
if [ -n "$times" ] && [ -s "$times" ]; then
    mapfile -t units < <(printf '%s\n' "${units[@]}" | awk 'NR == FNR { seconds[$2] = $1; next }
        { printf "%s\t%d\t%s\n", (($0 in seconds) ? -seconds[$0] : 0), FNR, $0 }' "$times" - \
        | sort -t$'\t' -k1,1g -k2,2n | cut -f3)
else
    mapfile -t units < <(printf '%s\n' "${units[@]}" | awk 'NR == FNR { first[++count] = $0; next }
        { rank = 0; for (i = 1; i <= count; i++) if (index($0, first[i]) == 1) { rank = i - count - 1; break }
          printf "%d\t%d\t%s\n", rank, FNR, $0 }' <(printf '%s\n' "${fallback_first[@]}") - \
        | sort -t$'\t' -k1,1n -k2,2n | cut -f3)
fi

total=${#units[@]}
if $list_only; then printf '%s\n' "${units[@]}"; exit 0; fi
echo "run-parallel.sh: ${#all[@]} tests in $total processes, $jobs at a time"
started=$(date +%s.%N)

run_unit() {
    local index=$1 unit=$2 begin end status pid
    begin=$(date +%s.%N)
    # The bundle runs with its own pid written down (bash execs it) and a marker in its environment that every
    # process it starts inherits, so that what a unit killed for its time left behind can be found and ended.
    RUN_PARALLEL_UNIT="$work/$index" timeout -k 10 "$unit_timeout" \
        bash -c 'echo $$ > "$1"; exec "$2" "$3"' run-unit "$work/$index.pid" "$bundle" "$unit" \
        > "$work/$index.log" 2>&1
    status=$?
    end=$(date +%s.%N)
    if [ "$status" = 124 ] || [ "$status" = 137 ]; then
        echo "run-parallel.sh: $unit killed after $unit_timeout s" >> "$work/$index.log"
        clean_up_after "$index"
    fi
    echo "$status $(awk -v a="$begin" -v b="$end" 'BEGIN { printf "%.2f", b - a }')" > "$work/$index.status"
}

# After a unit was killed (its tear-downs never ran): kills the processes it started (subd, subctl, nats-server...:
# each in its own process group, so the kill of the unit did not reach them), found by the marker in their
# environment, and deletes the network namespaces and links it made (named after its pid: NetworkNamespace.swift).
clean_up_after() {
    local index=$1 environ pid name
    for environ in /proc/[0-9]*/environ; do
        if { tr '\0' '\n' < "$environ"; } 2>/dev/null | grep -qxF "RUN_PARALLEL_UNIT=$work/$index"; then
            pid=${environ#/proc/}
            kill -KILL "${pid%/environ}" 2>/dev/null
        fi
    done
    pid=$(cat "$work/$index.pid" 2>/dev/null) || return 0
    [ -n "$pid" ] && command -v ip > /dev/null || return 0
    for name in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^subd-it-$pid-[0-9]+$"); do
        ip netns delete "$name" 2>/dev/null
    done
    for name in $(ip -o link show 2>/dev/null | awk -F': ' '{ print $2 }' | sed 's/@.*//' \
        | grep -E "^sk${pid}h[0-9]+$"); do
        ip link delete "$name" 2>/dev/null
    done
}

# The executed and failure counts of a unit's log: its last `Executed` line (the whole process's), e.g.
# `Executed 3 tests, with 1 test skipped and 0 failures (0 unexpected) in ...`.
counts() {
    grep -E '^[[:space:]]*Executed [0-9]+ tests?, with' "$1" | tail -1 \
        | sed -E 's/^[[:space:]]*Executed ([0-9]+) tests?, with (.* and )?([0-9]+) failures?.*/\1 \3/'
}

failed_units=()
report() {
    local index=$1 unit=${units[$1]} status seconds executed failures
    read -r status seconds < "$work/$index.status"
    read -r executed failures < <(counts "$work/$index.log"; echo "")
    executed=${executed:-0}
    if [ "$status" != 0 ] || [ "$executed" = 0 ] || [ "${failures:-0}" != 0 ]; then
        failed_units+=("$index")
        echo "run-parallel.sh: FAILED $unit (exit status $status, ${seconds} s):"
        sed 's/^/    /' "$work/$index.log"
    fi
    echo "$seconds $unit" >> "$work/times"
}

next=0
running=0
declare -A pending=()
# Ctrl-C or SIGTERM: the units run under `timeout`, each in a process group of its own that a terminal's Ctrl-C does
# not reach, so they are ended here, with everything they started; then the run fails.
interrupted() {
    trap - INT TERM
    echo "run-parallel.sh: interrupted: ending the ${#pending[@]} running units" >&2
    for index in "${pending[@]}"; do clean_up_after "$index"; done
    wait
    exit 130
}
trap interrupted INT TERM
while [ "$next" -lt "$total" ] || [ "$running" -gt 0 ]; do
    while [ "$running" -lt "$jobs" ] && [ "$next" -lt "$total" ]; do
        run_unit "$next" "${units[$next]}" &
        pending[$!]=$next
        next=$((next + 1))
        running=$((running + 1))
    done
    wait -n -p done_pid
    running=$((running - 1))
    report "${pending[$done_pid]}"
    unset "pending[$done_pid]"
done

executed_total=0
failures_total=0
for ((index = 0; index < total; index++)); do
    read -r executed failures < <(counts "$work/$index.log"; echo "")
    executed_total=$((executed_total + ${executed:-0}))
    failures_total=$((failures_total + ${failures:-0}))
done
[ -n "$times" ] && sort -rn "$work/times" > "$times"
elapsed=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')

echo "run-parallel.sh: the slowest units:"
sort -rn "$work/times" | head -8 | awk '{ printf "    %7.2f s  %s\n", $1, $2 }'
status=0
if [ "${#failed_units[@]}" -gt 0 ]; then
    status=1
    echo "run-parallel.sh: ${#failed_units[@]} units failed; their output again:"
    for index in "${failed_units[@]}"; do
        echo "---- ${units[$index]}"
        cat "$work/$index.log"
    done
fi
if [ "$executed_total" -ne "${#all[@]}" ]; then
    status=1
    echo "run-parallel.sh: $executed_total tests executed, but the bundle lists ${#all[@]}"
fi
# Every listed test that neither passed nor was skipped failed: an assertion, a crash, a timeout, or it never ran.
passed=$(cat "$work"/*.log | grep -c -E "^Test Case '.*' passed \(")
skipped=$(cat "$work"/*.log | grep -c -E "^Test Case '.*' skipped \(")
failed=$((${#all[@]} - passed - skipped))
[ "$failed" = 0 ] || status=1
echo "run-parallel.sh: $executed_total tests executed in $elapsed s, with $failures_total failures"
echo "$passed passed, $failed failed, $skipped skipped"
exit $status
