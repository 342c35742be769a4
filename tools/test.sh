#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start, part two: install what is missing, then build and run the whole suite:
# style checks, the fuzz target (TOPOTUNE_FUZZ_SECONDS, default 60), the tests plain,
# and the tests again under AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh

echo "== style: clang-format and shellcheck"
git ls-files -- '*.c' '*.h' | xargs clang-format --dry-run -Werror
git ls-files -- '*.sh' .ci/run | xargs shellcheck -x

echo "== fuzz: the topology readers for ${TOPOTUNE_FUZZ_SECONDS:-60} s"
tools/build.sh fuzz >/dev/null
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
cp tests/fuzz/corpus/* "$corpus/"
build-fuzz/tests/fuzz-topology -max_total_time="${TOPOTUNE_FUZZ_SECONDS:-60}" -max_len=16384 \
    -print_final_stats=1 "$corpus" 2>&1 | tail -n 3

echo "== tests: plain build"
tools/build.sh plain >/dev/null
(cd build && ctest --output-on-failure -j 2)

# Tests labelled slow (the main job's default sweep, the sweep across simulated hosts) run once,
# above: their code paths run sanitized in the other sweep, gen and multinode tests, and running
# them again under ASan would take the suite past its 15 minutes on 2 cores.
echo "== tests: AddressSanitizer + UndefinedBehaviorSanitizer (all but the slow label)"
tools/build.sh asan >/dev/null
(cd build-asan && ctest --output-on-failure -j 2 -LE slow)
