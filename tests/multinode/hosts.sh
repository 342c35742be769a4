# SPDX-License-Identifier: MIT
# Simulated hosts on this machine, for the multi-node tests (sourced).
#
#   mn_up N        hosts h1..hN: each a network namespace with lo and eth0 (a veth to a bridge in a
#                  "head" namespace at 10.77.0.1/24), address 10.77.0.1N, its own host name in a UTS
#                  namespace, kept alive by a holder process. Before mn_up, MN_IFNAME_hI renames a
#                  host's interface and MN_TOPOLOGY_hI gives it a topology file (TOPOTUNE_TOPOLOGY).
#   mn_head CMD    runs CMD in the head namespace (the "login node") with Open MPI set to reach the
#                  hosts through tests/multinode/rsh-agent.sh.
#   mn_kill_host H kills every process of host H's namespaces: the host is down.
#   mn_down        removes everything mn_up made (also called from the EXIT trap).
#   mn_leftovers   prints namespaces, veths and processes left behind (nothing when clean).
# Needs root, mount and network namespaces. Traffic stays inside this machine's namespaces.
# shellcheck shell=bash

MN_AGENT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/rsh-agent.sh
MN_TAG=ttmn$$
MN_HOSTS=()

mn_supported() {
    [ "$(id -u)" = 0 ] || { echo "needs root"; return 1; }
    for cmd in ip nsenter unshare mpirun; do
        command -v "$cmd" >/dev/null || { echo "$cmd not installed"; return 1; }
    done
    ip netns add "$MN_TAG-probe" 2>/dev/null || { echo "cannot create network namespaces here"; return 1; }
    ip netns del "$MN_TAG-probe"
}

mn_up() {
    local n=$1 i host ns ifname
    export TOPOTUNE_MN_DIR
    TOPOTUNE_MN_DIR=$(mktemp -d /tmp/topotune-mn-XXXXXX)
    ip netns add "$MN_TAG-head" || return 1
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
        ip -n "$MN_TAG-head" link add "v$host" type veth peer name "$ifname" netns "$ns" || return 1
        ip -n "$MN_TAG-head" link set "v$host" master br0 up
        ip -n "$ns" link set lo up
        ip -n "$ns" addr add "10.77.0.1$i/24" dev "$ifname"
        ip -n "$ns" link set "$ifname" up
        # The holder: its own UTS namespace (host name) inside the host's network namespace and
        # the mount namespace `ip netns exec` makes (/sys shows the host's interfaces).
        (ip netns exec "$ns" unshare --uts sh -c "hostname $host && echo \$\$ > '$TOPOTUNE_MN_DIR/$host.pid' && exec sleep 1000000" &)
        local topology=MN_TOPOLOGY_$host
        : >"$TOPOTUNE_MN_DIR/$host.env"
        [ -n "${!topology:-}" ] && echo "TOPOTUNE_TOPOLOGY=${!topology}" >"$TOPOTUNE_MN_DIR/$host.env"
        MN_HOSTS+=("$host")
    done
    for host in "${MN_HOSTS[@]}"; do
        for _ in $(seq 50); do [ -s "$TOPOTUNE_MN_DIR/$host.pid" ] && break; sleep 0.1; done
        [ -s "$TOPOTUNE_MN_DIR/$host.pid" ] || { echo "host $host did not come up" >&2; return 1; }
    done
}

# The simulated hosts share this machine's cores, which Open MPI cannot know: ranks that busy-poll
# starve the kernel's veth traffic (a 2-rank all_reduce took 4 ms instead of 50 us), so they yield.
mn_head() {
    local extra=(OMPI_MCA_plm_rsh_agent="$MN_AGENT" OMPI_MCA_plm_rsh_no_tree_spawn=1
        OMPI_MCA_oob_tcp_if_include=10.77.0.0/24 TOPOTUNE_MN_DIR="$TOPOTUNE_MN_DIR"
        OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1)
    ip netns exec "$MN_TAG-head" env "${extra[@]}" "$@"
}

mn_kill_host() {
    local pids
    pids=$(ip netns pids "$MN_TAG-$1" 2>/dev/null)
    # shellcheck disable=SC2086 # one pid per word
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    return 0
}

mn_down() {
    local host
    for host in "${MN_HOSTS[@]}"; do
        mn_kill_host "$host"
        ip netns del "$MN_TAG-$host" 2>/dev/null
    done
    mn_kill_host head
    ip netns del "$MN_TAG-head" 2>/dev/null
    wait 2>/dev/null
    [ -n "${TOPOTUNE_MN_DIR:-}" ] && rm -rf "$TOPOTUNE_MN_DIR"
    MN_HOSTS=()
}

mn_leftovers() {
    ip netns list 2>/dev/null | grep "$MN_TAG" | sed 's/^/namespace: /'
    ip -o link 2>/dev/null | grep -E ' vh[0-9]+@' | sed 's/^/link: /'
    pgrep -af "[t]opotune-mn-" | sed 's/^/process: /'
}
