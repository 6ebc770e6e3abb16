#!/usr/bin/env bash
# A long run over a veth pair that ends with the losses by cause (issue 16's acceptance run):
# `ecat sim` answers on one end, `ecat run` cycles on the other at 1 ms, then both ends'
# `ip -s link` counters and the simulator's own drop counters are printed next to
# `ecat run`'s "losses by cause" lines. Needs root (veth, raw sockets).
#
# Usage: scripts/veth-loss-run.sh DURATION [NETWORK] [NAME]
#   DURATION  e.g. 3m, 30m (ecat run --duration)
#   NETWORK   simulated network (default io)
#   NAME      veth name prefix (default vloss; the ends are NAME0 and NAME1)
# Environment: CYCLE (default 1ms); SIM_FIFO=N runs `ecat sim` at SCHED_FIFO priority N
# (on a loaded machine the simulator of a large network needs it to keep up); SIM_ARGS: more
# `ecat sim` options; REPORT: report interval (default 60s; 1s shows whether late frames come
# in bursts, as when the machine's host is busy, or spread evenly, as when the line is too slow).
# Logs go to target/veth-loss/ (run.log, run.json, sim.log, counters.txt).
set -euo pipefail
dur="${1:?usage: veth-loss-run.sh DURATION [NETWORK] [NAME]}"
net="${2:-io}"
name="${3:-vloss}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${ECAT_BIN:-$root/target/release/ecat}"
out="$root/target/veth-loss"
mkdir -p "$out"
[ -x "$bin" ] || cargo build --release -p ecat-cli
a="${name}0" b="${name}1" sim=""
cleanup() {
    [ -n "$sim" ] && kill -INT "$sim" 2>/dev/null && wait "$sim" 2>/dev/null
    ip link del "$a" 2>/dev/null || true
}
trap cleanup EXIT
ip link del "$a" 2>/dev/null || true
ip link add "$a" type veth peer name "$b"
ip link set "$a" up
ip link set "$b" up
for i in "$a" "$b"; do ethtool -K "$i" tx off rx off tso off gso off gro off >/dev/null 2>&1 || true; done
prio=()
[ -n "${SIM_FIFO:-}" ] && prio=(chrt -f "$SIM_FIFO")
# shellcheck disable=SC2086
"${prio[@]}" "$bin" sim -i "$b" -n "$net" ${SIM_ARGS:-} >"$out/sim.log" 2>&1 &
sim=$!
sleep 1
"$bin" run -i "raw:$a" --cycle ${CYCLE:-1ms} --duration "$dur" --report-every "${REPORT:-60s}" --json "$out/run.json" \
    >"$out/run.log" 2>&1 || echo "ecat run failed: see $out/run.log"
{ ip -s link show "$a"; ip -s link show "$b"; } >"$out/counters.txt"
kill -INT "$sim"
wait "$sim" || true
sim=""
grep -E '^(losses by cause|loss counters|t=)' "$out/run.log" | tail -3
tail -1 "$out/sim.log"
cat "$out/counters.txt"
