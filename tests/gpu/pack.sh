#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Packs what tests/gpu/check-on-gpu.sh runs into DIR (default .gpu, which git ignores), for a GPU
# machine whose image has CUDA and NCCL but not this project's Debian libraries: the built
# programs and the tuner plugin in DIR/bin (the build tree's layout), the libraries they load
# but for glibc's own and NCCL's in DIR/lib, Open MPI's components in DIR/ompi and hwloc's in
# DIR/hwloc. DIR/env.sh,
# sourced there, points the loader and Open MPI at them, finds NCCL (the CUDA toolkit's or
# pip's nvidia-nccl) and runs MPI as an isolated singleton (no orted to start). Usage:
#   tools/build.sh plain && tests/gpu/pack.sh [DIR]
#   (there) . DIR/env.sh && OUT=... tests/gpu/check-on-gpu.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$root/.gpu}
build=$root/build
[ -x "$build/topotune-bench" ] || { echo "pack.sh: build first: tools/build.sh plain" >&2; exit 2; }
rm -rf "$dir"
mkdir -p "$dir/bin/tuner" "$dir/lib" "$dir/ompi"
for p in topotune topotune-bench topotune-node topotune-p2p-copy; do
    [ -x "$build/$p" ] && cp "$build/$p" "$dir/bin/"
done
[ -r "$build/tuner/libnccl-tuner-topotune.so" ] && cp "$build/tuner/libnccl-tuner-topotune.so" "$dir/bin/tuner/"
ompi=$(dirname "$(readlink -f "$(ldd "$build/topotune-bench" | awk '$1 == "libmpi.so.40" {print $3}')")")
components=$ompi/openmpi/lib/openmpi3
[ -d "$components" ] || components=/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3
cp "$components"/*.so "$dir/ompi/"
# hwloc's PCI discovery (the GPUs' and NICs' place in the tree) and XML export are plugins too
mkdir -p "$dir/hwloc"
for p in hwloc_pci hwloc_xml_libxml; do
    cp "/usr/lib/x86_64-linux-gnu/hwloc/$p.so" "$dir/hwloc/" 2>/dev/null || true
done
# every library the programs and the components load, but the machine's own (glibc's, the C++
# runtime: newer there), NCCL's and CUDA's (the machine's match its driver), and the network
# transports' (one process on one GPU needs none: their components are skipped), so that it all
# fits the 64 MiB a device call carries
{
    for f in "$dir"/bin/* "$dir"/ompi/*.so "$dir"/hwloc/*.so; do
        [ -f "$f" ] && ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $3}'
    done
} | sort -u | grep -vE '/(libc|libm|libdl|libpthread|librt|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s|libatomic|libz|liblzma|libuuid)\.so' |
    grep -vE '/(libnccl|libcuda|libnvidia[^/]*|libfabric|libefa|libibverbs|librdmacm|libpsm[^/]*|libinfinipath|libuc[mpst]|libnl-[^/]*|libmunge|libpmix|liboshmem|libmca_common_(ucx|ofi|verbs))\.so' |
    while read -r lib; do cp -L "$lib" "$dir/lib/"; done
cat >"$dir/env.sh" <<'ENV'
# Sourced on the GPU machine: this directory's programs, libraries and Open MPI components.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
nccl=""
# the CUDA toolkit's, a versioned toolkit's, the distribution's, or pip's nvidia-nccl (a namespace
# package: no __file__, its __path__ holds lib/)
for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda-*/lib64 /usr/lib/x86_64-linux-gnu \
    "$(python3 -c 'import nvidia.nccl; print(list(nvidia.nccl.__path__)[0] + "/lib")' 2>/dev/null)"; do
    [ -n "$d" ] && [ -e "$d/libnccl.so.2" ] && { nccl=$d; break; }
done
export LD_LIBRARY_PATH="$here/lib${nccl:+:$nccl}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
[ -z "$nccl" ] && nccl=$(ldconfig -p 2>/dev/null | awk '$1 == "libnccl.so.2" {print $NF; exit}')
export OMPI_MCA_mca_base_component_path="$here/ompi" OMPI_MCA_mca_base_component_show_load_errors=0
export OMPI_MCA_ess_singleton_isolated=1 HWLOC_PLUGINS_PATH="$here/hwloc" TOPOTUNE_BIN="$here/bin"
echo "env.sh: NCCL from ${nccl:-nowhere (not found)}"
ENV
grep -qxF '/.gpu/' "$root/.git/info/exclude" 2>/dev/null || echo '/.gpu/' >>"$root/.git/info/exclude"
du -sh "$dir"
