#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# compare reads profiles anyone may have edited (issue 23): a profile's strings and a directory's
# name reach the terminal without escape sequences or forged lines; a malformed profile (a
# negative size, a busbw that is text) is refused naming the field; --price refuses inf and nan
# (inf once dropped the input from --json); --nodes refuses more counts than it takes instead of
# cutting the list; a measured 1,370 us prints as 1,370, not 1.37e+03.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
specs=$TOPOTUNE_SRC/profiles/specs
cd "$TEST_TMP" || exit 1

expect_exit 0 "a predicted profile to edit" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" --json
cp out predicted.json
# profile NAME PYTHON: NAME/profile.json from the predicted one, measured, edited by PYTHON (p).
profile() {
    mkdir -p "$1"
    python3 - predicted.json "$1/profile.json" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["inputs"][0]["profile"]
p["predicted"] = False
p["sweep"] = {"backend": "nccl"}
p["backend"] = "nccl"
exec(sys.argv[3])
json.dump(p, open(sys.argv[2], "w"))
PY
}
no_escape() { # FILE...: no ESC, BEL or C1 CSI byte
    python3 - "$@" <<'PY'
import sys
for f in sys.argv[1:]:
    data = open(f, "rb").read()
    assert not any(b in data for b in (b"\x1b", b"\x07", b"\xc2\x9b")), (f, data[:300])
PY
}

# 1. Escape sequences and a forged line in a profile's strings and in a directory's name.
esc=$'\e'
odd="odd${esc}]0;title${esc}\\"
profile "$odd" '
p["hardware"]["gpu_model"] = "GPU\u001b]0;pwned\u0007\ntopotune: error: forged"
p["variables"] = [{"name": "NCCL_ALGO", "value": "Ring\u009b31m\u202e", "role": "tuning",
                   "evidence": "e\r\ntopotune: error: forged too"}]
p["baseline"]["outcomes"] = {"ok\u001b[31m": 1}'
expect_exit 0 "a profile with escape sequences" -- "$TOPOTUNE" compare "$odd" --md odd.md --html odd.html
check "nothing of them on the terminal, in Markdown or HTML" no_escape out err odd.md odd.html
check "no forged line" bash -c "! grep -q '^topotune: error: forged' out err odd.md"
check "the text is still there, cleaned" grep -q 'GPU.*topotune: error: forged' out
# Markdown a profile's strings write: no live link, image or code span (a report read in a
# browser fetched the image, and the link looked like the report's own).
# shellcheck disable=SC2016 # Markdown backquotes, not a command
profile mdlink '
p["hardware"]["gpu_model"] = "![x](https://evil.example/p.png) [click](https://evil.example/) `code`"'
expect_exit 0 "a profile whose strings are Markdown" -- "$TOPOTUNE" compare mdlink --md mdlink.md
check "no link, image or code span of theirs" python3 - mdlink.md <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert "evil.example" in text, "the text is still there"
assert not re.search(r"(?<!\\)\]\(https://evil", text) and not re.search(r"(?<!\\)`code", text), text
PY
expect_exit 0 "the same as JSON" -- "$TOPOTUNE" compare "$odd" --json
# (source is the path as the user gave it, JSON-escaped: a program reads it back)
check "nor in the JSON's strings" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
def walk(v):
    if isinstance(v, str):
        assert not any(ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f or 0x202a <= ord(c) <= 0x202e for c in v), v
    elif isinstance(v, dict):
        for k, x in v.items():
            walk(k), k == "source" or walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(d)' "$TEST_TMP/out"
check "a label from the directory's name, cleaned" python3 -c '
import json, sys
l = json.load(open(sys.argv[1]))["inputs"][0]["label"]
assert l == "odd", l' "$TEST_TMP/out"

# 2. Malformed profiles: refused, naming the file and the field; nothing printed of them.
bad_profile() { # NAME PYTHON FIELD
    profile "$1" "$2"
    expect_exit 2 "$1 refused" -- "$TOPOTUNE" compare "$1"
    expect_stderr_has "$1/profile.json': $3" "$1: the field named"
    check "$1: no report" test ! -s out
}
bad_profile negative-size 'p["baseline"]["per_size"][0]["size"] = -5' "baseline.per_size[0].size"
bad_profile text-busbw 'p["baseline"]["per_size"][3]["busbw"] = "fast"' "baseline.per_size[3].busbw"
bad_profile negative-busbw 'p["baseline"]["per_size"][1]["busbw"] = -1.5' "baseline.per_size[1].busbw"
bad_profile huge-busbw 'p["baseline"]["per_size"][1]["busbw"] = 1e300' "baseline.per_size[1].busbw"
bad_profile sizes-object 'p["baseline"]["per_size"] = {"size": 8}' "baseline.per_size"
bad_profile nodes-text 'p["nodes"] = "2"' "nodes"
bad_profile gpus-negative 'p["hardware"]["gpus"] = -8' "hardware.gpus"
bad_profile model-number 'p["hardware"]["gpu_model"] = 5' "hardware.gpu_model"
bad_profile variables-numbers 'p["variables"] = [{"name": 1, "value": 2}]' "variables"
bad_profile variables-not-list 'p["variables"] = "NCCL_ALGO=Ring"' "variables"
bad_profile matrix-numbers 'p["hardware"]["matrix"]["rows"][0][1] = 18' "hardware.matrix.rows[0]"
bad_profile winner-text 'p["winner"] = "best"' "winner"
bad_profile cv-negative 'p["winner"] = {"runs": 3, "cv": -1, "per_size": []}' "winner.cv"
# a matrix of 12,000 labels (a 159 KB edit) made a table of 144 million cells: out of memory
bad_profile matrix-huge 'p["hardware"]["matrix"]["labels"] = ["G"] * 12000' "hardware.matrix.labels: expected at most 1024 entries"
bad_profile matrix-rows 'p["hardware"]["matrix"]["rows"] = [[]] * 200' "hardware.matrix.rows: expected a row per label at most"
# the sim backend's numbers said measured (predicted false) were shown as measured, without a band;
# without the flag, --json failed after the text was out (exit 1)
bad_profile sim-measured 'p["backend"] = "sim"' "predicted: false, but its backend is sim"
# ... the same said by the sweep's backend only (the report reads that one: "measured, sim backend")
bad_profile sim-sweep 'p.pop("backend", None); p.setdefault("sweep", {})["backend"] = "sim"' "predicted: false, but its backend is sim"
bad_profile no-predicted 'del p["predicted"]' "predicted: expected true or false"
# what every reader of a profile relies on (expect and check refused it; compare printed it)
profile class-path 'p["class"] = "a/../b"'
expect_exit 2 "a class that is no class id refused" -- "$TOPOTUNE" compare class-path
expect_stderr_has "profile 'class-path/profile.json': \"class\" is not a class id" "the field named"
# Fields compare does not read are copied as found, which --json's schema says: a profile.json
# with a text for its ranks and an unusable entry of a number gave JSON its own schema refused.
# A count past 2^63 - 1's half overflowed the shape compare computes (UBSan in the sanitized
# build), which now takes it as unknown.
profile unread 'p["sweep"]["ranks"] = "eight"; p["unusable"] = [{"config_id": 5}]'
profile huge-ranks 'p["sweep"]["ranks"] = 9223372036854775807; p["sweep"]["nodes"] = 9223372036854775807'
for name in unread huge-ranks; do
    expect_exit 0 "$name: compared" -- "$TOPOTUNE" compare "$name" --json
    check "$name: --json in its schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
        "$TOPOTUNE_SRC/docs/schemas/compare.schema.json" "$TEST_TMP/out"
done

# A name longer than a label holds is cut between characters, ending "..." (cut inside one, half
# of it printed as U+FFFD, and no --price could name it).
long=$(printf 'é%.0s' $(seq 120))
cp "$specs/dgx-a100.json" "$long.json"
expect_exit 0 "a name of 120 two-byte characters, priced by its label" -- "$TOPOTUNE" compare "$long.json" \
    "$specs/hgx-h100.json" --price "$(printf 'é%.0s' $(seq 62))...=5"
check "no half character in the report" bash -c "! grep -q \$'\\xef\\xbf\\xbd' '$TEST_TMP/out'"

# 3. Prices that are no number: refused, never an input dropped from --json.
for price in inf nan -inf 1e400 -3 0 '' 12abc 1e-300 0.001; do
    expect_exit 2 "--price dgx-a100=$price refused" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" \
        --price "dgx-a100=$price" --json
    expect_stderr_has "for --price: expected NAME=AMOUNT" "--price $price: why"
done
expect_exit 0 "a large finite price" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" --price dgx-a100=1e12 --json
check "the input and its price in the JSON" python3 -c '
import json, sys
i = json.load(open(sys.argv[1]))["inputs"]
assert len(i) == 1 and i[0]["price"] == 1e12, i' "$TEST_TMP/out"
# Labels are unique: a file named "x#2" kept its name and a second "x" became "x#2" too, so one
# --price went to two machines.
mkdir -p l1 l2
cp "$specs/hgx-h100.json" 'l1/x#2.json'
cp "$specs/dgx-a100.json" l1/x.json
cp "$specs/rtx4090-8x-pcie.json" l2/x.json
expect_exit 0 "x#2, x and x" -- "$TOPOTUNE" compare 'l1/x#2.json' l1/x.json l2/x.json --price 'x#2=100' --json -
check "three labels, the price on one input" python3 -c '
import json, sys
i = json.load(open(sys.argv[1]))["inputs"]
assert [(x["label"], x["price"]) for x in i] == [("x#2", 100), ("x", None), ("x#3", None)], i' "$TEST_TMP/out"

# 4. --nodes takes 32 counts: the 33rd is refused, not cut without a word, and a list past the
# parser's own 64 is told the same bound (it once said "at most 64").
for count in 33 70; do
    list=$(seq -s, 1 "$count")
    expect_exit 2 "$count node counts refused" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" \
        --nodes "$list" --json
    expect_stderr_has "separated by commas, at most 32" "--nodes: why ($count)"
done

# 5. Numbers as people write them: 512 KiB at 0.6697 GB/s busbw on 8 GPUs is 1,370 us per call
# (algbw = busbw x 8 / 14), whatever the machine that runs this test.
profile slow 'p["winner"] = None; p["baseline"]["per_size"] = [{"size": 524288, "busbw": 0.6697}, {"size": 1048576, "busbw": 1234.5}]'
expect_exit 0 "a slow profile" -- "$TOPOTUNE" compare slow --md slow.md
check "1,370 us, not 1.37e+03" grep -qE '^512 KiB \(us\) +1,370 ' out
check "1,234.50 GB/s" grep -qE '^1 MiB \(GB/s\) +1,234.50 ' out
check "no exponent anywhere" bash -c "! grep -qE '[0-9]e[+-][0-9]' out slow.md"
# a busbw of 5e-324 (the least double, above 0) made a time per call of inf, printed as "inf";
# 1e-310 a finite time of 300 digits and a band ending in inf
profile tiny 'p["winner"] = None; p["baseline"]["per_size"] = [{"size": 8, "busbw": 5e-324}, {"size": 32, "busbw": 1e-310}, {"size": 1048576, "busbw": 10}]'
expect_exit 0 "a profile of a busbw of 5e-324" -- "$TOPOTUNE" compare tiny --md tiny.md
check "no time of inf: none" bash -c "grep -qE '^8 B \(us\) +- ' out && ! grep -qi 'inf' out tiny.md"
# ... and a sweep's runs of 1e-310 at 8 B (the sweep's reader takes any number from 0): a time of
# 300 digits, its band ending in inf
printf '%s\n' '{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "8", "max": "1M", "factor": 16},
 "objective": {"min": "8", "max": "1M"}, "vars": {"NCCL_ALGO": [null, "Ring"]}, "repeat": 1, "iters": 2,
 "warmup": 1, "timeout_s": 5}' >tiny-space.json
"$TOPOTUNE" -q sweep --topology "$specs/dgx-a100.json" --space tiny-space.json --out tiny-sweep >/dev/null 2>&1
python3 - tiny-sweep/results.jsonl <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
for r in runs:
    for s in r.get("sizes") or []:
        if s["size"] == 8:
            s["busbw"] = 1e-310
open(sys.argv[1], "w").write("".join(json.dumps(r) + "\n" for r in runs))
PY
expect_exit 0 "a sweep of a busbw of 1e-310" -- "$TOPOTUNE" compare tiny-sweep --md tiny-sweep.md
check "no time of 300 digits, no inf: none" bash -c "grep -qE '^8 B \(us\) +- ' out &&
    ! grep -qi 'inf' out tiny-sweep.md && ! grep -qE '[0-9,]{40}' out tiny-sweep.md"

# 6. A file name of bytes that are not UTF-8 (JSON holds UTF-8 only) is shown with U+FFFD in the
# JSON, not a failed document.
odd=$(printf 'a\377.json')
cp "$specs/dgx-a100.json" "$odd"
expect_exit 0 "an input named in no UTF-8" -- "$TOPOTUNE" compare "$odd" --json
check "its label and source with U+FFFD" python3 -c 'import json, sys
i = json.load(open(sys.argv[1], encoding="utf-8"))["inputs"]
assert i[0]["label"] == "a\ufffd" and i[0]["source"] == "a\ufffd.json", i' "$TEST_TMP/out"

# A profile.json found in a profile directory is not followed if it is a link (it may point
# anywhere: a link to another file once printed that file's first bytes in the parse error).
profile linked-real 'pass'
mkdir linked
ln -s /etc/passwd linked/profile.json
expect_exit 2 "a linked profile.json refused" -- "$TOPOTUNE" compare linked "$specs/dgx-a100.json"
expect_stderr_has "symbolic link" "the link said"
check "nothing of the link's target printed" test "$(grep -c root "$TEST_TMP/err")" = 0
rm linked/profile.json
ln -s ../linked-real/profile.json linked/profile.json
expect_exit 2 "a link to a real profile refused too" -- "$TOPOTUNE" compare linked "$specs/dgx-a100.json"
# The report files are checked before anything is written: --md naming an input replaced the
# spec; --json and --md on one path kept the Markdown; a folder or a missing folder failed (exit 1)
# after the JSON and the text were out; --md - wrote a file named "-".
cp "$specs/hgx-h100.json" victim.json
cp victim.json victim.orig
mkdir -p adir
ln -sf elsewhere.md alink.md
for args in "--md victim.json" "--json same --md same" "--json first.json --md adir" \
    "--json first.json --html nofolder/x.html" "--md -" "--json first.json --md alink.md" \
    "--json same --md ./same"; do
    rm -f first.json
    # shellcheck disable=SC2086 # the words of each case
    expect_exit 2 "compare $args refused" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" victim.json $args
    check "$args: nothing written, the input intact" bash -c \
        "test ! -e first.json && test ! -e same && test ! -e ./- && cmp -s victim.json victim.orig && test -z \"\$(cat '$TEST_TMP/out')\""
done
expect_exit 2 "--md '' refused before anything is written" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" \
    --json first.json --md ''
check "nothing written" test ! -e first.json
# `--json A B` took the input A as the report's file and replaced the spec with the report: a
# file that is no earlier compare report is refused; an earlier report is replaced
expect_exit 2 "--json before the inputs" -- "$TOPOTUNE" compare --json victim.json "$specs/dgx-a100.json"
check "the input intact" cmp -s victim.json victim.orig
expect_exit 0 "a report" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" --json again.json
expect_exit 0 "the same report again" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" --json again.json
# a file inside an input folder (a profile's profile.json), and the files the options read (the
# space) are inputs too: each was replaced
cp slow/profile.json slow.orig
cp "$TOPOTUNE_FIXTURES/space-nccl-tiny.json" myspace.json
cp myspace.json myspace.orig
expect_exit 2 "--md inside an input folder" -- "$TOPOTUNE" compare slow "$specs/dgx-a100.json" --md slow/profile.json
expect_exit 2 "--md on the --space file" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" --space myspace.json --md myspace.json
check "both intact" bash -c "cmp -s slow/profile.json slow.orig && cmp -s myspace.json myspace.orig"
# a new report beside an input's files replaces nothing: written (a run from inside the folder)
expect_exit 0 "--md a new file in an input folder" -- "$TOPOTUNE" compare slow "$specs/dgx-a100.json" --md slow/report.md
check "written" test -s slow/report.md
# The reports are written all or none: the HTML on a full disk (passing every check above) left
# the JSON and the Markdown written, the tables printed.
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    mkdir -p full
    rm -f first.json first.md
    expect_exit 1 "an HTML report on a full disk" -- unshare -m sh -c "mount -t tmpfs -o size=64k tmpfs full &&
        { head -c 1M /dev/zero >full/filler 2>/dev/null || true; } &&
        '$TOPOTUNE' compare '$specs/dgx-a100.json' --json first.json --md first.md --html full/x.html"
    check "the error names the HTML file" grep -q "cannot write 'full/x.html'" err
    check "no report written, no temporary left, no tables printed" bash -c \
        "test ! -e first.json && test ! -e first.md && test -z \"\$(ls -a | grep '\.tmp\.')\" && ! grep -q . out"
    expect_exit 0 "the same reports where there is room" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" \
        --json first.json --md first.md --html first.html
    check "all three written, the tables printed" bash -c \
        "test -s first.json && test -s first.md && test -s first.html && grep -q . out"
else
    echo "skipped: a full disk needs root and mount namespaces"
fi

finish
