#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks topotune-bench output.

usage: bench-check.py text FILE RANKS ROWS [COLLECTIVE]   nccl-tests table: columns, counts,
                                                            busbw arithmetic, wrong 0
       bench-check.py json FILE RANKS ROWS [COLLECTIVE]   JSON Lines: events, busbw arithmetic,
                                                            wrong 0
COLLECTIVE is nccl-tests' name (all_reduce by default).
"""
import json
import sys

# nccl-tests' conventions, written from its sources (NVIDIA/nccl-tests, src/<name>.cu): the bus
# factor of <Name>GetBw (busbw = algbw x factor, algbw = the size column / time), the count
# column (<Name>GetCollByteCount's paramcount: one rank's part where the size counts every
# rank's), and the redop column ("none" where TimeTest is called with the op name "none").
BUS_FACTOR = {
    "all_reduce": lambda n: 2 * (n - 1) / n,
    "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n,
    "alltoall": lambda n: (n - 1) / n,
    "broadcast": lambda n: 1,
    "reduce": lambda n: 1,
    "sendrecv": lambda n: 1,
}
PARTS = {"all_gather", "reduce_scatter", "alltoall"}  # size = count x ranks x element
REDUCES = {"all_reduce", "reduce_scatter", "reduce"}
ROOTED = {"broadcast", "reduce"}
COLL = "all_reduce"


def check_text(path, ranks, rows):
    lines = open(path).read().splitlines()
    assert any(l.startswith(f"# Collective test starting: {COLL}_perf") for l in lines)
    assert any(l.startswith(f"# Collective test concluded: {COLL}_perf") for l in lines)
    header = [l for l in lines if l.startswith("#       size")]
    assert len(header) == 1, "one column header"
    cols = header[0][1:].split()
    assert cols == ["size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                    "time", "algbw", "busbw", "#wrong"], cols
    data = [l.split() for l in lines if l and not l.startswith("#")]
    assert len(data) == rows, f"{len(data)} rows, expected {rows}"
    devices = [l for l in lines if l.startswith("#  Rank")]
    assert len(devices) == ranks, f"{len(devices)} device lines, expected {ranks}"
    factor = BUS_FACTOR[COLL](ranks)
    for d in data:
        size, count = int(d[0]), int(d[1])
        assert size == count * 4 * (ranks if COLL in PARTS else 1), d  # float
        assert (d[3] != "none") == (COLL in REDUCES), d
        assert (d[4] != "-1") == (COLL in ROOTED), d
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
    assert start["collective"] == COLL, start
    assert start["ranks"] == ranks and len(start["hosts"]) == ranks and start["nodes"] == 1
    assert start["backend"] == "mpi" and start["predicted"] is False
    assert "mpi" in start["versions"]
    env = start["env"]
    assert all(k.split("_")[0] + "_" in ("NCCL_", "CUDA_", "OMPI_", "UCX_", "FI_", "TORCH_") for k in env), env
    sizes = [e for e in events if e["event"] == "size"]
    assert len(sizes) == rows, f"{len(sizes)} size events, expected {rows}"
    factor = BUS_FACTOR[COLL](ranks)
    for e in sizes:
        assert e["collective"] == COLL, e
        for r in (e, e["in_place"]):
            assert r["wrong"] == 0, e
            assert abs(r["algbw"] - e["size"] / (r["time_us"] * 1e-6) / 1e9) <= 1e-9 * max(1, r["algbw"]), e
            assert abs(r["busbw"] - r["algbw"] * factor) <= 1e-9 * max(1, r["busbw"]), e
    assert events[-1]["outcome"] == "ok" and events[-1]["exit_code"] == 0


if __name__ == "__main__":
    kind, path, ranks, rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    COLL = sys.argv[5] if len(sys.argv) > 5 else "all_reduce"
    (check_text if kind == "text" else check_json)(path, ranks, rows)
