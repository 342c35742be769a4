/* SPDX-License-Identifier: MIT */
/*
 * tuner-table.txt: the profile's per-size rows in the table format of our own NCCL tuner plugin
 * (tuner/tuner.h, version 1), which libnccl-tuner-topotune.so reads through TOPOTUNE_TUNER_TABLE.
 */
#include "gen/internal.h"
#include "tuner/tuner.h"

#include <stdio.h>
#include <string.h>

/* A class id the table's `class=` header can carry: no space, no control byte, not too long. */
static int header_safe(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > TUNER_CLASS_MAX)
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s <= ' ' || *s == 0x7f)
            return 0;
    return 1;
}

/* A model name the `gpu_model=` header can carry: text without control bytes, not too long,
 * not starting or ending with a space (the reader trims them). */
static int model_safe(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > TUNER_CLASS_MAX || s[0] == ' ' || s[n - 1] == ' ')
        return 0;
    for (; *s; s++)
        if ((unsigned char)*s < ' ' || *s == 0x7f)
            return 0;
    return 1;
}

static void headers(const json_t *profile, struct util_buf *out)
{
    const char *class_id = json_string_value(json_object_get(profile, "class"));
    const char *nccl =
        json_string_value(json_object_get(json_object_get(profile, "software"), "nccl"));
    unsigned major, minor, patch;
    char end;
    util_buf_adds(out, TUNER_TABLE_MAGIC "\n");
    if (header_safe(class_id))
        util_buf_addf(out, "# class=%s\n", class_id);
    /* The kind of node measured on, as the plugin sees the node it runs on (the driver's GPU
     * list): the GPU count, and the model name as NVML gives it (not for a predicted profile,
     * whose model comes from a spec, nor for a node mixing models). */
    const json_t *hw = json_object_get(profile, "hardware");
    long long gpus = json_integer_value(json_object_get(hw, "gpus"));
    const char *model = json_string_value(json_object_get(hw, "gpu_model"));
    if (gpus > 0 && gpus <= 4096)
        util_buf_addf(out, "# gpus=%lld\n", gpus);
    if (model && !json_is_true(json_object_get(profile, "predicted")) && !strchr(model, ',') &&
        model_safe(model))
        util_buf_addf(out, "# gpu_model=%s\n", model);
    /* The NCCL version measured: the table is valid for it only (absent when unknown). */
    if (nccl && sscanf(nccl, "%u.%u.%u%c", &major, &minor, &patch, &end) == 3 && minor < 100 &&
        patch < 100)
        util_buf_addf(out, "# nccl_min=%u.%u.%u\n# nccl_max=%u.%u.%u\n", major, minor, patch, major,
                      minor, patch);
}

static int emit_rows(const json_t *profile, struct util_buf *out);

/* The table with its own digest as a header after line 1 (tuner/tuner.h, "One table"): what the
 * plugin checks a copy's rows against, and the launch scripts pass to the job's ranks; and its
 * row count, which they count a copy's rows against. */
static int emit_tuner_table(const json_t *profile, struct util_buf *out)
{
    struct util_buf body = UTIL_BUF_INIT;
    struct tuner_table t = TUNER_TABLE_INIT;
    char hex[TUNER_DIGEST_CHARS + 1];
    int rc = emit_rows(profile, &body);
    if (rc == 0 && tuner_table_parse(&t, body.data, body.len, NULL, 0) != 0)
        rc = -1; /* never: the rows are written from a closed list */
    if (rc == 0) {
        const char *rest = strchr(body.data, '\n') + 1; /* after TUNER_TABLE_MAGIC's line */
        tuner_digest_format(t.digest, hex);
        util_buf_addf(out, "%s\n# digest=%s\n# rows=%zu\n%s", TUNER_TABLE_MAGIC, hex, t.nrules,
                      rest);
    }
    tuner_table_release(&t);
    util_buf_release(&body);
    return rc;
}

static int emit_rows(const json_t *profile, struct util_buf *out)
{
    headers(profile, out);
    util_buf_adds(out, TUNER_TABLE_COLUMNS "\n");
    gen_header(profile, "tuner-table.txt", out);
    util_buf_adds(
        out,
        "# For topotune's NCCL tuner plugin (libnccl-tuner-topotune.so, built and installed with\n"
        "# topotune): NCCL_TUNER_PLUGIN=<path to it> TOPOTUNE_TUNER_TABLE=<this file>; the launch\n"
        "# scripts set both. Off: unset NCCL_TUNER_PLUGIN. Each row: a byte range where the sweep\n"
        "# measured an algorithm/protocol beating the profile's configuration (NCCL's defaults\n"
        "# where it sets nothing) beyond the noise (evidence in profile.json, \"tuner\");\n"
        "# elsewhere NCCL decides. channels 0: NCCL's own count.\n");
    size_t i;
    json_t *r;
    json_array_foreach(json_object_get(profile, "tuner"), i, r) {
        const char *coll = json_string_value(json_object_get(r, "collective"));
        const char *algo = json_string_value(json_object_get(r, "algorithm"));
        const char *proto = json_string_value(json_object_get(r, "protocol"));
        json_t *max = json_object_get(r, "max_bytes");
        /* Names from a closed list (profile.json is ours, but a file all the same). */
        if (!coll || !algo || !proto || strpbrk(coll, ",#\n") || strpbrk(algo, ",#\n") ||
            strpbrk(proto, ",#\n"))
            return -1;
        util_buf_addf(out, "%s,%lld,", coll,
                      (long long)json_integer_value(json_object_get(r, "min_bytes")));
        if (json_is_integer(max))
            util_buf_addf(out, "%lld", (long long)json_integer_value(max));
        else
            util_buf_adds(out, "18446744073709551615");
        for (int k = 0; k < 2; k++) { /* a count the results lack matches any */
            long long v = json_integer_value(json_object_get(r, k ? "ranks" : "nodes"));
            if (v > 0)
                util_buf_addf(out, ",%lld", v);
            else
                util_buf_adds(out, ",*");
        }
        util_buf_addf(out, ",%s,%s,%lld\n", algo, proto,
                      (long long)json_integer_value(json_object_get(r, "channels")));
    }
    if (json_array_size(json_object_get(profile, "tuner")) == 0)
        util_buf_adds(
            out, "# no row: no per-size choice beat the profile's configuration beyond the noise "
                 "(or the sweep recorded no algorithm/protocol per size): NCCL decides\n");
    return 0;
}

const struct gen_emitter gen_emit_tuner_table = {"tuner-table.txt", 0, emit_tuner_table};
