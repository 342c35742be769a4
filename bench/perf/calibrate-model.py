#!/usr/bin/env python3
"""Fits the model's shared physical parameters to the published all_reduce measurements.

For every usable row of bench/perf/calibration/published.json (the systems and assumptions of
model-error.py) it fits the parameters of a calibration file (topotune/calibration/1:
nvls_scale, fill_bytes, net_scale, lat_scale, net_lat_scale, efa_lat_us, nvls_fill_bytes,
ring_net_scale; docs/model.md) by coordinate descent over a grid of each, running `topotune predict --calibration` once per
system, node count, configuration and parameter point (all sizes in one call), then reports:
  - NCCL's own model (1, 0, 1, 1, 1, 0, 0, 1) and the fit on the whole table: median and max |error|;
  - leave-one-source-out, the headline: each source's rows (one issue thread, one repository's
    documents: rows of one source share their measurement conditions) predicted with the
    parameters fitted on the other sources; the median and max |error| of those predictions;
  - leave-one-system-out: each hardware type (system_class) predicted with the parameters fitted
    on the others; the median and max |error| of those held-out predictions;
  - the calibration table: per row its source, hardware, NCCL version, nodes, size, published
    busbw, predicted busbw with the whole-table fit, and the error.
  - the band of a prediction (the central 90% of the leave-one-source-out errors, up to 4 MiB
    and above), which `topotune expect` uses;
  - the conflict sets (rows the model cannot tell apart published more than 1.5x apart, with
    the same or an unknown NCCL version) and, for the fit and the program's defaults, the rows
    issue 25's bar fails (off by more than 30%; in a conflict set, outside its range and more
    than 30% from its nearest member); and the rows the fit is furthest from.
The fit minimises the mean |error| plus the mean excess over 30% (times
$CALIBRATE_EXCESS_WEIGHT, default 1; 0: the mean alone). A report: exits 0 when it could run.
usage: calibrate-model.py [--bin TOPOTUNE] [--json FILE] [--markdown]
"""
import argparse
import importlib.util
import json
import math
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
    "net_scale": [0.70, 0.75, 0.80, 0.85, 0.90, 0.95, 1.00, 1.05, 1.10],
    "lat_scale": [0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0],
    "net_lat_scale": [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0],
    "efa_lat_us": [0, 5, 10, 20, 30, 40, 60, 80, 100],
    "nvls_fill_bytes": [0, 8 << 20, 16 << 20, 32 << 20, 48 << 20, 64 << 20, 96 << 20, 128 << 20],
    "ring_net_scale": [0.70, 0.75, 0.80, 0.85, 0.90, 0.95, 1.00, 1.05, 1.10],
}
NCCL = (1.0, 0, 1.0, 1.0, 1.0, 0, 0, 1.0)
DEFAULTS = (0.8, 0, 0.85, 2.0, 1.5, 60, 64 << 20, 0.9)  # model/params.c's model_params_default
WORST = 10  # rows listed by their error
# The fit's cost: the mean |error| plus, for rows off by more than BOUND %, this weight times
# their excess, so that no system is given up for a better median.
BOUND = 30.0
# Published values of rows the model cannot tell apart this far apart make a conflict set.
CONFLICT_RATIO = 1.5
EXCESS_WEIGHT = float(os.environ.get("CALIBRATE_EXCESS_WEIGHT", "1"))


def predict_all(binary, path, nodes, env, sizes, calib):
    """Every size's predicted busbw: one predict call per run of sizes that double from the
    smallest left (predict steps by doubling; a size off that ladder starts another call)."""
    out, left = {}, sorted(sizes)
    while left:
        lo = left[0]
        ladder = [s for s in left if s % lo == 0 and (s // lo) & (s // lo - 1) == 0]
        cmd = [binary, "predict", "--input", path, "--nodes", str(nodes), "-b", str(lo),
               "-e", str(max(ladder)), "--json", "--calibration", calib]
        for e in env:
            cmd += ["--env", e]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
        except subprocess.TimeoutExpired:
            return out  # its rows then have no number: errors() says which
        for line in p.stdout.splitlines():
            if line.startswith("{"):
                e = json.loads(line)
                if e.get("event") == "size" and e.get("predicted"):
                    out[e["size"]] = e["busbw"]
        left = [s for s in left if s not in ladder]
    return out


def source_of(row):
    """The publisher a row comes from: a GitHub issue or pull request thread, else the repository
    (its documents at any commit share authors and clusters), else the URL's host and path."""
    url = row["source"]["url"]
    parts = url.split("://", 1)[-1].split("/")
    if parts[0] == "github.com" and len(parts) >= 3:
        if len(parts) >= 5 and parts[3] in ("issues", "pull", "discussions"):
            return "/".join(parts[1:5])
        return "/".join(parts[1:3])
    return "/".join(parts)


def held_out(usable, key_of, fit, errors):
    """Each group of rows (key_of) predicted with the fit on all the others: the errors of
    every held-out row, each with its row, and per group its fit and errors."""
    errs, per = [], {}
    for g in sorted({key_of(r) for r, _ in usable}):
        train = [x for x in usable if key_of(x[0]) != g]
        held = [x for x in usable if key_of(x[0]) == g]
        pt = fit(train)
        e = errors(pt, held)
        errs += [(x, r) for x, (r, _) in zip(e, held)]
        per[g] = (pt, e)
    return errs, per


# The band `topotune expect` gives: the signed held-out errors of rows at most SMALL bytes
# (latency decides them) and of larger rows, each cut at these quantiles (a central 90%).
SMALL = 4 << 20
BAND_QUANTILES = (0.05, 0.95)


def band(held):
    """Per size class, the published value's range around a prediction P: P / (1 + hi) to
    P / (1 + lo) for the quantiles lo and hi of the signed errors; and its rows."""
    out = {}
    for name, keep in (("small", lambda b: b <= SMALL), ("large", lambda b: b > SMALL)):
        e = [x / 100.0 for x, r in held if keep(r["size_bytes"])]
        if e:
            # the order statistics at or beyond each quantile (never between two rows), so the
            # band holds at least its central 90% of these rows
            e.sort()
            lo = e[math.floor(BAND_QUANTILES[0] * (len(e) - 1))]
            hi = e[math.ceil(BAND_QUANTILES[1] * (len(e) - 1))]
            out[name] = {"low": 1 / (1 + hi), "high": 1 / (1 + lo), "rows": len(e)}
    return out


def stats(errs):
    a = [abs(e) for e in errs]
    return (statistics.median(a), max(a)) if a else (0, 0)


def conflicts(usable, pred):
    """Conflict sets (issue 25): rows the model cannot tell apart (their predictions are equal
    at every parameter point the fits evaluated: hundreds; same size and nodes) whose published
    values differ by more than CONFLICT_RATIO between two of them with the same NCCL version or
    an unknown one. Each set as its rows; every row of a group that holds such a pair."""
    by_input = {}
    for r, k in usable:
        key = (r["size_bytes"], r["nodes"]) + tuple(round(out[k][r["size_bytes"]], 9)
                                                     for _, out in sorted(pred.items()))
        by_input.setdefault(key, []).append(r)
    found = []
    for rows in by_input.values():
        if any(a["busbw_gbs"] > CONFLICT_RATIO * b["busbw_gbs"] for a in rows for b in rows
               if a["nccl_version"] == b["nccl_version"] or not a["nccl_version"]
               or not b["nccl_version"]):
            found.append(sorted(rows, key=lambda r: r["busbw_gbs"]))
    return found


def acceptance(usable, errs, sets, predicted):
    """The rows issue 25's bar fails: outside a conflict set, off by more than BOUND; inside
    one, outside the set's published range and more than BOUND from its nearest member."""
    member = {r["id"]: rows for rows in sets for r in rows}
    failed = []
    for (r, k), e in zip(usable, errs):
        rows = member.get(r["id"])
        if rows is None:
            if abs(e) > BOUND:
                failed.append((e, r))
            continue
        p = predicted[k][r["size_bytes"]]
        lo, hi = rows[0]["busbw_gbs"], rows[-1]["busbw_gbs"]
        near = min(abs(p - x["busbw_gbs"]) / x["busbw_gbs"] for x in rows) * 100
        if not lo <= p <= hi and near > BOUND:
            failed.append((e, r))
    return failed


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
        pool = ThreadPoolExecutor(max_workers=8)
        pred = {}

        def evaluate(pt):
            """Predicts every row group with the parameters pt (once: cached)."""
            if pt in pred:
                return pred[pt]
            calib = os.path.join(tmp, "c%d.json" % len(pred))
            json.dump({"schema": "topotune/calibration/1", "params": dict(zip(GRID, pt))},
                      open(calib, "w", encoding="utf-8"))
            keys = list(groups)
            outs = pool.map(lambda k: predict_all(args.bin, k[0], k[1], k[2], groups[k], calib), keys)
            pred[pt] = dict(zip(keys, outs))
            return pred[pt]

        def errors(pt, subset):
            out = evaluate(pt)
            missing = [r["id"] for r, k in subset if r["size_bytes"] not in out[k]]
            if missing:  # a usable row (predicted at NCCL's point) must be predicted everywhere
                sys.exit("calibrate-model: topotune predict gave no number for %s at %s"
                         % (", ".join(missing), dict(zip(GRID, pt))))
            return [100.0 * (out[k][r["size_bytes"]] - r["busbw_gbs"]) / r["busbw_gbs"]
                    for r, k in subset]

        def cost(pt, subset):
            e = [abs(x) for x in errors(pt, subset)]
            return statistics.mean(e) + EXCESS_WEIGHT * statistics.mean(max(0, x - BOUND) for x in e)

        def fit(subset):
            """Coordinate descent over the grid from NCCL's model and from the middle of each
            range: each parameter in turn set to its best grid value, until none moves (at most
            8 rounds)."""
            best, best_cost = None, None
            starts = [NCCL, tuple(v[len(v) // 2] for v in GRID.values())]
            for pt in starts:
                pt = tuple(min(v, key=lambda g, x=x: abs(g - x)) for v, x in zip(GRID.values(), pt))
                c = cost(pt, subset)
                for _ in range(8):
                    moved = False
                    for i, values in enumerate(GRID.values()):
                        for v in values:
                            q = pt[:i] + (v,) + pt[i + 1:]
                            cq = cost(q, subset)
                            if cq < c - 1e-9:
                                pt, c, moved = q, cq, True
                    if not moved:
                        break
                if best_cost is None or c < best_cost:
                    best, best_cost = pt, c
            return best

        first = evaluate(NCCL)
        usable = [(r, k) for r, k in used if r["size_bytes"] in first[k]]
        best = fit(usable)
        classes = sorted({r["system_class"] for r, _ in usable})
        loo_rows, per_class = held_out(usable, lambda r: r["system_class"], fit, errors)
        loo = [x for x, _ in loo_rows]
        loo_fits = {c: pt for c, (pt, _) in per_class.items()}
        loso_rows, per_source = held_out(usable, source_of, fit, errors)
        loso = [x for x, _ in loso_rows]
        nccl = NCCL
        print("Calibration of the topotune model against %d published rows (%d system types, node "
              "counts %s)" % (len(usable), len(classes), sorted({r["nodes"] for r, _ in usable})))
        print("parameters: %s" % ", ".join(GRID))
        if nccl:
            m, x = stats(errors(nccl, usable))
            print("NCCL's own model %-30s median |error| %5.1f%%  max %6.1f%%" % (str(nccl), m, x))
        m, x = stats(errors(best, usable))
        print("whole-table fit  %-30s median |error| %5.1f%%  max %6.1f%%" % (str(best), m, x))
        m, x = stats(loso)
        print("leave-one-source-out (held-out rows only)       median |error| %5.1f%%  max %6.1f%%"
              "  (%d sources)" % (m, x, len(per_source)))
        for g, (pt, e) in sorted(per_source.items(), key=lambda x: -stats(x[1][1])[0]):
            print("  %-44s %3d rows  median %5.1f%%  max %6.1f%%" % (g[:44], len(e), *stats(e)))
        m, x = stats(loo)
        print("leave-one-system-out (held-out rows only)       median |error| %5.1f%%  max %6.1f%%" % (m, x))
        for c in classes:
            e = per_class[c][1]
            print("  %-20s fitted without it: %-28s median %5.1f%%  max %6.1f%%" % (c, loo_fits[c], *stats(e)))
        bands = band(loso_rows)
        print("band of a prediction P (the central %d%% of the leave-one-source-out errors):"
              % round(100 * (BAND_QUANTILES[1] - BAND_QUANTILES[0])))
        for name, b in bands.items():
            print("  %-5s (%s 4 MiB) P x %.3f to P x %.3f  (%d rows)"
                  % (name, "<=" if name == "small" else ">", b["low"], b["high"], b["rows"]))
        errs = errors(best, usable)
        sets = conflicts(usable, pred)
        print("conflict sets (rows the model cannot tell apart, published more than %.1fx apart):"
              " %d" % (CONFLICT_RATIO, len(sets)))
        for rows in sets:
            print("  " + ", ".join("%s %.1f" % (r["id"], r["busbw_gbs"]) for r in rows))
        for name, pt in (("whole-table fit", best), ("the program's defaults", DEFAULTS)):
            e = errors(pt, usable)
            failed = acceptance(usable, e, sets, evaluate(pt))
            print("%s %s: median |error| %.1f%%; rows off by more than %.0f%% (in a conflict set:"
                  " outside its range and its nearest member): %d of %d"
                  % (name, str(pt), stats(e)[0], BOUND, len(failed), len(usable)))
        print("rows the whole-table fit is furthest from:")
        for e, (r, k) in sorted(zip(errs, usable), key=lambda x: -abs(x[0]))[:WORST]:
            print("  %-36s %-18s %3d nodes %6s  published %7.1f  predicted %7.1f  %+6.1f%%"
                  % (r["id"], r["system_class"], r["nodes"], me.human(r["size_bytes"]),
                     r["busbw_gbs"], evaluate(best)[k][r["size_bytes"]], e))
        head = ("source", "hardware", "NCCL", "nodes", "size", "published", "predicted", "error")
        if args.markdown:
            print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
        for (r, k), e in zip(usable, errs):
            src = r["source"]
            cells = ("[%s](%s)" % (r["system"], src["url"]), r["system_class"], r.get("nccl_version") or "?", str(r["nodes"]),
                     me.human(r["size_bytes"]), "%.1f" % r["busbw_gbs"],
                     "%.1f" % evaluate(best)[k][r["size_bytes"]], "%+.1f%%" % e)
            if args.markdown:
                print("| " + " | ".join(cells) + " |")
        if args.json:
            json.dump({"schema": "topotune/calibration-fit/1", "grid": GRID,
                       "fit": dict(zip(GRID, best)), "whole": stats(errs), "loo": stats(loo),
                       "loso": stats(loso), "band": bands,
                       "loso_sources": {g: stats(e) for g, (_, e) in per_source.items()},
                       "loo_fits": {c: dict(zip(GRID, p)) for c, p in loo_fits.items()}},
                      open(args.json, "w", encoding="utf-8"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
