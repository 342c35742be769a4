#!/usr/bin/env bash
# How far the current model (topotune predict) is from the published all_reduce measurements in
# bench/perf/calibration/published.json: one line per usable row (published busbw, predicted
# busbw, error) and the median/max error overall, per system class, node count and size band.
# A report, not a test: exits 0. Usage: model-error.sh [--json FILE|-] [--bin TOPOTUNE]
# The binary: --bin, else $TOPOTUNE_BIN, else build/topotune.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
exec python3 "$here/model-error.py" "$@"
