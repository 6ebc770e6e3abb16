#!/usr/bin/env bash
# Run every ecat-wire fuzz target briefly: FUZZ_SECONDS (default 20) each.
#
# Needs a nightly toolchain and cargo-fuzz; installs cargo-fuzz if missing and possible.
# Without them it says so and exits 0: `cargo test -p ecat-wire --test fuzz_corpus` runs the
# saved corpus through the same code on stable.
#
# New inputs go to crates/ecat-wire/fuzz/target/work-corpus/<target> (ignored by git); the
# committed seed corpus in fuzz/corpus/<target> is only read. Crashes land in
# fuzz/artifacts/<target>/ and make this script fail.
set -euo pipefail

secs="${FUZZ_SECONDS:-20}"
root="$(cd "$(dirname "$0")/.." && pwd)"
fuzz_dir="$root/crates/ecat-wire/fuzz"

if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "fuzz-smoke: no nightly toolchain; skipping (the corpus test covers the seeds)"
    exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz-smoke: cargo-fuzz missing; trying 'cargo install cargo-fuzz'"
    if ! cargo install cargo-fuzz >/dev/null 2>&1; then
        echo "fuzz-smoke: could not install cargo-fuzz; skipping (the corpus test covers the seeds)"
        exit 0
    fi
fi

cd "$fuzz_dir"
targets=$(cargo +nightly fuzz list)
for t in $targets; do
    work="$fuzz_dir/target/work-corpus/$t"
    mkdir -p "$work"
    echo "fuzz-smoke: $t for ${secs}s"
    log="$fuzz_dir/target/fuzz-smoke-$t.log"
    if cargo +nightly fuzz run "$t" "$work" "corpus/$t" -- \
        -max_total_time="$secs" -print_final_stats=1 >"$log" 2>&1; then
        grep -E '^(stat::number_of_executed_units|Done [0-9]+ runs)' "$log" || true
    else
        grep -E '(ERROR|SUMMARY|panicked)' "$log" || tail -20 "$log"
        echo "fuzz-smoke: $t FAILED (log $log, inputs in $fuzz_dir/artifacts/$t/)"
        exit 1
    fi
done
echo "fuzz-smoke: all targets ran ${secs}s without a crash"
