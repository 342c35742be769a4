/* SPDX-License-Identifier: MIT */
/*
 * The hardware catalog: profiles/hardware/gpus.json and nics.json, compiled
 * into the program (CMake writes them into catalog-data.c) so that specs work
 * wherever topotune runs. Parsed once, on first use.
 */
#include "topo/internal.h"
#include "util/buf.h"

#include <string.h>

extern const char topo_catalog_gpus_json[];
extern const char topo_catalog_nics_json[];

static json_t *load(const char *text, const char *key, json_t **cache)
{
    if (!*cache) {
        json_t *doc = json_loads(text, 0, NULL);
        *cache = doc ? json_incref(json_object_get(doc, key)) : json_array();
        json_decref(doc);
    }
    return *cache;
}

static json_t *gpus(void)
{
    static json_t *cache;
    return load(topo_catalog_gpus_json, "gpus", &cache);
}

static json_t *nics(void)
{
    static json_t *cache;
    return load(topo_catalog_nics_json, "nics", &cache);
}

static json_t *find(json_t *list, const char *name)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e) {
        const char *n = json_string_value(json_object_get(e, "name"));
        if (name && n && strcmp(n, name) == 0)
            return e;
    }
    return NULL;
}

static const char *names(json_t *list, struct util_buf *b)
{
    if (!b->len) {
        size_t i;
        json_t *e;
        json_array_foreach(list, i, e)
            util_buf_addf(b, "%s%s", i ? ", " : "", json_string_value(json_object_get(e, "name")));
    }
    return util_buf_str(b);
}

json_t *topo_catalog_gpu(const char *name)
{
    return find(gpus(), name);
}

json_t *topo_catalog_nic(const char *name)
{
    return find(nics(), name);
}

const char *topo_catalog_gpu_names(void)
{
    static struct util_buf b;
    return names(gpus(), &b);
}

const char *topo_catalog_nic_names(void)
{
    static struct util_buf b;
    return names(nics(), &b);
}
