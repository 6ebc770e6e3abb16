#!/usr/bin/env bash
# scripts/test.sh: the project's one test command.
#
# Installs what the tests need (Debian packages, a Python venv with the test
# oracles), then runs every tier: rustfmt, clippy, the release build, cargo
# test (which includes the C API's C programs in tests/capi/, compiled against
# include/ecrt.h and libethercat.so.1 by crates/ecat-capi/tests/capi.rs), the fuzz
# smoke run, the ecat Python package (built by maturin) and the Python tests (the
# oracles SOEM via pysoem and tshark; the package's own).
# Ends with one line "N passed, N failed, N skipped" and exits
# non-zero if anything failed.
#
# Usage: ./scripts/test.sh [--quick]
#   --quick   skip clippy and the fuzz smoke run
#
# Environment:
#   TEST_SH_BUDGET   seconds the whole run may take (default 4500); every step's
#                    time limit is cut so the run as a whole stays inside it
#   PYTEST_ARGS      extra arguments for pytest (e.g. "-k soem -x")
#   CI=true          tests that need root/netns/tshark fail instead of skipping
#                    when their prerequisites are missing (CI runs as root)

set -uo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "$0"; }

QUICK=0
for arg in "$@"; do
    case "$arg" in
        --quick) QUICK=1 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "test.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2

START=$(date +%s)
BUDGET=${TEST_SH_BUDGET:-4500}
LOG_DIR="$ROOT/target/test-logs"
mkdir -p "$LOG_DIR"

export DEBIAN_FRONTEND=noninteractive
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1
export CARGO_TERM_COLOR=never
export PYTHONDONTWRITEBYTECODE=1

# Counters for the closing line, and a record of every step.
PASSED=0
FAILED=0
SKIPPED=0
STEP_LINES=()
FAILED_STEPS=()

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    fi
fi

elapsed() { echo $(($(date +%s) - START)); }

announce() {
    printf '\n==> %s  (t=%ss)\n' "$*" "$(elapsed)"
}

note() { printf '    %s\n' "$*"; }

# Seconds a step may take: its own limit, cut to what is left of the budget.
limit_for() {
    local want=$1 left
    left=$((BUDGET - $(elapsed) - 60))
    [ "$left" -lt 30 ] && left=30
    [ "$want" -gt "$left" ] && want=$left
    echo "$want"
}

record() { # record NAME STATUS SECONDS
    STEP_LINES+=("$(printf '%-22s %-8s %5ss' "$1" "$2" "$3")")
    if [ "$2" = FAILED ] || [ "$2" = TIMEOUT ]; then
        FAILED_STEPS+=("$1")
    fi
}

print_summary() {
    echo
    echo "==> Summary (total $(elapsed)s)"
    local l
    for l in "${STEP_LINES[@]}"; do note "$l"; done
    if [ "${#FAILED_STEPS[@]}" -gt 0 ]; then
        note "failed steps: ${FAILED_STEPS[*]}"
        note "(each failed step that is not itself a test runner counts as one failure below)"
    fi
    echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
}

# die STEP MESSAGE: a setup step failed; nothing after it can run.
die() {
    echo >&2
    echo "test.sh: step '$1' FAILED: $2" >&2
    record "$1" FAILED "${3:-0}"
    FAILED=$((FAILED + 1))
    print_summary
    exit 1
}

# run_step NAME LIMIT CMD...: run a check; a failure is recorded and the run goes on.
# The command's output also goes to $LOG_DIR/NAME.log. Exit codes listed in
# OK_RCS (default "0") count as success; STEP_RC holds the real one.
run_step() {
    local name=$1 want=$2 t0 rc lim
    shift 2
    lim=$(limit_for "$want")
    announce "[$name] $*"
    t0=$(date +%s)
    timeout --kill-after=30 "$lim" "$@" </dev/null 2>&1 | tee "$LOG_DIR/$name.log"
    rc=${PIPESTATUS[0]}
    STEP_RC=$rc
    local dt=$(($(date +%s) - t0))
    if [[ " ${OK_RCS:-0} " == *" $rc "* ]]; then
        record "$name" ok "$dt"
        return 0
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        echo "test.sh: step '$name' TIMED OUT after ${lim}s" >&2
        record "$name" TIMEOUT "$dt"
    else
        echo "test.sh: step '$name' FAILED (exit $rc)" >&2
        record "$name" FAILED "$dt"
    fi
    return "$rc"
}

step_failed() { FAILED=$((FAILED + 1)); }

# ---------------------------------------------------------------------------
# (a) System packages
# ---------------------------------------------------------------------------
# linuxcnc-uspace-dev + libexpat1-dev + make: tests/python/test_lcec.py builds LinuxCNC's EtherCAT
# driver (halcompile) against libethercat.so.1 and runs it under halcmd/rtapi_app.
# libdpdk-dev: the dpdk link (cargo feature `dpdk`) and its tests, step (g).
APT_PKGS=(tshark iproute2 python3-venv ethtool rt-tests gcc cmake pkg-config valgrind
    linuxcnc-uspace-dev libexpat1-dev make libdpdk-dev)
APT_UPDATED=0

pkg_installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

apt_install() { # apt_install PKG...: update once, then install
    if [ "$(id -u)" -ne 0 ] && [ "${#SUDO[@]}" -eq 0 ]; then
        note "not root and no passwordless sudo: cannot install $*"
        return 1
    fi
    if [ "$APT_UPDATED" -eq 0 ]; then
        note "apt-get update"
        if ! timeout 600 "${SUDO[@]}" apt-get update -q -o DPkg::Lock::Timeout=120 \
            </dev/null >>"$LOG_DIR/apt.log" 2>&1; then
            tail -n 30 "$LOG_DIR/apt.log" | sed 's/^/    apt| /'
            return 1
        fi
        APT_UPDATED=1
    fi
    note "apt-get install -y --no-install-recommends $* (log: target/test-logs/apt.log)"
    if ! timeout "$(limit_for 900)" "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=120 "$@" \
        </dev/null >>"$LOG_DIR/apt.log" 2>&1; then
        tail -n 30 "$LOG_DIR/apt.log" | sed 's/^/    apt| /'
        return 1
    fi
}

announce "[packages] Debian packages: ${APT_PKGS[*]}"
t0=$(date +%s)
if ! command -v dpkg-query >/dev/null 2>&1; then
    note "no dpkg here (not Debian): install ${APT_PKGS[*]} yourself; tests that need them will skip"
    record packages skipped 0
else
    missing=()
    for p in "${APT_PKGS[@]}"; do pkg_installed "$p" || missing+=("$p"); done
    if [ "${#missing[@]}" -eq 0 ]; then
        note "all present, apt skipped"
        record packages ok 0
    else
        note "missing: ${missing[*]}"
        # tshark must never ask whether non-root users may capture.
        echo 'wireshark-common wireshark-common/install-setuid boolean false' |
            "${SUDO[@]}" debconf-set-selections 2>/dev/null || true
        if apt_install "${missing[@]}"; then
            record packages ok $(($(date +%s) - t0))
            note "installed in $(($(date +%s) - t0))s"
        elif [ "$(id -u)" -ne 0 ] && [ "${#SUDO[@]}" -eq 0 ]; then
            note "continuing: tests that need ${missing[*]} will skip"
            record packages skipped 0
        else
            die packages "apt-get could not install: ${missing[*]}" $(($(date +%s) - t0))
        fi
    fi
fi

# ---------------------------------------------------------------------------
# (b) Python venv with the test oracles
# ---------------------------------------------------------------------------
VENV="$ROOT/.venv"
VPY="$VENV/bin/python"
REQ="$ROOT/tests/oracle/requirements.txt"
STAMP="$VENV/.ecat-requirements"

announce "[python] venv $VENV with $(grep -v '^#' "$REQ" | xargs)"
t0=$(date +%s)
if ! command -v python3 >/dev/null 2>&1; then
    note "no python3 on PATH; installing Debian's"
    apt_install python3 python3-venv || die python "python3 not found on PATH and could not be installed"
fi
PY=$(command -v python3)
note "python3: $PY ($("$PY" --version 2>&1))"
want_stamp="$("$PY" --version 2>&1) $(sha256sum "$REQ" | cut -d' ' -f1)"

venv_ok() {
    [ -x "$VPY" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want_stamp" ] &&
        "$VPY" -c 'import pysoem, pytest, pytest_timeout' 2>/dev/null
}

if venv_ok; then
    note "venv up to date, pip skipped"
else
    if [ ! -x "$VPY" ] || ! "$VPY" -c 'import sys' 2>/dev/null; then
        rm -rf "$VENV"
        note "creating venv"
        if ! "$PY" -m venv "$VENV" </dev/null; then
            note "python3 -m venv failed; trying after installing python3-venv"
            rm -rf "$VENV"
            if ! { apt_install python3-venv && "$PY" -m venv "$VENV" </dev/null; }; then
                die python "could not create $VENV with $PY"
            fi
        fi
    fi
    rm -f "$STAMP"
    note "pip install -r tests/oracle/requirements.txt"
    if ! timeout "$(limit_for 900)" "$VPY" -m pip install -q -r "$REQ" </dev/null; then
        # No wheel for this Python: pysoem builds from its sdist (Cython + C).
        note "pip failed; installing a C compiler and Python headers to build from source"
        build_pkgs=(gcc libc6-dev)
        case "$PY" in /usr/bin/*) build_pkgs+=(python3-dev) ;; esac
        apt_install "${build_pkgs[@]}" || note "could not install ${build_pkgs[*]}"
        timeout "$(limit_for 900)" "$VPY" -m pip install -r "$REQ" </dev/null ||
            die python "pip install -r $REQ failed" $(($(date +%s) - t0))
    fi
    "$VPY" -c 'import pysoem, pytest, pytest_timeout' ||
        die python "the venv does not import pysoem/pytest" $(($(date +%s) - t0))
    echo "$want_stamp" >"$STAMP"
fi
note "$("$VPY" -c 'import pysoem, pytest; print("pysoem", pysoem.__version__, "| pytest", pytest.__version__)')"
record python ok $(($(date +%s) - t0))

# ---------------------------------------------------------------------------
# (c) Rust: format, lints, build, tests
# ---------------------------------------------------------------------------
command -v cargo >/dev/null 2>&1 ||
    die rust "cargo not found: install a Rust toolchain (rustup, stable, with clippy and rustfmt)"

run_step fmt 300 cargo fmt --all -- --check --color never || step_failed

if [ "$QUICK" -eq 1 ]; then
    announce "[clippy] skipped (--quick)"
    record clippy skipped 0
else
    run_step clippy 1500 cargo clippy --workspace --all-targets -- -D warnings || step_failed
fi

BUILD_OK=1
run_step build 1800 cargo build --release --workspace || { step_failed; BUILD_OK=0; }

# cargo test in release: it shares the optimised dependencies with the build
# above, and simulation-heavy tests run much faster optimised.
cargo_failed_before=0
if run_step cargo-test 1500 cargo test --release --workspace --no-fail-fast; then :; else
    cargo_failed_before=1
fi
# count_cargo STEP LABEL STEP_FAILED: add the "test result:" lines of STEP's log to the
# totals; a failed step that no test line accounts for (compile error, crash, timeout) counts
# as one failure.
count_cargo() {
    local cp cf ci
    read -r cp cf ci < <(sed 's/\x1b\[[0-9;]*m//g' "$LOG_DIR/$1.log" |
        awk '/^test result: /{
                for (i = 1; i <= NF; i++) {
                    if ($(i+1) ~ /^passed/) p += $i
                    if ($(i+1) ~ /^failed/) f += $i
                    if ($(i+1) ~ /^ignored/) g += $i
                }
             } END { printf "%d %d %d\n", p, f, g }')
    note "$2: $cp passed, $cf failed, $ci ignored"
    PASSED=$((PASSED + cp))
    FAILED=$((FAILED + cf))
    SKIPPED=$((SKIPPED + ci))
    if [ "$3" -eq 1 ] && [ "$cf" -eq 0 ]; then step_failed; fi
}
count_cargo cargo-test "cargo test" "$cargo_failed_before"

# The C API's tests (tests/capi/*.c programs, symbol versions, C examples, the ecat tool
# beside a C program over veth) run inside
# cargo test above; make sure they really ran, so a change that drops them is seen.
announce "[capi] C tests in tests/capi/ (run by cargo test -p ecat-capi)"
capi_ok=1
for t in capi symbols examples control; do
    line=$(sed 's/\x1b\[[0-9;]*m//g' "$LOG_DIR/cargo-test.log" |
        awk -v t="tests/$t.rs" '$1 == "Running" && $2 == t {f = 1; next}
                                f && /^test result: / {print; exit}')
    if [ -z "$line" ]; then
        note "crates/ecat-capi/tests/$t.rs did not run"
        capi_ok=0
    else
        note "$t: ${line#test result: }"
    fi
done
if [ "$capi_ok" -eq 1 ]; then record capi ok 0; else record capi FAILED 0; step_failed; fi

# ---------------------------------------------------------------------------
# (d) Fuzz smoke run
# ---------------------------------------------------------------------------
if [ "$QUICK" -eq 1 ]; then
    announce "[fuzz] skipped (--quick)"
    record fuzz skipped 0
elif [ -f "$ROOT/scripts/fuzz-smoke.sh" ]; then
    run_step fuzz 900 bash "$ROOT/scripts/fuzz-smoke.sh" || step_failed
else
    announce "[fuzz] scripts/fuzz-smoke.sh not present, skipped"
    record fuzz skipped 0
fi

# ---------------------------------------------------------------------------
# (e) The ecat Python package (crates/ecat-py), built by maturin into the venv
# ---------------------------------------------------------------------------
# Rebuilt only when its sources, the crates it wraps or Cargo.lock changed (a stamp in
# the venv holds their hash); a failure fails the run with one message and skips
# tests/python.
PY_TESTS=()
ECAT_PY_STAMP="$VENV/.ecat-py-build"
ecat_py_hash() {
    { sha256sum "$ROOT/Cargo.lock" "$ROOT/tests/python/requirements.txt"
      find "$ROOT/crates/ecat-py" "$ROOT/crates/ecat" "$ROOT/crates/ecat-sim" "$ROOT/crates/ecat-wire" \
          -path '*/target' -prune -o -path '*/__pycache__' -prune -o -type f -print0 |
          sort -z | xargs -0 sha256sum; } 2>/dev/null | sha256sum | cut -d' ' -f1
}
build_ecat_py() {
    "$VPY" -m pip install -q -r "$ROOT/tests/python/requirements.txt" </dev/null || return 1
    VIRTUAL_ENV="$VENV" PYO3_PYTHON="$VPY" "$VENV/bin/maturin" develop --release \
        -m "$ROOT/crates/ecat-py/Cargo.toml" </dev/null || return 1
    "$VPY" -c 'import ecat, ecat.sim, ecat.pysoem' || return 1
}
announce "[ecat-py] build and install the ecat Python package (maturin develop --release)"
t0=$(date +%s)
want_py=$(ecat_py_hash)
if [ -f "$ECAT_PY_STAMP" ] && [ "$(cat "$ECAT_PY_STAMP")" = "$want_py" ] &&
    "$VPY" -c 'import ecat._ecat' 2>/dev/null; then
    note "up to date, build skipped"
    record ecat-py ok 0
    PY_TESTS=("$ROOT/tests/python")
elif timeout --kill-after=30 "$(limit_for 1500)" bash -c "$(declare -f build_ecat_py); VPY='$VPY' VENV='$VENV' ROOT='$ROOT' build_ecat_py" \
    >"$LOG_DIR/ecat-py.log" 2>&1; then
    echo "$want_py" >"$ECAT_PY_STAMP"
    note "built and installed in $(($(date +%s) - t0))s"
    record ecat-py ok $(($(date +%s) - t0))
    PY_TESTS=("$ROOT/tests/python")
else
    tail -n 30 "$LOG_DIR/ecat-py.log" | sed 's/^/    ecat-py| /'
    echo "test.sh: step 'ecat-py' FAILED: the ecat Python package (crates/ecat-py) did not build or install; see target/test-logs/ecat-py.log (tests/python not run)" >&2
    record ecat-py FAILED $(($(date +%s) - t0))
    step_failed
fi

# ---------------------------------------------------------------------------
# (f) Python tests: the oracles (tests/oracle) and the ecat package (tests/python)
# ---------------------------------------------------------------------------
export ECAT_BIN="$ROOT/target/release/ecat"
if [ "$BUILD_OK" -eq 0 ]; then
    note "the release build failed; tests that need $ECAT_BIN will fail or skip"
fi
if [ "${CI:-}" = true ]; then
    # In CI a missing prerequisite (root, ip netns, tshark, pysoem) is a failure,
    # not a skip: otherwise an install problem would hide every oracle test.
    export ECAT_TEST_STRICT=1
fi
JUNIT="$LOG_DIR/pytest.xml"
rm -f "$JUNIT"
# pytest exits 5 when it collected no tests: that is not a failure.
# shellcheck disable=SC2086
OK_RCS="0 5" run_step pytest 1500 "$VPY" -m pytest "$ROOT/tests/oracle" "${PY_TESTS[@]}" -p no:cacheprovider \
    -rfEs --tb=short --timeout=180 --junitxml="$JUNIT" ${PYTEST_ARGS:-}
prc=$STEP_RC
[ "$prc" -eq 5 ] && note "pytest collected no tests (exit 5): not counted as a failure"
if [ -f "$JUNIT" ]; then
    read -r pp pf ps < <("$VPY" - "$JUNIT" <<'EOF'
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
t = f = s = 0
for su in suites:
    t += int(su.get("tests", 0))
    f += int(su.get("failures", 0)) + int(su.get("errors", 0))
    s += int(su.get("skipped", 0))
print(t - f - s, f, s)
EOF
    )
else
    pp=0 pf=0 ps=0
fi
note "pytest: ${pp:-0} passed, ${pf:-0} failed, ${ps:-0} skipped"
PASSED=$((PASSED + ${pp:-0}))
FAILED=$((FAILED + ${pf:-0}))
SKIPPED=$((SKIPPED + ${ps:-0}))
if [ "$prc" -ne 0 ] && [ "$prc" -ne 5 ] && [ "${pf:-0}" -eq 0 ]; then step_failed; fi

# ---------------------------------------------------------------------------
# (g) The dpdk link (cargo feature `dpdk` over Debian's libdpdk-dev) and its veth tests
# ---------------------------------------------------------------------------
# Built on its own so the workspace builds without DPDK; after pytest, because building
# ecat-cli and ecat-capi with the feature replaces target/release/ecat and libethercat.so.1
# (the tests above used the plain ones). The C API's veth test runs veth_io.c over raw and dpdk.
if ! pkg-config --exists libdpdk 2>/dev/null; then
    announce "[dpdk] skipped"
    note "DPDK's development files (libdpdk-dev) are not installed and could not be, so the dpdk link is neither built nor tested"
    record dpdk skipped 0
    SKIPPED=$((SKIPPED + 1))
else
    dpdk_failed=0
    run_step dpdk 1800 bash -c 'cargo test --release -p ecat --features dpdk --test dpdk_veth &&
        cargo test --release -p ecat-cli --features dpdk --test dpdk_cli &&
        cargo test --release -p ecat-capi --features dpdk --test veth' || dpdk_failed=1
    count_cargo dpdk dpdk "$dpdk_failed"
fi

# ---------------------------------------------------------------------------
# (h) Summary
# ---------------------------------------------------------------------------
print_summary
if [ "$FAILED" -gt 0 ] || [ "${#FAILED_STEPS[@]}" -gt 0 ]; then
    exit 1
fi
exit 0
