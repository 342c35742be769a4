#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start, part one: install what building and running need (what is missing; not the
# test suite's tools), build, and run the main job on this machine:
# map it (topotune topo), then sweep and write its profile (topotune run).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh build
tools/build.sh plain >/dev/null
build/topotune topo
exec build/topotune run "$@"
