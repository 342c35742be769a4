/* SPDX-License-Identifier: MIT */
/* Kubernetes: each node's class, profile and health as labels; a taint on what a survey names. */
#include "ops/internal.h"
#include "ops/ops.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/text.h"

#include <stdlib.h>
#include <string.h>

static int alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

void ops_k8s_label_value(const char *s, char out[64])
{
    char v[64];
    size_t n = 0, len = s ? strlen(s) : 0;
    for (size_t i = 0; i < len && n < 63; i++) {
        if (len > 63 && i == 54) { /* the first 54, '-', the last 8 */
            v[n++] = '-';
            i = len - 8;
        }
        char c = s[i];
        v[n++] = alnum(c) || c == '.' || c == '_' || c == '-' ? c : '-';
    }
    v[n] = '\0';
    size_t from = 0;
    while (from < n && !alnum(v[from]))
        from++;
    while (n > from && !alnum(v[n - 1]))
        n--;
    v[n] = '\0';
    snprintf(out, 64, "%s", v + from);
}

static json_t *action(const char *node, const char *verb, json_t *args)
{
    return json_pack("{s:s,s:s,s:o}", "node", node, "verb", verb, "args", args);
}

/* The kind of the first verdict naming host (any kind), or NULL; *drains when one drains. */
static const char *verdict_of(const json_t *survey, const char *host, int *drains)
{
    const char *first = NULL;
    size_t i, j;
    json_t *v, *h;
    *drains = 0;
    json_array_foreach(json_object_get(survey, "verdicts"), i, v) {
        json_array_foreach(json_object_get(v, "hosts"), j, h) {
            /* a verdict of no known kind still names its host, as for Slurm */
            const char *kind = json_string_value(json_object_get(v, "kind"));
            kind = kind ? kind : "unknown";
            if (!json_is_string(h) || strcmp(json_string_value(h), host))
                continue;
            first = first ? first : kind;
            if (!*drains && ops_drains(kind)) {
                *drains = 1;
                first = kind; /* the reason a pod is kept off */
            }
        }
    }
    return first;
}

json_t *ops_k8s_plan(const json_t *survey, const json_t *versions, json_t **notes)
{
    json_t *actions = json_array(), *n;
    *notes = json_array();
    size_t i;
    json_array_foreach(json_object_get(survey, "nodes"), i, n) {
        const char *host = json_string_value(json_object_get(n, "host"));
        const char *cls = json_string_value(json_object_get(n, "class"));
        if (!host)
            continue;
        if (!ops_valid_k8s_node(host)) { /* kubectl would refuse it: "gpu_x" or "Node1" */
            struct util_buf shown = UTIL_BUF_INIT;
            json_array_append_new(*notes, json_sprintf("'%s': not a node name kubectl takes as one "
                                                       "node: skipped",
                                                       util_text_shown(&shown, host)));
            util_buf_release(&shown);
            continue;
        }
        int drains;
        const char *kind = verdict_of(survey, host, &drains);
        char value[64];
        struct util_buf b = UTIL_BUF_INIT;
        json_t *args = json_array();
        if (cls) {
            ops_k8s_label_value(cls, value);
            util_buf_addf(&b, OPS_K8S_PREFIX "class=%s", value);
            json_array_append_new(args, json_string(util_buf_str(&b)));
            const char *version = json_string_value(json_object_get(versions, cls));
            if (version) {
                ops_k8s_label_value(version, value);
                util_buf_reset(&b);
                util_buf_addf(&b, OPS_K8S_PREFIX "profile=%s", value);
                json_array_append_new(args, json_string(util_buf_str(&b)));
            }
        }
        ops_k8s_label_value(kind ? kind : "healthy", value);
        util_buf_reset(&b);
        util_buf_addf(&b, OPS_K8S_PREFIX "health=%s", value);
        json_array_append_new(args, json_string(util_buf_str(&b)));
        json_array_append_new(args, json_string("--overwrite"));
        json_array_append_new(actions, action(host, "label", args));
        util_buf_reset(&b);
        if (drains) {
            util_buf_addf(&b, OPS_K8S_PREFIX "unhealthy=%s:NoSchedule", value);
            json_array_append_new(
                actions,
                action(host, "taint", json_pack("[s,s]", util_buf_str(&b), "--overwrite")));
        } else if (!kind || json_is_true(json_object_get(n, "healthy"))) {
            /* no verdict, or one about what the node shares (the class's fabric, a path) that
             * leaves it healthy: an earlier survey's taint goes */
            json_array_append_new(
                actions,
                action(host, "untaint", json_pack("[s]", OPS_K8S_PREFIX "unhealthy:NoSchedule-")));
        }
        util_buf_release(&b);
    }
    return actions;
}

int ops_k8s_act(const json_t *actions, int apply, FILE *out, const char *log_path, double timeout_s)
{
    int rc = 0;
    size_t i;
    json_t *a;
    json_array_foreach(actions, i, a) {
        char log[4200];
        const char *verb = json_string_value(json_object_get(a, "verb"));
        const json_t *args = json_object_get(a, "args");
        size_t n = json_array_size(args);
        char **argv = util_xcalloc(n + 6, sizeof(char *));
        size_t k = 0;
        argv[k++] = "kubectl";
        argv[k++] = !strcmp(verb, "label") ? "label" : "taint";
        argv[k++] = "node";
        for (size_t j = 0; j < n; j++) /* its options first, then "--": nothing after is one */
            if (!strncmp(json_string_value(json_array_get(args, j)), "--", 2))
                argv[k++] = (char *)json_string_value(json_array_get(args, j));
        argv[k++] = "--";
        const char *node = json_string_value(json_object_get(a, "node"));
        argv[k++] = (char *)node;
        for (size_t j = 0; j < n; j++)
            if (strncmp(json_string_value(json_array_get(args, j)), "--", 2))
                argv[k++] = (char *)json_string_value(json_array_get(args, j));
        struct util_buf line = UTIL_BUF_INIT, failed = UTIL_BUF_INIT;
        for (int w = 0; argv[w]; w++) {
            util_buf_adds(&line, w ? " " : "");
            ops_add_word(&line, argv[w]);
        }
        fprintf(out, "%s\n", util_buf_str(&line));
        fflush(out);
        /* removing a taint the node does not have is what was wanted */
        if (apply && ops_run(argv, NULL, ops_log_of(log, log_path, i), timeout_s, &failed) &&
            !(!strcmp(verb, "untaint") && strstr(util_buf_str(&failed), "not found"))) {
            util_error("node %s: %s", node, util_buf_str(&failed));
            rc = UTIL_EENV;
        }
        util_buf_release(&line);
        util_buf_release(&failed);
        free(argv);
    }
    return rc;
}
