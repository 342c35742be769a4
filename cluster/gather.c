/* SPDX-License-Identifier: MIT */
/* cluster_gather: mpirun + topotune-node, supervised, the result parsed from stdout. */
#include "cluster/cluster.h"
#include "launch/launch.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/text.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The last lines of a log, joined on one line, for an error message. */
static void log_tail(const char *path, char *out, size_t len)
{
    struct util_buf b = UTIL_BUF_INIT;
    out[0] = '\0';
    if (util_file_read(path, 1 << 20, &b) == 0) {
        size_t end = b.len, start = util_text_tail(b.data, &end, 3);
        struct util_buf clean = UTIL_BUF_INIT; /* the hosts' words reach a terminal */
        util_text_clean(&clean, b.data + start, end - start, 1);
        snprintf(out, len, "%s", util_buf_str(&clean));
        util_buf_release(&clean);
        for (char *p = out; *p; p++)
            if (*p == '\n' || *p == '\t')
                *p = ' ';
    }
    util_buf_release(&b);
}

static int count_args(char *const *args)
{
    int n = 0;
    while (args && args[n])
        n++;
    return n;
}

/* The reports of the {"nodes": [...]} line on stdout: of every such line (any rank's output
 * reaches stdout, a damaged or stray one too), the first whose count is want (any, want 0), else
 * the first that parses; a new reference or NULL. */
static json_t *nodes_line(const char *text, int want)
{
    json_t *first = NULL;
    for (const char *at = text; (at = strstr(at, "{\"nodes\":")); at++) {
        if (at != text && at[-1] != '\n')
            continue;
        json_t *doc = json_loads(at, JSON_DISABLE_EOF_CHECK, NULL);
        json_t *nodes = json_incref(json_object_get(doc, "nodes"));
        json_decref(doc);
        if (!json_is_array(nodes)) {
            json_decref(nodes);
            continue;
        }
        if (want <= 0 || (int)json_array_size(nodes) == want) {
            json_decref(first);
            return nodes;
        }
        if (!first)
            first = nodes;
        else
            json_decref(nodes);
    }
    return first;
}

/* The nodes of the Slurm allocation this runs in (one rank each), or 0 when it does not say. */
static int allocation_nodes(void)
{
    const char *n = getenv("SLURM_JOB_NUM_NODES");
    n = n && *n ? n : getenv("SLURM_NNODES");
    long v = n ? strtol(n, NULL, 10) : 0;
    return launch_in_slurm() && v > 0 && v < 1 << 20 ? (int)v : 0;
}

/* want: the hosts named; 0 for the allocation's, whose count Slurm says. */
static json_t *parse_result(const char *out_path, int want)
{
    struct util_buf b = UTIL_BUF_INIT;
    int allocation = want ? 0 : allocation_nodes();
    json_t *nodes = NULL;
    if (util_file_read(out_path, 256 << 20, &b) == 0)
        nodes = nodes_line(util_buf_str(&b), want ? want : allocation);
    util_buf_release(&b);
    if (!json_is_array(nodes))
        util_error("the nodes' reports did not come back: topotune-node printed no result");
    else if (allocation && (int)json_array_size(nodes) != allocation)
        util_error("%zu node report(s) came back for the allocation's %d nodes: mpirun did not "
                   "start one on each (an Open MPI built without Slurm's support starts them "
                   "here): give --hosts, or use an Open MPI that reads the allocation",
                   json_array_size(nodes), allocation);
    else if (want > 0 && (int)json_array_size(nodes) != want)
        util_error("%zu node report(s) came back for %d host(s): is topotune-node built with the "
                   "same MPI as mpirun?",
                   json_array_size(nodes), want);
    else
        return nodes;
    json_decref(nodes);
    return NULL;
}

/* What every node's topotune-node gets (NAME=VALUE, NULL-terminated, malloc'd): Open MPI's TCP
 * pinning, and every NCCL_* variable set here, which doctor's checks read (a remote shell gives a
 * node none of them: each node was checked as with none set, this one as with them). */
static char **node_env(void)
{
    extern char **environ;
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = util_xcalloc(n + LAUNCH_TCP_ENV_MAX + 1, sizeof(char *));
    int k = launch_tcp_env(env, 1);
    for (size_t i = 0; i < n; i++)
        if (!strncmp(environ[i], "NCCL_", 5) && strchr(environ[i], '='))
            env[k++] = util_xstrdup(environ[i]);
    return env;
}

json_t *cluster_gather(const char *hosts, const char *what, char *const *args, double timeout_s)
{
    int nhosts = launch_count_hosts(hosts);
    if (!nhosts && !launch_in_slurm())
        return util_error("--hosts: no host named, and not inside a Slurm allocation: give "
                          "--hosts h1,h2 or run inside salloc/sbatch"),
               NULL;
    char *node = util_sibling_program("topotune-node", "TOPOTUNE_NODE_PROGRAM");
    char **env = node_env();
    char **program = util_xcalloc(4 + (size_t)count_args(args), sizeof(char *));
    int n = 0;
    program[n++] = node;
    program[n++] = (char *)what;
    for (char *const *a = args; a && *a; a++)
        program[n++] = *a;
    struct launch l = {
        .launcher = "mpirun", .np = nhosts, .hosts = nhosts ? hosts : NULL, .env = env};
    char **argv = launch_argv(&l, program);
    char log[4096], out[4096];
    int lfd = util_temp_file(log, sizeof(log), "topotune-gather-log"),
        ofd = util_temp_file(out, sizeof(out), "topotune-gather-out");
    json_t *nodes = NULL;
    if (lfd < 0 || ofd < 0) {
        util_error("cannot create a temporary file for mpirun's output (TMPDIR or /tmp)");
        goto done;
    }
    util_info("%s: running topotune-node on %s through mpirun", what,
              nhosts ? hosts : "every node of the Slurm allocation");
    struct util_child ch = {
        .argv = argv, .env = env, .log = log, .out = out, .timeout_s = timeout_s, .grace_s = 3};
    util_child_run(&ch);
    char tail[1024];
    log_tail(log, tail, sizeof(tail));
    struct util_buf named = UTIL_BUF_INIT;
    launch_hosts_blamed(log, hosts, 1, &named); /* one rank a host */
    const char *fix = "check that every host resolves, takes passwordless ssh (mpirun's rsh "
                      "agent), and has topotune-node at the same path; mpirun --host ... hostname "
                      "tests the first two";
    if (ch.exec_errno)
        util_error("cannot start mpirun: %s: install Open MPI (tools/install-deps.sh)",
                   strerror(ch.exec_errno));
    else if (ch.timed_out)
        util_error(
            "mpirun did not finish within %.0f s: a host is unreachable or hung%s%s (%s): %s",
            timeout_s, named.len ? "; its log names " : "", util_buf_str(&named),
            tail[0] ? tail : "no output", fix);
    else if (ch.exit_code != 0)
        util_error("mpirun failed (%s %d) on %s%s%s: %s; %s", ch.signal ? "signal" : "exit",
                   ch.signal ? ch.signal : ch.exit_code, nhosts ? hosts : "the allocation",
                   named.len ? "; its log names " : "", util_buf_str(&named),
                   tail[0] ? tail : "no output", fix);
    else
        nodes = parse_result(out, nhosts);
    util_buf_release(&named);
done:
    for (char **e = env; *e; e++)
        free(*e);
    free(env);
    if (lfd >= 0)
        close(lfd), unlink(log);
    if (ofd >= 0)
        close(ofd), unlink(out);
    launch_argv_free(argv);
    free(program);
    free(node);
    return nodes;
}
