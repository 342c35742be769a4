/* SPDX-License-Identifier: MIT */
/* cluster_gather: mpirun + topotune-node, supervised, the result parsed from stdout. */
#include "cluster/cluster.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/file.h"
#include "util/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cluster_in_slurm(void)
{
    const char *job = getenv("SLURM_JOB_ID");
    return job && *job;
}

int cluster_count_hosts(const char *hosts)
{
    int n = 0;
    for (const char *p = hosts; p && *p; p += strcspn(p, ","), p += *p == ',')
        n += strcspn(p, ",") > 0;
    return n;
}

/* The last lines of a log, joined on one line, for an error message. */
static void log_tail(const char *path, char *out, size_t len)
{
    struct util_buf b = UTIL_BUF_INIT;
    out[0] = '\0';
    if (util_file_read(path, 1 << 20, &b))
        goto done;
    char *s = b.data;
    size_t n = b.len;
    while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
        s[--n] = '\0';
    const char *start = s + n;
    for (int lines = 0; start > s && lines < 3; start--)
        lines += start[-1] == '\n';
    snprintf(out, len, "%s", start);
    for (char *p = out; *p; p++)
        if (*p == '\n')
            *p = ' ';
done:
    util_buf_release(&b);
}

static void add(char ***argv, int *n, const char *arg)
{
    *argv = realloc(*argv, (size_t)(*n + 2) * sizeof(char *));
    (*argv)[(*n)++] = (char *)arg;
    (*argv)[*n] = NULL;
}

static json_t *parse_result(const char *out_path, int want)
{
    struct util_buf b = UTIL_BUF_INIT;
    json_t *doc = NULL, *nodes = NULL;
    if (util_file_read(out_path, 256 << 20, &b) == 0) {
        const char *line = strstr(util_buf_str(&b), "{\"nodes\":");
        doc = line ? json_loads(line, JSON_DISABLE_EOF_CHECK, NULL) : NULL;
    }
    util_buf_release(&b);
    nodes = json_incref(json_object_get(doc, "nodes"));
    json_decref(doc);
    if (!json_is_array(nodes))
        error("the nodes' reports did not come back: topotune-node printed no result");
    else if (want > 0 && (int)json_array_size(nodes) != want)
        error("%zu node report(s) came back for %d host(s): is topotune-node built with the "
              "same MPI as mpirun?",
              json_array_size(nodes), want);
    else
        return nodes;
    json_decref(nodes);
    return NULL;
}

json_t *cluster_gather(const char *hosts, const char *what, char *const *args, double timeout_s)
{
    int nhosts = cluster_count_hosts(hosts);
    if (!nhosts && !cluster_in_slurm())
        return error("--hosts: no host named, and not inside a Slurm allocation: give "
                     "--hosts h1,h2 or run inside salloc/sbatch"),
               NULL;
    char *node = util_sibling_program("topotune-node", "TOPOTUNE_NODE_PROGRAM");
    char np[16];
    snprintf(np, sizeof(np), "%d", nhosts);
    char **argv = NULL;
    int n = 0;
    add(&argv, &n, "mpirun");
    if (getuid() == 0)
        add(&argv, &n, "--allow-run-as-root");
    if (nhosts) {
        add(&argv, &n, "--host");
        add(&argv, &n, hosts);
        add(&argv, &n, "-np");
        add(&argv, &n, np);
        add(&argv, &n, "--map-by");
        add(&argv, &n, "node");
    } else { /* Open MPI reads the allocation: one process per node */
        add(&argv, &n, "--map-by");
        add(&argv, &n, "ppr:1:node");
    }
    add(&argv, &n, node);
    add(&argv, &n, what);
    for (char *const *a = args; a && *a; a++)
        add(&argv, &n, *a);

    char log[] = "/tmp/topotune-gather-log-XXXXXX", out[] = "/tmp/topotune-gather-out-XXXXXX";
    int lfd = mkstemp(log), ofd = mkstemp(out);
    json_t *nodes = NULL;
    if (lfd < 0 || ofd < 0) {
        error("cannot create a temporary file in /tmp for mpirun's output");
        goto done;
    }
    info("%s: running topotune-node on %s through mpirun", what,
         nhosts ? hosts : "every node of the Slurm allocation");
    struct util_child ch = {
        .argv = argv, .log = log, .out = out, .timeout_s = timeout_s, .grace_s = 3};
    util_child_run(&ch);
    char tail[1024];
    log_tail(log, tail, sizeof(tail));
    if (ch.exec_errno)
        error("cannot start mpirun: %s: install Open MPI (tools/install-deps.sh)",
              strerror(ch.exec_errno));
    else if (ch.timed_out)
        error("mpirun did not finish within %.0f s: a host is unreachable or hung (%s)", timeout_s,
              tail[0] ? tail : "no output");
    else if (ch.exit_code != 0)
        error("mpirun failed (%s %d) on %s: %s", ch.signal ? "signal" : "exit",
              ch.signal ? ch.signal : ch.exit_code, nhosts ? hosts : "the allocation",
              tail[0] ? tail : "no output");
    else
        nodes = parse_result(out, nhosts);
done:
    if (lfd >= 0)
        close(lfd), unlink(log);
    if (ofd >= 0)
        close(ofd), unlink(out);
    free(argv);
    free(node);
    return nodes;
}
