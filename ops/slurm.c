/* SPDX-License-Identifier: MIT */
/* Slurm: drain what a survey names, resume what topotune drained and a later survey clears. */
#include "ops/internal.h"
#include "ops/ops.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/quote.h"
#include "util/text.h"

#include <stdlib.h>
#include <string.h>

int ops_drains(const char *kind)
{
    static const char *const draining[] = {"node-unreachable", "node-differs", "node-fails",
                                           "node-slow",        "link-fails",   "link-slow",
                                           "check-fails"};
    for (size_t i = 0; kind && i < sizeof(draining) / sizeof(draining[0]); i++)
        if (!strcmp(kind, draining[i]))
            return 1;
    return 0;
}

json_t *ops_slurm_nodes(const char *out_path, const char *log_path, double timeout_s,
                        struct util_buf *why)
{
    char *argv[] = {"sinfo", "-h", "-N", "-o", "%N|%T|%E", NULL};
    if (ops_run(argv, out_path, log_path, timeout_s, why))
        return NULL;
    struct util_buf text = UTIL_BUF_INIT;
    const char *what = NULL;
    if (util_file_read_regular(out_path, 64 << 20, &text, &what))
        return util_buf_addf(why, "cannot read sinfo's answer '%s': %s", out_path,
                             what ? what : "?"),
               util_buf_release(&text), NULL;
    json_t *nodes = json_object();
    for (char *line = text.data, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        /* NAME|STATE|REASON: a node name and a state hold no '|', a reason may */
        char *state = strchr(line, '|'), *reason = state ? strchr(state + 1, '|') : NULL;
        if (!reason || state == line)
            continue;
        *state++ = '\0';
        *reason++ = '\0';
        if (!json_object_get(nodes, line))
            json_object_set_new(nodes, line,
                                json_pack("{s:s,s:s}", "state", state, "reason",
                                          strcmp(reason, "none") ? reason : ""));
    }
    util_buf_release(&text);
    return nodes;
}

/* 1 when Slurm shows the node drained (or draining) by topotune, and nothing else: a node also
 * down, failing or not responding ("drained*") is not resumed (resume would bring it back). */
static int drained_by_us(const json_t *node)
{
    const char *state = json_string_value(json_object_get(node, "state"));
    const char *reason = json_string_value(json_object_get(node, "reason"));
    return state && reason && (!strcmp(state, "drained") || !strcmp(state, "draining")) &&
           !strncmp(reason, OPS_REASON_PREFIX, strlen(OPS_REASON_PREFIX));
}

/* 1 when the node is out of service for someone else's reason: a state an administrator or
 * Slurm set (down, fail, maint, reboot, drain, ... with any of sinfo's flag suffixes), or a reason
 * not topotune's. Draining it over replaces that reason, and a later clean survey would resume
 * what was never topotune's to resume. */
static int held_by_others(const json_t *node)
{
    static const char *const held[] = {"down",  "fail",   "maint",   "reboot",
                                       "drain", "future", "unknown", "inval"};
    const char *state = json_string_value(json_object_get(node, "state"));
    const char *reason = json_string_value(json_object_get(node, "reason"));
    if (drained_by_us(node))
        return 0;
    for (size_t i = 0; state && i < sizeof(held) / sizeof(held[0]); i++)
        if (strstr(state, held[i]))
            return 1;
    return reason && *reason && strncmp(reason, OPS_REASON_PREFIX, strlen(OPS_REASON_PREFIX));
}

/* Appends s to b with every character outside the reason's set made '_': a reason is a word
 * of scontrol's command line and of sinfo's answer, so no quote, '|' or newline. */
static void add_safe(struct util_buf *b, const char *s)
{
    static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                              " ._:=,/+-";
    for (; s && *s; s++)
        util_buf_add(b, strchr(set, *s) ? s : "_", 1);
}

/* "topotune: KIND key=value ...": the verdict's numbers and short words, cut at the limit; a
 * simulated survey's numbers are the model's, and say so. */
static char *reason_of(const json_t *verdict, int predicted)
{
    struct util_buf b = UTIL_BUF_INIT;
    util_buf_adds(&b, OPS_REASON_PREFIX " ");
    add_safe(&b, json_string_value(json_object_get(verdict, "kind")));
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)json_object_get(verdict, "evidence"), key, v) {
        if (json_is_number(v)) {
            util_buf_adds(&b, " ");
            add_safe(&b, key);
            util_buf_addf(&b, "=%.3g", json_number_value(v));
        } else if (json_is_string(v) && strlen(json_string_value(v)) <= 120) {
            util_buf_adds(&b, " ");
            add_safe(&b, key);
            util_buf_adds(&b, "=");
            add_safe(&b, json_string_value(v));
        }
    }
    /* the marker after the cut, never cut itself: a long reason read as measured in sinfo -R */
    static const char mark[] = " (predicted)";
    size_t max = OPS_REASON_MAX - (predicted ? strlen(mark) : 0);
    if (b.len > max) {
        b.len = max;
        b.data[b.len] = '\0';
    }
    if (predicted)
        util_buf_adds(&b, mark);
    return util_buf_detach(&b);
}

static int by_node(const void *a, const void *b)
{
    const char *x = json_string_value(json_object_get(*(json_t *const *)a, "node"));
    const char *y = json_string_value(json_object_get(*(json_t *const *)b, "node"));
    return strcmp(x, y);
}

/* The actions in host order, whatever order the verdicts came in. */
static json_t *sorted(json_t *actions)
{
    size_t n = json_array_size(actions);
    json_t **items = util_xmalloc(sizeof(json_t *) * (n + 1));
    for (size_t i = 0; i < n; i++)
        items[i] = json_incref(json_array_get(actions, i));
    qsort(items, n, sizeof(json_t *), by_node);
    json_t *out = json_array();
    for (size_t i = 0; i < n; i++)
        json_array_append_new(out, items[i]);
    free(items);
    json_decref(actions);
    return out;
}

/* The drain of host for verdict, unless Slurm shows it drained for another reason or not at all. */
static void plan_drain(const char *host, const json_t *verdict, int predicted, const json_t *slurm,
                       json_t *drains, json_t *notes)
{
    const json_t *node = slurm ? json_object_get(slurm, host) : NULL;
    const char *state = json_string_value(json_object_get(node, "state"));
    const char *reason = json_string_value(json_object_get(node, "reason"));
    struct util_buf note = UTIL_BUF_INIT, shown = UTIL_BUF_INIT;
    int ours = reason && !strncmp(reason, OPS_REASON_PREFIX, strlen(OPS_REASON_PREFIX));
    if (slurm && !node)
        util_buf_addf(&note, "%s: not a node Slurm knows (sinfo does not list it): not drained",
                      host);
    else if (node && ours && held_by_others(node)) /* topotune's drain, and down or silent now */
        util_buf_addf(&note, "%s: drained by topotune, and now %s in Slurm: left as it is", host,
                      util_text_shown(&shown, state ? state : "?"));
    else if (node && state && strstr(state, "drain") && held_by_others(node))
        util_buf_addf(&note, "%s: already drained by someone else (reason: %s): left as it is",
                      host, util_text_shown(&shown, reason));
    else if (node && held_by_others(node)) {
        util_buf_addf(&note, "%s: %s in Slurm", host, util_text_shown(&shown, state));
        util_buf_addf(&note,
                      " (reason: %s): someone else's, left as it is (neither drained nor "
                      "later resumed by topotune)",
                      util_text_shown(&shown, reason && *reason ? reason : "none"));
    }
    if (note.len)
        json_array_append_new(notes, json_string(util_buf_str(&note)));
    else {
        char *why = reason_of(verdict, predicted);
        json_object_set_new(
            drains, host,
            json_pack("{s:s,s:s,s:s}", "node", host, "state", "drain", "reason", why));
        free(why);
    }
    util_buf_release(&note);
    util_buf_release(&shown);
}

/* A node name that could mean more than one node (ALL, an option, a host list): said, skipped. */
static void note_invalid(json_t *notes, const char *name)
{
    struct util_buf shown = UTIL_BUF_INIT, line = UTIL_BUF_INIT;
    util_buf_addf(&line,
                  "'%s': not a node name scontrol and kubectl take as one node (a letter or "
                  "digit first, then letters, digits, '.', '_', '-'; not ALL): skipped",
                  util_text_shown(&shown, name));
    json_array_append_new(notes, json_string(util_buf_str(&line)));
    util_buf_release(&shown);
    util_buf_release(&line);
}

json_t *ops_slurm_plan(const json_t *survey, int drain, int resume, const json_t *slurm,
                       json_t **notes)
{
    json_t *named = json_object(), *drains = json_object(), *actions = json_array();
    *notes = json_array();
    size_t i;
    json_t *v, *h;
    json_array_foreach(json_object_get(survey, "verdicts"), i, v) {
        size_t j;
        json_array_foreach(json_object_get(v, "hosts"), j, h) {
            const char *host = json_string_value(h);
            if (!host)
                continue;
            json_object_set_new(named, host, json_true());
            if (!ops_valid_node(host)) {
                if (drain)
                    note_invalid(*notes, host);
                continue;
            }
            if (drain && ops_drains(json_string_value(json_object_get(v, "kind"))) &&
                !json_object_get(drains, host))
                plan_drain(host, v, json_is_true(json_object_get(survey, "predicted")), slurm,
                           drains, *notes);
        }
    }
    const char *host;
    json_object_foreach(drains, host, v)
        json_array_append(actions, v);
    json_t *n;
    json_array_foreach(resume ? json_object_get(survey, "nodes") : NULL, i, n) {
        const char *name = json_string_value(json_object_get(n, "host"));
        const json_t *node = name && slurm ? json_object_get(slurm, name) : NULL;
        if (name && !ops_valid_node(name))
            note_invalid(*notes, name);
        else if (name && !json_object_get(named, name) && node && drained_by_us(node))
            json_array_append_new(actions, json_pack("{s:s,s:s}", "node", name, "state", "resume"));
    }
    json_decref(named);
    json_decref(drains);
    return sorted(actions);
}

int ops_slurm_act(const json_t *actions, int apply, FILE *out, const char *log_path,
                  double timeout_s)
{
    int rc = 0;
    size_t i;
    json_t *a;
    json_array_foreach(actions, i, a) {
        char log[4200];
        struct util_buf node = UTIL_BUF_INIT, state = UTIL_BUF_INIT, reason = UTIL_BUF_INIT,
                        line = UTIL_BUF_INIT;
        const char *why = json_string_value(json_object_get(a, "reason"));
        util_buf_addf(&node, "nodename=%s", json_string_value(json_object_get(a, "node")));
        util_buf_addf(&state, "state=%s", json_string_value(json_object_get(a, "state")));
        if (why)
            util_buf_addf(&reason, "reason=%s", why);
        char *argv[] = {"scontrol", "update", node.data, state.data, why ? reason.data : NULL,
                        NULL};
        for (int k = 0; argv[k]; k++) {
            util_buf_adds(&line, k ? " " : "");
            ops_add_word(&line, argv[k]);
        }
        fprintf(out, "%s\n", util_buf_str(&line));
        fflush(out);
        struct util_buf failed = UTIL_BUF_INIT;
        if (apply && ops_run(argv, NULL, ops_log_of(log, log_path, i), timeout_s, &failed)) {
            util_error("%s: %s", util_buf_str(&node), util_buf_str(&failed));
            rc = UTIL_EENV;
        } else if (apply)
            util_info("%s %s: done", util_buf_str(&node), util_buf_str(&state));
        util_buf_release(&failed);
        util_buf_release(&node);
        util_buf_release(&state);
        util_buf_release(&reason);
        util_buf_release(&line);
    }
    return rc;
}

int ops_slurm_step(const json_t *survey, int drain, int resume, int apply, const char *dir,
                   FILE *out, double timeout_s)
{
    struct util_buf nodes = UTIL_BUF_INIT, log = UTIL_BUF_INIT, why = UTIL_BUF_INIT;
    util_buf_addf(&nodes, "%s/slurm-nodes.txt", dir);
    util_buf_addf(&log, "%s/slurm-nodes.log", dir);
    json_t *slurm = ops_slurm_nodes(util_buf_str(&nodes), util_buf_str(&log), timeout_s, &why);
    json_t *notes = NULL, *actions = NULL, *n;
    int rc = 0;
    if (!slurm && (apply || resume)) {
        util_error("cannot read Slurm's node states: %s", util_buf_str(&why));
        rc = UTIL_EENV;
    } else if (!slurm) {
        util_warning("cannot read Slurm's node states (%s): the drain of every node named is "
                     "printed, whatever Slurm shows",
                     util_buf_str(&why));
    }
    if (!rc) {
        actions = ops_slurm_plan(survey, drain, resume, slurm, &notes);
        size_t i;
        json_array_foreach(notes, i, n)
            util_info("%s", json_string_value(n));
        util_buf_reset(&log);
        util_buf_addf(&log, "%s/scontrol.log", dir);
        rc = ops_slurm_act(actions, apply, out, util_buf_str(&log), timeout_s);
        if (!rc && !json_array_size(actions))
            util_info("Slurm: nothing to %s", drain && resume ? "drain or resume"
                                              : drain         ? "drain"
                                                              : "resume");
    }
    json_decref(slurm);
    json_decref(notes);
    json_decref(actions);
    util_buf_release(&nodes);
    util_buf_release(&log);
    util_buf_release(&why);
    return rc;
}
