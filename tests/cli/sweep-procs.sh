# SPDX-License-Identifier: MIT
# Sourced by the supervision tests after lib.sh: a sweep of hung MPI ranks (fake-bench.sh mode
# hang, real mpirun) and a count of what is left of it.
# shellcheck shell=bash disable=SC2034
fake=$TEST_TMP/fake-bench
fake_bench "$fake" space
export TOPOTUNE_BENCH_PROGRAM=$fake FAKE_PIDS=$TEST_TMP/pids
cat >"$TEST_TMP/hang.json" <<'JSON'
{"schema": "topotune/space/1", "backend": "mpi", "sizes": {"min": "8", "max": "8"},
 "fixed": {"NCCL_FAKE_MODE": "hang"}, "vars": {"NCCL_ALGO": ["Ring"]}, "repeat": 1,
 "timeout_s": 120}
JSON
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader,tcp
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# start_hung_sweep DIR: a sweep in the background ($sweep_pid) whose 2 ranks hang; returns when
# both ranks run.
start_hung_sweep() {
    : >"$FAKE_PIDS"
    "$TOPOTUNE" sweep --space "$TEST_TMP/hang.json" --np 2 --launcher mpirun --out "$1" \
        2>"$TEST_TMP/sweep.err" &
    sweep_pid=$! # read by the sourcing test
    for _ in $(seq 100); do
        [ "$(wc -l <"$FAKE_PIDS")" -ge 2 ] && return 0
        sleep 0.1
    done
    echo "the ranks never started: $(cat "$TEST_TMP/sweep.err")" >&2
}

# leftovers: live processes (zombies left out) among the ranks' process groups and their launcher.
leftovers() {
    local groups parents
    groups=$(awk '{print $2}' "$FAKE_PIDS" | sort -u | tr '\n' ' ')
    parents=$(awk '{print $3}' "$FAKE_PIDS" | sort -u | tr '\n' ' ')
    ps -eo pid=,pgid=,stat= | awk -v g=" $groups" -v p=" $parents" \
        '$3 !~ /^Z/ && (index(g, " " $2 " ") || index(p, " " $1 " "))' | wc -l
}

# Whatever a failing run leaves is ended when the test ends.
end_leftovers() {
    [ -s "$FAKE_PIDS" ] || return 0
    awk '{print -$2; print $3}' "$FAKE_PIDS" | while read -r p; do kill -9 -- "$p" 2>/dev/null; done
}
