/* SPDX-License-Identifier: MIT */
/* The environment that results and profiles may record (docs/design.md, "What results carry"). */
#include "util/env.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

static const char *const families[] = {"NCCL_", "CUDA_", "OMPI_", "UCX_", "FI_", "TORCH_"};

int util_env_recordable(const char *name)
{
    for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
        if (strncmp(name, families[i], strlen(families[i])) == 0)
            return 1;
    return 0;
}

static const char *const allowed_families[] = {"NCCL_",
                                               "CUDA_",
                                               "UCX_",
                                               "FI_",
                                               "TORCH_NCCL_",
                                               "TORCH_DISTRIBUTED_",
                                               "OMPI_MCA_btl",
                                               "OMPI_MCA_pml",
                                               "OMPI_MCA_mtl",
                                               "OMPI_MCA_coll",
                                               "OMPI_MCA_osc",
                                               "OMPI_MCA_oob_tcp_",
                                               "OMPI_MCA_hwloc_base_",
                                               "OMPI_MCA_rmaps_base_"};

/* Words that make a variable load code, run a command, search a path or touch a file. */
static const struct {
    const char *word, *why;
} dangers[] = {
    {"PRELOAD", "it makes the dynamic loader load a library"},
    {"PLUGIN", "it loads a library"},
    {"INJECTION", "it loads a library"},
    {"LIBRARY", "it loads a library"},
    {"AGENT", "it names a program to run"},
    {"EXEC", "it names a program to run"},
    {"PATH", "it is a search path"},
    {"FILE", "it names a file to read or write (the tool sets NCCL_DEBUG_FILE itself)"},
    {"DUMP", "it writes a file"},
    {"_DIR", "it names a directory to load from or write to"},
};

static int contains_word(const char *name, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = name; *p; p++)
        if (strncasecmp(p, word, n) == 0)
            return 1;
    return 0;
}

const char *util_env_refused(const char *name)
{
    size_t len = strlen(name);
    if (!len || len > 128 || !(name[0] == '_' || (name[0] >= 'A' && name[0] <= 'Z')))
        return "a variable name is [A-Z_][A-Za-z0-9_]*, at most 128 characters";
    for (const char *p = name; *p; p++)
        if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
              (*p >= '0' && *p <= '9')))
            return "a variable name is [A-Z_][A-Za-z0-9_]*, at most 128 characters";
    if (strncmp(name, "LD_", 3) == 0)
        return "the dynamic loader reads it";
    for (size_t i = 0; i < sizeof(dangers) / sizeof(dangers[0]); i++)
        if (contains_word(name, dangers[i].word))
            return dangers[i].why;
    for (size_t i = 0; i < sizeof(allowed_families) / sizeof(allowed_families[0]); i++)
        if (strncmp(name, allowed_families[i], strlen(allowed_families[i])) == 0)
            return NULL;
    if (!strcmp(name, "BASH_ENV") || !strcmp(name, "ENV") || !strcmp(name, "SHELLOPTS") ||
        !strcmp(name, "BASHOPTS") || !strcmp(name, "PS4") || !strcmp(name, "PROMPT_COMMAND") ||
        !strcmp(name, "IFS"))
        return "a shell reads it at startup";
    return "not a family topotune tunes (NCCL_, CUDA_, UCX_, FI_, TORCH_NCCL_, "
           "TORCH_DISTRIBUTED_, OMPI_MCA_ of btl, pml, mtl, coll, osc, oob_tcp, hwloc_base, "
           "rmaps_base)";
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
