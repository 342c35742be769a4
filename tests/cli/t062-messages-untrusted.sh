#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a file, a node or a child says reaches the terminal as one clean line (issue 23): Jansson's
# parse errors quote the file (compare, doctor --profile, verify), a sim cluster's error quotes
# its prefix, doctor --profile and --hosts print the profile's and the nodes' words, verify prints
# the profile's class. No escape sequence, BEL, C1 control or forged "topotune: error:" line.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
specs=$TOPOTUNE_SRC/profiles/specs
cd "$TEST_TMP" || exit 1

clean() { # FILE...: no ESC, BEL or C1 CSI; no forged line
    python3 - "$@" <<'PY'
import sys
for f in sys.argv[1:]:
    data = open(f, "rb").read()
    assert not any(b in data for b in (b"\x1b", b"\x07", b"\xc2\x9b")), (f, data[:400])
    assert not any(l.startswith(b"topotune: error: forged") or l.startswith(b"forged")
                   for l in data.splitlines()), (f, data[:400])
PY
}

# 1. Parse errors quote the input: an escape sequence and a newline where a value should be.
mkdir -p garbled
printf '{"schema": \e]0;pwned\a\e[2J\ntopotune: error: forged}\n' >garbled/profile.json
printf '# topotune tuner table 1\n' >garbled/tuner-table.txt
expect_exit 2 "compare: unparsable profile" -- "$TOPOTUNE" compare garbled
check "compare: one clean line" clean err
expect_stderr_lines 1 "compare: one line"
expect_exit 2 "doctor --profile: unparsable profile" -- "$TOPOTUNE" doctor --profile garbled
check "doctor: one clean line" clean err
expect_exit 2 "verify: unparsable profile" -- "$TOPOTUNE" verify garbled --topology "$specs/dgx-a100.json"
check "verify: clean" clean err
printf '{"schema": "topotune/sim-cluster/1", "nodes": [\e[31m]}\n' >garbled/cluster.json
expect_exit 2 "survey: unparsable sim cluster" -- "$TOPOTUNE" survey --backend sim --cluster garbled/cluster.json --out s1
check "survey: clean" clean err

# 2. A sim cluster's error quotes what the file says: a spec name with escapes and a newline.
cat >cluster.json <<'JSON'
{"schema": "topotune/sim-cluster/1", "nodes": [
 {"spec": "hgx-h100\u001b]0;t\u0007\ntopotune: error: forged.json", "count": 2}]}
JSON
cp "$specs/hgx-h100.json" .
expect_exit 2 "survey: a cluster file quoting escapes" -- "$TOPOTUNE" survey --backend sim --cluster cluster.json --out s2
check "survey: the error is one clean line" clean err
expect_stderr_has "cluster.json" "survey: the error still names the file"

# 3. doctor --profile shows what the profile says: its class and variables, cleaned.
expect_exit 0 "a predicted profile" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" --json
mkdir -p hostile
python3 - out hostile/profile.json <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["inputs"][0]["profile"]
p["class"] = "c\u001b]0;pwned\u0007\ntopotune: error: forged"
p["variables"] = [{"name": "NCCL_ALGO", "value": "Ring", "role": "tuning", "evidence": "x\u001b[2J"}]
json.dump(p, open(sys.argv[2], "w"))
PY
printf '# topotune tuner table 1\ncollective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol,channels\n' \
    >hostile/tuner-table.txt
# A class of control characters is no class id: every reader refuses the profile, its message
# clean.
expect_exit 2 "doctor --profile: a hostile class refused" -- "$TOPOTUNE" doctor --profile hostile --input "$specs/dgx-a100.json"
check "doctor --profile: the refusal is clean" clean out err
check "doctor --profile: it names the field" grep -q '"class" is not a class id' err

# 4. verify refuses it too, as cleanly.
expect_exit 2 "verify a hostile profile" -- "$TOPOTUNE" verify hostile --topology "$specs/dgx-a100.json"
check "verify: clean output" clean out err

# 5. doctor --hosts prints the nodes' host and check names: a node that lies about them.
cat >node.sh <<'SH'
#!/usr/bin/env bash
printf '%s' '{"report": {"host": "h\u001b]0;pwned\u0007\nforged", "class": "k\u001b[2J", ' \
    '"software": {"nccl": "2\u001b[31m"}, "checks": [{"name": "shm\u009b2J\nforged row", "status": "fail", ' \
    '"evidence": "e\u001b[H", "fix": "f\nforged"}]}}'
echo
SH
chmod +x node.sh

[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
TOPOTUNE_NODE_PROGRAM=$TEST_TMP/node.sh "$TOPOTUNE" doctor --hosts localhost >out 2>err
check "doctor --hosts: a row for the node" grep -q "^h" out
check "doctor --hosts: clean table" clean out err
finish
