/* SPDX-License-Identifier: MIT */
/* Workloads: a job's collectives by size, from its NCCL COLL log lines or a preset. */
#include "workload/workload.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/text.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* NCCL's log names and nccl-tests' collective names; per-rank size: count x ranks (1) or count.
 * AlltoAll (NCCL 2.28's ncclAlltoAll) counts per peer, nccl-tests' alltoall size is the whole
 * send buffer; before 2.28 an alltoall shows as its Send lines. */
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
    {"AlltoAll", "alltoall", 1},
};

/* ncclDataType_t's element sizes (nccl.h: int8 .. bfloat16, fp8 e4m3 and e5m2); 0: unknown. */
static size_t element(long type)
{
    static const size_t sizes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    return type >= 0 && type < (long)(sizeof(sizes) / sizeof(sizes[0])) ? sizes[type] : 0;
}

/* The number after " key " in line (hex when hex), or -1; with close, only when that character
 * follows it (a line cut inside "[nranks=16]" reads as no ranks, not as 1). */
static long long field_to(const char *line, const char *key, int hex, char close)
{
    const char *p = strstr(line, key);
    if (!p)
        return -1;
    char *end;
    long long v = strtoll(p + strlen(key), &end, hex ? 16 : 10);
    return end == p + strlen(key) || v < 0 || (close && *end != close) ? -1 : v;
}

static long long field(const char *line, const char *key, int hex)
{
    return field_to(line, key, hex, 0);
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
    /* a progress bar's carriage return also ends the words before, as does a launcher's "(...)"
     * or a timestamp's "[...]" written without a space after it (NCCL_DEBUG_TIMESTAMP_FORMAT) */
    while (start > line && !isspace((unsigned char)start[-1]) && start[-1] != ')' &&
           start[-1] != ']')
        start--;
    /* host:pid:tid: the thread differs between a rank's lines (its main and proxy threads) */
    const char *tid = host;
    while (tid > start && tid[-1] != ':')
        tid--;
    /* cleaned: a key JSON can hold (a host name's stray bytes would make it invalid UTF-8) */
    util_buf_reset(rank);
    util_text_clean(rank, start, (size_t)(tid > start ? tid - 1 - start : host - start), 0);
    util_text_clean(rank, open - 1 > line ? open - 1 : open,
                    (size_t)(dev - (open - 1 > line ? open - 1 : open)), 0);
}

struct acc {
    json_t *calls; /* "collective size" -> calls over every rank */
    /* "host:pid [dev]" -> a process's collective and Send lines in runs (process_line): {"sig":
     * the last line's call, "comms": {comm: true} and "lines": the run's so far, "runs": {length
     * (comms): lines}}; its ranks: process_ranks */
    json_t *ranks;
    /* "rank comm" -> the Sends and Recvs of its last group: {"op", "nranks", "peers": {peer:
     * true} (sent to), "from": {peer: true} (received from), "bytes": [...] (sent)}, until a
     * Send or Recv of another group (opCount, or a peer met again) ends it (group_end) */
    json_t *groups;
    long long lines;
    /* COLL lines left out: a count, datatype or ranks that did not parse; a call larger than
     * a workload's largest size; a function no nccl-tests collective here covers (Gather); a
     * call on a communicator of one rank (NCCL copies it in place: nothing crosses a GPU) */
    long long unparsed, too_large, other, one_rank;
    char other_name[24];  /* the first such function's name */
    int others;           /* more than one such function */
    long long recv;       /* Recv lines: counted with their Send (in another rank's log) */
    long long folded;     /* COLL lines that Ray's log deduplication stands for others with */
    json_t *comms;        /* "nranks" -> calls counted on communicators of that size */
    long long want;       /* the communicator size kept (--ranks), or 0: every one */
    long long other_comm; /* COLL lines of communicators of another size than want */
};

static void count_call(struct acc *a, const char *name, unsigned long long bytes, long long nranks)
{
    char size[24];
    snprintf(size, sizeof(size), "%lld", nranks);
    json_t *n = json_object_get(a->comms, size);
    json_object_set_new(a->comms, size, json_integer(json_integer_value(n) + 1));
    char key[96];
    snprintf(key, sizeof(key), "%s %llu", name, bytes);
    json_t *c = json_object_get(a->calls, key);
    json_object_set_new(a->calls, key, json_integer(json_integer_value(c) + 1));
}

/* A process's run (process_line) ended: its lines counted under its length, the comms it had. */
static void run_end(json_t *p)
{
    json_t *comms = json_object_get(p, "comms"), *runs = json_object_get(p, "runs");
    json_int_t lines = json_integer_value(json_object_get(p, "lines"));
    char len[24];
    if (!lines)
        return;
    snprintf(len, sizeof(len), "%zu", json_object_size(comms));
    json_object_set_new(runs, len,
                        json_integer(json_integer_value(json_object_get(runs, len)) + lines));
    json_object_clear(comms);
    json_object_set_new(p, "lines", json_integer(0));
}

/*
 * The ranks a process drives: the length of the runs that hold most of its lines, when they hold
 * nearly all (90%) and the process logged each call at least twice per GPU; else 1. A process of
 * one GPU whose comms once logged one call in a row (a barrier on two) is one rank: its other
 * lines are runs of 1, or it logged too little to tell.
 */
static size_t process_ranks(json_t *p)
{
    run_end(p);
    const char *len;
    json_t *n;
    size_t best = 1;
    json_int_t most = 0, total = 0;
    json_object_foreach(json_object_get(p, "runs"), len, n) {
        size_t l = (size_t)strtoull(len, NULL, 10);
        total += json_integer_value(n);
        if (json_integer_value(n) > most || (json_integer_value(n) == most && l < best))
            best = l, most = json_integer_value(n);
    }
    return best > 1 && 10 * most >= 9 * total && total >= 2 * (json_int_t)best ? best : 1;
}

/* A process seen (a rank whose log holds only Recvs too). */
static void process_seen(struct acc *a, const char *process)
{
    if (!json_object_get(a->ranks, process))
        json_object_set_new(
            a->ranks, process,
            json_pack("{s:s,s:{},s:i,s:{}}", "sig", "", "comms", "lines", 0, "runs"));
}

/*
 * A collective or Send line of process (its "host:pid [dev]") on comm, for the ranks it drives.
 * One process may drive several GPUs (nccl-tests' -g, ncclCommInitAll): NCCL logs each GPU's call
 * under the calling thread's device, so every line reads "[0]"; only the comm pointer differs.
 * Such a process logs each call once per GPU, in a row, each on its own comm: a run of lines of
 * one call (function, opCount, count, datatype, ranks; a Send's peer left out: each GPU has its
 * own) on as many comms as GPUs (an alltoall's Sends too: each GPU's to every peer, then the
 * next's). A process of one GPU logs runs on one comm. Recvs are no part of a run.
 */
static void process_line(struct acc *a, const char *process, const char *sig,
                         unsigned long long comm)
{
    process_seen(a, process);
    json_t *p = json_object_get(a->ranks, process);
    char key[24];
    snprintf(key, sizeof(key), "%llx", comm);
    if (strcmp(json_string_value(json_object_get(p, "sig")), sig)) {
        run_end(p);
        json_object_set_new(p, "sig", json_string(sig));
    }
    json_object_set_new(json_object_get(p, "comms"), key, json_true());
    json_object_set_new(p, "lines",
                        json_integer(json_integer_value(json_object_get(p, "lines")) + 1));
}

/* Most of a communicator's ranks: every rank, or 3 or more and at least half of them. */
static int most_ranks(long long peers, long long nranks)
{
    return peers == nranks || (peers >= 3 && 2 * peers >= nranks);
}

/*
 * A rank's group of Sends and Recvs on one communicator, ended. Before NCCL 2.28 an alltoall is
 * a group of a Send and a Recv per rank, logged with one opCount: to and from every rank
 * (PyTorch's all_to_all, itself included), or most of them (itself left out; uneven splits skip
 * the ranks they send 0). A group that sends to and receives from most ranks (most_ranks) is one
 * alltoall of nccl-tests' size (the rank's whole send buffer: what it sent, scaled to every rank
 * where at most itself is missing). Any other group (a pipeline's send, a ring's two
 * neighbours, sends to every rank with nothing received: a scatter) is its Sends, each a
 * sendrecv.
 */
static void group_end(struct acc *a, json_t *g)
{
    long long nranks = json_integer_value(json_object_get(g, "nranks"));
    json_t *bytes = json_object_get(g, "bytes"), *b;
    long long peers = (long long)json_object_size(json_object_get(g, "peers"));
    long long from = (long long)json_object_size(json_object_get(g, "from"));
    size_t i;
    if (most_ranks(peers, nranks) && most_ranks(from, nranks)) {
        unsigned long long sum = 0; /* each at most WORKLOAD_MAX_SIZE, at most 2^24 of them */
        json_array_foreach(bytes, i, b)
            sum += (unsigned long long)json_integer_value(b);
        /* to every rank: the whole buffer; to every other: its own part added, as the mean
         * (checked before multiplying: sum x nranks could pass 2^64) */
        int scaled = peers == nranks - 1;
        if (sum > (unsigned long long)WORKLOAD_MAX_SIZE ||
            (scaled && sum / (unsigned long long)peers >
                           (unsigned long long)WORKLOAD_MAX_SIZE / (unsigned long long)nranks)) {
            a->too_large++;
            return;
        }
        count_call(a, "alltoall",
                   scaled ? sum * (unsigned long long)nranks / (unsigned long long)peers : sum,
                   nranks);
        return;
    }
    json_array_foreach(bytes, i, b)
        count_call(a, "sendrecv", (unsigned long long)json_integer_value(b), nranks);
}

/* A Send (recv 0: its bytes) or Recv line of rank on [nranks=] ranks, kept with the rest of its
 * group. */
static void group_p2p(struct acc *a, const char *rank, const char *what, long long nranks, int recv,
                      unsigned long long bytes)
{
    char key[600], peer[24];
    long long op = field(what, ": opCount ", 1), comm = field(what, " comm 0x", 1);
    snprintf(key, sizeof(key), "%s %llx", rank, (unsigned long long)comm);
    snprintf(peer, sizeof(peer), "%lld", field(what, " root ", 0));
    json_t *g = json_object_get(a->groups, key);
    const char *side = recv ? "from" : "peers";
    /* a new group: another opCount, or a peer met again the same way (from NCCL 2.27 a launch
     * without network work leaves the opCount as it was: every group inside a node logs the
     * same) */
    if (g && (json_integer_value(json_object_get(g, "op")) != op ||
              json_integer_value(json_object_get(g, "nranks")) != nranks ||
              json_object_get(json_object_get(g, side), peer))) {
        group_end(a, g);
        g = NULL;
    }
    if (!g) {
        g = json_pack("{s:I,s:I,s:{},s:{},s:[]}", "op", (json_int_t)op, "nranks",
                      (json_int_t)nranks, "peers", "from", "bytes");
        json_object_set_new(a->groups, key, g);
    }
    json_object_set_new(json_object_get(g, side), peer, json_true());
    if (!recv)
        json_array_append_new(json_object_get(g, "bytes"), json_integer((json_int_t)bytes));
}

/* Every rank's last group of Sends, ended (the log read). */
static void groups_end(struct acc *a)
{
    const char *key;
    json_t *g;
    json_object_foreach(a->groups, key, g)
        group_end(a, g);
    json_object_clear(a->groups);
}

/* Ray's deduplication (on by default) prints a line for several, as "... [repeated 15x across
 * cluster]": the others' sizes are gone. */
static int folded_by_ray(const char *line)
{
    const char *p = strstr(line, "[repeated ");
    return p && strstr(p, "x across cluster]") != NULL;
}

/* A COLL line's start at what: a function's name, then ": opCount " (its length, or 0). */
static size_t coll_word(const char *what)
{
    size_t word = strspn(what, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
    return word && !strncmp(what + word, ": opCount ", 10) ? word : 0;
}

static void one_line(struct acc *a, const char *line)
{
    const char *info = NULL;
    for (const char *p = strstr(line, "NCCL INFO "); p; p = strstr(p + 1, "NCCL INFO ")) {
        /* a COLL line another rank's line cut (processes writing at once): lost, counted */
        if (info && coll_word(info + strlen("NCCL INFO ")))
            a->lines++, a->unparsed++;
        info = p;
    }
    if (!info)
        return;
    const char *what = info + strlen("NCCL INFO ");
    size_t k = 0, n = sizeof(colls) / sizeof(colls[0]);
    while (k < n && !(strncmp(what, colls[k].log, strlen(colls[k].log)) == 0 &&
                      !strncmp(what + strlen(colls[k].log), ": opCount ", 10)))
        k++;
    if (k == n) {
        size_t word = coll_word(what);
        if (!word)
            return; /* not a COLL line */
        a->lines++;
        if (word == 4 && !strncmp(what, "Recv", 4)) {
            a->recv++; /* its bytes counted with its Send; its rank and group here */
            long long ranks = field_to(what, "[nranks=", 0, ']');
            if (ranks < 2 || ranks > 1 << 24)
                return;
            if (a->want && ranks != a->want)
                return; /* its Send, in another rank's log, is the one counted */
            struct util_buf rank = UTIL_BUF_INIT;
            rank_of(line, info, &rank);
            process_seen(a, util_buf_str(&rank));
            group_p2p(a, util_buf_str(&rank), what, ranks, 1, 0);
            util_buf_release(&rank);
            return;
        }
        if (!a->other++)
            snprintf(a->other_name, sizeof(a->other_name), "%.*s", (int)word, what);
        else
            a->others |= strlen(a->other_name) != word || strncmp(a->other_name, what, word);
        return;
    }
    a->lines++;
    if (folded_by_ray(what)) {
        a->folded++;
        return;
    }
    long long count = field(what, " count ", 0), type = field(what, " datatype ", 0);
    long long ranks = field_to(what, "[nranks=", 0, ']');
    size_t el = element((long)type);
    if (count < 0 || !el || ranks < 1 || ranks > 1 << 24) {
        a->unparsed++;
        return;
    }
    if (ranks == 1) {
        a->one_rank++;
        return;
    }
    if (a->want && ranks != a->want) {
        a->other_comm++;
        return;
    }
    /* checked before multiplying: count x element x ranks could pass 2^64 */
    long long per = colls[k].times_ranks ? ranks : 1;
    if (count > WORKLOAD_MAX_SIZE / (long long)el / per) {
        a->too_large++;
        return;
    }
    unsigned long long bytes = (unsigned long long)count * el * (unsigned long long)per;
    struct util_buf rank = UTIL_BUF_INIT;
    rank_of(line, info, &rank);
    char sig[128]; /* the call, a Send's peer ("root") left out */
    snprintf(sig, sizeof(sig), "%s %lld %lld %lld %lld", colls[k].name,
             field(what, ": opCount ", 1), count, type, ranks);
    process_line(a, util_buf_str(&rank), sig, (unsigned long long)field(what, " comm 0x", 1));
    if (!strcmp(colls[k].name, "sendrecv"))
        group_p2p(a, util_buf_str(&rank), what, ranks, 0, bytes);
    else
        count_call(a, colls[k].name, bytes, ranks);
    util_buf_release(&rank);
}

/*
 * The ranks seen. Processes that write one file cut each other's lines: "...count 1nodeB:21:22
 * [1] NCCL INFO AllReduce: ..." holds B's whole line after A's first part, and its words read
 * "1nodeB:21 [1]", a rank that never ran. A key that ends with another's whole "host:pid [dev]"
 * after a character a host name cannot end a cut with is that rank's, and not counted apart.
 */
static size_t ranks_seen(json_t *ranks)
{
    /* a cut key keeps its rank's "pid [dev]": only keys that share it are compared */
    json_t *by_tail = json_object(), *v, *group, *o;
    const char *k;
    json_object_foreach(ranks, k, v) {
        const char *tail = strrchr(k, ':') ? strrchr(k, ':') : k;
        if (!json_object_get(by_tail, tail))
            json_object_set_new(by_tail, tail, json_array());
        json_array_append_new(json_object_get(by_tail, tail), json_string(k));
    }
    size_t n = 0, i, j;
    json_object_foreach(by_tail, k, group) {
        json_array_foreach(group, i, v) {
            const char *key = json_string_value(v);
            size_t len = strlen(key);
            int cut = 0;
            json_array_foreach(group, j, o) {
                const char *other = json_string_value(o);
                size_t olen = strlen(other);
                cut |= olen < len && !strcmp(key + len - olen, other) &&
                       key[len - olen - 1] != '-' && key[len - olen - 1] != '.';
            }
            n += cut ? 0 : process_ranks(json_object_get(ranks, key));
        }
    }
    json_decref(by_tail);
    return n;
}

/* The entries, weights and totals from what was counted. */
static json_t *document(const struct acc *a, json_t *sources)
{
    size_t seen = ranks_seen(a->ranks);
    double nranks = seen ? (double)seen : 1, sum = 0;
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
    json_t *doc =
        json_pack("{s:s,s:s,s:o,s:I,s:I,s:I,s:o,s:o,s:b}", "schema", "topotune/workload/1", "from",
                  "nccl-log", "sources", sources, "ranks_seen", (json_int_t)seen, "lines",
                  (json_int_t)a->lines, "skipped",
                  (json_int_t)(a->unparsed + a->too_large + a->other + a->one_rank + a->other_comm),
                  "entries", entries, "totals", totals, "assumed", 0);
    /* the one communicator size every counted call had: nccl-tests' sizes of all_gather,
     * reduce_scatter and alltoall are a rank's part times it */
    void *only = json_object_iter(a->comms);
    if (json_object_size(a->comms) == 1)
        json_object_set_new(doc, "ranks",
                            json_integer(strtoll(json_object_iter_key(only), NULL, 10)));
    return doc;
}

/* Every line of the len bytes of text (with a byte after them; cut in place) into a. A NUL
 * ends a line as a newline does, not the text: a crashed node's log ends in NULs, and ranks
 * that share NCCL_DEBUG_FILE (each opens it "w") leave holes of NULs that the next line written
 * follows on the same line. */
static void all_lines(struct acc *a, char *text, size_t len)
{
    if (!text || !len) /* an empty file: no buffer at all */
        return;
    for (char *line = text, *end = text + len; line <= end;) {
        char *stop = line;
        while (stop < end && *stop != '\n' && *stop != '\0')
            stop++;
        *stop = '\0';
        one_line(a, line);
        line = stop + 1;
    }
}

json_t *workload_from_nccl_text(const char *text, size_t len)
{
    struct acc a = {.calls = json_object(),
                    .ranks = json_object(),
                    .groups = json_object(),
                    .comms = json_object()};
    char *copy = util_xmalloc(len + 1);
    json_t *doc = NULL;
    memcpy(copy, text, len);
    copy[len] = '\0';
    all_lines(&a, copy, len);
    free(copy);
    groups_end(&a);
    if (json_object_size(a.calls))
        doc = document(&a, json_array());
    json_decref(a.calls);
    json_decref(a.ranks);
    json_decref(a.groups);
    json_decref(a.comms);
    return doc;
}

/* Says which COLL lines were left out, and why. */
static void left_out(const struct acc *a)
{
    if (a->unparsed)
        util_warning("%lld COLL line(s) left out: a count, datatype or [nranks=] that did not "
                     "parse (a line cut short, or a datatype newer than those of nccl.h's "
                     "ncclDataType_t?)",
                     a->unparsed);
    if (a->too_large)
        util_warning("%lld call(s) left out: larger than %lld bytes, the largest size a workload "
                     "holds",
                     a->too_large, WORKLOAD_MAX_SIZE);
    if (a->other)
        util_warning("%lld COLL line(s) of %s%s left out: no nccl-tests collective topotune runs "
                     "stands for them",
                     a->other, a->other_name, a->others ? " and other functions" : "");
    if (a->one_rank)
        util_warning("%lld call(s) on communicators of one rank left out: NCCL copies them in "
                     "place, nothing crosses a GPU",
                     a->one_rank);
    if (a->other_comm)
        util_warning("%lld COLL line(s) on communicators of another size than --ranks %lld left "
                     "out",
                     a->other_comm, a->want);
    if (json_object_size(a->comms) > 1) { /* --ranks keeps one: never more than one here */
        struct util_buf sizes = UTIL_BUF_INIT;
        const char *key;
        json_t *v;
        json_object_foreach(a->comms, key, v)
            util_buf_addf(&sizes, "%s%s ranks (%lld calls)", sizes.len ? ", " : "", key,
                          (long long)json_integer_value(v));
        util_warning("the calls come from communicators of %s: the weights add them up, but a "
                     "sweep measures one communicator (a tensor-parallel group's calls are not "
                     "the data-parallel one's); --ranks N keeps the calls of the one it will "
                     "measure",
                     util_buf_str(&sizes));
        util_buf_release(&sizes);
    }
}

/* The error when the logs give nothing to weigh; 0 when they do. */
static int nothing_usable(const struct acc *a, const char *what)
{
    int bytes = 0;
    const char *key;
    json_t *v;
    json_object_foreach(a->calls, key, v) {
        const char *space = strrchr(key, ' ');
        bytes |= space && strcmp(space, " 0") != 0;
    }
    if (!a->lines)
        return util_error("no NCCL COLL line in %s: run the job with NCCL_DEBUG=INFO "
                          "NCCL_DEBUG_SUBSYS=COLL (and NCCL_DEBUG_FILE) and give that log",
                          what);
    if (a->folded)
        return util_error("%s: %lld COLL line(s) stand for others that Ray's log deduplication "
                          "left out ('[repeated Nx across cluster]'), whose sizes are lost: run "
                          "the job with RAY_DEDUP_LOGS=0 (or NCCL_DEBUG_FILE) and give that log",
                          what, a->folded);
    if (!json_object_size(a->calls) && a->recv == a->lines)
        return util_error("%s: only Recv lines: each is counted with its Send, which another "
                          "rank's log holds: give every rank's log",
                          what);
    if (!json_object_size(a->calls))
        return util_error("%s: %lld COLL line(s), none of them usable (see the warnings above)",
                          what, a->lines);
    if (!bytes)
        return util_error("%s: every call counted moves 0 bytes: nothing to weigh", what);
    if (json_object_size(a->calls) > WORKLOAD_MAX_ENTRIES)
        return util_error("%s: %zu distinct (collective, size) pairs, more than the %d a workload "
                          "holds: give the log of fewer steps of the job",
                          what, json_object_size(a->calls), WORKLOAD_MAX_ENTRIES);
    return 0;
}

/* The first of paths[0..f) that is the file paths[f] is (a link, another spelling, a glob that
 * overlaps another), or -1; seen[] holds each earlier path's stat (st_ino 0: none), each path's
 * set here once (a shared file system answers a stat slowly, and a job may have thousands). */
static int same_file_before(char *const *paths, int f, struct stat *seen)
{
    if (stat(paths[f], &seen[f])) {
        memset(&seen[f], 0, sizeof(seen[f]));
        return -1; /* reading it says why */
    }
    for (int i = 0; i < f; i++)
        if (seen[i].st_ino && seen[i].st_dev == seen[f].st_dev && seen[i].st_ino == seen[f].st_ino)
            return i;
    return -1;
}

json_t *workload_from_nccl_logs(char *const *paths, int n, long long ranks)
{
    struct acc a = {.calls = json_object(),
                    .ranks = json_object(),
                    .groups = json_object(),
                    .comms = json_object(),
                    .want = ranks};
    json_t *sources = json_array();
    struct stat *seen = util_xcalloc((size_t)n + 1, sizeof(*seen));
    int rc = 0;
    for (int f = 0; f < n && !rc; f++) {
        struct util_buf text = UTIL_BUF_INIT, name = UTIL_BUF_INIT;
        const char *why = NULL;
        int again = same_file_before(paths, f, seen);
        if (again >= 0 && !strcmp(paths[f], paths[again])) {
            rc = util_error("NCCL log '%s' is given twice: each log is read once (its calls "
                            "would count twice)",
                            paths[f]);
        } else if (again >= 0) {
            rc = util_error("NCCL log '%s' is the same file as '%s', given before it: each log "
                            "is read once (its calls would count twice)",
                            paths[f], paths[again]);
        } else if (util_file_read_input(paths[f], 1, 1LL << 30, &text, &why)) {
            /* a pipe is not read (a log is read whole, and twice-given files are told by
             * their inode): say how to give it */
            int piped = !strcmp(paths[f], "-") || (why && strstr(why, "not a regular file"));
            rc = util_error("cannot read NCCL log '%s': %s%s", paths[f], why ? why : "?",
                            why && strstr(why, "larger than")
                                ? ": give its COLL lines (grep 'NCCL INFO'), or split it into "
                                  "several files"
                            : piped ? ": save the log to a file first, and give its path"
                                    : "");
        } else {
            long long before = a.lines;
            all_lines(&a, text.data, text.len);
            json_array_append_new(sources,
                                  json_pack("{s:s,s:I}", "file", util_text_shown(&name, paths[f]),
                                            "lines", (json_int_t)(a.lines - before)));
        }
        util_buf_release(&text);
        util_buf_release(&name);
    }
    if (!rc) {
        groups_end(&a);
        left_out(&a);
        rc = nothing_usable(&a, n == 1 ? paths[0] : "the logs");
    }
    json_t *doc = rc ? NULL : document(&a, json_incref(sources));
    json_decref(sources);
    json_decref(a.calls);
    json_decref(a.ranks);
    json_decref(a.groups);
    json_decref(a.comms);
    free(seen);
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

/* An entry's (collective, size) as one key. */
static void entry_key(const json_t *e, char *key, size_t len)
{
    snprintf(key, len, "%.32s %lld", json_string_value(json_object_get(e, "collective")),
             (long long)json_integer_value(json_object_get(e, "size")));
}

/* w's weights by entry_key: a hash table, so that comparing two workloads of 100,000 entries
 * costs their length, not its square. */
static json_t *weights_by_key(const json_t *w)
{
    json_t *index = json_object(), *e;
    size_t i;
    char key[64];
    json_array_foreach(json_object_get(w, "entries"), i, e) {
        entry_key(e, key, sizeof(key)); /* a pair given twice (a sweep recorded so): its sum */
        json_t *was = json_object_get(index, key);
        json_object_set_new(index, key,
                            json_real(json_number_value(json_object_get(e, "weight")) +
                                      (was ? json_real_value(was) : 0)));
    }
    return index;
}

int workload_differs(const json_t *a, const json_t *b, char *buf, size_t len)
{
    if (!a || !b) {
        snprintf(buf, len, "%s", a || b ? "all_reduce alone against a workload" : "");
        return a || b;
    }
    json_t *index[2] = {weights_by_key(a), weights_by_key(b)};
    int differs = 0;
    for (int k = 0; k < 2 && !differs; k++) {
        const json_t *x = k ? b : a, *e;
        size_t i;
        char key[64];
        json_array_foreach(json_object_get(x, "entries"), i, e) {
            entry_key(e, key, sizeof(key));
            json_t *other = json_object_get(index[!k], key);
            double w = other ? json_real_value(other) : -1;
            double v = json_real_value(json_object_get(index[k], key)); /* the pair's, summed */
            if (w >= 0 && fabs(w - v) <= 1e-6)
                continue;
            snprintf(buf, len, "%s at %lld B weighs %.6g in the %s workload and %s in the other",
                     json_string_value(json_object_get(e, "collective")),
                     (long long)json_integer_value(json_object_get(e, "size")), v,
                     k ? "new" : "recorded", w >= 0 ? "differently" : "nothing");
            differs = 1;
            break;
        }
    }
    json_decref(index[0]);
    json_decref(index[1]);
    return differs;
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
    static const char *const fields[] = {"collective", "size", "calls", "weight", NULL};
    const char *extra = json_is_object(e) ? util_json_unknown_key(e, fields) : NULL;
    struct util_buf shown = UTIL_BUF_INIT;
    if (!json_is_object(e))
        util_error("%s: entries[%zu]: an object {collective, size, weight}", path, i);
    else if (extra)
        util_error("%s: entries[%zu]: unknown field \"%s\" (an entry holds collective, size, "
                   "weight and calls)",
                   path, i, util_text_shown(&shown, extra));
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
    else if (json_object_get(e, "calls") && !(json_is_number(json_object_get(e, "calls")) &&
                                              json_number_value(json_object_get(e, "calls")) >= 0))
        util_error("%s: entries[%zu].calls: a number of 0 or more", path, i);
    else
        return json_pack("{s:O,s:O,s:f}", "collective", c, "size", s, "weight", wv);
    util_buf_release(&shown);
    return NULL;
}

static int count_ok(const json_t *v)
{
    return !v || (json_is_integer(v) && json_integer_value(v) >= 0);
}

/* The fields besides the entries, as the schema types them (what a sweep and a profile copy
 * must hold); the field that is not, or NULL. */
static const char *bad_field(const json_t *doc)
{
    const json_t *from = json_object_get(doc, "from"), *v;
    const char *f = json_string_value(from), *key;
    if (from && !(f && (!strcmp(f, "nccl-log") || !strcmp(f, "preset") || !strcmp(f, "file"))))
        return "from (nccl-log, preset or file)";
    if ((v = json_object_get(doc, "assumed")) && !json_is_boolean(v))
        return "assumed (true or false)";
    if ((v = json_object_get(doc, "preset")) && !json_is_string(v))
        return "preset (a string)";
    if ((v = json_object_get(doc, "ranks")) &&
        !(json_is_integer(v) && json_integer_value(v) >= 2 && json_integer_value(v) <= 1 << 20))
        return "ranks (an integer from 2)";
    if (!count_ok(json_object_get(doc, "ranks_seen")) || !count_ok(json_object_get(doc, "lines")) ||
        !count_ok(json_object_get(doc, "skipped")))
        return "ranks_seen, lines and skipped (integers of 0 or more)";
    size_t i;
    json_t *s;
    if ((v = json_object_get(doc, "sources")) && !json_is_array(v))
        return "sources (an array of {file, lines})";
    json_array_foreach(v, i, s)
        if (!json_is_string(json_object_get(s, "file")) || !json_object_get(s, "lines") ||
            !count_ok(json_object_get(s, "lines")) || json_object_size(s) != 2)
            return "sources (an array of {file, lines})";
    if ((v = json_object_get(doc, "totals")) && !json_is_object(v))
        return "totals (an object of {calls, bytes} per collective)";
    json_object_foreach((json_t *)v, key, s) {
        json_t *c = json_object_get(s, "calls"), *b = json_object_get(s, "bytes");
        if (json_object_size(s) != 2 || !json_is_number(c) || !json_is_number(b) ||
            json_number_value(c) < 0 || json_number_value(b) < 0)
            return "totals (an object of {calls, bytes} per collective)";
    }
    return NULL;
}

json_t *workload_clean(const json_t *doc, const char *name, int recorded)
{
    json_t *entries = json_object_get(doc, "entries"), *schema = json_object_get(doc, "schema");
    if (!json_is_string(schema) || strcmp(json_string_value(schema), "topotune/workload/1")) {
        util_error("%s: schema: \"topotune/workload/1\" expected (topotune workload writes it)",
                   name);
        return NULL;
    }
    static const char *const fields[] = {"schema",  "from",       "assumed", "preset",
                                         "sources", "lines",      "skipped", "entries",
                                         "ranks",   "ranks_seen", "totals",  NULL};
    const char *extra = util_json_unknown_key(doc, fields);
    if (extra) {
        struct util_buf shown = UTIL_BUF_INIT;
        util_error("%s: unknown field \"%s\" (docs/schemas/workload.schema.json)", name,
                   util_text_shown(&shown, extra));
        util_buf_release(&shown);
        return NULL;
    }
    const char *bad_one = bad_field(doc);
    if (bad_one) {
        util_error("%s: %s (docs/schemas/workload.schema.json)", name, bad_one);
        return NULL;
    }
    if (!json_is_array(entries) || !json_array_size(entries) ||
        json_array_size(entries) > WORKLOAD_MAX_ENTRIES) {
        util_error("%s: entries: an array of 1 to %d {collective, size, weight}", name,
                   WORKLOAD_MAX_ENTRIES);
        return NULL;
    }
    json_t *clean = json_array(), *e, *out = NULL, *seen = json_object();
    size_t i;
    int bad = 0;
    double total = 0;
    json_array_foreach(entries, i, e) {
        json_t *c = clean_entry(name, i, e);
        if (!c) {
            bad = 1;
            break;
        }
        /* one weight per (collective, size): a second is likelier a typo in a size than a sum
         * meant; a sweep recorded before that was refused keeps it (comparisons weigh a pair by
         * its sum: weights_by_key) */
        char key[64];
        entry_key(c, key, sizeof(key));
        json_t *first = json_object_get(seen, key);
        if (first && !recorded) {
            util_error("%s: entries[%zu] repeats entries[%lld]'s %s at %lld B: give each "
                       "(collective, size) once, with its weights added up",
                       name, i, (long long)json_integer_value(first),
                       json_string_value(json_object_get(c, "collective")),
                       (long long)json_integer_value(json_object_get(c, "size")));
            json_decref(c);
            bad = 1;
            break;
        }
        if (!first)
            json_object_set_new(seen, key, json_integer((json_int_t)i));
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
    double kept = 0; /* the weights scaled to add up to 1 over what is kept */
    json_array_foreach(clean, i, e)
        kept += json_real_value(json_object_get(e, "weight"));
    json_array_foreach(clean, i, e)
        if (fabs(kept - 1) > 1e-6) /* a written file's 8 digits add up to 1 within 1e-8 */
            json_object_set_new(e, "weight",
                                json_real(json_real_value(json_object_get(e, "weight")) / kept));
    if (!bad && json_array_size(clean))
        out =
            json_pack("{s:s,s:s,s:b,s:O}", "schema", "topotune/workload/1", "from",
                      preset || (from && !strcmp(from, "nccl-log")) ? from : "file", "assumed",
                      json_is_boolean(assumed) ? json_is_true(assumed) : preset, "entries", clean);
    if (out && json_object_get(doc, "ranks"))
        json_object_set(out, "ranks", json_object_get(doc, "ranks"));
    json_decref(clean);
    json_decref(seen);
    return out;
}

json_t *workload_load(const char *arg)
{
    json_t *preset = workload_preset(arg);
    struct stat st;
    if (preset && stat(arg, &st) == 0 && S_ISREG(st.st_mode)) { /* which was meant? */
        json_decref(preset);
        util_error("'%s' names both a preset and a file here: give ./%s for the file", arg, arg);
        return NULL;
    }
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
    /* an empty file's buffer is NULL, which jansson answers with "wrong arguments" */
    json_t *doc = json_loadb(util_buf_str(&text), text.len, JSON_REJECT_DUPLICATES, &jerr),
           *out = NULL;
    if (!text.len)
        util_error("%s: the file is empty: a workload is a JSON object (or give a preset: %s)", arg,
                   workload_preset_names());
    else if (!doc)
        util_error("%s: line %d: %s", arg, jerr.line, jerr.text);
    util_buf_release(&text);
    if (doc)
        out = workload_clean(doc, arg, 0);
    json_decref(doc);
    return out;
}
