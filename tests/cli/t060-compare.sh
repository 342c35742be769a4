#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune compare: three specs (predicted) into Markdown and HTML with plots; a real measured
# profile of this machine against a spec; the HTML rendered by headless Chromium; plots skipped
# without gnuplot; bad inputs.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
specs=$TOPOTUNE_SRC/profiles/specs
cd "$TEST_TMP" || exit 1
mkdir -p tmp
export TMPDIR=$TEST_TMP/tmp # every temporary file of compare lands here: checked empty at the end

# 1. Three specs: every number predicted, one plot per size range.
expect_exit 0 "compare three specs" -- "$TOPOTUNE" compare "$specs/hgx-h100.json" "$specs/dgx-a100.json" \
    "$specs/rtx4090-8x-pcie.json" --html r.html --md r.md --price hgx-h100=300000 --price dgx-a100=150000
cp out r.txt
check "text names all three" bash -c "grep -q '^hgx-h100 ' out && grep -q '^dgx-a100 ' out && grep -q '^rtx4090-8x-pcie ' out"
check "every number from a spec says predicted (text, Markdown, HTML)" python3 - r.txt r.md r.html <<'PY'
import html, re, sys
txt, md, page = (open(p).read() for p in sys.argv[1:4])
page_text = html.unescape(re.sub(r"<svg.*?</svg>", "", page, flags=re.S))
for name, text in (("text", txt), ("md", md), ("html", page_text)):
    if name == "text":
        cells = [c.strip() for line in text.splitlines() for c in re.split(r"\s{2,}", line)]
    elif name == "md":
        cells = [c.strip() for line in text.splitlines() if line.startswith("| ") for c in line.strip("|").split("|")]
    else:
        cells = [c.strip() for c in re.findall(r"<t[dh]>(.*?)</t[dh]>", page)]
        cells = [html.unescape(c) for c in cells]
    # numbers as people write them (1,370; never 1.37e+03), whatever the machine measured
    numbers = [c for c in cells if re.fullmatch(r"-?[0-9][0-9,]*(\.[0-9]+)?( \([0-9][0-9,.]*-[0-9][0-9,.]*\) predicted)?", c)]
    assert not [c for c in cells if re.fullmatch(r"-?[0-9.]+e[+-][0-9]+.*", c)], (name, "exponent")
    assert len(numbers) > 50, (name, len(numbers))
    bare = [c for c in numbers if not c.endswith(") predicted")]
    assert set(bare) <= {"300,000", "150,000"}, (name, bare)  # only the prices the user gave
text = md
assert "(PREDICTED by the topotune model)" in text
assert "fails (timeout) predicted" in text  # the 4090's NCCL defaults hang at init (broken P2P)
assert "NCCL_P2P_DISABLE=1 (system)" in text
assert "| dgx-a100 | GPU links | NV18 (4 NVSwitch) | NV12 (6 NVSwitch) |" in text, "differences"
assert "| 1 MiB (GB/s) |" in text and "| 1 GiB (GB/s) |" in text, "sizes of the table"
assert "| 512 KiB (us) |" in text, "small sizes as time"
# busbw per unit of price at a size common to all, three significant digits, predicted
m = re.search(r"best busbw at (\d+ \w+), GB/s per 1,000 of the price per GPU", text)
assert m, "price column header"
per = re.findall(r"\| 300,000 \| ([0-9.,]+) \([0-9.,]+-[0-9.,]+\) predicted \|", text)
assert per and float(per[0].replace(",", "")) > 0, per
assert "## GPU/NIC matrix of hgx-h100" in text and "| GPU0 | X | NV18 |" in text
PY
check "HTML: three plots, tables, no script or external reference" python3 - r.html <<'PY'
import re, sys
html = open(sys.argv[1]).read()
assert html.count("<svg") == 3, html.count("<svg")
assert html.count("<table>") == 3 + 3  # hardware, busbw, differences, and a matrix per input
ids = re.findall(r"""id=['"]([^'"]+)['"]""", html)
assert len(ids) == len(set(ids)), "element ids repeat across plots"
assert "<script" not in html and "http://" not in html.replace("http://www.w3.org", "") and "https://" not in html
for t in ("small messages", "medium messages", "large messages"):
    assert t in html, t
assert "hgx-h100 defaults (best here) (predicted)" in html  # curve titles carry the word
PY

expect_exit 0 "compare --json" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" --json
check "JSON: the input, predicted, with its profile" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
i = d["inputs"][0]
assert d["schema"] == "topotune/compare/1" and i["label"] == "dgx-a100" and i["predicted"] is True
assert i["profile"]["baseline"]["per_size"]' "$TEST_TMP/out"
check "JSON: every predicted busbw with its band, as the tables show it" python3 -c '
import json, sys
i = json.load(open(sys.argv[1]))["inputs"][0]
p, b = i["profile"], i["busbw_bands"]
best = p["winner"]["per_size"] if isinstance(p.get("winner"), dict) else p["baseline"]["per_size"]
for rows, bands in ((best, b["winner"]), (p["baseline"]["per_size"], b["baseline"])):
    got = {r["size"]: r for r in bands}
    want = [r for r in rows if r["busbw"] > 0]
    assert want and len(got) == len(want), (len(got), len(want))
    for r in want:
        low, high = got[r["size"]]["busbw_band"]
        assert low < r["busbw"] < high, (r, got[r["size"]])' "$TEST_TMP/out"
check "JSON: the bands valid against the schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/compare.schema.json" "$TEST_TMP/out"

# 2. A measured profile of this machine (topotune run, real MPI ranks) against a spec.
expect_exit 0 "topotune run (tiny space)" -- "$TOPOTUNE" run --space "$TOPOTUNE_FIXTURES/space-mpi-tiny.json" \
    --profiles profiles --out run-sweep
expect_exit 0 "compare measured with predicted" -- "$TOPOTUNE" compare profiles "$specs/hgx-h100.json" --md mixed.md --html mixed.html \
    --json mixed.json
check "JSON: bands for the predicted input only" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["inputs"]
assert [(i["predicted"], "busbw_bands" in i) for i in d] == [(False, False), (True, True)], [(i["predicted"], sorted(i)) for i in d]' mixed.json
check "measured and predicted told apart" python3 - mixed.md <<'PY'
import re, sys
text = open(sys.argv[1]).read()
rows = [l for l in text.splitlines() if re.match(r"\| [0-9]+ [KMG]?i?B \((us|GB/s)\) \|", l)]
assert rows, "no busbw rows"
for row in rows:
    cells = [c.strip() for c in row.strip("|").split("|")]
    measured, predicted = cells[1:3], cells[3:5]
    # a slow machine measures above 1,000 us: the number has a comma then, never an exponent
    assert all(c == "-" or re.fullmatch(r"[0-9][0-9,]*(\.[0-9]+)?", c) or c.startswith("fails") for c in measured), row
    assert all(c == "-" or c.endswith(") predicted") for c in predicted), row
assert any(re.fullmatch(r"[0-9][0-9,]*(\.[0-9]+)?", c.strip()) for r in rows for c in r.strip("|").split("|")[1:3]), "no measured number"
assert "(measured, mpi backend)" in text and "(PREDICTED by the topotune model)" in text
assert "no GPU" in text
PY
check "plot titles: measured curves without the word, predicted ones with it" python3 - mixed.html <<'PY'
import re, sys
titles = set(re.findall(r"<title>([^<]*(?:best|defaults)[^<]*)</title>", open(sys.argv[1]).read()))
assert titles, "no curve titles"
assert all(t.endswith("(predicted)") == t.startswith("hgx-h100") for t in titles), titles
PY
check "plots: the predicted input's reference curve shaded with its band, the measured's not" python3 - mixed.html <<'PY'
import re, sys
svgs = re.findall(r"<svg.*?</svg>", open(sys.argv[1]).read(), re.S)
curves = [s for s in svgs if "<title>hgx-h100 " in s]
assert curves, "no predicted curve"
for s in curves:
    bands = re.findall(r"<title>([^<]*: band \(predicted\))</title>", s)
    assert len(bands) == 1 and bands[0].startswith("hgx-h100 "), bands
    # the shaded area has a width: at each size its low and high edges apart (not the line twice)
    areas = [p for p in re.findall(r"fill-opacity = '0\.15[0-9]*' points = '([^']*)'", s) if p.count(",") > 4]
    assert areas, "no shaded area"
    for area in areas:
        ys = {}
        for x, y in (pt.split(",") for pt in area.split()):
            ys.setdefault(x, []).append(float(y))
        assert all(max(v) - min(v) > 1 for v in ys.values() if len(v) == 2), area
assert all(": band" not in t for s in svgs for t in re.findall(r"<title>([^<]*)</title>", s)
           if not t.startswith("hgx-h100")), "a band on a measured curve"
PY

# 3. Headless Chromium renders the HTML: the SVG is in the page, no console error, a PNG is made.
if command -v chromium >/dev/null; then
    render() { # HTML PNG: dumps the DOM to dom.html and the console to console.log
        timeout 90 chromium --headless --no-sandbox --disable-gpu --window-size=1400,3000 \
            --enable-logging=stderr --v=0 --virtual-time-budget=3000 --screenshot="$2" "file://$TEST_TMP/$1" \
            >/dev/null 2>"$TEST_TMP/console.log"
        timeout 90 chromium --headless --no-sandbox --disable-gpu --dump-dom "file://$TEST_TMP/$1" \
            2>/dev/null >"$TEST_TMP/dom.html"
    }
    # Chromium logs every console message as "INFO:CONSOLE:<line>] ...": the page has no script, so
    # any message at all (an error, a failed load) counts.
    console_errors() { grep -cE 'CONSOLE|Uncaught' "$TEST_TMP/console.log"; }
    # The check must be able to fail: a page that logs an error is caught.
    printf '<!DOCTYPE html><html><body><script>console.error("broken page")</script></body></html>\n' >bad.html
    render bad.html bad.png
    check "a console error is detected" test "$(console_errors)" -gt 0
    render r.html r.png
    check "PNG written" bash -c "[ -s r.png ] && head -c 8 r.png | grep -q PNG"
    check "the rendered page has the SVG plots" test "$(grep -c '<svg' dom.html)" -ge 3
    check "no console errors" test "$(console_errors)" -eq 0
else
    echo "skipped: the Chromium check (tools/install-deps.sh installs chromium)"
fi

# 4. No gnuplot: plots skipped and said so; tables still there.
mkdir -p nopath
expect_exit 0 "compare without gnuplot" -- env PATH="$TEST_TMP/nopath" "$TOPOTUNE" compare "$specs/dgx-a100.json" --html nogp.html
check "plots skipped, with why" grep -q "skipped: gnuplot is not installed" nogp.html
check "tables still written" grep -q "<table>" nogp.html

# 5. Bad inputs: exit 2 naming the input, nothing written.
mkdir -p empty-dir
expect_exit 2 "a directory that is neither" -- "$TOPOTUNE" compare empty-dir --html bad1.html
expect_stderr_has "'empty-dir' is neither a profile" "the directory named"
expect_no_file bad1.html "no HTML for bad input"
printf '{"schema": "topotune/spec/1", "gpu": {"model": "NVIDIA Z9000", "count": 8}}\n' >z9000.json
expect_exit 2 "unknown spec GPU" -- "$TOPOTUNE" compare z9000.json "$specs/dgx-a100.json" --md bad2.md
expect_stderr_has "z9000.json" "the spec named"
expect_no_file bad2.md "no Markdown for bad input"
# A scaling table below one float: nccl-tests runs no such all_reduce (it printed 0.00 predicted).
expect_exit 2 "--at 2: refused" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" --nodes 1,2 --at 2
expect_stderr_has "invalid value '2' for --at: expected bytes from 4 to" "--at: the smallest said"
expect_exit 2 "price for no input" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" --price h200=1
expect_stderr_has "the inputs are: dgx-a100" "labels listed"
expect_exit 2 "no input" -- "$TOPOTUNE" compare
mkdir -p notprofile
echo '{}' >notprofile/profile.json
expect_exit 2 "a profile.json that is not a profile" -- "$TOPOTUNE" compare notprofile --md bad3.md
expect_stderr_has "notprofile/profile.json' is not a topotune profile" "the file named"
expect_no_file bad3.md "no Markdown for a bad profile"
expect_exit 2 "an MPI space for a prediction" -- "$TOPOTUNE" compare "$specs/dgx-a100.json" --space "$TOPOTUNE_FIXTURES/space-mpi-tiny.json"
expect_stderr_has "give an nccl space" "the space refused"

# 6. Names that are markup or shell: escaped in HTML and Markdown, never run by gnuplot.
mkdir -p odd
# shellcheck disable=SC2016 # the backquotes are the point: a name gnuplot must not run
cp "$specs/dgx-a100.json" 'odd/<b>x|y`touch PWNED`.json'
cp "$specs/dgx-a100.json" "odd/a'b.json"
expect_exit 0 "odd names" -- "$TOPOTUNE" compare odd/*.json "$specs/dgx-a100.json" "$specs/dgx-a100.json" --html odd.html --md odd.md
check "gnuplot ran no command from a name" test ! -e PWNED
check "no markup from a name in the HTML" bash -c "! grep -q '<b>x' odd.html && grep -q '&lt;b&gt;x|y' odd.html"
check "no cell break from a name in Markdown" grep -qF '&lt;b>x\|y' odd.md
check "the same name twice is told apart" grep -q 'dgx-a100#2' odd.md
# Sizes that grow by less than a byte per step (1 B, factor 1.5) used to loop forever: one
# stepping rule (util_next_size) for the benchmark, the sweep and compare always advances.
printf '%s\n' '{"schema": "topotune/space/1", "backend": "nccl", "sizes": {"min": "1", "max": "64", "factor": 1.5},
 "vars": {"NCCL_ALGO": [null, "Ring"]}, "repeat": 1}' >slow-steps.json
expect_exit 0 "compare with 1 B steps of 1.5x ends" -- timeout 30 "$TOPOTUNE" compare "$specs/dgx-a100.json" --space slow-steps.json --json
check "every size from 1 to 64 B predicted once" python3 - "$TEST_TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
sizes = [s["size"] for s in d["inputs"][0]["profile"]["winner"]["per_size"]] if d["inputs"][0]["profile"].get("winner") else [s["size"] for s in d["inputs"][0]["profile"]["baseline"]["per_size"]]
assert sizes == sorted(set(sizes)) and sizes[0] == 1 and sizes[-1] <= 64 and len(sizes) >= 8, sizes
PY
check "no temporary file left" test -z "$(ls -A tmp)"

# The comparison a buyer reads: every example spec at 1 to 64 nodes, with prices per node. The
# text fits a 120-column terminal; small sizes are time per call, large ones busbw; every predicted
# number carries the model's expected error; the HTML renders in a real browser.
specs_all=("$specs"/*.json)
prices=()
for f in "${specs_all[@]}"; do prices+=(--price "$(basename "$f" .json)=100000"); done
expect_exit 0 "compare the example specs at 1 to 64 nodes" -- "$TOPOTUNE" compare "${specs_all[@]}" \
    --space "$TOPOTUNE_SRC/profiles/spaces/nccl-quick.json" --nodes 1,2,4,8,16,32,64 "${prices[@]}" \
    --html buyer.html --md buyer.md
check "text under 120 columns ($(awk '{ if (length > m) m = length } END { print m }' "$TEST_TMP/out"))" \
    test "$(LC_ALL=C.UTF-8 awk '{ if (length > m) m = length } END { print m }' "$TEST_TMP/out")" -le 120
check "a scaling table, predicted with the expected error" grep -q "^== Scaling: NCCL's defaults at 512 MiB by node count" "$TEST_TMP/out"
check "hgx-h100 at 64 nodes predicted, with its band" grep -qE "^hgx-h100 +64 +[0-9][0-9,]*\.[0-9]+ \([0-9][0-9,]*\.[0-9]+-[0-9][0-9,]*\.[0-9]+\) predicted" "$TEST_TMP/out"
check "small sizes as time per call" grep -qE "^512 KiB \(us\) +[0-9][0-9,.]* \([0-9][0-9,.]*-[0-9][0-9,.]*\) predicted" "$TEST_TMP/out"
check "GB/s per 1,000 of the price per GPU" grep -q "GB/s per 1,000 of the price per GPU" "$TEST_TMP/out"
# --price is per node; what it buys is counted per GPU, as busbw is: a GB200 tray of 4 GPUs at
# half an 8-GPU node's price is not set 2x apart from it for the same busbw per GPU.
expect_exit 0 "compare a tray of 4 and a node of 8, priced" -- "$TOPOTUNE" compare "$specs/hgx-h100.json" \
    "$specs/gb200-nvl72.json" --price hgx-h100=300000 --price gb200-nvl72=150000 --json priced.json
check "GB/s per 1,000 of a GPU's share of the price" python3 - "$TEST_TMP/out" priced.json <<'PY'
import json, re, sys
text, doc = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
at = re.search(r"GB/s per 1,000 of the price per GPU \(best busbw at 1 GiB\)", text)
assert at, text
for i in doc["inputs"]:
    p = i["profile"]
    sizes = (p["winner"] or p["baseline"])["per_size"] if p.get("winner") else p["baseline"]["per_size"]
    bw = [s["busbw"] for s in sizes if s["size"] == 1 << 30][0]
    want = bw * p["hardware"]["gpus"] / i["price"] * 1000
    got = float(re.search(r"^%s +[0-9,]+ +([0-9.,]+) " % re.escape(i["label"]), text, re.M).group(1))
    assert abs(got - want) / want < 0.01, (i["label"], got, want)
PY
check "Markdown has the scaling table with its node counts" grep -q "| input | 1 node(s) | 2 node(s) |" buyer.md
check "HTML: the small messages plotted as time, and the scaling plot" python3 - buyer.html <<'PY'
import sys
h = open(sys.argv[1]).read()
assert h.count("<svg") == 4 and "time per call (us)" in h and "by node count" in h, h.count("<svg")
PY
expect_exit 0 "compare --nodes list --json" -- "$TOPOTUNE" compare "$specs/hgx-h100.json" \
    --space "$TOPOTUNE_SRC/profiles/spaces/nccl-quick.json" --nodes 1,4,16 --at 1G --json
check "scaling in the JSON, valid against the schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/compare.schema.json" "$TEST_TMP/out"
check "1 GiB at 1, 4 and 16 nodes, predicted" python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["inputs"][0]["scaling"]
assert [r["nodes"] for r in s] == [1, 4, 16] and all(r["size"] == 1 << 30 and r["predicted"] and r["busbw"] > 0 for r in s), s
assert all(r["busbw_band"][0] < r["busbw"] < r["busbw_band"][1] for r in s), s' "$TEST_TMP/out"
# Without --at, where the first input's defaults hang (no size ran): 1 GiB, not 0 B; the hang
# said per node count, in the text and the JSON.
expect_exit 0 "compare --nodes, the first input hangs" -- "$TOPOTUNE" compare "$specs/rtx4090-8x-pcie.json" \
    "$specs/hgx-h100.json" --nodes 1,2 --json scale-hang.json
check "the scaling at 1 GiB, the hang said" grep -q "^rtx4090-8x-pcie  *1  *hangs predicted" "$TEST_TMP/out"
check "JSON: 1 GiB, outcome hangs, valid" python3 - scale-hang.json "$TOPOTUNE_SRC" <<'PY'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))["inputs"]
assert all(r["size"] == 1 << 30 for i in d for r in i["scaling"]), d
assert [r.get("outcome") for r in d[0]["scaling"]] == ["hangs", "hangs"], d[0]["scaling"]
assert all(r["busbw"] > 0 and "outcome" not in r for r in d[1]["scaling"]), d[1]["scaling"]
assert "busbw_band" not in d[0]["scaling"][0] and "busbw_band" in d[1]["scaling"][0], d  # no number, no band
subprocess.run([sys.executable, sys.argv[2] + "/tests/cli/validate-schema.py",
                sys.argv[2] + "/docs/schemas/compare.schema.json", sys.argv[1]], check=True)
PY
# A measured input and a spec: the scaling size is the largest both ran (the sweep's 256 MiB, not
# the spec's 1 GiB, at which the sweep has no number).
cat >small.json <<'JSON'
{"schema": "topotune/space/1", "backend": "sim", "sizes": {"min": "1M", "max": "256M"},
 "vars": {"NCCL_ALGO": [null, "Ring"]}, "repeat": 1}
JSON
expect_exit 0 "a sim sweep to 256 MiB" -- "$TOPOTUNE" sweep --space small.json --topology "$specs/hgx-h100.json" --out sw256 -q
expect_exit 0 "compare it with a spec, --nodes 1,2" -- "$TOPOTUNE" compare sw256 "$specs/dgx-a100.json" --nodes 1,2 --json scale-both.json
check "at 256 MiB, the sweep's own count a number" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))["inputs"]
assert all(r["size"] == 256 << 20 for i in d for r in i["scaling"]), d
assert d[0]["scaling"][0]["busbw"] > 0, d[0]["scaling"]' scale-both.json
# One GPU on one node communicates nothing (all_reduce's busbw 0, alltoall a copy in memory): no
# ranking of it, the fix named; on 2 nodes it is compared.
python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); d.update(count=1, fabric="pcie"); d["nics"][0]["count"] = 1
d["cpu"]["sockets"] = 1; json.dump(d, open("one.json", "w"))' "$specs/hgx-h100.json"
expect_exit 2 "compare a 1-GPU spec" -- "$TOPOTUNE" compare one.json "$specs/hgx-h100.json" --workload moe
expect_stderr_has "is one GPU on one node: no collective communicates there" "said, with the fix"
# a list of counts (a scaling table) was told "give --nodes 2 or more", which it had; and AMD GPUs
# were "no GPU", where predict says their vendor
expect_exit 2 "one GPU, --nodes 2,4" -- "$TOPOTUNE" compare one.json --nodes 2,4
expect_stderr_has "a list of counts sets the scaling table only" "said what a list does"
expect_exit 2 "AMD GPUs" -- "$TOPOTUNE" compare "$TOPOTUNE_FIXTURES/hwloc-llnl-tioga-ex235a-8xMI200-amd.xml"
expect_stderr_has "describes no NVIDIA GPU" "said"
expect_exit 0 "compare it on 2 nodes" -- "$TOPOTUNE" compare one.json --nodes 2
# With a workload the price is set against its effective algbw (the workload table's figure), not
# all_reduce's busbw at some size of its grid (fsdp has no all_reduce: it showed none).
expect_exit 0 "compare --workload fsdp --price" -- "$TOPOTUNE" compare "$specs/hgx-h100.json" \
    --workload fsdp --price hgx-h100=300000
check "the price table's figure is the workload table's" python3 - "$TEST_TMP/out" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
assert "GB/s per 1,000 of the price per GPU (the workload's effective algbw)" in text, text
price = re.search(r"^hgx-h100  +300,000  +(\S+) ", text, re.M).group(1)
row = re.search(r"^chosen GB/s per 1,000 of the price per GPU +(\S+) ", text, re.M).group(1)
assert price == row and price != "-", (price, row)
PY
check "the legend says where the band is" grep -q "the range in brackets after such a number" "$TEST_TMP/out"
# Its JSON carries the workload table's bands: the effective algbw's and each time per call's.
# Two collectives and two sizes whose bands differ: the mix's band is not each row's.
printf '{"schema": "topotune/workload/1", "entries": [{"collective": "all_gather", "size": 16777216, "weight": 0.5},
 {"collective": "broadcast", "size": 1048576, "weight": 0.5}]}\n' >mix.json
expect_exit 0 "compare --workload --json, defaults that hang beside a stable input" -- \
    "$TOPOTUNE" compare "$specs/rtx4090-8x-pcie.json" "$specs/hgx-h100.json" --workload mix.json --json w.json \
    --price hgx-h100=300000
check "JSON: the workload table's bands, every number inside its own" python3 - w.json "$TEST_TMP/out" \
    "$TOPOTUNE" "$specs/hgx-h100.json" <<'PY'
import json, re, subprocess, sys
inputs = json.load(open(sys.argv[1]))["inputs"]
text = open(sys.argv[2]).read()
def cells(label):  # each input's "v (low-high) predicted" of a table row, as numbers
    line = next(l for l in text.splitlines() if l.startswith(label))
    return [[float(x.replace(",", "")) for x in m] for m in
            re.findall(r"([\d,.]+) \(([\d,.]+)-([\d,.]+)\) predicted", line)]
def near(a, b):
    return abs(a - b) <= 0.01 * max(abs(b), 1e-9)
assert len(inputs) == 2 and all(i["predicted"] for i in inputs)
def inside(v, band):
    return band is not None and band[0] < v < band[1]
for i in inputs:
    p, b = i["profile"], i["workload_bands"]
    chosen = p["winner"] if isinstance(p.get("winner"), dict) else p["baseline"]
    assert inside(chosen["objective"], b["effective_algbw"]["winner"]), (chosen, b)
    base = p["baseline"]["objective"]
    assert inside(base, b["effective_algbw"]["baseline"]) if base > 0 else \
        b["effective_algbw"]["baseline"] is None, (base, b)
    assert [(e["collective"], e["size"]) for e in p["evidence"]] == \
        [(e["collective"], e["size"]) for e in b["evidence"]]
    for e, eb in zip(p["evidence"], b["evidence"]):
        assert inside(e["time_us"], eb["time_us_band"]), (e, eb)
        t = e.get("baseline_time_us")
        assert inside(t, eb["baseline_time_us_band"]) if t else eb["baseline_time_us_band"] is None
    # the same band the table prints after the chosen effective algbw
    lo, hi = b["effective_algbw"]["winner"]
    assert "%.2f (%.2f-%.2f) predicted" % (chosen["objective"], lo, hi) in text, (lo, hi)
# each (collective, size) row of the table: its time and band, input by input, are the JSON's
ev = inputs[0]["profile"]["evidence"]
assert {e["collective"] for e in ev} == {"all_gather", "broadcast"}, ev
for k, e in enumerate(ev):
    label = "%s %d MiB (weight" % (e["collective"], e["size"] >> 20)
    row = cells(label)
    assert len(row) == len(inputs), (label, row)
    for i, (v, lo, hi) in zip(inputs, row):
        band = i["workload_bands"]["evidence"][k]["time_us_band"]
        assert near(v, i["profile"]["evidence"][k]["time_us"]), (label, v)
        assert near(lo, band[0]) and near(hi, band[1]), (label, (lo, hi), band)
assert inputs[0]["workload_bands"]["effective_algbw"]["baseline"] is None  # the defaults hang
# each row's band is its collective's at its size, as predict gives it (busbw [low, high] of P:
# the time's is [t x P / high, t x P / low]), and the two rows' differ
ratios = []
for k, e in enumerate(ev):
    run = subprocess.run([sys.argv[3], "predict", "-i", sys.argv[4], "-C", e["collective"], "-b",
                          str(e["size"]), "-e", str(e["size"]), "--json"], capture_output=True, text=True)
    size = [x for x in map(json.loads, run.stdout.splitlines()) if x["event"] == "size"][0]
    t, band = inputs[1]["profile"]["evidence"][k]["time_us"], inputs[1]["workload_bands"]["evidence"][k]["time_us_band"]
    want = (size["busbw"] / size["busbw_band"][1], size["busbw"] / size["busbw_band"][0])
    assert near(band[0] / t, want[0]) and near(band[1] / t, want[1]), (e, band, t, want)
    ratios.append(round(band[1] / band[0], 3))
assert ratios[0] != ratios[1], ratios
# per 1,000 of the price per GPU: the hgx's, none for the input without a price
[(v, lo, hi)] = cells("chosen GB/s per 1,000 of the price per GPU")
band = inputs[1]["workload_bands"]["per_1000_of_gpu_price"]
assert near(lo, band[0]) and near(hi, band[1]), ((lo, hi), band)
assert inputs[0]["workload_bands"]["per_1000_of_gpu_price"] is None
PY
check "JSON: the workload bands valid against the schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/compare.schema.json" w.json
# A workload's defaults that hang: said as the size tables say it, not 0.00 GB/s.
expect_exit 0 "compare --workload tp, defaults that hang" -- "$TOPOTUNE" compare "$specs/rtx4090-8x-pcie.json" \
    "$specs/hgx-h100.json" --workload tp
check "fails (timeout), not a number" grep -q "^effective algbw (GB/s), NCCL's defaults  *fails (timeout) predicted " "$TEST_TMP/out"
# A workload size that nccl-tests rounds down (all_gather 2200 B on 72 ranks runs 1152 B): read
# between two predicted sizes, not extrapolated from below as bytes (95 us where both are 50).
printf '{"schema": "topotune/workload/1", "entries": [{"collective": "all_gather", "size": 2200, "weight": 1}]}\n' >w2200.json
expect_exit 0 "compare --workload, a rounded size" -- "$TOPOTUNE" compare "$specs/gb200-nvl72.json" --workload w2200.json --json
check "its time per call the model's at 1152 and 3456 B" python3 - "$TEST_TMP/out" "$TOPOTUNE" "$specs/gb200-nvl72.json" <<'PY'
import json, subprocess, sys
view = json.load(open(sys.argv[1]))["inputs"][0]["profile"]["baseline"]
cost = 2200 / (view["objective"] * 1e3)  # us per call: the size over the effective algbw
ev = subprocess.run([sys.argv[2], "predict", "-i", sys.argv[3], "-C", "all_gather", "-b", "1152",
                     "-e", "4096", "--json"], capture_output=True, text=True).stdout
pred = [e for e in map(json.loads, ev.splitlines()) if e["event"] == "size"]
lo, hi = min(p["time_us"] for p in pred), max(p["time_us"] for p in pred)
assert len(pred) >= 2 and lo * 0.99 <= cost <= hi * 1.01, (cost, lo, hi, pred)
PY
check "compare runs nothing: no sweep warning" bash -c "! grep -q 'unchecked\|does not read' '$TEST_TMP/err'"
if command -v chromium >/dev/null; then
    expect_exit 0 "chromium renders the report" -- timeout 90 chromium --headless --no-sandbox --disable-gpu \
        --hide-scrollbars --window-size=1400,4000 --screenshot="$TEST_TMP/buyer.png" "file://$TEST_TMP/buyer.html"
    check "a real screenshot (PNG, not blank)" python3 - "$TEST_TMP/buyer.png" <<'PY'
import os, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000, len(data)
PY
else
    echo "note: no chromium here (tools/install-deps.sh installs it): the HTML was not rendered"
fi
# A sweep measured on 2 nodes is compared as 2 nodes: it showed as one node of 8 GPUs, its times
# were computed for 8 ranks (not 16), and its 2-node number stood on the scaling table's 1-node row.
"$TOPOTUNE" sweep --space "$TOPOTUNE_FIXTURES/space-nccl-tiny.json" --backend sim \
    --topology "$specs/hgx-h100.json" --nodes 2 --out sw2 >/dev/null 2>&1
expect_exit 0 "a 2-node sweep against its spec at 2 nodes" -- "$TOPOTUNE" compare sw2 "$specs/hgx-h100.json" --nodes 1,2
check "its GPUs: 2 nodes" grep -qE "^  GPUs +8 x .* per node, 2 nodes$" out
check "its scaling rows: nothing at 1 node, its number at 2" python3 - out <<'PY'
import re, sys
rows = [l.split() for l in open(sys.argv[1]) if re.match(r"^sw2 +[12] ", l)]
assert rows[0][:3] == ["sw2", "1", "-"] and rows[1][1] == "2" and rows[1][2] != "-", rows
PY

# What the model assumes of a file is said, as predict says it: AWS's p4d file (no NVLink, no NIC
# speed) was compared silently beside a spec, 40 times low with a normal-looking band.
"$TOPOTUNE" topo --input "$TOPOTUNE_FIXTURES/nccl-topo-aws-p4d-24xlarge.xml" --json p4d.json 2>/dev/null
echo '{"schema": "topotune/spec/1", "gpu": "H100-SXM5-80GB", "count": 8, "fabric": "nvswitch"}' >nonic.json
expect_exit 0 "compare a silent topology and a spec without NICs at 2 nodes" -- \
    "$TOPOTUNE" compare p4d.json nonic.json "$specs/hgx-h100.json" --nodes 2
expect_stderr_has "'p4d.json' does not describe NVLink between its GPUs" "NVLink assumed said"
expect_stderr_has "'p4d.json': 4 of its NICs have no speed the source states" "NIC speeds assumed said"
expect_stderr_has "'nonic.json' has no NIC: across nodes priced as sockets" "no NIC said"
check "nothing said of the spec that states everything" test "$(grep -c "hgx-h100.json" err)" = 0

# The text report stays within 120 columns (the man page): a table of a column per input, or a
# node's GPU/NIC matrix of 32 NICs, comes in parts of the columns that fit, each with the rows'
# names. Three inputs' workload table reached 150 columns, a p5's matrix 267.
echo '{"schema": "topotune/spec/1", "gpu": "H100-SXM5-80GB", "count": 8, "fabric": "nvswitch",
 "nics": [{"model": "EFA-100G", "count": 32, "per": "gpu"}]}' >p5.json
"$TOPOTUNE" compare "$specs/hgx-h100.json" "$specs/hgx-b200.json" "$specs/gb200-nvl72.json" --nodes 2 \
    --workload fsdp >wide1.txt 2>/dev/null
"$TOPOTUNE" compare p5.json --nodes 2 >wide2.txt 2>/dev/null
check "no line past 120 columns" python3 -c '
import sys
long = [(f, len(l.rstrip("\n"))) for f in sys.argv[1:] for l in open(f, encoding="utf-8") if len(l.rstrip("\n")) > 120]
assert not long, long[:3]' wide1.txt wide2.txt
check "the matrix keeps its rows' names in each part" bash -c "test \$(grep -c '^GPU0 ' wide2.txt) -ge 2"

# A GB200 NVL72 rack is 18 trays of 4 GPUs in one NVLink domain: it was shown as one node of 4,
# and against one tray alone as "no difference".
python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); s.pop("nvlink_domain"); s["nodes"] = 1
s["name"] = "tray"; json.dump(s, open("tray.json", "w"))' "$specs/gb200-nvl72.json"
expect_exit 0 "a rack and one tray" -- "$TOPOTUNE" compare "$specs/gb200-nvl72.json" tray.json
check "the rack: 18 nodes in a domain of 72 GPUs" grep -q "GPUs  *4 x NVIDIA GB200 per node, 18 nodes, NVLink domain of 72 GPUs" "$TEST_TMP/out"
check "the difference named" grep -q "^tray  *GPUs  *4 x NVIDIA GB200 per node, 18 nodes, NVLink domain of 72 GPUs  *4 x NVIDIA GB200" "$TEST_TMP/out"
# NCCL_SOCKET_IFNAME's @interfaces, one value per NIC, predict alike (the model only sees that
# each names an interface): 8 NICs made 9 times the configurations, and 128 NICs were refused.
python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); s["name"] = "many"
s["nics"] = [{"model": "CX7-400G-IB", "count": 64}, {"model": "ETH-25G", "count": 64}]
json.dump(s, open("many-nics.json", "w"))' "$specs/hgx-h100.json"
configs() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["inputs"][0]["profile"]["sweep"]["configurations"])' "$1"; }
expect_exit 0 "8 NICs, 2 nodes" -- "$TOPOTUNE" compare "$specs/hgx-h100.json" --nodes 2 --json eight.json
expect_exit 0 "128 NICs, 2 nodes" -- "$TOPOTUNE" compare many-nics.json --nodes 2 --json many.json
check "as many configurations for both, two values of NCCL_SOCKET_IFNAME each" \
    test "$(configs eight.json)" = "$(configs many.json)"
# A topotune without its shipped data (a copy of the binary alone) cannot predict: the
# environment's failure, exit 3 as for run (it was 2, bad input)
mkdir -p alone && cp "$TOPOTUNE" alone/topotune
expect_exit 3 "compare without the shipped space" -- env -u TOPOTUNE_DATA alone/topotune compare "$specs/hgx-h100.json"
expect_stderr_has "cannot find the shipped space spaces/nccl-default.json" "said"
# GPU links of several kinds are each counted: the 4090 server's PCIe paths read "SYS", their
# most common kind, as if no pair shared a switch (POWER8's NVLink pairs did the same)
expect_exit 0 "an 8 x PCIe server" -- "$TOPOTUNE" compare "$TOPOTUNE_SRC/profiles/specs/rtx4090-8x-pcie.json"
check "its links counted by kind" grep -qE '^  GPU links +8 x PHB, 4 x PIX, 16 x SYS$' "$TEST_TMP/out"
finish
