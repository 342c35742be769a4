#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune check, this node's health for Slurm and NHC: a healthy sim run passes (one OK line,
# exit 0); a slow configuration fails with one line per size below the model's band (exit 1),
# its --drain command, its JSON (schema) and metrics (promtool); a 64 MB /dev/shm (a mount
# namespace) fails doctor's check; real MPI ranks are judged against a profile's band with the
# profile's variables in their environment; a profile of another class or shape, and a benchmark
# that cannot start, are no verdict (NOT CHECKED, never OK); a run that measured nothing or not
# every size fails; bad input is refused; a kept folder only on failure.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# 8 H100 on NVSwitch, no RDMA NIC: nothing of doctor's depends on this machine's locked memory
echo '{"schema": "topotune/spec/1", "gpu": "H100-SXM5-80GB", "count": 8}' >h100.json
h100=$TEST_TMP/h100.json
# A slow node: its benchmark runs a configuration the check's reference knows nothing of (the
# same variables in the check's own environment are priced by the model: section 2).
slow_vars=(NCCL_ALGO=Ring NCCL_PROTO=Simple NCCL_MAX_NCHANNELS=2)
cat >slow-bench.sh <<EOF
#!/bin/sh
exec env ${slow_vars[*]} "$TOPOTUNE_BENCH" "\$@"
EOF
chmod +x slow-bench.sh
slow=(TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/slow-bench.sh")
export TMPDIR=$TEST_TMP/tmp
mkdir -p "$TMPDIR"

# 1. Healthy: one OK line; the temporary folder is gone.
expect_exit 0 "a healthy (predicted) node" -- "$TOPOTUNE" check --backend sim --input "$h100"
check "one OK line" test "$(wc -l <"$TEST_TMP/out")" = 1
check "it says OK" grep -q '^OK ' "$TEST_TMP/out"
check "nothing left in TMPDIR" test -z "$(ls -A "$TMPDIR")"

# A host name is any bytes (sethostname): one not UTF-8 made no report at all, printed nothing
# and exited 0, which a health check reads as healthy.
if [ "$(id -u)" = 0 ] && unshare -u true 2>/dev/null; then
    # shellcheck disable=SC2016 # the words of the inner shell
    expect_exit 1 "a host name of odd bytes, a slow configuration" -- unshare -u env "${slow[@]}" bash -c \
        'python3 -c "import socket; socket.sethostname(b\"node\\xff01\")" && exec "$1" check --backend sim --input "$2" --json' \
        _ "$TOPOTUNE" "$h100"
    check "its report is there, failing" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is False and r["failures"] and r["host"].startswith("node"), r' "$TEST_TMP/out"
    # a check that cannot start had printed "OK" and left an earlier metrics file saying ok
    echo 'topotune_check_ok 1' >odd.prom
    # shellcheck disable=SC2016 # the words of the inner shell
    expect_exit 2 "a host name of odd bytes, an input not there" -- unshare -u bash -c \
        'python3 -c "import socket; socket.sethostname(b\"node\\xff01\")" && exec "$1" check --input /nonexistent --metrics odd.prom' \
        _ "$TOPOTUNE"
    check "NOT CHECKED, never OK" sh -c "grep -q '^NOT CHECKED node' '$TEST_TMP/out' && ! grep -q '^OK' '$TEST_TMP/out'"
    check "the metrics say not ok" grep -qx 'topotune_check_ok 0' odd.prom
fi

# 2. A slow configuration: a line per size below its band, the drain, JSON and metrics.
expect_exit 1 "a slow configuration fails" -- env "${slow[@]}" "$TOPOTUNE" check --backend sim \
    --input "$h100" --drain --metrics check.prom
check "4 sizes below the band, one line each" test "$(grep -c '^FAIL busbw: all_reduce at [0-9]* B: .* predicted, below the band' "$TEST_TMP/out")" = 4
check "the drain of this node, each check named once" grep -q \
    "^scontrol update nodename=.* state=drain 'reason=topotune: check-fails checks=busbw (predicted)'$" "$TEST_TMP/out"
check "promtool check metrics" promtool check metrics <check.prom
check "ok 0, 4 failures, the band per size" sh -c "grep -q '^topotune_check_ok{.*} 0$' check.prom &&
    grep -q '^topotune_check_failures{.*} 4$' check.prom &&
    test \$(grep -c '^topotune_expected_busbw_bytes_per_second{' check.prom) = 12"
check "the failing check's folder is kept, and said" grep -q "kept in '$TMPDIR/topotune-check" "$TEST_TMP/err"
env "${slow[@]}" "$TOPOTUNE" check --backend sim --input "$h100" --json --out kept >check.json
check "--json: the schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/check.schema.json" check.json
check "--json: not ok, 4 sizes below, predicted" python3 - check.json <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is False and r["source"] == "predicted" and r["reference"]["kind"] == "predicted", r
assert [s["below"] for s in r["sizes"]] == [True] * 4 and len(r["failures"]) == 4, r["sizes"]
assert r["bench"]["exit_code"] == 0 and r["bench"]["outcome"] == "ok", r["bench"]
PY
check "--out keeps the run's events" test -s kept/check-bench.jsonl
# a site's interface names reach the run, not the model: a bond the hardware does not list made
# the model predict a fault, so no reference, and a slow node passed (NCCL bootstraps on a bond;
# the stand-in benchmark drops the names the sim would fail on as the model did)
cat >slow-bond-bench.sh <<EOF
#!/bin/sh
exec env -u NCCL_SOCKET_IFNAME -u NCCL_IB_HCA "$TEST_TMP/slow-bench.sh" "\$@"
EOF
chmod +x slow-bond-bench.sh
expect_exit 1 "a slow node, NCCL_SOCKET_IFNAME=bond0 in this environment" -- env NCCL_SOCKET_IFNAME=bond0 \
    NCCL_IB_HCA=mlx5_9 TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/slow-bond-bench.sh" "$TOPOTUNE" check --backend sim \
    --input "$h100" --no-doctor
check "judged against the band" grep -q "^FAIL busbw" "$TEST_TMP/out"
# The same variables set for the check (a site's profile.d) reach its run and the model's
# reference alike: priced as NCCL's defaults they failed every healthy node.
expect_exit 0 "a slow configuration of this environment, priced as such" -- env "${slow_vars[@]}" \
    "$TOPOTUNE" check --backend sim --input "$h100" --no-doctor --json
check "the reference says it" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
b = r["reference"]["basis"]
assert r["ok"] is True and all(w in b for w in sys.argv[2:]), b' "$TEST_TMP/out" "${slow_vars[@]}"
# ... and so do NCCL's configuration files, which NCCL loads at init under what the environment
# sets: $NCCL_CONF_FILE (else ~/.nccl.conf), then /etc/nccl.conf (Azure's images set variables
# there). NCCL on this node is played by a benchmark that loads them as NCCL does, then runs the
# sim on the spec (the sim itself predicts a machine whose files are not this host's).
cat >nccl-here.sh <<EOF
#!/bin/bash
home=\${HOME:-\$(getent passwd "\$(id -u)" | cut -d: -f6)}
for f in "\${NCCL_CONF_FILE:-\$home/.nccl.conf}" /etc/nccl.conf; do
    [ -f "\$f" ] || continue
    while IFS= read -r line || [ -n "\$line" ]; do
        case \$line in '#'* | [!=]*=*) ;; *) continue ;; esac
        name=\${line%%=*}
        [ "\${line:0:1}" = '#' ] || [ -n "\${!name+set}" ] || export "\$name=\${line#*=}"
    done <"\$f"
done
args=() prev=
for a in "\$@"; do
    [ "\$prev" = --backend ] && a=sim
    prev=\$a
    case \$a in -g[0-9]*) continue ;; esac
    args+=("\$a")
done
exec "$TOPOTUNE_BENCH" "\${args[@]}" --topology="$h100" --nodes=1
EOF
chmod +x nccl-here.sh
here=(TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/nccl-here.sh")
{ printf '# the site\nNCCL_ALGO=Ring\nno assignment\n'
  printf '%s\n' "${slow_vars[@]:1}"; } >site.conf
expect_exit 0 "NCCL here without the files" -- env "${here[@]}" "$TOPOTUNE" check --backend nccl \
    --input "$h100" --no-doctor --json
cp "$TEST_TMP/out" plain.json
expect_exit 0 "a slow configuration of \$NCCL_CONF_FILE, priced as such" -- env "${here[@]}" \
    NCCL_CONF_FILE="$TEST_TMP/site.conf" "$TOPOTUNE" check --backend nccl --input "$h100" --no-doctor --json
expect_stderr_has "NCCL_ALGO=Ring ($TEST_TMP/site.conf)" "the file's variables are named"
check "the files slowed the run, and the band with it" python3 -c '
import json, sys
a, b = (json.load(open(f))["sizes"][0] for f in sys.argv[1:])
assert b["busbw"] < a["busbw"] / 2 and b["expected"] < a["expected"] / 2, (a, b)' plain.json "$TEST_TMP/out"
mkdir -p home
cp site.conf home/.nccl.conf
expect_exit 0 "a slow configuration of ~/.nccl.conf, priced as such" -- env "${here[@]}" \
    HOME="$TEST_TMP/home" "$TOPOTUNE" check --backend nccl --input "$h100" --no-doctor
# the environment wins over the file, in NCCL's run and in the reference alike
expect_exit 0 "a variable of the file the environment sets" -- env "${here[@]}" HOME="$TEST_TMP/home" \
    NCCL_ALGO=Tree "$TOPOTUNE" check --backend nccl --input "$h100" --no-doctor --json
check "the environment's value priced" python3 -c '
import json, sys
b = json.load(open(sys.argv[1]))["reference"]["basis"]
assert "NCCL_ALGO=Tree" in b and "NCCL_ALGO=Ring" not in b, b' "$TEST_TMP/out"
# the sim predicts the spec's machine, not this host: its files are no part of either
expect_exit 0 "the sim: this host's files read by neither" -- env HOME="$TEST_TMP/home" "$TOPOTUNE" check \
    --backend sim --input "$h100" --no-doctor
check "not named" test -z "$(grep 'configuration files' "$TEST_TMP/err")"
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    mkdir -p etc
    cp site.conf etc/nccl.conf
    # /etc/nccl.conf of this mount namespace only: /etc with the file laid over it
    # shellcheck disable=SC2016 # the words of the inner shell
    expect_exit 0 "a slow configuration of /etc/nccl.conf, priced as such" -- unshare -m bash -c \
        'mount --make-rprivate / && mount -t overlay overlay -o "lowerdir=$1:/etc" /etc &&
         exec env "$4" "$2" check --backend nccl --input "$3" --no-doctor' _ "$TEST_TMP/etc" \
        "$TOPOTUNE" "$h100" "${here[0]}"
    expect_stderr_has "NCCL_ALGO=Ring (/etc/nccl.conf)" "/etc/nccl.conf's variables are named"
    # slurmd runs a Prolog without $HOME: NCCL up to 2.29 finds ~/.nccl.conf through getpwuid
    home=$(getent passwd 0 | cut -d: -f6)
    if [ -d "$home" ]; then
        mkdir -p rootdir
        cp site.conf rootdir/.nccl.conf
        # shellcheck disable=SC2016 # the words of the inner shell
        expect_exit 0 "a slow configuration of the user's ~/.nccl.conf without \$HOME" -- unshare -m bash -c \
            'mount --make-rprivate / && mount --bind "$1" "$2" &&
             exec env -u HOME "$5" "$3" check --backend nccl --input "$4" --no-doctor' _ \
            "$TEST_TMP/rootdir" "$home" "$TOPOTUNE" "$h100" "${here[0]}"
        expect_stderr_has "NCCL_ALGO=Ring ($home/.nccl.conf)" "the home directory's file named"
    fi
fi
# the drain is the verdict's: a prolog whose standard output is closed drains a failing node too,
# and exits 1 (it exited 3, no verdict, and a Prolog passing 3 put the node back in service)
# shellcheck disable=SC2016 # the words of the inner shell
expect_exit 1 "a failing check, its standard output full" -- env SLURMD_NODENAME=n1 \
    TOPOTUNE_BENCH_PROGRAM=/bin/false sh -c 'exec "$1" check --backend sim --input "$2" --no-doctor \
    -b 64M -e 64M --drain --json --out full >/dev/full' _ "$TOPOTUNE" "$h100"
check "the drain was said all the same" grep -q "^scontrol update nodename=n1 state=drain" "$TEST_TMP/err"
check "and the write's error" grep -q "cannot write to standard output" "$TEST_TMP/err"
expect_exit 1 "a failing check whose metrics cannot be written" -- env "${slow[@]}" "$TOPOTUNE" check \
    --backend sim --input "$h100" --no-doctor --metrics /nonexistent-dir/check.prom
# A healthy node with its standard output closed (a daemon's child): the benchmark's text went to
# the check's event file through the closed descriptor's number, read as damaged events, and the
# node failed. Exit 3 now (its report could not be written), its metrics saying ok.
# shellcheck disable=SC2016 # the words of the inner shell
expect_exit 3 "a healthy check, its standard output closed" -- sh -c \
    'exec "$1" check --backend sim --input "$2" --no-doctor --metrics "$3" >&-' _ "$TOPOTUNE" "$h100" \
    "$TEST_TMP/closed.prom"
check "its metrics say ok" grep -q '^topotune_check_ok{.*} 1$' "$TEST_TMP/closed.prom"
check "no damaged events read" test "$(grep -c damaged "$TEST_TMP/err")" = 0

# 3. doctor's failure for real: 64 MB of /dev/shm for 8 GPUs (needs root and mount namespaces).
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    expect_exit 1 "small /dev/shm" -- unshare -m sh -c "mount -t tmpfs -o size=64m tmpfs /dev/shm &&
        '$TOPOTUNE' check --backend sim --input '$h100'"
    check "one line: doctor-shm, with its fix" grep -q '^FAIL doctor-shm: .*(fix: .*--shm-size' "$TEST_TMP/out"
    check "and nothing else failed" test "$(grep -c '^FAIL' "$TEST_TMP/out")" = 1
else
    echo "skipped: the /dev/shm check needs root and mount namespaces"
fi

# 4. Real MPI ranks against a profile's band (this node's class, 2 ranks); its variables reach
# them (a stand-in benchmark records what it was given), a refused one does not; a profile of
# another class or shape, or without the sizes measured, is no verdict (exit 2).
cls=$("$TOPOTUNE" topo --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
mkdir -p p
profile() { # profile BUSBW [CLASS [RANKS]]: a profile whose runs measured BUSBW GB/s at 64K..256K
    cat >p/profile.json <<EOF
{"schema": "topotune/profile/1", "class": "${2:-$cls}", "predicted": false, "version": 3,
 "sweep": {"nodes": 1, "ranks": ${3:-2}}, "winner": null,
 "variables": [{"name": "NCCL_ALGO", "value": "Ring", "role": "tuning", "evidence": {}},
               {"name": "LD_PRELOAD", "value": "/nonexistent/x.so", "role": "system", "evidence": {}}],
 "baseline": {"cv": 0.01, "per_size": [{"size": 65536, "busbw": $1}, {"size": 131072, "busbw": $1},
                                       {"size": 262144, "busbw": $1}]}}
EOF
}
cat >bench-env.sh <<EOF
#!/bin/sh
env >>"$TEST_TMP/bench.env"
exec "$TOPOTUNE_BENCH" "\$@"
EOF
chmod +x bench-env.sh
profile 0.000001
expect_exit 0 "2 MPI ranks above a profile's band pass" -- env TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-env.sh" \
    "$TOPOTUNE" check --backend mpi --np 2 --no-doctor --profile p -b 64K -e 256K -n 2 --out mpi --metrics mpi.prom
check "the profile's allowed variable reached the benchmark" grep -qx "NCCL_ALGO=Ring" bench.env
check "the refused one did not" test -z "$(grep '^LD_PRELOAD=/nonexistent' bench.env)"
check "its version in the metrics" grep -q '^topotune_profile_info{class="[^"]*",version="v3"} 1$' mpi.prom
expect_exit 0 "a variable of this environment the profile was not measured with" -- env NCCL_PROTO=Simple \
    NCCL_ALGO=Tree "$TOPOTUNE" check --backend mpi --np 2 --no-doctor --profile p -b 64K -e 256K -n 2
check "it is said, the profile's own not" sh -c "grep -q \"this environment's .*NCCL_PROTO.* reach the benchmark\" '$TEST_TMP/err' &&
    ! grep -q \"this environment's .*NCCL_ALGO.* reach\" '$TEST_TMP/err'"
# NCCL on this node (nccl-here.sh) reads its files too: those the profile does not set are said
h100_cls=$("$TOPOTUNE" topo --input "$h100" --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
profile 0.000001 "$h100_cls" 8
printf 'NCCL_PROTO=Simple\nNCCL_ALGO=Tree\n' >profile-site.conf
expect_exit 0 "a variable of NCCL's configuration file the profile was not measured with" -- env \
    "${here[@]}" NCCL_CONF_FILE="$TEST_TMP/profile-site.conf" "$TOPOTUNE" check --backend nccl \
    --input "$h100" --no-doctor --profile p -b 64K -e 256K -n 2
expect_stderr_has "NCCL_PROTO (set in $TEST_TMP/profile-site.conf) reach the benchmark" \
    "the file's variable is said"
check "the profile's own not, nor the file's name" sh -c \
    "! grep -q -e NCCL_ALGO -e NCCL_CONF_FILE '$TEST_TMP/err'"
profile 1000000
expect_exit 1 "MPI ranks run no NCCL: the files are not said" -- env \
    NCCL_CONF_FILE="$TEST_TMP/profile-site.conf" "$TOPOTUNE" check --backend mpi --np 2 --no-doctor \
    --profile p -b 64K -e 256K -n 2
check "not said" test -z "$(grep 'set in' "$TEST_TMP/err")"
profile 1000000
expect_exit 1 "2 MPI ranks far below a profile's band fail" -- "$TOPOTUNE" check --backend mpi --np 2 \
    --no-doctor --profile p -b 64K -e 256K -n 2
check "3 sizes below the profile's measured band" test "$(grep -c '^FAIL busbw: .* measured, below the band .*(measured by the profile)$' "$TEST_TMP/out")" = 3
profile 1000000 other-class-00000000
expect_exit 2 "a profile of another class: no verdict" -- "$TOPOTUNE" check --backend mpi --np 2 \
    --no-doctor --profile p -b 64K -e 256K -n 2
expect_stderr_has "is of class other-class-00000000" "it names both classes"
# A profile measured with another NCCL is no reference here either: it failed the node through
# doctor's profile row, and --drain drained it (an NCCL upgrade drained the whole class at once).
nccl_here=$("$TOPOTUNE" topo --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["software"]["nccl"] or "")')
if [ -n "$nccl_here" ]; then
    profile 1000000
    python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); p["software"] = {"nccl": "2.18.1"}
json.dump(p, open(sys.argv[1], "w"))' p/profile.json
    expect_exit 2 "a profile of another NCCL: no verdict" -- "$TOPOTUNE" check --backend mpi --np 2 \
        --profile p -b 64K -e 256K -n 2 --drain
    expect_stderr_has "measured with NCCL 2.18.1, this node has $nccl_here" "it says both versions"
    check "NOT CHECKED, no drain" sh -c "grep -q '^NOT CHECKED ' '$TEST_TMP/out' && ! grep -q 'state=drain' '$TEST_TMP/out' '$TEST_TMP/err'"
fi
profile 1000000
python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); p["backend"] = "nccl"
json.dump(p, open(sys.argv[1], "w"))' p/profile.json
expect_exit 2 "a profile of the nccl backend against MPI ranks: no verdict" -- "$TOPOTUNE" check \
    --backend mpi --np 2 --no-doctor --profile p -b 64K -e 256K -n 2
expect_stderr_has "measured with the nccl backend, this check runs mpi" "it says both backends"
# a profile gen wrote without a version: the report kept its schema, the metrics said "v0"
profile 0.000001
python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); del p["version"]
json.dump(p, open(sys.argv[1], "w"))' p/profile.json
expect_exit 0 "a profile without a version" -- "$TOPOTUNE" check --backend mpi --np 2 --no-doctor \
    --profile p -b 64K -e 256K -n 2 --json --metrics nover.prom
check "the JSON keeps the schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/check.schema.json" "$TEST_TMP/out"
check "the metrics say its version is unknown" grep -q '^topotune_profile_info{.*version="unknown"} 1$' nover.prom
# a sim profile of 16 ranks (two nodes) against the sim's one node of 8: --np, as it advised,
# changes nothing there
h100_cls=$("$TOPOTUNE" topo --input "$h100" --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
profile 1000000 "$h100_cls" 16
python3 -c 'import json, sys; p = json.load(open(sys.argv[1])); p.update(backend="sim", predicted=True)
json.dump(p, open(sys.argv[1], "w"))' p/profile.json
expect_exit 2 "a sim profile of 16 ranks against 8" -- "$TOPOTUNE" check --backend sim --input "$h100" \
    --no-doctor --profile p -b 64K -e 256K -n 2
expect_stderr_has "the sim backend runs one node of --input's GPUs" "no advice to give --np"
# A node that lost a GPU is of another class than its profile's: that was no verdict (exit 2,
# which the README's Prolog passes) where the node is broken. The same machine (CPUs, GPU model)
# with fewer GPUs, InfiniBand NICs or NVSwitches than the profile's class fails, drained; another
# machine, with as many or fewer, is still no verdict.
hgx=$TOPOTUNE_SRC/profiles/specs/hgx-h100.json
hgx_cls=$("$TOPOTUNE" topo --input "$hgx" --json 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["class"]["id"])')
profile 1000000 "$hgx_cls" 8
"$TOPOTUNE" topo --input "$hgx" --json 2>/dev/null | python3 -c 'import json, sys
t = json.load(sys.stdin); p = json.load(open(sys.argv[1]))
p.update(backend="sim", predicted=True, hardware={"gpus": 8, "gpu_model": "H100-SXM5-80GB",
    "nvswitches": 4, "nics": 8, "cpu": t["cpu"], "matrix": t["matrix"], "class_key": t["class"]["key"]})
json.dump(p, open(sys.argv[1], "w"))' p/profile.json
node() { # node FILE GPU COUNT IB_NICS: a spec of the profile's machine, or another
    printf '{"schema": "topotune/spec/1", "gpu": "%s", "count": %d, "fabric": "nvswitch",
 "nics": [{"model": "CX7-400G-IB", "count": %d}], "cpu": {"vendor": "intel", "sockets": 2}}\n' \
        "$2" "$3" "$4" >"$1"
}
node h100x7.json H100-SXM5-80GB 7 7
expect_exit 1 "7 of the class's 8 GPUs: a verdict" -- env SLURMD_NODENAME=n1 "$TOPOTUNE" check \
    --backend sim --input h100x7.json --no-doctor --profile p --drain --json
check "the loss is the failure, the drain said, the report valid" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is False and [f["check"] for f in r["failures"]] == ["hardware"], r
assert "7 GPU(s) where the class has 8, 7 ib NIC(s) where the class has 8" in r["failures"][0]["text"], r
assert "error" not in r and r["sizes"] == [], r' "$TEST_TMP/out"
check "drained" grep -q "state=drain 'reason=topotune: check-fails checks=hardware" "$TEST_TMP/err"
check "valid against the schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
    "$TOPOTUNE_SRC/docs/schemas/check.schema.json" "$TEST_TMP/out"
node ib7.json H100-SXM5-80GB 8 7
expect_exit 1 "7 of the class's 8 InfiniBand NICs: a verdict" -- "$TOPOTUNE" check --backend sim \
    --input ib7.json --no-doctor --profile p
check "it names the NICs" grep -q "^FAIL hardware: this node has 7 ib NIC(s) where the class has 8 " "$TEST_TMP/out"
node h200.json H200-SXM5-141GB 8 8
expect_exit 2 "another machine with as many GPUs: no verdict" -- "$TOPOTUNE" check --backend sim \
    --input h200.json --no-doctor --profile p
expect_stderr_has "is of class $hgx_cls" "it names the profile's class"
node a100x4.json A100-SXM4-80GB 4 4
expect_exit 2 "another machine with fewer GPUs (a profile given to the wrong node): no verdict" -- \
    "$TOPOTUNE" check --backend sim --input a100x4.json --no-doctor --profile p
profile 1000000 "$cls" 16
expect_exit 2 "a profile of 16 ranks against 2: no verdict" -- "$TOPOTUNE" check --backend mpi --np 2 \
    --no-doctor --profile p -b 64K -e 256K -n 2
expect_stderr_has "measured with 16 rank(s), this check ran 2" "it says both shapes"
profile 1000000
expect_exit 2 "none of the profile's sizes measured: no verdict, not OK" -- "$TOPOTUNE" check --backend mpi \
    --np 2 --no-doctor --profile p -b 1M -e 1M -n 2
check "no OK line" test -z "$(grep '^OK' "$TEST_TMP/out")"
sed -i 's/"size": 131072/"size": 100000/; s/"size": 65536/"size": 99999/; s/"size": 262144/"size": 99998/' p/profile.json
expect_exit 2 "a profile whose sizes lie between those measured: no verdict, not OK" -- "$TOPOTUNE" check \
    --backend mpi --np 2 --no-doctor --profile p -b 64K -e 256K -n 2
expect_stderr_has "none of the sizes this check measured" "it says so"
expect_exit 3 "a benchmark that cannot start: exit 3, no verdict, no drain" -- env \
    TOPOTUNE_BENCH_PROGRAM=/nonexistent/topotune-bench SLURMD_NODENAME=n1 "$TOPOTUNE" check \
    --backend sim --input "$h100" --no-doctor --drain
check "nothing drained" test -z "$(grep scontrol "$TEST_TMP/out")"
expect_stderr_has "cannot run /nonexistent/topotune-bench" "it names the program"

# 5. A run that measured nothing, or not every size, is no evidence of health (exit 1, no OK);
# a size that is no whole number of floats is judged at the size nccl-tests runs.
printf '#!/bin/sh\necho "all good"\n' >bench-none.sh
cat >bench-first.sh <<EOF
#!/bin/sh
# the real benchmark, then every size's event but the first dropped from its --json file
"$TOPOTUNE_BENCH" "\$@" || exit
for a in "\$@"; do case \$a in --json=*) f=\${a#--json=} ;; esac; done
awk '!/"event": *"size"/ || !seen++' "\$f" >"\$f.cut" && mv "\$f.cut" "\$f"
EOF
chmod +x bench-none.sh bench-first.sh
expect_exit 1 "a benchmark that exits 0 and measures nothing fails" -- env \
    TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-none.sh" "$TOPOTUNE" check --backend sim --input "$h100" --no-doctor
check "FAIL bench, no OK" sh -c "grep -q '^FAIL bench: topotune-bench exited 0 without ending its run' '$TEST_TMP/out' &&
    ! grep -q '^OK' '$TEST_TMP/out'"
expect_exit 1 "a benchmark that gives the first size only fails" -- env \
    TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-first.sh" "$TOPOTUNE" check --backend sim --input "$h100" --no-doctor
check "each of the 3 sizes left unmeasured named" test "$(grep -c '^FAIL bench: all_reduce at [0-9]* B: the benchmark gave no busbw for it$' "$TEST_TMP/out")" = 3
cat >bench-nosizes.sh <<'EOF'
#!/bin/sh
# a run that ends ok having measured no size at all
for a in "$@"; do case $a in --json=*) f=${a#--json=} ;; esac; done
printf '{"event": "start", "ranks": 8}\n{"event": "end", "outcome": "ok"}\n' >"$f"
EOF
chmod +x bench-nosizes.sh
expect_exit 1 "a run that ends ok with no size measured fails" -- env \
    TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-nosizes.sh" "$TOPOTUNE" check --backend sim --input "$h100" --no-doctor
check "each of the 4 sizes named, no OK" sh -c "test \$(grep -c '^FAIL bench: all_reduce at [0-9]* B: the benchmark gave no busbw for it$' '$TEST_TMP/out') = 4 &&
    ! grep -q '^OK' '$TEST_TMP/out'"
# --deadline: a benchmark that hangs past it (a watchdog that never fires, here) is stopped and
# fails, a verdict, before Slurm kills a HealthCheckProgram at 60 s with none (the run's own
# limit is 20 x -T + 30 s: 630 s by default).
printf '#!/bin/sh\nexec sleep 1000\n' >bench-hangs.sh
chmod +x bench-hangs.sh
expect_exit 1 "a benchmark still running at --deadline fails" -- timeout 120 env \
    TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-hangs.sh" "$TOPOTUNE" check --backend sim --input "$h100" \
    --no-doctor --deadline 20
check "said as the deadline's" grep -q "^FAIL bench: topotune-bench still ran at the check's --deadline of 20 s, stopped" \
    "$TEST_TMP/out"
# A benchmark asleep in the GPU driver (after an Xid; a write to a frozen file system here), or one
# of its ranks: SIGKILL does not end it, and the check waited for it past its deadline, for ever,
# with no verdict: now it fails the node and leaves the process behind.
if frozen_dir; then
    printf '#!/bin/sh\nexec sh -c "echo x >%s/bench"\n' "$FROZEN" >bench-stuck.sh
    printf '#!/bin/sh\nsh -c "echo x >%s/rank" &\nexec sleep 1000\n' "$FROZEN" >rank-stuck.sh
    chmod +x bench-stuck.sh rank-stuck.sh
    start=$SECONDS
    expect_exit 1 "a benchmark SIGKILL does not end fails by the deadline" -- timeout 120 env \
        TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-stuck.sh" "$TOPOTUNE" check --backend sim --input "$h100" \
        --no-doctor --deadline 20
    check "ended before Slurm's 60 s" test $((SECONDS - start)) -lt 60
    check "said as stuck" grep -q "^FAIL bench: topotune-bench had not ended 1 s after SIGKILL (still tearing down, or asleep in the GPU driver" \
        "$TEST_TMP/out"
    start=$SECONDS
    expect_exit 1 "... and one whose rank SIGKILL does not end" -- timeout 120 env \
        TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/rank-stuck.sh" "$TOPOTUNE" check --backend sim --input "$h100" \
        --no-doctor --deadline 20
    check "said as the deadline's, its rank left behind" grep -q \
        "^FAIL bench: topotune-bench still ran at the check's --deadline of 20 s, stopped, but some of its processes did not end after SIGKILL" \
        "$TEST_TMP/out"
    check "that one too before Slurm's 60 s" test $((SECONDS - start)) -lt 60
    # a benchmark that ends its run well but leaves a process SIGKILL does not end: its numbers
    # stand, the node does not (a GPU held in the driver); it passed
    # shellcheck disable=SC2016 # the script's own variables
    printf '#!/bin/sh\nsh -c "echo x >%s/ok" &\nexec "$TOPOTUNE_BENCH" "$@"\n' "$FROZEN" >ok-stuck.sh
    chmod +x ok-stuck.sh
    expect_exit 1 "a run that ends well, a process of it left" -- timeout 120 env \
        TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/ok-stuck.sh" "$TOPOTUNE" check --backend sim --input "$h100" --no-doctor
    check "said" grep -q "^FAIL bench: topotune-bench ended its run, but some of its processes did not end after SIGKILL" \
        "$TEST_TMP/out"
    thaw_dir
fi
# a peer copy that hangs gets two fifths of the deadline (never more than its own 47 s on 8
# GPUs): a verdict of its own, and no time left to start the benchmark in
printf '#!/bin/sh\ntouch "%s/bench-started"\nexec sleep 1000\n' "$TEST_TMP" >bench-started.sh
chmod +x bench-started.sh
expect_exit 1 "a peer copy that hangs under --deadline fails" -- timeout 120 env \
    TOPOTUNE_P2P_PROGRAM="$TEST_TMP/bench-hangs.sh" TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-started.sh" \
    "$TOPOTUNE" check --backend sim --input "$h100" --deadline 20 --json
check "the copy's failure, killed after 8 s; the benchmark not run" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
t = [f["text"] for f in r["failures"] if f["check"] == "doctor-p2p-copy"]
assert t and "killed after 8 s" in t[0] and r["bench"]["exit_code"] == -1 and "error" not in r, r' \
    "$TEST_TMP/out"
check "the benchmark was not started in the 9 s left" test ! -e bench-started
check "no size listed as unmeasured by a run never started" test -z "$(grep 'gave no busbw' "$TEST_TMP/out")"
# the drain too ends by the deadline: Slurm's commands get what is left of it (sinfo and scontrol
# had 30 s each, and a slow slurmctld kept the check past Slurm's 60 s, undrained)
mkdir -p slow-slurm
printf '#!/bin/sh\nexec sleep 1000\n' >slow-slurm/sinfo
chmod +x slow-slurm/sinfo
expect_exit 1 "a drain under --deadline" -- timeout 120 env PATH="$TEST_TMP/slow-slurm:$PATH" \
    TOPOTUNE_P2P_PROGRAM="$TEST_TMP/bench-hangs.sh" SLURMD_NODENAME=n1 "$TOPOTUNE" check --backend sim \
    --input "$h100" --deadline 30 --drain --apply
check "sinfo given what was left, not 30 s" sh -c "grep -q 'sinfo did not answer within [0-9] s' '$TEST_TMP/err'"
# ... and a benchmark that hangs to its end leaves the drain its 10 s (it had 1 s for each command)
expect_exit 1 "a hung benchmark's drain under --deadline" -- timeout 120 env PATH="$TEST_TMP/slow-slurm:$PATH" \
    TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-hangs.sh" SLURMD_NODENAME=n1 "$TOPOTUNE" check --backend sim \
    --input "$h100" --no-doctor --deadline 30 --drain --apply
check "sinfo given 3 s or more" sh -c "grep -qE 'sinfo did not answer within ([3-9]|[1-9][0-9]) s' '$TEST_TMP/err'"
expect_exit 2 "a deadline under 20 s is refused" -- "$TOPOTUNE" check --backend sim --input "$h100" --deadline 19
expect_exit 2 "with --drain, under 30 s" -- "$TOPOTUNE" check --backend sim --input "$h100" --deadline 29 --drain
# Damaged events are no measurement: a size far below its band, then given again fine, passed;
# ranks of -5 and a busbw of -3 were copied into a report its own schema refused (the ranks
# blamed on --np, exit 2); a busbw of 1e308 passed as above the band.
cat >bench-damaged.sh <<'EOF'
#!/bin/sh
# the real benchmark's sizes, with one event of $DAMAGE ('SIZE BUSBW' or 'ranks N') put first,
# or its start left out ('nostart'), or a size after its end ('late')
"$TOPOTUNE_BENCH" "$@" || exit
for a in "$@"; do case $a in --json=*) f=${a#--json=} ;; esac; done
set -- $DAMAGE
if [ "$1" = ranks ]; then sed -i "s/\"ranks\": *[0-9]*/\"ranks\": $2/" "$f"
elif [ "$1" = nostart ]; then sed -i '/"event": *"start"/d' "$f"
elif [ "$1" = late ]; then echo '{"event": "size", "size": 1, "busbw": 1}' >>"$f"
else sed -i "0,/\"event\": *\"size\"/s//\"event\": \"size\", \"size\": $1, \"busbw\": $2}\\n{&/" "$f"; fi
EOF
chmod +x bench-damaged.sh
# without a start the results had no ranks to check the reference's against: OK, exit 0
for damage in "67108864 0.001" "67108864 -3" "67108864 1e308" "ranks -5" nostart late; do
    expect_exit 1 "damaged events ($damage) fail" -- env TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-damaged.sh" \
        DAMAGE="$damage" "$TOPOTUNE" check --backend sim --input "$h100" --no-doctor --json
    check "said as damaged ($damage), the report in its schema" sh -c "grep -q 'events are damaged' '$TEST_TMP/out' &&
        python3 '$TOPOTUNE_SRC/tests/cli/validate-schema.py' '$TOPOTUNE_SRC/docs/schemas/check.schema.json' '$TEST_TMP/out'"
done
# a benchmark the loader cannot start (its libnccl.so.2 missing: exit 127 before any event) was a
# failing node, exit 1, drained with --drain: the environment's, no verdict
printf '#!/bin/sh\necho "error while loading shared libraries: libnccl.so.2" >&2\nexit 127\n' >noload.sh
chmod +x noload.sh
expect_exit 3 "a benchmark that cannot be loaded" -- env SLURMD_NODENAME=n1 \
    TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/noload.sh" "$TOPOTUNE" check --backend sim --input "$h100" \
    --no-doctor --drain --out noload
check "NOT CHECKED, no drain" sh -c "grep -q '^NOT CHECKED .*could not be started (exit 127' '$TEST_TMP/out' &&
    ! grep -q scontrol '$TEST_TMP/out' '$TEST_TMP/err'"
# a link planted as the run's log is refused, and said so: it was "cannot run topotune-bench:
# Too many levels of symbolic links", the benchmark blamed (exit 3)
mkdir -p planted && ln -sf "$TEST_TMP/victim.log" planted/check-bench.log
expect_exit 2 "a planted log link" -- "$TOPOTUNE" check --backend sim --input "$h100" --no-doctor --out planted --json
check "the log named, not the benchmark; the schema kept" sh -c "grep -q 'check-bench.log.* is a link' '$TEST_TMP/out' &&
    python3 '$TOPOTUNE_SRC/tests/cli/validate-schema.py' '$TOPOTUNE_SRC/docs/schemas/check.schema.json' '$TEST_TMP/out'"
expect_no_file "$TEST_TMP/victim.log" "nothing written through it"
# the model's reference is for one rank per GPU: a run of another count is no verdict
sed 's/"ranks": 8/"ranks": 4/; s/"event": "end"/"event": "size", "size": 67108864, "busbw": 1}\n{"event": "end"/' \
    bench-nosizes.sh >bench-4ranks.sh
chmod +x bench-4ranks.sh
expect_exit 2 "a run of 4 ranks against the model's 8: no verdict" -- env \
    TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-4ranks.sh" "$TOPOTUNE" check --backend sim --input "$h100" --no-doctor
check "NOT CHECKED, both counts said" grep -q "^NOT CHECKED .*is for 8 rank(s), one per GPU of this node, this check ran 4" "$TEST_TMP/out"
# no reference for what the run measures: host MPI's numbers held to the model's NCCL band failed
# the node (1 rank: busbw 0), and one GPU's busbw of 0 passed every band
expect_exit 0 "host MPI against the model: measured, not judged" -- "$TOPOTUNE" check --backend mpi \
    --input "$h100" --no-doctor -b 1M -e 2M -n 2 --json
check "says no reference, judges no size" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert "mpi backend measures host MPI" in r["reference_missing"] and not r["failures"], r
assert all(s.get("low") is None for s in r["sizes"]), r' "$TEST_TMP/out"
echo '{"schema": "topotune/spec/1", "gpu": "H100-SXM5-80GB", "count": 1}' >one.json
expect_exit 0 "one GPU: measured, not judged" -- "$TOPOTUNE" check --backend sim --input one.json \
    --no-doctor -b 64M -e 128M
check "says why, not that every size is within its band" grep -q "^OK .*one GPU: busbw is 0 at one rank" "$TEST_TMP/out"
expect_exit 0 "sizes of no whole number of floats" -- "$TOPOTUNE" check --backend sim --input "$h100" \
    --no-doctor -b 64000001 -e 256000004 --json
check "judged at 64000000, 128000000 and 256000004, each measured" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert [(s["size"], s["busbw"] is not None) for s in r["sizes"]] == [
    (64000000, True), (128000000, True), (256000004, True)], r["sizes"]' "$TEST_TMP/out"
expect_exit 3 "a benchmark that cannot start" -- env TOPOTUNE_BENCH_PROGRAM=/nonexistent/topotune-bench \
    "$TOPOTUNE" check --backend sim --input "$h100" --no-doctor
check "says NOT CHECKED, never OK" sh -c "grep -q '^NOT CHECKED .*: cannot run /nonexistent/topotune-bench' '$TEST_TMP/out' &&
    ! grep -q '^OK' '$TEST_TMP/out'"

# A hardware file of no NVIDIA GPU (a CPU-only server, AMD's MI200) gives the sim nothing to
# predict: its run failed, exit 1, and a Prolog drained the node. The input's: no verdict, exit 2.
for f in hwloc-dell-r910-4s-groups-pci.xml hwloc-llnl-tioga-ex235a-8xMI200-amd.xml; do
    expect_exit 2 "the sim on $f" -- "$TOPOTUNE" check --backend sim --input "$TOPOTUNE_FIXTURES/$f" \
        --no-doctor --drain
    check "NOT CHECKED, why, no drain" sh -c "grep -q '^NOT CHECKED .*has no NVIDIA GPU.* for the sim backend' '$TEST_TMP/out' &&
        ! grep -q scontrol '$TEST_TMP/out' '$TEST_TMP/err'"
done
# GPUs of no model the catalog knows (an NCCL dump without <gpu> elements) give no reference:
# the run is reported, busbw is not judged against the model's Volta guess.
expect_exit 0 "GPUs of no known model: measured, not judged" -- "$TOPOTUNE" check --backend mpi --np 2 \
    --input "$TOPOTUNE_FIXTURES/nccl-topo-azure-ndv4.xml" --no-doctor -b 64K -e 64K --json
check "says no reference, judges no size" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert "no model the catalog knows" in r["reference_missing"], r
assert all(s.get("low") is None for s in r["sizes"]), r' "$TEST_TMP/out"
# Nor does a file silent on NVLink (AWS's p4d: NCCL adds the links at run time): it was NOT
# CHECKED, exit 2, which a Prolog takes as a failure and drains.
expect_exit 0 "NVLink not described: measured, not judged" -- "$TOPOTUNE" check --backend mpi --np 2 \
    --input "$TOPOTUNE_FIXTURES/nccl-topo-aws-p4d-24xlarge.xml" --no-doctor -b 64K -e 64K --json
check "says no reference" python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
assert "does not describe NVLink" in r["reference_missing"], r' "$TEST_TMP/out"

# No verdict without a run to judge: the nccl backend on a node without a GPU is NOT CHECKED
# (exit 3), --out naming a file is bad input (exit 2): neither drains the node. A check that
# cannot start says NOT CHECKED on standard output too, and its JSON keeps the schema.
if ! "$TOPOTUNE" topo --json 2>/dev/null | grep -q '"gpus": \[{'; then
    expect_exit 3 "the nccl backend without a GPU" -- "$TOPOTUNE" check --no-doctor --drain
    check "NOT CHECKED, why, no drain" sh -c "grep -q '^NOT CHECKED .*no GPU on this node' '$TEST_TMP/out' &&
        ! grep -q scontrol '$TEST_TMP/out'"
fi
touch afile
printf 'topotune_check_ok 1\n' >stale.prom # an earlier check's, that node_exporter still reads
expect_exit 2 "--out naming a file" -- "$TOPOTUNE" check --backend sim --input "$h100" --out afile --drain \
    --metrics stale.prom
check "NOT CHECKED, no drain" sh -c "grep -q '^NOT CHECKED .*is not a folder' '$TEST_TMP/out' && ! grep -q scontrol '$TEST_TMP/out'"
check "its metrics say not ok, the earlier file replaced" grep -qx 'topotune_check_ok{source="predicted"} 0' stale.prom
# options that do not go together, or do not read, are no check made either: said as such
expect_exit 2 "--backend sim without --input" -- "$TOPOTUNE" check --backend sim --metrics usage.prom
check "NOT CHECKED, with the reason, and its metrics" sh -c "grep -q '^NOT CHECKED .*--input FILE' '$TEST_TMP/out' &&
    grep -qx 'topotune_check_ok{source=.predicted.} 0' usage.prom"
expect_exit 2 "--metrics - refused, with --json" -- "$TOPOTUNE" check --backend sim --input "$h100" --json --metrics -
check "standard output holds the JSON alone" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$TEST_TMP/out"
expect_exit 2 "an unknown option" -- "$TOPOTUNE" check --bogus
check "NOT CHECKED, with the reason" grep -q "^NOT CHECKED .*unknown option '--bogus'" "$TEST_TMP/out"
mkdir -p pbad
printf '{"schema": "topotune/profile/1", "class": "%s", "version": "v9"}\n' "$cls" >pbad/profile.json
expect_exit 2 "a profile whose version is no number" -- "$TOPOTUNE" check --backend mpi --np 2 --profile pbad
check "NOT CHECKED on standard output, with the reason" grep -q '^NOT CHECKED .*"version" is not a whole number' "$TEST_TMP/out"
expect_exit 2 "the same, --json" -- "$TOPOTUNE" check --backend mpi --np 2 --profile pbad --json
check "the JSON holds the error and keeps the schema" sh -c "python3 '$TOPOTUNE_SRC/tests/cli/validate-schema.py' \
    '$TOPOTUNE_SRC/docs/schemas/check.schema.json' '$TEST_TMP/out' &&
    grep -q '\"status\": 2' '$TEST_TMP/out'"

# 6. A node whose GPUs run a job (NVML counts its compute processes; Slurm runs the
# HealthCheckProgram on busy nodes): measured, its contention failed it and drained it. Now not
# measured (exit 3, no verdict); --busy run measures anyway. The node: a DGX-2's hwloc export
# as this machine, with tests/fakes/fake-nvml.c as its driver.
if [ -e "${TOPOTUNE_FAKE_NVML:-}/libnvidia-ml.so.1" ]; then
    printf '#!/bin/sh\ntouch "%s/bench-ran"\nexit 1\n' "$TEST_TMP" >bench-mark.sh
    chmod +x bench-mark.sh
    live=(env HWLOC_XMLFILE="$TOPOTUNE_FIXTURES/hwloc-nvidia-dgx2h-16xV100-nvswitch.xml" HWLOC_THISSYSTEM=1
        LD_LIBRARY_PATH="$TOPOTUNE_FAKE_NVML${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
        FAKE_NVML_BUSES="34,36,39,3b,57,59,5c,5e,b7,b9,bc,be,e0,e2,e5,e7"
        TOPOTUNE_BENCH_PROGRAM="$TEST_TMP/bench-mark.sh" SLURMD_NODENAME=n1)
    # the last check's metrics stay, their time saying how old: "not ok" alerted every hour
    printf 'topotune_check_ok{class="c",source=""} 1\n' >busy.prom
    expect_exit 3 "GPUs busy with a job: not measured" -- "${live[@]}" FAKE_NVML_PROCS=2 "$TOPOTUNE" check \
        --no-doctor --drain --json --metrics busy.prom
    check "no run, no drain, the reason" python3 -c '
import json, os, sys
r = json.load(open(sys.argv[1]))
assert r["ok"] is False and r["error"]["status"] == 3 and "2 compute process(es)" in r["error"]["text"], r
assert r["busy"] == 2 and r["bench"]["outcome"] == "none" and not os.path.exists(sys.argv[2]), r' "$TEST_TMP/out" "$TEST_TMP/bench-ran"
    check "valid against the schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
        "$TOPOTUNE_SRC/docs/schemas/check.schema.json" "$TEST_TMP/out"
    check "nothing drained" test -z "$(grep -h scontrol "$TEST_TMP/out" "$TEST_TMP/err")"
    check "the metrics left as they were" grep -qx 'topotune_check_ok{class="c",source=""} 1' busy.prom
    expect_exit 1 "--busy run measures anyway" -- "${live[@]}" FAKE_NVML_PROCS=2 "$TOPOTUNE" check --no-doctor \
        --busy run
    check "the benchmark ran" test -e bench-ran
    rm -f bench-ran
    expect_exit 1 "idle GPUs: measured" -- "${live[@]}" "$TOPOTUNE" check --no-doctor
    check "the benchmark ran" test -e bench-ran
    rm -f bench-ran
    # a hardware file for the GPUs this node runs on (a VM's export): they are busy all the same
    expect_exit 3 "--input with the nccl backend, GPUs busy" -- "${live[@]}" FAKE_NVML_PROCS=1 "$TOPOTUNE" \
        check --input "$h100" --no-doctor
    check "not run" test ! -e bench-ran
    # a Prolog of exclusive nodes: a process before the job is the last job's, stuck: a failure
    expect_exit 1 "--busy fail: a verdict" -- "${live[@]}" FAKE_NVML_PROCS=3 "$TOPOTUNE" check --no-doctor \
        --busy fail --drain --metrics busy.prom
    check "FAIL busy, drained, not run" sh -c "grep -q '^FAIL busy: .*3 compute process' '$TEST_TMP/out' &&
        grep -q 'checks=busy' '$TEST_TMP/out' && test ! -e bench-ran"
    check "its metrics written" grep -q '^topotune_check_ok{.*} 0$' busy.prom
fi

# 7. Refusals.
expect_exit 2 "--backend sim without --input" -- "$TOPOTUNE" check --backend sim
expect_exit 2 "--apply without --drain" -- "$TOPOTUNE" check --backend sim --input "$h100" --apply
expect_exit 2 "--metrics - (stdout holds the lines)" -- "$TOPOTUNE" check --backend sim --input "$h100" --metrics -
expect_exit 2 "a hardware file that is not there" -- "$TOPOTUNE" check --backend sim --input nosuch.json
expect_exit 2 "a profile that is not there" -- "$TOPOTUNE" check --backend sim --input "$h100" --profile nosuch
finish
