/* SPDX-License-Identifier: MIT */
/*
 * --split: many small communicators in one launch, as nccl-tests' NCCL_TESTS_SPLIT does, named
 * by hosts so that a survey can measure every node alone, or disjoint pairs of nodes, at once.
 * Each group runs the benchmark on its own communicator; after each size, the first process of
 * every group sends its lines to world process 0, which writes one size event per group.
 */
#include "bench/internal.h"
#include "util/log.h"
#include "util/mem.h"

#include <stdlib.h>
#include <string.h>

static int host_of(const json_t *groups, const char *host)
{
    size_t g, i;
    json_t *list, *h;
    json_array_foreach(groups, g, list)
        json_array_foreach(list, i, h)
            if (!strcmp(json_string_value(h), host))
                return (int)g;
    return -1;
}

static int host_of_list(const json_t *list, const json_t *host)
{
    size_t i;
    json_t *h;
    json_array_foreach(list, i, h)
        if (json_equal(h, host))
            return (int)i;
    return -1;
}

static int in_launch(const struct bench_ctx *c, const char *host)
{
    size_t i;
    json_t *h;
    json_array_foreach(c->hosts, i, h)
        if (!strcmp(json_string_value(h), host))
            return 1;
    return 0;
}

json_t *bench_split_groups(const struct bench_ctx *c, const char *spec, int *mine)
{
    json_t *groups = json_array();
    const char *me = json_string_value(json_array_get(c->hosts, (size_t)c->world_proc));
    size_t i;
    json_t *h;
    if (!strcmp(spec, "node")) {
        json_array_foreach(c->hosts, i, h)
            if (host_of(groups, json_string_value(h)) < 0)
                json_array_append_new(groups, json_pack("[O]", h));
        *mine = host_of(groups, me);
        return groups;
    }
    for (const char *g = spec; *g; g += strcspn(g, ";"), g += *g == ';') {
        json_t *list = json_array();
        size_t glen = strcspn(g, ";");
        for (const char *p = g; p < g + glen; p += strcspn(p, ",;"), p += *p == ',') {
            char host[256];
            size_t len = strcspn(p, ",;");
            snprintf(host, sizeof(host), "%.*s", (int)len, p);
            if (!len)
                continue;
            if (host_of(groups, host) >= 0 || host_of(list, host) >= 0 || !in_launch(c, host)) {
                util_error("--split: host '%s' %s", host,
                           in_launch(c, host) ? "is in two groups"
                                              : "runs no process of this launch");
                json_decref(list);
                json_decref(groups);
                return NULL;
            }
            json_array_append_new(list, json_string(host));
        }
        if (json_array_size(list))
            json_array_append(groups, list);
        json_decref(list);
    }
    if (!json_array_size(groups)) {
        util_error("--split '%s' names no group of hosts", spec);
        json_decref(groups);
        return NULL;
    }
    *mine = host_of(groups, me);
    return groups;
}

int bench_split_comm(struct bench_ctx *c)
{
    int *colors = util_xcalloc((size_t)c->world_nprocs, sizeof(int));
    MPI_Allgather(&c->group, 1, MPI_INT, colors, 1, MPI_INT, c->world);
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(c->world, c->group >= 0 ? c->group : MPI_UNDEFINED, c->world_proc, &sub);
    if (c->group >= 0) {
        c->comm = sub;
        MPI_Comm_rank(sub, &c->proc);
        MPI_Comm_size(sub, &c->nprocs);
        c->rank = c->proc * c->opt->ngpus;
        c->nranks = c->nprocs * c->opt->ngpus;
        json_t *mine = json_array(), *h; /* the group's own hosts: its node count */
        size_t i;
        json_array_foreach(c->hosts, i, h)
            if (colors[i] == c->group && host_of_list(mine, h) < 0)
                json_array_append(mine, h);
        c->nodes = (int)json_array_size(mine);
        json_decref(mine);
    }
    free(colors);
    return 0;
}

/* What process 0 of each group sends per size: its own size and count, which groups of other
 * rank counts round otherwise (all_gather's parts). */
enum { F_GROUP, F_BYTES, F_COUNT, F_OOP, F_IP = F_OOP + 4, F_FIELDS = F_IP + 4 };

static void pack(double *v, const struct bench_line *l)
{
    v[0] = l->time_us;
    v[1] = l->algbw;
    v[2] = l->busbw;
    v[3] = (double)l->wrong;
}

static void unpack(const double *v, struct bench_line *l)
{
    memset(l, 0, sizeof(*l));
    l->time_us = v[0];
    l->algbw = v[1];
    l->busbw = v[2];
    l->wrong = (long long)v[3];
}

void bench_split_report(struct bench_ctx *c, size_t bytes, size_t count,
                        const struct bench_line *oop, const struct bench_line *ip)
{
    double mine[F_FIELDS] = {-1};
    if (c->group >= 0 && c->proc == 0 && oop && ip) {
        mine[F_GROUP] = c->group;
        mine[F_BYTES] = (double)bytes;
        mine[F_COUNT] = (double)count;
        pack(mine + F_OOP, oop);
        pack(mine + F_IP, ip);
    }
    double *all = c->world_proc == 0 ? util_xcalloc((size_t)c->world_nprocs, sizeof(mine)) : NULL;
    /* a group done with this size, and a process in no group, waits for the slowest group: its
     * own -T restarts here, so only a group that itself stalls ends the launch */
    bench_stage(c, "size:%zu", bytes);
    MPI_Gather(mine, F_FIELDS, MPI_DOUBLE, all, F_FIELDS, MPI_DOUBLE, 0, c->world);
    for (int p = 0; all && p < c->world_nprocs; p++) {
        const double *v = all + (size_t)p * F_FIELDS;
        if (v[F_GROUP] < 0)
            continue;
        struct bench_line l[2];
        unpack(v + F_OOP, &l[0]);
        unpack(v + F_IP, &l[1]);
        c->report_group = (int)v[F_GROUP] + 1;
        bench_report_size(c, (size_t)v[F_BYTES], (size_t)v[F_COUNT], &l[0], &l[1]);
    }
    c->report_group = 0;
    free(all);
}
