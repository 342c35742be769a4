#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages that building, or building and testing, topotune need.
# usage: tools/install-deps.sh [build|check|test]
#   build  what building and running the programs need (tools/run.sh): a compiler, CMake,
#          pkg-config, hwloc (with its PCI plugin, for live GPUs and NICs), Jansson, libxml2,
#          Open MPI (mpicc to build, mpirun to run)
#   check  that, and what tools/test.sh needs before its tests run: cmocka (the unit tests are
#          built only where it is), clang and libFuzzer, the style checkers
#   test   all that, and what the tests run (the default): Slurm, Python modules, PyTorch,
#          gnuplot, chromium, ... (tools/test.sh installs these while its checks and builds run)
# Safe to run again: it installs only what is missing. Uses sudo only when not root.
set -euo pipefail

build=(
    build-essential cmake pkg-config
    libhwloc-dev libhwloc-plugins libjansson-dev libxml2-dev
    libopenmpi-dev openmpi-bin
)
check=(
    git python3 libcmocka-dev
    clang libfuzzer-14-dev libclang-rt-14-dev clang-format shellcheck cppcheck
)
test=(
    hwloc util-linux iproute2 slurm-wlm munge python3-yaml python3-jsonschema python3-torch gnuplot-nox chromium
    yamllint buildah prometheus
    groff-base dpkg-dev
)

# the npm registry's kubernetes-models (the tests validate Kubernetes manifests against its
# schemas, offline) needs npm: Debian's, where the machine has none of its own
command -v npm >/dev/null || test+=(npm)
npm_prefix=${TOPOTUNE_NPM_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/topotune-npm}

case "${1:-test}" in
build) packages=("${build[@]}") ;;
check) packages=("${build[@]}" "${check[@]}") ;;
test) packages=("${build[@]}" "${check[@]}" "${test[@]}") ;;
*) echo "usage: tools/install-deps.sh [build|check|test]   (default: test, which includes the others)" >&2
    exit 2 ;;
esac
what=${1:-test}

missing=()
for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done

# kubernetes-models into $npm_prefix (TOPOTUNE_NPM_PREFIX), once
npm_models() {
    [ "$what" = test ] && [ ! -d "$npm_prefix/node_modules/kubernetes-models" ] || return 0
    echo "install-deps: npm install kubernetes-models@5 into $npm_prefix"
    mkdir -p "$npm_prefix" && npm install --prefix "$npm_prefix" --no-audit --no-fund --silent kubernetes-models@5
}

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages for $what already installed"
    npm_models
    exit
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "install-deps: error: not root and no sudo: install ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
fi
echo "install-deps: installing for $what: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
npm_models
