# SPDX-License-Identifier: MIT
# Shared helpers for the CLI tests: sourced by every tests/cli/tNNN-*.sh.
# shellcheck shell=bash
set -u

: "${TOPOTUNE_BIN:?set by ctest: the directory holding topotune}"
: "${TOPOTUNE_FIXTURES:?set by ctest: tests/fixtures}"
export TOPOTUNE="$TOPOTUNE_BIN/topotune"
TOPOTUNE_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd) # this folder
TEST_TMP=$(mktemp -d)
FROZEN="" FROZEN_GUARD=""
test_cleanup() {
    [ -z "$FROZEN" ] || thaw_dir
    rm -rf "$TEST_TMP"
}
trap test_cleanup EXIT
# Debian's python3 (tools/install-deps.sh gives it jsonschema and yaml) ahead of a version
# manager's shim in PATH, for the tests and the scripts they start (#!/usr/bin/env python3): a
# pyenv shim is a few bash processes per call, 0.3 s on an idle machine and a second on a busy
# one (0.03 s for /usr/bin/python3), and the tests call python3 hundreds of times.
if [ -x /usr/bin/python3 ] && [ "$(command -v python3)" != /usr/bin/python3 ]; then
    mkdir "$TEST_TMP/.python" && ln -s /usr/bin/python3 "$TEST_TMP/.python/python3" &&
        export PATH="$TEST_TMP/.python:$PATH"
fi
# Open MPI opens its UCX and CM message layers (their libraries, a look for devices) before it
# settles on ob1 where there is no InfiniBand: 0.2 s of the 0.45 s an mpirun launch takes here,
# and the tests launch mpirun hundreds of times. ob1 is what it would pick; a caller's choice stands.
export OMPI_MCA_pml="${OMPI_MCA_pml:-ob1}"
failures=0
checks=0

pass() { checks=$((checks + 1)); }

# check DESCRIPTION COMMAND...: passes when COMMAND succeeds.
check() {
    local what=$1
    shift
    if "$@"; then pass; else fail "$what"; fi
}
# poll TRIES SECONDS COMMAND...: COMMAND every SECONDS until it succeeds, TRIES times at most (a
# wait for what a background process makes, as long as a loaded machine needs); its last status.
poll() {
    local tries=$1 pause=$2
    shift 2
    for _ in $(seq "$tries"); do
        "$@" && return 0
        sleep "$pause"
    done
    return 1
}
fail() {
    checks=$((checks + 1))
    failures=$((failures + 1))
    echo "FAIL: $*" >&2
}

# expect_exit CODE DESCRIPTION -- COMMAND...: runs COMMAND, output to $TEST_TMP/out and err.
expect_exit() {
    local want=$1 what=$2
    shift 3
    "$@" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
    local got=$?
    if [ "$got" -eq "$want" ]; then pass; else
        fail "$what: exit $got, expected $want"
        sed 's/^/  stderr: /' "$TEST_TMP/err" | head -5 >&2
    fi
}

# expect_stderr_lines N DESCRIPTION: the last command wrote exactly N lines to stderr.
expect_stderr_lines() {
    local n
    n=$(wc -l <"$TEST_TMP/err")
    if [ "$n" -eq "$1" ]; then pass; else fail "$2: $n stderr lines, expected $1: $(head -3 "$TEST_TMP/err")"; fi
}

# expect_stderr_has TEXT DESCRIPTION
expect_stderr_has() {
    if grep -qF -- "$1" "$TEST_TMP/err"; then pass; else fail "$2: stderr lacks '$1': $(cat "$TEST_TMP/err")"; fi
}

expect_no_file() {
    if [ -e "$1" ]; then fail "$2: '$1' was written"; else pass; fi
}

export TOPOTUNE_BENCH="$TOPOTUNE_BIN/topotune-bench"
# The variables fake-bench.sh reads are no NCCL tuning variables: the operator's additions to the
# allow-list of names a space may set (util/env.c) let the tests sweep them.
export TOPOTUNE_ALLOW_VARS=NCCL_FAKE_MODE,NCCL_FAKE_A,NCCL_FAKE_B,NCCL_FAKE_C,NCCL_FAKE_N,NCCL_FAKE_S,NCCL_FAKE_VALUE

# fake_bench FILE MODE [LINE]: an executable FILE that stands in for topotune-bench: it runs the
# shell LINE, when one is given, then fake-bench.sh in MODE; MODE 'space' takes it from the
# NCCL_FAKE_MODE a space sets (ok without one).
fake_bench() {
    local mode=$2
    # shellcheck disable=SC2016 # expanded by the wrapper, not here
    [ "$mode" != space ] || mode='${NCCL_FAKE_MODE:-ok}'
    {
        printf '#!/usr/bin/env bash\n'
        [ -z "${3:-}" ] || printf '%s\n' "$3"
        printf 'FAKE_MODE=%s exec "%s/fake-bench.sh" "$@"\n' "$mode" "$TOPOTUNE_TESTS"
    } >"$1"
    chmod +x "$1"
}

# mpirun_np N [NAME=VALUE...] PROGRAM ARGS...: Open MPI with what this machine needs
# (root, 2 cores); leading assignments reach every rank through -x.
mpirun_np() {
    local np=$1
    shift
    local extra=(--oversubscribe --mca btl "self,vader,tcp")
    [ "$(id -u)" = 0 ] && extra+=(--allow-run-as-root)
    while [[ "${1:-}" =~ ^[A-Z_][A-Z0-9_]*= ]]; do
        extra+=(-x "$1")
        shift
    done
    mpirun -np "$np" "${extra[@]}" "$@"
}

# scaled SECONDS: SECONDS times TOPOTUNE_TEST_TIME_SCALE (default 1), rounded up. Every fixed time
# limit a test gives (a deadline passed to topotune, a guard's) goes through it, so that a slow or
# busy machine (a sanitizer build, a shared CI runner) passes with TOPOTUNE_TEST_TIME_SCALE=3
# instead of failing at random; CMake reads it too for the tests' own TIMEOUT.
scaled() {
    awk -v s="$1" -v f="${TOPOTUNE_TEST_TIME_SCALE:-1}" 'BEGIN {
        if (f !~ /^[0-9]+([.][0-9]+)?$/ || f <= 0) { print "TOPOTUNE_TEST_TIME_SCALE: a number above 0, not \"" f "\"" > "/dev/stderr"; exit 2 }
        x = s * f; printf "%d\n", x == int(x) ? x : int(x) + 1 }'
}

# closed_stdout COMMAND...: runs COMMAND with its stdout a pipe nobody reads any more (the read
# end closed before it starts, as after `| head -1`), stderr to $TEST_TMP/err; its status.
closed_stdout() {
    python3 -c 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
sys.exit(subprocess.run(sys.argv[2:], stdout=w, stderr=open(sys.argv[1], "w")).returncode % 256)' \
        "$TEST_TMP/err" "$@"
}

# frozen_dir: sets FROZEN to a directory where a write sleeps in the kernel beyond any signal, as a
# process in a GPU driver's hang (or on a dead NFS server) does: an ext4 image frozen by fsfreeze
# (root and a loop device; says SKIP and returns 1 without them). thaw_dir ends it, and so does
# the test's end; a guard in a session of its own does after 300 s, should ctest kill the test
# first (the writers would sleep for ever).
frozen_dir() {
    local d="$TEST_TMP/frozen"
    if ! { [ "$(id -u)" = 0 ] && command -v fsfreeze >/dev/null && command -v mkfs.ext4 >/dev/null &&
        mkdir -p "$d" && truncate -s 8M "$TEST_TMP/frozen.img" &&
        mkfs.ext4 -q -F "$TEST_TMP/frozen.img" 2>/dev/null &&
        mount -o loop "$TEST_TMP/frozen.img" "$d" 2>/dev/null; }; then
        echo "SKIP: no frozen file system here (root, a loop device and fsfreeze): its cases not run" >&2
        return 1
    fi
    FROZEN=$d
    fsfreeze -f "$d" || { thaw_dir; return 1; }
    # shellcheck disable=SC2016 # $1 is the guard's own argument
    setsid sh -c 'sleep 300; fsfreeze -u "$1"; umount -l "$1"' sh "$d" >/dev/null 2>&1 </dev/null &
    FROZEN_GUARD=$!
}
# thaw_dir: the frozen file system thawed (its writers wake, and end as they were killed) and gone.
thaw_dir() {
    fsfreeze -u "$FROZEN" 2>/dev/null
    umount -l "$FROZEN" 2>/dev/null
    if [ -n "$FROZEN_GUARD" ]; then
        pkill -P "$FROZEN_GUARD" sleep 2>/dev/null
        kill "$FROZEN_GUARD" 2>/dev/null
    fi
    FROZEN="" FROZEN_GUARD=""
}

finish() {
    echo "$((checks - failures)) passed, $failures failed"
    [ "$failures" -eq 0 ]
}
