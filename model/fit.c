/* SPDX-License-Identifier: MIT */
/*
 * Fitting the model's parameters to measurements: coordinate descent over a fine grid of each
 * parameter, least mean |relative error| of busbw. The objective is cheap (one model_predict per
 * point), so the whole fit takes well under a second for thousands of points.
 */
#include "model/model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double *model_param(struct model_params *p, int k)
{
    double *f[MODEL_NPARAMS] = {&p->nvls_scale, &p->fill_bytes,    &p->net_scale,
                                &p->lat_scale,  &p->net_lat_scale, &p->efa_lat_us};
    return f[k];
}

/* Each parameter's grid: within what a calibration file may set (model_params_load's ranges),
 * narrower where the wider values are not physical (latencies 0.25x to 5x NCCL's, EFA's hop up to
 * 200 us). */
static const double grid[MODEL_NPARAMS][3] = {
    {0.40, 1.20, 0.01},             /* nvls_scale */
    {0, 64.0 * (1 << 20), 1 << 18}, /* fill_bytes: 0 to 64 MiB by 256 KiB */
    {0.40, 1.20, 0.01},             /* net_scale */
    {0.25, 5.00, 0.05},             /* lat_scale */
    {0.25, 5.00, 0.05},             /* net_lat_scale */
    {0, 200, 1},                    /* efa_lat_us */
};

const char *const model_param_names[MODEL_NPARAMS] = {"nvls_scale", "fill_bytes",    "net_scale",
                                                      "lat_scale",  "net_lat_scale", "efa_lat_us"};

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double model_fit_error(struct model *models, const struct model_point *pts, int npts,
                       const struct model_params *p, double *median, double *max)
{
    double *e = malloc(sizeof(double) * (size_t)(npts ? npts : 1)), sum = 0;
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
    if (median || max) {
        qsort(e, (size_t)n, sizeof(double), by_value);
        if (median)
            *median = n ? (n % 2 ? e[n / 2] : (e[n / 2 - 1] + e[n / 2]) / 2) : 0;
        if (max)
            *max = n ? e[n - 1] : 0;
    }
    free(e);
    return n ? sum / n : -1;
}

int model_fit(struct model *models, const struct model_point *pts, int npts,
              struct model_params *out, int determined[MODEL_NPARAMS])
{
    struct model_params p = model_params_default;
    double best = model_fit_error(models, pts, npts, &p, NULL, NULL);
    if (best < 0)
        return -1;
    for (int round = 0, moved = 1; moved && round < 10; round++) {
        moved = 0;
        for (int k = 0; k < MODEL_NPARAMS; k++) {
            struct model_params q = p;
            double keep = *model_param(&p, k);
            for (double v = grid[k][0]; v <= grid[k][1] + 1e-9; v += grid[k][2]) {
                *model_param(&q, k) = v;
                double err = model_fit_error(models, pts, npts, &q, NULL, NULL);
                if (err >= 0 && err < best - 1e-9) {
                    best = err;
                    keep = v;
                    moved = 1;
                }
            }
            *model_param(&p, k) = keep;
        }
    }
    /* A parameter the points do not determine (moving it a tenth changes nothing that counts)
     * goes back to its default: no number is made up. */
    for (int k = 0; k < MODEL_NPARAMS; k++) {
        struct model_params lo = p, hi = p;
        double v = *model_param(&p, k), d = fmax(fabs(v) * 0.1, grid[k][2] * 4);
        *model_param(&lo, k) = fmax(grid[k][0], v - d);
        *model_param(&hi, k) = fmin(grid[k][1], v + d);
        double e_lo = model_fit_error(models, pts, npts, &lo, NULL, NULL);
        double e_hi = model_fit_error(models, pts, npts, &hi, NULL, NULL);
        determined[k] = fabs(e_lo - best) > 0.05 || fabs(e_hi - best) > 0.05;
        if (!determined[k])
            *model_param(&p, k) = *model_param((struct model_params *)&model_params_default, k);
    }
    *out = p;
    return 0;
}
