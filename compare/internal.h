/* SPDX-License-Identifier: MIT */
/* What compare/'s reports share: facts read from an input's profile, and one table renderer. */
#ifndef COMPARE_INTERNAL_H
#define COMPARE_INTERNAL_H

#include "compare/compare.h"
#include "model/model.h"
#include "util/buf.h"

/* Facts of an input, as text appended to out (the same text is compared across inputs). */
void compare_gpus(const struct compare_input *in, struct util_buf *out);
void compare_gpu_links(const struct compare_input *in,
                       struct util_buf *out); /* "NV18 (4 NVSwitch)" */
void compare_gpu_pairs(const struct compare_input *in, struct util_buf *out); /* "56 x NV18" */
void compare_nics(const struct compare_input *in, struct util_buf *out);
void compare_numa(const struct compare_input *in, struct util_buf *out);
/* The best configuration's variables with their role, or the profile's summary. */
void compare_best(const struct compare_input *in, struct util_buf *out);
/* Each variable's evidence, ending in "predicted" for a predicted input. */
void compare_evidence(const struct compare_input *in, struct util_buf *out);

int compare_predicted(const struct compare_input *in);
/* What 1,000 of an input's price buys of bw (GB/s, per GPU as busbw and algbw are): bw over the
 * price of one of its GPUs (--price is per node), x 1,000; -1 without a price, a GPU or bw > 0.
 * Per GPU, so that a tray of 4 GPUs and a node of 8 at one price are not 2x apart for the same
 * bandwidth per GPU. */
double compare_per_price(const struct compare_input *in, double bw);
/* The per-size lists of the best configuration (the defaults when they are best) and the defaults.
 */
const json_t *compare_best_sizes(const struct compare_input *in);
const json_t *compare_default_sizes(const struct compare_input *in);
/* [low, high] in GB/s: where a healthy system measures a predicted busbw at size (all_reduce's
 * band, model_band_at, as the tables show it); null for a busbw not above 0. New reference. */
json_t *compare_busbw_band(double busbw, json_int_t size);
/* A workload profile's effective algbw (its objective) of which ("winner" or "baseline"), or -1:
 * no workload, or no such configuration. */
double compare_workload_objective(const struct compare_input *in, const char *which);
/* The band of one (collective, size) of a workload's evidence (model_band_for; a collective the
 * model does not know gets the envelope of every one it does). */
struct model_band compare_evidence_band(const json_t *evidence_row);
/* The band of a workload's mix, its effective algbw's: one that holds each of its (collective,
 * size)'s; all_reduce's at large sizes when it has none. */
struct model_band compare_mix_band(const struct compare_input *in);
/* busbw at size in a per-size list, or -1 when absent. */
double compare_busbw_at(const json_t *per_size, json_int_t size);
/* Time per call (us) of an input's job at size from its busbw: algbw = busbw x n / (2(n-1)) with
 * n = GPUs per node x nodes, time = bytes / algbw; -1 without a busbw. */
double compare_time_us(const struct compare_input *in, double busbw, json_int_t size);

enum compare_format { COMPARE_TEXT, COMPARE_MD, COMPARE_HTML };

/* A table of strings; row 0 is the header. Cells are owned by the table. */
struct compare_table {
    int rows, cols, allocated; /* rows shown (may shrink), columns, rows allocated */
    char ***cells;
};
void compare_table_init(struct compare_table *t, int rows, int cols);
void compare_table_set(struct compare_table *t, int r, int c,
                       struct util_buf *b); /* takes b's text */
void compare_table_sets(struct compare_table *t, int r, int c, const char *s);
/* Renders as aligned text, a Markdown table or an HTML table, every cell escaped for its format. */
void compare_table_render(const struct compare_table *t, enum compare_format f,
                          struct util_buf *out);
void compare_table_free(struct compare_table *t);
/* Text escaped for f: HTML entities, Markdown's | and <. */
void compare_escape(struct util_buf *out, const char *s, enum compare_format f);

#endif
