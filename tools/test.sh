#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start, part two: install what is missing, then build and run the whole suite:
# style checks, the fuzz targets (TOPOTUNE_FUZZ_SECONDS each, default 10, two at a time on the
# two cores), then the tests: each once, on the plain build or under AddressSanitizer and
# UndefinedBehaviorSanitizer (below says which).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh check

work=$(mktemp -d)
cppcheck_pid=
# what only the tests run (Slurm, PyTorch, chromium, ...: most of a fresh machine's install) is
# installed while the checks and builds below run; an install is never cut short, so a failure
# before the tests waits for it
tools/install-deps.sh test >"$work/install-deps.log" 2>&1 &
deps_pid=$!
trap '[ -z "$cppcheck_pid" ] || kill "$cppcheck_pid" 2>/dev/null || true
      [ -z "$deps_pid" ] || wait "$deps_pid" || true
      rm -rf "$work"' EXIT

# cppcheck is one process: it runs beside the style checks, on the other core
echo "== style: clang-format and shellcheck; static analysis: cppcheck (warnings and portability;"
echo "   Jansson's macros taught)"
mapfile -t sources < <(git ls-files -- '*.c')
cppcheck --quiet --enable=warning,portability --std=c11 -I . --library=tools/cppcheck/jansson.cfg \
    --suppress=missingIncludeSystem --inline-suppr --error-exitcode=1 "${sources[@]}" \
    >"$work/cppcheck.log" 2>&1 &
cppcheck_pid=$!
git ls-files -- '*.c' '*.h' | xargs clang-format --dry-run -Werror
git ls-files -- '*.sh' .ci/run tools/hooks/commit-msg | xargs shellcheck -x
cppcheck_rc=0
wait "$cppcheck_pid" || cppcheck_rc=$?
cppcheck_pid=
cat "$work/cppcheck.log"
[ "$cppcheck_rc" = 0 ] || { echo "cppcheck: FAILED (above)"; exit 1; }

seconds=${TOPOTUNE_FUZZ_SECONDS:-10}
echo "== fuzz: every parser of untrusted text, ${seconds} s each, two at a time"
tools/build.sh fuzz >/dev/null
# the suite builds with gcc: every file through clang too, with the same flags (seconds)
python3 tools/clang-syntax.py build-fuzz
fuzz() { # TARGET: its run's exit status in $work/TARGET.rc (libFuzzer is one process, one core)
    local target=$1 seeds=tests/fuzz/corpus-$1 leaks=1
    [ -d "$seeds" ] || seeds=tests/fuzz/corpus
    mkdir -p "$work/$target"
    cp "$seeds"/* "$work/$target/"
    # hwloc 2.9 leaks the objects of an import it gives up on: not ours to find
    [ "$target" = hwloc-xml ] && leaks=0
    local rc=0
    "build-fuzz/tests/fuzz-$target" -max_total_time="$seconds" -max_len=16384 -print_final_stats=1 \
        -detect_leaks=$leaks "$work/$target" >"$work/$target.log" 2>&1 || rc=$?
    echo "$rc" >"$work/$target.rc"
}
targets=(topology hwloc-xml space sweepdir tuner-table nccl-log)
running=() # the fuzzers' pids only: the install above runs in the background too
for target in "${targets[@]}"; do
    if [ "${#running[@]}" -ge 2 ]; then
        wait "${running[0]}"
        running=("${running[@]:1}")
    fi
    fuzz "$target" &
    running+=($!)
done
wait "${running[@]}"
for target in "${targets[@]}"; do
    echo "fuzz-$target:"
    if [ "$(cat "$work/$target.rc")" != 0 ]; then
        grep -v -E '^#[0-9]+ ' "$work/$target.log" | tail -n 60
        echo "fuzz-$target: FAILED: the input that failed is the crash-*, leak-* or timeout-* file here"
        exit 1
    fi
    grep -E 'number_of_executed_units|peak_rss' "$work/$target.log"
    echo "fuzz-$target: 0 crashes"
done

# Each shell test runs once, on the build that checks it best within the suite's 15 minutes on
# 2 cores (both passes of every test took 23 minutes in all): under ASan+UBSan, the same code with memory and
# undefined-behaviour checks, unless it is labelled slow (the longest runs, the installed tool,
# the schemas and launch files: tests/CMakeLists.txt names them) or multinode, which run on the
# plain build that is shipped. The unit, tuner and gpu checks are short and run on both.
tools/build.sh plain >/dev/null
deps_rc=0
wait "$deps_pid" || deps_rc=$?
deps_pid=
cat "$work/install-deps.log"
[ "$deps_rc" = 0 ] || { echo "install-deps.sh test: FAILED (above)"; exit 1; }

echo "== tests: plain build: unit, tuner, gpu, multinode and slow (at ${SECONDS} s)"
(cd build && ctest --output-on-failure -j 2 -L '^(unit|tuner|gpu|multinode|slow)$')

echo "== tests: AddressSanitizer + UndefinedBehaviorSanitizer: all but multinode and slow (at ${SECONDS} s)"
tools/build.sh asan >/dev/null
(cd build-asan && ctest --output-on-failure -j 2 -LE '^(multinode|slow)$')
echo "== done in ${SECONDS} s"
