#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Stands in for topotune-bench in supervision tests; FAKE_MODE picks the behaviour:
#   ok           writes start, one size and end events, exits 0
#   ignore-term  ignores SIGTERM and never ends (the supervisor must SIGKILL it)
#   grandchild   leaves children behind, one in its own session, writes the ok events, exits 0
#   no-json      exits 0 without writing its events (as when rank 0's filesystem is another host's)
#   crash        dies of SIGSEGV
#   fill         fills the sweep directory's filesystem before writing its events (once: it
#                leaves $FAKE_PIDS.filled), then acts as ok
#   slow         writes the ok events after 2 seconds
#   hang         records "PID PGID PPID" in $FAKE_PIDS and never ends, nor does its child
#   landscape    ok, with a busbw made of NCCL_FAKE_A, _B and _C: A=1 x1.5, A=2 x1.2, B=2 x1.2
#                (only once A=1: a gain that needs the first move), C set x1.01 (noise)
#   verify       ok over -b..-e (x4), busbw 10, x1.2 with NCCL_ALGO set (a profile's variable),
#                x1.5 more with NCCL_TUNER_PLUGIN and TOPOTUNE_TUNER_TABLE naming readable files,
#                when it writes the plugin's "loaded" line where NCCL's log would (with
#                FAKE_OTHER_TUNER, NCCL's line loading that tuner in the other runs, and the
#                plugin's chaining to it); appends its NCCL_*/TOPOTUNE_* environment and
#                FAKE_COLL=its --collective= to $FAKE_PIDS.env, one run per line
#   nccl-log     reports, as NCCL's log would, only NCCL_ALGO as applied, and records its
#                NCCL_DEBUG* environment in the size event's algo field
#   collectives  ok over -b..-e (x2) for the collective of --collective= (all_reduce without):
#                time size/10^4 us, with NCCL_FAKE_A=1 all_reduce x0.6 and all_gather x1.5 (an
#                all_reduce winner that slows all_gather), NCCL_FAKE_A=2 x0.9 for every one;
#                NCCL_PROTO=LL128 all_reduce x1.2 and all_gather x0.8, each size reporting
#                RING and its protocol (LL128, else SIMPLE); FAKE_CRASH_COLL=NAME crashes that
#                collective under NCCL's defaults (neither variable set)
json=
min=8
max=8
prev=
coll=all_reduce
for arg in "$@"; do
    case "$arg" in --json=*) json=${arg#--json=} ;; --collective=*) coll=${arg#--collective=} ;; esac
    case "$prev" in -b) min=$arg ;; -e) max=$arg ;; esac
    prev=$arg
done
ok_events() {
    {
        echo '{"event":"start","backend":"mpi","ranks":1,"nodes":1,"hosts":["fake"],"predicted":false}'
        echo '{"event":"size","size":8,"count":2,"time_us":1.0,"algbw":0.008,"busbw":0.0,"wrong":0}'
        echo '{"event":"end","outcome":"ok","exit_code":0}'
    } >"$json"
}
case "${FAKE_MODE:-ok}" in
ok)
    ok_events
    ;;
no-json)
    exit 0
    ;;
ignore-term)
    trap '' TERM
    while :; do sleep 1; done
    ;;
grandchild)
    sleep 300 &
    echo $! >>"$FAKE_PIDS"
    setsid sleep 300 &
    echo $! >>"$FAKE_PIDS"
    ok_events
    exit 0
    ;;
crash)
    kill -SEGV $$
    ;;
flood) # a rank printing a warning in a loop, for ever
    while :; do printf 'warning: something went wrong, retrying\n'; done >&2
    ;;
fill)
    if [ ! -e "$FAKE_PIDS.filled" ]; then
        : >"$FAKE_PIDS.filled"
        head -c 64M /dev/zero >"$(dirname "$(dirname "$json")")/filler" 2>/dev/null
    fi
    ok_events 2>/dev/null
    exit 0
    ;;
slow)
    sleep 2
    ok_events
    ;;
hang)
    echo "$$ $(ps -o pgid= -p $$ | tr -d ' ') $PPID" >>"$FAKE_PIDS"
    while :; do sleep 1; done
    ;;
verify)
    env | grep -E '^(NCCL|TOPOTUNE)_' | sort | tr '\n' ' ' >>"$FAKE_PIDS.env"
    echo "FAKE_COLL=$coll" >>"$FAKE_PIDS.env"
    busbw=10
    [ -n "${NCCL_ALGO:-}" ] && busbw=12
    nccl_log=${NCCL_DEBUG_FILE:-/dev/stdout} # NCCL expands %h and %p in it
    nccl_log=${nccl_log//%h/$(hostname)}
    nccl_log=${nccl_log//%p/$$}
    if [ -r "${NCCL_TUNER_PLUGIN:-/nonexistent}" ] && [ -r "${TOPOTUNE_TUNER_TABLE:-/nonexistent}" ]; then
        busbw=$((busbw * 3 / 2))
        elsewhere="NCCL's defaults apply" # FAKE_OTHER_TUNER: the net plugin's tuner, chained
        [ -n "${FAKE_OTHER_TUNER:-}" ] && elsewhere="tuner $FAKE_OTHER_TUNER (libnccl-net.so, v5) decides"
        echo "host:1:1 [0] NCCL INFO topotune tuner: loaded '$TOPOTUNE_TUNER_TABLE': 2 rows, 2 for 1 nodes x 1 ranks (class x); elsewhere $elsewhere" >>"$nccl_log"
    elif [ -n "${FAKE_OTHER_TUNER:-}" ]; then
        echo "host:1:1 [0] NCCL INFO TUNER/Plugin: Using $FAKE_OTHER_TUNER (v5)" >>"$nccl_log"
    else # no tuner plugin: NCCL 2.22+ says it uses its own
        echo "host:1:1 [0] NCCL INFO TUNER/Plugin: Using internal tuner plugin." >>"$nccl_log"
    fi
    {
        echo '{"event":"start","backend":"nccl","ranks":1,"nodes":1,"hosts":["fake"],"predicted":false}'
        size=$min
        while [ "$size" -le "$max" ]; do
            echo "{\"event\":\"size\",\"size\":$size,\"count\":$((size / 4)),\"time_us\":1.0,\"algbw\":$busbw,\"busbw\":$busbw,\"wrong\":0,\"algo\":\"RING\",\"proto\":\"SIMPLE\"}"
            size=$((size * 4))
        done
        echo '{"event":"end","outcome":"ok","exit_code":0}'
    } >"$json"
    ;;
landscape)
    busbw=$(awk -v a="${NCCL_FAKE_A:-}" -v b="${NCCL_FAKE_B:-}" -v c="${NCCL_FAKE_C:-}" 'BEGIN {
        x = 10; if (a == 1) x *= 1.5; if (a == 2) x *= 1.2; if (a == 1 && b == 2) x *= 1.2
        if (c != "") x *= 1.01; printf "%.4f", x }')
    {
        echo '{"event":"start","backend":"mpi","ranks":1,"nodes":1,"hosts":["fake"],"predicted":false}'
        echo "{\"event\":\"size\",\"size\":8,\"count\":2,\"time_us\":1.0,\"algbw\":$busbw,\"busbw\":$busbw,\"wrong\":0}"
        echo '{"event":"end","outcome":"ok","exit_code":0}'
    } >"$json"
    ;;
collectives)
    if [ "$coll" = "${FAKE_CRASH_COLL:-}" ] && [ -z "${NCCL_FAKE_A:-}${NCCL_PROTO:-}" ]; then
        kill -SEGV $$
    fi
    {
        echo '{"event":"start","backend":"mpi","ranks":1,"nodes":1,"hosts":["fake"],"predicted":false}'
        size=$min
        while [ "$size" -le "$max" ]; do
            awk -v s="$size" -v c="$coll" -v a="${NCCL_FAKE_A:-}" -v p="${NCCL_PROTO:-}" 'BEGIN {
                t = s / 1e4; if (a == 1 && c == "all_reduce") t *= 0.6
                if (a == 1 && c == "all_gather") t *= 1.5; if (a == 2) t *= 0.9
                proto = "SIMPLE"
                if (p == "LL128") { proto = "LL128"; t *= (c == "all_gather" ? 0.8 : 1.2) }
                bw = s / t / 1e3
                printf "{\"event\":\"size\",\"size\":%d,\"count\":%d,\"time_us\":%.6f,\"algbw\":%.6f,\"busbw\":%.6f,\"wrong\":0,\"algo\":\"RING\",\"proto\":\"%s\"}\n", s, s / 4, t, bw, bw, proto }'
            size=$((size * 2))
        done
        echo '{"event":"end","outcome":"ok","exit_code":0}'
    } >"$json"
    ;;
nccl-log)
    {
        echo '{"event":"start","backend":"nccl","ranks":1,"nodes":1,"hosts":["fake"],"predicted":false}'
        echo "{\"event\":\"size\",\"size\":8,\"count\":2,\"time_us\":1.0,\"algbw\":0.008,\"busbw\":0.0,\"wrong\":0,\"algo\":\"${NCCL_DEBUG:-}/${NCCL_DEBUG_SUBSYS:-}/${NCCL_DEBUG_FILE:+file}\"}"
        echo '{"event":"end","outcome":"ok","exit_code":0,"effective_env":{"NCCL_ALGO":"Ring"}}'
    } >"$json"
    ;;
esac
