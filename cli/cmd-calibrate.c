/* SPDX-License-Identifier: MIT */
/*
 * `topotune calibrate --runs SWEEPDIR... --out FILE`: the model's parameters fitted to a node
 * class's own measured sweeps (nccl backend, or sim), written as a calibration file that predict,
 * compare and the sim backend take (--calibration). With --fit-max SIZE only the sizes up to SIZE
 * are fitted and the error on the larger ones is printed: the check that the fit predicts what it
 * did not see.
 */
#include "bench/bench.h"
#include "cli/cli.h"
#include "model/model.h"
#include "sweep/sweep.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/text.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/opts.h"
#include "util/version.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODELS 4096

struct fit_data {
    struct topo topos[64];
    int ntopos;
    struct model models[MAX_MODELS];
    json_t *envs[MAX_MODELS];
    const char *dirs[MAX_MODELS]; /* each model's sweep directory and configuration id */
    char *ids[MAX_MODELS];
    int nmodels;
    struct model_point *pts;
    int npts, cap;
    char cls[256], cls_dir[1024]; /* the node class of the first sweep, and its directory */
};

static const char *env_lookup(const char *name, void *ctx)
{
    return json_string_value(json_object_get(ctx, name));
}

static void add_point(struct fit_data *d, int model, size_t bytes, double busbw)
{
    if (d->npts == d->cap) {
        d->cap = d->cap ? 2 * d->cap : 256;
        d->pts = util_xrealloc(d->pts, sizeof(*d->pts) * (size_t)d->cap);
    }
    d->pts[d->npts++] = (struct model_point){model, bytes, busbw};
}

/* Why load_runs leaves a final ok run out, counted for one warning per sweep. */
enum { LEFT_SHAPE, LEFT_FAULT, LEFT_FULL, LEFT_N };

/* The model of result r (its configuration, on the nodes it ran on), made on first use; -1 when
 * the run is left out (left[] counts why). by_config maps "id@nodes" to the model (-1: the model
 * predicts a fault). */
static int model_of(struct fit_data *d, const struct topo *t, const char *dir, json_t *r,
                    int sweep_nodes, json_t *by_config, int left[LEFT_N])
{
    const char *id = json_string_value(json_object_get(r, "config_id"));
    json_int_t ran_on = json_integer_value(json_object_get(r, "nodes"));
    int nodes = ran_on > 0 ? (int)ran_on : sweep_nodes, m;
    char key[192];
    snprintf(key, sizeof(key), "%s@%d", id, nodes);
    json_t *k = json_object_get(by_config, key);
    if (k) {
        m = (int)json_integer_value(k);
    } else {
        if (d->nmodels == MAX_MODELS)
            return left[LEFT_FULL]++, -1;
        m = d->nmodels;
        d->envs[m] = json_deep_copy(json_object_get(r, "env"));
        if (model_init(&d->models[m], t, nodes, env_lookup, d->envs[m]) || d->models[m].fault) {
            json_decref(d->envs[m]);
            m = -1;
        } else {
            d->dirs[m] = dir;
            d->ids[m] = util_xstrdup(id);
            d->nmodels++;
        }
        json_object_set_new(by_config, key, json_integer(m));
    }
    if (m < 0)
        return left[LEFT_FAULT]++, -1;
    /* The model runs every GPU of the topology on each node: a run of another rank count (an
     * nccl sweep with a smaller --np) is another system, which it would be bent to fit. */
    json_int_t ranks = json_integer_value(json_object_get(r, "ranks"));
    if (ranks > 0 && ranks != d->models[m].nranks)
        return left[LEFT_SHAPE]++, -1;
    return m;
}

static void warn_left(const char *dir, const struct topo *t, const int left[LEFT_N])
{
    if (left[LEFT_SHAPE])
        util_warning("'%s': %d run(s) left out: they ran another number of ranks than the model "
                     "predicts (%d per node, every GPU of the topology)",
                     dir, left[LEFT_SHAPE], t->ngpus);
    if (left[LEFT_FAULT])
        util_warning("'%s': %d run(s) measured ok left out: the model predicts that their "
                     "configuration fails or hangs here, so it cannot be fitted to them",
                     dir, left[LEFT_FAULT]);
    if (left[LEFT_FULL])
        util_warning("'%s': %d run(s) left out: more than %d configurations in all", dir,
                     left[LEFT_FULL], MAX_MODELS);
}

/* A sweep directory's final ok runs as points: one model per configuration and node count, one
 * point per size (out-of-place busbw). */
static int load_runs(struct fit_data *d, const char *dir)
{
    json_t *meta, *results;
    int rc = sweep_load_dir(dir, &meta, &results);
    if (rc)
        return 2;
    const char *backend = json_string_value(json_object_get(meta, "backend"));
    if (!backend || !strcmp(backend, "mpi")) {
        rc = util_error("'%s' is an mpi sweep: the model describes NCCL (use an nccl or sim sweep)",
                        dir);
        goto out;
    }
    if (d->ntopos == 64) {
        rc = util_error("at most 64 sweep directories");
        goto out;
    }
    /* one kind of node: the fit is that hardware's (another's runs pull it away from both) */
    const char *cls = json_string_value(json_object_get(meta, "class"));
    if (!d->cls[0]) {
        snprintf(d->cls, sizeof(d->cls), "%s", cls);
        snprintf(d->cls_dir, sizeof(d->cls_dir), "%s", dir);
    } else if (strcmp(cls, d->cls)) {
        rc = util_error("'%s' is a sweep of node class %s, '%s' of %s: a calibration is one kind "
                        "of node's; calibrate each class on its own sweeps",
                        dir, cls, d->cls_dir, d->cls);
        goto out;
    }
    char *topology = json_dumps(json_object_get(meta, "topology"), JSON_COMPACT);
    struct topo *t = &d->topos[d->ntopos];
    topo_init(t);
    rc = topology ? topo_load_buffer(t, dir, topology, strlen(topology)) : -1;
    free(topology);
    if (rc) {
        topo_release(t);
        rc = util_error("'%s/sweep.json': its topology cannot be read", dir);
        goto out;
    }
    d->ntopos++;
    int nodes = (int)json_integer_value(json_object_get(meta, "nodes")), left[LEFT_N] = {0};
    json_t *by_config = json_object(), *r;
    size_t i;
    json_array_foreach(results, i, r) {
        if (!json_is_true(json_object_get(r, "final")) ||
            strcmp(json_string_value(json_object_get(r, "outcome")), "ok"))
            continue;
        int m = model_of(d, t, dir, r, nodes, by_config, left);
        if (m < 0)
            continue;
        size_t j;
        json_t *s;
        json_array_foreach(json_object_get(r, "sizes"), j, s) {
            json_t *busbw = json_object_get(s, "busbw");
            if (json_is_number(busbw) && json_number_value(busbw) > 0)
                add_point(d, m, (size_t)json_integer_value(json_object_get(s, "size")),
                          json_number_value(busbw));
        }
    }
    json_decref(by_config);
    warn_left(dir, t, left);
    rc = 0;
out:
    json_decref(meta);
    json_decref(results);
    return rc ? 2 : 0;
}

/* The real path of out's directory, and out's last component in base (a new string to free, or
 * NULL when that directory does not resolve). */
static char *out_dir(const char *out, const char **base)
{
    const char *slash = strrchr(out, '/');
    *base = slash ? slash + 1 : out;
    char *dir =
        slash ? util_xstrndup(out, (size_t)(slash - out) + (slash == out)) : util_xstrdup(".");
    char *real = dir ? realpath(dir, NULL) : NULL;
    free(dir);
    return real;
}

/* A sweep given twice would count each of its points twice (and pass the check for too few
 * points on half of them); --out naming one of a sweep's own files would replace it with the
 * calibration. 0, or 2 after an error naming them. */
static int check_paths(const char **dirs, int n, const char *out)
{
    static const char *const own[] = {"sweep.json", "results.jsonl", "sweep.pid"};
    char *real[64] = {0};
    const char *base;
    char *odir = out_dir(out, &base);
    int rc = 0;
    for (int i = 0; i < n && i < 64; i++)
        real[i] = realpath(dirs[i], NULL);
    for (int i = 0; !rc && i < n && i < 64; i++) {
        for (int j = 0; !rc && j < i; j++)
            if (real[i] && real[j] && !strcmp(real[i], real[j]))
                rc = (util_error("--runs '%s' and '%s' are the same sweep: give each sweep once",
                                 dirs[j], dirs[i]),
                      2);
        for (size_t k = 0; !rc && odir && real[i] && k < sizeof(own) / sizeof(own[0]); k++)
            if (!strcmp(odir, real[i]) && !strcmp(base, own[k]))
                rc =
                    (util_error("--out '%s' is the sweep's own %s: name another file", out, own[k]),
                     2);
    }
    for (int i = 0; i < n && i < 64; i++)
        free(real[i]);
    free(odir);
    return rc;
}

/* "mean |error| M%, median D%, max X%", readable however large the numbers (a damaged result
 * makes them astronomical). */
static void print_errors(const char *mean_label, double mean, double med, double max)
{
    const double v[3] = {mean, med, max};
    const char *label[3] = {mean_label, ", median ", ", max "};
    struct util_buf b = UTIL_BUF_INIT;
    for (int i = 0; i < 3; i++) {
        util_buf_reset(&b);
        /* as people write numbers: never 1.2e+05; an astronomical error (a damaged result) is
         * said as such, not in 300 digits */
        if (fabs(v[i]) < 1e6)
            util_text_fixed(&b, v[i], 1);
        else
            util_buf_adds(&b, v[i] < 0 ? "below -1,000,000" : "over 1,000,000");
        printf("%s%s%%", label[i], util_buf_str(&b));
    }
    util_buf_release(&b);
}

/* A parameter's value as people write it, with 4 significant digits. */
static const char *number(struct util_buf *b, double v)
{
    util_buf_reset(b);
    util_text_number(b, v, 4);
    return util_buf_str(b);
}

/* The parameters, one a line, each with how the runs settled it. */
static void print_params(const struct model_fit *f)
{
    struct model_params p = f->params;
    struct util_buf a = UTIL_BUF_INIT, b = UTIL_BUF_INIT, c = UTIL_BUF_INIT;
    for (int k = 0; k < MODEL_NPARAMS; k++) {
        printf("  %-15s %12s", model_param_names[k], number(&a, *model_param(&p, k)));
        if (f->kind[k] == MODEL_FIT_DEFAULT)
            printf("  (not determined by these runs: the default)");
        else if (f->kind[k] == MODEL_FIT_BOUNDED)
            printf("  (bounded, not determined: %s to %s fit as well; the default, %s, fits "
                   "worse)",
                   number(&a, f->lo[k]), number(&b, f->hi[k]),
                   number(&c, *model_param((struct model_params *)&model_params_default, k)));
        printf("\n");
    }
    util_buf_release(&a);
    util_buf_release(&b);
    util_buf_release(&c);
}

/* Runs mostly below the band healthy systems of their hardware measure (the model's defaults):
 * a degraded node's or link's, which a calibration absorbs (halved busbw fitted nvls_scale 0.4,
 * lat_scale 4), then predicting that system for every later question. Said, not refused: a
 * slower system may be the one the user owns. */
static void warn_below_band(struct fit_data *d, const struct model_point *pts, int npts)
{
    int below = 0, n = 0;
    for (int i = 0; i < npts; i++) {
        struct model *m = &d->models[pts[i].model];
        struct model_prediction pr;
        m->params = model_params_default;
        if (pts[i].busbw <= 0 || model_predict(m, pts[i].bytes, &pr) || !(pr.busbw > 0))
            continue;
        n++;
        below += pts[i].busbw < pr.busbw * model_band_at(pts[i].bytes).low;
    }
    if (n && 2 * below > n)
        util_warning("%d of the %d measured points are below the band where healthy systems of "
                     "this hardware measure (the model's defaults): the runs look like a degraded "
                     "system's, and a calibration from them predicts that system; check the nodes "
                     "first (topotune check, topotune doctor)",
                     below, n);
}

/* The "fit" object of the file: the fit's error and the defaults' on the same points, and the
 * parameters the runs did not determine. */
static json_t *fit_json(const struct model_fit *f, int npts, double med, double max, double dmed,
                        double dmax)
{
    json_t *undetermined = json_array(), *bounded = json_object();
    for (int k = 0; k < MODEL_NPARAMS; k++)
        if (f->kind[k] == MODEL_FIT_DEFAULT)
            json_array_append_new(undetermined, json_string(model_param_names[k]));
        else if (f->kind[k] == MODEL_FIT_BOUNDED)
            json_object_set_new(bounded, model_param_names[k],
                                json_pack("[f,f]", f->lo[k], f->hi[k]));
    return json_pack("{s:i,s:f,s:f,s:f,s:o,s:o,s:{s:f,s:f,s:f}}", "points", npts,
                     "mean_abs_error_pct", f->error, "median_abs_error_pct", med,
                     "max_abs_error_pct", max, "undetermined", undetermined, "bounded", bounded,
                     "defaults", "mean_abs_error_pct", f->default_error, "median_abs_error_pct",
                     dmed, "max_abs_error_pct", dmax);
}

/* Which point the fit is furthest from, in words (into buf), so that a damaged result can be
 * found. */
static void name_worst(struct fit_data *d, const struct model_point *pts, int npts,
                       const struct model_params *p, char *buf, size_t len)
{
    int worst = -1;
    double worst_err = -1, worst_pred = 0;
    snprintf(buf, len, "no point could be predicted");
    for (int i = 0; i < npts; i++) {
        struct model *m = &d->models[pts[i].model];
        struct model_prediction pr;
        m->params = *p;
        if (model_predict(m, pts[i].bytes, &pr))
            continue;
        double e = fabs(pr.busbw - pts[i].busbw) / pts[i].busbw;
        if (!(e <= worst_err)) {
            worst = i;
            worst_err = e;
            worst_pred = pr.busbw;
        }
    }
    if (worst >= 0)
        snprintf(buf, len,
                 "the point furthest from it: '%s', configuration %s, %zu B: measured %.3g GB/s, "
                 "predicted %.3g GB/s",
                 d->dirs[pts[worst].model], d->ids[pts[worst].model], pts[worst].bytes,
                 pts[worst].busbw, worst_pred);
}

static int write_file(const char *out, json_t *doc)
{
    char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
    if (!text)
        return util_error("cannot write '%s': the calibration could not be built (out of memory?)",
                          out),
               1;
    struct util_buf b = UTIL_BUF_INIT;
    util_buf_addf(&b, "%s\n", text);
    free(text);
    int rc = util_file_write_atomic(out, b.data, b.len) ? 1 : 0; /* a write error: exit 1 */
    util_buf_release(&b);
    return rc;
}

static int report(struct fit_data *d, const char *out, size_t fit_max, const char **dirs, int ndirs)
{
    struct model_point *fit = util_xmalloc(sizeof(*fit) * (size_t)d->npts),
                       *held = util_xmalloc(sizeof(*held) * (size_t)d->npts);
    int nfit = 0, nheld = 0, rc = 0;
    json_t *doc = NULL;
    for (int i = 0; i < d->npts; i++) {
        if (fit_max && d->pts[i].bytes > fit_max)
            held[nheld++] = d->pts[i];
        else
            fit[nfit++] = d->pts[i];
    }
    struct model_fit f;
    char why[256];
    if (nfit) /* the fit's time grows with its points: a large one takes a minute, said first */
        util_info("calibrate: fitting %d point(s) of %d sweep(s)%s", nfit, ndirs,
                  nheld ? " (larger sizes held out)" : "");
    if (!nfit || model_fit(d->models, fit, nfit, &f)) {
        /* sweeps that never ran ok: the work failed (exit 1), as for a class without a run */
        rc =
            (util_error("no measured point to fit (final, ok runs with busbw) in the sweeps given"),
             1);
        goto done;
    }
    double med, max, dmed, dmax;
    model_fit_error(d->models, fit, nfit, &f.params, &med, &max);
    model_fit_error(d->models, fit, nfit, &model_params_default, &dmed, &dmax);
    printf("# calibration of the topotune model from %d measured point(s) of %d configuration(s)\n",
           nfit, d->nmodels);
    print_params(&f);
    print_errors("fit: mean |error| ", f.error, med, max);
    print_errors(" (predicted vs measured); the defaults: mean ", f.default_error, dmed, dmax);
    printf("\n");
    warn_below_band(d, fit, nfit);
    int usable = model_fit_check(&f, why, sizeof(why));
    if (usable == -2) {
        rc = (util_error("calibration not written to '%s': the runs are too few for this fit: %s",
                         out, why),
              1);
        goto done;
    }
    if (usable) {
        char worst[1024];
        name_worst(d, fit, nfit, &f.params, worst, sizeof(worst));
        util_error("calibration not written to '%s': the fit is not usable: %s; %s (check that "
                   "sweep's results, or keep the defaults)",
                   out, why, worst);
        rc = 1;
        goto done;
    }
    doc = json_pack("{s:s,s:s,s:s,s:o,s:o}", "schema", "topotune/calibration/1", "version",
                    util_version(), "model", MODEL_VERSION, "params", model_params_json(&f.params),
                    "fit", fit_json(&f, nfit, med, max, dmed, dmax));
    if (nheld) {
        double hmed, hmax, hmean = model_fit_error(d->models, held, nheld, &f.params, &hmed, &hmax);
        double dhmean = model_fit_error(d->models, held, nheld, &model_params_default, NULL, NULL);
        printf("held out (sizes above %zu B, not fitted): %d point(s), ", fit_max, nheld);
        print_errors("predicted with the fit: mean |error| ", hmean, hmed, hmax);
        printf(fabs(dhmean) < 1e5 ? "; with the defaults: mean %.1f%%\n"
                                  : "; with the defaults: mean %.3g%%\n",
               dhmean);
        /* A damaged result among the larger sizes makes the check meaningless. */
        if (!isfinite(hmean) || !isfinite(hmax) || !isfinite(dhmean) ||
            hmean > MODEL_FIT_ERROR_MAX) {
            char worst[1024];
            name_worst(d, held, nheld, &f.params, worst, sizeof(worst));
            util_error(
                "calibration not written to '%s': the fit predicts the sizes above --fit-max "
                "with a mean |error| of %.3g%%; %s (check that sweep's results)",
                out, hmean, worst);
            rc = 1;
            goto done;
        }
        json_object_set_new(doc, "held_out",
                            json_pack("{s:I,s:i,s:f,s:f,s:f,s:f}", "above_bytes",
                                      (json_int_t)fit_max, "points", nheld, "mean_abs_error_pct",
                                      hmean, "median_abs_error_pct", hmed, "max_abs_error_pct",
                                      hmax, "defaults_mean_abs_error_pct", dhmean));
    }
    json_t *src = json_array();
    for (int i = 0; i < ndirs; i++)
        json_array_append_new(src, json_string(dirs[i]));
    json_object_set_new(doc, "sweeps", src);
    rc = write_file(out, doc);
    if (!rc)
        printf("wrote %s: use it with --calibration (predict, compare, sweep --backend sim, "
               "topotune-bench --backend sim)\n",
               out);
done:
    json_decref(doc);
    free(fit);
    free(held);
    return rc;
}

int cmd_calibrate(int argc, char **argv)
{
    struct util_opt_list runs = {0};
    const char *out = NULL;
    size_t fit_max = 0;
    const struct util_opt opts[] = {
        {"runs", 0, UTIL_OPT_LIST, &runs, "DIR", "a measured sweep directory (repeatable)"},
        {"out", 'o', UTIL_OPT_STRING, &out, "FILE", "the calibration file to write (required)"},
        {"fit-max", 0, UTIL_OPT_SIZE, &fit_max, "SIZE",
         "fit sizes up to SIZE only, and print the error on the larger ones", .min = 1,
         .max = 1099511627776.0},
        {0},
    };
    const struct util_opts_cmd cmd = {
        "topotune calibrate",
        "--runs SWEEPDIR [--runs SWEEPDIR]... --out FILE [--fit-max SIZE]\n\n"
        "Fits the model's parameters (nvls_scale, fill_bytes, net_scale, lat_scale,\n"
        "net_lat_scale, efa_lat_us, p2p_scale, nvls_fill_bytes, ring_net_scale; see\n"
        "docs/model.md) to the "
        "final ok runs of "
        "measured\n"
        "sweeps (nccl backend, or sim) of one kind of node, and writes a calibration file\n"
        "(topotune/calibration/1) that predict, compare, sweep and topotune-bench (sim\n"
        "backend) read.\n"
        "A parameter the runs do not determine keeps its default and is named, when the fit\n"
        "stays as good with it; the defaults' error is printed beside the fit's. A fit worse\n"
        "than the defaults, with an error that is not finite or above 100%, or with a\n"
        "parameter out of range is not written (exit 1), nor one from too few runs (3 sizes\n"
        "and 3 points for each parameter it settles).",
        opts, 0, 0};
    int npos = 0, status, rc = 0;
    if (cli_parse(&cmd, argc, argv, &npos, &status))
        return status;
    if (!runs.n || !out)
        return util_error("topotune calibrate needs --runs SWEEPDIR (one or more) and --out FILE"),
               2;
    if (check_paths(runs.items, runs.n, out))
        return 2;
    struct fit_data *d = util_xcalloc(1, sizeof(*d));
    for (int i = 0; !rc && i < runs.n; i++)
        rc = load_runs(d, runs.items[i]);
    if (!rc)
        rc = report(d, out, fit_max, runs.items, runs.n);
    for (int i = 0; i < d->nmodels; i++) {
        json_decref(d->envs[i]);
        free(d->ids[i]);
    }
    for (int i = 0; i < d->ntopos; i++)
        topo_release(&d->topos[i]);
    free(d->pts);
    free(d);
    return rc;
}
