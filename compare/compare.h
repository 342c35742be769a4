/* SPDX-License-Identifier: MIT */
/*
 * `topotune compare`: node classes side by side, from measured profiles and
 * sweeps or from predictions for hardware not owned yet. Every input becomes a
 * profile's content (what gen_select makes of a sweep), so measured and
 * predicted inputs are read the same way, and each keeps its "predicted" flag
 * all the way to every number printed.
 */
#ifndef COMPARE_COMPARE_H
#define COMPARE_COMPARE_H

#include "topo/topo.h"
#include "util/buf.h"

#include <jansson.h>

/* One input: {"label", "kind": profile|sweep|spec, "source", "profile": {...}, "price"?}. */
struct model_params;

struct compare_input {
    const char *path;
    char label[128];
    const char *kind;
    json_t *profile; /* schema topotune/profile/1 content, "predicted" set */
    double price;    /* 0: none given */
    json_t *scaling; /* compare_scale's rows, or NULL */
};

/*
 * The scaling of an input with the node count (compare --nodes 1,2,4,...): busbw at size for
 * each of the nodes counts. A topology or spec input is predicted (NCCL's defaults, the model's
 * params or the defaults when NULL); a profile or sweep keeps its one measured (or predicted)
 * node count. New reference: [{nodes, busbw, predicted}] (busbw -1: no number there; a predicted
 * busbw above 0 carries busbw_band, [low, high] in GB/s, as the tables show it).
 */
json_t *compare_scale(const struct compare_input *in, const int *nodes, int n, json_int_t size,
                      const struct model_params *params);

/*
 * Loads path as a profile directory (profile.json, or a class directory's
 * latest), a sweep directory, or a topology/spec file predicted for nodes nodes
 * over the space space_path (NULL: the sim backend's default space). A profiles
 * root yields one input per class: up to max inputs are filled. Returns how
 * many, or -1 after one error line naming path (UTIL_EENV: the shipped space a prediction needs
 * is not installed).
 */
int compare_load(const char *path, int nodes, const char *space_path,
                 const struct model_params *params, const json_t *workload,
                 struct compare_input *out, int max);

/*
 * A predicted profile for topology t: every configuration of the space through
 * the model (no noise; params, or the model's defaults when NULL), one run each, chosen by
 * gen_select as a sweep would be. With a workload (topotune/workload/1, or NULL), each run is
 * one line per collective of it at its sizes, and the choice the workload's (sweep.h,
 * "Workloads"): the profile's evidence gives each (collective, size).
 */
json_t *compare_predict(const struct topo *t, int nodes, const char *space_path,
                        const struct model_params *params, const json_t *workload);

/*
 * The bands of a predicted input's numbers, as its tables show them (docs/model.md "Bands"):
 * {"winner": [{size, busbw_band}], "baseline": [...]}, a row per per-size busbw above 0
 * (compare_busbw_band). NULL for a measured input. New reference.
 */
json_t *compare_bands_json(const struct compare_input *in);
/*
 * The bands of a predicted workload input's numbers, as its workload table shows them:
 * {"effective_algbw": {"winner", "baseline"}, "per_1000_of_gpu_price", "evidence": [{collective,
 * size, time_us_band, baseline_time_us_band}]}, each [low, high] (GB/s; us for times) or null
 * where the number is not above 0 (no price: none per price); the effective algbw's band is the
 * mix's (one that holds each (collective, size)'s), the times' their own.
 * NULL for a measured input or one without a workload. New reference.
 */
json_t *compare_workload_bands_json(const struct compare_input *in);

/* Reports: plain text on stdout; Markdown and one self-contained HTML page into out (appended),
 * for the caller to write with the rest of its files, all or none. */
void compare_print_text(const struct compare_input *in, int n, FILE *out);
void compare_render_md(const struct compare_input *in, int n, struct util_buf *out);
void compare_render_html(const struct compare_input *in, int n, struct util_buf *out);

/*
 * Plots busbw against size, one curve per input (baseline dashed), for sizes in
 * [min, max), as SVG text drawn by gnuplot. Returns a malloc'd SVG, or NULL with
 * *why saying why (gnuplot missing or failing).
 */
char *compare_plot_svg(const struct compare_input *in, int n, size_t min, size_t max,
                       const char *title, const char **why);
/* Ranges whose largest size is at most this are plotted as time per call (us, log scale). */
#define COMPARE_TIME_BELOW ((size_t)64 << 10)
/* The scaling plot (compare --nodes N1,N2,...): busbw against node count per input. */
char *compare_plot_scaling_svg(const struct compare_input *in, int n, const char *title,
                               const char **why);
/* One collective of a workload (profiles with "evidence"): time per call against size per input,
 * the chosen configuration solid and the defaults dashed. */
char *compare_plot_collective_svg(const struct compare_input *in, int n, const char *collective,
                                  const char *title, const char **why);

#endif
