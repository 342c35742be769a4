/* SPDX-License-Identifier: MIT */
/*
 * `topotune run`: the main job on this machine. Map it, pick the backend
 * (nccl with GPUs visible, else mpi, saying so), sweep the backend's default
 * space with successive halving, write the profile, and say what was chosen.
 */
#include "bench/bench.h"
#include "gen/gen.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/log.h"
#include "util/opts.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int gen_find_space(const char *backend, struct util_buf *out)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    const char *data = getenv("TOPOTUNE_DATA");
    if (n > 0)
        self[n] = '\0';
    const char *bindir = n > 0 ? dirname(self) : ".";
    for (int i = 0; i < 3; i++) {
        util_buf_reset(out);
        if (i == 0 && !data)
            continue;
        if (i == 0)
            util_buf_addf(out, "%s/profiles/spaces/%s-default.json", data, backend);
        else
            util_buf_addf(out, "%s/%s/%s-default.json", bindir,
                          i == 1 ? "../profiles/spaces" : "../share/topotune/profiles/spaces",
                          backend);
        if (access(util_buf_str(out), R_OK) == 0)
            return 0;
    }
    return -1;
}

int cmd_run(int argc, char **argv)
{
    const char *backend = NULL, *root = "profiles", *out = NULL, *space_file = NULL;
    const struct util_opt opts[] = {
        {"backend", 0, UTIL_OPT_STRING, &backend, "B",
         "nccl or mpi (default: nccl when GPUs are visible)"},
        {"profiles", 'p', UTIL_OPT_STRING, &root, "ROOT", "profile root (default ./profiles)"},
        {"out", 'o', UTIL_OPT_STRING, &out, "DIR",
         "sweep directory (default sweeps/run-CLASS-TIME)"},
        {"space", 's', UTIL_OPT_STRING, &space_file, "FILE",
         "search space (default profiles/spaces/<backend>-default.json)"},
        {0},
    };
    char **pos = calloc((size_t)argc + 1, sizeof(char *));
    int npos = 0, rc = util_opts_parse("topotune run",
                                       "[--backend B] [--profiles ROOT] [--out DIR] [--space FILE]",
                                       opts, argc, argv, pos, &npos);
    free(pos);
    if (rc)
        return rc > 0 ? 0 : 2;
    struct topo t;
    topo_init(&t);
    if (topo_load(&t, NULL))
        return 3;
    info("this machine: %d GPU(s), %d NIC(s), class %s", t.ngpus, t.nnics, t.class_id);
    if (!backend) {
        backend = t.ngpus > 0 ? "nccl" : "mpi";
        if (!t.ngpus)
            info("no GPU visible: measuring MPI_Allreduce with the mpi backend instead of NCCL");
    }
    struct util_buf space = UTIL_BUF_INIT;
    char dir[1024], np[16];
    if (space_file)
        util_buf_adds(&space, space_file);
    else if (gen_find_space(backend, &space)) {
        util_buf_release(&space);
        topo_release(&t);
        return error("cannot find profiles/spaces/%s-default.json next to topotune: set "
                     "TOPOTUNE_DATA to the "
                     "directory that holds profiles/",
                     backend),
               3;
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
