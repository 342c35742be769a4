#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A stand-in for mpirun in the survey's tests: a cluster of named hosts, no MPI.

Installed as `mpirun` on PATH. It takes the command line topotune builds (-np, --host, --map-by,
-x, then the program) and plays the program's part on every host:
  topotune-node topo|doctor  prints each rank's host, report and clock lines as --tag-output
                             does (Open MPI 5's tags, a space after each; every report cut in
                             two pieces just after its first '[', the ranks' pieces
                             interleaved), one rank per host, in the order FAKE_ORDER says
                             (reverse: the launcher placed the hosts otherwise than --host named
                             them; given: as named).
  topotune-bench --split S   writes the benchmark's events to --json=PATH: a size event per group,
                             FAKE_BW GB/s (default 10), half that when the group holds the node
                             FAKE_SLOW (FAKE_WHOLE_BW, when set, for one group of more than two
                             nodes: the whole class at once), then an end event.
                             Refuses (exit 6, as topotune-bench does) a split naming a node that
                             is not among the launch's hosts, matched by the nodes' own names.
Environment:
  FAKE_NAMES  host=name,...: the name a host gives itself (gethostname); default: the host's
  FAKE_ALLOC  the hosts of the Slurm allocation, when no --host is given
  FAKE_MAP    fail: a gather of several hosts fails (exit 1); a gather of one host sleeps 1 s and
              fails
  FAKE_DEAD   a host that is down: a gather naming it fails at once (exit 1), as Open MPI's whole
              launch fails when one host's ssh does
  FAKE_BENCH  usage: every benchmark launch refuses its options (exit 6)
  FAKE_LOG    a file each command line is appended to
  FAKE_GPUS   host=count,...: how many GPUs a host's map reports (default 2); its class id says
              the count (fake-2gpu)
  FAKE_TOPOLOGY  a topology JSON file (topotune topo --json) every host's map reports instead,
              its class and GPUs with it
  FAKE_PAIR_BW  busbw of a group of two nodes, instead of FAKE_BW
  FAKE_JITTER   a pair's busbw times 1 + FAKE_JITTER x k, k in -1 .. 1 by thirds from its names:
              the same pair always gets the same value
  FAKE_ZERO   a host whose every group reports busbw 0 (a benchmark that moved nothing), ok
"""
import json
import os
import sys
import time


def main():
    args = sys.argv[1:]
    if os.environ.get("FAKE_LOG"):
        with open(os.environ["FAKE_LOG"], "a") as f:
            f.write(" ".join(args) + "\n")
    hosts, i = None, 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] in ("-np", "--map-by", "-x", "--host"):
            if args[i] == "--host":
                hosts = args[i + 1].split(",")
            i += 2
        else:
            i += 1
    program, rest = args[i], args[i + 1:]
    if hosts is None:
        hosts = os.environ.get("FAKE_ALLOC", "").split(",")
    names = dict(p.split("=", 1) for p in os.environ.get("FAKE_NAMES", "").split(",") if p)
    name = lambda h: names.get(h, h)
    if "topotune-node" in os.path.basename(program):
        gpus = dict(p.split("=", 1) for p in os.environ.get("FAKE_GPUS", "").split(",") if p)
        return node(rest[0], [name(h) for h in hosts], {name(h): int(gpus.get(h, 2)) for h in hosts})
    return bench(rest, {name(h) for h in hosts})


def node(what, names, gpus):
    if os.environ.get("FAKE_DEAD") in names:
        print("ssh: connect to host %s port 22: No route to host" % os.environ["FAKE_DEAD"],
              file=sys.stderr)
        return 1
    if os.environ.get("FAKE_MAP") == "fail":
        if len(names) == 1:
            time.sleep(1)
        print("fake-mpirun: a host did not answer", file=sys.stderr)
        return 1
    if os.environ.get("FAKE_ORDER", "reverse") == "reverse":
        names = names[::-1]
    lines = []
    for rank, n in enumerate(names):
        r = {"host": n}
        if what == "topo" and os.environ.get("FAKE_TOPOLOGY"):
            with open(os.environ["FAKE_TOPOLOGY"]) as f:
                r["topology"] = json.load(f)
        elif what == "topo":
            r["topology"] = {"class": {"id": "fake-%dgpu" % gpus[n]}, "gpus": [{}] * gpus[n]}
        else:
            r["checks"] = []
        # as topotune-node writes it: compact, no '<' or space
        text = json.dumps({"report": r}, separators=(",", ":")).replace("<", "\\u003c")
        lines.append((rank, json.dumps({"host": n}, separators=(",", ":")),
                      text.replace(" ", "\\u0020") + "\n", '{"clock":1.5}'))
    tag = "[1,%d]<stdout>: "
    # each report cut just after its first '[' (a piece ending in one, the next rank's tag after)
    cut = lambda t: t.index("[") + 1 if "[" in t else len(t) // 2
    out = [tag % r + h + "\n" for r, h, _, _ in lines]
    out += [tag % r + t[:cut(t)] for r, _, t, _ in lines]
    out += [tag % r + t[cut(t):] for r, _, t, _ in lines]
    out += [tag % r + c + "\n" for r, _, _, c in lines]
    sys.stdout.write("".join(out))
    return 0


def bench(args, launched):
    if os.environ.get("FAKE_BENCH") == "usage":
        return 6
    out = [a[len("--json="):] for a in args if a.startswith("--json=")][0]
    groups = [g.split(",") for g in args[args.index("--split") + 1].split(";")]
    if any(n not in launched for g in groups for n in g):
        print("fake topotune-bench: --split names a node not in the launch", file=sys.stderr)
        return 6
    slow, healthy = os.environ.get("FAKE_SLOW"), float(os.environ.get("FAKE_BW", "10"))
    with open(out, "w") as f:
        f.write(json.dumps({"event": "groups", "groups": groups}) + "\n")
        for k, g in enumerate(groups):
            bw = healthy
            if len(g) == 2 and os.environ.get("FAKE_PAIR_BW"):
                bw = float(os.environ["FAKE_PAIR_BW"])
                j = (sum(map(ord, "".join(sorted(g)))) % 7 - 3) / 3
                bw *= 1 + float(os.environ.get("FAKE_JITTER", "0")) * j
            bw = bw / 2 if slow in g else bw
            bw = 0.0 if os.environ.get("FAKE_ZERO") in g else bw
            if len(groups) == 1 and len(g) > 2 and os.environ.get("FAKE_WHOLE_BW"):
                bw = float(os.environ["FAKE_WHOLE_BW"])
            f.write(json.dumps({"event": "size", "group": k, "busbw": bw}) + "\n")
        f.write(json.dumps({"event": "end", "outcome": "ok"}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
