#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# topotune workload --from-nccl-log on real NCCL COLL log lines from public issue threads
# (tests/fixtures/nccl-coll-logs/README.md names them): the counts per rank and the bytes of each
# collective in nccl-tests' sizes, an interleaved line read by its last NCCL INFO, Recv counted
# with its Send; the document passes its schema; presets say they are assumed; bad input refused.
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"
cd "$TEST_TMP" || exit 1
logs=$TOPOTUNE_FIXTURES/nccl-coll-logs
entries() { # the document's entries as "collective size calls"
    python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print("\n".join("%s %d %g" % (e["collective"], e["size"], e["calls"]) for e in d["entries"]))
print("ranks", d["ranks_seen"])' "$1"
}
expect_exit 0 "tensor parallel (torchtitan #1369)" -- "$TOPOTUNE" workload --from-nccl-log "$logs/torchtitan-1369-tp.log" --out tp.json
check "all_gather and reduce_scatter of 2097152 float32 on 2 ranks: 16 MiB; AllReduce of 1: 4 B; per rank" \
    test "$(entries tp.json)" = "all_gather 16777216 1.5
reduce_scatter 16777216 1
all_reduce 4 1
ranks 2"
expect_exit 0 "DDP's broadcasts (NCCL #147)" -- "$TOPOTUNE" workload --from-nccl-log "$logs/nccl-147-broadcast.log" --out bc.json
check "int64 x 53 = 424 B, float16 x 25503912 = 51007824 B; the interleaved line is rank 7's" \
    test "$(entries bc.json)" = "broadcast 424 0.75
broadcast 51007824 0.25
ranks 4"
expect_exit 0 "its table" -- "$TOPOTUNE" workload --from-nccl-log "$logs/nccl-147-broadcast.log"
check "the 424 B broadcast's weight in significant digits (it read 0.0000)" \
    grep -qE '^ broadcast +424 +0\.75 +0\.0000249$' "$TEST_TMP/out"
expect_exit 0 "Ray Train at 128 ranks (NCCL #1193) and send/recv (NCCL #584), two files" -- \
    "$TOPOTUNE" workload --from-nccl-log "$logs/nccl-1193-ray.log" "$logs/nccl-584-sendrecv.log" --out two.json
check "the two files together: 4 ranks, Recv not counted again" test "$(entries two.json)" = "all_reduce 29528912 0.5
all_reduce 28266288 0.5
sendrecv 9682944 0.5
ranks 4"
# Calls of communicators of several sizes (128 ranks' all_reduce, a 2-rank pair's sends): the
# weights add them up, and a sweep measures one communicator: said, and --ranks keeps one.
expect_stderr_has "the calls come from communicators of 128 ranks (4 calls), 2 ranks (2 calls)" \
    "communicators of two sizes: said"
expect_exit 0 "--ranks 128: the Ray job's communicator only" -- "$TOPOTUNE" workload --from-nccl-log \
    --ranks 128 "$logs/nccl-1193-ray.log" "$logs/nccl-584-sendrecv.log" --out ranks.json
check "its two all_reduce sizes, no sendrecv; the other lines skipped" python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert [(e["collective"], e["size"]) for e in d["entries"]] == [("all_reduce", 29528912), ("all_reduce", 28266288)], d
assert d["skipped"] == 2, d  # its 2 Send lines (the Recv is counted with them: never)' ranks.json
expect_stderr_has "2 COLL line(s) on communicators of another size than --ranks 128 left out" "says what it left"
check "one size: nothing said of communicators" bash -c "! '$TOPOTUNE' workload --from-nccl-log \
    '$logs/torchtitan-1369-tp.log' 2>&1 >/dev/null | grep -q 'communicators of'"
expect_exit 2 "--ranks without logs" -- "$TOPOTUNE" workload --preset dp --ranks 8
expect_exit 2 "--ranks that no line has" -- "$TOPOTUNE" workload --from-nccl-log --ranks 64 "$logs/nccl-1193-ray.log"
for f in tp bc two ranks; do
    check "$f.json: the schema" python3 "$TOPOTUNE_SRC/tests/cli/validate-schema.py" \
        "$TOPOTUNE_SRC/docs/schemas/workload.schema.json" "$f.json"
done
check "the weights add up to 1" python3 -c 'import json, sys
for p in sys.argv[1:]:
    assert abs(sum(e["weight"] for e in json.load(open(p))["entries"]) - 1) < 1e-6, p' tp.json bc.json two.json
expect_exit 0 "a preset" -- "$TOPOTUNE" workload --preset fsdp --json
check "it says it is assumed" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); assert d["assumed"] is True and d["from"] == "preset", d' "$TEST_TMP/out"
expect_exit 0 "its table says so too" -- "$TOPOTUNE" workload --preset moe
check "ASSUMED in the table" grep -q "ASSUMED, not measured" "$TEST_TMP/out"
printf 'no NCCL here\nx NCCL INFO AllReduce: opCount 1 count 9 datatype 99 [nranks=2]\n' >bad.log
expect_exit 2 "a log without a usable COLL line" -- "$TOPOTUNE" workload --from-nccl-log bad.log
expect_stderr_has "none of them usable" "it says its COLL line was not usable"
printf 'no NCCL here\n' >none.log
expect_exit 2 "a log without a COLL line" -- "$TOPOTUNE" workload --from-nccl-log none.log
expect_stderr_has "NCCL_DEBUG_SUBSYS=COLL" "it says how to get one"
# Lines in NCCL's COLL format (src/enqueue.cc), for what the threads above do not show.
coll() { echo "node1:12:34 [$5] NCCL INFO $1: opCount 0 sendbuff 0x1 recvbuff 0x2 count $2 datatype $3 op 0 root 0 comm 0x3 [nranks=$4] stream 0x4"; }
{ coll AlltoAll 262144 9 8 0; coll Gather 1024 7 8 0; coll Scatter 1024 7 8 0; coll AllReduce 16 7 8 0; } >a2a.log
expect_exit 0 "NCCL 2.28's AlltoAll counted; Gather and Scatter left out, and said" -- \
    "$TOPOTUNE" workload --from-nccl-log a2a.log --out a2a.json
check "AlltoAll: count per peer x 8 ranks x bfloat16 = 4 MiB" test "$(entries a2a.json)" = "alltoall 4194304 1
all_reduce 64 1
ranks 1"
expect_stderr_has "2 COLL line(s) of Gather and other functions left out" "the left-out lines said"
check "counted in skipped" python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["skipped"] == 2' a2a.json
coll AllGather 140737488355328 7 16384 0 >ovf.log
expect_exit 2 "an all_gather whose count x ranks x element passes 2^64 is not wrapped round" -- \
    "$TOPOTUNE" workload --from-nccl-log ovf.log
expect_stderr_has "larger than 68719476736 bytes" "it is said to be too large"
{ coll AllReduce 1024 7 8 0; printf 'garbage\0\n'; coll AllReduce 262144 7 8 0; coll AllReduce 262144 7 8 0; } >nul.log
expect_exit 0 "a NUL byte in a log" -- "$TOPOTUNE" workload --from-nccl-log nul.log --out nul.json
check "ends its line only: the lines after it counted" test "$(entries nul.json)" = "all_reduce 4096 1
all_reduce 1048576 2
ranks 1"
# Ranks given one NCCL_DEBUG_FILE (each opens it "w") leave holes: NULs, then a rank's line on
# the same line: read as the line after a line break (it was lost: 1.5 calls per rank).
{ coll AllReduce 1024 7 2 0; printf '\0\0\0\0'; coll AllReduce 1024 7 2 1; coll AllReduce 1024 7 2 0
    printf '\0\0'; coll AllReduce 1024 7 2 1; } >hole.log
expect_exit 0 "NULs of a hole before a line" -- "$TOPOTUNE" workload --from-nccl-log hole.log --out hole.json
check "every line counted: two calls per rank" test "$(entries hole.json)" = "all_reduce 4096 2
ranks 2"
{ printf '50%%|#####     |\r'; coll AllReduce 1024 7 8 0; printf '\377'; coll AllReduce 1024 7 8 1; } >cr.log
expect_exit 0 "a progress bar's carriage return and a stray byte before the host" -- \
    "$TOPOTUNE" workload --from-nccl-log cr.log --out cr.json
check "two ranks, each one call" test "$(entries cr.json)" = "all_reduce 4096 1
ranks 2"
# One process driving 4 GPUs (nccl-tests' -g 4): NCCL logs each GPU's call under the calling
# thread's device, "[0]" on every line, the comm pointer alone differs: 4 ranks of 3 calls each
# (read as one rank of 12). A process of one GPU with two comms (tensor and data parallel), which
# once logged one call on both in a row, is one rank.
on() { echo "gpu1:$1:9 [0] NCCL INFO AllReduce: opCount $2 sendbuff 0x1 recvbuff 0x2 count $3 datatype 7 op 0 root 0 comm 0x$4 [nranks=4] stream 0x4"; }
for op in 1 2 3; do for c in 5000 5100 5200 5300; do on 100 "$op" 262144 "$c"; done; done >g4.log
expect_exit 0 "one process, 4 GPUs" -- "$TOPOTUNE" workload --from-nccl-log g4.log --out g4.json
check "4 ranks, 3 calls each" test "$(entries g4.json)" = "all_reduce 1048576 3
ranks 4"
{ on 200 1 100 a; on 200 1 200 b; on 200 2 100 a; on 200 3 100 a; on 200 2 200 b; on 200 4 100 a
    on 200 4 100 b; on 200 5 100 a; } >tpdp.log
expect_exit 0 "one GPU, two comms" -- "$TOPOTUNE" workload --from-nccl-log tpdp.log --out tpdp.json
check "one rank" test "$(entries tpdp.json | tail -1)" = "ranks 1"
{ on 300 0 1 a; on 300 0 1 b; } >barrier.log
expect_exit 0 "one GPU: a barrier on two comms, nothing else" -- "$TOPOTUNE" workload --from-nccl-log barrier.log --out barrier.json
check "one rank, two calls" test "$(entries barrier.json)" = "all_reduce 4 2
ranks 1"
# The same for Sends: 4 GPUs' sendrecv (each sends to the next, receives from the one before),
# and before NCCL 2.28 their alltoall (each GPU's Send and Recv with every peer, then the next
# GPU's): 4 ranks (read as one rank of 12 sends).
gp2p() { echo "gpu1:400:9 [0] NCCL INFO $1: opCount $2 sendbuff 0x1 recvbuff 0x2 count $3 datatype 7 op 0 root $4 comm 0x6$5 [nranks=4] stream 0x4"; }
for op in 1 2 3; do for g in 0 1 2 3; do gp2p Send "$op" 262144 $(((g + 1) % 4)) "$g"; gp2p Recv "$op" 262144 $(((g + 3) % 4)) "$g"; done; done >g4-sendrecv.log
expect_exit 0 "one process, 4 GPUs, sendrecv" -- "$TOPOTUNE" workload --from-nccl-log g4-sendrecv.log --out g4s.json
check "4 ranks, 3 sends each" test "$(entries g4s.json)" = "sendrecv 1048576 3
ranks 4"
for op in 1 2; do for g in 0 1 2 3; do for peer in 0 1 2 3; do gp2p Send "$op" 1024 "$peer" "$g"; gp2p Recv "$op" 1024 "$peer" "$g"; done; done; done >g4-a2a.log
expect_exit 0 "one process, 4 GPUs, alltoall before NCCL 2.28" -- "$TOPOTUNE" workload --from-nccl-log g4-a2a.log --out g4a.json
check "4 ranks, 2 alltoalls each" test "$(entries g4a.json)" = "alltoall 16384 2
ranks 4"
# Before NCCL 2.28 an alltoall is a group of a Send and a Recv per rank, under one opCount
# (PyTorch's all_to_all sends to itself too; others leave themselves out): one alltoall per rank,
# not sends.
send() { echo "node1:$1:9 [$1] NCCL INFO Send: opCount $2 sendbuff 0x1 recvbuff (nil) count $4 datatype 9 op 0 root $3 comm 0x5$1 [nranks=$5] stream 0x4"; }
recv() { echo "node1:$1:9 [$1] NCCL INFO Recv: opCount $2 sendbuff (nil) recvbuff 0x2 count $4 datatype 9 op 0 root $3 comm 0x5$1 [nranks=$5] stream 0x4"; }
both() { send "$@"; recv "$@"; }
for r in 0 1 2 3; do for op in 7 8; do for peer in 0 1 2 3; do both "$r" "$op" "$peer" 262144 4; done; done; done >a2a-groups.log
expect_exit 0 "grouped Sends to every rank" -- "$TOPOTUNE" workload --from-nccl-log a2a-groups.log --out g.json
check "two alltoalls of 262144 bfloat16 x 4 ranks per rank" test "$(entries g.json)" = "alltoall 2097152 2
ranks 4"
for r in 0 1 2 3; do for peer in 0 1 2 3; do [ "$peer" = "$r" ] || both "$r" 7 "$peer" 1024 4; done; done >a2a-others.log
expect_exit 0 "grouped Sends to every other rank" -- "$TOPOTUNE" workload --from-nccl-log a2a-others.log --out o.json
check "one alltoall of 1024 x 4 ranks x 2 B" test "$(entries o.json)" = "alltoall 8192 1
ranks 4"
# NCCL 2.27 leaves the opCount as it was after a launch without network work: two alltoalls
# inside a node log one opCount, and a peer sent to again starts the next.
for r in 0 1; do for _ in 1 2; do for peer in 0 1 2 3; do both "$r" 0 "$peer" 4096 4; done; done; done >a2a-27.log
expect_exit 0 "two alltoalls under one opCount" -- "$TOPOTUNE" workload --from-nccl-log a2a-27.log --out a27.json
check "two alltoalls per rank" test "$(entries a27.json)" = "alltoall 32768 2
ranks 2"
# MoE's uneven splits skip the ranks a rank sends nothing: 4 of 8 peers is still an alltoall,
# of the bytes it sent; a ring's two neighbours of 3 ranks are sends.
{ for peer in 0 2 5 7; do both 0 9 "$peer" 1000 8; done; both 1 9 0 512 3; both 1 9 2 512 3; } >uneven.log
expect_exit 0 "uneven splits and a ring of 3" -- "$TOPOTUNE" workload --from-nccl-log uneven.log --out u.json
check "one alltoall of 4 x 1000 x 2 B; two sendrecv of 1 KiB" test "$(entries u.json)" = "alltoall 8000 0.5
sendrecv 1024 1
ranks 2"
# Uneven parts to every rank, itself included: the whole buffer, not its mean part x ranks.
{ both 0 5 0 1000 3; both 0 5 1 1000 3; both 0 5 2 1001 3; } >a2a-uneven.log
expect_exit 0 "uneven parts to every rank" -- "$TOPOTUNE" workload --from-nccl-log a2a-uneven.log --out au.json
check "one alltoall of 3001 x 2 B" test "$(entries au.json)" = "alltoall 6002 1
ranks 1"
# Sends to every other rank with nothing received (a scatter; from NCCL 2.27 a loop of sends
# inside a node logs one opCount) are sends, not an alltoall; a rank whose log holds only its
# Recvs is a rank seen.
for peer in 1 2 3 4 5 6 7; do send 0 0 "$peer" 1048576 8; done >scatter.log
recv 1 0 0 1048576 8 >>scatter.log
expect_exit 0 "Sends to every other rank, nothing received" -- "$TOPOTUNE" workload --from-nccl-log scatter.log --out sc.json
check "seven sendrecv of 2 MiB (bfloat16) over 2 ranks" test "$(entries sc.json)" = "sendrecv 2097152 3.5
ranks 2"
# An alltoall group whose bytes pass what a workload holds is too large, not wrapped round to a
# small size (16384 peers of 64 GiB each: the sum times 16385 ranks passes 2^64, and wrapped
# round it read 64 GiB).
python3 - <<'PY' >a2a-big.log
n = 16385
for p in range(1, n):
    for kind, bufs in (("Send", "sendbuff 0x1 recvbuff (nil)"), ("Recv", "sendbuff (nil) recvbuff 0x2")):
        print("node1:1:9 [0] NCCL INFO %s: opCount 5 %s count 34359738368 datatype 9 op 0 root %d "
              "comm 0x55 [nranks=%d] stream 0x4" % (kind, bufs, p, n))
PY
coll AllReduce 1024 7 8 0 >>a2a-big.log
expect_exit 0 "an alltoall past the largest size" -- "$TOPOTUNE" workload --from-nccl-log a2a-big.log --out big.json
check "left out as too large, not counted small" sh -c "test \"\$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d[\"skipped\"], [e[\"collective\"] for e in d[\"entries\"]])' big.json)\" = \"1 ['all_reduce']\""
# A line another rank's line cut into: the cut call is lost, and counted so.
printf 'node1:1:1 [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 1024 datnode1:2:2 [1] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 1024 datatype 7 op 0 root 0 comm 0x4 [nranks=2] stream 0x4\natype 7 op 0 root 0 comm 0x3 [nranks=2] stream 0x4\n' >cut.log
expect_exit 0 "a line cut by another" -- "$TOPOTUNE" workload --from-nccl-log cut.log --out cut.json
check "the cut call skipped, the whole one counted" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); assert d["skipped"] == 1 and d["lines"] == 2 and d["ranks_seen"] == 1, d' cut.json
# Cut at another place, the whole line's words began with the cut one's last characters: "1nodeB"
# or "[nodeB" counted as ranks of their own, 3 or 4 ranks seen where 2 ran, and calls per rank
# divided by as much. A rank's words that end with another's whole "host:pid [dev]" are that rank.
line='NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x2 count 1048576 datatype 7 op 0 root 0 comm 0x5 [nranks=2] stream 0x1'
{
    for _ in 1 2 3; do printf 'nodeA:11:12 [0] %s\nnodeB:21:22 [1] %s\n' "$line" "$line"; done
    printf 'nodeA:11:12 [0] %s\n' "${line% count*} count 1nodeB:21:22 [1] $line"
    printf 'nodeA:11:12 [nodeB:21:22 [1] %s\n' "$line"
} >cut2.log
expect_exit 0 "lines cut inside the words" -- "$TOPOTUNE" workload --from-nccl-log cut2.log --out cut2.json
check "2 ranks, 8 whole lines: 4 calls a rank" python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); assert d["ranks_seen"] == 2 and d["entries"][0]["calls"] == 4, d' cut2.json
expect_exit 2 "standard input" -- "$TOPOTUNE" workload --from-nccl-log -
expect_stderr_has "save the log to a file first" "says how to give it"
{ send 0 7 1 1024 4; send 0 7 3 1024 4; send 0 8 1 1024 4; } >ring.log
expect_exit 0 "Sends to some ranks only" -- "$TOPOTUNE" workload --from-nccl-log ring.log --out ring.json
check "each its own sendrecv" test "$(entries ring.json)" = "sendrecv 2048 3
ranks 1"
# A call on a communicator of one rank moves nothing (NCCL copies in place); a line cut inside
# its [nranks=16] is no call on one rank.
{ coll AllReduce 67108864 9 1 0; coll AllReduce 1024 9 8 0; coll AllGather 1024 9 16 0 | sed 's/nranks=16.*/nranks=1/'; } >one.log
expect_exit 0 "a call on one rank and a cut line" -- "$TOPOTUNE" workload --from-nccl-log one.log --out one.json
check "neither counted" test "$(entries one.json)" = "all_reduce 2048 1
ranks 1"
expect_stderr_has "1 call(s) on communicators of one rank left out" "the one-rank call said"
expect_stderr_has "a line cut short" "the cut line said"
check "both in skipped" python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["skipped"] == 2' one.json
# NCCL_DEBUG_TIMESTAMP_FORMAT='[%T]' (NCCL 2.26) writes no space before the host.
{ printf '[10:00:01]'; coll AllReduce 1024 7 2 0; printf '[10:00:02]'; coll AllReduce 1024 7 2 0; } >ts.log
expect_exit 0 "a timestamp without a space after it" -- "$TOPOTUNE" workload --from-nccl-log ts.log --out ts.json
check "one rank, two calls" test "$(entries ts.json)" = "all_reduce 4096 2
ranks 1"
# Ray folds lines that differ in numbers only ("[repeated 15x across cluster]"): sizes are lost.
{ coll AllReduce 1024 7 8 0; printf '%s [repeated 15x across cluster]\n' "$(coll AllReduce 4096 7 8 1)"; } >ray.log
expect_exit 2 "a log folded by Ray's deduplication" -- "$TOPOTUNE" workload --from-nccl-log ray.log
expect_stderr_has "RAY_DEDUP_LOGS=0" "refused, and the fix named"
expect_exit 2 "one log given twice" -- "$TOPOTUNE" workload --from-nccl-log a2a.log nul.log "$TEST_TMP/nul.log"
expect_stderr_has "is the same file as 'nul.log'" "refused: its calls would count twice"
coll AllReduce 0 7 8 0 >zero.log
expect_exit 2 "calls of 0 bytes only" -- "$TOPOTUNE" workload --from-nccl-log zero.log
expect_stderr_has "moves 0 bytes" "said"
coll Recv 1024 7 2 1 >recv.log
expect_exit 2 "Recv lines only" -- "$TOPOTUNE" workload --from-nccl-log recv.log
expect_stderr_has "give every rank's log" "it says which log is missing"
{ coll AllReduce 1024 12 8 0; coll AllReduce 16 7 8 0; } >dtype.log
expect_exit 0 "a datatype nccl.h does not have" -- "$TOPOTUNE" workload --from-nccl-log dtype.log
expect_stderr_has "1 COLL line(s) left out" "is said, not dropped in silence"
: >empty.log
expect_exit 2 "an empty log (a rank's NCCL_DEBUG_FILE that stayed empty)" -- "$TOPOTUNE" workload --from-nccl-log empty.log
expect_stderr_has "no NCCL COLL line in empty.log" "said, not a crash"
expect_exit 0 "--out - prints the document" -- "$TOPOTUNE" workload --from-nccl-log nul.log --out -
check "on standard output, no file named -" sh -c "python3 -m json.tool '$TEST_TMP/out' >/dev/null && test ! -e -"
mkfifo fifo.log
expect_exit 2 "a FIFO is refused, not waited on" -- timeout 20 "$TOPOTUNE" workload --from-nccl-log fifo.log
# A log past the limit (a 2 GiB sparse file) is refused by its size, before a byte is read: it
# was read, and held, up to 1 GiB first (out of memory under a 700 MB limit: an abort). ASan
# reserves far more address space than that limit: there only the refusal is checked.
truncate -s 2G huge.log
limit=
[ -n "${ASAN_OPTIONS:-}" ] || limit="ulimit -v 700000;"
expect_exit 2 "a 2 GiB log, refused by its size" -- bash -c "$limit exec '$TOPOTUNE' workload --from-nccl-log huge.log"
expect_stderr_has "larger than 1024 MiB" "says why"
rm -f huge.log
expect_exit 2 "neither a log nor a preset" -- "$TOPOTUNE" workload
expect_stderr_has "give --from-nccl-log FILE... or --preset NAME" "neither: what to give"
# each misuse said as it is (all four once had the one message "give ... or ...")
expect_exit 2 "both" -- "$TOPOTUNE" workload --preset dp --from-nccl-log "$logs/nccl-584-sendrecv.log"
expect_stderr_has "--from-nccl-log and --preset both given" "both: said so"
expect_exit 2 "a preset with files" -- "$TOPOTUNE" workload --preset dp "$logs/nccl-584-sendrecv.log"
expect_stderr_has "--preset dp takes no files" "files with a preset: said so"
expect_exit 2 "--from-nccl-log without files" -- "$TOPOTUNE" workload --from-nccl-log
expect_stderr_has "--from-nccl-log needs the log files" "no files: said so"
# Numbers a person reads never take an exponent: a million calls a rank read "1e+06".
yes 'h:1:2 [0] NCCL INFO AllReduce: opCount 0 count 1 datatype 0 [nranks=2]' | head -n 1000000 >million.log
expect_exit 0 "a million calls" -- "$TOPOTUNE" workload --from-nccl-log million.log
rm -f million.log
check "1,000,000 calls a rank" grep -qE '^ all_reduce +1 +1,000,000 ' "$TEST_TMP/out"
finish
