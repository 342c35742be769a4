/* SPDX-License-Identifier: MIT */
/* nccl.env (sourceable shell) and nccl.conf (NCCL_CONF_FILE format). */
#include "gen/internal.h"
#include "util/env.h"
#include "util/quote.h"

#include <string.h>

static int env_line(const char *name, const char *value, const char *role, void *ctx)
{
    util_buf_addf(ctx, "export %s=", name);
    util_quote_shell(ctx, value);
    util_buf_addf(ctx, "  # %s\n", role);
    return 0;
}

static int conf_line(const char *name, const char *value, const char *role, void *ctx)
{
    (void)role;
    /* the image points NCCL_CONF_FILE here for every node: a per-node value (one node's device
     * names) is each node's own, from topotune env --node */
    if (util_env_per_node(name))
        util_buf_addf(ctx,
                      "# %s: per node (its measured value is one node's): each node's own from "
                      "'topotune env --node'\n",
                      name);
    else if (strncmp(name, "NCCL_", 5)) /* NCCL sets what it reads at its own init: too late */
        util_buf_addf(ctx,
                      "# %s: not NCCL's (CUDA, MPI or PyTorch read it before NCCL would set it "
                      "from here): nccl.env, the launch scripts and the image set it\n",
                      name);
    else
        util_buf_addf(ctx, "%s=%s\n", name, value);
    return 0;
}

static int emit_env(const json_t *profile, struct util_buf *out)
{
    /* Sourced, never run: no shebang, but linters (shellcheck SC2148) and editors need the
     * dialect, and everything below is POSIX sh. */
    util_buf_adds(out, "# shellcheck shell=sh\n");
    gen_header(profile, "nccl.env", out);
    util_buf_adds(
        out,
        "# source this file; roles: system (this hardware needs it), tuning (measured speed-up)\n");
    const char *backend = json_string_value(json_object_get(profile, "backend"));
    if (json_is_true(json_object_get(profile, "defaults_best")))
        util_buf_addf(out, "# %s defaults are best here: no tuning variable is set.\n",
                      backend && !strcmp(backend, "mpi") ? "Open MPI's" : "NCCL's");
    return gen_each_var(profile, env_line, out);
}

static int emit_conf(const json_t *profile, struct util_buf *out)
{
    gen_header(profile, "nccl.conf", out);
    util_buf_adds(out, "# NCCL_CONF_FILE=<this file>; the process environment wins over it.\n");
    return gen_each_var(profile, conf_line, out);
}

const struct gen_emitter gen_emit_env = {"nccl.env", 0, emit_env};
const struct gen_emitter gen_emit_conf = {"nccl.conf", 0, emit_conf};
