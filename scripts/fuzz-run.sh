#!/usr/bin/env bash
# Run every cargo-fuzz target of the project in turn for SECONDS each and print a table:
# target, executions, exec/s, coverage (libFuzzer's cov and ft), crashes.
#
# Usage: scripts/fuzz-run.sh SECONDS [TABLE_FILE]
#   (scripts/fuzz-smoke.sh and scripts/fuzz-long.sh call this; FUZZ_TARGETS="a b" limits
#   the run to those targets.)
#
# Fuzz crates: crates/ecat-wire/fuzz (codecs) and fuzz/ (simulator, MainDevice receive path,
# files users hand us). Needs a nightly toolchain and cargo-fuzz; installs cargo-fuzz if
# missing and possible. Without them it says so and exits 0: `cargo test` replays every saved
# corpus through the same code on stable.
#
# New inputs go to <fuzz crate>/target/work-corpus/<target> (ignored by git); the committed
# seed corpus in <fuzz crate>/corpus/<target> is only read. Crashes land in
# <fuzz crate>/artifacts/<target>/ and make the run fail (after all targets ran).
#
# Goals (issue 16): 10^8 executions per codec target (crates/ecat-wire/fuzz) and 10^7 per
# stateful target (sim_frames, receive_path) in one long run; the file targets are held to
# 10^7 too. The table says whether each target met its goal in this run and how long it would
# take at the rate measured (time to goal).
#
# With FUZZ_TO_GOAL=1 (scripts/fuzz-long.sh sets it) each target stops as soon as it reaches
# its goal (libFuzzer's -runs), SECONDS being the most it may take; the table then also says
# how long each target ran.
#
# Targets in NO_TRACE_CMP (default: the stateful ones, receive_path, sim_frames and
# capi_calls, the C API's call sequences on a simulated network) are built
# without comparison tracing (`--no-trace-compares`, in a target directory of their own so the
# others keep theirs): the simulator classifies every register byte a datagram touches
# through a chain of range compares, and tracing them took three quarters of sim_frames'
# time (30 s runs here: 3,086 exec/s without against 493 with, and more coverage reached).
#
# The stateful targets' inputs are capped at STATEFUL_MAX_LEN bytes (default 4096: dozens of
# frames, enough for whole mailbox transfers): left to grow, libFuzzer's limit reached 40 KB
# (hundreds of frames per input) and sim_frames fell from about 5,000 to 1,600 exec/s.
#
# Built without a sanitizer (`-s none`): the code under test is safe Rust, where AddressSanitizer
# finds nothing a panic would not, and costs a factor of 2–3 in executions. Overflow checks and
# debug assertions stay on (cargo-fuzz's default).
set -uo pipefail

secs="${1:?usage: fuzz-run.sh SECONDS [TABLE_FILE]}"
table="${2:-}"
root="$(cd "$(dirname "$0")/.." && pwd)"
dirs=("$root/crates/ecat-wire/fuzz" "$root/fuzz")

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz: no nightly toolchain; skipping (cargo test replays the saved corpora)"
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz: cargo-fuzz missing; trying 'cargo install cargo-fuzz'"
    if ! cargo install cargo-fuzz >/dev/null 2>&1; then
        echo "fuzz: could not install cargo-fuzz; skipping (cargo test replays the saved corpora)"
        exit 0
    fi
fi

no_trace_cmp=" ${NO_TRACE_CMP-receive_path sim_frames capi_calls} "
# goal TARGET DIR: the executions the target should reach.
goal() {
    case "$2" in
    */crates/ecat-wire/fuzz) echo 100000000 ;;
    *) echo 10000000 ;;
    esac
}
# to_goal GOAL EXECS RATE: "met", or the time the goal takes at RATE (h:mm).
to_goal() {
    awk -v g="$1" -v e="${2:-0}" -v r="${3:-0}" 'BEGIN {
        if (e + 0 >= g + 0) { print "met"; exit }
        if (r + 0 <= 0) { print "?"; exit }
        s = g / r; printf "%d:%02d h\n", int(s / 3600), int(s % 3600 / 60) }'
}

rows=()
failed=()
for dir in "${dirs[@]}"; do
    [ -f "$dir/Cargo.toml" ] || continue
    cd "$dir" || exit 2
    mkdir -p "$dir/target"
    if ! targets=$(cargo +nightly fuzz list --fuzz-dir "$dir" 2>/dev/null); then
        echo "fuzz: cannot list the targets of $dir"
        failed+=("$dir")
        continue
    fi
    if ! cargo +nightly fuzz build -s none --fuzz-dir "$dir" >"$dir/target/fuzz-build.log" 2>&1; then
        tail -20 "$dir/target/fuzz-build.log"
        echo "fuzz: building the targets of $dir FAILED (log $dir/target/fuzz-build.log)"
        failed+=("$dir")
        continue
    fi
    :
    for t in $targets; do
        if [ -n "${FUZZ_TARGETS:-}" ] && [[ " $FUZZ_TARGETS " != *" $t "* ]]; then continue; fi
        work="$dir/target/work-corpus/$t"
        log="$dir/target/fuzz-$t.log"
        mkdir -p "$work" "$dir/artifacts/$t"
        before=$(find "$dir/artifacts/$t" -type f | wc -l)
        echo "fuzz: $t for ${secs}s"
        flags=()
        lf=()
        if [[ "$no_trace_cmp" == *" $t "* ]]; then
            flags=(--no-trace-compares --target-dir "$dir/target/no-trace-cmp")
            lf=(-max_len="${STATEFUL_MAX_LEN:-4096}")
        fi
        g=$(goal "$t" "$dir")
        runs=()
        if [ "${FUZZ_TO_GOAL:-0}" = 1 ]; then runs=(-runs="$g"); fi
        t0=$(date +%s)
        cargo +nightly fuzz run -s none "${flags[@]}" --fuzz-dir "$dir" "$t" "$work" "corpus/$t" -- \
            -max_total_time="$secs" "${runs[@]}" "${lf[@]}" -print_final_stats=1 -rss_limit_mb=4096 >"$log" 2>&1
        rc=$?
        took=$(($(date +%s) - t0))
        crashes=$(($(find "$dir/artifacts/$t" -type f | wc -l) - before))
        execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
        rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
        cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 | awk '{print $2 "/" $4}')
        rows+=("$(printf '| %-16s | %13s | %8s | %11s | %7s | %9s | %12s | %7s |' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "$crashes" "$g" "$(to_goal "$g" "$execs" "$rate")" "$(printf '%d:%02d' $((took / 60)) $((took % 60)))")")
        if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
            grep -E '(ERROR|SUMMARY|panicked)' "$log" | head -5 || tail -20 "$log"
            echo "fuzz: $t FAILED (log $log, inputs in $dir/artifacts/$t/)"
            failed+=("$t")
        fi
    done
done

{
    echo "fuzz run: ${secs}s per target, $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
    echo "| target           |    executions |   exec/s |  cov/ft     | crashes |      goal | met/to goal  |    took |"
    echo "|------------------|---------------|----------|-------------|---------|-----------|--------------|---------|"
    printf '%s\n' "${rows[@]}"
} | if [ -n "$table" ]; then tee "$table"; else cat; fi

if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: FAILED: ${failed[*]}"
    exit 1
fi
if [ "${FUZZ_TO_GOAL:-0}" = 1 ]; then
    echo "fuzz: every target ran to its goal or ${secs}s without a crash"
else
    echo "fuzz: every target ran ${secs}s without a crash"
fi
