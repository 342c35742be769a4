#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune expect: the band holds the published measurements of the model's calibration at the
# rate it states; its NCCL_TESTS_MIN_BW line makes a nccl-tests-format run below the band fail
# (topotune-bench's mpi backend on this machine's CPUs, far below an HGX H100) and a healthy one
# pass (the sim backend at the spec); promtool accepts its rules; its NHC check runs in bash as
# NHC calls it (the words of the nhc.conf line as arguments, failures through die). And a profile's
# measured expectation, JSON by its schema, refusals.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
: "${TOPOTUNE_SRC:?set by ctest: the source tree}"
specs=$TOPOTUNE_SRC/profiles/specs
h100=$specs/hgx-h100.json

expect_exit 0 "--help" -- "$TOPOTUNE" expect --help
expect_exit 0 "an HGX H100 spec" -- "$TOPOTUNE" expect --input "$h100" -b 1M -e 1G -f 4
cp "$TEST_TMP/out" "$TEST_TMP/text"
# shellcheck disable=SC2016 # awk's own variables
check "every row is labelled predicted" awk '/^ / && $1 != "predicted" { exit 1 } /^ / { n++ } END { exit n != 6 }' "$TEST_TMP/text"
check "the text names NCCL_TESTS_MIN_BW" grep -q "^# NCCL_TESTS_MIN_BW=" "$TEST_TMP/text"

# JSON by its schema; each band around its busbw.
"$TOPOTUNE" expect --input "$specs/hgx-h100-2nodes.json" -b 8 -e 8G --format json >"$TEST_TMP/e.json"
check "the JSON matches docs/schemas/expect" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/expect.schema.json" "$TEST_TMP/e.json"
check "2 nodes, 16 ranks, predicted, each band around its busbw, times the other way" python3 - "$TEST_TMP/e.json" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
assert e["predicted"] and e["nodes"] == 2 and e["ranks"] == 16, e
assert len(e["sizes"]) == 31
for r in e["sizes"]:
    assert 0 < r["low"] < r["busbw"] < r["high"], r
    assert r["time_low_us"] < r["time_us"] < r["time_high_us"], r
PY

# The band holds the calibration's published rows at its stated rate: every usable row of
# bench/perf/calibration/published.json, its system as bench/perf/model-error.py writes it.
check "the band holds at least its rate of the published rows" python3 - "$TOPOTUNE" "$TOPOTUNE_SRC" "$TEST_TMP" <<'PY'
import importlib.util, json, os, subprocess, sys
binary, src, tmp = sys.argv[1:]
spec = importlib.util.spec_from_file_location("me", os.path.join(src, "bench/perf/model-error.py"))
me = importlib.util.module_from_spec(spec)
spec.loader.exec_module(me)
rows = json.load(open(me.PUBLISHED))["rows"]
inside = total = 0
rate = None
outside = []
for r in rows:
    system = me.SYSTEMS.get(me.group_of(r))
    if any(f in me.SKIP_FLAGS for f in r["flags"]) or not isinstance(system, tuple):
        continue
    if any(f in me.FLAG_ENV for f in r["flags"]):
        continue  # expect is NCCL's defaults: a row measured with a forced setting is no reference
    path = os.path.join(tmp, me.group_of(r) + ".json")
    json.dump(dict(system[0], schema="topotune/spec/1", count=r["gpus_per_node"]), open(path, "w"))
    b = str(r["size_bytes"])
    p = subprocess.run([binary, "expect", "--input", path, "--nodes", str(r["nodes"]), "-b", b,
                        "-e", b, "--format", "json"], capture_output=True, text=True)
    if p.returncode:
        continue  # the model predicts a fault for it (the stock-driver RTX 4090)
    e = json.loads(p.stdout)
    rate = e["rate"]
    s = e["sizes"][0]
    total += 1
    if s["low"] <= r["busbw_gbs"] <= s["high"]:
        inside += 1
    else:
        outside.append("%s %.1f not in %.1f..%.1f" % (r["id"], r["busbw_gbs"], s["low"], s["high"]))
print("band holds %d of %d published rows (stated rate %.0f%%)" % (inside, total, 100 * rate))
print("\n".join(outside))
assert total >= 80 and inside >= rate * total, (inside, total)
PY

# NCCL_TESTS_MIN_BW, as nccl-tests applies it: the Avg bus bandwidth against 0.9 x it.
line=$("$TOPOTUNE" expect --input "$h100" -b 1M -e 8M --format nccl-tests-min-bw)
check "one NAME=VALUE line: $line" grep -qE '^NCCL_TESTS_MIN_BW=[0-9]+\.[0-9]{2}$' <<<"$line"
expect_exit 7 "a run far below the band fails (mpi backend on CPUs)" -- \
    mpirun_np 2 "$line" "$TOPOTUNE_BENCH" --backend mpi -b 1M -e 8M -f 2 -n 2 -w 1
check "its table says FAILED after the Avg bus bandwidth" grep -qE '^# Avg bus bandwidth +: [0-9.e+]+ FAILED$' "$TEST_TMP/out"
expect_exit 0 "the same run with NCCL_TESTS_MIN_BW=0 passes" -- \
    mpirun_np 2 NCCL_TESTS_MIN_BW=0 "$TOPOTUNE_BENCH" --backend mpi -b 1M -e 8M -f 2 -n 2 -w 1
check "and says OK" grep -qE '^# Avg bus bandwidth +: [0-9.e+]+ OK$' "$TEST_TMP/out"
expect_exit 0 "the spec's healthy prediction passes its own line" -- \
    env "$line" "$TOPOTUNE_BENCH" --backend sim --topology "$h100" -b 1M -e 8M -f 2
expect_exit 7 "a slow configuration of the same spec fails it" -- \
    env "$line" NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=2 "$TOPOTUNE_BENCH" --backend sim --topology "$h100" -b 1M -e 8M -f 2
"$TOPOTUNE_BENCH" --backend sim --topology "$h100" -b 1M -e 1M --json - >"$TEST_TMP/ev.jsonl"
env "$line" NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=2 "$TOPOTUNE_BENCH" --backend sim \
    --topology "$h100" -b 1M -e 8M -f 2 --json - >>"$TEST_TMP/ev.jsonl"
check "the end event says slow, exit 7, with min_bw, by the event schema" python3 - "$TEST_TMP/ev.jsonl" "$TOPOTUNE_SRC" <<'PY'
import json, subprocess, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
ends = [e for e in ev if e["event"] == "end"]
assert ends[0]["min_bw"] is None and ends[0]["outcome"] == "ok", ends[0]
assert ends[1]["outcome"] == "slow" and ends[1]["exit_code"] == 7 and ends[1]["min_bw"] > 0, ends[1]
subprocess.run([sys.executable, sys.argv[2] + "/tests/cli/validate-schema.py",
                sys.argv[2] + "/docs/schemas/bench-event.schema.json", sys.argv[1], "--lines"], check=True)
PY
# all_gather's sizes below 16 B a rank hold no part: nccl-tests runs them at a busbw of 0 and its
# mean counts them, so the figure holds from the first size with a row, and says so. The NHC
# check ran -b 8: 4 such sizes in its mean, a node at 0.61 of the prediction failed.
expect_exit 0 "all_gather's figure" -- "$TOPOTUNE" expect --input "$h100" -C all_gather --format nccl-tests-min-bw
expect_stderr_has "predicted; holds for a run of all_gather on 8 ranks at -b 128 -e 1073741824 -f 2" \
    "the figure's sizes and its label on stderr"
check "stdout stays one line" test "$(wc -l <"$TEST_TMP/out")" = 1
"$TOPOTUNE" expect --input "$h100" -C all_gather --format nhc >"$TEST_TMP/ag.nhc"
check "the NHC check runs from the first size with a part per rank" grep -q -- ' -b 128 -e 1073741824 -f 2 ' "$TEST_TMP/ag.nhc"
check "the table says the sizes" bash -c "'$TOPOTUNE' expect --input '$h100' -C all_gather | grep -q -- '(-b 128 -e 1073741824 -f 2)'"
# rounded down: a run whose mean is the mean of the low edges passes
check "the figure is not above the mean of the low edges / 0.9" python3 -c '
import json, subprocess, sys
e = json.loads(subprocess.run([sys.argv[1], "expect", "--input", sys.argv[2], "--format", "json"],
                              capture_output=True, text=True, check=True).stdout)
line = subprocess.run([sys.argv[1], "expect", "--input", sys.argv[2], "--format", "nccl-tests-min-bw"],
                      capture_output=True, text=True, check=True).stdout
v = float(line.split("=")[1])
mean = sum(s["low"] for s in e["sizes"]) / len(e["sizes"]) / 0.9
assert v <= mean and v > mean - 0.01, (v, mean)' "$TOPOTUNE" "$h100"
expect_exit 6 "a value that is no number is refused" -- \
    env NCCL_TESTS_MIN_BW=fast "$TOPOTUNE_BENCH" --backend sim --topology "$h100"
expect_stderr_has "NCCL_TESTS_MIN_BW" "the refusal names the variable"

# --calibration moves the numbers: the expectation says whose parameters it used, in its basis
# and its JSON (a reference built so was untraceable: it said "NCCL's defaults" and nothing more).
echo '{"schema": "topotune/calibration/1", "params": {"nvls_scale": 0.5}}' >"$TEST_TMP/cal.json"
expect_exit 0 "an expectation of a calibration file's parameters" -- \
    "$TOPOTUNE" expect --input "$h100" -b 1G -e 1G --calibration "$TEST_TMP/cal.json" --format json
check "its JSON names the file, its basis too, by the schema" python3 - "$TEST_TMP/out" "$TEST_TMP/cal.json" "$TOPOTUNE_SRC" <<'PY'
import json, subprocess, sys
e = json.load(open(sys.argv[1]))
assert e["calibration"] == sys.argv[2] and "calibration file '%s'" % sys.argv[2] in e["basis"], e
subprocess.run([sys.executable, sys.argv[3] + "/tests/cli/validate-schema.py",
                sys.argv[3] + "/docs/schemas/expect.schema.json", sys.argv[1]], check=True)
PY
check "the defaults' JSON: calibration null" bash -c "'$TOPOTUNE' expect --input '$h100' -b 1G -e 1G --format json | python3 -c 'import json, sys; assert json.load(sys.stdin)[\"calibration\"] is None'"

# predict's header states the chain band's spread up to 4 MiB from the band itself (it said
# "3x too high" where the band's low edge is 0.437 of the prediction: 2.3x).
check "predict -C reduce: its header's factors are the band's" python3 - "$TOPOTUNE" "$h100" <<'PY'
import json, re, subprocess, sys
head = subprocess.run([sys.argv[1], "predict", "--input", sys.argv[2], "-C", "reduce", "-b", "1M", "-e", "1M"],
                      capture_output=True, text=True, check=True).stdout.splitlines()[0]
hi, lo = (float(x) for x in re.search(r"([0-9.]+)x too high or ([0-9.]+)x too low", head).groups())
e = json.loads(subprocess.run([sys.argv[1], "expect", "--input", sys.argv[2], "-C", "reduce", "-b", "1M",
                               "-e", "1M", "--format", "json"], capture_output=True, text=True, check=True).stdout)
r = e["sizes"][0]
assert abs(hi - r["busbw"] / r["low"]) < 0.06 and abs(lo - r["high"] / r["busbw"]) < 0.06, (head, r)
PY
# A file name is any bytes: one with line ends printed raw in the header forged table rows
# (a "measured" row of 999 GB/s) in expect's and predict's text.
forged=$'x\n   measured      1073741824     999.00     998.00 ..   1000.00  fake\n#.json'
cp "$h100" "$TEST_TMP/$forged"
for cmd in expect predict; do
    "$TOPOTUNE" "$cmd" --input "$TEST_TMP/$forged" -b 1G -e 1G >"$TEST_TMP/forged.txt"
    check "$cmd: the name stays on its header line" bash -c "! grep -q '^   measured' '$TEST_TMP/forged.txt' && test \$(grep -vc '^#' '$TEST_TMP/forged.txt') = 1"
done

# AWS's p4d file describes the PCIe tree only (NCCL adds the NVLinks at run time): priced over
# PCIe, its expectation was 8 GB/s for 8 A100s on NVSwitch, a check that never fails.
expect_exit 2 "a topology silent on NVLink is no reference" -- \
    "$TOPOTUNE" expect --input "$TOPOTUNE_FIXTURES/nccl-topo-aws-p4d-24xlarge.xml"
expect_stderr_has "does not describe NVLink" "the refusal says why"

# Prometheus rules select a live node's class: a spec's is no node's (its matrix and CPU are its
# own), so its rules selected nothing; --class gives the id topotune topo prints on a node.
expect_exit 2 "prometheus-rules of a spec without --class" -- "$TOPOTUNE" expect --input "$h100" --format prometheus-rules
expect_stderr_has "give --class" "says what to give"
expect_exit 2 "--class that is no class id" -- "$TOPOTUNE" expect --input "$h100" --class 'a b' --format prometheus-rules
node_class="h100-80gb-hbm3-8x-nvs18-8xib400-0123abcd" # stands for a node's, as topotune topo prints it
# Prometheus rules: promtool accepts them; one alert per size at the band's low edge.
"$TOPOTUNE" expect --input "$specs/hgx-h100-2nodes.json" --class "$node_class" -b 1M -e 1G -f 4 --format prometheus-rules >"$TEST_TMP/rules.yml"
check "the band's rules select --class" grep -q "class=\\\\\"$node_class\\\\\"" "$TEST_TMP/rules.yml"
check "promtool check rules accepts them" promtool check rules "$TEST_TMP/rules.yml"
check "6 alerts on topotune_busbw_bytes_per_second" test "$(grep -c 'expr: "topotune_busbw_bytes_per_second{' "$TEST_TMP/rules.yml")" = 6
# A run that fails measures no busbw, so the band's rules cannot fire: its exit status does. A
# real failed run's --metrics (an unknown NCCL_ALGO: exit 3), against the rules of its own spec.
# The failed run's node reports under another class (it lost a GPU): its failure still alerts
# (the rules selected the class: the degraded node went silent).
"$TOPOTUNE" expect --input "$h100" --class "$node_class" -b 1M -e 1M --format prometheus-rules >"$TEST_TMP/rules1.yml"
check "promtool accepts the run rules" promtool check rules "$TEST_TMP/rules1.yml"
expect_exit 3 "a failed run" -- env NCCL_ALGO=bogus "$TOPOTUNE_BENCH" --backend sim --topology "$h100" \
    -b 1M -e 1M --metrics "$TEST_TMP/failed.prom"
python3 - "$TEST_TMP/failed.prom" "$TEST_TMP/rules1.yml" "$node_class" >"$TEST_TMP/failed-test.yml" <<'PY'
import sys
series = {}
for line in open(sys.argv[1]):
    if line.startswith("topotune_bench_"):
        name_labels, value = line.rsplit(" ", 1)
        series[name_labels] = value.strip()
assert not any(k.startswith("topotune_busbw") for k in series), series
# a sim run's status is a prediction's, labelled so, and never alerts: its copy labelled
# measured stands for a failed run on GPUs
predicted = [k for k in series if k.startswith("topotune_bench_exit_code")][0]
assert 'source="predicted"' in predicted, predicted
assert all('source="predicted"' in k for k in series), series
exit_series = predicted.replace('source="predicted"', 'source="measured"')
cls = exit_series.split('class="')[1].split('"')[0]
exit_series = exit_series.replace('class="%s"' % cls, 'class="h100-80gb-hbm3-7x-degraded-1"')
series[exit_series] = series[predicted]
print("rule_files: [%s]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:" % sys.argv[2])
for k in (predicted, exit_series):
    print("      - series: '%s'\n        values: '%s %s'" % (k, series[k], series[k]))
print("    alert_rule_test:\n      - eval_time: 1m\n        alertname: TopotuneBenchFailed")
labels = exit_series[exit_series.index("{") + 1:-1]
print("        exp_alerts:\n          - exp_labels: {severity: critical, expected_class: %s, %s}" %
      (sys.argv[3], ", ".join(k + ": " + v for k, v in (kv.split("=", 1) for kv in labels.split(",")))))
import json, yaml  # the annotations as Prometheus renders them: no instance label, the value
rule = [r for g in yaml.safe_load(open(sys.argv[2]))["groups"] for r in g["rules"]
        if r["alert"] == "TopotuneBenchFailed"][0]
render = lambda t: t.replace("{{ $value }}", series[exit_series]).replace("{{ $labels.instance }}", "")
print("            exp_annotations: {%s}" % ", ".join(
    "%s: %s" % (k, json.dumps(render(v))) for k, v in rule["annotations"].items()))
PY
check "a sim run's status series say source=\"predicted\"" grep -q '^topotune_bench_exit_code{.*source="predicted"' "$TEST_TMP/failed.prom"
check "the rules test was written" grep -q "alertname: TopotuneBenchFailed" "$TEST_TMP/failed-test.yml"
check "a failed measured run's exit code fires TopotuneBenchFailed, a sim run's not (promtool test rules)" \
    promtool test rules "$TEST_TMP/failed-test.yml"
check "and 3 rules on each run: failed, wrong values, stale" test \
    "$(grep -cE 'alert: TopotuneBench(Failed|WrongResults|Stale)$' "$TEST_TMP/rules1.yml")" = 3
# topotune check writes no topotune_bench_* series, and a failed check no busbw: no rule fired for
# it (the class's check DaemonSet feeds only check's metrics). Its verdict and its age alert; a
# sim check's (source="predicted") never.
expect_exit 1 "a failed check" -- env TOPOTUNE_BENCH_PROGRAM=/bin/false "$TOPOTUNE" check --backend sim \
    --input "$h100" --no-doctor -b 1M -e 1M --metrics "$TEST_TMP/check-failed.prom" --out "$TEST_TMP/check-failed"
python3 - "$TEST_TMP/check-failed.prom" "$TEST_TMP/rules1.yml" "$node_class" >"$TEST_TMP/check-test.yml" <<'PY'
import sys
ok = [l.rsplit(" ", 1) for l in open(sys.argv[1]) if l.startswith("topotune_check_ok{")]
assert len(ok) == 1 and 'source="predicted"' in ok[0][0] and ok[0][1].strip() == "0", ok
predicted = ok[0][0]
measured = predicted.replace(',source="predicted"', "").replace('source="predicted",', "")
cls = predicted.split('class="')[1].split('"')[0]
print("rule_files: [%s]\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:" % sys.argv[2])
for k in (predicted, measured):
    print("      - series: '%s'\n        values: '0 0'" % k)
print("    alert_rule_test:\n      - eval_time: 1m\n        alertname: TopotuneCheckFailed")
print("        exp_alerts:\n          - exp_labels: {severity: critical, class: %s, expected_class: %s}"
      % (cls, sys.argv[3]))
import json, yaml  # the annotations as Prometheus renders them: no instance label
rule = [r for g in yaml.safe_load(open(sys.argv[2]))["groups"] for r in g["rules"]
        if r["alert"] == "TopotuneCheckFailed"][0]
print("            exp_annotations: {%s}" % ", ".join(
    "%s: %s" % (k, json.dumps(v.replace("{{ $labels.instance }}", "")))
    for k, v in rule["annotations"].items()))
PY
check "a failed measured check fires TopotuneCheckFailed, a sim check's not (promtool test rules)" \
    promtool test rules "$TEST_TMP/check-test.yml"
check "and one on the age of the last check" grep -q "alert: TopotuneCheckStale$" "$TEST_TMP/rules1.yml"

# The NHC check, called as NHC calls it: sourced, the nhc.conf line's words as arguments, die
# (NHC's: logs and ends the check) on a failure. The sim backend stands for the GPUs.
"$TOPOTUNE" expect --input "$h100" -b 32M -e 1G --format nhc >"$TEST_TMP/topotune.nhc"
check "shellcheck accepts the check" shellcheck -s bash "$TEST_TMP/topotune.nhc"
conf=$(sed -n 's/^#   \(\* || check_topotune_[a-z0-9_]* [0-9.]*\)$/\1/p' "$TEST_TMP/topotune.nhc")
check "it names its nhc.conf line: $conf" test -n "$conf"
# die as NHC's own: it logs, then hands the message to OFFLINE_NODE through eval, inside single
# quotes (mej/nhc's die), so a message holding one never marks the node offline.
nhc_run() { # nhc_run CHECK-LINE: as nhc's nhcmain_run_checks runs the part after ||
    bash -c '. "$1"; offline() { echo "OFFLINE $1: $2"; }
             die() { echo "ERROR: nhc: Health check failed: ${*:2}"; eval offline "'"'"'host1'"'"'" "'"'"'${*:2}'"'"'"; return "$1"; }
             set -f; eval "$2"' _ "${NHC_FILE:-$TEST_TMP/topotune.nhc}" "$1"
}
check_line=${conf#\* || }
echo '{"schema": "topotune/calibration/1", "params": {"nvls_scale": 0.3, "lat_scale": 10}}' >"$TEST_TMP/slow.json"
expect_exit 0 "the conf line passes a healthy node" -- nhc_run "$check_line $TOPOTUNE_BENCH --backend sim --topology $h100"
expect_exit 1 "and fails a slow one" -- nhc_run "$check_line $TOPOTUNE_BENCH --backend sim --topology $h100 --calibration $TEST_TMP/slow.json"
check "through die, naming the Avg bus bandwidth" grep -q "^ERROR: nhc: Health check failed: check_topotune_all_reduce_h100[a-z0-9_]*: all_reduce Avg bus bandwidth" "$TEST_TMP/out"
check "and the node marked offline with that message" grep -q "^OFFLINE host1: check_topotune_all_reduce_h100[a-z0-9_]*: all_reduce Avg bus bandwidth" "$TEST_TMP/out"
check "a threshold it says is predicted" grep -q "^OFFLINE host1: .*(the mean of the low edges of the predicted band)$" "$TEST_TMP/out"
# Wrong results (LL128 forced over PCIe corrupts data on the sim as on GPUs): said so; the reason
# was the output's last line, "#" of nccl-tests' footer.
NCCL_P2P_DISABLE=1 NCCL_PROTO=LL128 expect_exit 1 "a node returning wrong results" -- \
    nhc_run "$check_line $TOPOTUNE_BENCH --backend sim --topology $specs/rtx4090-8x-pcie.json"
check "marked offline for its wrong results" grep -q "^OFFLINE host1: check_topotune_[a-z0-9_]*: .*topotune-bench returned wrong results: [0-9]* values out of bounds" "$TEST_TMP/out"
# A bench whose path and last line hold a quote still marks the node offline (NHC's eval).
printf '#!/bin/sh\necho "it'"'"'s broken"\nexit 3\n' >"$TEST_TMP/it's-bench"
chmod +x "$TEST_TMP/it's-bench"
expect_exit 1 "a failing bench with quotes in its path and output" -- nhc_run "$check_line '$TEST_TMP/it'\\''s-bench'"
check "marked offline, the quotes dropped" grep -q "^OFFLINE host1: check_topotune_[a-z0-9_]*: .*/its-bench failed (exit 3): its broken" "$TEST_TMP/out"
# NHC runs its checks on busy nodes too: a node whose GPUs run a job passes unmeasured (the bench
# never starts) unless TOPOTUNE_NHC_BUSY=run; nvidia-smi here is a stand-in listing a job's pid.
mkdir -p "$TEST_TMP/busy-bin"
printf '#!/bin/sh\necho 4242\n' >"$TEST_TMP/busy-bin/nvidia-smi"
chmod +x "$TEST_TMP/busy-bin/nvidia-smi"
# shellcheck disable=SC2016 # the words run in the check's shell
expect_exit 0 "a busy node passes without a run" -- env PATH="$TEST_TMP/busy-bin:$PATH" \
    bash -c '. "$1"; die() { echo "DIE $*"; return 1; }; eval "$2"' _ "$TEST_TMP/topotune.nhc" "$check_line /bin/false"
# shellcheck disable=SC2016 # the words run in the check's shell
expect_exit 1 "TOPOTUNE_NHC_BUSY=run measures it anyway" -- env PATH="$TEST_TMP/busy-bin:$PATH" TOPOTUNE_NHC_BUSY=run \
    bash -c '. "$1"; die() { echo "DIE $*"; return 1; }; eval "$2"' _ "$TEST_TMP/topotune.nhc" "$check_line /bin/false"
# A site running its checks under set -e: a failing run still reaches die (out=$(...) ended the
# shell with no message before).
# shellcheck disable=SC2016 # the words run in the check's shell
expect_exit 1 "under set -e a failing run reaches die" -- \
    bash -c 'set -eu; . "$1"; die() { echo "DIE $*"; return 1; }; eval "$2"' _ "$TEST_TMP/topotune.nhc" "$check_line /bin/false"
check "with its message" grep -q "^DIE 1 check_topotune_[a-z0-9_]*: /bin/false failed (exit 1)" "$TEST_TMP/out"
# Two classes' checks load into one NHC shell: each keeps its own name, GPUs and sizes.
"$TOPOTUNE" expect --input "$specs/gb200-nvl72.json" --nodes 1 -b 1G -e 1G --format nhc >"$TEST_TMP/gb200.nhc"
# shellcheck disable=SC2016 # the words run in the check's shell
check "an H100 node's and a GB200 tray's checks side by side" bash -c '
. "$1"; . "$2"
[ "$(declare -F | grep -c "check_topotune_all_reduce_")" = 2 ]' _ "$TEST_TMP/topotune.nhc" "$TEST_TMP/gb200.nhc"
# Another collective (-C): its band is its group's, its JSON says which, its rules select its
# series, and its NHC check runs topotune-bench with -C (another program, as nccl-tests'
# all_gather_perf, as it is: here the sim's flags carry -C).
expect_exit 0 "-C all_gather, JSON" -- "$TOPOTUNE" expect -C all_gather --input "$h100" -b 1M -e 1G -f 4 --format json
cp "$TEST_TMP/out" "$TEST_TMP/ag.json"
check "all_gather, by the schema, 16-byte parts, the point-to-point band" python3 - "$TOPOTUNE_SRC" "$TEST_TMP/ag.json" <<'PY'
import json, subprocess, sys
src, f = sys.argv[1:]
subprocess.run([sys.executable, src + "/tests/cli/validate-schema.py",
                src + "/docs/schemas/expect.schema.json", f], check=True)
e = json.load(open(f))
assert e["collective"] == "all_gather" and len(e["sizes"]) == 6, e
for r in e["sizes"]:
    assert r["size"] % (16 * 8) == 0, r
    if r["size"] > 4 << 20:
        assert abs(r["low"] / r["busbw"] - 0.460) < 0.002 and abs(r["high"] / r["busbw"] - 1.929) < 0.002, r
PY
"$TOPOTUNE" expect -C reduce_scatter --input "$h100" --class "$node_class" -b 32M -e 1G --format prometheus-rules >"$TEST_TMP/rs-rules.yml"
check "-C reduce_scatter: promtool accepts the rules" promtool check rules "$TEST_TMP/rs-rules.yml"
check "their group is reduce_scatter's own (rule files of two collectives join)" grep -q '^  - name: "topotune-expect-.*-1n-reduce_scatter"$' "$TEST_TMP/rs-rules.yml"
check "they select reduce_scatter's series, never all_reduce's" sh -c "grep -q 'collective=\\\\\"reduce_scatter' '$TEST_TMP/rs-rules.yml' &&
    ! grep -q all_reduce '$TEST_TMP/rs-rules.yml'"
"$TOPOTUNE" expect -C all_gather --input "$h100" -b 32M -e 1G --format nhc >"$TEST_TMP/ag.nhc"
check "-C all_gather: shellcheck accepts its NHC check" shellcheck -s bash "$TEST_TMP/ag.nhc"
check "its default bench runs with -C all_gather" grep -q 'local -a coll=(-C all_gather)' "$TEST_TMP/ag.nhc"
ag_line=$(sed -n 's/^#   \* || \(check_topotune_[a-z0-9_]* [0-9.]*\)$/\1/p' "$TEST_TMP/ag.nhc")
export NHC_FILE=$TEST_TMP/ag.nhc
# topotune-bench given by its path keeps -C all_gather (another program would not)
expect_exit 0 "all_gather's conf line passes a healthy node" -- nhc_run "$ag_line $TOPOTUNE_BENCH --backend sim --topology $h100"
# a node whose NVLinks carry nothing (P2P off: host memory), far below the band's low edge (the
# point-to-point group's above 4 MiB is half the prediction: a node at 0.6 of it passes)
export NCCL_P2P_DISABLE=1
expect_exit 1 "and fails a slow one" -- nhc_run "$ag_line $TOPOTUNE_BENCH --backend sim --topology $h100"
unset NCCL_P2P_DISABLE
check "naming all_gather" grep -q "^ERROR: nhc: Health check failed: check_topotune_all_gather_h100[a-z0-9_]*: all_gather Avg bus bandwidth" "$TEST_TMP/out"
# Flags the conf line adds come before the check's own -g -b -e -f, which win (nccl-tests keeps
# the last): NCCL_TESTS_MIN_BW is the mean of the band over the check's sizes only.
printf '#!/bin/sh\nprintf "%%s\\n" "$*" >"%s/bench-args"\necho "# Avg bus bandwidth    : 999"\n' "$TEST_TMP" >"$TEST_TMP/argbench.sh"
chmod +x "$TEST_TMP/argbench.sh"
expect_exit 0 "a conf line with -b 8 -e 8" -- nhc_run "$ag_line $TEST_TMP/argbench.sh -b 8 -e 8"
check "its -b 8 -e 8 come first, the check's range last ($(cat "$TEST_TMP/bench-args"))" \
    grep -q -- '^-b 8 -e 8 -g 8 -b 33554432 -e 1073741824 -f 2 ' "$TEST_TMP/bench-args"
unset NHC_FILE
expect_exit 2 "-C another collective with --profile" -- "$TOPOTUNE" expect -C all_gather --profile "$TEST_TMP/p"
expect_exit 2 "-C no collective" -- "$TOPOTUNE" expect -C allreduce2 --input "$h100"
expect_stderr_has "not a collective" "says why"
expect_exit 2 "--format nhc for 2 nodes is refused" -- "$TOPOTUNE" expect --input "$specs/hgx-h100-2nodes.json" --format nhc
# The run must give its Avg bus bandwidth: a program that measures nothing and exits 0 fails.
expect_exit 1 "a bench that exits 0 without measuring fails the check" -- nhc_run "$check_line /bin/true"
check "through die: nothing was measured" grep -q "check_topotune_[a-z0-9_]*: /bin/true exited 0 without an Avg bus bandwidth" "$TEST_TMP/out"
# shellcheck disable=SC2016 # the words of the written function
check "the run has its own deadline, in NHC's process group (its watchdog kills it)" grep -q 'timeout --foreground -k 5 300 "$bench"' "$TEST_TMP/topotune.nhc"
# GB200 NVL72: nodes are trays of 4 GPUs, though NCCL merges the rack's 18 into one node.
expect_exit 2 "the rack's expectation (18 trays) makes no NHC check" -- "$TOPOTUNE" expect --input "$specs/gb200-nvl72.json" --format nhc
expect_exit 0 "one tray's does" -- "$TOPOTUNE" expect --input "$specs/gb200-nvl72.json" --nodes 1 -b 1G -e 1G --format nhc
# shellcheck disable=SC2016 # the words of the written function
check "on its 4 GPUs, its flags after the caller's" grep -qF '"$bench" ${coll[@]+"${coll[@]}"} "$@" -g 4 -b 1073741824 -e 1073741824' "$TEST_TMP/out"
"$TOPOTUNE" expect --input "$specs/gb200-nvl72.json" --format json >"$TEST_TMP/nvl.json"
check "the rack's JSON: 18 nodes of 4 GPUs, 72 ranks" python3 -c 'import json, sys
e = json.load(open(sys.argv[1])); assert (e["nodes"], e["gpus_per_node"], e["ranks"]) == (18, 4, 72), e' "$TEST_TMP/nvl.json"
"$TOPOTUNE" expect --input "$specs/gb200-nvl72.json" --nodes 48 --format json >"$TEST_TMP/nvl48.json"
check "48 trays: 48 nodes, not whole racks' 54" python3 -c 'import json, sys
e = json.load(open(sys.argv[1])); assert (e["nodes"], e["gpus_per_node"], e["ranks"]) == (48, 4, 192), e' "$TEST_TMP/nvl48.json"
"$TOPOTUNE" expect --input "$h100" -b 32M -e 1G -f 4 --format json >"$TEST_TMP/flags.json"
check "the JSON says the nccl-tests run its NCCL_TESTS_MIN_BW holds for" python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))
assert e["nccl_tests_flags"] == {"minbytes": 33554432, "maxbytes": 1073741824, "stepfactor": 4}, e["nccl_tests_flags"]' "$TEST_TMP/flags.json"
check "a small NCCL_TESTS_MIN_BW keeps its digits (0.01204, not 0.01)" test "$("$TOPOTUNE" expect --input "$h100" -b 256 -e 512 --format nccl-tests-min-bw)" = "NCCL_TESTS_MIN_BW=0.01204"
# One GPU: busbw is 0, so no check made of it could fail.
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d["count"] = 1; json.dump(d, open(sys.argv[2], "w"))' "$h100" "$TEST_TMP/one.json"
for f in nhc prometheus-rules nccl-tests-min-bw; do
    expect_exit 2 "one GPU: --format $f is refused" -- "$TOPOTUNE" expect --input "$TEST_TMP/one.json" -b 1G -e 1G --format "$f"
done
# ... and the table gives no figure either (it printed NCCL_TESTS_MIN_BW=0, a check that never fails)
expect_exit 0 "one GPU: the table" -- "$TOPOTUNE" expect --input "$TEST_TMP/one.json" -b 1G -e 1G
check "one GPU: the table says why it has no NCCL_TESTS_MIN_BW" grep -q "^# no NCCL_TESTS_MIN_BW: at one rank" "$TEST_TMP/out"
check "one GPU: and gives none" test "$(grep -c "NCCL_TESTS_MIN_BW=" "$TEST_TMP/out")" = 0
# Prometheus: a sweep's config="defaults" series (NCCL's defaults, measured for comparison) alerts
# nothing; a node's measured series below the band does (promtool test rules on the rule's expr).
check "the alert selects measured series, not the sweep's defaults" python3 - "$TEST_TMP/rules.yml" "$TEST_TMP" <<'PY'
import json, subprocess, sys, yaml
rules, tmp = sys.argv[1:]
expr = yaml.safe_load(open(rules))["groups"][0]["rules"][0]["expr"]
sel = expr[expr.index("{") + 1:expr.index("}")]
lab = dict(kv.split("=", 1) for kv in sel.replace("config!=", "config!").split(",") if "!" not in kv)
base = ",".join('%s=%s' % (k, v) for k, v in lab.items())
test = {"rule_files": [], "evaluation_interval": "1m", "tests": [{"interval": "1m",
    "input_series": [{"series": "topotune_busbw_bytes_per_second{%s,config=\"defaults\"}" % base, "values": "1 1"},
                     {"series": "topotune_busbw_bytes_per_second{%s,host=\"bad\"}" % base, "values": "1 1"}],
    "promql_expr_test": [{"expr": expr, "eval_time": "1m",
                          "exp_samples": [{"labels": "topotune_busbw_bytes_per_second{%s,host=\"bad\"}" % base,
                                           "value": 1}]}]}]}
open(tmp + "/rules-test.yml", "w").write(json.dumps(test))
subprocess.run(["promtool", "test", "rules", tmp + "/rules-test.yml"], check=True)
PY
# A survey's series are scraped from the host that ran it and carry the node measured in host:
# the alert names that node (it named the scraped host, the login node).
check "the alert names the survey's node, not the scraped host" python3 - "$TEST_TMP/rules.yml" "$TEST_TMP" <<'PY'
import json, subprocess, sys, yaml
rules, tmp = sys.argv[1:]
rule = yaml.safe_load(open(rules))["groups"][0]["rules"][0]
expr = rule["expr"]
lab = dict(kv.split("=", 1) for kv in expr[expr.index("{") + 1:expr.index("}")].split(",") if "!" not in kv)
labels = {k: v.strip('"') for k, v in lab.items()}
labels.update(host="node0002", instance="login1:9100", config="best")
series = "topotune_busbw_bytes_per_second{%s}" % ",".join('%s="%s"' % kv for kv in labels.items())
tail = rule["annotations"]["description"].split(" measured {{ $value | humanize }}B/s; ", 1)[1]
test = {"rule_files": [rules], "evaluation_interval": "1m", "tests": [{"interval": "1m",
    "input_series": [{"series": series, "values": "1 1"}],
    "alert_rule_test": [{"eval_time": "1m", "alertname": rule["alert"], "exp_alerts": [{
        "exp_labels": dict(labels, **rule["labels"]),
        "exp_annotations": dict(rule["annotations"], description="node0002 measured 1B/s; " + tail)}]}]}]}
open(tmp + "/host-test.yml", "w").write(json.dumps(test))
subprocess.run(["promtool", "test", "rules", tmp + "/host-test.yml"], check=True)
PY

# A profile's measured expectation.
mkdir -p "$TEST_TMP/p"
cat >"$TEST_TMP/p/profile.json" <<'EOF'
{"schema": "topotune/profile/1", "class": "c1-0123abcd", "predicted": false,
 "sweep": {"nodes": 1, "ranks": 8},
 "winner": null,
 "baseline": {"cv": 0.01, "per_size": [{"size": 1048576, "busbw": 40.0, "algo": "RING", "proto": "LL"},
                                       {"size": 33554432, "busbw": 300.0}]}}
EOF
expect_exit 0 "a profile's runs" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p" -b 1M -e 32M --format json
check "measured, band +-5%, its sizes" python3 - "$TEST_TMP/out" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
assert not e["predicted"] and e["class"] == "c1-0123abcd" and e["ranks"] == 8, e
(a, b) = e["sizes"]
assert (a["size"], a["busbw"], round(a["low"], 6), round(a["high"], 6)) == (1048576, 40.0, 38.0, 42.0), a
assert b["algo"] is None and abs(b["low"] - 285.0) < 1e-9, b
PY
check "its JSON valid by the expect schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/expect.schema.json" "$TEST_TMP/out"
# Sizes no one nccl-tests run measures (1, 3 and 4 MiB): the table gives no figure for their mean,
# as --format nccl-tests-min-bw gives none (it printed one "at exactly these sizes").
mkdir -p "$TEST_TMP/p3"
python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
p["baseline"]["per_size"] = [{"size": s << 20, "busbw": 40.0} for s in (1, 3, 4)]
json.dump(p, open(sys.argv[2], "w"))' "$TEST_TMP/p/profile.json" "$TEST_TMP/p3/profile.json"
expect_exit 2 "1, 3 and 4 MiB: --format nccl-tests-min-bw refused" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p3" --format nccl-tests-min-bw
expect_exit 0 "1, 3 and 4 MiB: the table" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p3"
check "1, 3 and 4 MiB: no figure, and why" grep -q "^# no NCCL_TESTS_MIN_BW: these sizes are not one size times the powers" "$TEST_TMP/out"
# A profile written before gen recorded sweep.nodes: read as one node, 16 ranks of two 8-GPU
# nodes made an NHC check of -g 16 and rules of nodes="1". Its hardware says 8 GPUs a node.
python3 - "$TEST_TMP/p/profile.json" "$TEST_TMP/pold.json" "$TEST_TMP/pold2.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["sweep"] = {"ranks": 16}
p["hardware"] = {"gpus": 8}
json.dump(p, open(sys.argv[2], "w"))
del p["hardware"]
json.dump(p, open(sys.argv[3], "w"))
PY
expect_exit 0 "an old profile's nodes from its hardware" -- "$TOPOTUNE" expect --profile "$TEST_TMP/pold.json" -b 1M -e 32M --format json
check "2 nodes of 8" python3 -c 'import json, sys; e = json.load(open(sys.argv[1])); assert (e["nodes"], e["gpus_per_node"]) == (2, 8), e' "$TEST_TMP/out"
# a GB200 rack's: its tuner rows count NCCL's nodes (the NVLink domain is one), its hardware the
# trays of 4 GPUs: 18 machines, not one of 72 GPUs
python3 - "$TEST_TMP/pold.json" "$TEST_TMP/pnvl.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["sweep"], p["hardware"], p["tuner"] = {"ranks": 72}, {"gpus": 4}, [{"nodes": 1}]
json.dump(p, open(sys.argv[2], "w"))
PY
expect_exit 0 "an old rack profile" -- "$TOPOTUNE" expect --profile "$TEST_TMP/pnvl.json" -b 1M -e 32M --format json
check "18 trays of 4" python3 -c 'import json, sys; e = json.load(open(sys.argv[1])); assert (e["nodes"], e["gpus_per_node"]) == (18, 4), e' "$TEST_TMP/out"
expect_exit 2 "an old profile that says nothing of its nodes" -- "$TOPOTUNE" expect --profile "$TEST_TMP/pold2.json" -b 1M -e 32M
expect_stderr_has "sweep.nodes is missing" "the refusal names the field"
# A profile of a sim sweep is a prediction: the model's band, not the +-5% of its runs' noise
# (which alarmed on healthy nodes from 5% below a predicted number).
sed 's/"predicted": false/"predicted": true/' "$TEST_TMP/p/profile.json" >"$TEST_TMP/psim.json"
expect_exit 0 "a sim profile's runs" -- "$TOPOTUNE" expect --profile "$TEST_TMP/psim.json" -b 1M -e 32M --format json
check "predicted, with the model's band and rate" python3 - "$TEST_TMP/out" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
a = e["sizes"][0]
assert e["predicted"] and e["rate"] == 0.9 and "Bands" in e["basis"], e
assert a["low"] < 0.6 * a["busbw"] and a["high"] > 1.5 * a["busbw"], a
PY
# The class is a node class id as the schema has it, or the profile is refused.
for cls in c1 H100.X Zz_9 c1-0123ABCD -0123abcd; do
    sed "s/\"c1-0123abcd\"/\"$cls\"/" "$TEST_TMP/p/profile.json" >"$TEST_TMP/badclass.json"
    expect_exit 2 "class \"$cls\" refused" -- "$TOPOTUNE" expect --profile "$TEST_TMP/badclass.json" -b 1M -e 32M
done
expect_stderr_has "not a class id" "said what"
mkdir -p "$TEST_TMP/dir.json" && cp "$TEST_TMP/p/profile.json" "$TEST_TMP/dir.json/"
expect_exit 0 "a profile directory is one whatever its name (gen's reader, as verify's)" -- \
    "$TOPOTUNE" expect --profile "$TEST_TMP/dir.json" -b 1M -e 32M
mkfifo "$TEST_TMP/fifo.json"
expect_exit 2 "a FIFO for a profile is refused, not waited on" -- \
    timeout 20 "$TOPOTUNE" expect --profile "$TEST_TMP/fifo.json"
expect_exit 0 "its table says measured" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p/profile.json" -b 1M -e 32M
# shellcheck disable=SC2016 # awk's own variables
check "every row measured" awk '/^ / && $1 != "measured" { exit 1 }' "$TEST_TMP/out"

# A profile's sizes in any order make one run from the smallest; sizes no run makes, or a damaged
# profile, are refused.
mkdir -p "$TEST_TMP/p2"
prof2() { # prof2 PER_SIZE [EXTRA]: a profile of 8 ranks on one node
    printf '{"schema": "topotune/profile/1", "class": "c1-0123abcd", "predicted": false, %s
 "sweep": {"nodes": 1, "ranks": 8}, "winner": null, "baseline": {"cv": 0.01, "per_size": [%s]}}\n' \
        "${2:-}" "$1" >"$TEST_TMP/p2/profile.json"
}
row() { printf '{"size": %s, "busbw": %s}' "$1" "$2"; }
prof2 "$(row 33554432 300), $(row 1048576 40)"
expect_exit 0 "sizes listed large first" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p2" -b 1M -e 32M --format nhc
# shellcheck disable=SC2016 # the words of the written function
check "run from the smallest" grep -qF '"$bench" ${coll[@]+"${coll[@]}"} "$@" -g 8 -b 1048576 -e 33554432 -f 32 ' "$TEST_TMP/out"
prof2 "$(row 1048576 40), $(row 2097152 60), $(row 8388608 90)"
expect_exit 2 "sizes no one run measures (1M, 2M, 8M)" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p2" -b 1M -e 8M --format nhc
# NCCL_TESTS_MIN_BW judges the mean over one run's sizes: a figure from sizes no run makes would
# fail a healthy run (its mean over 1M..8M by 2 holds 4M, which the profile has not).
expect_exit 2 "NCCL_TESTS_MIN_BW for sizes no one run measures" -- "$TOPOTUNE" expect --profile \
    "$TEST_TMP/p2" -b 1M -e 8M --format nccl-tests-min-bw
expect_stderr_has "as one nccl-tests run measures" "said why"
check "nothing printed" test ! -s "$TEST_TMP/out"
prof2 "$(row 1048576 40), $(row 1048576 41)"
expect_exit 2 "a size twice" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p2" -b 1M -e 8M
prof2 "$(row 1048576 1e300)"
expect_exit 2 "a busbw of 1e300 GB/s" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p2" -b 1M -e 8M
prof2 "$(row 1048576 1e-300)"
expect_exit 2 "a busbw of 1e-300 GB/s (it printed a time of 300 digits)" -- "$TOPOTUNE" expect \
    --profile "$TEST_TMP/p2" -b 1M -e 8M
expect_stderr_has "busbw from 1e-6 to 1e9 GB/s" "the range said"
prof2 "$(row 1048576 40)" '"predicted": "yes",'
expect_exit 2 "predicted neither true nor false" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p2" -b 1M -e 8M
sed 's/"cv": 0.01/"cv": -5/' "$TEST_TMP/p/profile.json" >"$TEST_TMP/p2/profile.json"
expect_exit 2 "a negative cv" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p2" -b 1M -e 32M
sed 's|topotune/profile/1|topotune/survey/1|' "$TEST_TMP/p/profile.json" >"$TEST_TMP/p2/profile.json"
expect_exit 2 "another document's schema" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p2" -b 1M -e 32M
sed 's/"ranks": 8/"ranks": 8, "nodes": 3/; s/"nodes": 1, //' "$TEST_TMP/p/profile.json" >"$TEST_TMP/p2/profile.json"
expect_exit 2 "8 ranks on 3 nodes" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p2" -b 1M -e 32M

# Refusals: bad input is status 2 and says what and where; a predicted hang is no band (1).
expect_exit 2 "--input and --profile together" -- "$TOPOTUNE" expect --input "$h100" --profile "$TEST_TMP/p"
echo '{"schema": "topotune/profile/1", "class": "../x"}' >"$TEST_TMP/bad.json"
expect_exit 2 "a profile with a bad class" -- "$TOPOTUNE" expect --profile "$TEST_TMP/bad.json"
expect_stderr_has "bad.json" "the refusal names the file"
expect_exit 2 "-f 1" -- "$TOPOTUNE" expect --input "$h100" -f 1
expect_exit 1 "the stock-driver RTX 4090 box, predicted to hang" -- "$TOPOTUNE" expect --input "$specs/rtx4090-8x-pcie.json"
expect_stderr_has "hang" "it says why"
# An NCCL topology dump without its <gpu> elements names no GPU model: the model would price the
# 8 A100s of an NDv4 as PCIe Volta cards, a band 20x too low for a validator to trust.
# An hwloc export records no NIC speed: across nodes the model would price its IB HCA at 10 Gb/s,
# no band to judge by; on one node the network plays no part.
pascal=$TOPOTUNE_FIXTURES/hwloc-llnl-pascal-2xP100pcie-mlx5.xml
expect_exit 2 "NICs of no known speed, 2 nodes: no band" -- "$TOPOTUNE" expect --input "$pascal" --nodes 2 -b 1M -e 1M
expect_stderr_has "1 of its NICs have no speed the source states" "it says why and how to fix"
expect_exit 0 "the same node alone" -- "$TOPOTUNE" expect --input "$pascal" -b 1M -e 1M
expect_exit 0 "predict across 2 nodes warns" -- "$TOPOTUNE" predict --input "$pascal" --nodes 2 -b 1M -e 1M
expect_stderr_has "priced at 10 Gb/s across nodes" "the warning"
# The same node without its IB HCA: the network is its Ethernet ports, of no stated speed either.
python3 - "$pascal" "$TEST_TMP/pascal-eth.xml" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
for name in ("mlx5_0", "hsi0"):
    s = re.sub(r'<object type="OSDev"[^>]*name="%s"[^>]*>.*?</object>\n?' % name, "", s, flags=re.S)
open(sys.argv[2], "w").write(s)
PY
expect_exit 0 "and over sockets" -- "$TOPOTUNE" predict --input "$TEST_TMP/pascal-eth.xml" --nodes 2 -b 1M -e 1M
expect_stderr_has "2 of its NICs have no speed the source states" "the warning for the sockets' NICs"
# A file name of bytes that are not UTF-8 is the JSON's source with U+FFFD, not a failed write.
odd=$TEST_TMP/$(printf 'h\377.json')
cp "$h100" "$odd"
expect_exit 0 "an input named in no UTF-8" -- "$TOPOTUNE" expect --input "$odd" -b 1M -e 1M --format json
check "its source with U+FFFD" python3 -c 'import json, sys
assert json.load(open(sys.argv[1], encoding="utf-8"))["source"].endswith("h\ufffd.json")' "$TEST_TMP/out"
expect_exit 2 "GPUs of no known model: no band" -- "$TOPOTUNE" expect --input "$TOPOTUNE_FIXTURES/nccl-topo-azure-ndv4.xml"
expect_stderr_has "8 of its 8 GPUs have no model the catalog knows" "it says why and how to fix"
# --env: the expectation of a configuration. A node of stock RTX 4090s hangs at NCCL's defaults
# (exit 1), and its fix, NCCL_P2P_DISABLE=1, could not be given to expect.
expect_exit 1 "RTX 4090s at NCCL's defaults: no bandwidth" -- "$TOPOTUNE" expect --input "$specs/rtx4090-8x-pcie.json"
# an input path of 800 bytes was cut at 511 in the JSON's source (a file that is not there)
long=$TEST_TMP/$(printf 'd%.0s' $(seq 200))/$(printf 'e%.0s' $(seq 200))/$(printf 'f%.0s' $(seq 200))/$(printf 'g%.0s' $(seq 200))
mkdir -p "$long" && cp "$h100" "$long/h100.json"
expect_exit 0 "an input of a long path" -- "$TOPOTUNE" expect --input "$long/h100.json" -b 1M -e 1M --format json
check "its source whole" python3 -c 'import json, sys
assert json.load(open(sys.argv[1]))["source"] == sys.argv[2]' "$TEST_TMP/out" "$long/h100.json"
# a fault at a size, or of another collective than all_reduce, is the same verdict (it was exit 2)
echo '{"schema": "topotune/spec/1", "gpu": "H100-PCIE-80GB", "count": 4}' >"$TEST_TMP/pcie4.json"
expect_exit 1 "LL128 over PCIe: wrong results" -- "$TOPOTUNE" expect --input "$TEST_TMP/pcie4.json" --env NCCL_PROTO=LL128 -b 1M -e 1M
expect_exit 1 "broadcast under NCCL_ALGO=Tree: no algorithm" -- "$TOPOTUNE" expect --input "$TEST_TMP/pcie4.json" \
    -C broadcast --env NCCL_ALGO=Tree -b 1M -e 1M
expect_exit 0 "with NCCL_P2P_DISABLE=1" -- "$TOPOTUNE" expect --input "$specs/rtx4090-8x-pcie.json" \
    -b 32M -e 1G --env NCCL_P2P_DISABLE=1 --format json
check "the JSON says the configuration, by the schema" python3 - "$TEST_TMP/out" "$TOPOTUNE_SRC" <<'PY'
import json, subprocess, sys
e = json.load(open(sys.argv[1]))
assert e["env"] == {"NCCL_P2P_DISABLE": "1"} and "with NCCL_P2P_DISABLE=1" in e["basis"], e
subprocess.run([sys.executable, sys.argv[2] + "/tests/cli/validate-schema.py",
                sys.argv[2] + "/docs/schemas/expect.schema.json", sys.argv[1]], check=True)
PY
"$TOPOTUNE" expect --input "$specs/rtx4090-8x-pcie.json" -b 32M -e 1G --env NCCL_P2P_DISABLE=1 --format nhc >"$TEST_TMP/rtx.nhc"
check "the NHC check runs the bench with it" grep -q "out=\$(NCCL_P2P_DISABLE='1' NCCL_TESTS_MIN_BW=" "$TEST_TMP/rtx.nhc"
check "shellcheck accepts it" shellcheck -s bash "$TEST_TMP/rtx.nhc"
rtx_line=$(sed -n 's/^#   \* || \(check_topotune_[a-z0-9_]* [0-9.]*\)$/\1/p' "$TEST_TMP/rtx.nhc")
export NHC_FILE=$TEST_TMP/rtx.nhc
expect_exit 0 "its check passes the sim node (which hangs without the variable)" -- \
    nhc_run "$rtx_line $TOPOTUNE_BENCH --backend sim --topology $specs/rtx4090-8x-pcie.json"
unset NHC_FILE
expect_exit 2 "a variable a flag may not set" -- "$TOPOTUNE" expect --input "$h100" --env LD_PRELOAD=x.so
expect_exit 2 "--env with --profile" -- "$TOPOTUNE" expect --profile "$TEST_TMP/p" --env NCCL_ALGO=Ring

finish
