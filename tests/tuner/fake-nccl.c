/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for libnccl loaded RTLD_LOCAL (as PyTorch loads it): its logger and its
 * ncclGetVersion are invisible to dlsym(RTLD_DEFAULT), so the plugin can learn the version only
 * from the library the logger lives in. Used by the harness's local-nccl scenario.
 */
#include "tuner/nccl-tuner-abi.h"

#include <stdarg.h>
#include <stdio.h>

#ifndef FAKE_NCCL_VERSION
#define FAKE_NCCL_VERSION 22903 /* 2.29.3; another release with -DFAKE_NCCL_VERSION */
#endif

static int warnings;
static char last[512];

#ifndef FAKE_NCCL_NO_VERSION /* a static NCCL build that exports no ncclGetVersion */
int ncclGetVersion(int *version);
int ncclGetVersion(int *version)
{
    *version = FAKE_NCCL_VERSION;
    return 0;
}
#endif

void fake_nccl_log(tuner_nccl_log_level level, unsigned long subsys, const char *where, int line,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
void fake_nccl_log(tuner_nccl_log_level level, unsigned long subsys, const char *where, int line,
                   const char *fmt, ...)
{
    (void)subsys;
    (void)where;
    (void)line;
    if (level != TUNER_NCCL_LOG_WARN)
        return;
    warnings++;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last, sizeof(last), fmt, ap);
    va_end(ap);
}

/* The warnings logged so far and the last one's text. */
int fake_nccl_warnings(const char **text);
int fake_nccl_warnings(const char **text)
{
    *text = last;
    return warnings;
}
