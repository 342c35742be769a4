# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# A private Slurm cluster on this machine for a test (sourced after lib.sh): munge, slurmctld and
# one slurmd per node name, as root, under $TEST_TMP/slurm, torn down when the test exits.
#   slurm_up            one node named after this host
#   slurm_up N1 N2 ...  nodes with those names, each its own `slurmd -N NAME` on this host
# Skips the test (exit 0, saying why) where Slurm is not installed or its daemons cannot start.
# Sets SLURM_CONF for the commands that follow. SLURM_EXTRA_CONF, when set, is added to slurm.conf
# (a Prolog, say).

slurm_skip() {
    echo "skipped: $*"
    finish
    exit 0
}

slurm_pids=()
slurm_cleanup() {
    for p in "${slurm_pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$TEST_TMP"
}

slurm_up() {
    local cmd host socket slurm=$TEST_TMP/slurm names=("$@") port=16930 n
    for cmd in srun sinfo scontrol slurmctld slurmd munged; do
        command -v "$cmd" >/dev/null || slurm_skip "$cmd not installed (tools/install-deps.sh installs slurm-wlm and munge)"
    done
    [ "$(id -u)" = 0 ] || slurm_skip "a private Slurm cluster needs root"
    mkdir -p "$slurm/state" /run/munge
    host=$(hostname)
    trap slurm_cleanup EXIT
    if ! pgrep -x munged >/dev/null; then
        munged --force --foreground --socket="$slurm/munge.sock" --pid-file="$slurm/munged.pid" \
            --log-file="$slurm/munged.log" --seed-file="$slurm/munge.seed" &
        slurm_pids+=($!)
        socket="$slurm/munge.sock"
    else
        socket=/run/munge/munge.socket.2
    fi
    cat >"$slurm/slurm.conf" <<CONF
ClusterName=topotune-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$socket
CryptoType=crypto/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SchedulerType=sched/builtin
MpiDefault=none
StateSaveLocation=$slurm/state
SlurmdSpoolDir=$slurm/spool-%n
SlurmctldPidFile=$slurm/slurmctld.pid
SlurmdPidFile=$slurm/slurmd-%n.pid
SlurmctldPort=16917
SlurmdPort=16918
SlurmctldLogFile=$slurm/slurmctld.log
SlurmdLogFile=$slurm/slurmd-%n.log
ReturnToService=2
${SLURM_EXTRA_CONF:-}
CONF
    if [ ${#names[@]} = 0 ]; then
        echo "NodeName=$host CPUs=$(nproc) State=UNKNOWN" >>"$slurm/slurm.conf"
        mkdir -p "$slurm/spool-$host"
    else
        for n in "${names[@]}"; do
            mkdir -p "$slurm/spool-$n"
            echo "NodeName=$n NodeHostname=$host Port=$((port++)) CPUs=$(nproc) State=UNKNOWN" >>"$slurm/slurm.conf"
        done
    fi
    echo "PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP" >>"$slurm/slurm.conf"
    export SLURM_CONF=$slurm/slurm.conf
    sleep 1
    slurmctld -D -i >/dev/null 2>&1 &
    slurm_pids+=($!)
    if [ ${#names[@]} = 0 ]; then
        slurmd -D >/dev/null 2>&1 &
        slurm_pids+=($!)
    else
        for n in "${names[@]}"; do
            slurmd -D -N "$n" >/dev/null 2>&1 &
            slurm_pids+=($!)
        done
    fi
    local want=${#names[@]}
    [ "$want" = 0 ] && want=1
    for _ in $(seq 60); do
        [ "$(sinfo -h -N -o %T 2>/dev/null | grep -c idle)" -ge "$want" ] && return 0
        sleep 0.5
    done
    slurm_skip "the private Slurm did not come up: $(tail -n 2 "$slurm"/slurm*.log 2>/dev/null | tr '\n' ' ')"
}
