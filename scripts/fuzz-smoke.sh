#!/usr/bin/env bash
# Run every fuzz target briefly (scripts/test.sh runs this): FUZZ_SECONDS (default 8) each,
# the codecs' targets (crates/ecat-wire/fuzz) and the stateful and file targets (fuzz/).
# See scripts/fuzz-run.sh; without a nightly toolchain it skips (cargo test replays the saved
# corpora on stable).
exec "$(dirname "$0")/fuzz-run.sh" "${FUZZ_SECONDS:-8}"
