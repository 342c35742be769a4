#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The error contract (util/error.h): below cli/, a function that fails returns a negative UTIL_E*
# code, never a process exit status, and cli_status (cli/commands.c) is the one place a code
# becomes a status. The sources are read for the form exit statuses took below cli/
# (`return util_error(...), 2;`) and cli/ for the per-command mappings cli_parse replaced; then
# the statuses a user sees: 0 after --help, 2 for a bad flag and for a host list with no name in
# it (launch_check_nodes: UTIL_EUSAGE), 3 for hosts that cannot be mapped (UTIL_EENV). And every
# allocation goes through util/mem.h.
# bench/ is topotune-bench, a program of its own: its codes are its exit statuses.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
: "${TOPOTUNE_SRC:?set by ctest: the source tree}"

check "no exit status returned with an error below cli/" python3 - "$TOPOTUNE_SRC" <<'PY'
import re, subprocess, sys
root = sys.argv[1]
files = subprocess.run(["git", "-C", root, "ls-files", "*.c"], capture_output=True, text=True,
                       check=True).stdout.split()
strings = re.compile(r'"(?:[^"\\\n]|\\.)*"')
status = re.compile(r'return\s+util_error\([^;]*\)\s*,\s*([0-9]+)\s*;')
bad = []
for f in files:
    if f.split("/")[0] in ("cli", "bench", "tests", "tools", "tuner"):
        continue
    text = strings.sub('""', open(f"{root}/{f}").read())  # a ';' inside a message ends nothing
    for m in status.finditer(text):
        bad.append(f"{f}:{text.count(chr(10), 0, m.start()) + 1}: returns {m.group(1)}")
print("\n".join(bad))
assert not bad
PY
# Out of memory ends the process (util/mem.h): no allocation below cli/ returns NULL to a caller
# that may not check it. The one exception is a size the user chose (-e), refused with a message.
raw=$(cd "$TOPOTUNE_SRC" && git ls-files -- '*.c' | grep -vE '^(tuner|tests|tools|bench/perf)/|^util/mem\.c$' |
    xargs grep -nE '(^|[^_[:alnum:].>])(malloc|calloc|realloc|strdup|strndup)\(' | grep -v "/\* -e's size")
check "every allocation below the tuner plugin through util/mem.h: ${raw:-none}" test -z "$raw"
mapped=$(cd "$TOPOTUNE_SRC" && grep -nE 'rc (> 0|== 1) \? (0|1) : ' cli/*.c)
check "no command maps the parser's result by hand: ${mapped:-none}" test -z "$mapped"

for cmd in topo sweep gen survey predict verify compare calibrate doctor run profiles bench; do
    expect_exit 0 "$cmd --help" -- "$TOPOTUNE" "$cmd" --help
done
expect_exit 2 "an unknown flag" -- "$TOPOTUNE" sweep --no-such-flag
expect_exit 2 "a host list with no name" -- "$TOPOTUNE" sweep --backend mpi --hosts ,, \
    --space "$TOPOTUNE_SRC/profiles/spaces/mpi-default.json" --out "$TEST_TMP/s1"
expect_stderr_has "invalid value ',,' for --hosts" "the flag and its value named"
if command -v mpirun >/dev/null; then
    expect_exit 3 "a host that cannot be mapped" -- "$TOPOTUNE" sweep --backend mpi \
        --hosts topotune-no-such-host.invalid --space "$TOPOTUNE_SRC/profiles/spaces/mpi-default.json" \
        --out "$TEST_TMP/s2"
    expect_no_file "$TEST_TMP/s2" "nothing written for it"
fi
# A reader gone (| head -1): topotune exits 1 with its message, as topotune-bench does; it died of
# SIGPIPE (141). What it starts gets SIGPIPE's default back.
closed_stdout "$TOPOTUNE" topo --input "$TOPOTUNE_SRC/profiles/specs/hgx-h100.json"
check "topo into a closed pipe: exit 1" test "$?" = 1
expect_stderr_has "cannot write to standard output" "said"
for flag in --help --version; do # (they returned before the check: exit 0, or 1 unsaid)
    closed_stdout "$TOPOTUNE" "$flag"
    check "$flag into a closed pipe: exit 1" test "$?" = 1
    expect_stderr_has "cannot write to standard output" "$flag: said"
done
printf '%s\n' '#!/bin/sh' "grep '^SigIgn' /proc/self/status >'$TEST_TMP/sigign'" >"$TEST_TMP/sig-bench"
chmod +x "$TEST_TMP/sig-bench"
printf '%s\n' '{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"OMPI_MCA_coll_tuned_use_dynamic_rules": [null]}, "repeat": 1, "timeout_s": 10}' >"$TEST_TMP/sig-space.json"
TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/sig-bench" "$TOPOTUNE" -q sweep --launcher direct \
    --space "$TEST_TMP/sig-space.json" --out "$TEST_TMP/sig-sweep" >/dev/null 2>&1
sigpipe_default() { # SIGPIPE is signal 13: bit 12 of the ignored mask
    local mask
    mask=$(awk '{print $2}' "$TEST_TMP/sigign") && [ $((0x$mask >> 12 & 1)) = 0 ]
}
check "a child of a sweep has SIGPIPE's default" sigpipe_default
finish
