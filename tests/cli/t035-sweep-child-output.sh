#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What children print is untrusted (issue 14): a fake benchmark that writes NUL bytes, bytes that
# are not UTF-8, terminal escape sequences, C1 controls and bidirectional overrides to its log and
# into its JSON events, events of the wrong types, a stage cut in a UTF-8 character, and an init
# failure with exit 1. Every result line is one the sweep's own loader (--resume) and the result
# schema accept, its text holds no control character, and none reaches the terminal.
# Size events no benchmark writes make the run an error, the values unrecorded: one after the end
# event (a process left behind), a size below the one before, a size above -e, wrong results in a
# run that exits 0 (one forged line had made a run's objective 499.5 GB/s instead of 0.008). A
# size twice in a row is the bench's own (two requested sizes that round to one), and wrong
# results with their exit are recorded as wrong, sizes kept. Events that stop before the end
# event, exit 0, are an incomplete run, not an ok one.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
fake=$TEST_TMP/hostile-bench
cat >"$fake" <<'SH'
#!/usr/bin/env bash
json=
for arg in "$@"; do
    case "$arg" in --json=*) json=${arg#--json=} ;; esac
done
junk() {
    printf 'plain line\n'
    printf 'nul:\0:end\n'
    printf 'bad utf-8:\xff\xfe\xc0\xaf\xed\xa0\x80:end\n'
    printf 'title:\e]0;pwned\a clear:\e[2J\e[H color:\e[31mred\e[0m c1:\xc2\x9b31m '
    printf 'bidi:\xe2\x80\xaedcba cr:\rhidden\n'
}
case "${NCCL_FAKE_MODE:-}" in
"")
    junk >&2
    {
        printf '{"event":"start","backend":"mpi","ranks":1,"nodes":1,"hosts":["h\\u001b]0;x\\u0007ost","\\u202eevil"],"predicted":false}\n'
        printf '{"event":"size","size":8,"count":2,"time_us":1.0,"algbw":0.008,"busbw":0.0,"wrong":0,"algo":"\\u001b[1mRING","proto":"LL128"}\n'
        printf 'not json \0 \xff\n'
        printf '{"event":"end","outcome":"ok","exit_code":0,"effective_env":{"NCCL_ALGO":"Ring\\u001b[2J","NCCL_\\u001b":"x","LD_PRELOAD":"y"}}\n'
    } >"$json"
    ;;
fail-init) # as topotune-bench out of host memory: its error and end events, exit 1
    junk >&2
    printf '{"event":"error","stage":"init","message":"cannot allocate"}\n{"event":"end","outcome":"error","exit_code":1}\n' >"$json"
    exit 1
    ;;
bad-events) # (a size event of the wrong types makes an ok run an error: t063)
    printf '{"event":"start","ranks":"1","nodes":1,"hosts":"h"}\n{"event":"error","stage":"size:\\u00e9\\u001b[2J"}\n' >"$json"
    printf '{"event":"size","size":-8,"count":"2","time_us":"fast","algbw":0,"busbw":0,"wrong":0}\n' >>"$json"
    ;;
after-end | down | beyond | wrong-ok | wrong-7 | repeat | no-end) # down..wrong-ok: one size event no
    # benchmark writes, exit 0; wrong-7: wrong results and their exit; repeat: one size twice, as
    # two requested sizes that round to one part size give it; no-end: the events stop before
    # the end event, exit 0 (its one size's mean won a sweep of four sizes)
    start='{"event":"start","backend":"mpi","ranks":1,"nodes":1,"hosts":["h"],"predicted":false}'
    size='{"event":"size","size":8,"count":2,"time_us":1.0,"algbw":0.008,"busbw":0.008,"wrong":0}'
    end='{"event":"end","outcome":"ok","exit_code":0}'
    case "$NCCL_FAKE_MODE" in
    after-end) printf '%s\n' "$start" "$end" "$size" ;;
    down) printf '%s\n' "$start" "$size" "${size/\"size\":8,\"count\":2,\"time_us\":1.0,\"algbw\":0.008,\"busbw\":0.008/\"size\":4,\"count\":1,\"time_us\":1.0,\"algbw\":999,\"busbw\":999}" "$end" ;;
    beyond) printf '%s\n' "$start" "$size" "${size/\"size\":8,/\"size\":1073741824,}" "$end" ;;
    wrong-ok) printf '%s\n' "$start" "${size/\"wrong\":0/\"wrong\":5}" "$end" ;;
    wrong-7) printf '%s\n' "$start" "${size/\"wrong\":0/\"wrong\":5}" '{"event":"end","outcome":"wrong","exit_code":7}' ;;
    repeat) printf '%s\n' "$start" "$size" "$size" "$end" ;;
    no-end) printf '%s\n' "$start" "$size" ;;
    esac >"$json"
    [ "$NCCL_FAKE_MODE" != wrong-7 ] || exit 7
    ;;
long-stage) # 64 bytes of stage would end inside a character
    printf '{"event":"error","stage":"%s"}\n' "$(printf 'é%.0s' $(seq 100))" >"$json"
    exit 3
    ;;
esac
SH
chmod +x "$fake"
cat >"$TEST_TMP/space.json" <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "vars": {"NCCL_FAKE_MODE": [null, "fail-init", "bad-events", "long-stage", "after-end", "down",
                     "beyond", "wrong-ok", "wrong-7", "repeat", "no-end"]}, "repeat": 1, "timeout_s": 5}
JSON

expect_exit 0 "sweep of a hostile benchmark" -- env TOPOTUNE_BENCH_PROGRAM="$fake" \
    "$TOPOTUNE" sweep --space "$TEST_TMP/space.json" --out "$TEST_TMP/sweep"
check "no escape sequence or NUL on the terminal" python3 -c '
import sys
err = open(sys.argv[1], "rb").read()
assert not any(b in err for b in (b"\x1b", b"\x00", b"\x07", b"\xc2\x9b")), err' "$TEST_TMP/err"
check "results: clean text, checked fields, outcomes" python3 - "$TEST_TMP/sweep/results.jsonl" <<'PY'
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1], "rb").read().decode("utf-8").splitlines()]
by = {r["env"].get("NCCL_FAKE_MODE"): r for r in runs}
def safe(s, lines):
    for ch in s:
        o = ord(ch)
        if lines and ch in "\n\t":
            continue
        assert not (o < 0x20 or o == 0x7f or 0x80 <= o <= 0x9f or 0x202a <= o <= 0x202e
                    or 0x2066 <= o <= 0x2069), (hex(o), s)
for r in runs:
    safe(r["stderr_tail"], True)
    for h in r.get("hosts", []):
        safe(h, False)
    for k, v in (r.get("effective_env") or {}).items():
        safe(k, False)
        safe(v, False)
ok = by[None]
assert ok["outcome"] == "ok", ok
tail = ok["stderr_tail"]
for text in ("plain line", "nul:\ufffd:end", "color:red", "cr:\nhidden", "bidi:\ufffddcba"):
    assert text in tail, (text, tail)
assert ok["hosts"] == ["host", "\ufffdevil"], ok["hosts"]
assert len(ok["sizes"]) == 1 and ok["sizes"][0]["algo"] is None and ok["sizes"][0]["proto"] == "LL128", ok["sizes"]
assert ok["effective_env"] == {"NCCL_ALGO": "Ring"}, ok["effective_env"]
r = by["fail-init"]  # the benchmark ran and said so: an error at init, not a launch failure
assert (r["outcome"], r["stage"], r["exit_code"]) == ("error", "init", 1), r
r = by["bad-events"]
assert (r["outcome"], r["stage"]) == ("error", "results-missing") and "hosts" not in r, r
r = by["long-stage"]
assert (r["outcome"], r["stage"], r["exit_code"]) == ("error", "init", 3), r
for mode in ("after-end", "down", "beyond", "wrong-ok"):
    r = by[mode]
    assert (r["outcome"], r["stage"]) == ("error", "results-invalid"), (mode, r)
    assert all(s["busbw"] < 1 and s["size"] == 8 for s in r["sizes"]), (mode, r)  # none forged
r = by["wrong-7"]  # wrong results recorded, as the run ended with them
assert (r["outcome"], r["stage"], [s["wrong"] for s in r["sizes"]]) == ("wrong", "after size:8", [5]), r
r = by["repeat"]
assert (r["outcome"], [s["size"] for s in r["sizes"]]) == ("ok", [8, 8]), r
r = by["no-end"]
assert (r["outcome"], r["stage"]) == ("error", "results-incomplete"), r
PY
check "results match their schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/result.schema.json" "$TEST_TMP/sweep/results.jsonl" --lines

# The sweep's own loader takes every line back.
expect_exit 0 "--resume" -- env TOPOTUNE_BENCH_PROGRAM="$fake" \
    "$TOPOTUNE" sweep --space "$TEST_TMP/space.json" --out "$TEST_TMP/sweep" --resume
expect_stderr_has "11 runs already in" "every line read back, none run again"
finish
