/* SPDX-License-Identifier: MIT */
/* The --env NAME=VALUE list of a prediction (predict, expect): checked, and read by the model. */
#include "cli/cli.h"
#include "util/env.h"
#include "util/error.h"
#include "util/log.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

const char *cli_env_lookup(const char *name, void *ctx)
{
    const struct cli_env *e = ctx;
    size_t len = strlen(name);
    for (int i = e->n - 1; i >= 0; i--)
        if (strncmp(e->vars[i], name, len) == 0 && e->vars[i][len] == '=')
            return e->vars[i] + len + 1;
    return NULL;
}

static int valid_assignment(const char *s)
{
    const char *eq = strchr(s, '=');
    if (!eq || eq == s || !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z')))
        return 0;
    for (const char *p = s; p < eq; p++)
        if (!(*p == '_' || isalnum((unsigned char)*p)))
            return 0;
    for (const char *p = eq + 1; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:;=^/+-", *p))
            return 0;
    return 1;
}

int cli_env_check(struct cli_env *e, const struct util_opt_list *list)
{
    e->vars = (char **)list->items;
    e->n = list->n;
    for (int i = 0; i < e->n; i++) {
        if (!valid_assignment(e->vars[i]))
            return util_error("invalid value '%s' for --env: expected NAME=VALUE, NAME in "
                              "[A-Z_][A-Za-z0-9_]* and VALUE in [A-Za-z0-9_.,:;=^/+-]* (';' "
                              "parts per function, as NCCL_ALGO=allreduce:ring;broadcast:tree)",
                              e->vars[i]),
                   UTIL_EUSAGE;
        /* The policy of every variable a file or flag sets (util_env_refused), here too. */
        const char *eq = strchr(e->vars[i], '=');
        char name[160];
        snprintf(name, sizeof(name), "%.*s", (int)(eq - e->vars[i]), e->vars[i]);
        const char *why = util_env_refused(name);
        if (why)
            return util_error("invalid value '%s' for --env: %s cannot be set: %s", e->vars[i],
                              name, why),
                   UTIL_EUSAGE;
    }
    return 0;
}
