/* SPDX-License-Identifier: MIT */
/* tuner.csv: NCCL's example tuner plugin rules, one per byte range of the best stable choice. */
#include "gen/internal.h"
#include "util/quote.h"

static long long int_or(const json_t *o, const char *key, long long dflt)
{
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? (long long)json_integer_value(v) : dflt;
}

static const char *str_or(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "";
}

static int emit_tuner(const json_t *profile, struct util_buf *out)
{
    gen_header(profile, "tuner.csv", out);
    util_buf_adds(
        out,
        "# For NCCL's example tuner plugin (plugins/tuner/example, ext-tuner before 2.29.7):\n"
        "#   NCCL_TUNER_PLUGIN=<path to libnccl-tuner-example.so> NCCL_TUNER_CONFIG_FILE=<this "
        "file>\n"
        "# Columns: "
        "collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,"
        "regBuff\n"
        "# Caution: the example plugin sets nChannels = 1 before matching, so unmatched sizes and\n"
        "# rows with channels -1 run on ONE channel; build it with nChannels starting at 0 "
        "first.\n");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(profile, "tuner"), i, r)
    {
        util_buf_addf(out, "allreduce,%lld,%lld,", int_or(r, "min_bytes", 0),
                      int_or(r, "max_bytes", 4294967295LL));
        util_quote_csv(out, str_or(r, "algorithm"));
        util_buf_adds(out, ",");
        util_quote_csv(out, str_or(r, "protocol"));
        util_buf_addf(out, ",-1,%lld,%lld,-1,-1\n", int_or(r, "nodes", -1), int_or(r, "ranks", -1));
    }
    if (json_array_size(json_object_get(profile, "tuner")) == 0)
        util_buf_adds(out, "# no rule: the sweep recorded no algorithm/protocol per size (mpi "
                           "backend, or nothing stable)\n");
    return 0;
}

const struct gen_emitter gen_emit_tuner = {"tuner.csv", 0, emit_tuner};
