# SPDX-License-Identifier: MIT
# Simulated hosts on this machine, for the multi-node tests (sourced).
#
#   mn_guard S ARGS  skips the test (exit 77, saying why) where namespaces cannot be made here;
#                  else runs it again under `timeout S` (ARGS: the script's own), with cleanup on
#                  any exit (mn_down, $TEST_TMP): past S seconds the test is ended with SIGTERM and
#                  still cleans up, where ctest's own timeout would SIGKILL it and leave the
#                  namespaces behind. Call it right after sourcing lib.sh and this file.
#   mn_up N        hosts h1..hN: each a network namespace with lo, eth0 (a veth to a bridge in a
#                  "head" namespace at 10.77.0.1/24) at 10.77.0.1N, and a decoy docker0 at
#                  172.17.0.1/16 (the same on every host, as Docker makes it), its own host name in
#                  a UTS namespace, kept alive by a holder process. Before mn_up, MN_IFNAME_hI
#                  renames a host's interface and MN_TOPOLOGY_hI gives it a topology file
#                  (TOPOTUNE_TOPOLOGY).
#   mn_head CMD    runs CMD in the head namespace (the "login node") with Open MPI set to reach the
#                  hosts through tests/multinode/rsh-agent.sh.
#   mn_kill_host H kills every process of host H's namespaces: the host is down.
#   mn_cut_host H  takes H's link down: it stays up but silent, packets are dropped.
#   mn_slow_link H RATE   H's link shaped to RATE (tc tbf, both directions: "50mbit").
#   mn_lossy_link H PCT   H's link drops PCT% of packets (tc netem loss, both directions).
#   mn_block_ports H PORT MASK  TCP to ports PORT..(PORT|~MASK) held back on H's link, both
#                  directions (tc u32 filters: the port and mask as u32 matches them, 0xfff8 for 8),
#                  everything else goes through: a firewall that lets the launch in, not MPI.
#   mn_slow_host H PCT    every process on H gets PCT% (1 to 100) of one CPU in all (a cgroup's
#                  CPU quota: cpu.max under cgroup v2, cpu.cfs_quota_us under v1); every process
#                  started on H from then on is in it; after mn_up.
#   mn_strays      prints the pids in the hosts' namespaces besides their holders.
#   mn_down        removes everything mn_up made.
#   mn_leftovers   prints what mn_up made that is still there (nothing when clean): namespaces,
#                  holders, any process in one of the namespaces.
# Needs root, mount and network namespaces. Traffic stays inside this machine's namespaces.
# shellcheck shell=bash

MN_AGENT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/rsh-agent.sh
MN_TAG=ttmn$$
MN_HOSTS=()
MN_HOLDERS=()
MN_INODES=()
MN_CGROUPS=()

mn_supported() {
    [ "$(id -u)" = 0 ] || { echo "needs root"; return 1; }
    for cmd in ip nsenter unshare mpirun; do
        command -v "$cmd" >/dev/null || { echo "$cmd not installed"; return 1; }
    done
    ip netns add "$MN_TAG-probe" 2>/dev/null || { echo "cannot create network namespaces here"; return 1; }
    ip netns del "$MN_TAG-probe"
}

mn_guard() {
    local seconds=$1 why
    shift
    if [ -z "${MN_GUARDED:-}" ]; then
        if ! why=$(mn_supported); then
            echo "skipped: $why"
            exit 77
        fi
        rm -rf "${TEST_TMP:-/nonexistent}" # the run under timeout makes its own
        MN_GUARDED=1 exec timeout -s TERM -k 30 "$seconds" bash "$0" "$@"
    fi
    trap 'echo "multinode: ended (a signal, or past the deadline)" >&2; exit 1' TERM INT
    trap 'kill ${MN_BACKGROUND:-} 2>/dev/null; mn_down; rm -rf "${TEST_TMP:-/nonexistent}"' EXIT
}

mn_up() {
    local n=$1 i host ns ifname topology
    export TOPOTUNE_MN_DIR
    TOPOTUNE_MN_DIR=$(mktemp -d /tmp/topotune-mn-XXXXXX)
    ip netns add "$MN_TAG-head" || return 1
    MN_INODES+=("$(stat -L -c %i "/run/netns/$MN_TAG-head")")
    ip -n "$MN_TAG-head" link set lo up
    ip -n "$MN_TAG-head" link add br0 type bridge
    ip -n "$MN_TAG-head" addr add 10.77.0.1/24 dev br0
    ip -n "$MN_TAG-head" link set br0 up
    for i in $(seq 1 "$n"); do
        host=h$i
        ns=$MN_TAG-$host
        ifname=MN_IFNAME_$host
        ifname=${!ifname:-eth0}
        ip netns add "$ns" || return 1
        MN_HOSTS+=("$host") # from here on, mn_down removes it
        MN_INODES+=("$(stat -L -c %i "/run/netns/$ns")")
        ip -n "$ns" link set lo up
        # the decoy first, so that it comes before the real network in every listing: a bridge
        # with no port, administratively up with its address, as Docker leaves docker0
        ip -n "$ns" link add docker0 type bridge
        ip -n "$ns" addr add 172.17.0.1/16 dev docker0
        ip -n "$ns" link set docker0 up
        ip -n "$MN_TAG-head" link add "v$host" type veth peer name "$ifname" netns "$ns" || return 1
        ip -n "$MN_TAG-head" link set "v$host" master br0 up
        ip -n "$ns" addr add "10.77.0.1$i/24" dev "$ifname"
        ip -n "$ns" link set "$ifname" up
        # The holder: its own UTS namespace (host name) inside the host's network namespace and
        # the mount namespace `ip netns exec` makes (/sys shows the host's interfaces).
        # A child of this shell (disowned: no job messages), so that its end is reaped here.
        ip netns exec "$ns" unshare --uts sh -c "hostname $host && echo \$\$ > '$TOPOTUNE_MN_DIR/$host.pid' && exec sleep 1000000" &
        disown
        topology=MN_TOPOLOGY_$host
        : >"$TOPOTUNE_MN_DIR/$host.env"
        [ -n "${!topology:-}" ] && echo "TOPOTUNE_TOPOLOGY=${!topology}" >"$TOPOTUNE_MN_DIR/$host.env"
    done
    for host in "${MN_HOSTS[@]}"; do
        ifname=MN_IFNAME_$host
        ifname=${!ifname:-eth0}
        for _ in $(seq 50); do # the holder started, and the link has its carrier (a veth takes a moment)
            [ -s "$TOPOTUNE_MN_DIR/$host.pid" ] &&
                ip -n "$MN_TAG-$host" -o link show "$ifname" | grep -q 'state UP' && break
            sleep 0.1
        done
        [ -s "$TOPOTUNE_MN_DIR/$host.pid" ] || { echo "host $host did not come up" >&2; return 1; }
        ip -n "$MN_TAG-$host" -o link show "$ifname" | grep -q 'state UP' ||
            { echo "host $host: $ifname is not up" >&2; return 1; }
        MN_HOLDERS+=("$(cat "$TOPOTUNE_MN_DIR/$host.pid")")
    done
}

# The simulated hosts share this machine's cores, which Open MPI cannot know: ranks that busy-poll
# starve the kernel's veth traffic (a 2-rank all_reduce took 4 ms instead of 50 us), so they yield.
mn_head() {
    local extra=(OMPI_MCA_plm_rsh_agent="$MN_AGENT" OMPI_MCA_plm_rsh_no_tree_spawn=1
        TOPOTUNE_MN_DIR="$TOPOTUNE_MN_DIR" OMPI_MCA_rmaps_base_oversubscribe=1
        OMPI_MCA_mpi_yield_when_idle=1)
    ip netns exec "$MN_TAG-head" env "${extra[@]}" "$@"
}

mn_kill_host() {
    local pids tries
    for tries in $(seq 20); do # again until none is left: a fork in between would survive
        pids=$(ip netns pids "$MN_TAG-$1" 2>/dev/null)
        [ -z "$pids" ] && return 0
        # shellcheck disable=SC2086 # one pid per word
        kill -9 $pids 2>/dev/null
        sleep 0.05
    done
    echo "mn_kill_host $1: processes survive after $tries tries" >&2
}

mn_cut_host() {
    ip -n "$MN_TAG-head" link set "v$1" down
}

mn_ifname() {
    local ifname=MN_IFNAME_$1
    echo "${!ifname:-eth0}"
}

mn_slow_link() {
    ip netns exec "$MN_TAG-head" tc qdisc add dev "v$1" root tbf rate "$2" burst 32kbit latency 400ms &&
        ip netns exec "$MN_TAG-$1" tc qdisc add dev "$(mn_ifname "$1")" root tbf rate "$2" burst 32kbit latency 400ms
}

mn_lossy_link() {
    ip netns exec "$MN_TAG-head" tc qdisc add dev "v$1" root netem loss "$2%" &&
        ip netns exec "$MN_TAG-$1" tc qdisc add dev "$(mn_ifname "$1")" root netem loss "$2%"
}

mn_block_ports() {
    # the head's end of H's veth carries what comes to H, H's own end what leaves it
    mn_hold_tcp "$MN_TAG-head" "v$1" "$2" "$3" && mn_hold_tcp "$MN_TAG-$1" "$(mn_ifname "$1")" "$2" "$3"
}

# This kernel has no tc drop action (nor iptables here): matching packets go to an htb class of
# 8 bit/s with a 1-byte burst instead, where a SYN waits a minute: as good as dropped for a test.
mn_hold_tcp() { # NAMESPACE DEVICE PORT MASK
    local tc=(ip netns exec "$1" tc)
    "${tc[@]}" qdisc add dev "$2" root handle 1: htb default 1 r2q 1 &&
        "${tc[@]}" class add dev "$2" parent 1: classid 1:1 htb rate 10gbit quantum 60000 &&
        "${tc[@]}" class add dev "$2" parent 1: classid 1:2 htb rate 8bit ceil 8bit burst 1 cburst 1 quantum 1500 &&
        "${tc[@]}" filter add dev "$2" parent 1: protocol ip prio 1 u32 \
            match ip protocol 6 0xff match ip dport "$3" "$4" flowid 1:2
}

# The quota is the kernel's least, 1 ms, in a period of 100 / PCT ms (20 ms for 5%): with the
# default 100 ms period a short measurement could fit in one period's quota and not be slow.
# Under cgroup v2 rsh-agent.sh moves itself into the cgroup before it starts anything on H (what it
# starts is born there), through a mount of the hierarchy outside /sys ($TOPOTUNE_MN_DIR/cgroup:
# `ip netns exec` mounts its own /sys). Under v1 a loop moves H's processes every 20 ms, which costs
# a quarter of a core (`ip netns pids` reads every process) and slowed the healthy hosts' runs.
mn_slow_host() {
    local dir quota=1000 period
    if [ "$2" -lt 1 ] || [ "$2" -gt 100 ]; then
        echo "mn_slow_host: PCT from 1 to 100, not $2" >&2
        return 1
    fi
    period=$((100000 / $2))
    if grep -qw cpu /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        dir=/sys/fs/cgroup/$MN_TAG-$1
        mkdir "$dir" || return 1
        MN_CGROUPS+=("$dir")
        echo "$quota $period" >"$dir/cpu.max" || return 1
        if ! mountpoint -q "$TOPOTUNE_MN_DIR/cgroup"; then
            mkdir -p "$TOPOTUNE_MN_DIR/cgroup" && mount -t cgroup2 none "$TOPOTUNE_MN_DIR/cgroup" || return 1
        fi
        echo "$TOPOTUNE_MN_DIR/cgroup/$MN_TAG-$1/cgroup.procs" >"$TOPOTUNE_MN_DIR/$1.cgroup"
        return 0
    elif [ -w /sys/fs/cgroup/cpu/cgroup.procs ]; then
        dir=/sys/fs/cgroup/cpu/$MN_TAG-$1
        mkdir "$dir" || return 1
        { echo "$period" >"$dir/cpu.cfs_period_us" && echo "$quota" >"$dir/cpu.cfs_quota_us"; } ||
            { rmdir "$dir"; return 1; }
    else
        echo "mn_slow_host: no cgroup CPU controller here" >&2
        return 1
    fi
    MN_CGROUPS+=("$dir")
    (
        while :; do
            for pid in $(ip netns pids "$MN_TAG-$1" 2>/dev/null); do
                echo "$pid" >"$dir/cgroup.procs" 2>/dev/null
            done
            sleep 0.02
        done
    ) &
    MN_BACKGROUND="${MN_BACKGROUND:-} $!"
}

mn_strays() {
    local ns pid holder stray
    for ns in head "${MN_HOSTS[@]}"; do
        for pid in $(ip netns pids "$MN_TAG-$ns" 2>/dev/null); do
            stray=1
            for holder in "${MN_HOLDERS[@]}"; do [ "$pid" = "$holder" ] && stray=0; done
            [ "$stray" = 1 ] && echo "$ns: $pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
        done
    done
}

mn_down() {
    local host dir
    # shellcheck disable=SC2086 # pids, one per word
    [ -n "${MN_BACKGROUND:-}" ] && kill $MN_BACKGROUND 2>/dev/null && wait $MN_BACKGROUND 2>/dev/null
    MN_BACKGROUND=
    for host in "${MN_HOSTS[@]}"; do
        mn_kill_host "$host"
        ip netns del "$MN_TAG-$host" 2>/dev/null
    done
    mn_kill_host head
    ip netns del "$MN_TAG-head" 2>/dev/null
    [ -n "${TOPOTUNE_MN_DIR:-}" ] && mountpoint -q "$TOPOTUNE_MN_DIR/cgroup" && umount -l "$TOPOTUNE_MN_DIR/cgroup"
    for dir in "${MN_CGROUPS[@]}"; do # empty now: its processes were the hosts'
        rmdir "$dir" 2>/dev/null
    done
    MN_CGROUPS=()
    [ -n "${TOPOTUNE_MN_DIR:-}" ] && rm -rf "$TOPOTUNE_MN_DIR"
    MN_HOSTS=()
}

mn_leftovers() {
    local pid inode link
    ip netns list 2>/dev/null | grep "$MN_TAG" | sed 's/^/namespace: /'
    for pid in "${MN_HOLDERS[@]}"; do
        kill -0 "$pid" 2>/dev/null && echo "holder: $pid"
    done
    for link in /proc/[0-9]*/ns/net; do
        inode=$(stat -L -c %i "$link" 2>/dev/null) || continue
        for i in "${MN_INODES[@]}"; do
            [ "$inode" = "$i" ] && echo "process in a test namespace: ${link%/ns/net}"
        done
    done
}
