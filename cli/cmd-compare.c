/* SPDX-License-Identifier: MIT */
/* `topotune compare A B ...`: inputs loaded, prices matched to them, then the reports. */
#include "bench/bench.h"
#include "cli/cli.h"
#include "compare/compare.h"
#include "model/model.h"
#include "topo/topo.h"
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/opts.h"
#include "util/text.h"
#include "workload/workload.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_INPUTS 64
#define MAX_SCALE  32 /* node counts of compare --nodes N1,N2,... */

static const char compare_usage[] =
    "INPUT... [--md FILE] [--html FILE] [--json [FILE]] [--price NAME=AMOUNT]...\n"
    "       [--nodes N|N1,N2,...] [--at SIZE] [--space FILE] [--calibration FILE]\n"
    "       [--workload FILE|PRESET]\n\n"
    "An INPUT is a profile directory (or a profiles root: every class), a sweep directory, or a\n"
    "topology or hardware spec, predicted with the model (its numbers say predicted).";

/* label is another input's than skip's (already unique, or named so by its file). */
static int label_taken(const struct compare_input *in, int n, int skip, const char *label)
{
    for (int j = 0; j < n; j++)
        if (j != skip && !strcmp(in[j].label, label))
            return 1;
    return 0;
}

/* Two inputs named alike ("a/x.json", "b/x.json"): the later ones get "#2", "#3"..., the first
 * suffix no other input's label holds (a file named "x#2.json" kept its name, and a second "x"
 * became "x#2" too: one --price then went to both). */
static void unique_labels(struct compare_input *in, int n)
{
    for (int i = 1; i < n; i++) {
        if (!label_taken(in, i, -1, in[i].label))
            continue;
        char base[sizeof(in[i].label)], name[sizeof(in[i].label)];
        snprintf(base, sizeof(base), "%s", in[i].label);
        for (int k = 2;; k++) {
            char suffix[16];
            int len = snprintf(suffix, sizeof(suffix), "#%d", k);
            size_t keep = sizeof(name) - 1 - (size_t)len;
            snprintf(name, sizeof(name), "%.*s%s", (int)keep, base, suffix);
            if (!label_taken(in, n, i, name))
                break;
        }
        snprintf(in[i].label, sizeof(in[i].label), "%s", name);
    }
}

/* --price NAME=AMOUNT: NAME is an input's label as the tables show it. */
static int apply_prices(const struct util_opt_list *prices, struct compare_input *in, int n)
{
    for (int p = 0; p < prices->n; p++) {
        const char *eq = strchr(prices->items[p], '=');
        double amount = 0;
        /* inf or nan would be no number in --json (Jansson refuses them) nor in a table */
        /* below a cent a price prints as 0, its busbw per 1,000 of it in 300 digits */
        if (!eq || eq == prices->items[p] || util_parse_double(eq + 1, 0.01, 1e15, &amount) ||
            !(amount > 0))
            return util_error(
                       "invalid value '%s' for --price: expected NAME=AMOUNT, AMOUNT a number "
                       "from 0.01 to 10^15",
                       prices->items[p]),
                   2;
        int found = 0;
        for (int i = 0; i < n; i++)
            if (strlen(in[i].label) == (size_t)(eq - prices->items[p]) &&
                !strncmp(in[i].label, prices->items[p], (size_t)(eq - prices->items[p])))
                in[i].price = amount, found = 1;
        if (!found) {
            fprintf(stderr, "topotune: error: --price %s names no input; the inputs are:",
                    prices->items[p]);
            for (int i = 0; i < n; i++)
                fprintf(stderr, " %s", in[i].label);
            fprintf(stderr, "\n");
            return 2;
        }
    }
    return 0;
}

/* Inputs side by side must have been chosen for one mix: --workload's, else the first's. A
 * profile made for another workload (or for all_reduce alone) is refused, not lined up. */
static int same_workloads(const struct compare_input *in, int n, const json_t *workload)
{
    const json_t *ref = workload ? workload : n ? json_object_get(in[0].profile, "workload") : NULL;
    for (int i = 0; i < n; i++) {
        const json_t *own = json_object_get(in[i].profile, "workload");
        char why[200];
        if (!workload_differs(own, ref, why, sizeof(why)))
            continue;
        util_error("input '%s' was chosen for %s, the others for %s: compare inputs of one "
                   "workload (a spec or topology is predicted for --workload's)",
                   in[i].label, own ? "another workload" : "all_reduce alone",
                   ref ? (workload ? "--workload's" : "the first input's workload")
                       : "all_reduce alone");
        return 2;
    }
    return 0;
}

/* Each file input's assumptions (model_warn_assumed) at the most nodes it is predicted on: a
 * topology without NIC speeds or NVLink was compared silently, 40 times low beside a spec. */
static void warn_assumed(const struct compare_input *in, int n, const int *counts, int ncounts)
{
    int most = 0;
    for (int k = 0; k < ncounts; k++)
        most = counts[k] > most ? counts[k] : most;
    for (int i = 0; i < n; i++) {
        if (!in[i].kind || (strcmp(in[i].kind, "spec") && strcmp(in[i].kind, "topology")))
            continue;
        struct topo t;
        struct model m;
        topo_init(&t);
        if (!topo_load(&t, in[i].path) && !model_init(&m, &t, most, model_env_none, NULL))
            model_warn_assumed(&m, &t, in[i].path);
        topo_release(&t);
    }
}

/* out would replace input: the same file (one inode), or a file that exists inside input when
 * that is a folder (a sweep's sweep.json, a profile's profile.json; a new report beside them
 * replaces nothing). dir is out's folder. */
static int replaces(const char *out, const char *dir, const char *input)
{
    struct stat x, y;
    if (!input)
        return 0;
    if (!strcmp(out, input) ||
        (!stat(out, &x) && !stat(input, &y) && x.st_dev == y.st_dev && x.st_ino == y.st_ino))
        return 1;
    char where[PATH_MAX], folder[PATH_MAX];
    if (stat(out, &x) || stat(input, &y) || !S_ISDIR(y.st_mode) || !realpath(dir, where) ||
        !realpath(input, folder))
        return 0;
    size_t n = strlen(folder);
    return !strncmp(where, folder, n) && (where[n] == '/' || !where[n] || n == 1);
}

/* Where path lands: its folder's real path and its last part ("./a.json" and "a.json" alike,
 * whether or not the file exists yet). */
static void landing(const char *path, char *out, size_t size)
{
    char dir[PATH_MAX], real[PATH_MAX];
    snprintf(dir, sizeof(dir), "%s", path);
    char *slash = strrchr(dir, '/');
    const char *base = slash ? path + (slash - dir) + 1 : path;
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    snprintf(out, size, "%s/%s", realpath(slash ? dir : ".", real) ? real : dir, base);
}

/* 1 when the file at path exists and is not an earlier compare report: `--json A B` took A, an
 * input, as the report's file, and replaced a spec or a profile with the report. */
static int holds_other(const char *path)
{
    struct stat st;
    if (lstat(path, &st) || !S_ISREG(st.st_mode) || st.st_size == 0)
        return 0;
    json_t *j = json_load_file(path, 0, NULL);
    const char *schema = json_string_value(json_object_get(j, "schema"));
    int other = !schema || strcmp(schema, "topotune/compare/1");
    json_decref(j);
    return other;
}

/* The report files, checked before anything is written (exit 2, nothing written): each a file
 * in a folder that exists, none of them a folder, another output or one of the inputs (--md on a
 * spec replaced it). "-" is standard output for --json only. */
static int check_outputs(const char *const *out, const char *const *flag, int nout, char **inputs,
                         int ninputs)
{
    for (int i = 0; i < nout; i++) {
        if (!out[i] || (!strcmp(flag[i], "json") && !strcmp(out[i], "-")))
            continue;
        if (!strcmp(out[i], "-"))
            return util_error("--%s -: --%s writes a file (only --json - writes to standard "
                              "output): give a file name",
                              flag[i], flag[i]);
        struct stat st;
        char dir[4096];
        if (!out[i][0])
            return util_error("--%s '': give a file name", flag[i]);
        snprintf(dir, sizeof(dir), "%s", out[i]);
        char *slash = strrchr(dir, '/');
        if (slash) /* the folder it goes into; none: this one */
            *(slash == dir ? slash + 1 : slash) = '\0';
        if (slash && (stat(dir, &st) || !S_ISDIR(st.st_mode)))
            return util_error("--%s '%s': its folder '%s' does not exist: create it, or give "
                              "another path",
                              flag[i], out[i], dir);
        /* a link is refused when written (never written through): refused here, before the
         * other reports are written */
        if (!lstat(out[i], &st) && !S_ISREG(st.st_mode))
            return util_error("--%s '%s' is not a regular file (a folder or a link?): give a file "
                              "name",
                              flag[i], out[i]);
        if (!strcmp(flag[i], "json") && holds_other(out[i]))
            return util_error("--json '%s' exists and is no compare report (a spec, a profile, "
                              "another file?): --json takes the argument after it as its file; "
                              "give --json=FILE naming a new file, or --json - for standard "
                              "output",
                              out[i]);
        for (int j = 0; j < ninputs; j++)
            if (replaces(out[i], slash ? dir : ".", inputs[j]))
                return util_error("--%s '%s' is, or is inside, the input '%s': it would be "
                                  "replaced; give another file",
                                  flag[i], out[i], inputs[j]);
        char here[2 * PATH_MAX], there[2 * PATH_MAX];
        landing(out[i], here, sizeof(here));
        for (int j = 0; j < i; j++)
            if (out[j] && (landing(out[j], there, sizeof(there)), !strcmp(here, there)))
                return util_error("--%s and --%s both name '%s': give each its own file", flag[j],
                                  flag[i], out[i]);
    }
    return 0;
}

/*
 * The reports, all or none (a full disk or a read-only folder for the last left the first
 * written): the JSON (rendered, json_text), Markdown and HTML files staged, then renamed together;
 * then standard output: the JSON for --json -, else the text tables. 0 or 1.
 */
static int write_reports(const struct compare_input *in, int n, const char *json, const char *md,
                         const char *html, const struct util_buf *json_text)
{
    struct util_files files = UTIL_FILES_INIT;
    struct util_buf b = UTIL_BUF_INIT;
    int to_stdout = json && !strcmp(json, "-"), rc = 0;
    if (json && !to_stdout)
        rc = util_files_stage(&files, json, json_text->data, json_text->len);
    if (!rc && md) {
        compare_render_md(in, n, &b);
        rc = util_files_stage(&files, md, b.data, b.len);
    }
    if (!rc && html) {
        util_buf_reset(&b);
        compare_render_html(in, n, &b);
        rc = util_files_stage(&files, html, b.data, b.len);
    }
    if (!rc)
        rc = util_files_commit(&files);
    util_files_release(&files);
    util_buf_release(&b);
    if (rc)
        return 1;
    if (to_stdout)
        return fwrite(json_text->data, 1, json_text->len, stdout) == json_text->len ? 0 : 1;
    compare_print_text(in, n, stdout);
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    const char *md = NULL, *html = NULL, *json = NULL, *space = NULL, *calibration = NULL,
               *workload_arg = NULL;
    struct model_params params;
    struct util_opt_list prices = {0};
    struct util_opt_ints scale = {{0}, 0};
    size_t at = 0;
    const struct util_opt opts[] = {
        {"md", 0, UTIL_OPT_STRING, &md, "FILE", "write the comparison as Markdown tables"},
        {"html", 0, UTIL_OPT_STRING, &html, "FILE",
         "write one self-contained HTML file: tables and plots (gnuplot)"},
        {"json", 0, UTIL_OPT_OPTSTRING, &json, "FILE",
         "{\"inputs\": [{label, kind, source, predicted, price, profile}]} (stdout: - or none)"},
        {"price", 0, UTIL_OPT_LIST, &prices, "NAME=AMOUNT",
         "price per node of an input (by its label): adds GB/s per 1,000 of its price per GPU"},
        {"nodes", 0, UTIL_OPT_INTS, &scale, "N",
         "predict topology and spec inputs for N nodes (default: the file's); a list N1,N2,...: "
         "a scaling table of busbw by node count",
         .min = 1, .max = 4096, .max_items = MAX_SCALE},
        {"at", 0, UTIL_OPT_SIZE, &at, "SIZE",
         "the size of the scaling table (default: the largest all inputs' defaults ran, else 1G)",
         .min = 4, .max = 1099511627776.0}, /* one float: nccl-tests runs no smaller all_reduce */
        {"space", 0, UTIL_OPT_STRING, &space, "FILE",
         "configurations the model tries for predicted inputs (default nccl-default)"},
        {"calibration", 0, UTIL_OPT_STRING, &calibration, "FILE",
         "the model's parameters for predicted inputs (topotune/calibration/1)"},
        {"workload", 0, UTIL_OPT_STRING, &workload_arg, "FILE|PRESET",
         "predict topology and spec inputs for a job's mix (topotune workload's file, or dp, "
         "fsdp, tp, moe)"},
        {0},
    };
    const struct util_opts_cmd cmd = {"topotune compare", compare_usage, opts, -1, 0};
    int npos = 0, status, rc = 0;
    char **pos = argv + 1;
    if (cli_parse(&cmd, argc, argv, &npos, &status))
        return status;
    if (!npos)
        return util_error("topotune compare needs at least one input (see --help)"), 2;
    const char *out[] = {json, md, html}, *flag[] = {"json", "md", "html"};
    char **read = util_xcalloc((size_t)npos + 4, sizeof(char *)); /* every file compare reads */
    memcpy(read, pos, sizeof(char *) * (size_t)npos);
    read[npos] = (char *)space, read[npos + 1] = (char *)calibration;
    read[npos + 2] = (char *)workload_arg;
    int bad = check_outputs(out, flag, 3, read, npos + 3);
    free(read);
    if (bad)
        return 2;
    int nscale = scale.n;
    long nodes = 0;
    if (nscale == 1) /* one count: predict the inputs there; a list: a scaling table */
        nodes = scale.v[0], nscale = 0;
    if (calibration && model_params_load(&params, calibration))
        return 2;
    json_t *workload = workload_arg ? workload_load(workload_arg) : NULL;
    if (workload_arg && !workload)
        return 2;
    util_child_setup();
    struct compare_input *in = util_xcalloc(MAX_INPUTS, sizeof(*in));
    int n = 0;
    for (int i = 0; i < npos && !rc; i++) {
        if (n == MAX_INPUTS) {
            util_error("more than %d inputs: compare fewer at once", MAX_INPUTS);
            rc = 2;
            break;
        }
        int got = compare_load(pos[i], (int)nodes, space, calibration ? &params : NULL, workload,
                               &in[n], MAX_INPUTS - n);
        if (got < 0) /* bad input, or the shipped data missing (the environment's) */
            rc = got == UTIL_EENV ? 3 : 2;
        else
            n += got;
    }
    unique_labels(in, n);
    if (!rc) /* what the model assumes of a file where it states nothing, said once each */
        warn_assumed(in, n, scale.v, scale.n);
    if (!rc)
        rc = same_workloads(in, n, workload);
    if (!rc)
        rc = apply_prices(&prices, in, n);
    int at_given = at > 0;
    if (!rc && nscale && n) {
        /* the largest size every input's defaults ran (the smallest of their largest: a sweep
         * shows its own sizes only); none when they hang or a workload has no all_reduce:
         * 1 GiB, which a spec or topology is predicted at as well as any */
        for (int i = 0; !at_given && i < n; i++) {
            const json_t *sizes =
                json_object_get(json_object_get(in[i].profile, "baseline"), "per_size");
            json_int_t last = json_integer_value(
                json_object_get(json_array_get(sizes, json_array_size(sizes) - 1), "size"));
            at = last > 0 && (!at || (size_t)last < at) ? (size_t)last : at;
        }
        if (!at)
            at = (size_t)1 << 30;
        for (int i = 0; i < n; i++)
            in[i].scaling = compare_scale(&in[i], scale.v, nscale, (json_int_t)at,
                                          calibration ? &params : NULL);
    }
    struct util_buf json_text = UTIL_BUF_INIT;
    if (!rc && json) {
        json_t *list = json_array();
        struct util_buf label = UTIL_BUF_INIT, path = UTIL_BUF_INIT; /* JSON is UTF-8 only */
        for (int i = 0; i < n && !rc; i++) {
            json_t *entry = json_pack("{s:s,s:s,s:s,s:O,s:o,s:O,s:O*,s:o*,s:o*}", "label",
                                      util_text_shown(&label, in[i].label), "kind", in[i].kind,
                                      "source", util_text_shown(&path, in[i].path), "predicted",
                                      json_object_get(in[i].profile, "predicted"), "price",
                                      in[i].price > 0 ? json_real(in[i].price) : json_null(),
                                      "profile", in[i].profile, "scaling", in[i].scaling,
                                      "busbw_bands", compare_bands_json(&in[i]), "workload_bands",
                                      compare_workload_bands_json(&in[i]));
            if (!entry || json_array_append_new(list, entry)) { /* never an input left out */
                util_error("cannot write input '%s' as JSON", in[i].label);
                rc = 1;
            }
        }
        util_buf_release(&label);
        util_buf_release(&path);
        json_t *doc = json_pack("{s:s,s:o}", "schema", "topotune/compare/1", "inputs", list);
        if (!rc)
            rc = util_json_text(json, doc, &json_text) ? 1 : 0;
        json_decref(doc);
    }
    if (!rc)
        rc = write_reports(in, n, json, md, html, &json_text);
    util_buf_release(&json_text);
    for (int i = 0; i < n; i++) {
        json_decref(in[i].profile);
        json_decref(in[i].scaling);
    }
    free(in);
    json_decref(workload);
    return rc;
}
