/* SPDX-License-Identifier: MIT */
/*
 * `topotune run`: the main job on this machine. Map it, pick the backend
 * (nccl with GPUs visible, else mpi, saying so), sweep the backend's default
 * space with successive halving, write the profile, and say what was chosen.
 */
#include "bench/bench.h"
#include "cli/cli.h"
#include "gen/gen.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/file.h"
#include "util/log.h"
#include "util/opts.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int find_space(const char *backend, struct util_buf *out)
{
    char rel[64];
    snprintf(rel, sizeof(rel), "spaces/%s-default.json", backend);
    return util_data_file(rel, out);
}

int cmd_run(int argc, char **argv)
{
    const char *backend = NULL, *root = "profiles", *out = NULL, *space_file = NULL;
    const struct util_opt opts[] = {
        {"backend", 0, UTIL_OPT_CHOICE, &backend, "B",
         "nccl or mpi (default: nccl when GPUs are visible)", .choices = "nccl mpi"},
        {"profiles", 'p', UTIL_OPT_STRING, &root, "ROOT", "profile root (default ./profiles)"},
        {"out", 'o', UTIL_OPT_STRING, &out, "DIR",
         "sweep directory (default sweeps/run-CLASS-TIME)"},
        {"space", 's', UTIL_OPT_STRING, &space_file, "FILE",
         "search space (default: the shipped spaces/<backend>-default.json)"},
        {0},
    };
    const struct util_opts_cmd cmd = {
        "topotune run", "[--backend B] [--profiles ROOT] [--out DIR] [--space FILE]", opts, 0, 0};
    int npos = 0, status, rc = 0;
    if (cli_parse(&cmd, argc, argv, &npos, &status))
        return status;
    struct topo t;
    topo_init(&t);
    if (topo_load(&t, NULL))
        return 3;
    util_info("this machine: %d GPU(s), %d NIC(s), class %s", t.ngpus, t.nnics, t.class_id);
    if (!backend) {
        backend = t.ngpus > 0 ? "nccl" : "mpi";
        if (!t.ngpus)
            util_info(
                "no GPU visible: measuring MPI_Allreduce with the mpi backend instead of NCCL");
    }
    struct util_buf space = UTIL_BUF_INIT;
    char dir[1024], np[16];
    if (space_file)
        util_buf_adds(&space, space_file);
    else if (find_space(backend, &space)) {
        util_error("cannot find the shipped space spaces/%s-default.json (looked at %s): reinstall "
                   "topotune, set TOPOTUNE_DATA to its data directory, or give --space",
                   backend, util_buf_str(&space));
        util_buf_release(&space);
        topo_release(&t);
        return 3;
    }
    if (out) {
        snprintf(dir, sizeof(dir), "%s", out);
    } else {
        char stamp[32];
        time_t now = time(NULL);
        strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", gmtime(&now));
        snprintf(dir, sizeof(dir), "sweeps/run-%s-%s", t.class_id, stamp);
    }
    /* MPI: two ranks (this machine's cores); NCCL: a rank per GPU. */
    snprintf(np, sizeof(np), "%d", !strcmp(backend, "nccl") ? t.ngpus : 2);
    topo_release(&t);
    char *sweep_argv[] = {"sweep",         "--space", space.data, "--backend",
                          (char *)backend, "--np",    np,         "--strategy",
                          "halving",       "--out",   dir,        NULL};
    rc = cmd_sweep(11, sweep_argv);
    util_buf_release(&space);
    if (rc > 1)
        return rc;
    char *gen_argv[] = {"gen", "--runs", dir, "--profiles", (char *)root, NULL};
    rc = cmd_gen(5, gen_argv);
    if (!rc)
        printf("profile written under '%s' (sweep in '%s'); 'topotune profiles show CLASS' "
               "explains it\n",
               root, dir);
    return rc;
}
