/* SPDX-License-Identifier: MIT */
/*
 * tuner.csv: the profile's per-size rows in the CSV of NCCL's example tuner plugin, kept for
 * those who run it. Its code starts every call at one channel, so a row without a channel count
 * (all of ours: the sweep leaves NCCL its own count) would run on ONE channel: such rows are
 * written as comments, and the header points to topotune's plugin, which reads tuner-table.txt.
 */
#include "gen/internal.h"
#include "util/quote.h"

static int emit_tuner(const json_t *profile, struct util_buf *out)
{
    gen_header(profile, "tuner.csv", out);
    util_buf_adds(
        out,
        "# Use topotune's own plugin instead: libnccl-tuner-topotune.so (installed with topotune)\n"
        "# with tuner-table.txt next to this file, as launch/*.sh set them:\n"
        "#   NCCL_TUNER_PLUGIN=<PREFIX>/lib/libnccl-tuner-topotune.so "
        "TOPOTUNE_TUNER_TABLE=<profile>/tuner-table.txt\n"
        "# This file is the same rows for NCCL's example tuner plugin (plugins/tuner/example), "
        "which\n"
        "# crashes with NCCL's real cost table up to 2.29 and runs every call it does not match, "
        "and\n"
        "# every row without a channel count, on ONE channel. Rows with a channel count are live;\n"
        "# the others are commented out (\"#row\"): do not enable them with the example plugin.\n"
        "# Columns: "
        "collective_type,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,"
        "regBuff\n");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(profile, "tuner"), i, r) {
        json_t *max = json_object_get(r, "max_bytes");
        long long channels = json_integer_value(json_object_get(r, "channels"));
        util_buf_addf(out, "%s%s,%lld,", channels > 0 ? "" : "#row ",
                      json_string_value(json_object_get(r, "collective")) ?: "allreduce",
                      (long long)json_integer_value(json_object_get(r, "min_bytes")));
        if (json_is_integer(max))
            util_buf_addf(out, "%lld,", (long long)json_integer_value(max));
        else
            util_buf_adds(out, "18446744073709551615,");
        util_quote_csv(out, json_string_value(json_object_get(r, "algorithm")) ?: "");
        util_buf_adds(out, ",");
        util_quote_csv(out, json_string_value(json_object_get(r, "protocol")) ?: "");
        util_buf_addf(out, ",%lld,%lld,%lld,-1,-1\n", channels > 0 ? channels : -1,
                      (long long)json_integer_value(json_object_get(r, "nodes")),
                      (long long)json_integer_value(json_object_get(r, "ranks")));
    }
    if (json_array_size(json_object_get(profile, "tuner")) == 0)
        util_buf_adds(
            out, "# no row: no per-size choice beat the profile's configuration beyond the noise "
                 "(or the sweep recorded no algorithm/protocol per size)\n");
    return 0;
}

const struct gen_emitter gen_emit_tuner = {"tuner.csv", 0, emit_tuner};
