#!/usr/bin/env bash
# The long fuzz run: every target (crates/ecat-wire/fuzz and fuzz/) in turn for MINUTES each
# at most (fractions allowed: 1.5), each stopping once it reaches its goal (FUZZ_TO_GOAL=1;
# FUZZ_TO_GOAL=0 runs the full time), writing the table of executions, exec/s, coverage and crashes to
# target/fuzz-long.md. Usage: scripts/fuzz-long.sh MINUTES
set -euo pipefail
min="${1:?usage: fuzz-long.sh MINUTES (per target)}"
secs=$(awk -v m="$min" 'BEGIN { s = int(m * 60); if (s < 1) s = 1; print s }')
root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$root/target"
export FUZZ_TO_GOAL="${FUZZ_TO_GOAL:-1}"
exec "$root/scripts/fuzz-run.sh" "$secs" "$root/target/fuzz-long.md"
