#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks topotune-bench output.

usage: bench-check.py text FILE RANKS ROWS   nccl-tests table: columns, busbw arithmetic, wrong 0
       bench-check.py json FILE RANKS ROWS   JSON Lines: events, busbw arithmetic, wrong 0
"""
import json
import sys


def check_text(path, ranks, rows):
    lines = open(path).read().splitlines()
    assert any(l.startswith("# Collective test starting: all_reduce_perf") for l in lines)
    header = [l for l in lines if l.startswith("#       size")]
    assert len(header) == 1, "one column header"
    cols = header[0][1:].split()
    assert cols == ["size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                    "time", "algbw", "busbw", "#wrong"], cols
    data = [l.split() for l in lines if l and not l.startswith("#")]
    assert len(data) == rows, f"{len(data)} rows, expected {rows}"
    devices = [l for l in lines if l.startswith("#  Rank")]
    assert len(devices) == ranks, f"{len(devices)} device lines, expected {ranks}"
    factor = 2 * (ranks - 1) / ranks
    for d in data:
        size, count = int(d[0]), int(d[1])
        assert size == count * 4, d  # float
        for t, alg, bus, wrong in (d[5:9], d[9:13]):
            t, alg, bus = float(t), float(alg), float(bus)
            assert int(wrong) == 0, d
            # both columns are printed with 2 decimals: the time's rounding (up to 0.005 us, 2% of a
            # 0.25 us operation) carries into algbw, so the bound follows it
            assert abs(alg - size / (t * 1e-6) / 1e9) <= 0.01 + alg * (0.01 + 0.005 / t), d
            assert abs(bus - alg * factor) <= 0.011 + bus * 0.01, d
    assert any(l.startswith("# Out of bounds values : 0 OK") for l in lines)
    assert any(l.startswith("# Avg bus bandwidth    : ") for l in lines)


def check_json(path, ranks, rows):
    events = [json.loads(l) for l in open(path)]
    assert events[0]["event"] == "start" and events[-1]["event"] == "end", "start ... end"
    start = events[0]
    assert start["ranks"] == ranks and len(start["hosts"]) == ranks and start["nodes"] == 1
    assert start["backend"] == "mpi" and start["predicted"] is False
    assert "mpi" in start["versions"]
    env = start["env"]
    assert all(k.split("_")[0] + "_" in ("NCCL_", "CUDA_", "OMPI_", "UCX_", "FI_", "TORCH_") for k in env), env
    sizes = [e for e in events if e["event"] == "size"]
    assert len(sizes) == rows, f"{len(sizes)} size events, expected {rows}"
    factor = 2 * (ranks - 1) / ranks
    for e in sizes:
        for r in (e, e["in_place"]):
            assert r["wrong"] == 0, e
            assert abs(r["algbw"] - e["size"] / (r["time_us"] * 1e-6) / 1e9) <= 1e-9 * max(1, r["algbw"]), e
            assert abs(r["busbw"] - r["algbw"] * factor) <= 1e-9 * max(1, r["busbw"]), e
    assert events[-1]["outcome"] == "ok" and events[-1]["exit_code"] == 0


if __name__ == "__main__":
    kind, path, ranks, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    (check_text if kind == "text" else check_json)(path, ranks, rows)
