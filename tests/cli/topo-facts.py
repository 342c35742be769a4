#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reduces a topology JSON to the facts the fixture tests check (counts, matrix, class).

usage: topo-facts.py TOPOLOGY.json [EXPECTED.json [--update]]
With EXPECTED, compares and exits 1 on a difference; --update rewrites EXPECTED,
keeping its "note" (what the real machine has that the file cannot show).
"""
import json
import sys


def facts(topo):
    return {
        "gpus": len(topo["gpus"]),
        "gpu_models": sorted({g["model"] or "unknown" for g in topo["gpus"]}),
        "nvswitches": topo["nvswitches"],
        "nvlink_known": topo["nvlink_known"],
        "nvlinks_per_gpu": [g["nvlinks"] for g in topo["gpus"]],
        "nics": len(topo["nics"]),
        "nic_kinds": [n["kind"] for n in topo["nics"]],
        "numa_nodes": topo["cpu"]["numa_nodes"],
        "matrix": [" ".join(c or "N/A" for c in row) for row in topo["matrix"]["rows"]],
        "class_id": topo["class"]["id"],
    }


def main():
    with open(sys.argv[1]) as f:
        got = facts(json.load(f))
    if len(sys.argv) < 3:
        json.dump(got, sys.stdout, indent=2)
        print()
        return 0
    try:
        with open(sys.argv[2]) as f:
            want = json.load(f)
    except FileNotFoundError:
        want = {}
    note = want.pop("note", None)
    if "--update" in sys.argv:
        out = {"note": note} if note else {}
        out.update(got)
        with open(sys.argv[2], "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")
        return 0
    bad = [k for k in set(got) | set(want) if got.get(k) != want.get(k)]
    for k in sorted(bad):
        print(f"{sys.argv[2]}: {k}: got {got.get(k)!r}, expected {want.get(k)!r}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
