#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The tuner plugin is loaded into NCCL's process: it must need nothing but the C library (and
# libdl), and export nothing but NCCL's interface structures.
#     check-deps.sh LIBRARY SANITIZED(ON|OFF)
set -euo pipefail
lib=$1
if [ "${2:-OFF}" = ON ]; then
    echo "skip: a sanitized build links the sanitizer runtimes"
    exit 77
fi
if ! command -v readelf >/dev/null; then
    echo "skip: no readelf"
    exit 77
fi
status=0
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
for so in $needed; do
    case $so in
    libc.so.* | libdl.so.*) ;;
    *)
        echo "FAIL: $lib needs $so"
        status=1
        ;;
    esac
done
# Defined global symbols of the dynamic table: exactly the five interface structures.
exported=$(readelf --dyn-syms -W "$lib" |
    awk '$5 == "GLOBAL" && $7 != "UND" && $4 != "NOTYPE" { print $8 }' | sort | tr '\n' ' ')
want="ncclTunerPlugin_v2 ncclTunerPlugin_v3 ncclTunerPlugin_v4 ncclTunerPlugin_v5 ncclTunerPlugin_v6 "
if [ "$exported" != "$want" ]; then
    echo "FAIL: exports '$exported', want '$want'"
    status=1
fi
# No static TLS: a dlopened library's initial-exec TLS takes the static block's surplus, and where
# that is full (PyTorch with libgomp, say) dlopen fails and NCCL silently goes on without it.
if readelf -d "$lib" | grep -q 'STATIC_TLS'; then
    echo "FAIL: $lib uses static TLS (initial-exec thread-local storage)"
    status=1
fi
echo "needs: $needed"
echo "exports: $exported"
exit $status
