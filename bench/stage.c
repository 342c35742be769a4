/* SPDX-License-Identifier: MIT */
/*
 * Stages, deadlines and the watchdog. MPI calls cannot be given a deadline and
 * a stuck NCCL kernel cannot be interrupted from its own thread, so a watchdog
 * thread ends the process (exit 4, naming the stage) when the current stage
 * outlives -T. Backends that poll give up before it, at the plain deadline.
 */
#include "bench/internal.h"
#include "util/child.h"
#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static struct {
    pthread_mutex_t lock;
    char stage[64];
    double deadline; /* monotonic seconds; 0: none */
    double grace;
    const struct bench_ctx *ctx;
    int started;
} wd = {.lock = PTHREAD_MUTEX_INITIALIZER, .stage = "init"};

void bench_stage(struct bench_ctx *c, const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&wd.lock);
    va_start(ap, fmt);
    vsnprintf(wd.stage, sizeof(wd.stage), fmt, ap);
    va_end(ap);
    wd.deadline = c->opt->timeout_s > 0 ? util_clock_s() + c->opt->timeout_s : 0;
    pthread_mutex_unlock(&wd.lock);
}

void bench_stage_done(void)
{
    pthread_mutex_lock(&wd.lock);
    wd.deadline = 0;
    snprintf(wd.stage, sizeof(wd.stage), "done");
    pthread_mutex_unlock(&wd.lock);
}

const char *bench_current_stage(void)
{
    return wd.stage;
}

int bench_deadline_passed(void)
{
    pthread_mutex_lock(&wd.lock);
    int passed = wd.deadline > 0 && util_clock_s() > wd.deadline;
    pthread_mutex_unlock(&wd.lock);
    return passed;
}

static void *watchdog(void *arg)
{
    (void)arg;
    for (;;) {
        usleep(20000);
        pthread_mutex_lock(&wd.lock);
        int fire = wd.deadline > 0 && util_clock_s() > wd.deadline + wd.grace;
        char stage[64];
        memcpy(stage, wd.stage, sizeof(stage));
        pthread_mutex_unlock(&wd.lock);
        if (!fire)
            continue;
        const struct bench_ctx *c = wd.ctx;
        char msg[256];
        snprintf(msg, sizeof(msg), "timeout: no progress for %g s in stage %s (rank %d)",
                 c->opt->timeout_s, stage, c->rank);
        util_error("%s", msg);
        bench_report_error(c, stage, msg);
        bench_report_end(c, BENCH_EXIT_TIMEOUT);
        fflush(stdout);
        /* No MPI or NCCL call is safe from here: leave at once, the launcher reaps the rest. */
        _exit(BENCH_EXIT_TIMEOUT);
    }
    return NULL;
}

int bench_watchdog_start(const struct bench_ctx *c, double grace_s)
{
    wd.ctx = c;
    wd.grace = grace_s;
    if (c->opt->timeout_s <= 0 || wd.started)
        return 0;
    pthread_t t;
    if (pthread_create(&t, NULL, watchdog, NULL))
        return -1;
    pthread_detach(t);
    wd.started = 1;
    return 0;
}
