/* SPDX-License-Identifier: MIT */
/* Prometheus' text exposition format, for node_exporter's textfile collector. */
#include "ops/ops.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

void ops_metrics_init(struct ops_metrics *m)
{
    m->families = json_object();
}

void ops_metrics_release(struct ops_metrics *m)
{
    json_decref(m->families);
    m->families = NULL;
}

/* A metric or label name as Prometheus spells them; anything else is the caller's bug. */
static int valid_name(const char *s)
{
    if (!s || !*s || (*s >= '0' && *s <= '9'))
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return 0;
    return 1;
}

/* A label value inside its double quotes: \\, \" and \n escaped, the rest as it is. */
static void add_value(struct util_buf *b, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            util_buf_addf(b, "\\%c", *s);
        else if (*s == '\n')
            util_buf_adds(b, "\\n");
        else
            util_buf_add(b, s, 1);
    }
}

void ops_metric(struct ops_metrics *m, const char *name, const char *type, const char *help,
                double value, ...)
{
    if (!valid_name(name)) {
        util_warning("metric name '%s' is not valid: left out", name ? name : "(null)");
        return;
    }
    struct util_buf labels = UTIL_BUF_INIT;
    va_list ap;
    va_start(ap, value);
    for (const char *k; (k = va_arg(ap, const char *));) {
        const char *v = va_arg(ap, const char *);
        if (!v || !*v || !valid_name(k))
            continue;
        util_buf_addf(&labels, "%s%s=\"", labels.len ? "," : "", k);
        add_value(&labels, v);
        util_buf_adds(&labels, "\"");
    }
    va_end(ap);
    json_t *f = json_object_get(m->families, name);
    if (!f) {
        f = json_pack("{s:s,s:s,s:o}", "help", help, "type", type, "samples", json_object());
        json_object_set_new(m->families, name, f);
    }
    /* JSON has no NaN or infinity: those are kept as the words Prometheus writes */
    json_object_set_new(json_object_get(f, "samples"), util_buf_str(&labels),
                        isnan(value)   ? json_string("NaN")
                        : isinf(value) ? json_string(value > 0 ? "+Inf" : "-Inf")
                                       : json_real(value));
    util_buf_release(&labels);
}

void ops_metrics_render(const struct ops_metrics *m, struct util_buf *out)
{
    const char *name, *labels;
    json_t *f, *v;
    json_object_foreach(m->families, name, f) {
        util_buf_addf(out, "# HELP %s ", name);
        for (const char *h = json_string_value(json_object_get(f, "help")); h && *h; h++)
            util_buf_adds(out, *h == '\\' ? "\\\\" : *h == '\n' ? "\\n" : (char[2]){*h, 0});
        util_buf_addf(out, "\n# TYPE %s %s\n", name, json_string_value(json_object_get(f, "type")));
        json_object_foreach(json_object_get(f, "samples"), labels, v) {
            util_buf_addf(out, *labels ? "%s{%s} " : "%s%s ", name, labels);
            if (json_is_string(v))
                util_buf_addf(out, "%s\n", json_string_value(v));
            else
                util_buf_addf(out, "%.10g\n", json_real_value(v));
        }
    }
}

int ops_metrics_write(const struct ops_metrics *m, const char *path)
{
    struct util_buf b = UTIL_BUF_INIT;
    ops_metrics_render(m, &b);
    int rc = 0;
    if (!strcmp(path, "-")) {
        if (fwrite(b.data ? b.data : "", 1, b.len, stdout) != b.len || fflush(stdout))
            rc = (util_error("cannot write the metrics to stdout"), UTIL_EIO);
    } else {
        rc = util_file_write_atomic(path, b.data ? b.data : "", b.len);
    }
    util_buf_release(&b);
    return rc;
}

/* Each node alone, its health and verdicts. */
static void survey_nodes(struct ops_metrics *m, const json_t *survey, const char *source,
                         const char *size)
{
    const char *backend = util_json_str(survey, "backend", "");
    size_t i;
    json_t *n;
    json_array_foreach(json_object_get(survey, "nodes"), i, n) {
        const char *host = json_string_value(json_object_get(n, "host"));
        const char *cls = json_string_value(json_object_get(n, "class"));
        double alone = json_number_value(json_object_get(n, "alone_busbw"));
        if (!host)
            continue;
        if (alone > 0)
            ops_metric(m, OPS_BUSBW, "gauge", OPS_BUSBW_HELP, alone * 1e9, "collective",
                       "all_reduce", "class", cls, "nodes", "1", "size", size, "source", source,
                       "backend", backend, "host", host, OPS_END);
        ops_metric(m, "topotune_survey_node_healthy", "gauge",
                   "1 when the last survey named no node or link verdict for the host",
                   json_is_true(json_object_get(n, "healthy")), "host", host, "class", cls,
                   OPS_END);
    }
    json_t *v, *h;
    json_array_foreach(json_object_get(survey, "verdicts"), i, v) {
        size_t j;
        const char *kind = json_string_value(json_object_get(v, "kind"));
        json_array_foreach(json_object_get(v, "hosts"), j, h)
            if (json_is_string(h)) /* a verdict of no known kind is "unknown", as for kubectl */
                ops_metric(m, "topotune_survey_verdict", "gauge",
                           "1 for each verdict the last survey gave a host (kind: node-slow, "
                           "link-slow, ...)",
                           1, "host", json_string_value(h), "kind", kind ? kind : "unknown",
                           OPS_END);
    }
}

/* Each class's band where the model gave one (GB/s in survey.json). */
static void survey_classes(struct ops_metrics *m, const json_t *survey, const char *size)
{
    static const char *const bounds[][2] = {{"alone_expected", "expected"},
                                            {"alone_expected_low", "low"},
                                            {"alone_expected_high", "high"}};
    const char *cls;
    json_t *c;
    json_object_foreach(json_object_get(survey, "classes"), cls, c) {
        for (size_t k = 0; k < sizeof(bounds) / sizeof(bounds[0]); k++) {
            json_t *x = json_object_get(c, bounds[k][0]);
            if (json_is_number(x))
                ops_metric(m, OPS_EXPECTED, "gauge", OPS_EXPECTED_HELP, json_number_value(x) * 1e9,
                           "collective", "all_reduce", "class", cls, "nodes", "1", "size", size,
                           "bound", bounds[k][1], "source", "predicted", OPS_END);
        }
    }
}

void ops_metrics_survey(struct ops_metrics *m, const json_t *survey)
{
    char size[32];
    snprintf(size, sizeof(size), "%.0f", json_number_value(json_object_get(survey, "size")));
    const char *source =
        json_is_true(json_object_get(survey, "predicted")) ? "predicted" : "measured";
    survey_nodes(m, survey, source, size);
    survey_classes(m, survey, size);
    const json_t *l = json_object_get(survey, "launches");
    ops_metric(m, "topotune_survey_launches", "gauge", "launches the last survey made",
               json_number_value(json_object_get(l, "total")), OPS_END);
    ops_metric(m, "topotune_survey_launches_failed", "gauge",
               "launches of the last survey that failed or hung",
               json_number_value(json_object_get(l, "failed")), OPS_END);
    ops_metric(m, "topotune_survey_verdicts", "gauge", "verdicts the last survey gave",
               (double)json_array_size(json_object_get(survey, "verdicts")), OPS_END);
    ops_metric(m, "topotune_survey_last_run_timestamp_seconds", "gauge",
               "when the last survey ended, in seconds since the epoch", (double)time(NULL),
               OPS_END);
}
