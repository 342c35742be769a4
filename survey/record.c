/* SPDX-License-Identifier: MIT */
/*
 * What a survey keeps in DIR between runs: its previous outputs, cleared when a survey starts,
 * and DIR/launches.jsonl, checked line by line before --resume replays it. The record is a file
 * anyone may have edited: every field is checked for its type, range and length, and the
 * settings the measurements depend on must be this survey's. And the bound on what --pairs all
 * may be asked: its output grows with the square of the nodes.
 */
#include "survey/internal.h"
#include "survey/survey.h"
#include "util/error.h"
#include "util/jsonl.h"
#include "util/log.h"
#include "util/text.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The most hosts a launch may name (before --allocation's map, the count is not known). */
#define RECORD_MAX_HOSTS (1 << 20)

/* The files survey_write leaves; launches.jsonl is the record, cleared only by a new survey. */
static const char *const outputs[] = {"survey.json", "excluded.txt", "healthy.hostfile",
                                      "report.txt",  "report.md",    "report.html"};

/* What the last survey's launches and its hand-over to Slurm and Kubernetes left (a new survey
 * only): its launch logs, Slurm's node states as read, each scontrol's and kubectl's output. A
 * rerun into the same --out kept them beside the new record. */
static const char *const traces[] = {"slurm-nodes.txt", "slurm-nodes.log"};
static const char *const trace_prefixes[] = {"scontrol.log", "kubectl.log"};

static int traces_clear(const struct survey *s)
{
    char path[1100];
    for (size_t i = 0; i < sizeof(traces) / sizeof(traces[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", s->dir, traces[i]);
        if (unlink(path) && errno != ENOENT)
            return util_error("cannot remove the previous survey's '%s': %s: remove it, or give "
                              "another --out",
                              path, strerror(errno)),
                   UTIL_EIO;
    }
    DIR *d = opendir(s->dir);
    for (struct dirent *e; d && (e = readdir(d));)
        for (size_t k = 0; k < sizeof(trace_prefixes) / sizeof(trace_prefixes[0]); k++)
            if (!strncmp(e->d_name, trace_prefixes[k], strlen(trace_prefixes[k])) &&
                unlinkat(dirfd(d), e->d_name, 0) && errno != ENOENT) {
                util_error("cannot remove the previous survey's '%s/%s': %s", s->dir, e->d_name,
                           strerror(errno));
                closedir(d);
                return UTIL_EIO;
            }
    if (d)
        closedir(d);
    /* the launch logs in the survey's own folder (made ready before this; anything else there is
     * refused when the launches write) */
    struct stat st;
    snprintf(path, sizeof(path), "%s/logs", s->dir);
    DIR *logs = !lstat(path, &st) && S_ISDIR(st.st_mode) ? opendir(path) : NULL;
    int rc = 0;
    for (struct dirent *e; logs && (e = readdir(logs));)
        if (!strncmp(e->d_name, "launch-", 7) && unlinkat(dirfd(logs), e->d_name, 0) &&
            errno != ENOENT)
            rc = util_error("cannot remove the previous survey's '%s/%s': %s", path, e->d_name,
                            strerror(errno)),
            rc = UTIL_EIO;
    if (logs)
        closedir(logs);
    return rc;
}

int survey_outputs_clear(const struct survey *s, int record)
{
    if (record && traces_clear(s))
        return UTIL_EIO;
    for (size_t i = 0; i <= sizeof(outputs) / sizeof(outputs[0]); i++) {
        const char *name = i < sizeof(outputs) / sizeof(outputs[0]) ? outputs[i] : NULL;
        if (!name && !record)
            break;
        char path[1100];
        snprintf(path, sizeof(path), "%s/%s", s->dir, name ? name : "launches.jsonl");
        /* unlink removes a link, never what it points to */
        if (unlink(path) && errno != ENOENT)
            return util_error("cannot remove the previous survey's '%s': %s: remove it, or give "
                              "another --out",
                              path, strerror(errno)),
                   UTIL_EIO;
    }
    return 0;
}

int survey_check_all_pairs(const struct survey *s)
{
    if (!s->all_pairs || s->nnodes <= SURVEY_ALL_PAIRS_MAX)
        return 0;
    util_error(
        "--pairs all: %d nodes would make %lld pairs in %d launches (at most %d nodes): survey "
        "with the random matchings (the default), or a part of the cluster at a time",
        s->nnodes, (long long)s->nnodes * (s->nnodes - 1) / 2, s->nnodes - 1 + s->nnodes % 2,
        SURVEY_ALL_PAIRS_MAX);
    return UTIL_EINVAL;
}

static int bad_line(const struct survey *s, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int bad_line(const struct survey *s, size_t line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    util_error("cannot resume from '%s/launches.jsonl': line %zu: %s", s->dir, line, msg);
    return UTIL_EINVAL;
}

/* A host as a launch names it: 1 to 255 characters of [A-Za-z0-9._-]. */
static int host_name(const json_t *v)
{
    const char *h = json_string_value(v);
    size_t n = h ? strlen(h) : 0;
    return n && n < 256 &&
           strspn(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* A number a launch measured: finite, from 0 to max. */
static int in_range(const json_t *v, double max)
{
    double x = json_number_value(v);
    return json_is_number(v) && isfinite(x) && x >= 0 && x <= max;
}

/* A setting as the operator typed it: 0.15, not 0.14999999999999999; none given, "its default".
 * A recorded string is the file's: shown cleaned (util_text_shown's rules), within len. */
static const char *setting_shown(const json_t *v, char *buf, size_t len)
{
    if (json_is_integer(v))
        snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, len, "%.15g", json_real_value(v));
    else if (json_is_string(v)) {
        struct util_buf b = UTIL_BUF_INIT;
        snprintf(buf, len, "%s", util_text_shown(&b, json_string_value(v)));
        util_buf_release(&b);
    } else
        snprintf(buf, len, "%s",
                 v && !json_is_null(v) ? "(a value of another type)" : "(its default)");
    return buf;
}

/* The first of this survey's settings that the record has otherwise, or NULL. */
static const char *setting_differs(const json_t *recorded, const json_t *now)
{
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)now, k, v) {
        if (!json_equal(v, json_object_get(recorded, k)))
            return k;
    }
    return NULL;
}

/* One launch's record: the fields survey_launch writes, each of its type and range. */
static int check_line(const struct survey *s, size_t line, const json_t *r)
{
    json_t *groups = json_object_get(r, "groups"), *bw = json_object_get(r, "busbw");
    const char *stage = json_string_value(json_object_get(r, "stage"));
    size_t ng = json_array_size(groups), k;
    json_t *g;
    if (!json_is_object(r))
        return bad_line(s, line, "not a launch (an object expected)");
    if (!stage || !*stage || strlen(stage) > 32 ||
        strspn(stage, "abcdefghijklmnopqrstuvwxyz-") != strlen(stage))
        return bad_line(s, line, "\"stage\": a name of [a-z-] expected");
    if (!json_is_string(json_object_get(r, "backend")))
        return bad_line(s, line, "\"backend\": a string expected");
    json_t *size = json_object_get(r, "size");
    if (!json_is_integer(size) || json_integer_value(size) < 1)
        return bad_line(s, line, "\"size\": a whole number of bytes expected");
    if (!json_is_array(groups) || !ng || ng > RECORD_MAX_HOSTS)
        return bad_line(s, line, "\"groups\": 1 to %d groups expected", RECORD_MAX_HOSTS);
    json_array_foreach(groups, k, g) {
        size_t j, nh = json_array_size(g);
        json_t *h;
        if (!json_is_array(g) || !nh || nh > RECORD_MAX_HOSTS)
            return bad_line(s, line, "\"groups\"[%zu]: an array of 1 to %d hosts expected", k,
                            RECORD_MAX_HOSTS);
        json_array_foreach(g, j, h) {
            if (!host_name(h))
                return bad_line(s, line, "\"groups\"[%zu][%zu]: a host name expected", k, j);
        }
    }
    json_t *ok = json_object_get(r, "ok");
    if (!json_is_boolean(ok))
        return bad_line(s, line, "\"ok\": true or false expected");
    size_t want = json_is_true(ok) ? ng : 0;
    if (!json_is_array(bw) || json_array_size(bw) != want)
        return bad_line(s, line, "\"busbw\": %zu numbers expected (one per group%s)", want,
                        want ? "" : ": the launch failed");
    json_array_foreach(bw, k, g) {
        if (!in_range(g, 1e7))
            return bad_line(s, line, "\"busbw\"[%zu]: a number of GB/s from 0 to 1e7 expected", k);
    }
    json_t *longer = json_object_get(r, "longer");
    if (longer && (!json_is_integer(longer) || json_integer_value(longer) < 1 ||
                   json_integer_value(longer) > 8))
        return bad_line(s, line, "\"longer\": a whole number from 1 to 8 expected");
    if (!in_range(json_object_get(r, "wall_s"), 1e9))
        return bad_line(s, line, "\"wall_s\": a number of seconds expected");
    if (!json_is_string(json_object_get(r, "why")))
        return bad_line(s, line, "\"why\": a string expected");
    json_t *set = json_object_get(r, "settings");
    if (!json_is_object(set))
        return bad_line(s, line,
                        "no \"settings\" (recorded by an older topotune): start the survey again "
                        "without --resume");
    const char *differs = setting_differs(set, s->settings);
    if (!differs && json_object_size(set) != json_object_size(s->settings))
        return bad_line(s, line,
                        "\"settings\": one this topotune does not know: start the survey "
                        "again without --resume");
    if (differs) {
        char was[128], now[128];
        bad_line(s, line,
                 "measured with --%s %s, this survey has %s: resume with the options of the "
                 "survey in '%s', or start again without --resume",
                 differs, setting_shown(json_object_get(set, differs), was, sizeof(was)),
                 setting_shown(json_object_get(s->settings, differs), now, sizeof(now)), s->dir);
        return UTIL_EINVAL;
    }
    return 0;
}

int survey_record_load(struct survey *s)
{
    char path[1100];
    snprintf(path, sizeof(path), "%s/launches.jsonl", s->dir);
    json_t *rec = util_jsonl_load(path, UTIL_JSONL_REPAIR);
    if (!rec)
        return UTIL_EINVAL;
    size_t i;
    json_t *r;
    json_array_foreach(rec, i, r) {
        int rc = check_line(s, i + 1, r);
        if (rc) {
            json_decref(rec);
            return rc;
        }
    }
    s->recorded = rec;
    return 0;
}
