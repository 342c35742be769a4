#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the house's arrows: every #include "folder/x.h" in a module's sources must name its
own folder or an arrow that the layout table of docs/design.md allows (and that points down the
table), a folder's internal.h stays in it, and each CMake library links exactly the folders its
sources include.

The folders and their arrows are read from the table under "## The layout" in docs/design.md,
columns `folder` (lowest first) and `may include`. A cell there is "nothing of ours", "everything
above" (the rows before it), "everything", or a list of `folder/` (any header but internal.h)
and `folder/header.h`; parenthesised words after an entry are for the reader. "any folder may
include `x/y.h`" in a cell gives that header to every folder.

usage: tools/check-includes.py [ROOT]
  exit 0: all arrows allowed; 1: one line per violation; 2: the table cannot be read
"""
import os
import re
import sys

DESIGN = "docs/design.md"
HEADING = "## The layout"
EVERYWHERE = "any folder may include"
ENTRY = re.compile(r"`([a-z][a-z0-9_-]*)/([^`/]*)`")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)/([^"]+)"', re.M)


class TableError(Exception):
    pass


def table_rows(root):
    """[(line number, [cells])] of the first table under HEADING: header, separator, rows."""
    try:
        with open(os.path.join(root, DESIGN), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise TableError(f"cannot be read: {e.strerror}") from e
    start = next((i for i, l in enumerate(lines) if l.startswith(HEADING)), None)
    if start is None:
        raise TableError(f"has no section '{HEADING} ...'")
    rows = []
    for n, line in enumerate(lines[start + 1:], start + 2):
        if line.startswith("## "):
            break
        if line.startswith("|"):
            rows.append((n, [c.strip() for c in line.strip().strip("|").split("|")]))
        elif rows:
            break  # the table ended
    if len(rows) < 3:
        raise TableError(f"has no table with rows under '{HEADING} ...'")
    return rows


def read_layers(root):
    """(folders lowest first, {folder: allowed}, allowed everywhere) from design.md's table.
    An allowed entry is "folder" (its public headers) or "folder/header"."""
    rows = table_rows(root)
    header = rows[0][1]
    for name in ("folder", "may include"):
        if name not in header:
            raise TableError(f"line {rows[0][0]}: the table has no column '{name}' ({header})")
    col_folder, col_may = header.index("folder"), header.index("may include")
    layers, cells = [], {}
    for n, cols in rows[2:]:
        if len(cols) != len(header):
            raise TableError(f"line {n}: {len(cols)} cells, the header has {len(header)}")
        m = re.fullmatch(r"`([a-z][a-z0-9_-]*)/`", cols[col_folder])
        if not m or m.group(1) in cells:
            raise TableError(f"line {n}: folder '{cols[col_folder]}' is not a new `name/`")
        layers.append(m.group(1))
        cells[m.group(1)] = (n, cols[col_may])
    allowed, everywhere = {}, set()
    for i, folder in enumerate(layers):
        n, cell = cells[folder]
        own, _, rest = cell.partition(EVERYWHERE)
        for target, hdr in ENTRY.findall(rest):
            everywhere.add(f"{target}/{hdr}" if hdr else target)
        entries = ENTRY.findall(own)
        if own.startswith("nothing of ours") and not entries:
            allowed[folder] = set()
        elif own.strip() == "everything above":
            allowed[folder] = set(layers[:i])
        elif own.strip() == "everything":
            allowed[folder] = set(layers)
        elif entries:
            allowed[folder] = {f"{t}/{h}" if h else t for t, h in entries}
        else:
            raise TableError(f"line {n}: `{folder}/` may include '{cell}': neither folders nor "
                             "'nothing of ours', 'everything above' or 'everything'")
    for folder in layers:
        n = cells[folder][0]
        for target in sorted({e.split("/")[0] for e in allowed[folder] | everywhere}):
            if target not in cells:
                raise TableError(f"line {n}: names `{target}/`, which has no row in the table")
            if target in allowed[folder] and layers.index(target) > layers.index(folder):
                raise TableError(f"line {n}: `{folder}/` may include `{target}/`, a later row: "
                                 "an arrow pointing up")
    return layers, allowed, everywhere


def sources(root, layers):
    for folder in layers:
        base = os.path.join(root, folder)
        for dirpath, _, files in os.walk(base):
            if os.path.relpath(dirpath, root).startswith("bench" + os.sep + "perf"):
                continue  # the project's own benchmarks, not a module
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    yield folder, os.path.join(dirpath, name)


def edges(root, layers):
    """(folder, path, included folder, included header) for every quoted include."""
    for folder, path in sources(root, layers):
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
    try:
        layers, allowed, everywhere = read_layers(root)
    except TableError as e:
        print(f"check-includes: {DESIGN}: {e}; the arrows are read from its table under "
              f"'{HEADING} ...' (columns folder and may include)")
        return 2
    # The CMake library built from each folder (tools/ holds programs, not a library).
    # tuner/ is the NCCL plugin: it stands alone (loaded into NCCL's process), its library is
    # topotune_tuner_table and it includes nothing of ours.
    library = {f: "topotune_" + f for f in layers if f not in ("tools", "tuner")}
    library_extra = {"topotune_bench_run": "bench", "topotune_tuner_table": "tuner"}
    rank = {f: i for i, f in enumerate(layers)}
    may_include = {f: allowed[f] | everywhere for f in layers}
    problems, used = [], {}
    for folder, path, target, header in edges(root, layers):
        if target not in rank:
            problems.append(f"{path}: includes {target}/{header}: '{target}' is not a module "
                            f"(add a row for it to the table in {DESIGN})")
            continue
        if target != folder and header == "internal.h":
            problems.append(f"{path}: includes {target}/internal.h: private to {target}/")
        if rank[target] > rank[folder]:
            problems.append(f"{path}: includes {target}/{header}: {target}/ is above {folder}/ "
                            f"(order: {' < '.join(layers)})")
        elif target != folder and not {target, f"{target}/{header}"} & may_include[folder]:
            may = ", ".join(e if "/" in e else e + "/" for e in sorted(allowed[folder]))
            problems.append(f"{path}: includes {target}/{header}: no arrow {folder}/ -> "
                            f"{target}/ in {DESIGN} ({folder}/ may include: {may or 'nothing'})")
        if target != folder:
            used.setdefault(folder, set()).add(target)
    links = cmake_links(root)
    for folder, lib in library.items():
        declared = {library_extra.get(l, l.replace("topotune_", "")) for l in links.get(lib, ())}
        declared &= set(layers)
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
    print(f"check-includes: {sum(len(v) for v in used.values())} folder arrows, all downward "
          f"and in {DESIGN}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
