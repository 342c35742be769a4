#!/usr/bin/env python3
"""Fits the model's shared physical parameters to the published all_reduce measurements.

For every usable row of bench/perf/calibration/published.json (the systems and assumptions of
model-error.py) and every point of a grid of the three parameters of a calibration file
(topotune/calibration/1: nvls_scale, fill_bytes, net_scale, lat_scale; docs/model.md), it runs
`topotune predict --calibration` once per system, node count and configuration (all sizes in
one call), then reports:
  - NCCL's own model (1, 0, 1) and the fit on the whole table: median and max |error|;
  - leave-one-system-out: each hardware type (system_class) predicted with the parameters fitted
    on the others; the median and max |error| of those held-out predictions;
  - the calibration table: per row its source, hardware, NCCL version, nodes, size, published
    busbw, predicted busbw with the whole-table fit, and the error.
The fit minimises the mean |error| (ties: the max). A report: exits 0 when it could run.
usage: calibrate-model.py [--bin TOPOTUNE] [--json FILE] [--markdown]
"""
import argparse
import importlib.util
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("model_error", os.path.join(HERE, "model-error.py"))
me = importlib.util.module_from_spec(spec)
spec.loader.exec_module(me)

GRID = {
    "nvls_scale": [0.60, 0.65, 0.70, 0.75, 0.80, 0.85, 0.90, 0.95, 1.00],
    "fill_bytes": [0, 1 << 20, 2 << 20, 4 << 20, 8 << 20, 16 << 20, 32 << 20],
    "net_scale": [0.70, 0.80, 0.90, 1.00, 1.10],
    "lat_scale": [1.0, 1.5, 2.0, 3.0],
}
NCCL = (1.0, 0, 1.0, 1.0)


def predict_all(binary, path, nodes, env, sizes, calib):
    cmd = [binary, "predict", "--input", path, "--nodes", str(nodes), "-b", str(min(sizes)),
           "-e", str(max(sizes)), "--json", "--calibration", calib]
    for e in env:
        cmd += ["--env", e]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    out = {}
    for line in p.stdout.splitlines():
        if line.startswith("{"):
            e = json.loads(line)
            if e.get("event") == "size" and e.get("predicted"):
                out[e["size"]] = e["busbw"]
    return out


def stats(errs):
    a = [abs(e) for e in errs]
    return (statistics.median(a), max(a)) if a else (0, 0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.environ.get("TOPOTUNE_BIN",
                                                    os.path.join(me.ROOT, "build", "topotune")))
    ap.add_argument("--json", metavar="FILE", help="also write the fit and the table as JSON")
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = ap.parse_args()
    rows = json.load(open(me.PUBLISHED, encoding="utf-8"))["rows"]
    used, groups = [], {}
    with tempfile.TemporaryDirectory(prefix="topotune-calibrate.") as tmp:
        for row in rows:
            g = me.group_of(row)
            system = me.SYSTEMS.get(g)
            if any(f in me.SKIP_FLAGS for f in row["flags"]) or not isinstance(system, tuple):
                continue
            sp = dict(system[0], schema="topotune/spec/1", name=g, count=row["gpus_per_node"])
            path = os.path.join(tmp, g + ".json")
            if not os.path.exists(path):
                json.dump(sp, open(path, "w", encoding="utf-8"))
            env = tuple(me.FLAG_ENV[f] for f in row["flags"] if f in me.FLAG_ENV)
            key = (path, row["nodes"], env)
            groups.setdefault(key, set()).add(row["size_bytes"])
            used.append((row, key))
        points = list(itertools.product(*GRID.values()))
        jobs = []
        for i, pt in enumerate(points):
            calib = os.path.join(tmp, "c%d.json" % i)
            json.dump({"schema": "topotune/calibration/1", "params": dict(zip(GRID, pt))},
                      open(calib, "w", encoding="utf-8"))
            for key, sizes in groups.items():
                jobs.append((pt, key, sizes, calib))
        with ThreadPoolExecutor(max_workers=8) as pool:
            res = list(pool.map(lambda j: predict_all(args.bin, j[1][0], j[1][1], j[1][2], j[2], j[3]),
                                jobs))
    pred = {}
    for (pt, key, _, _), out in zip(jobs, res):
        pred[(pt, key)] = out
    usable = [(r, k) for r, k in used if all(r["size_bytes"] in pred[(pt, k)] for pt in points)]

    def errors(pt, subset):
        return [100.0 * (pred[(pt, k)][r["size_bytes"]] - r["busbw_gbs"]) / r["busbw_gbs"]
                for r, k in subset]

    def fit(subset):
        """The grid point with the least mean |error| (every row counts: the median alone
        would let a few systems go far off), ties by the max."""
        def cost(pt):
            e = [abs(x) for x in errors(pt, subset)]
            return (round(statistics.mean(e), 3), max(e))
        return min(points, key=cost)

    best = fit(usable)
    classes = sorted({r["system_class"] for r, _ in usable})
    loo, loo_fits = [], {}
    for c in classes:
        train = [x for x in usable if x[0]["system_class"] != c]
        held = [x for x in usable if x[0]["system_class"] == c]
        pt = fit(train)
        loo_fits[c] = pt
        loo += errors(pt, held)
    nccl = NCCL if NCCL in points else None
    print("Calibration of the topotune model against %d published rows (%d system types, node "
          "counts %s)" % (len(usable), len(classes), sorted({r["nodes"] for r, _ in usable})))
    print("parameters: %s" % ", ".join(GRID))
    if nccl:
        m, x = stats(errors(nccl, usable))
        print("NCCL's own model %-30s median |error| %5.1f%%  max %6.1f%%" % (str(nccl), m, x))
    m, x = stats(errors(best, usable))
    print("whole-table fit  %-30s median |error| %5.1f%%  max %6.1f%%" % (str(best), m, x))
    m, x = stats(loo)
    print("leave-one-system-out (held-out rows only)       median |error| %5.1f%%  max %6.1f%%" % (m, x))
    for c in classes:
        e = errors(loo_fits[c], [u for u in usable if u[0]["system_class"] == c])
        print("  %-20s fitted without it: %-28s median %5.1f%%  max %6.1f%%" % (c, loo_fits[c], *stats(e)))
    errs = errors(best, usable)
    head = ("source", "hardware", "NCCL", "nodes", "size", "published", "predicted", "error")
    if args.markdown:
        print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
    for (r, k), e in zip(usable, errs):
        src = r["source"]
        cells = ("[%s](%s)" % (r["system"], src["url"]), r["system_class"], r.get("nccl_version") or "?", str(r["nodes"]),
                 me.human(r["size_bytes"]), "%.1f" % r["busbw_gbs"],
                 "%.1f" % pred[(best, k)][r["size_bytes"]], "%+.1f%%" % e)
        if args.markdown:
            print("| " + " | ".join(cells) + " |")
    if args.json:
        json.dump({"schema": "topotune/calibration-fit/1", "grid": GRID,
                   "fit": dict(zip(GRID, best)), "whole": stats(errs), "loo": stats(loo),
                   "loo_fits": {c: dict(zip(GRID, p)) for c, p in loo_fits.items()}},
                  open(args.json, "w", encoding="utf-8"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
