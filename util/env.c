/* SPDX-License-Identifier: MIT */
/* The environment that results and profiles may record (docs/design.md, "What results carry"). */
#include "util/env.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

static const char *const families[] = {"NCCL_", "CUDA_", "OMPI_", "UCX_", "FI_", "TORCH_"};

int util_env_recordable(const char *name)
{
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
        if (strncmp(name, families[i], strlen(families[i])) == 0)
            return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

json_t *util_env_recorded(void)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **names = calloc(n + 1, sizeof(char *));
    json_t *o = json_object();
    if (!names || !o) {
        free(names);
        return o;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (util_env_recordable(environ[i]))
            names[k++] = environ[i];
    qsort(names, k, sizeof(char *), cmp_str);
    for (size_t i = 0; i < k; i++) {
        const char *eq = strchr(names[i], '=');
        if (!eq)
            continue;
        char key[256];
        size_t len =
            (size_t)(eq - names[i]) < sizeof(key) - 1 ? (size_t)(eq - names[i]) : sizeof(key) - 1;
        memcpy(key, names[i], len);
        key[len] = '\0';
        json_object_set_new(o, key, json_string(eq + 1));
    }
    free(names);
    return o;
}
