/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for search spaces as the sweep takes them: the loader and
 * its checks, pruning against a topology whose interface names are hostile,
 * the count and expansion into configurations (under a small limit, so one
 * input stays fast), each configuration's environment and the last gate
 * before a child.
 */
#include "sweep/sweep.h"
#include "topo/topo.h"
#include "util/log.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void hostile_topology(struct topo *t)
{
    static const char *const names[] = {"eth0", "ib0", "x;reboot", "ib\x1b[31m0", "", "eth0"};
    int n = (int)(sizeof(names) / sizeof(names[0]));
    topo_init(t);
    t->nics = calloc((size_t)n, sizeof(*t->nics));
    if (!t->nics)
        return;
    t->nnics = n;
    for (int i = 0; i < n; i++) {
        t->nics[i].name = strdup(names[i]);
        t->nics[i].netdev = strdup(names[i]);
        t->nics[i].kind = TOPO_NIC_IB;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    static struct topo t;
    if (!ready) {
        util_log_init("fuzz", UTIL_LOG_QUIET);
        hostile_topology(&t);
        ready = 1;
    }
    struct sweep_space s;
    if (sweep_space_load_buffer(&s, "fuzz-input", (const char *)data, size) == 0) {
        s.max_configs = 2000;
        json_decref(sweep_space_prune(&s, &t, 2));
        json_t *configs = sweep_space_configs(&s), *c;
        size_t i;
        json_array_foreach(configs, i, c)
            json_decref(sweep_space_env(&s, c));
        if (configs && sweep_configs_check(&s, configs))
            abort(); /* the loader let through what the gate refuses */
        json_decref(configs);
    }
    sweep_space_release(&s);
    return 0;
}
