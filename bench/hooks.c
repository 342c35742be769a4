/* SPDX-License-Identifier: MIT */
/*
 * Test-only hooks, so that tests can prove the check and the deadline work on
 * real ranks. Off unless set:
 *   TOPOTUNE_BENCH_TEST_STALL=R    rank R stops making progress at its first timed size
 *   TOPOTUNE_BENCH_TEST_STALL_INIT=R  rank R stops before the processes' first exchange
 *   TOPOTUNE_BENCH_TEST_CORRUPT=R  rank R's result is altered before it is checked
 */
#include "bench/internal.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int hook_rank(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : -1;
}

void bench_hook_stall(const struct bench_ctx *c, const char *stage)
{
    if (hook_rank(strcmp(stage, "init") == 0 ? "TOPOTUNE_BENCH_TEST_STALL_INIT"
                                             : "TOPOTUNE_BENCH_TEST_STALL") != c->rank)
        return;
    for (;;)
        pause();
}

void bench_hook_corrupt(const struct bench_ctx *c, void *buf, size_t count)
{
    if (hook_rank("TOPOTUNE_BENCH_TEST_CORRUPT") != c->rank || count == 0)
        return;
    bench_set(buf, count / 2, c->dtype, bench_get(buf, count / 2, c->dtype) + 1);
}
