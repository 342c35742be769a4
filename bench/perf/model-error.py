#!/usr/bin/env python3
"""How far the current model (topotune predict) is from published all_reduce busbw.

Reads bench/perf/calibration/published.json, expresses each usable row's system as a topotune
hardware spec (topotune/spec/1, see topo/read-spec.c), runs `topotune predict` at the row's size
and node count, and prints the predicted busbw next to the published one with the error
(predicted - published) / published. A report, not a test: it always exits 0 when it could run.

Facts a source did not state but the cloud's public instance specification does (NIC count and
speed) are marked "assumed" below; rows whose hardware cannot be expressed are skipped with why.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PUBLISHED = os.path.join(HERE, "calibration", "published.json")

SKIP_FLAGS = ("suspect_misconfigured", "reported_as_slow")


def spec(gpu, nics, vendor="intel", fabric="nvswitch", count=8, sockets=2, **extra):
    return dict({"gpu": gpu, "count": count, "fabric": fabric,
                 "nics": [{"model": m, "count": c, "per": "gpu"} for m, c in nics],
                 "cpu": {"vendor": vendor, "sockets": sockets}}, **extra)


def gh200(nics, count=4, sockets=4):
    """A GH200 node: superchips joined all to all by NVLink, a Grace CPU each, Slingshot."""
    return spec("GH200-96GB", [("SLINGSHOT-200G", nics)], "arm", "mesh", count, sockets)


def nvl72(gpu, nics, domain=72):
    """A GB200/GB300 NVL72 compute tray: 4 GPUs, 2 Grace CPUs, in an NVLink domain."""
    return spec(gpu, nics, "arm", count=4, nvlink_domain=domain)


# SURF Snellius' H100 nodes: four GPUs, every pair on NVLink (NCCL: P2P between all, no NVSwitch).
# A CoreWeave node of 8 A100s (abhivijay96/nccl-tests' cw folder): one node, NICs unused; its
# other collectives are calibrate-collectives.py's.
COREWEAVE_A100 = (spec("A100-SXM4-80GB", []), "CPU not stated (one node: 2 Intel sockets "
                  "assumed); NVSwitch as on every 8x A100 SXM4 board")
SNELLIUS_H100 = spec("H100-SXM5-80GB", [("CX6-200G-IB", 4)], "amd", "mesh", 4)
SNELLIUS_ASSUMED = ("SXM5 (likely the 94 GB one) with 6 NVLinks between every pair and no "
                    "NVSwitch (the logs: P2P between all four, NVLS unavailable); two AMD "
                    "sockets (not stated); the four 200G IB HCAs as HDR")


# System per row group (the row id without its trailing size). Each entry: a spec, the
# assumptions made to write it (empty when the source states everything the model reads),
# or a reason the system cannot be expressed as a topotune hardware spec.
SYSTEMS = {
    "aws-p4de-2n": (spec("A100-SXM4-80GB", [("EFA-100G", 4)]), ""),
    "aws-p5-2n": (spec("H100-SXM5-80GB", [("EFA-100G", 32)]), ""),
    "aws-p5-2n-eks": (spec("H100-SXM5-80GB", [("EFA-100G", 32)]), ""),
    "aws-p5-1n-batch": (spec("H100-SXM5-80GB", [("EFA-100G", 32)]), ""),
    "aws-p5en-16n": (spec("H200-SXM5-141GB", [("EFA-200G", 16)]),
                     "EFA 3200 Gb/s per node: 16x 200G EFA v3 (AWS p5en spec)"),
    "azure-nd-a100-v4-1n": (spec("A100-SXM4-80GB", [("CX6-200G-IB", 8)], "amd"), ""),
    "azure-nd-h100-v5-1n": (spec("H100-SXM5-80GB", [("CX7-400G-IB", 8)]), ""),
    "azure-nd-h200-v5-1n": (spec("H200-SXM5-141GB", [("CX7-400G-IB", 8)]), ""),
    "azure-ndmv4-1n": (spec("A100-SXM4-80GB", [("CX6-200G-IB", 8)], "amd"), ""),
    "azure-ndmv4-2n": (spec("A100-SXM4-80GB", [("CX6-200G-IB", 8)], "amd"),
                       "8x 200G HDR IB (Azure NDm A100 v4 spec)"),
    "azure-ndmv4-2n1g": (spec("A100-SXM4-80GB", [("CX6-200G-IB", 1)], "amd", count=1),
                         "1 GPU per node with its one 200G HDR NIC (Azure NDm A100 v4 spec)"),
    "oci-b48-2n-default": (spec("A100-SXM4-40GB", [("ROCE-100G", 16)], "amd"),
                           "16 RoCE ports at 100G (OCI A100 shapes spec)"),
    "oci-b48-2n-ring": (spec("A100-SXM4-40GB", [("ROCE-100G", 16)], "amd"),
                        "16 RoCE ports at 100G (OCI A100 shapes spec)"),
    "oci-a100-2n-vf": (spec("A100-SXM4-40GB", [("ROCE-100G", 16)], "amd"),
                       "16 RoCE VFs at 100G (OCI A100 shapes spec)"),
    "oci-gpu48-2n": (spec("A100-SXM4-40GB", [("ROCE-100G", 16)], "amd"), ""),
    "oci-gpu48-2n-ubuntu": (spec("A100-SXM4-40GB", [("ROCE-100G", 16)], "amd"), ""),
    "oci-gpu48-1n": (spec("A100-SXM4-40GB", [("ROCE-100G", 16)], "amd"), ""),
    "oci-h100-2n": (spec("H100-SXM5-80GB", [("ROCE-200G", 16)]),
                    "16 RoCE ports at 200G (OCI BM.GPU.H100.8 spec)"),
    "gcp-a3mega-2n": "GPUDirect-TCPXO transport has no topotune NIC kind (eth would model sockets)",
    "stas-a100-1n": (spec("A100-SXM4-80GB", [("CX6-200G-IB", 8)]), "A100 memory size and CPU"),
    "stas-h200-1n-nvls": (spec("H200-SXM5-141GB", [("CX7-400G-IB", 8)]), ""),
    "stas-h200-1n-ring": (spec("H200-SXM5-141GB", [("CX7-400G-IB", 8)]), ""),
    "stas-p5en-4n": (spec("H200-SXM5-141GB", [("EFA-200G", 16)]),
                     "EFA 3200 Gb/s per node: 16x 200G EFA v3 (AWS p5en spec)"),
    "stas-p6b200-1n": (spec("B200-SXM-180GB", [("EFA-400G", 8)]),
                       "8x 400G EFA v4 (AWS p6-b200 spec)"),
    "stas-p6b200-4n": (spec("B200-SXM-180GB", [("EFA-400G", 8)]),
                       "8x 400G EFA v4 (AWS p6-b200 spec)"),
    "ghi309-xe9680-2n": (spec("H100-SXM5-80GB", [("CX7-400G-IB", 8)]), ""),
    "ghi309-xe9680-4n": (spec("H100-SXM5-80GB", [("CX7-400G-IB", 8)]), "VMs modelled as bare metal"),
    "ghi309-gj-2n": (spec("H100-SXM5-80GB", [("CX7-400G-IB", 8)]), "8 NICs (reporter: IB 400G)"),
    "ghi309-gj-2n-ring-tuned": (spec("H100-SXM5-80GB", [("CX7-400G-IB", 8)]),
                                "8 NICs (reporter: IB 400G)"),
    "ghi309-gj-4n": (spec("H100-SXM5-80GB", [("CX7-400G-IB", 8)]), "8 NICs (reporter: IB 400G)"),
    "ghi309-gj-8n": (spec("H100-SXM5-80GB", [("CX7-400G-IB", 8)]), "8 NICs (reporter: IB 400G)"),
    "ghi309-gj-8n-tuned": (spec("H100-SXM5-80GB", [("CX7-400G-IB", 8)]),
                           "8 NICs (reporter: IB 400G)"),
    "vp-h100-1n": (spec("H100-SXM5-80GB", [("CX7-400G-IB", 8)]), ""),
    "vp-h100-4n": (spec("H100-SXM5-80GB", [("CX7-400G-IB", 8)]),
                   "8x 400G IB (README '3.2 Tbps'; 3 ports x 400G is below the 4-node busbw)"),
    "ghi322-h100-128n": "NIC count, speed and kind not stated",
    "ghnccl527-p4d-1n": (spec("A100-SXM4-40GB", [("EFA-100G", 4)]), ""),
    "ghnccl527-p4d-2n": (spec("A100-SXM4-40GB", [("EFA-100G", 4)]), ""),
    "ghnccl527-p4d-3n": (spec("A100-SXM4-40GB", [("EFA-100G", 4)]), ""),
    "ghnccl527-p4d-4n": (spec("A100-SXM4-40GB", [("EFA-100G", 4)]), ""),
    "oci-gb200-32n": (nvl72("GB200-186GB", [("ROCE-400G", 8)], 64),
                      "8x 400G RoCE per tray (OCI GB200-v3.4 shape table); 16 trays per rack"),
    "cw-gb200-18n": (nvl72("GB200-186GB", [("CX7-400G-IB", 4)]),
                     "4x 400G IB per tray (the GB200 NVL72 tray)"),
    "cw-gb200-32n": (nvl72("GB200-186GB", [("CX7-400G-IB", 4)], 64),
                     "4x 400G IB per tray; 16 trays per rack (128 ranks over 2 racks)"),
    "cw-gb200-360n": (nvl72("GB200-186GB", [("CX7-400G-IB", 4)]),
                      "4x 400G IB per tray (the GB200 NVL72 tray)"),
    "oci-gb300-1n": (nvl72("GB300-288GB", [("ROCE-400G", 8)]), ""),
    "oci-gb300-2n": (nvl72("GB300-288GB", [("ROCE-400G", 8)]), ""),
    "oci-gb300-16n": (nvl72("GB300-288GB", [("ROCE-400G", 8)]), ""),
    "oci-gb300-32n": (nvl72("GB300-288GB", [("ROCE-400G", 8)], 64), "16 hosts per rack"),
    "oci-qs-gb200-1n": (nvl72("GB200-186GB", [("CX7-400G-IB", 4)]),
                        "shape not stated: 4x 400G IB (BM.GPU.GB200.4)"),
    "oci-qs-gb200-16n": (nvl72("GB200-186GB", [("CX7-400G-IB", 4)]),
                         "shape not stated: 4x 400G IB (BM.GPU.GB200.4)"),
    "oci-qs-gb200-32n": (nvl72("GB200-186GB", [("CX7-400G-IB", 4)], 64),
                         "shape not stated: 4x 400G IB; 16 hosts per rack"),
    "oci-qs-gb200-48n": (nvl72("GB200-186GB", [("CX7-400G-IB", 4)], 64),
                         "shape not stated: 4x 400G IB; 16 hosts per rack"),
    "oci-oke-gb200-2n": (nvl72("GB200-186GB", [("ROCE-400G", 8)]),
                         "NICs not stated: 8x 400G RoCE (OCI GB200-v3.4)"),
    "oci-b300-1n": (spec("B300-SXM-288GB", [("ROCE-400G", 16)]), ""),
    "oci-b300-2n": (spec("B300-SXM-288GB", [("ROCE-400G", 16)]), ""),
    "cscs-alps-gh200-ofi-2n": (gh200(4), ""),
    "cscs-santis-gh200-cxiimage-2n": (gh200(4), "Alps' GH200 node (4 NICs) from cscs-docs"),
    "cscs-alps-gh200-sarus-1gpn-2n": (gh200(1, 1, 1), "one rank per node: its one NIC"),
    "olivia-gh200-apptainer-2n": (gh200(4), "4 NICs per node as Alps (not stated)"),
    "h100nvl-ss200-good-2n": (spec("H100-NVL-94GB", [("SLINGSHOT-200G", 2)], "amd", "pcie", 2),
                              "NVLink bridge and NIC count not stated: none, one NIC per GPU"),
    "h100pcie-nvlbridge-issue1161-1n": (spec("H100-PCIE-80GB", [], fabric="nvlink", count=2,
                                             sockets=1), "CPU not stated"),
    "rh-ocp-l40s-sock-2n": (spec("L40S", [("ROCE-400G", 1)], fabric="pcie", count=1), ""),
    "rh-ocp-l40s-roce-2n": (spec("L40S", [("ROCE-400G", 1)], fabric="pcie", count=2),
                            "the two GPUs on different sockets (bus 61 and e1)"),
    "rtxpro6000-grimulkan-4sw-1n": (spec("RTX-PRO-6000-BW", [], "amd", "pcie", 8, 1),
                                    "CPU vendor not stated; a summary table, not raw output"),
    "coreweave-a100-1n": COREWEAVE_A100,
    "wohlbier-dgx2-1n": (spec("V100-SXM3-32GB", [], count=12),
                         "DGX-2's CPUs (two Intel Xeon) from its baseboard, not the source"),
    "konnase-v100sxm2-1n": "V100-SXM2 hybrid cube-mesh: a spec's fabric is nvswitch, nvlink "
                           "(pairs) or pcie",
    "oci-bmgpu38-1n": "V100-SXM2 hybrid cube-mesh: a spec's fabric is nvswitch, nvlink (pairs) or pcie",
    "snellius-h100-1n": (SNELLIUS_H100, SNELLIUS_ASSUMED),
    "snellius-h100-2n": (SNELLIUS_H100, SNELLIUS_ASSUMED),
    "ghtg36-4090x4-1n": (spec("RTX-4090", [], "amd", fabric="pcie", count=4, sockets=1, p2p="ok"),
                         "P2P on: the thread is about the tinygrad driver that enables it; one "
                         "EPYC 7773X socket"),
    "nrel-kestrel-h100-16n": (spec("H100-SXM5-80GB", [("SLINGSHOT-200G", 2)], "amd", "mesh", 4),
                              "2x 200G Slingshot and 4 H100 SXM per node (NREL's Kestrel "
                              "configuration page); the GPUs all to all without NVSwitch"),
    "meta-gcm-a100-1n": (spec("A100-SXM4-80GB", []), "NVSwitch as on every 8x A100 SXM4 board; "
                         "CPU not stated (one node: NICs unused)"),
    "meta-gcm-a100-2n": (spec("A100-SXM4-80GB", [("CX6-200G-IB", 8)], "amd"),
                         "network not stated: Azure NDm A100 v4's 8x 200G HDR IB, from the "
                         "host names (fairwus3-*)"),
    "nebius-h200-2n": (spec("H200-SXM5-141GB", [("CX7-400G-IB", 8)]),
                       "8x 400G IB (Nebius' H200 nodes: 3.2 Tb/s InfiniBand); CPU not stated"),
    "gke-dranet-h200-2n1g": (spec("H200-SXM5-141GB", [("ROCE-400G", 1)], count=1),
                             "one 400G RoCE NIC per GPU (H200 on GKE: A3 Ultra, a3-ultragpu-8g)"),
    "gke-dranet-a4-b200-all_gather-2n": (spec("B200-SXM-180GB", [("ROCE-400G", 8)]),
                                         "A4: 8x 400G RoCE (GCP machine type)"),
    "gke-dranet-a4-b200-all_gather-1n2g": (spec("B200-SXM-180GB", [], count=2),
                                           "2 of the node's 8 GPUs on its NVSwitches; CPU not "
                                           "stated (one node: NICs unused)"),
    "gke-dranet-a4-b200-all_gather-2n1g": (spec("B200-SXM-180GB", [("ROCE-400G", 1)], count=1),
                                           "one 400G RoCE NIC per GPU (A4 machine type); the "
                                           "pod's second NIC taken as unused"),
    "dstack-gcp-a3mega-all_gather-2n": "GPUDirect-TCPXO transport has no topotune NIC kind "
                                       "(eth would model sockets)",
}

# The row's stated configuration, as NCCL variables the model honours.
FLAG_ENV = {
    "algo_forced_ring": "NCCL_ALGO=Ring",
    "nvls_disabled": "NCCL_NVLS_ENABLE=0",
    "proto_forced_ll128": "NCCL_PROTO=LL128",
    "proto_forced_simple": "NCCL_PROTO=Simple",
    "ib_disabled": "NCCL_IB_DISABLE=1",
}


def source_of(row):
    """The source's repository (or issue thread), whatever commit or file of it."""
    return row["source"]["url"].split("/blob/")[0].replace("https://github.com/", "")


def group_of(row):
    rid, size = row["id"], str(row["size_bytes"])
    return rid[: -len(size) - 1] if rid.endswith("-" + size) else rid


def node_band(n):
    return "1" if n == 1 else "2" if n == 2 else "4+" if n >= 4 else str(n)


def size_band(b):
    if b < 1 << 20:
        return "<1MiB"
    return "1MiB-256MiB" if b < 256 << 20 else ">=256MiB"


def human(b):
    for unit, s in (("G", 30), ("M", 20), ("K", 10)):
        if b >= 1 << s and b % (1 << s) == 0:
            return "%d%s" % (b >> s, unit)
    return str(b)


def predict(binary, path, row, env):
    cmd = [binary, "predict", "--input", path, "--nodes", str(row["nodes"]),
           "-C", row.get("collective", "all_reduce"),
           "-b", str(row["size_bytes"]), "-e", str(row["size_bytes"]), "--json"]
    for e in env:
        cmd += ["--env", e]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    ev = [json.loads(line) for line in p.stdout.splitlines() if line.startswith("{")]
    sizes = [e for e in ev if e.get("event") == "size"]
    if p.returncode != 0 or not sizes:
        end = [e for e in ev if e.get("event") == "end"]
        why = end[0].get("outcome") if end else (p.stderr.strip().splitlines() or ["?"])[-1]
        why = {"timeout": "predicts a hang"}.get(why, why)
        return None, "predict exit %d (%s)" % (p.returncode, why)
    s = sizes[0]
    if not s.get("predicted"):
        return None, "predict output not marked predicted"
    return s, None


def summarise(rows, key):
    groups = {}
    for r in rows:
        groups.setdefault(key(r), []).append(r["error_pct"])
    return {k: stats(v) for k, v in sorted(groups.items())}


def stats(errs):
    a = [abs(e) for e in errs]
    return {"rows": len(errs), "median_abs_error_pct": round(statistics.median(a), 1),
            "max_abs_error_pct": round(max(a), 1),
            "median_signed_error_pct": round(statistics.median(errs), 1)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.environ.get("TOPOTUNE_BIN",
                                                    os.path.join(ROOT, "build", "topotune")))
    ap.add_argument("--published", default=PUBLISHED)
    ap.add_argument("--json", metavar="FILE", help="also write rows and summary as JSON ('-': stdout)")
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit("model-error: no topotune binary at %s (build it or set TOPOTUNE_BIN)" % args.bin)
    with open(args.published, encoding="utf-8") as f:
        published = json.load(f)["rows"]

    used, skipped, jobs = [], [], []
    with tempfile.TemporaryDirectory(prefix="topotune-model-error.") as tmp:
        for row in published:
            g = group_of(row)
            bad = [f for f in row["flags"] if f in SKIP_FLAGS]
            system = SYSTEMS.get(g, "no spec mapping for this system in model-error.py")
            if bad:
                skipped.append((row, "flagged " + ",".join(bad)))
                continue
            if isinstance(system, str):
                skipped.append((row, "not expressible: " + system))
                continue
            sp, assumed = system
            sp = dict(sp, schema="topotune/spec/1", name=g, count=row["gpus_per_node"])
            path = os.path.join(tmp, g + ".json")
            if not os.path.exists(path):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(sp, f)
            env = [FLAG_ENV[f] for f in row["flags"] if f in FLAG_ENV]
            jobs.append((row, g, path, env, assumed, sp))
        with ThreadPoolExecutor(max_workers=8) as pool:
            results = list(pool.map(lambda j: predict(args.bin, j[2], j[0], j[3]), jobs))
    for (row, g, _, env, assumed, sp), (s, err) in zip(jobs, results):
        if err:
            skipped.append((row, "model gives no number: " + err))
            continue
        pub, pred = row["busbw_gbs"], s["busbw"]
        used.append({"id": row["id"], "collective": row.get("collective", "all_reduce"),
                     "source": source_of(row),
                     "system_class": row["system_class"], "nodes": row["nodes"],
                     "gpus_per_node": row["gpus_per_node"], "size_bytes": row["size_bytes"],
                     "published_busbw_gbs": pub, "predicted_busbw_gbs": round(pred, 2),
                     "predicted_algo": s.get("algo"), "predicted_proto": s.get("proto"),
                     "error_pct": round(100.0 * (pred - pub) / pub, 1), "env": env,
                     "flags": row["flags"], "assumed": assumed, "spec": sp})

    colls = sorted({r["collective"] for r in used})
    print("Model error vs published %s busbw (GB/s); error = (predicted - published) / published"
          % ", ".join(colls or ["all_reduce"]))
    print("%-44s %-18s %5s %5s %9s %9s %7s %-15s" % (
        "id", "system_class", "nodes", "size", "published", "predicted", "err%", "predicted algo"))
    for r in used:
        algo = "%s/%s" % (r["predicted_algo"], r["predicted_proto"])
        mark = "*" if r["env"] else ""
        print("%-44.44s %-18.18s %5d %5s %9.2f %9.2f %+7.1f %-15.15s%s" % (
            r["id"], r["system_class"], r["nodes"], human(r["size_bytes"]),
            r["published_busbw_gbs"], r["predicted_busbw_gbs"], r["error_pct"], algo, mark))
    print("* predicted with the row's stated NCCL_ALGO/NCCL_PROTO/NCCL_NVLS_ENABLE")

    summary = {"rows_used": len(used), "rows_skipped": len(skipped), "skipped_by_reason": {}}
    for row, why in skipped:
        summary["skipped_by_reason"].setdefault(why, []).append(row["id"])
    if used:
        summary["all"] = stats([r["error_pct"] for r in used])
        summary["by_system_class"] = summarise(used, lambda r: r["system_class"])
        summary["by_nodes"] = summarise(used, lambda r: node_band(r["nodes"]))
        summary["by_size"] = summarise(used, lambda r: size_band(r["size_bytes"]))
        summary["by_collective"] = summarise(used, lambda r: r["collective"])
        summary["by_source"] = summarise(used, lambda r: r["source"])
    assumed = sorted({(r["id"].rsplit("-", 1)[0], r["assumed"]) for r in used if r["assumed"]})

    print()
    print("rows used: %d   rows skipped: %d" % (len(used), len(skipped)))
    for why, ids in summary["skipped_by_reason"].items():
        print("  skipped %2d: %s" % (len(ids), why[:100]))
        groups = sorted({group_of(r) for r, w in skipped if w == why})
        print("              %s" % ", ".join(groups)[:104])
    print("assumed (not stated by the source), per row group:")
    for g, a in assumed:
        print("  %-26s %s" % (g, a[:90]))
    if used:
        print()
        print("|error| of predicted vs published: %-22s %5s %8s %8s %10s" % (
            "group", "rows", "median%", "max%", "med.signed%"))

        def line(label, st):
            print("  %-56s %5d %8.1f %8.1f %+10.1f" % (label, st["rows"], st["median_abs_error_pct"],
                                                        st["max_abs_error_pct"],
                                                        st["median_signed_error_pct"]))
        line("all rows", summary["all"])
        for name, key in (("system_class", "by_system_class"), ("nodes", "by_nodes"),
                          ("size", "by_size"), ("collective", "by_collective"),
                          ("source", "by_source")):
            for k, st in summary[key].items():
                line("%s %s" % (name, k), st)
            if key == "by_size" and "<1MiB" not in summary[key]:
                print("  %-56s %5d" % ("size <1MiB (no usable published row)", 0))
    if args.json:
        doc = {"schema": "topotune/model-error/1", "binary": args.bin, "rows": used,
               "skipped": [{"id": r["id"], "reason": w} for r, w in skipped], "summary": summary}
        if args.json == "-":
            json.dump(doc, sys.stdout, indent=1)
            print()
        else:
            with open(args.json, "w", encoding="utf-8") as f:
                json.dump(doc, f, indent=1)
                f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
