#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Spaces, topologies and flags as a careless colleague or a hostile file writes them (issue 14):
# variables that load code, run a command or search a path are refused with the reason (vars,
# fixed, exclude, predict --env); interface names from a topology reach a run only when valid; a
# space is counted before it is expanded (10^12 configurations refused at once, the count and
# --max-configs named) and its duplicate check is n log n; sizes and factor are range-checked at
# load; nothing of the file reaches the terminal as an escape sequence. Exit 2, nothing written.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
spec="$TOPOTUNE_SRC/profiles/specs/hgx-h100.json"

# space NAME JSON-AFTER-SCHEMA: writes $TEST_TMP/NAME.json.
space() { printf '{"schema": "topotune/space/1", %s\n' "$2" >"$TEST_TMP/$1.json"; }

# refused NAME TEXT: the sweep of space NAME exits 2 with one error line naming the file and
# TEXT, and writes nothing.
refused() {
    expect_exit 2 "space $1 refused" -- "$TOPOTUNE" sweep --backend sim --topology "$spec" \
        --space "$TEST_TMP/$1.json" --out "$TEST_TMP/out-$1" "${@:3}"
    expect_stderr_has "topotune: error: cannot read space '$TEST_TMP/$1.json': $2" "space $1: the message"
    expect_stderr_lines 1 "space $1: one line"
    expect_no_file "$TEST_TMP/out-$1" "space $1"
}

# An objective no run measures ranks every configuration at 0 busbw: refused, the sizes named.
space objrange '"vars": {"NCCL_ALGO": [null, "Ring"]}, "sizes": {"min": "8", "max": "1K"}, "objective": {"min": "1G", "max": "4G"}}'
refused objrange "objective: no size from 1073741824 to 4294967296 B measured (sizes run from 8 to 1024)"

# Variables: the policy of util_env_refused, the reason given.
space preload '"vars": {"LD_PRELOAD": [null, "/tmp/evil.so"]}}'
refused preload "vars.LD_PRELOAD: a space may not set this variable: the dynamic loader reads it"
space path '"vars": {"NCCL_ALGO": [null, "Ring"]}, "fixed": {"PATH": "/tmp/evil"}}'
refused path "fixed.PATH: a space may not set this variable: it is a search path"
space bash-env '"vars": {"BASH_ENV": [null, "/tmp/evil.sh"]}}'
refused bash-env "vars.BASH_ENV: a space may not set this variable: a shell reads it at startup"
space plugin '"vars": {"NCCL_NET_PLUGIN": [null, "evil"]}}'
refused plugin "vars.NCCL_NET_PLUGIN: a space may not set this variable: it loads a library"
space family '"vars": {"MALLOC_CONF": [null, "junk:true"]}}'
refused family "vars.MALLOC_CONF: a space may not set this variable: not a variable topotune lets a file set"
space exclude '"vars": {"NCCL_ALGO": [null, "Ring"]}, "exclude": [{"LD_AUDIT": null}]}'
refused exclude "exclude[0].LD_AUDIT: a space may not set this variable: the dynamic loader reads it"
space macro '"vars": {"NCCL_ALGO": [null, "Ring"]}, "fixed": {"NCCL_SOCKET_IFNAME": "@interfaces"}}'
refused macro "fixed.NCCL_SOCKET_IFNAME: values are strings of"

# Not a file: refused at once, not read (a FIFO without a writer blocked forever).
mkfifo "$TEST_TMP/fifo.json"
for f in fifo.json:"not a regular file" .:"a directory"; do
    expect_exit 2 "space ${f%%:*}" -- timeout 20 "$TOPOTUNE" sweep --space "$TEST_TMP/${f%%:*}"
    expect_stderr_has "cannot read space '$TEST_TMP/${f%%:*}': ${f#*:}" "space ${f%%:*}: said so"
done
printf '{"schema": "topotune/space/1", "vars": {' >"$TEST_TMP/torn.json"
expect_exit 2 "space torn" -- "$TOPOTUNE" sweep --space "$TEST_TMP/torn.json"
expect_stderr_has "cannot read space '$TEST_TMP/torn.json': document: line 1" "space torn: the place named"

# The shipped spaces load as they are.
for f in "$TOPOTUNE_SRC"/profiles/spaces/*.json; do
    expect_exit 2 "shipped $(basename "$f") loads" -- "$TOPOTUNE" sweep --space "$f" --max-configs 0
    expect_stderr_has "invalid value '0' for --max-configs" "only the flag is refused for $(basename "$f")"
done

# predict --env: the same policy.
for env in LD_PRELOAD=/tmp/evil.so:"the dynamic loader reads it" PATH=/tmp:"it is a search path" \
    NCCL_NET_PLUGIN=evil:"it loads a library"; do
    expect_exit 2 "predict --env ${env%%:*}" -- "$TOPOTUNE" predict --input "$spec" --env "${env%%:*}"
    expect_stderr_has "${env%%=*} cannot be set: ${env#*:}" "predict --env ${env%%=*}: the reason"
done
expect_exit 0 "predict --env NCCL_ALGO=Ring" -- "$TOPOTUNE" predict --input "$spec" --env NCCL_ALGO=Ring

# Sizes: a factor that no run takes, a zero minimum, a range too wide or too small.
space factor '"vars": {"NCCL_ALGO": [null]}, "sizes": {"factor": 1e308}}'
refused factor "sizes.factor: expected a number above 1 and at most 1024"
space min0 '"vars": {"NCCL_ALGO": [null]}, "sizes": {"min": 0, "max": "1M"}}'
refused min0 "sizes.min: expected at least 1 byte"
space huge '"vars": {"NCCL_ALGO": [null]}, "sizes": {"max": "900000G"}}'
refused huge "sizes.max: 966367641600000 bytes is above 64G"
space tiny '"vars": {"NCCL_ALGO": [null]}, "sizes": {"min": 1, "max": 3}}'
refused tiny "sizes: no size from 1 to 3 bytes holds one float element"
space steps '"vars": {"NCCL_ALGO": [null]}, "sizes": {"min": 1, "max": "1G", "factor": 1.001}}'
refused steps "sizes.factor: more than 1000 sizes"

# Values NCCL would misread, silently: it reads its integers with strtoll (base 0, no end check).
space word '"vars": {"NCCL_PAT_ENABLE": [null, "banana"]}}'
refused word 'vars.NCCL_PAT_ENABLE: value 1 ("banana"): NCCL reads it as one integer with strtoll'
space unit '"vars": {"NCCL_NVLS_CHUNKSIZE": ["1K"]}}'
refused unit 'vars.NCCL_NVLS_CHUNKSIZE: value 0 ("1K"): NCCL reads it as one integer'
space octal '"vars": {"NCCL_MAX_CTAS": [null, "8", "010"]}}'
refused octal 'vars.NCCL_MAX_CTAS: value 2 ("010"): NCCL reads it as one integer'
space empty '"vars": {"NCCL_PAT_ENABLE": [null, ""]}}'
refused empty 'vars.NCCL_PAT_ENABLE: value 1 (""): NCCL reads an empty value as unset: use null'
space fixedword '"vars": {"NCCL_ALGO": [null]}, "fixed": {"NCCL_CROSS_NIC": "yes"}}'
refused fixedword 'fixed.NCCL_CROSS_NIC: value "yes": NCCL reads it as one integer'
space negative '"vars": {"NCCL_IB_GID_INDEX": [null, "-1", "3"], "NCCL_ALGO": [null, "Ring"]}, "repeat": 1, "iters": 1, "warmup": 0, "sizes": {"max": "64"}}'
expect_exit 0 "integers and words as NCCL reads them" -- "$TOPOTUNE" sweep --backend sim --topology "$spec" \
    --space "$TEST_TMP/negative.json" --out "$TEST_TMP/out-negative" -q

# 10^12 configurations: counted, refused at once (it used to fill 9.5 GB), the override named.
python3 - "$TEST_TMP/big.json" <<'PY'
import json, sys
names = ["NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_MIN_CTAS",
         "NCCL_MAX_CTAS", "NCCL_BUFFSIZE", "NCCL_NTHREADS", "NCCL_P2P_LEVEL", "NCCL_IB_TC",
         "NCCL_IB_SL", "NCCL_IB_TIMEOUT"]
json.dump({"schema": "topotune/space/1",
           "vars": {v: [str(k) for k in range(10)] for v in names}}, open(sys.argv[1], "w"))
PY
start=$(date +%s)
refused big "vars: 1,000,000,000,000 combinations of values, above the limit of 100,000 configurations"
expect_stderr_has "--max-configs N" "the override is named"
check "refused within 5 s" test $(($(date +%s) - start)) -lt 5
space three '"vars": {"NCCL_ALGO": [null, "Ring", "Tree"]}, "repeat": 1, "iters": 2, "warmup": 0, "sizes": {"max": "64"}}'
refused three "vars: 3 combinations of values, above the limit of 2 configurations" --max-configs 2
expect_exit 0 "--max-configs 3 takes three" -- "$TOPOTUNE" sweep --backend sim --topology "$spec" \
    --space "$TEST_TMP/three.json" --out "$TEST_TMP/three" --max-configs 3

# 40000 values with one listed twice: found in n log n (it took 40 s).
python3 - "$TEST_TMP/dup.json" <<'PY'
import json, sys
json.dump({"schema": "topotune/space/1",
           "vars": {"NCCL_ALGO": [None] + [f"v{k}" for k in range(40000)] + ["v17"]}}, open(sys.argv[1], "w"))
PY
start=$(date +%s)
refused dup 'vars.NCCL_ALGO: value "v17" is listed twice'
check "duplicate found within 5 s" test $(($(date +%s) - start)) -lt 5

# A key with a terminal escape sequence: named, but no escape reaches the terminal.
printf '{"schema": "topotune/space/1", "vars": {"\\u001b]0;pwned\\u0007\\u001b[2JNCCL_X": [null]}}\n' >"$TEST_TMP/escape.json"
expect_exit 2 "escape in a key" -- "$TOPOTUNE" sweep --backend sim --topology "$spec" \
    --space "$TEST_TMP/escape.json" --out "$TEST_TMP/out-escape"
expect_stderr_has "variable names are" "the key is refused"
check "no escape sequence on the terminal" python3 -c '
import sys
err = open(sys.argv[1], "rb").read()
assert b"\x1b" not in err and b"\x07" not in err, err' "$TEST_TMP/err"

# @interfaces: interface names from a topology file reach a run only when they are valid values.
python3 - "$TEST_TMP/h100.json" <<PY
import json, subprocess, sys
t = json.loads(subprocess.run(["$TOPOTUNE", "topo", "--input", "$spec", "--json"], check=True,
                              capture_output=True).stdout)
t["nics"][1]["netdev"] = "ib@1+x"            # no value of a space has '@' but @interfaces
t["nics"][2]["netdev"] = "interface-of-20-chars"  # Linux names have at most 15
t["nics"][3]["netdev"] = "ib0"
json.dump(t, open(sys.argv[1], "w"))
PY
space ifname '"vars": {"NCCL_SOCKET_IFNAME": [null, "@interfaces"]}, "sizes": {"max": "64"}, "repeat": 1, "iters": 2, "warmup": 0}'
"$TOPOTUNE" sweep --backend sim --topology "$TEST_TMP/h100.json" --space "$TEST_TMP/ifname.json" \
    --out "$TEST_TMP/ifname" >"$TEST_TMP/out" 2>"$TEST_TMP/err"
rc=$?
if [ "$rc" = 2 ] && grep -q "cannot read .*'$TEST_TMP/h100.json'" "$TEST_TMP/err"; then
    pass # the topology reader refused the names first
else
    check "sweep over a topology with bad interface names (exit $rc)" test "$rc" = 0
    expect_stderr_has "@interfaces leaves out 2 interface(s)" "the left-out names are reported"
    check "only valid names swept, each once" python3 - "$TEST_TMP/ifname" <<'PY'
import json, sys
configs = json.load(open(sys.argv[1] + "/sweep.json"))["configs"]
values = [c["env"].get("NCCL_SOCKET_IFNAME") for c in configs]
assert values == [None, "=ib0", "=ib4", "=ib5", "=ib6", "=ib7"], values
runs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")]
assert {r["env"].get("NCCL_SOCKET_IFNAME") for r in runs} == set(values), runs
PY
    check "no escape sequence on the terminal" python3 -c '
import sys
assert b"\x1b" not in open(sys.argv[1], "rb").read()' "$TEST_TMP/err"
fi
finish
