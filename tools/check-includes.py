#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the house's arrows: every #include "folder/x.h" in a module's sources must
name its own folder or a folder lower in LAYERS, a folder's internal.h stays in it,
and each CMake library links exactly the folders its sources include.

usage: tools/check-includes.py [ROOT]   (exit 1 and one line per violation)
"""
import os
import re
import sys

# Lowest first: a folder may include only folders before it (and itself).
LAYERS = ["tuner", "util", "topo", "model", "launch", "bench", "cluster", "sweep", "doctor", "gen",
          "compare", "survey", "cli", "tools"]
# The CMake library built from each folder (tools/ holds programs, not a library).
# tuner/ is the NCCL plugin: it stands alone (loaded into NCCL's process), its library is
# topotune_tuner_table and it includes nothing of ours.
LIBRARY = {f: "topotune_" + f for f in LAYERS if f not in ("tools", "tuner")}
LIBRARY_EXTRA = {"topotune_bench_run": "bench", "topotune_tuner_table": "tuner"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/([^"]+)"', re.M)


def sources(root):
    for folder in LAYERS:
        base = os.path.join(root, folder)
        for dirpath, _, files in os.walk(base):
            if os.path.relpath(dirpath, root).startswith("bench" + os.sep + "perf"):
                continue  # the project's own benchmarks, not a module
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    yield folder, os.path.join(dirpath, name)


def edges(root):
    """(folder, path, included folder, included header) for every quoted include."""
    for folder, path in sources(root):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for target, header in INCLUDE.findall(text):
            yield folder, os.path.relpath(path, root), target, header


def cmake_links(root):
    """library -> set of topotune_* libraries it links, from CMakeLists.txt."""
    with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
        text = f.read()
    links = {}
    for lib, body in re.findall(r"target_link_libraries\((topotune_\w+)\s+PUBLIC([^)]*)\)", text):
        links.setdefault(lib, set()).update(re.findall(r"topotune_\w+", body))
    return links


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    rank = {f: i for i, f in enumerate(LAYERS)}
    problems, used = [], {}
    for folder, path, target, header in edges(root):
        if target not in rank:
            problems.append(f"{path}: includes {target}/{header}: '{target}' is not a module "
                            "(add it to LAYERS in tools/check-includes.py)")
            continue
        if target != folder and header == "internal.h":
            problems.append(f"{path}: includes {target}/internal.h: private to {target}/")
        if rank[target] > rank[folder]:
            problems.append(f"{path}: includes {target}/{header}: {target}/ is above {folder}/ "
                            f"(order: {' < '.join(LAYERS)})")
        if target != folder:
            used.setdefault(folder, set()).add(target)
    links = cmake_links(root)
    for folder, lib in LIBRARY.items():
        declared = {LIBRARY_EXTRA.get(l, l.replace("topotune_", "")) for l in links.get(lib, ())}
        declared &= set(LAYERS)
        want = used.get(folder, set())
        if folder == "bench":  # topotune_bench_run adds the program's parts, same folder
            declared.discard("bench")
        if declared != want and lib in links:
            problems.append(f"CMakeLists.txt: {lib} links {sorted(declared)} but {folder}/ "
                            f"includes {sorted(want)}")
    for p in problems:
        print(f"check-includes: {p}")
    if problems:
        return 1
    print(f"check-includes: {sum(len(v) for v in used.values())} folder arrows, all downward")
    return 0


if __name__ == "__main__":
    sys.exit(main())
