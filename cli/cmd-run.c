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
#include "util/json.h"
#include "util/log.h"
#include "util/opts.h"
#include "util/quote.h"
#include "util/text.h"

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int find_space(const char *backend, struct util_buf *out)
{
    char rel[64];
    snprintf(rel, sizeof(rel), "spaces/%s-default.json", backend);
    return util_data_file(rel, out);
}

/* Where the profile went, and the command that explains it, as a shell takes it. */
static void say_written(const char *root, const char *dir)
{
    char path[4200];
    snprintf(path, sizeof(path), "%s/sweep.json", dir);
    json_t *sweep = util_json_load(path);
    const char *cls = json_string_value(json_object_get(sweep, "class"));
    struct util_buf show = UTIL_BUF_INIT;
    util_buf_adds(&show, "topotune profiles");
    if (strcmp(root, "profiles")) {
        util_buf_adds(&show, " --profiles ");
        util_quote_shell(&show, root);
    }
    util_buf_adds(&show, " show ");
    if (cls && util_valid_id(cls))
        util_quote_shell(&show, cls);
    else
        util_buf_adds(&show, "CLASS");
    printf("profile written under '%s' (sweep in '%s'); '%s' explains it\n", root, dir,
           util_buf_str(&show));
    util_buf_release(&show);
    json_decref(sweep);
}

int cmd_run(int argc, char **argv)
{
    const char *backend = NULL, *root = "profiles", *out = NULL, *space_file = NULL;
    int resume = 0;
    const struct util_opt opts[] = {
        {"backend", 0, UTIL_OPT_CHOICE, &backend, "B",
         "nccl or mpi (default: nccl when GPUs are visible)", .choices = "nccl mpi"},
        {"profiles", 'p', UTIL_OPT_STRING, &root, "ROOT", "profile root (default ./profiles)"},
        {"out", 'o', UTIL_OPT_STRING, &out, "DIR",
         "sweep directory (default sweeps/run-CLASS-TIME)"},
        {"space", 's', UTIL_OPT_STRING, &space_file, "FILE",
         "search space (default: the shipped spaces/<backend>-default.json)"},
        {"resume", 0, UTIL_OPT_FLAG, &resume, NULL,
         "continue the interrupted sweep in --out, then write the profile"},
        {0},
    };
    const struct util_opts_cmd cmd = {
        "topotune run", "[--backend B] [--profiles ROOT] [--out DIR] [--space FILE] [--resume]",
        opts, 0, 0};
    int npos = 0, status, rc = 0;
    if (cli_parse(&cmd, argc, argv, &npos, &status))
        return status;
    /* the profile store, checked before the sweep: a file there failed only once it had run */
    struct stat st;
    if (!stat(root, &st) && !S_ISDIR(st.st_mode))
        return util_error("--profiles '%s' is not a folder: give the folder profiles are stored "
                          "in",
                          root),
               2;
    struct topo t;
    topo_init(&t);
    if (topo_load(&t, NULL)) { /* a file standing for this node is input; hwloc failing is not */
        const char *described = getenv("TOPOTUNE_TOPOLOGY");
        return described && *described ? 2 : 3;
    }
    /* the GPUs this process may use: NVML lists every one, CUDA_VISIBLE_DEVICES may hide them
     * (run swept nccl with ranks for GPUs it could not see, every run an error) */
    /* none here (NVML lists none): none to see, whatever CUDA_VISIBLE_DEVICES names (a CI
     * runner's or a Slurm job's "0" swept nccl with a rank for a GPU that is not there) */
    int limited = 0, gpus = t.ngpus ? topo_visible_gpus(&t, &limited) : 0;
    util_info("this machine: %d GPU(s)%s, %d NIC(s), class %s", gpus,
              limited && gpus < t.ngpus ? " visible (CUDA_VISIBLE_DEVICES)" : "", t.nnics,
              t.class_id);
    if (backend && !strcmp(backend, "nccl") && !gpus) {
        util_error("--backend nccl: no GPU visible here (check nvidia-smi and "
                   "CUDA_VISIBLE_DEVICES), or measure MPI with --backend mpi");
        topo_release(&t);
        return 3;
    }
    if (resume && !out) {
        util_error("--resume continues the sweep of an earlier run: give its --out DIR");
        topo_release(&t);
        return 2;
    }
    if (!backend) {
        backend = gpus > 0 ? "nccl" : "mpi";
        if (!gpus)
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
    snprintf(np, sizeof(np), "%d", !strcmp(backend, "nccl") ? gpus : 2);
    topo_release(&t);
    char *sweep_argv[] = {"sweep", "--space",  space.data,   "--backend", (char *)backend,
                          "--np",  np,         "--strategy", "halving",   "--out",
                          dir,     "--resume", NULL};
    /* the options are run's choice: continuing them is run's too */
    struct util_buf again = UTIL_BUF_INIT;
    util_buf_adds(&again, "topotune run --resume --out ");
    util_quote_shell(&again, dir);
    util_buf_addf(&again, " --backend %s", backend); /* run's choice: GPUs may appear or go */
    if (space_file) {
        util_buf_adds(&again, " --space ");
        util_quote_shell(&again, space_file);
    }
    if (strcmp(root, "profiles")) {
        util_buf_adds(&again, " --profiles ");
        util_quote_shell(&again, root);
    }
    cli_sweep_resume_as(util_buf_str(&again));
    rc = cmd_sweep(resume ? 12 : 11, sweep_argv);
    cli_sweep_resume_as(NULL);
    util_buf_release(&again);
    util_buf_release(&space);
    if (rc > 1)
        return rc;
    char *gen_argv[] = {"gen", "--runs", dir, "--profiles", (char *)root, NULL};
    rc = cmd_gen(5, gen_argv);
    if (!rc)
        say_written(root, dir);
    return rc;
}
