#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Quick start, part one: install what is missing, build, and run the main job on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh plain >/dev/null
exec build/topotune topo "$@"
