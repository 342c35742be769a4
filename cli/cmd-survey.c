/* SPDX-License-Identifier: MIT */
/*
 * `topotune survey`: which nodes and links of a cluster are not like the others (survey/survey.h
 * has the plan). The nodes come from --hosts, --hostfile, the Slurm allocation, or a simulated
 * cluster file (--backend sim --cluster FILE).
 */
#include "bench/bench.h"
#include "cli/cli.h"
#include "gen/gen.h"
#include "launch/launch.h"
#include "ops/ops.h"
#include "survey/survey.h"
#include "sweep/sweep.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/opts.h"
#include "util/text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The options as given; numbers left 0 take their defaults (survey_defaults, setup). */
struct survey_opts {
    const char *hosts, *hostfile, *out, *backend, *cluster, *pairs, *launcher, *expect, *metrics;
    const char *profiles; /* --kubernetes: the profile store, for each class's version label */
    size_t size;
    int matchings, seed, ppn, iters, max_groups;
    double tolerance, timeout;
    int allocation, resume;
    int drain, resume_nodes, apply; /* Slurm */
    int kubernetes;
};

static const char usage[] =
    "--hosts H1,H2,... | --hostfile FILE | --allocation | --backend sim --cluster FILE\n"
    "       --out DIR [--backend nccl|mpi|sim] [--size SIZE] [--pairs matchings|all]\n"
    "       [--matchings N] [--seed S] [--tolerance X] [--ppn N] [--iters N] [--timeout S]\n"
    "       [--groups-per-launch N] [--launcher mpirun|srun] [--expect SPEC] [--resume]\n"
    "       [--drain] [--resume-nodes] [--kubernetes [--profiles ROOT]] [--apply]\n"
    "       [--metrics FILE]\n\n"
    "Characterizes a cluster: maps every node into node classes, measures all_reduce busbw of\n"
    "every node alone (one launch, a communicator per node), then of disjoint node pairs in\n"
    "rounds (random perfect matchings, then focused rounds on the suspects), then the whole\n"
    "cluster, and names what is not like the rest of its class: a node slow or failing alone, a\n"
    "node slow or failing with every partner (its NIC or path), a link slow or failing while\n"
    "both of its nodes are fine elsewhere, a node that does not answer. Writes DIR/survey.json,\n"
    "healthy.hostfile, excluded.txt, report.txt, report.md and report.html.\n"
    "Exit: 0 nothing named, 1 something named (see excluded.txt and the report; a class too\n"
    "spread to judge included), 2 usage or input, 3 the survey could not run (or, with --apply,\n"
    "Slurm did not take a command), 130/143 interrupted (--resume continues).\n"
    "Slurm: --drain prints the `scontrol update ... state=drain reason=\"topotune: ...\"` command\n"
    "of every node a node or link verdict names, --resume-nodes the `state=resume` of every node\n"
    "topotune drained that this survey clears; --apply runs them. A node an administrator drained\n"
    "is left as it is, and a class too spread to judge drains nothing.\n"
    "Kubernetes: --kubernetes prints the `kubectl label` (class, profile, health) and `kubectl\n"
    "taint` (NoSchedule on a node a node or link verdict names; removed from a node no verdict\n"
    "names) commands of every node; --apply runs them.";

#define HOST_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_"

/* --hostfile: one host per line (mpirun's "host slots=N" and '#' comments allowed; indents, CRLF
 * line ends and blank lines too). */
static int read_hostfile(const char *path, struct util_buf *hosts)
{
    struct util_buf text = UTIL_BUF_INIT;
    const char *why = NULL;
    /* a file the user names: a link to it is followed, as for every other named input (a
     * FIFO or device is still refused) */
    if (util_file_read_input(path, 1, 16 << 20, &text, &why))
        return util_error("cannot read --hostfile '%s': %s", path, why ? why : "?"),
               util_buf_release(&text), -1;
    int n = 0, line = 0;
    for (char *p = text.data; p && p < text.data + text.len; line++) {
        char *nl = memchr(p, '\n', (size_t)(text.data + text.len - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(text.data + text.len - p), at = 0;
        while (len && (p[len - 1] == '\r' || p[len - 1] == ' ' || p[len - 1] == '\t'))
            len--; /* CRLF line ends, trailing blanks */
        while (at < len && (p[at] == ' ' || p[at] == '\t'))
            at++; /* indented names */
        size_t name = 0;
        while (at + name < len && p[at + name] && strchr(HOST_CHARS, p[at + name]))
            name++;
        char next = at + name < len ? p[at + name] : ' ';
        /* a name starts with a letter or digit: "-x" would be an option to mpirun or kubectl */
        if (name && name < 256 && !strchr("._-", p[at]) &&
            (next == ' ' || next == '\t' || next == '#'))
            util_buf_addf(hosts, "%s%.*s", n++ ? "," : "", (int)name, p + at);
        else if (at < len && p[at] != '#')
            return util_error("%s:%d: not a host name (one per line, [A-Za-z0-9._-], a letter or "
                              "digit first)",
                              path, line + 1),
                   util_buf_release(&text), -1;
        p = nl ? nl + 1 : NULL;
    }
    util_buf_release(&text);
    if (!n)
        return util_error("%s: no host in the file", path), -1;
    return 0;
}

/* The nodes of a host list (--hosts, or a --hostfile's lines joined), checked as every
 * command's --hosts is (launch_check_names). */
static int nodes_from(struct survey *s, const char *hosts)
{
    if (launch_check_names(hosts ? hosts : ""))
        return -1;
    s->nnodes = launch_count_hosts(hosts);
    s->nodes = util_xcalloc((size_t)s->nnodes, sizeof(*s->nodes));
    int i = 0;
    for (const char *p = hosts; p && *p; p += strcspn(p, ","), p += *p == ',')
        if (strcspn(p, ","))
            s->nodes[i++].host = util_xstrndup(p, strcspn(p, ","));
    return 0;
}

/* DIR/.lock for the survey's life: a second survey of DIR is refused, naming the holder. */
static int lock_dir(const char *dir)
{
    char holder[32];
    int fd = util_lock_dir(dir, holder, sizeof(holder));
    if (fd < 0 && errno == EWOULDBLOCK)
        return util_error("'%s' is in use by another survey (pid %s): wait for it, or give another "
                          "--out",
                          dir, holder);
    if (fd < 0)
        return util_error("cannot open or lock '%s/.lock': %s", dir, strerror(errno));
    return fd;
}

static int parse(int argc, char **argv, struct survey_opts *o)
{
    const struct util_opt opts[] = {
        {"hosts", 0, UTIL_OPT_STRING, &o->hosts, "LIST", "the nodes, comma-separated"},
        {"hostfile", 0, UTIL_OPT_STRING, &o->hostfile, "FILE", "the nodes, one per line"},
        {"allocation", 0, UTIL_OPT_FLAG, &o->allocation, NULL,
         "every node of the Slurm allocation this runs in"},
        {"launcher", 0, UTIL_OPT_CHOICE, &o->launcher, "L",
         "mpirun (default; inside Slurm it starts its daemons through Slurm) or srun (needs an "
         "MPI built with Slurm's PMI)",
         .choices = "mpirun srun"},
        {"out", 'o', UTIL_OPT_STRING, &o->out, "DIR", "where the survey's files go (required)"},
        {"backend", 0, UTIL_OPT_CHOICE, &o->backend, "B", "nccl (default), mpi or sim",
         .choices = "nccl mpi sim"},
        {"cluster", 0, UTIL_OPT_STRING, &o->cluster, "FILE",
         "sim: the simulated cluster (topotune/sim-cluster/1)"},
        {"size", 0, UTIL_OPT_SIZE, &o->size, "SIZE", "bytes per all_reduce (default 32M)", .min = 1,
         .max = 17179869184.0},
        {"pairs", 0, UTIL_OPT_CHOICE, &o->pairs, "P",
         "matchings (default: random matchings, then focused rounds) or all (n-1 rounds)",
         .choices = "matchings all"},
        {"matchings", 0, UTIL_OPT_INT, &o->matchings, "N",
         "random perfect matchings before the focused rounds (default 3)", .min = 1, .max = 16},
        {"seed", 0, UTIL_OPT_INT, &o->seed, "S", "the matchings' seed (default 1)", .min = 1,
         .max = 2147483647},
        {"tolerance", 0, UTIL_OPT_DOUBLE, &o->tolerance, "X",
         "least shortfall below the class median called slow (default 0.15)", .min = 0.01,
         .max = 0.9},
        {"groups-per-launch", 0, UTIL_OPT_INT, &o->max_groups, "N",
         "measure at most N nodes or pairs at once (default: a whole round); for a fabric whose "
         "pairs would share links",
         .min = 1, .max = 1 << 20},
        {"ppn", 0, UTIL_OPT_INT, &o->ppn, "N", "ranks per node (default 2; nccl: 1 per GPU)",
         .min = 1, .max = 256},
        {"iters", 0, UTIL_OPT_INT, &o->iters, "N", "timed operations per launch (default 20)",
         .min = 1, .max = 100000},
        {"timeout", 0, UTIL_OPT_DOUBLE, &o->timeout, "S",
         "a wait's deadline in the benchmark, and the map's (default 60)", .min = 1, .max = 86400},
        {"expect", 0, UTIL_OPT_STRING, &o->expect, "SPEC",
         "the hardware every node should be (a spec or topology file, as --input takes): a node "
         "of another class is named node-differs"},
        {"resume", 0, UTIL_OPT_FLAG, &o->resume, NULL,
         "continue the survey in --out: recorded launches are not made again"},
        {"drain", 0, UTIL_OPT_FLAG, &o->drain, NULL,
         "print the scontrol commands that drain the nodes a node or link verdict names"},
        {"resume-nodes", 0, UTIL_OPT_FLAG, &o->resume_nodes, NULL,
         "print the scontrol commands that resume the nodes topotune drained and this survey "
         "clears (reads sinfo)"},
        {"metrics", 0, UTIL_OPT_STRING, &o->metrics, "FILE",
         "also write the survey's Prometheus metrics there (node_exporter's textfile collector: "
         "a .prom file in its folder; - for stdout)"},
        {"kubernetes", 0, UTIL_OPT_FLAG, &o->kubernetes, NULL,
         "print the kubectl label and taint commands of every node"},
        {"profiles", 0, UTIL_OPT_STRING, &o->profiles, "ROOT",
         "--kubernetes: the profile store (gen's ROOT): each class's latest version as a label"},
        {"apply", 0, UTIL_OPT_FLAG, &o->apply, NULL,
         "run the --drain, --resume-nodes and --kubernetes commands (default: print only)"},
        {0},
    };
    const struct util_opts_cmd cmd = {"topotune survey", usage, opts, 0, 0};
    int npos = 0;
    return util_opts_parse(&cmd, argc, argv, &npos);
}

static int setup(struct survey *s, const struct survey_opts *o, struct survey_launch *l)
{
    s->backend = o->backend ? o->backend : "nccl";
    if (!o->out || !o->out[0])
        return util_error("topotune survey needs --out DIR (where survey.json and the reports go)"),
               2;
    if (strlen(o->out) > 1000)
        return util_error("--out: a directory name of at most 1000 characters"), 2;
    int given = !!o->hosts + !!o->hostfile + o->allocation + !!o->cluster;
    if (given != 1)
        return util_error(
                   given ? "give one of --hosts, --hostfile, --allocation and --cluster"
                         : "topotune survey needs the nodes: --hosts, --hostfile, --allocation "
                           "(inside Slurm) or, with --backend sim, --cluster FILE"),
               2;
    if (!!o->cluster != !strcmp(s->backend, "sim"))
        return util_error(o->cluster
                              ? "--cluster is the simulated cluster of --backend sim"
                              : "--backend sim surveys a simulated cluster: give --cluster FILE"),
               2;
    if (launch_check_nodes(o->hosts, o->allocation))
        return 2;
    if (o->resume_nodes && o->allocation)
        util_warning(
            "--resume-nodes with --allocation: Slurm allocates no drained node, so this "
            "survey resumes none drained before its job; survey the drained ones by "
            "name to resume them (sinfo -h -N -t drain -o %%N | sort -u >drained.txt, then "
            "--hostfile drained.txt)");
    if (o->apply && !o->drain && !o->resume_nodes && !o->kubernetes)
        return util_error("--apply runs what --drain, --resume-nodes or --kubernetes print: give "
                          "one of them"),
               2;
    if (o->metrics && !strcmp(o->metrics, "-") && (o->drain || o->resume_nodes || o->kubernetes))
        return util_error("--metrics -: standard output holds the scontrol or kubectl commands: "
                          "give a file"),
               2;
    if (o->profiles && !o->kubernetes)
        return util_error("--profiles names the store --kubernetes labels versions from"), 2;
    /* a --metrics FILE the writer would refuse is said before the survey runs, not after every
     * launch; a folder not there yet is left to it (it may be the --out the survey makes) */
    if (o->metrics && strcmp(o->metrics, "-") && util_file_replaceable(o->metrics))
        return 2;
    s->size = o->size ? o->size : 32u << 20;
    s->all_pairs = o->pairs && !strcmp(o->pairs, "all");
    s->matchings = o->matchings;
    s->seed = (unsigned)o->seed;
    s->tolerance = o->tolerance;
    s->max_groups = o->max_groups;
    *l = (struct survey_launch){o->launcher ? o->launcher : "mpirun", NULL, 2, 20, 5, 60};
    if (!strcmp(l->launcher, "srun") && !launch_in_slurm())
        return util_error("--launcher srun: not inside a Slurm allocation (no SLURM_JOB_ID)"), 2;
    l->ppn = o->ppn ? o->ppn : !strcmp(s->backend, "nccl") ? 0 : 2;
    l->iters = o->iters ? o->iters : l->iters;
    l->timeout_s = o->timeout ? o->timeout : l->timeout_s;
    s->dir = o->out;
    s->resume = o->resume;
    survey_defaults(s);
    return 0;
}

/*
 * The options the numbers depend on, recorded with every launch (survey.h: settings): --resume
 * refuses a record measured with others. The deadline is not one: a longer one may rescue a
 * launch.
 */
static json_t *settings_of(const struct survey *s, const struct survey_launch *l)
{
    json_t *o = json_pack("{s:s,s:I,s:i,s:i,s:s,s:f}", "backend", s->backend, "size",
                          (json_int_t)s->size, "seed", (int)s->seed, "matchings", s->matchings,
                          "pairs", s->all_pairs ? "all" : "matchings", "tolerance", s->tolerance);
    json_object_set_new(o, "groups-per-launch",
                        s->max_groups ? json_integer(s->max_groups) : json_null());
    if (strcmp(s->backend, "sim")) { /* how the real launches ran */
        json_object_set_new(o, "launcher", json_string(l->launcher));
        json_object_set_new(o, "ppn", l->ppn ? json_integer(l->ppn) : json_string("one per GPU"));
        json_object_set_new(o, "iters", json_integer(l->iters));
    }
    return o;
}

/*
 * --drain, --resume-nodes: Slurm's commands for the survey just written (its survey.json), printed
 * on stdout and, with --apply, run. Slurm's node states (sinfo) tell an administrator's drain from
 * topotune's: needed to resume or to act; a dry run of drains does without them, saying so.
 * 0, or 3 when Slurm could not be read or did not take a command.
 */
static int slurm_act(const struct survey_opts *o, const json_t *doc)
{
    return ops_slurm_step(doc, o->drain, o->resume_nodes, o->apply, o->out, stdout, 30) ? 3 : 0;
}

/* The latest profile version of each class the survey mapped, from ROOT/<class>/latest. */
static json_t *versions_of(const json_t *doc, const char *root)
{
    json_t *versions = json_object(), *n;
    size_t i;
    json_array_foreach(root ? json_object_get(doc, "nodes") : NULL, i, n) {
        const char *cls = json_string_value(json_object_get(n, "class"));
        /* a class id is a path component here: one from a survey.json made elsewhere is checked */
        if (!util_valid_id(cls) || json_object_get(versions, cls))
            continue;
        char path[4200], dir[4400], file[4600];
        snprintf(path, sizeof(path), "%s/%s", root, cls);
        /* gen's link to a version, nothing else planted there (said, and no label) */
        json_t *p = access(path, F_OK) || gen_latest_dir(path, dir, sizeof(dir)) <= 0
                        ? NULL
                        : gen_profile_read(dir, file, sizeof(file));
        json_t *v = json_object_get(p, "version");
        if (json_is_integer(v))
            json_object_set_new(versions, cls,
                                json_sprintf("v%" JSON_INTEGER_FORMAT, json_integer_value(v)));
        json_decref(p);
    }
    return versions;
}

/* --kubernetes: the kubectl commands for the survey just written. 0, or 3. */
static int kubernetes_act(const struct survey_opts *o, const json_t *doc)
{
    struct util_buf path = UTIL_BUF_INIT;
    json_t *versions = versions_of(doc, o->profiles);
    json_t *notes, *actions = ops_k8s_plan(doc, versions, &notes), *n;
    size_t i;
    json_array_foreach(notes, i, n)
        util_info("%s", json_string_value(n));
    json_decref(notes);
    util_buf_addf(&path, "%s/kubectl.log", o->out);
    int rc = ops_k8s_act(actions, o->apply, stdout, util_buf_str(&path), 30) ? 3 : 0;
    json_decref(actions);
    json_decref(versions);
    util_buf_release(&path);
    return rc;
}

/* --metrics FILE: the survey just written as Prometheus metrics. 0 or 3. */
static int write_metrics(const struct survey_opts *o, const json_t *doc)
{
    struct ops_metrics m;
    ops_metrics_init(&m);
    ops_metrics_survey(&m, doc);
    int rc = ops_metrics_write(&m, o->metrics) ? 3 : 0;
    ops_metrics_release(&m);
    return rc;
}

/*
 * What operators' tools take from the survey just written, read back from its survey.json (the
 * documented file: what a survey made elsewhere would give): metrics, Slurm's and Kubernetes'
 * commands. 0, or 3 when one could not be written or run.
 */
static int operators(const struct survey_opts *o)
{
    if (!o->metrics && !o->drain && !o->resume_nodes && !o->kubernetes)
        return 0;
    struct util_buf path = UTIL_BUF_INIT;
    util_buf_addf(&path, "%s/survey.json", o->out);
    json_error_t err;
    json_t *doc = json_load_file(util_buf_str(&path), 0, &err);
    util_buf_release(&path);
    if (!doc)
        return util_error("cannot read back '%s/survey.json': %s", o->out, err.text), 3;
    int rc = 0;
    if (o->metrics && write_metrics(o, doc))
        rc = 3;
    if ((o->drain || o->resume_nodes) && slurm_act(o, doc))
        rc = 3;
    if (o->kubernetes && kubernetes_act(o, doc))
        rc = 3;
    json_decref(doc);
    return rc;
}

/* --expect: the class every node should be, {id, key}, from a file as `topo --input` reads. */
static int expect_of(struct survey *s, const char *file)
{
    struct topo t;
    topo_init(&t);
    int rc = topo_load(&t, file);
    if (!rc && t.class_id && t.class_key)
        s->expect = json_pack("{s:s,s:O}", "id", t.class_id, "key", t.class_key);
    else if (!rc)
        rc = util_error("--expect '%s': no node class (no GPU?): give the spec or topology of the "
                        "nodes the cluster should have",
                        file);
    topo_release(&t);
    return rc ? -1 : 0;
}

static int nodes_of(struct survey *s, const struct survey_opts *o)
{
    if (o->hosts)
        return nodes_from(s, o->hosts) ? 2 : 0;
    if (o->hostfile) {
        struct util_buf hosts = UTIL_BUF_INIT;
        int rc = read_hostfile(o->hostfile, &hosts) || nodes_from(s, util_buf_str(&hosts)) ? 2 : 0;
        util_buf_release(&hosts);
        return rc;
    }
    return 0; /* --allocation: the map names them; --cluster: the file does */
}

int cmd_survey(int argc, char **argv)
{
    struct survey_opts o = {0};
    int rc = parse(argc, argv, &o);
    if (rc)
        return cli_status(rc);
    struct survey s = {0};
    struct survey_launch l;
    rc = setup(&s, &o, &l);
    if (!rc) {
        s.settings = settings_of(&s, &l);
        rc = nodes_of(&s, &o);
    }
    if (!rc && o.expect && expect_of(&s, o.expect))
        rc = 2;
    if (rc) {
        survey_release(&s);
        return rc;
    }
    /* a bad cluster file is refused before anything is written */
    if ((o.cluster && survey_probe_sim(&s, o.cluster)) || survey_check_all_pairs(&s)) {
        survey_release(&s);
        return 2;
    }
    if (util_mkdir_p(o.out)) {
        util_error("cannot create '%s': %s", o.out, strerror(errno));
        survey_release(&s);
        return 3;
    }
    int lock = lock_dir(o.out);
    if (lock < 0) {
        survey_release(&s);
        return 3;
    }
    util_child_supervise();
    char *bench = NULL;
    if (!o.cluster) {
        bench = sweep_bench_program();
        l.bench = bench;
        rc = survey_probe_launch(&s, &l);
        rc = rc == UTIL_EINVAL ? 2 : rc ? 3 : 0; /* bad --out (a planted link), or the launch */
    }
    if (!rc) {
        if (s.nnodes) /* --allocation: the map counts them */
            util_info("surveying %d node(s) with the %s backend into '%s'", s.nnodes, s.backend,
                      o.out);
        else
            util_info("surveying the nodes of the Slurm allocation with the %s backend into '%s'",
                      s.backend, o.out);
        int r = survey_run(&s);
        if (util_child_interrupted()) {
            util_error("interrupted: %d launches are in '%s/launches.jsonl'; 'topotune survey ... "
                       "--out %s --resume' continues",
                       s.rounds, o.out, o.out);
            rc = cli_status(UTIL_EINTR);
        } else if (r) {
            /* a record --resume cannot replay is bad input (2); survey's 1 means verdicts to read,
             * so a write error there is the environment's (3) */
            int status = cli_status(r);
            rc = status == 1 ? 3 : status;
        } else if (survey_write(&s)) {
            rc = 3;
        } else {
            size_t n = json_array_size(s.verdicts);
            util_info("%zu verdict(s); %d launches (%d failed), %.0f s%s: see '%s/report.txt'", n,
                      s.rounds, s.launches_failed, s.wall_s,
                      s.probe.predicted ? " (predicted)" : "", o.out);
            rc = n ? 1 : 0;
            if (operators(&o))
                rc = 3;
        }
    }
    free(bench);
    survey_release(&s);
    close(lock);
    return rc;
}
