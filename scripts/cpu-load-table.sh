#!/usr/bin/env bash
# The CPU load of ecat's cycle at 100 µs, 500 µs and 1 ms beside seed 003's figures (icECAT on
# an i3-10100 under PREEMPT_RT, seed 003's line-up, measured with top): over a veth pair,
# `ecat sim -n io` (seed 003's EK1100 + EL2008 + EL1018 + EL4132 + EL3102) answers on one end
# pinned to CPU 1 at SCHED_FIFO 50 (it sleeps between frames; a fresh one per cycle time),
# `ecat run` cycles on the other pinned to CPU 0 with its real-time defaults, once per cycle time, and its `--json` CPU load (the cycle thread's and the whole process's
# CPU time over the wall time of the cycling) goes into the table. Needs root (veth, raw
# sockets); takes about 3 x DURATION plus bring-up.
#
# Usage: scripts/cpu-load-table.sh [DURATION] [LINK]
#   DURATION  per cycle time (ecat run --duration; default 5s)
#   LINK      link kind on the near end: raw, mmap or xdp (default raw)
# Environment: ECAT_BIN (default target/release/ecat, built if missing), NAME (veth prefix,
# default vload; the ends are NAME0 and NAME1). Logs and JSON go to target/cpu-load/ (a release build is
# what the figures mean; a debug simulator on a loaded machine may fall behind at 100 µs).
set -euo pipefail
dur="${1:-5s}"
link="${2:-raw}"
name="${NAME:-vload}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="${ECAT_BIN:-$root/target/release/ecat}"
out="$root/target/cpu-load"
if [ "$(id -u)" != 0 ]; then
    echo "cpu-load-table.sh needs root: it creates a veth pair and opens raw sockets (run it with sudo)" >&2
    exit 1
fi
case "$link" in raw | mmap | xdp) ;; *)
    echo "link '$link' is not one of raw, mmap, xdp" >&2
    exit 1
    ;;
esac
mkdir -p "$out"
[ -x "$bin" ] || cargo build --release -p ecat-cli
a="${name}0" b="${name}1" sim=""
stop_sim() {
    [ -n "$sim" ] && kill -INT "$sim" 2>/dev/null && wait "$sim" 2>/dev/null
    sim=""
}
cleanup() {
    stop_sim || true
    ip link del "$a" 2>/dev/null || true
}
trap cleanup EXIT
ip link add "$a" type veth peer name "$b"
ip link set "$a" up
ip link set "$b" up
declare -A seed_opt=([100us]="2.2 %" [500us]="0.5 %" [1ms]="0.3 %")
declare -A seed_raw=([100us]="-" [500us]="1.6 %" [1ms]="1.0 %")
rows=()
for cyc in 100us 500us 1ms; do
    # A fresh simulator per cycle time: one that fell behind does not spoil the next row.
    chrt -f 50 "$bin" sim -i "$b" -n io --cpus 1 >"$out/sim-$cyc.log" 2>&1 &
    sim=$!
    sleep 0.5
    json="$out/run-$cyc.json"
    if "$bin" run -i "$link:$a" --cycle "$cyc" --duration "$dur" --cpu 0 --json "$json" \
        >"$out/run-$cyc.log" 2>&1; then
        rows+=("$(python3 - "$json" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
l = j["cpu_load"]
lost = j["frames"]["lost"]
print(f'{l["cycle_thread_percent"]:.2f} %|{l["process_percent"]:.2f} %|{j["cycles"]}|{lost}')
EOF
)")
    else
        rows+=("failed (see $out/run-$cyc.log)|-|-|-")
    fi
    stop_sim || true
done
echo "CPU load of the cyclic task, seed 003's line-up (ecat: $link link on veth against ecat sim, debug or release as ECAT_BIN is; seed 003: icECAT on an i3-10100, PREEMPT_RT, top)"
printf '%-7s %-14s %-14s %-8s %-6s %-22s %s\n' cycle "ecat thread" "ecat process" cycles lost "icECAT optimized I225" "icECAT raw socket"
i=0
for cyc in 100us 500us 1ms; do
    IFS='|' read -r th pr cy lo <<<"${rows[$i]}"
    printf '%-7s %-14s %-14s %-8s %-6s %-22s %s\n' "$cyc" "$th" "$pr" "$cy" "$lo" "${seed_opt[$cyc]}" "${seed_raw[$cyc]}"
    i=$((i + 1))
done
echo "(ecat's figures are CPU time over wall time of the cycling, from ecat run --json; seed 003's raw-socket figures include the kernel's IRQ thread, ecat's do not; on a shared VM they vary from run to run)"
