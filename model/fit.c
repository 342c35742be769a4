/* SPDX-License-Identifier: MIT */
/*
 * Fitting the model's parameters to measurements: coordinate descent over a fine grid of each
 * parameter, least mean |relative error| of busbw. The objective is cheap (one model_predict per
 * point), so the whole fit takes well under a second for thousands of points.
 */
#include "model/model.h"
#include "util/mem.h"
#include "util/num.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double *model_param(struct model_params *p, int k)
{
    double *f[MODEL_NPARAMS] = {&p->nvls_scale, &p->fill_bytes,      &p->net_scale,
                                &p->lat_scale,  &p->net_lat_scale,   &p->efa_lat_us,
                                &p->p2p_scale,  &p->nvls_fill_bytes, &p->ring_net_scale};
    return f[k];
}

/* Each parameter's grid: within what a calibration file may set (model_params_load's ranges),
 * narrower where the wider values are not physical (latencies 0.25x to 5x NCCL's, EFA's hop up to
 * 200 us). */
static const double grid[MODEL_NPARAMS][3] = {
    {0.40, 1.20, 0.01},              /* nvls_scale */
    {0, 64.0 * (1 << 20), 1 << 18},  /* fill_bytes: 0 to 64 MiB by 256 KiB */
    {0.40, 1.20, 0.01},              /* net_scale */
    {0.25, 5.00, 0.05},              /* lat_scale */
    {0.25, 5.00, 0.05},              /* net_lat_scale */
    {0, 200, 1},                     /* efa_lat_us */
    {0.40, 1.20, 0.01},              /* p2p_scale */
    {0, 256.0 * (1 << 20), 1 << 20}, /* nvls_fill_bytes: 0 to 256 MiB by 1 MiB */
    {0.40, 1.20, 0.01},              /* ring_net_scale */
};

const char *const model_param_names[MODEL_NPARAMS] = {
    "nvls_scale", "fill_bytes", "net_scale",       "lat_scale",     "net_lat_scale",
    "efa_lat_us", "p2p_scale",  "nvls_fill_bytes", "ring_net_scale"};

double model_fit_error(struct model *models, const struct model_point *pts, int npts,
                       const struct model_params *p, double *median, double *max)
{
    double *e = util_xmalloc(sizeof(double) * (size_t)(npts ? npts : 1)), sum = 0;
    int n = 0;
    for (int i = 0; i < npts; i++) {
        struct model *m = &models[pts[i].model];
        struct model_prediction pr;
        m->params = *p;
        if (pts[i].busbw <= 0 || model_predict(m, pts[i].bytes, &pr))
            continue;
        e[n] = fabs(pr.busbw - pts[i].busbw) / pts[i].busbw * 100;
        sum += e[n++];
    }
    /* sorted for the median and the largest only when asked: the descent asks thousands of
     * times for the mean alone, and sorting every time made most of a large fit's time */
    if (median || max) {
        double mid = util_median(e, n); /* sorts e */
        if (median)
            *median = mid;
        if (max)
            *max = n ? e[n - 1] : 0;
    }
    free(e);
    return n ? sum / n : -1;
}

/* Value i of parameter k's grid (computed, not accumulated: 1.5 is 1.5, not 1.4999999). */
static double grid_at(int k, int i)
{
    return grid[k][0] + i * grid[k][2];
}

static int grid_len(int k)
{
    return (int)floor((grid[k][1] - grid[k][0]) / grid[k][2] + 1e-6) + 1;
}

/* Coordinate descent from p: each parameter in turn to the grid value of least error, until a
 * round moves nothing. Returns the error of the p it leaves. */
static double descend(struct model *models, const struct model_point *pts, int npts,
                      struct model_params *p, double best)
{
    for (int round = 0, moved = 1; moved && round < 10; round++) {
        moved = 0;
        for (int k = 0; k < MODEL_NPARAMS; k++) {
            struct model_params q = *p;
            double keep = *model_param(p, k);
            for (int i = 0; i < grid_len(k); i++) {
                *model_param(&q, k) = grid_at(k, i);
                double err = model_fit_error(models, pts, npts, &q, NULL, NULL);
                if (err >= 0 && err < best - 1e-9) {
                    best = err;
                    keep = grid_at(k, i);
                    moved = 1;
                }
            }
            *model_param(p, k) = keep;
        }
    }
    return best;
}

/* The error of p with parameter k set to v. */
static double error_with(struct model *models, const struct model_point *pts, int npts,
                         const struct model_params *p, int k, double v)
{
    struct model_params q = *p;
    *model_param(&q, k) = v;
    return model_fit_error(models, pts, npts, &q, NULL, NULL);
}

/* The grid values around parameter k of p whose error stays within limit: fit->lo[k], hi[k]. */
static void flat_range(struct model *models, const struct model_point *pts, int npts,
                       const struct model_params *p, int k, double limit, struct model_fit *fit)
{
    double v = *model_param((struct model_params *)p, k);
    fit->lo[k] = fit->hi[k] = v;
    int at = (int)lround((v - grid[k][0]) / grid[k][2]);
    for (int i = at - 1; i >= 0; i--) {
        double e = error_with(models, pts, npts, p, k, grid_at(k, i));
        if (e < 0 || e > limit)
            break;
        fit->lo[k] = grid_at(k, i);
    }
    for (int i = at + 1; i < grid_len(k); i++) {
        double e = error_with(models, pts, npts, p, k, grid_at(k, i));
        if (e < 0 || e > limit)
            break;
        fit->hi[k] = grid_at(k, i);
    }
}

static int by_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static int count_sizes(const struct model_point *pts, int npts)
{
    size_t *b = util_xmalloc(sizeof(*b) * (size_t)(npts ? npts : 1));
    int n = 0;
    for (int i = 0; b && i < npts; i++)
        b[i] = pts[i].bytes;
    if (b)
        qsort(b, (size_t)npts, sizeof(*b), by_size);
    for (int i = 0; b && i < npts; i++)
        n += i == 0 || b[i] != b[i - 1];
    free(b);
    return n;
}

int model_fit(struct model *models, const struct model_point *pts, int npts, struct model_fit *fit)
{
    struct model_params p = model_params_default;
    memset(fit, 0, sizeof(*fit));
    fit->default_error = model_fit_error(models, pts, npts, &p, NULL, NULL);
    if (fit->default_error < 0)
        return -1;
    double best = descend(models, pts, npts, &p, fit->default_error);
    /* A parameter the points do not determine (moving it a tenth changes nothing that counts)
     * goes back to its default, so that no number is made up; but only when the whole vector
     * still fits as well: a parameter can sit on a flat stretch of the error (NVLS never chosen
     * anywhere from 0.4 to 0.6) that its default is far outside of. */
    double limit = fmin(best + MODEL_FIT_TOLERANCE, fit->default_error), cur = best;
    for (int k = 0; k < MODEL_NPARAMS; k++) {
        double v = *model_param(&p, k), d = fmax(fabs(v) * 0.1, grid[k][2] * 4);
        double e_lo = error_with(models, pts, npts, &p, k, fmax(grid[k][0], v - d));
        double e_hi = error_with(models, pts, npts, &p, k, fmin(grid[k][1], v + d));
        fit->kind[k] = MODEL_FIT_DETERMINED;
        if (fabs(e_lo - cur) > MODEL_FIT_TOLERANCE || fabs(e_hi - cur) > MODEL_FIT_TOLERANCE)
            continue;
        double dv = *model_param((struct model_params *)&model_params_default, k);
        double e_def = error_with(models, pts, npts, &p, k, dv);
        if (e_def >= 0 && e_def <= limit) {
            *model_param(&p, k) = dv;
            cur = e_def;
            fit->kind[k] = MODEL_FIT_DEFAULT;
        } else {
            fit->kind[k] = MODEL_FIT_BOUNDED;
            flat_range(models, pts, npts, &p, k, cur + MODEL_FIT_TOLERANCE, fit);
        }
    }
    fit->params = p;
    fit->error = model_fit_error(models, pts, npts, &p, NULL, NULL);
    fit->points = npts;
    fit->sizes = count_sizes(pts, npts);
    return 0;
}

int model_fit_check(const struct model_fit *fit, char *why, size_t len)
{
    struct model_params p = fit->params;
    for (int k = 0; k < MODEL_NPARAMS; k++) {
        double min, max, v = *model_param(&p, k);
        model_param_range(k, &min, &max);
        if (!(v >= min && v <= max)) {
            snprintf(why, len, "its %s (%g) is outside what a calibration file may hold (%g to %g)",
                     model_param_names[k], v, min, max);
            return -1;
        }
    }
    if (!isfinite(fit->error) || !isfinite(fit->default_error) || fit->error < 0) {
        snprintf(why, len, "its error is not a number (%g%%)", fit->error);
        return -1;
    }
    if (fit->error > MODEL_FIT_ERROR_MAX) {
        snprintf(why, len, "its mean |error| is %.3g%%: the model cannot explain these runs",
                 fit->error);
        return -1;
    }
    int settled = 0;
    for (int k = 0; k < MODEL_NPARAMS; k++)
        settled += fit->kind[k] != MODEL_FIT_DEFAULT;
    if (settled && fit->sizes < MODEL_FIT_SIZES_MIN) {
        snprintf(why, len,
                 "it settles %d parameter(s) from %d size(s): one size cannot tell latency, fill "
                 "and bandwidth apart (measure at least %d sizes)",
                 settled, fit->sizes, MODEL_FIT_SIZES_MIN);
        return -2;
    }
    if (fit->points < settled * MODEL_FIT_POINTS_PER_PARAM) {
        snprintf(why, len,
                 "it settles %d parameter(s) from %d point(s): at least %d are needed (%d a "
                 "parameter; measure more sizes or configurations)",
                 settled, fit->points, settled * MODEL_FIT_POINTS_PER_PARAM,
                 MODEL_FIT_POINTS_PER_PARAM);
        return -2;
    }
    if (fit->error > fit->default_error) {
        snprintf(why, len, "it fits worse than the defaults (mean |error| %.1f%% against %.1f%%)",
                 fit->error, fit->default_error);
        return -1;
    }
    return 0;
}
