#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Prometheus metrics (node_exporter's textfile collector) from topotune-bench, survey and sweep:
# promtool check metrics accepts every file; the labels say measured or predicted; a link planted
# at the file's name is refused, never followed nor replaced; and the rules `topotune expect`
# writes, given the series a bench run exports, alert at exactly the sizes below the band
# (promtool test rules).
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
command -v promtool >/dev/null || { echo "skipped: promtool not installed (Debian's prometheus)"; finish; exit 0; }
h100=$TOPOTUNE_SRC/profiles/specs/hgx-h100.json
slow=(NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=2)
series() { grep -c "^$1[{ ]" "$2"; }

# 1. The sim: every number predicted, the spec's class.
expect_exit 0 "sim bench with --metrics" -- "$TOPOTUNE_BENCH" --backend sim --topology "$h100" \
    -b 1M -e 8M -f 2 --metrics sim.prom
check "promtool check metrics: sim.prom" promtool check metrics <sim.prom
check "4 sizes, source predicted, the spec's class" test "$(grep -c '^topotune_busbw_bytes_per_second{collective="all_reduce",class="h100-[^"]*",nodes="1",size="[0-9]*",source="predicted",backend="sim"} [0-9.e+]*$' sim.prom)" = 4

# 2. Real MPI ranks: measured; NCCL_TESTS_MIN_BW's failure is in the file too.
expect_exit 0 "mpi bench with --metrics" -- mpirun_np 2 "$TOPOTUNE_BENCH" --backend mpi -b 64K -e 256K \
    -f 2 -n 2 -w 1 --metrics mpi.prom
check "promtool check metrics: mpi.prom" promtool check metrics <mpi.prom
check "3 sizes measured, of the mpi backend" test "$(grep -c '^topotune_busbw_bytes_per_second{.*source="measured",backend="mpi"}' mpi.prom)" = 3
check "exit code 0 recorded" grep -q '^topotune_bench_exit_code{.*} 0$' mpi.prom
echo untouched >target
ln -s "$TEST_TMP/target" link.prom
expect_exit 7 "a link planted at the metrics' name" -- mpirun_np 2 \
    NCCL_TESTS_MIN_BW=1000000 "$TOPOTUNE_BENCH" --backend mpi -b 64K -e 64K -n 2 -w 1 --metrics link.prom
expect_stderr_has "cannot write 'link.prom': it is a symbolic link" "is refused, and said"
kept() { test -L "$1" && test "$(cat "$2")" = untouched; }
check "the link and its target untouched" kept link.prom target
expect_exit 7 "below NCCL_TESTS_MIN_BW: exit 7, the metrics still written" -- mpirun_np 2 \
    NCCL_TESTS_MIN_BW=1000000 "$TOPOTUNE_BENCH" --backend mpi -b 64K -e 64K -n 2 -w 1 --metrics mpi.prom
check "promtool check metrics: the failed run" promtool check metrics <mpi.prom
check "exit code 7 and the minimum recorded" sh -c "grep -q '^topotune_bench_exit_code{.*} 7$' mpi.prom &&
    grep -q '^topotune_bench_min_busbw_bytes_per_second{.*} 1e+15$' mpi.prom"
expect_exit 6 "--metrics with --split refused" -- "$TOPOTUNE_BENCH" --backend mpi --split node --metrics x.prom
check "no file left by the refusal" test ! -e x.prom

# 3. A survey: each node alone, its verdict and health, the class's band.
printf '{"schema": "topotune/sim-cluster/1", "nodes": [{"spec": "hgx-h100.json", "count": 4}], "faults": [{"kind": "slow-node", "hosts": ["node0002"], "factor": 0.3}]}\n' >c.json
expect_exit 1 "survey with --metrics" -- "$TOPOTUNE" survey --backend sim --cluster c.json --out s --metrics survey.prom
check "promtool check metrics: survey.prom" promtool check metrics <survey.prom
check "4 nodes alone, predicted, with their hosts" test "$(grep -c '^topotune_busbw_bytes_per_second{.*nodes="1",size="33554432",source="predicted",backend="sim",host="node000[1-4]"}' survey.prom)" = 4
check "node0002's verdict and health" sh -c "grep -q '^topotune_survey_verdict{host=\"node0002\",kind=\"node-slow\"} 1$' survey.prom &&
    grep -q '^topotune_survey_node_healthy{host=\"node0002\",.*} 0$' survey.prom"
check "the class's band: expected, low, high" test "$(series topotune_expected_busbw_bytes_per_second survey.prom)" = 3

# 4. A sweep: its runs by outcome, the defaults' busbw per size (predicted here), and the
# choice's where one beat them (none here: NCCL's defaults are best).
expect_exit 0 "sim sweep with --metrics" -- "$TOPOTUNE" sweep --backend sim --topology "$h100" \
    --space "$TOPOTUNE_SRC/profiles/spaces/nccl-quick.json" --repeat 1 --out sw --metrics sweep.prom
check "promtool check metrics: sweep.prom" promtool check metrics <sweep.prom
check "18 runs ok; the defaults per size, predicted; no choice" python3 - sweep.prom <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert re.search(r'^topotune_sweep_runs\{class="h100-[^"]*",outcome="ok"\} 18$', text, re.M), text
sizes = re.findall(r'^topotune_busbw_bytes_per_second\{.*size="(\d+)",source="predicted",backend="sim",config="defaults"\}', text, re.M)
assert len(sizes) >= 10 and 'config="chosen"' not in text, sizes
PY

# 5. One HELP per family, whoever writes it (node_exporter's textfile collector refuses a family
# whose files disagree), and a source on every busbw and band; --metrics - where stdout is taken.
"$TOPOTUNE" check --backend sim --input "$h100" --no-doctor --metrics check.prom >/dev/null 2>&1
check "the same HELP for a family in every file" python3 - sim.prom mpi.prom survey.prom sweep.prom check.prom <<'PY'
import re, sys
helps = {}
for path in sys.argv[1:]:
    text = open(path).read()
    for name, help in re.findall(r"^# HELP (\S+) (.*)$", text, re.M):
        helps.setdefault(name, set()).add(help)
    for line in re.findall(r"^topotune_(?:expected_)?busbw_bytes_per_second\{.*$", text, re.M):
        assert 'source="' in line, (path, line)
assert all(len(h) == 1 for h in helps.values()), {n: h for n, h in helps.items() if len(h) > 1}
assert "topotune_busbw_bytes_per_second" in helps and "topotune_expected_busbw_bytes_per_second" in helps, helps
PY
# A node's textfile folder holds topotune-bench's file and topotune check's, of one run shape:
# node_exporter refuses a series two files give (client_golang: "collected before with the same
# name and label values"), so the check's busbw says its program.
"$TOPOTUNE_BENCH" --backend sim --topology "$h100" -b 64M -e 512M -f 2 --metrics both-bench.prom >/dev/null
check "bench's and check's files give no series twice" python3 - both-bench.prom check.prom <<'PY'
import re, sys
seen = {}
for path in sys.argv[1:]:
    for line in open(path):
        if not line.startswith("#") and line.strip():
            key = line.rsplit(" ", 1)[0]
            assert key not in seen, (key, seen.get(key), path)
            seen[key] = path
assert any(k.startswith("topotune_busbw") and "both-bench" in p for k, p in seen.items())
assert any(k.startswith("topotune_busbw") and "check" in p for k, p in seen.items())
PY
expect_exit 6 "bench --metrics - (stdout holds the table)" -- "$TOPOTUNE_BENCH" --backend sim --topology "$h100" --metrics -
expect_exit 2 "survey --metrics - with --drain" -- "$TOPOTUNE" survey --backend sim --cluster c.json --out s2 \
    --metrics - --drain
# a --metrics FILE the survey could not write is said before it runs, nothing surveyed (it was
# refused, exit 3, once every launch had run); one in the --out the survey makes is written
mkdir metrics-dir
ln -s /etc/passwd metrics-link
for m in metrics-link metrics-dir; do
    expect_exit 2 "survey --metrics $m refused" -- "$TOPOTUNE" survey --backend sim --cluster c.json \
        --out "s-$m" --metrics "$m"
    expect_stderr_has "cannot write '$m'" "$m: named"
    check "$m: nothing surveyed" test ! -e "s-$m"
done
expect_exit 1 "survey --metrics into its own new --out" -- "$TOPOTUNE" survey --backend sim \
    --cluster c.json --out s-new --metrics s-new/survey.prom
check "written there" test -s s-new/survey.prom

# 6. The rules over the series the bench exports. A sim run stands for a GPU node's: its source
# label is set to measured and its backend to nccl (a predicted series never alerts, checked too,
# nor one of host MPI, backend mpi: a diagnostic run on the node paged as its GPUs), under two
# instances, healthy and slow; promtool evaluates the rules and lists what fires. The sim run's
# class is the spec's, so the rules select it (--class: a spec's class is no live node's).
cls=$("$TOPOTUNE" topo --input "$h100" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
"$TOPOTUNE" expect --input "$h100" --class "$cls" -b 1M -e 8M -f 2 --format prometheus-rules >rules.yml
env "${slow[@]}" "$TOPOTUNE_BENCH" --backend sim --topology "$h100" -b 1M -e 8M -f 2 --metrics slow.prom >/dev/null
check "rules over the bench's series: alerts exactly where a measured value is below the band" python3 - <<'PY'
import re, subprocess, yaml
rules = yaml.safe_load(open("rules.yml"))["groups"][0]["rules"]
low = {r["labels"]["size"]: float(r["expr"].rsplit("<", 1)[1]) for r in rules
       if r["alert"] == "TopotuneBusbwBelowExpected"}  # the others judge each run, not a size
def read(path):
    out = []
    for line in open(path):
        if line.startswith("topotune_busbw_bytes_per_second{"):
            name, value = line.rsplit(" ", 1)
            out.append((name, float(value)))
    return out
series, want = [], []
for inst, path in (("healthy", "sim.prom"), ("slow", "slow.prom")):
    for name, value in read(path):
        size = re.search(r'size="(\d+)"', name).group(1)
        for source, backend in (("measured", "nccl"), ("predicted", "sim"), ("measured", "mpi")):
            s = name.replace('source="predicted",backend="sim"', 'source="%s",backend="%s",instance="%s-%s"'
                             % (source, backend, inst, backend))
            series.append({"series": s, "values": "%r+0x3" % value})
            if backend == "nccl" and value < low[size]:
                want.append((inst + "-nccl", size))
assert ("slow-nccl", "8388608") in want and not [w for w in want if w[0].startswith("healthy")], want
test = {"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": [{
    "interval": "1m", "input_series": series,
    "promql_expr_test": [{"expr": 'count by (instance, size, source) (ALERTS{alertname="TopotuneBusbwBelowExpected",alertstate="firing"})',
                          "eval_time": "2m",
                          "exp_samples": [{"labels": '{instance="%s",size="%s",source="measured"}' % w, "value": 1}
                                          for w in sorted(want)]}]}]}
yaml.safe_dump(test, open("test.yml", "w"))
p = subprocess.run(["promtool", "test", "rules", "test.yml"], capture_output=True, text=True)
assert p.returncode == 0, p.stdout + p.stderr
print("alerts:", want)
PY
finish
