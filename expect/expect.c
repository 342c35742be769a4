/* SPDX-License-Identifier: MIT */
/*
 * The expectation itself: from the model with its measured band, or from a profile's runs with
 * their spread; the table and the JSON document (schema topotune/expect/1).
 */
#include "expect/expect.h"
#include "gen/gen.h"
#include "util/error.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/text.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void expect_release(struct expect *e)
{
    free(e->rows);
    e->rows = NULL;
    e->n = 0;
}

static struct expect_row *add_row(struct expect *e, size_t bytes)
{
    e->rows = util_xrealloc(e->rows, (size_t)(e->n + 1) * sizeof(*e->rows));
    struct expect_row *r = &e->rows[e->n++];
    memset(r, 0, sizeof(*r));
    r->bytes = bytes;
    return r;
}

/* The band as factors of busbw; a call's time goes the other way (time x busbw / b at busbw b),
 * which holds at one rank too, where busbw is 0 and the time is all there is. */
static void set_band(struct expect_row *r, double lo, double hi)
{
    r->low = r->busbw * lo;
    r->high = r->busbw * hi;
    r->time_low_us = r->time_us / hi;
    r->time_high_us = r->time_us / lo;
}

size_t expect_run_size(size_t bytes)
{
    return bytes - bytes % sizeof(float);
}

size_t expect_coll_run_size(size_t bytes, int coll, int nranks)
{
    size_t n = nranks > 0 ? (size_t)nranks : 1;
    return model_coll_parts(coll) ? ((bytes / sizeof(float) / n) & ~(size_t)3) * sizeof(float) * n
                                  : expect_run_size(bytes);
}

int expect_predicted(struct expect *e, const struct model *m, const struct topo *t,
                     const char *source, const char *env, int coll, size_t min, size_t max,
                     int factor)
{
    memset(e, 0, sizeof(*e));
    e->coll = coll;
    snprintf(e->env, sizeof(e->env), "%s", env ? env : "");
    snprintf(e->source, sizeof(e->source), "%s", source);
    snprintf(e->class_id, sizeof(e->class_id), "%s", t->class_id ? t->class_id : "");
    e->class_of_no_node = t->source == TOPO_SOURCE_SPEC || t->source == TOPO_SOURCE_NCCL_XML;
    e->min = min, e->max = max, e->factor = factor;
    /* the machines, not NCCL's view, which counts an NVLink domain's trays as one node */
    e->nodes = model_hosts(m), e->ppn = model_gpus_per_host(m), e->nranks = m->nranks;
    e->rate = MODEL_BAND_RATE;
    snprintf(e->basis, sizeof(e->basis),
             "predicted by %s with %s; band: where %.0f%% of the published "
             "measurements of %s of the model's calibration fell around predictions made without "
             "their own source (docs/model.md, \"Bands\")",
             MODEL_VERSION, e->env[0] ? e->env : "NCCL's defaults", 100 * MODEL_BAND_RATE,
             coll == MODEL_ALL_REDUCE                          ? "all_reduce"
             : coll == MODEL_BROADCAST || coll == MODEL_REDUCE ? "broadcast and reduce"
                                                               : "all_gather, reduce_scatter, "
                                                                 "alltoall and sendrecv");
    if (m->fault != MODEL_FAULT_NONE)
        return util_error("the model's predicted outcome for '%s' is %s, not a bandwidth: %s",
                          source, model_fault_words(m->fault), m->why),
               EXPECT_FAULT;
    if (m->gpus_unknown)
        return util_error("'%s': %d of its %d GPUs have no model the catalog knows (a name or "
                          "PCI device id it does not hold, or neither given: an NCCL topology dump "
                          "without its <gpu> elements): "
                          "the model would price them as Volta GPUs, no reference for what they "
                          "should measure; give --input a hardware spec naming the GPU, or "
                          "--profile a profile measured on this class",
                          source, m->gpus_unknown, m->ppn),
               UTIL_EINVAL;
    if (!t->nvlink_known && t->ngpus > 1)
        return util_error("'%s' does not describe NVLink, and its GPUs may have it (an NCCL "
                          "topology file without <nvlink> elements, NCCL adds them at run time; "
                          "an export made without NVML): the model would price every pair over "
                          "PCIe, no reference for what they should measure; give --input a "
                          "hardware spec naming the GPU and fabric, or --profile a profile "
                          "measured on this class",
                          source),
               UTIL_EINVAL;
    if (m->nodes > 1 && m->nics_unknown)
        return util_error("'%s': %d of its NICs have no speed the source states (an hwloc export "
                          "records none): across nodes the model would price them at 10 Gb/s, no "
                          "reference for what they should measure; give --input a hardware spec "
                          "naming the NICs, or --nodes 1",
                          source, m->nics_unknown),
               UTIL_EINVAL;
    for (size_t asked = min ? min : 1; asked <= max; asked *= (size_t)factor) {
        size_t b = expect_coll_run_size(asked, coll, m->nranks);
        if (!b || (e->n && e->rows[e->n - 1].bytes == b)) {
            if (asked > max / (size_t)factor)
                break;
            continue;
        }
        struct model_prediction p;
        if (model_predict_coll(m, coll, b, &p) || p.wrong) {
            /* a fault of this collective (m->fault is all_reduce's): a verdict, as that is */
            expect_release(e);
            return util_error("the model predicts %s at %zu B for '%s', not a bandwidth",
                              p.wrong ? "wrong results" : "no usable algorithm", b, source),
                   EXPECT_FAULT;
        }
        if (!e->n)
            e->first = asked;
        struct expect_row *r = add_row(e, b);
        r->busbw = p.busbw;
        r->time_us = p.time_us;
        snprintf(r->algo, sizeof(r->algo), "%s", p.algo);
        snprintf(r->proto, sizeof(r->proto), "%s", p.proto);
        struct model_band band = model_band_for(coll, b);
        set_band(r, band.low, band.high);
        if (asked > max / (size_t)factor)
            break;
    }
    if (!e->n)
        return util_error("no size from %zu to %zu B holds %s: give a larger -e", min, max,
                          model_coll_parts(coll) ? "a 16-byte part of every rank (all_gather, "
                                                   "reduce_scatter and alltoall divide the size "
                                                   "among the ranks)"
                                                 : "one float (4 B)"),
               UTIL_EINVAL;
    return 0;
}

/* The configuration the profile chose: the winner's numbers, else the defaults'. */
static json_t *chosen(json_t *profile)
{
    json_t *w = json_object_get(profile, "winner");
    return json_is_object(w) ? w : json_object_get(profile, "baseline");
}

static int bad(const char *path, const char *field, const char *why)
{
    return util_error("profile '%s': %s %s: give a profile topotune gen wrote", path, field, why),
           UTIL_EINVAL;
}

/* Each measured size of per_size within min .. max, with the runs' band. */
static int measured_rows(struct expect *e, const char *path, json_t *per_size, double margin,
                         size_t min, size_t max)
{
    size_t i;
    json_t *s;
    json_array_foreach(per_size, i, s) {
        json_t *size = json_object_get(s, "size"), *busbw = json_object_get(s, "busbw");
        /* no GPU measures below 1 KB/s: 1e-300 printed a time column of 300 digits */
        if (!json_is_integer(size) || json_integer_value(size) < 1 || !json_is_number(busbw) ||
            !(json_number_value(busbw) >= 1e-6) || !(json_number_value(busbw) < 1e9))
            return bad(path, "per_size",
                       "holds a size without a positive size and a busbw from 1e-6 to 1e9 GB/s");
        size_t b = (size_t)json_integer_value(size);
        if (b < min || b > max)
            continue;
        struct expect_row *r = add_row(e, b);
        r->busbw = json_number_value(busbw);
        /* nccl-tests' time: algbw = bytes / time, busbw = algbw x 2(n-1)/n */
        double n = e->nranks, factor = n > 1 ? 2 * (n - 1) / n : 1;
        r->time_us = (double)b / (r->busbw * 1e3 / factor);
        const char *algo = json_string_value(json_object_get(s, "algo"));
        const char *proto = json_string_value(json_object_get(s, "proto"));
        snprintf(r->algo, sizeof(r->algo), "%s", algo && util_valid_id(algo) ? algo : "");
        snprintf(r->proto, sizeof(r->proto), "%s", proto && util_valid_id(proto) ? proto : "");
        if (e->measured) {
            set_band(r, 1 - margin, 1 + margin);
        } else { /* the sim backend's runs: a prediction, with the model's measured error */
            struct model_band band = model_band_for(MODEL_ALL_REDUCE, b);
            set_band(r, band.low, band.high);
        }
    }
    return 0;
}

static int by_size(const void *a, const void *b)
{
    size_t x = ((const struct expect_row *)a)->bytes, y = ((const struct expect_row *)b)->bytes;
    return (x > y) - (x < y);
}

static int read_profile(struct expect *e, const char *path, json_t *p, size_t min, size_t max)
{
    const char *cls = json_string_value(json_object_get(p, "class"));
    const char *schema = json_string_value(json_object_get(p, "schema"));
    json_t *predicted = json_object_get(p, "predicted");
    if (!schema || strcmp(schema, "topotune/profile/1"))
        return bad(path, "schema", "is not \"topotune/profile/1\" (topotune gen writes it)");
    if (!cls || !topo_class_id_valid(cls))
        return bad(path, "class",
                   "is missing or not a class id (a lowercase slug, a dash and 8 hex "
                   "digits, as topotune topo names a node class)");
    if (predicted && !json_is_boolean(predicted))
        return bad(path, "predicted", "is not true or false");
    snprintf(e->class_id, sizeof(e->class_id), "%s", cls);
    json_t *sweep = json_object_get(p, "sweep"), *c = chosen(p);
    json_t *ranks = json_object_get(sweep, "ranks");
    struct gen_shape shape; /* what gen's launch templates start: the same job */
    gen_shape(p, &shape);
    if (!shape.known)
        return bad(path, "sweep.nodes",
                   "is missing (a profile written before gen recorded it), and neither its tuner "
                   "rows nor its hardware say how many nodes its ranks spanned (regenerate it with "
                   "this topotune's gen)");
    e->nodes = shape.nodes > 0 && shape.nodes <= 4096 ? (int)shape.nodes : 0;
    e->nranks = json_is_integer(ranks) && shape.ranks <= 1 << 20 ? (int)shape.ranks : 0;
    if (e->nodes < 1 || e->nranks < 1 || e->nranks % e->nodes)
        return bad(path, "sweep.nodes and sweep.ranks",
                   "are missing, out of range, or ranks are no multiple of nodes");
    e->ppn = e->nranks / e->nodes;
    json_t *cv = json_object_get(c, "cv"), *per_size = json_object_get(c, "per_size");
    if (!json_is_object(c) || !json_is_number(cv) || !json_is_array(per_size))
        return bad(path, "winner or baseline", "lacks cv or per_size");
    if (!(json_number_value(cv) >= 0))
        return bad(path, "cv", "is negative");
    double margin = fmax(EXPECT_MEASURED_MIN_MARGIN, 3 * json_number_value(cv));
    if (!(margin < 0.9))
        return bad(path, "cv", "is too large for a band (runs varied by more than 30%)");
    e->measured = json_is_true(json_object_get(p, "predicted")) ? 0 : 1;
    const char *config =
        json_is_object(json_object_get(p, "winner")) ? "its configuration" : "NCCL's defaults";
    e->rate = e->measured ? 0.997 /* 3 standard deviations of run-to-run noise */ : MODEL_BAND_RATE;
    if (e->measured)
        snprintf(e->basis, sizeof(e->basis),
                 "measured by the profile's runs (%s); band: +-%.0f%%, three times the runs' "
                 "coefficient of variation, at least %.0f%%",
                 config, 100 * margin, 100 * EXPECT_MEASURED_MIN_MARGIN);
    else /* a sim sweep's: the runs' spread is the model's noise, not the model's error */
        snprintf(e->basis, sizeof(e->basis),
                 "predicted by the profile's runs of the model (%s); band: where %.0f%% of the "
                 "published measurements of all_reduce of the model's calibration fell around "
                 "predictions made without their own source (docs/model.md, \"Bands\")",
                 config, 100 * MODEL_BAND_RATE);
    int rc = measured_rows(e, path, per_size, margin, min, max);
    if (!rc && e->n) /* in size order, each once: what -b, -e and a mean over the sizes read */
        qsort(e->rows, (size_t)e->n, sizeof(e->rows[0]), by_size);
    for (int i = 1; !rc && i < e->n; i++)
        if (e->rows[i].bytes == e->rows[i - 1].bytes)
            rc = bad(path, "per_size", "holds a size twice");
    if (!rc && !e->n)
        rc = util_error("profile '%s' measured no size from %zu to %zu B: give -b and -e around "
                        "the sizes it holds",
                        path, min, max);
    return rc;
}

int expect_measured(struct expect *e, const char *profile, size_t min, size_t max)
{
    memset(e, 0, sizeof(*e));
    e->coll = MODEL_ALL_REDUCE; /* what a profile's runs measured */
    snprintf(e->source, sizeof(e->source), "%s", profile);
    char path[4096];
    json_t *p = gen_profile_read(profile, path, sizeof(path));
    if (!p)
        return UTIL_EINVAL;
    int rc = read_profile(e, path, p, min, max);
    json_decref(p);
    if (rc)
        expect_release(e);
    return rc;
}

double expect_nccl_tests_min_bw(const struct expect *e)
{
    double sum = 0;
    for (int i = 0; i < e->n; i++)
        sum += e->rows[i].low;
    return e->n ? sum / e->n / EXPECT_NCCL_TESTS_MIN_BW_FACTOR : 0;
}

const char *expect_min_bw_text(const struct expect *e, char buf[32])
{
    double v = expect_nccl_tests_min_bw(e);
    /* rounded down, so that a run at the band's low edges passes: 0.0124 stays 0.0124 */
    double unit = v >= 10 ? 0.01 : pow(10, floor(log10(v > 0 ? v : 1)) - 3);
    v = floor(v / unit * (1 + 1e-12)) * unit;
    snprintf(buf, 32, v >= 10 ? "%.2f" : "%.4g", v);
    return buf;
}

static const char *label(const struct expect *e)
{
    return e->measured ? "measured" : "predicted";
}

json_t *expect_json(const struct expect *e)
{
    json_t *rows = json_array();
    for (int i = 0; i < e->n; i++) {
        const struct expect_row *r = &e->rows[i];
        json_t *o =
            json_pack("{s:I,s:f,s:f,s:f,s:f,s:f,s:f}", "size", (json_int_t)r->bytes, "busbw",
                      r->busbw, "low", r->low, "high", r->high, "time_us", r->time_us,
                      "time_low_us", r->time_low_us, "time_high_us", r->time_high_us);
        json_object_set_new(o, "algo", util_json_str_or_null(r->algo[0] ? r->algo : NULL));
        json_object_set_new(o, "proto", util_json_str_or_null(r->proto[0] ? r->proto : NULL));
        json_array_append_new(rows, o);
    }
    struct util_buf src = UTIL_BUF_INIT; /* a path: any bytes, JSON takes UTF-8 only */
    json_t *j =
        json_pack("{s:s,s:s,s:b,s:s,s:s,s:i,s:i,s:i,s:s,s:f,s:f}", "schema", "topotune/expect/1",
                  "collective", model_coll_name(e->coll), "predicted", !e->measured, "source",
                  util_text_shown(&src, e->source), "basis", e->basis, "nodes", e->nodes,
                  "gpus_per_node", e->ppn, "ranks", e->nranks, "model", MODEL_VERSION, "rate",
                  e->rate, "nccl_tests_min_bw", expect_nccl_tests_min_bw(e));
    json_object_set_new(j, "class", util_json_str_or_null(e->class_id[0] ? e->class_id : NULL));
    size_t min, max;
    int factor;
    /* nccl_tests_min_bw holds for a run of these flags only: its mean is over their sizes */
    json_object_set_new(j, "nccl_tests_flags",
                        expect_series_quiet(e, &min, &max, &factor)
                            ? json_null()
                            : json_pack("{s:I,s:I,s:i}", "minbytes", (json_int_t)min, "maxbytes",
                                        (json_int_t)max, "stepfactor", factor));
    json_object_set_new(j, "calibration",
                        e->calibration[0] ? json_string(util_text_shown(&src, e->calibration))
                                          : json_null());
    util_buf_release(&src);
    json_t *env = json_object(); /* NAME=VALUE words, each checked: no space in a value */
    char words[sizeof(e->env)], *save = NULL;
    snprintf(words, sizeof(words), "%s", e->env);
    for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
        char *eq = strchr(w, '=');
        if (eq) {
            *eq = '\0';
            json_object_set_new(env, w, json_string(eq + 1));
        }
    }
    json_object_set_new(j, "env", env);
    json_object_set_new(j, "sizes", rows);
    return j;
}

void expect_print(const struct expect *e, FILE *out)
{
    const char *l = label(e);
    fprintf(out, "# %s %s (float%s): %s\n", e->measured ? "MEASURED" : "PREDICTED",
            model_coll_name(e->coll), model_coll_reduces(e->coll) ? ", sum" : "", e->basis);
    struct util_buf src = UTIL_BUF_INIT; /* a path: a line end in it would forge table lines */
    fprintf(out, "# input %s, class %s; %d node(s) x %d GPU(s) = %d ranks\n",
            util_text_shown(&src, e->source), e->class_id[0] ? e->class_id : "?", e->nodes, e->ppn,
            e->nranks);
    util_buf_release(&src);
    fprintf(out, "# a healthy system measures within the band %.1f%% of the time\n#\n",
            100 * e->rate);
    fprintf(out, "#            %12s  %9s  %21s  %8s  %17s  %-8s  %s\n", "size (B)", "busbw",
            "band (busbw, GB/s)", "time (us)", "band (time, us)", "algo", "proto");
    for (int i = 0; i < e->n; i++) {
        const struct expect_row *r = &e->rows[i];
        fprintf(out, "   %-9s  %12zu  %9.2f  %9.2f .. %9.2f  %8.1f  %7.1f .. %7.1f  %-8s  %s\n", l,
                r->bytes, r->busbw, r->low, r->high, r->time_us, r->time_low_us, r->time_high_us,
                r->algo[0] ? r->algo : "-", r->proto[0] ? r->proto : "-");
    }
    /* the figure only where --format nccl-tests-min-bw gives it: a check that can fail, of one
     * nccl-tests run's sizes (the table gave 0 at one rank, and a mean of sizes no run measures) */
    char bw[32];
    size_t min, max;
    int factor;
    if (e->nranks < 2)
        fprintf(out, "#\n# no NCCL_TESTS_MIN_BW: at one rank busbw is 0, so no run is below any "
                     "figure\n");
    else if (expect_series_quiet(e, &min, &max, &factor))
        fprintf(out, "#\n# no NCCL_TESTS_MIN_BW: these sizes are not one size times the powers of "
                     "a factor, as one nccl-tests run measures (give -b and -e that select such "
                     "sizes)\n");
    else /* a smaller -b runs sizes of no part per rank, whose busbw 0 the mean counts */
        fprintf(out,
                "#\n# NCCL_TESTS_MIN_BW=%s makes nccl-tests fail a run at exactly these sizes (-b "
                "%zu -e %zu -f %d) whose Avg bus bandwidth, the mean over them, is below 0.9 x "
                "that (the mean of the band's low edges): the mean is judged, not each size\n",
                expect_min_bw_text(e, bw), min, max, factor);
}
