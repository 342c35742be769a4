/* SPDX-License-Identifier: MIT */
/*
 * Reading NCCL's own log (NCCL_DEBUG=INFO, subsystems ENV and TUNING) for proof
 * of what it did: "NCCL INFO NCCL_ALGO set by environment to Ring" for settings
 * it applied, and "NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE
 * channel{Lo..Hi}={0..3}" for the choice per size.
 */
#include "bench/internal.h"
#include "model/model.h"
#include "util/buf.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *bench_nccl_log_path(const char *pattern, const char *host, int pid)
{
    char name[1024];
    size_t n = strcspn(host, "."); /* NCCL's host name for its log: up to the first dot */
    snprintf(name, sizeof(name), "%.*s", (int)(n < sizeof(name) ? n : sizeof(name) - 1), host);
    for (char *p = name; *p; p++)
        if (*p == '%' || *p == '/')
            *p = '-';
    struct util_buf b = UTIL_BUF_INIT;
    for (const char *p = pattern; *p && b.len < PATH_MAX; p++) {
        if (*p != '%' || !p[1])
            util_buf_add(&b, p, 1);
        else if (*++p == '%')
            util_buf_adds(&b, "%");
        else if (*p == 'h')
            util_buf_adds(&b, name);
        else if (*p == 'p')
            util_buf_addf(&b, "%d", pid);
        else /* NCCL echoes what it does not know */
            util_buf_addf(&b, "%%%c", *p);
    }
    if (b.len > PATH_MAX)
        b.data[b.len = PATH_MAX] = '\0';
    return util_buf_detach(&b);
}

json_t *bench_nccl_log_env(const char *log)
{
    json_t *env = json_object();
    static const char marker[] = " set by environment to ";
    for (const char *line = log; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *info = strstr(line, "NCCL INFO ");
        const char *set = info ? strstr(info, marker) : NULL;
        if (info && set && (size_t)(set - line) < len) {
            const char *name = info + strlen("NCCL INFO ");
            const char *value = set + strlen(marker);
            size_t nlen = (size_t)(set - name), vlen = len - (size_t)(value - line);
            while (vlen && (value[vlen - 1] == '\r' || value[vlen - 1] == ' '))
                vlen--;
            if (vlen && value[vlen - 1] == '.') /* NCCL ends integer settings with a period */
                vlen--;
            if (nlen > 0 && nlen < 128 && strncmp(name, "NCCL_", 5) == 0 && vlen < 256) {
                char key[128], val[256];
                memcpy(key, name, nlen);
                key[nlen] = '\0';
                memcpy(val, value, vlen);
                val[vlen] = '\0';
                json_object_set_new(env, key, json_string(val));
            }
        }
        line = end ? end + 1 : NULL;
    }
    return env;
}

int bench_nccl_log_choice(const char *log, int coll, size_t bytes, char algo[16], char proto[16])
{
    static const char info[] = "NCCL INFO ";
    int found = 0;
    for (const char *p = log; p && (p = strstr(p, info)); p += sizeof(info) - 1) {
        unsigned long long b;
        char func[32], a[16], pr[16];
        /* the function by the model's reading of its name (AllGather, Reduce), never a prefix */
        if (sscanf(p + sizeof(info) - 1, "%31[A-Za-z]: %llu Bytes -> Algo %15s proto %15s", func,
                   &b, a, pr) == 4 &&
            b == bytes && model_coll_parse(func) == coll) {
            snprintf(algo, 16, "%s", a);
            snprintf(proto, 16, "%s", pr);
            found = 1; /* keep the last one: the timed batch, not the first warm-up call */
        }
    }
    return found;
}
