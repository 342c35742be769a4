/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the NCCL tuner plugin's table parser (tuner/table.c), the one piece of
 * the plugin that reads untrusted text inside NCCL's process: the parser, then a match for every
 * collective at a few sizes and shapes, checking that what it accepted keeps the format's rules.
 */
#include "tuner/tuner.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

static void check_rules(const struct tuner_table *t)
{
    if (t->nrules > TUNER_TABLE_MAX_ROWS || (t->nrules && !t->rules))
        abort();
    for (size_t i = 0; i < t->nrules; i++) {
        const struct tuner_rule *r = &t->rules[i];
        if (r->coll >= TUNER_NUM_COLLS || r->algo >= TUNER_NUM_ALGOS ||
            r->proto >= TUNER_NUM_PROTOS || r->channels > TUNER_MAX_CHANNELS ||
            r->min_bytes > r->max_bytes || r->line < 2)
            abort(); /* the parser let through what the format forbids */
    }
    if (t->nccl_min && t->nccl_max && t->nccl_min > t->nccl_max)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint64_t sizes[] = {0, 1, 4095, 4096, 1 << 20, UINT64_MAX};
    struct tuner_table t = TUNER_TABLE_INIT;
    char err[256];
    if (tuner_table_parse(&t, (const char *)data, size, err, sizeof(err)) == 0) {
        check_rules(&t);
        for (int coll = -1; coll <= TUNER_NUM_COLLS; coll++)
            for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                const struct tuner_rule *r = tuner_table_match(&t, coll, sizes[i], 1, 8);
                if (r && (r->coll != coll || sizes[i] < r->min_bytes || sizes[i] > r->max_bytes))
                    abort();
                (void)tuner_table_match(&t, coll, sizes[i], 4, 32);
            }
    } else if (t.rules || t.nrules || !err[0]) {
        abort(); /* a refusal must leave the table empty and say why */
    }
    tuner_table_release(&t);
    return 0;
}
