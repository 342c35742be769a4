#!/usr/bin/env python3
"""The model against published nccl-tests results of the collectives other than all_reduce.

Reads bench/perf/calibration/published-collectives.json (all_gather, reduce_scatter, alltoall,
broadcast, reduce, sendrecv rows, each with its source), writes each usable row's system as a
topotune hardware spec, and predicts it with `topotune predict -C COLLECTIVE`. The model's shared
parameters come from the all_reduce calibration (calibrate-model.py, model/params.c's defaults):
no row of this table is fitted to by them. One parameter only the point-to-point collectives
read, p2p_scale (the share of the links' rate alltoall and sendrecv reach inside a node), is
fitted here on a grid, and reported the way a skeptic would:
  - with NCCL's link rates (p2p_scale 1): nothing fitted on this table at all;
  - the whole-table fit;
  - leave-one-system-out: each hardware type (system_class) predicted with p2p_scale fitted
    on the others' rows;
  - leave-one-source-out: each source's rows predicted with p2p_scale fitted on the other sources.
Each per collective: rows, median and max |error| of the held-out predictions. Then the rows off by
more than 30% under leave-one-source-out, and (--markdown) the table. A report: exits 0 when it ran.
usage: calibrate-collectives.py [--bin TOPOTUNE] [--markdown] [--json FILE]
"""
import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
spec_ = importlib.util.spec_from_file_location("model_error", os.path.join(HERE, "model-error.py"))
me = importlib.util.module_from_spec(spec_)
spec_.loader.exec_module(me)
spec_ = importlib.util.spec_from_file_location("calibrate_model",
                                               os.path.join(HERE, "calibrate-model.py"))
cm = importlib.util.module_from_spec(spec_)
spec_.loader.exec_module(cm)
PUBLISHED = os.path.join(HERE, "calibration", "published-collectives.json")
GRID = [round(0.60 + 0.02 * i, 2) for i in range(31)]  # p2p_scale 0.60 .. 1.20
BOUND = 30.0
S, NVL72 = me.spec, me.nvl72
A100_NDMV4 = S("A100-SXM4-80GB", [("CX6-200G-IB", 8)], "amd")
RTX2080TI = S("RTX-2080-TI", [], fabric="pcie", count=2, sockets=1)
# Panlichen/nccl-tests (the OCCL project): one folder per machine, NCCL_ALGO=Ring NCCL_PROTO=Simple.
PAN_H800 = (S("H800-SXM5-80GB", []), "SXM on an NVSwitch baseboard (the name has no PCIe); CPU not "
            "stated (one node: 2 Intel sockets assumed)")
PAN_A100_PCIE = (S("A100-PCIE-40GB", [], fabric="pcie"),
                 "no NVLink bridges (not stated); 2 sockets of 4 GPUs each (the bus ids' two groups)")
PAN_4090 = (S("RTX-4090", [], fabric="pcie"), "CPU not stated (2 Intel sockets assumed); P2P as the "
            "stock driver reports it (none: NCCL_IGNORE_DISABLED_P2P=1 makes NCCL go through host "
            "memory without an error)")
PAN_4090X2 = (S("RTX-4090", [], fabric="pcie", count=2), PAN_4090[1])
THOMAS_A100_PCIE = (S("A100-PCIE-40GB", [("CX6-200G-IB", 1)], fabric="pcie", count=1),
                    "the HCA as 200G HDR (NCCL's NET[25.0]); CPU not stated (2 Intel sockets)")
# The SuperBench test data's one A100 run, whose five collectives are five row groups.
SUPERBENCH_A100 = (S("A100-SXM4-40GB", [], "amd"),
                   "an Azure ND A100 v4 VM (from the host name): two AMD sockets; one node, "
                   "NICs unused")
# Together AI's B200 cluster, every run of its sendrecv series (2 to 16 nodes).
TOGETHER_B200 = (S("B200-SXM-180GB", [("CX7-400G-IB", 8)]),
                 "8x 400G IB (the series' report: 8 ConnectX-7)")
# SURF Snellius' H100 nodes, as model-error.py writes them.
SNELLIUS_H100 = (me.SNELLIUS_H100, me.SNELLIUS_ASSUMED)

# System per row group (the row id without its size), as model-error.py's: a spec and what was
# assumed to write it ("" when the source states everything the model reads).
SYSTEMS = {
    "oci-gb200-alltoall-1n": (NVL72("GB200-186GB", [("CX7-400G-IB", 4)]),
                              "4x 400G IB (the 2-host command's four HCAs)"),
    "oci-gb200-alltoall-2n": (NVL72("GB200-186GB", [("CX7-400G-IB", 4)]),
                              "4x 400G IB (the 2-host command's four HCAs)"),
    "oci-gb200-alltoall-16n": (NVL72("GB200-186GB", [("CX7-400G-IB", 4)]),
                               "4x 400G IB; 16 hosts in one rack's NVLink domain"),
    "oci-gb200-alltoall-32n": (NVL72("GB200-186GB", [("CX7-400G-IB", 4)], 64),
                               "4x 400G IB; 16 hosts per rack (the title: 2 racks)"),
    "oci-gb200-alltoall-48n": (NVL72("GB200-186GB", [("CX7-400G-IB", 4)], 64),
                               "4x 400G IB; 16 hosts per rack"),
    "oci-gb300-alltoall-1n": (NVL72("GB300-288GB", [("ROCE-400G", 8)]), ""),
    "oci-gb300-alltoall-2n": (NVL72("GB300-288GB", [("ROCE-400G", 8)]), ""),
    "oci-gb300-alltoall-16n": (NVL72("GB300-288GB", [("ROCE-400G", 8)]), ""),
    "oci-gb300-alltoall-32n": (NVL72("GB300-288GB", [("ROCE-400G", 8)], 64), "16 hosts per rack"),
    "oci-b300-alltoall-1n": (S("B300-SXM-288GB", [("ROCE-400G", 16)]), ""),
    "oci-b300-alltoall-2n": (S("B300-SXM-288GB", [("ROCE-400G", 16)]), ""),
    "gcp-a4xmax-xdomain-all_gather-2n": (NVL72("GB300-288GB", [("ROCE-800G", 4)], 4),
                                         "A4X Max: one 800G RoCE NIC per GPU (GCP machine type); "
                                         "the two nodes in different NVLink domains"),
    "gcp-a4xmax-jobset-all_gather-2n": (NVL72("GB300-288GB", [("ROCE-800G", 4)], 4),
                                        "A4X Max: one 800G RoCE NIC per GPU (GCP machine type); "
                                        "placement not stated: as different domains"),
    "gcp-a4-esaaren-all_gather-2n": (S("B200-SXM-180GB", [("ROCE-400G", 8)]),
                                     "A4: 8x 400G RoCE (GCP machine type)"),
    "liplus-a100-sendrecv-1n": (A100_NDMV4, "CPU not stated"),
    "autodl-2080ti-all_gather-1n": (RTX2080TI, "CPU not stated"),
    "autodl-2080ti-broadcast-1n": (RTX2080TI, "CPU not stated"),
    "autodl-2080ti-reduce-1n": (RTX2080TI, "CPU not stated"),
    "autodl-2080ti-alltoall-1n": (RTX2080TI, "CPU not stated"),
    "wohlbier-dgx2-broadcast-1n": (S("V100-SXM3-32GB", [], count=12),
                                   "DGX-2's CPUs (two Intel Xeon) from its baseboard, not the "
                                   "source; 12 of its 16 GPUs on the NVSwitch"),
    "wohlbier-dgx2-reduce-1n": (S("V100-SXM3-32GB", [], count=12),
                                "DGX-2's CPUs (two Intel Xeon) from its baseboard, not the "
                                "source; 12 of its 16 GPUs on the NVSwitch"),
    "superbench-a100-broadcast-1n": SUPERBENCH_A100,
    "superbench-a100-reduce-1n": SUPERBENCH_A100,
    "superbench-a100-all_gather-1n": SUPERBENCH_A100,
    "superbench-a100-reduce_scatter-1n": SUPERBENCH_A100,
    "coreweave-a100-broadcast-1n": me.COREWEAVE_A100,
    "coreweave-a100-all_gather-1n": me.COREWEAVE_A100,
    "coreweave-a100-alltoall-1n": me.COREWEAVE_A100,
    "vp-h100-all_gather-4n": (S("H100-SXM5-80GB", [("CX7-400G-IB", 8)]), "8x 400G IB (README)"),
    "vp-h100-reduce-4n": (S("H100-SXM5-80GB", [("CX7-400G-IB", 8)]), "8x 400G IB (README)"),
    "vp-h100-broadcast-4n": (S("H100-SXM5-80GB", [("CX7-400G-IB", 8)]), "8x 400G IB (README)"),
    "azure-ndmv4-all_gather-1n8g": (A100_NDMV4, ""),
    "azure-ndmv4-alltoall-1n8g": (A100_NDMV4, ""),
    "azure-ndmv4-all_gather-2n1g": (S("A100-SXM4-80GB", [("CX6-200G-IB", 1)], "amd", count=1),
                                    "one GPU per node with its one 200G HDR NIC"),
    "azure-ndmv4-alltoall-2n1g": (S("A100-SXM4-80GB", [("CX6-200G-IB", 1)], "amd", count=1),
                                  "one GPU per node with its one 200G HDR NIC"),
    "azure-ndmv4-all_gather-2n8g": (A100_NDMV4, "8x 200G HDR IB (Azure NDm A100 v4 spec)"),
    "azure-ndmv4-alltoall-2n8g": (A100_NDMV4, "8x 200G HDR IB (Azure NDm A100 v4 spec)"),
    "together-h100-reduce_scatter-ring-1n": (S("H100-SXM5-80GB", [("CX7-400G-IB", 8)]),
                                             "SXM and NICs not stated (one node: NICs unused); "
                                             "the file's name says ring, its settings are not "
                                             "printed: NCCL's own choice predicted"),
    "together-b200-sendrecv-2n": TOGETHER_B200,
    "together-b200-sendrecv-4n": TOGETHER_B200,
    "together-b200-sendrecv-8n": TOGETHER_B200,
    "together-b200-sendrecv-16n": TOGETHER_B200,
    "coreweave-a100-sendrecv-1n2g": (S("A100-SXM4-80GB", [], count=2),
                                     "2 of the node's 8 GPUs on its NVSwitch; CPU not stated "
                                     "(one node: 2 Intel sockets assumed)"),
    "xxrjun-cluster01-h100-reduce_scatter-1n": (S("H100-SXM5-80GB", [("CX7-400G-IB", 8)]),
                                                "NICs not stated (one node: unused)"),
    "xxrjun-cluster01-h100-sendrecv-1n": (S("H100-SXM5-80GB", [("CX7-400G-IB", 8)]),
                                          "NICs not stated (one node: unused)"),
    "xxrjun-cluster01-h100-reduce_scatter-10n": (S("H100-SXM5-80GB", [("CX7-400G-IB", 8)]),
                                                 "NICs not stated: 8x 400G, from the same run's "
                                                 "one-GPU-per-node all_reduce at 48.9 GB/s"),
    "xxrjun-cluster01-h100-sendrecv-10n": (S("H100-SXM5-80GB", [("CX7-400G-IB", 8)]),
                                           "NICs not stated: 8x 400G, from the same run's "
                                           "one-GPU-per-node all_reduce at 48.9 GB/s"),
    "snellius-h100-all_gather-1n": SNELLIUS_H100,
    "snellius-h100-reduce_scatter-1n": SNELLIUS_H100,
    "snellius-h100-all_gather-2n": SNELLIUS_H100,
    "snellius-h100-reduce_scatter-2n": SNELLIUS_H100,
    **{"panlichen-%s-%s-1n" % (m, c): s for m, s in (("h800", PAN_H800),
                                                     ("a100pcie", PAN_A100_PCIE),
                                                     ("4090-para", PAN_4090),
                                                     ("4090x2-para", PAN_4090X2))
       for c in ("all_gather", "reduce_scatter", "broadcast", "reduce")},
    **{"thomaslie-a100pcie-%s-2n1g" % c: THOMAS_A100_PCIE
       for c in ("all_gather", "reduce_scatter", "broadcast", "reduce")},
}
# Row groups left out on purpose, and why (besides flagged rows).
NOT_USED = {
    **{"panlichen-v100-%s-1n" % c: "V100-SXM2 hybrid cube-mesh: a spec's fabric is nvswitch, "
                                   "nvlink (pairs) or pcie"
       for c in ("all_gather", "reduce_scatter", "broadcast", "reduce")},
    "together-h100-reduce_scatter-nvls-1n": "the same host and run as the ring file, within 1% of "
                                            "it at every size: not an independent measurement",
}
P2P = ("alltoall", "sendrecv")  # the collectives that read p2p_scale
# The groups model/params.c has a band for (model_band_for), each with its collectives.
BAND_GROUPS = (("chain", ("broadcast", "reduce")),
               ("other", ("all_gather", "reduce_scatter", "alltoall", "sendrecv")))


def predict_group(binary, path, nodes, coll, env, sizes, calib):
    """Every size's predicted busbw, with the row's stated NCCL variables: one predict call per
    odd factor of the sizes (3 x 2^k sizes from one, powers of two from another), each doubling
    from half the smallest size of its kind."""
    got = {}
    starts = {}
    for s in sizes:
        odd = s >> ((s & -s).bit_length() - 1)
        starts[odd] = min(starts.get(odd, s), s)
    for start in sorted(starts.values()):
        cmd = [binary, "predict", "--input", path, "--nodes", str(nodes), "-C", coll, "-b",
               str(max(1, start // 2)), "-e", str(max(sizes) * 2), "--json", "--calibration",
               calib]
        for var in env:
            cmd += ["--env", var]
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
        for line in p.stdout.splitlines():
            ev = json.loads(line) if line.startswith("{") else {}
            if ev.get("event") == "size" and ev.get("predicted"):
                got[ev["size"]] = ev["busbw"]
    out = {}
    for s in sizes:
        # nccl-tests' size of a collective in parts may round below the row's (a part of whole
        # elements per rank): the nearest size, never another size's value
        near = min(got, key=lambda x, s=s: abs(x - s)) if got else None
        if near is None or abs(near - s) > max(64, s // 100):
            raise SystemExit("calibrate-collectives: no prediction of %s at %d B for %s (%s)"
                             % (coll, s, path, p.stderr.strip()[-300:]))
        out[s] = got[near]
    return out


def stats(errs):
    a = [abs(x) for x in errs]
    return (statistics.median(a), max(a)) if a else (0.0, 0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.environ.get("TOPOTUNE_BIN",
                                                    os.path.join(me.ROOT, "build", "topotune")))
    ap.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    ap.add_argument("--json", metavar="FILE", help="also write the fit and errors as JSON")
    args = ap.parse_args()
    rows = json.load(open(PUBLISHED, encoding="utf-8"))["rows"]
    used, groups, skipped = [], {}, {}
    with tempfile.TemporaryDirectory(prefix="topotune-calibrate-coll.") as tmp:
        for row in rows:
            g = me.group_of(row)
            if any(f in me.SKIP_FLAGS for f in row["flags"]):
                skipped[g] = "flagged " + ", ".join(f for f in row["flags"] if f in me.SKIP_FLAGS)
                continue
            if g in NOT_USED or g not in SYSTEMS:
                skipped[g] = NOT_USED.get(g, "no spec mapping in calibrate-collectives.py")
                continue
            sp = dict(SYSTEMS[g][0], schema="topotune/spec/1", name=g, count=row["gpus_per_node"])
            path = os.path.join(tmp, g + ".json")
            json.dump(sp, open(path, "w", encoding="utf-8"))
            env = tuple(me.FLAG_ENV[f] for f in row["flags"] if f in me.FLAG_ENV)
            key = (path, row["nodes"], row["collective"], env)
            groups.setdefault(key, set()).add(row["size_bytes"])
            used.append((row, key))
        pool = ThreadPoolExecutor(max_workers=4)
        pred = {}

        def evaluate(p2p):
            if p2p not in pred:
                calib = os.path.join(tmp, "p2p-%s.json" % p2p)
                json.dump({"schema": "topotune/calibration/1", "params": {"p2p_scale": p2p}},
                          open(calib, "w", encoding="utf-8"))
                keys = list(groups)
                outs = pool.map(lambda k: predict_group(args.bin, k[0], k[1], k[2], k[3],
                                                        groups[k], calib), keys)
                pred[p2p] = dict(zip(keys, outs))
            return pred[p2p]

        def errors(p2p, subset):
            out = evaluate(p2p)
            return [100.0 * (out[k][r["size_bytes"]] - r["busbw_gbs"]) / r["busbw_gbs"]
                    for r, k in subset]

        def fit(subset):
            """p2p_scale with the least mean |error| on the subset's point-to-point rows (1,
            NCCL's link rate, when it has none)."""
            p2p_rows = [x for x in subset if x[0]["collective"] in P2P]
            if not p2p_rows:
                return 1.0
            return min(GRID, key=lambda v: (statistics.mean(abs(e) for e in errors(v, p2p_rows)),
                                            abs(v - 1)))

        def held_out(key_of):
            errs, fits = {}, {}
            for k in sorted({key_of(r) for r, _ in used}):
                test = [x for x in used if key_of(x[0]) == k]
                fits[k] = fit([x for x in used if key_of(x[0]) != k])
                for (r, key), e in zip(test, errors(fits[k], test)):
                    errs[r["id"]] = e
            return [errs[r["id"]] for r, _ in used], fits

        best = fit(used)
        nccl = errors(1.0, used)
        whole = errors(best, used)
        losys, sys_fits = held_out(lambda r: r["system_class"])
        loso, src_fits = held_out(lambda r: r["source"]["url"].split("/blob/")[0])
        colls = sorted({r["collective"] for r, _ in used})
        print("The topotune model against %d published rows of %s (%d sources, %d system types); "
              "the shared parameters are the all_reduce calibration's, p2p_scale is fitted here"
              % (len(used), ", ".join(colls), len(src_fits), len(sys_fits)))
        print("p2p_scale: whole-table fit %.2f; leave-one-system-out fits %s" % (
            best, ", ".join("%s %.2f" % (k, v) for k, v in sys_fits.items())))
        print("%-15s %5s  %-17s %-17s %-17s %-17s" % ("collective", "rows", "NCCL link rates",
                                                      "whole-table fit", "leave-1-system-out",
                                                      "leave-1-source-out"))
        report = {}
        for c in colls + ["all"]:
            idx = [i for i, (r, _) in enumerate(used) if c == "all" or r["collective"] == c]
            cells = []
            for errs in (nccl, whole, losys, loso):
                m, x = stats([errs[i] for i in idx])
                cells.append("%5.1f%% max %5.1f%%" % (m, x))
            report[c] = {"rows": len(idx), **{name: stats([errs[i] for i in idx]) for name, errs in
                         (("nccl", nccl), ("whole", whole), ("losys", losys), ("loso", loso))}}
            print("%-15s %5d  %s" % (c, len(idx), "  ".join(cells)))
        print("rows off by more than %.0f%% held out by source:" % BOUND)
        for (r, k), e in zip(used, loso):
            if abs(e) > BOUND:
                print("  %-44s %-14s %3d nodes %7s published %7.2f  %+7.1f%%" % (
                    r["id"], r["collective"], r["nodes"], me.human(r["size_bytes"]),
                    r["busbw_gbs"], e))
        for g, why in sorted(skipped.items()):
            print("  not used: %s (%s)" % (g, why))
        # model/params.c's bands, cut as calibrate-model.py cuts all_reduce's: one for NCCL's
        # chains (broadcast, reduce), one for the rest, each group's rows pooled (one collective
        # alone has as few as 3 rows of a size class)
        bands = {}
        for group, members in BAND_GROUPS:
            bands[group] = cm.band([(e, r) for (r, _), e in zip(used, loso)
                                    if r["collective"] in members])
            print("band of a prediction P of %s (the central %d%% of their leave-one-source-out "
                  "errors):" % (", ".join(members), round(100 * (cm.BAND_QUANTILES[1] -
                                                                     cm.BAND_QUANTILES[0]))))
            for name, b in bands[group].items():
                print("  %-5s (%s 4 MiB) P x %.3f to P x %.3f  (%d rows)"
                      % (name, "<=" if name == "small" else ">", b["low"], b["high"], b["rows"]))
        if args.markdown:
            head = ("source", "hardware", "collective", "nodes", "size", "published",
                    "predicted", "held out by system")
            print("\n| " + " | ".join(head) + " |\n|" + "---|" * len(head))
            for (r, k), e, h in zip(used, whole, losys):
                out = evaluate(best)[k][r["size_bytes"]]
                print("| [%s](%s) | %s | %s | %d | %s | %.2f | %.2f | %+.1f%% |" % (
                    r["system"], r["source"]["url"], r["system_class"], r["collective"],
                    r["nodes"], me.human(r["size_bytes"]), r["busbw_gbs"], out, h))
        if args.json:
            json.dump({"p2p_scale": best, "by_collective": report, "losys_fits": sys_fits,
                       "band": bands},
                      open(args.json, "w", encoding="utf-8"), indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
