#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every C file of a build checked by clang with the build's own flags (-fsyntax-only: warnings
as errors, no object written). The suite builds with gcc; clang warns where gcc does not (a
format string handed on through a va_list), and a user's build with CC=clang must not fail.

usage: tools/clang-syntax.py BUILD_DIR   (configured with clang and CMAKE_EXPORT_COMPILE_COMMANDS)
"""
import json
import os
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def check(entry):
    args = shlex.split(entry["command"])
    if "-o" in args:  # nothing is written
        i = args.index("-o")
        del args[i:i + 2]
    p = subprocess.run(args + ["-fsyntax-only"], cwd=entry["directory"], capture_output=True,
                       text=True, check=False)
    return entry["file"], p.returncode, p.stderr


def main():
    build = sys.argv[1] if len(sys.argv) == 2 else sys.exit(__doc__)
    entries = json.load(open(os.path.join(build, "compile_commands.json"), encoding="utf-8"))
    failed = 0
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for name, rc, err in pool.map(check, entries):
            if rc:
                failed += 1
                sys.stderr.write(err)
    print("clang -fsyntax-only: %d files, %d failed" % (len(entries), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
