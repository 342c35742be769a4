#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages that building and testing topotune need.
# Safe to run again: it installs only what is missing. Uses sudo only when not root.
set -euo pipefail

packages=(
    build-essential cmake pkg-config git python3
    libhwloc-dev hwloc libjansson-dev libxml2-dev libcmocka-dev
    libopenmpi-dev openmpi-bin
    clang libfuzzer-14-dev libclang-rt-14-dev clang-format shellcheck cppcheck
    util-linux iproute2 slurm-wlm munge python3-yaml python3-jsonschema python3-torch gnuplot-nox chromium
    yamllint buildah
    groff-base dpkg-dev
)

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages already installed"
    exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: error: not root and no sudo: install ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
