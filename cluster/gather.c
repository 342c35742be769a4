/* SPDX-License-Identifier: MIT */
/* cluster_gather: mpirun + topotune-node, supervised, the result parsed from stdout. */
#include "cluster/cluster.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/file.h"
#include "util/log.h"

#include <ctype.h>
#include <dirent.h>
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

static int set_by_user(const char *kind)
{
    char inc[64], exc[64];
    snprintf(inc, sizeof(inc), "OMPI_MCA_%s_tcp_if_include", kind);
    snprintf(exc, sizeof(exc), "OMPI_MCA_%s_tcp_if_exclude", kind);
    return getenv(inc) || getenv(exc);
}

int cluster_tcp_env(char **env, int btl)
{
    struct util_buf names = UTIL_BUF_INIT;
    util_buf_adds(&names, "docker0,virbr0");
    DIR *d = opendir("/sys/class/net");
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.' && strcmp(e->d_name, "docker0") && strcmp(e->d_name, "virbr0") &&
            topo_iface_is_virtual(e->d_name))
            util_buf_addf(&names, ",%s", e->d_name);
    if (d)
        closedir(d);
    int n = 0;
    struct util_buf b = UTIL_BUF_INIT;
    if (!set_by_user("oob")) {
        util_buf_addf(&b, "OMPI_MCA_oob_tcp_if_exclude=%s", util_buf_str(&names));
        env[n++] = util_buf_detach(&b);
    }
    if (btl && !set_by_user("btl")) { /* Open MPI's own default excludes, kept */
        util_buf_addf(&b, "OMPI_MCA_btl_tcp_if_exclude=127.0.0.1/8,sppp,%s", util_buf_str(&names));
        env[n++] = util_buf_detach(&b);
    }
    util_buf_release(&names);
    return n;
}

int cluster_check_nodes(const char *hosts, int allocation)
{
    if (hosts && allocation)
        return error("--hosts and --allocation both name the nodes: give one"), 2;
    if (hosts && !cluster_count_hosts(hosts))
        return error("invalid value '%s' for --hosts: expected host names, h1,h2,...", hosts), 2;
    if (allocation && !cluster_in_slurm())
        return error("--allocation: not inside a Slurm allocation (no SLURM_JOB_ID): run it "
                     "inside salloc or sbatch, or give --hosts"),
               2;
    return 0;
}

/* Words of the lines that say why a host failed (ssh's, the rsh agent's, Open MPI's own). */
static int failure_line(const char *line, size_t len)
{
    static const char *words[] = {"no such host",       "Could not resolve",    "No route to host",
                                  "Connection refused", "Connection timed out", "Permission denied",
                                  "not reachable",      "unreachable",          "is down",
                                  "lost communication"};
    char copy[1024];
    snprintf(copy, sizeof(copy), "%.*s", (int)(len < sizeof(copy) - 1 ? len : sizeof(copy) - 1),
             line);
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        if (strcasestr(copy, words[i]))
            return 1;
    return 0;
}

/* A whole-word match of name in text[0..len): "h1" must not match inside "h10". */
static int names(const char *text, size_t len, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = text; n && (p = memmem(p, len - (size_t)(p - text), name, n)); p++)
        if ((p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '-')) &&
            (p + n == text + len || !(isalnum((unsigned char)p[n]) || p[n] == '-')))
            return 1;
    return 0;
}

/*
 * The hosts of the list that mpirun's log blames: those named on a line that
 * says what failed; else those named anywhere (Open MPI's own reports name the
 * node in a separate line).
 */
static void hosts_named(const char *log_path, const char *hosts, struct util_buf *out)
{
    struct util_buf log = UTIL_BUF_INIT;
    if (util_file_read(log_path, 4 << 20, &log) || !hosts) {
        util_buf_release(&log);
        return;
    }
    for (int pass = 0; pass < 2 && !out->len; pass++) {
        for (const char *p = hosts; *p;) {
            size_t len = strcspn(p, ",");
            char name[256];
            snprintf(name, sizeof(name), "%.*s", (int)(len < 255 ? len : 255), p);
            int hit = 0;
            for (const char *line = log.data; line && *line && !hit;) {
                const char *nl = strchr(line, '\n');
                size_t ll = nl ? (size_t)(nl - line) : strlen(line);
                hit = names(line, ll, name) && (pass == 1 || failure_line(line, ll));
                line = nl ? nl + 1 : NULL;
            }
            if (hit && len)
                util_buf_addf(out, "%s%s", out->len ? ", " : "", name);
            p += len + (p[len] == ',');
        }
    }
    util_buf_release(&log);
}

/* The last lines of a log, joined on one line, for an error message. */
static void log_tail(const char *path, char *out, size_t len)
{
    struct util_buf b = UTIL_BUF_INIT;
    out[0] = '\0';
    if (util_file_read(path, 1 << 20, &b) == 0) {
        size_t end = b.len, start = util_text_tail(b.data, &end, 3);
        snprintf(out, len, "%.*s", (int)(end - start), b.data + start);
        for (char *p = out; *p; p++)
            if (*p == '\n')
                *p = ' ';
    }
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

    char log[4096], out[4096];
    int lfd = util_temp_file(log, sizeof(log), "topotune-gather-log"),
        ofd = util_temp_file(out, sizeof(out), "topotune-gather-out");
    json_t *nodes = NULL;
    if (lfd < 0 || ofd < 0) {
        error("cannot create a temporary file for mpirun's output (TMPDIR or /tmp)");
        goto done;
    }
    info("%s: running topotune-node on %s through mpirun", what,
         nhosts ? hosts : "every node of the Slurm allocation");
    char *env[3] = {NULL};
    cluster_tcp_env(env, 1);
    struct util_child ch = {
        .argv = argv, .env = env, .log = log, .out = out, .timeout_s = timeout_s, .grace_s = 3};
    util_child_run(&ch);
    char tail[1024];
    log_tail(log, tail, sizeof(tail));
    struct util_buf named = UTIL_BUF_INIT;
    hosts_named(log, hosts, &named);
    const char *fix = "check that every host resolves, takes passwordless ssh (mpirun's rsh "
                      "agent), and has topotune-node at the same path; mpirun --host ... hostname "
                      "tests the first two";
    if (ch.exec_errno)
        error("cannot start mpirun: %s: install Open MPI (tools/install-deps.sh)",
              strerror(ch.exec_errno));
    else if (ch.timed_out)
        error("mpirun did not finish within %.0f s: a host is unreachable or hung%s%s (%s): %s",
              timeout_s, named.len ? "; its log names " : "", util_buf_str(&named),
              tail[0] ? tail : "no output", fix);
    else if (ch.exit_code != 0)
        error("mpirun failed (%s %d) on %s%s%s: %s; %s", ch.signal ? "signal" : "exit",
              ch.signal ? ch.signal : ch.exit_code, nhosts ? hosts : "the allocation",
              named.len ? "; its log names " : "", util_buf_str(&named),
              tail[0] ? tail : "no output", fix);
    else
        nodes = parse_result(out, nhosts);
    util_buf_release(&named);
    for (char **e = env; *e; e++)
        free(*e);
done:
    if (lfd >= 0)
        close(lfd), unlink(log);
    if (ofd >= 0)
        close(ofd), unlink(out);
    free(argv);
    free(node);
    return nodes;
}
