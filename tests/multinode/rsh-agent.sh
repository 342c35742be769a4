#!/bin/sh
# SPDX-License-Identifier: MIT
# Open MPI's rsh agent for the simulated hosts (plm_rsh_agent): `rsh-agent.sh HOST COMMAND...`
# runs COMMAND, as ssh would, in HOST's network, UTS and mount namespaces (entered through the
# host's holder process), with the host's own environment (its topology file) and, on a slow host,
# in its cgroup. Hosts are the
# ones tests/multinode/hosts.sh made: $TOPOTUNE_MN_DIR/HOST.pid and HOST.env.
host=$1
shift
dir=${TOPOTUNE_MN_DIR:?rsh-agent.sh: TOPOTUNE_MN_DIR is not set}
if ! pid=$(cat "$dir/$host.pid" 2>/dev/null) || ! kill -0 "$pid" 2>/dev/null; then
    echo "rsh-agent.sh: $host: no such host (or it is down)" >&2
    exit 255
fi
# A slow host (mn_slow_host): this process joins its cgroup, and so does all it starts.
if [ -s "$dir/$host.cgroup" ] && ! echo $$ >"$(cat "$dir/$host.cgroup")"; then
    echo "rsh-agent.sh: $host: cannot join its cgroup $(cat "$dir/$host.cgroup")" >&2
    exit 255
fi
# shellcheck disable=SC2046 # HOST.env holds NAME=VALUE words without spaces
exec nsenter --target "$pid" --uts --net --mount -- env $(cat "$dir/$host.env") sh -c "$*"
