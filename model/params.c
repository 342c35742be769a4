/* SPDX-License-Identifier: MIT */
/*
 * The model's calibrated parameters and calibration files (schema topotune/calibration/1). The
 * defaults are the fit of bench/perf/calibrate-model.py to the published measurements of
 * bench/perf/calibration/published.json (docs/model.md, "Calibration"), and p2p_scale's of
 * bench/perf/calibrate-collectives.py to published-collectives.json; NCCL's own constants are
 * {1, 0, 1, 1, 1, 0, 1, 0, 1}.
 */
#include "model/model.h"
#include "util/buf.h"
#include "util/text.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const struct model_params model_params_default = {
    .nvls_scale = 0.8,
    .fill_bytes = 0,
    .net_scale = 0.85,
    .lat_scale = 2.0,
    .net_lat_scale = 1.5,
    .efa_lat_us = 60,
    .p2p_scale = 0.88,
    .nvls_fill_bytes = 64 << 20,
    .ring_net_scale = 0.9,
};

/* The leave-one-source-out band of bench/perf/calibrate-model.py at the defaults' calibration
 * (docs/model.md, "Bands"): the published value over the prediction, its 5% and 95% quantiles. */
static const struct model_band band_small = {0.484, 2.864, 31}, band_large = {0.822, 1.244, 163};
/* The same of bench/perf/calibrate-collectives.py: NCCL's chains (broadcast, reduce), the rest. */
static const struct model_band chain_small = {0.441, 3.695, 34}, chain_large = {0.824, 2.355, 73};
static const struct model_band other_small = {0.443, 2.312, 62}, other_large = {0.460, 1.929, 157};

struct model_band model_band_at(size_t bytes)
{
    return bytes <= MODEL_BAND_SMALL ? band_small : band_large;
}

struct model_band model_band_wider(struct model_band a, struct model_band b)
{
    return (struct model_band){fmin(a.low, b.low), fmax(a.high, b.high), a.rows + b.rows};
}

struct model_band model_band_for(int coll, size_t bytes)
{
    int small = bytes <= MODEL_BAND_SMALL;
    switch (coll) {
    case MODEL_ALL_REDUCE:
        return model_band_at(bytes);
    case MODEL_BROADCAST:
    case MODEL_REDUCE:
        return small ? chain_small : chain_large;
    case MODEL_ALL_GATHER:
    case MODEL_REDUCE_SCATTER:
    case MODEL_ALLTOALL:
    case MODEL_SENDRECV:
        return small ? other_small : other_large;
    default: /* a collective the model does not know: both */
        return small ? model_band_wider(chain_small, other_small)
                     : model_band_wider(chain_large, other_large);
    }
}

/* What a calibration file may set, in model_param_names' order: wide enough for any system,
 * narrow enough that a number outside is a mistake or an attack. */
static const double ranges[MODEL_NPARAMS][2] = {
    {0.2, 1.5}, /* nvls_scale */
    {0, 1e10},  /* fill_bytes */
    {0.2, 1.5}, /* net_scale */
    {0.2, 10},  /* lat_scale */
    {0.2, 10},  /* net_lat_scale */
    {0, 1000},  /* efa_lat_us */
    {0.2, 1.5}, /* p2p_scale */
    {0, 1e10},  /* nvls_fill_bytes */
    {0.2, 1.5}, /* ring_net_scale */
};

void model_param_range(int k, double *min, double *max)
{
    *min = ranges[k][0];
    *max = ranges[k][1];
}

static int field(const char *path, json_t *params, int k, struct model_params *p)
{
    json_t *v = json_object_get(params, model_param_names[k]);
    if (!v)
        return 0;
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if (!(x >= ranges[k][0] && x <= ranges[k][1])) {
        struct util_buf lo = UTIL_BUF_INIT, hi = UTIL_BUF_INIT; /* "10,000,000,000", not 1e+10 */
        util_text_number(&lo, ranges[k][0], 6);
        util_text_number(&hi, ranges[k][1], 6);
        util_error("%s: params.%s: a number from %s to %s (schema topotune/calibration/1)", path,
                   model_param_names[k], util_buf_str(&lo), util_buf_str(&hi));
        util_buf_release(&lo);
        util_buf_release(&hi);
        return -1;
    }
    *model_param(p, k) = x;
    return 0;
}

json_t *model_params_json(const struct model_params *p)
{
    json_t *o = json_object();
    struct model_params q = *p;
    for (int k = 0; o && k < MODEL_NPARAMS; k++)
        if (json_object_set_new(o, model_param_names[k], json_real(*model_param(&q, k))))
            return json_decref(o), NULL;
    return o;
}

/* A parameter may mean another thing in another version of the model (v2's lat_scale scaled the
 * network's hops too): a file fitted for another one is read, with a warning to fit it again,
 * unless it is one of the versions whose parameters mean the same (model.h, MODEL_PARAMS_SINCE). */
static void check_version(const char *path, const json_t *version)
{
    const char *model = json_is_string(version) ? json_string_value(version) : "";
    for (int v = MODEL_PARAMS_SINCE; version && v <= MODEL_VERSION_NUMBER; v++) {
        char same[32];
        snprintf(same, sizeof(same), "topotune-model/%d", v);
        if (!strcmp(model, same))
            return;
    }
    if (!version)
        return;
    int plain = model[0] && strlen(model) <= 40;
    for (const char *c = model; plain && *c; c++)
        plain = isalnum((unsigned char)*c) || strchr("-/._", *c);
    util_warning("%s: fitted for %s, read by %s: its parameters may not mean the same here; run "
                 "'topotune calibrate' again on the same sweeps",
                 path, plain ? model : "another model", MODEL_VERSION);
}

int model_params_load(struct model_params *p, const char *path)
{
    struct util_buf text = UTIL_BUF_INIT;
    const char *why = NULL;
    *p = model_params_default;
    /* a path the user named (or a sweep passed on): a link is followed, a FIFO refused */
    if (util_file_read_input(path, 1, 1 << 20, &text, &why)) {
        util_buf_release(&text);
        return util_error("cannot read calibration file '%s': %s", path, why ? why : "?"), -1;
    }
    json_error_t jerr;
    json_t *doc = json_loadb(util_buf_str(&text), text.len, JSON_REJECT_DUPLICATES, &jerr);
    size_t len = text.len;
    util_buf_release(&text);
    json_t *params = json_object_get(doc, "params");
    int rc = 0;
    if (!len) /* jansson calls an empty buffer "wrong arguments" */
        rc = util_error("%s: the file is empty: a calibration is the JSON object `topotune "
                        "calibrate --out` writes",
                        path);
    else if (!doc)
        rc = util_error("%s: line %d: %s", path, jerr.line, jerr.text);
    else if (!json_is_string(json_object_get(doc, "schema")) ||
             strcmp(json_string_value(json_object_get(doc, "schema")), "topotune/calibration/1"))
        rc = util_error("%s: schema: \"topotune/calibration/1\" expected", path);
    else if (!json_is_object(params))
        rc = util_error("%s: params: an object of the model's parameters", path);
    const char *names[MODEL_NPARAMS + 1] = {NULL}, *unknown = NULL;
    for (int k = 0; k < MODEL_NPARAMS; k++)
        names[k] = model_param_names[k];
    /* a misspelt parameter would leave the default in place, unsaid */
    if (!rc && (unknown = util_json_unknown_key(params, names))) {
        struct util_buf shown = UTIL_BUF_INIT, list = UTIL_BUF_INIT;
        for (int k = 0; k < MODEL_NPARAMS; k++)
            util_buf_addf(&list, "%s%s", k ? ", " : "", names[k]);
        rc = util_error("%s: params.%s: not a parameter of the model (%s)", path,
                        util_text_shown(&shown, unknown), util_buf_str(&list));
        util_buf_release(&shown);
        util_buf_release(&list);
    }
    for (int k = 0; !rc && k < MODEL_NPARAMS; k++)
        rc = field(path, params, k, p);
    if (!rc)
        check_version(path, json_object_get(doc, "model"));
    json_decref(doc);
    return rc;
}
