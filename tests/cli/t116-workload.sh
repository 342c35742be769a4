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
expect_exit 0 "Ray Train at 128 ranks (NCCL #1193) and send/recv (NCCL #584), two files" -- \
    "$TOPOTUNE" workload --from-nccl-log "$logs/nccl-1193-ray.log" "$logs/nccl-584-sendrecv.log" --out two.json
check "the two files together: 4 ranks, Recv not counted again" test "$(entries two.json)" = "all_reduce 29528912 0.5
all_reduce 28266288 0.5
sendrecv 9682944 0.5
ranks 4"
for f in tp bc two; do
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
expect_stderr_has "NCCL_DEBUG_SUBSYS=COLL" "it says how to get one"
mkfifo fifo.log
expect_exit 2 "a FIFO is refused, not waited on" -- timeout 20 "$TOPOTUNE" workload --from-nccl-log fifo.log
expect_exit 2 "neither a log nor a preset" -- "$TOPOTUNE" workload
expect_exit 2 "both" -- "$TOPOTUNE" workload --preset dp --from-nccl-log "$logs/nccl-584-sendrecv.log"
finish
