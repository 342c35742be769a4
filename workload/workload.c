/* SPDX-License-Identifier: MIT */
/* Workloads: a job's collectives by size, from its NCCL COLL log lines or a preset. */
#include "workload/workload.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* NCCL's log names and nccl-tests' collective names; per-rank size: count x ranks (1) or count. */
static const struct {
    const char *log, *name;
    int times_ranks;
} colls[] = {
    {"AllReduce", "all_reduce", 0},
    {"AllGather", "all_gather", 1},
    {"ReduceScatter", "reduce_scatter", 1},
    {"Broadcast", "broadcast", 0},
    {"Reduce", "reduce", 0},
    {"Send", "sendrecv", 0},
};

/* ncclDataType_t's element sizes (nccl.h: int8 .. bfloat16, fp8 e4m3 and e5m2); 0: unknown. */
static size_t element(long type)
{
    static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return type >= 0 && type < (long)(sizeof(sizes) / sizeof(sizes[0])) ? sizes[type] : 0;
}

/* The number after " key " in line (hex when hex), or -1. */
static long long field(const char *line, const char *key, int hex)
{
    const char *p = strstr(line, key);
    if (!p)
        return -1;
    char *end;
    long long v = strtoll(p + strlen(key), &end, hex ? 16 : 10);
    return end == p + strlen(key) || v < 0 ? -1 : v;
}

/* The rank a line is from: "host:pid [dev]" from the "host:pid:tid [dev]" words just before its
 * NCCL INFO. */
static void rank_of(const char *line, const char *info, struct util_buf *rank)
{
    const char *dev = info;
    while (dev > line && dev[-1] == ' ')
        dev--;
    const char *open = dev;
    while (open > line && open[-1] != '[')
        open--;
    const char *host = open > line ? open - 1 : line;
    while (host > line && host[-1] == ' ')
        host--;
    const char *start = host;
    while (start > line && start[-1] != ' ' && start[-1] != ')')
        start--;
    /* host:pid:tid: the thread differs between a rank's lines (its main and proxy threads) */
    const char *tid = host;
    while (tid > start && tid[-1] != ':')
        tid--;
    util_buf_reset(rank);
    util_buf_add(rank, start, (size_t)(tid > start ? tid - 1 - start : host - start));
    util_buf_add(rank, open - 1 > line ? open - 1 : open,
                 (size_t)(dev - (open - 1 > line ? open - 1 : open)));
}

struct acc {
    json_t *calls; /* "collective size" -> calls over every rank */
    json_t *ranks; /* rank -> true */
    long long skipped, lines;
};

static void one_line(struct acc *a, const char *line)
{
    const char *info = NULL;
    for (const char *p = strstr(line, "NCCL INFO "); p; p = strstr(p + 1, "NCCL INFO "))
        info = p;
    if (!info)
        return;
    const char *what = info + strlen("NCCL INFO ");
    size_t k = 0, n = sizeof(colls) / sizeof(colls[0]);
    while (k < n && !(strncmp(what, colls[k].log, strlen(colls[k].log)) == 0 &&
                      !strncmp(what + strlen(colls[k].log), ": opCount ", 10)))
        k++;
    if (k == n) {
        if (!strncmp(what, "Recv: opCount ", 14))
            a->lines++; /* counted with its Send */
        return;
    }
    a->lines++;
    long long count = field(what, " count ", 0), type = field(what, " datatype ", 0);
    long long ranks = field(what, "[nranks=", 0);
    size_t el = element((long)type);
    if (count < 0 || !el || ranks < 1 || ranks > 1 << 24 || count > (1LL << 50) / (long long)el) {
        a->skipped++;
        return;
    }
    unsigned long long bytes = (unsigned long long)count * el;
    if (colls[k].times_ranks)
        bytes *= (unsigned long long)ranks;
    char key[96];
    snprintf(key, sizeof(key), "%s %llu", colls[k].name, bytes);
    json_t *c = json_object_get(a->calls, key);
    json_object_set_new(a->calls, key, json_integer(json_integer_value(c) + 1));
    struct util_buf rank = UTIL_BUF_INIT;
    rank_of(line, info, &rank);
    json_object_set_new(a->ranks, util_buf_str(&rank), json_true());
    util_buf_release(&rank);
}

/* The entries, weights and totals from what was counted. */
static json_t *document(const struct acc *a, json_t *sources)
{
    double nranks = json_object_size(a->ranks) ? (double)json_object_size(a->ranks) : 1, sum = 0;
    json_t *entries = json_array(), *totals = json_object(), *v;
    const char *key;
    json_object_foreach(a->calls, key, v) {
        char name[32];
        unsigned long long bytes;
        if (sscanf(key, "%31s %llu", name, &bytes) != 2)
            continue;
        double calls = (double)json_integer_value(v) / nranks;
        sum += calls * (double)bytes;
        json_array_append_new(entries, json_pack("{s:s,s:I,s:f}", "collective", name, "size",
                                                 (json_int_t)bytes, "calls", calls));
        json_t *t = json_object_get(totals, name);
        if (!t) {
            t = json_pack("{s:f,s:f}", "calls", 0.0, "bytes", 0.0);
            json_object_set_new(totals, name, t);
        }
        json_object_set_new(t, "calls",
                            json_real(json_real_value(json_object_get(t, "calls")) + calls));
        json_object_set_new(
            t, "bytes",
            json_real(json_real_value(json_object_get(t, "bytes")) + calls * (double)bytes));
    }
    size_t i;
    json_array_foreach(entries, i, v)
        json_object_set_new(
            v, "weight",
            json_real(sum > 0 ? json_real_value(json_object_get(v, "calls")) *
                                    (double)json_integer_value(json_object_get(v, "size")) / sum
                              : 0));
    return json_pack("{s:s,s:s,s:o,s:I,s:I,s:I,s:o,s:o,s:b}", "schema", "topotune/workload/1",
                     "from", "nccl-log", "sources", sources, "ranks_seen",
                     (json_int_t)json_object_size(a->ranks), "lines", (json_int_t)a->lines,
                     "skipped", (json_int_t)a->skipped, "entries", entries, "totals", totals,
                     "assumed", 0);
}

/* Every line of text (NUL-terminated, cut in place) into a. */
static void all_lines(struct acc *a, char *text)
{
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        one_line(a, line);
    }
}

json_t *workload_from_nccl_text(const char *text, size_t len)
{
    struct acc a = {json_object(), json_object(), 0, 0};
    char *copy = util_xmalloc(len + 1);
    json_t *doc = NULL;
    memcpy(copy, text, len);
    copy[len] = '\0';
    all_lines(&a, copy);
    free(copy);
    if (json_object_size(a.calls))
        doc = document(&a, json_array());
    json_decref(a.calls);
    json_decref(a.ranks);
    return doc;
}

json_t *workload_from_nccl_logs(char *const *paths, int n)
{
    struct acc a = {json_object(), json_object(), 0, 0};
    json_t *sources = json_array();
    int rc = 0;
    for (int f = 0; f < n && !rc; f++) {
        struct util_buf text = UTIL_BUF_INIT;
        const char *why = NULL;
        if (util_file_read_input(paths[f], 1, 1LL << 30, &text, &why)) {
            rc = util_error("cannot read NCCL log '%s': %s", paths[f], why ? why : "?");
        } else {
            long long before = a.lines;
            all_lines(&a, text.data);
            json_array_append_new(sources, json_pack("{s:s,s:I}", "file", paths[f], "lines",
                                                     (json_int_t)(a.lines - before)));
        }
        util_buf_release(&text);
    }
    if (!rc && !json_object_size(a.calls))
        rc = util_error("no NCCL COLL line in %s: run the job with NCCL_DEBUG=INFO "
                        "NCCL_DEBUG_SUBSYS=COLL (and NCCL_DEBUG_FILE) and give that log",
                        n == 1 ? paths[0] : "the logs");
    json_t *doc = rc ? NULL : document(&a, json_incref(sources));
    json_decref(sources);
    json_decref(a.calls);
    json_decref(a.ranks);
    return doc;
}

/* Assumed mixes, for a job that has not run yet: (collective, size, weight). */
static const struct preset {
    const char *name, *what;
    struct {
        const char *coll;
        long long size;
        double weight;
    } e[6];
} presets[] = {
    {"dp",
     "data parallel: gradient all_reduce in large buckets (PyTorch DDP's 25 MiB and up)",
     {{"all_reduce", 25 << 20, 0.4}, {"all_reduce", 100 << 20, 0.4}, {"all_reduce", 1 << 30, 0.2}}},
    {"fsdp",
     "FSDP / ZeRO-3: per layer an all_gather of the parameters and a reduce_scatter of the "
     "gradients",
     {{"all_gather", 16 << 20, 0.25},
      {"all_gather", 128 << 20, 0.25},
      {"reduce_scatter", 16 << 20, 0.25},
      {"reduce_scatter", 128 << 20, 0.25}}},
    {"tp",
     "tensor parallel: all_reduce of activations, small and mid sizes",
     {{"all_reduce", 64 << 10, 0.2}, {"all_reduce", 1 << 20, 0.4}, {"all_reduce", 32 << 20, 0.4}}},
    {"moe",
     "mixture of experts: alltoall dispatch and combine of tokens",
     {{"alltoall", 1 << 20, 0.3}, {"alltoall", 8 << 20, 0.4}, {"alltoall", 64 << 20, 0.3}}},
};

const char *workload_preset_names(void)
{
    return "dp fsdp tp moe";
}

json_t *workload_preset(const char *name)
{
    for (size_t i = 0; name && i < sizeof(presets) / sizeof(presets[0]); i++) {
        if (strcmp(name, presets[i].name))
            continue;
        json_t *entries = json_array();
        for (int k = 0; k < 6 && presets[i].e[k].coll; k++)
            json_array_append_new(entries,
                                  json_pack("{s:s,s:I,s:f}", "collective", presets[i].e[k].coll,
                                            "size", (json_int_t)presets[i].e[k].size, "weight",
                                            presets[i].e[k].weight));
        return json_pack("{s:s,s:s,s:s,s:o,s:b}", "schema", "topotune/workload/1", "from", "preset",
                         "preset", presets[i].what, "entries", entries, "assumed", 1);
    }
    return NULL;
}

/* nccl-tests' names a workload may weight (alltoall: a preset's or a user's; NCCL's COLL log
 * shows its pairs as Send/Recv). */
static int known_collective(const char *name)
{
    static const char *const names[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                        "reduce",     "alltoall",   "sendrecv"};
    for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(name, names[i]))
            return 1;
    return 0;
}

/* One entry, checked and copied; NULL after an error naming it. */
static json_t *clean_entry(const char *path, size_t i, json_t *e)
{
    json_t *c = json_object_get(e, "collective"), *s = json_object_get(e, "size"),
           *w = json_object_get(e, "weight");
    double wv = json_is_number(w) ? json_number_value(w) : -1;
    if (!json_is_object(e))
        util_error("%s: entries[%zu]: an object {collective, size, weight}", path, i);
    else if (!json_is_string(c) || !known_collective(json_string_value(c)))
        util_error("%s: entries[%zu].collective: one of all_reduce all_gather reduce_scatter "
                   "broadcast reduce alltoall sendrecv",
                   path, i);
    else if (!json_is_integer(s) || json_integer_value(s) < 0 ||
             json_integer_value(s) > WORKLOAD_MAX_SIZE)
        util_error("%s: entries[%zu].size: bytes, an integer from 0 to %lld (nccl-tests' size)",
                   path, i, WORKLOAD_MAX_SIZE);
    else if (!(wv >= 0 && wv <= 1))
        util_error("%s: entries[%zu].weight: a number from 0 to 1", path, i);
    else
        return json_pack("{s:O,s:O,s:f}", "collective", c, "size", s, "weight", wv);
    return NULL;
}

json_t *workload_clean(const json_t *doc, const char *name)
{
    json_t *entries = json_object_get(doc, "entries"), *schema = json_object_get(doc, "schema");
    if (!json_is_string(schema) || strcmp(json_string_value(schema), "topotune/workload/1")) {
        util_error("%s: schema: \"topotune/workload/1\" expected (topotune workload writes it)",
                   name);
        return NULL;
    }
    if (!json_is_array(entries) || !json_array_size(entries) ||
        json_array_size(entries) > WORKLOAD_MAX_ENTRIES) {
        util_error("%s: entries: an array of 1 to %d {collective, size, weight}", name,
                   WORKLOAD_MAX_ENTRIES);
        return NULL;
    }
    json_t *clean = json_array(), *e, *out = NULL;
    size_t i;
    int bad = 0;
    double total = 0;
    json_array_foreach(entries, i, e) {
        json_t *c = clean_entry(name, i, e);
        if (!c) {
            bad = 1;
            break;
        }
        double w = json_real_value(json_object_get(c, "weight"));
        total += w;
        if (w > 0 && json_integer_value(json_object_get(c, "size")) > 0)
            json_array_append(clean, c); /* what weighs nothing is left out */
        json_decref(c);
    }
    const char *from = json_string_value(json_object_get(doc, "from"));
    json_t *assumed = json_object_get(doc, "assumed");
    int preset = from && !strcmp(from, "preset");
    if (!bad && (!(total > 0) || !json_array_size(clean)))
        util_error("%s: entries: every entry weighs 0: nothing to optimise for", name);
    else if (!bad)
        out =
            json_pack("{s:s,s:s,s:b,s:O}", "schema", "topotune/workload/1", "from",
                      preset || (from && !strcmp(from, "nccl-log")) ? from : "file", "assumed",
                      json_is_boolean(assumed) ? json_is_true(assumed) : preset, "entries", clean);
    json_decref(clean);
    return out;
}

json_t *workload_load(const char *arg)
{
    json_t *preset = workload_preset(arg);
    if (preset)
        return preset;
    struct util_buf text = UTIL_BUF_INIT;
    const char *why = NULL;
    if (util_file_read_input(arg, 1, 16u << 20, &text, &why)) {
        util_buf_release(&text);
        util_error("cannot read workload '%s': %s (or give a preset: %s)", arg, why ? why : "?",
                   workload_preset_names());
        return NULL;
    }
    json_error_t jerr;
    json_t *doc = json_loadb(text.data, text.len, JSON_REJECT_DUPLICATES, &jerr), *out = NULL;
    util_buf_release(&text);
    if (!doc)
        util_error("%s: line %d: %s", arg, jerr.line, jerr.text);
    else
        out = workload_clean(doc, arg);
    json_decref(doc);
    return out;
}
