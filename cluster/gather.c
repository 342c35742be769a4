/* SPDX-License-Identifier: MIT */
/* cluster_gather: mpirun + topotune-node, each rank's lines out of its tagged output. */
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
#include <strings.h>
#include <unistd.h>

/* What to check when mpirun could not bring a report back. */
#define SSH_FIX                                                                                    \
    "check that every host resolves, takes passwordless ssh (mpirun's rsh agent), and has "        \
    "topotune-node at the same path; mpirun --host ... hostname tests the first two"

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

/* The nodes of the Slurm allocation this runs in (one rank each), or 0 when it does not say. */
static int allocation_nodes(void)
{
    const char *n = getenv("SLURM_JOB_NUM_NODES");
    n = n && *n ? n : getenv("SLURM_NNODES");
    long v = n ? strtol(n, NULL, 10) : 0;
    return launch_in_slurm() && v > 0 && v < 1 << 20 ? (int)v : 0;
}

/* ---- each rank's lines, out of mpirun's --tag-output stream ---- */

/* The length of the tag Open MPI puts before each piece a rank writes ("[1,3]<stdout>:", Open
 * MPI 5's with a space after it) at p, the rank in *rank; 0 when no tag starts at p. */
static size_t tag_at(const char *p, long *rank)
{
    static const char close[] = "]<stdout>:";
    const char *q = p + 1;
    /* the job id: letters, digits, '.', '-', '_' or '@' (never a '[': a piece that ends in one,
     * "matrix":[, stays the piece's); at most 65 looked at, so a run of '[' stays linear */
    size_t job = 0;
    while (job <= 64 && (isalnum((unsigned char)q[job]) || strchr(".-_@", q[job])) && q[job])
        job++;
    if (*p != '[' || job == 0 || job > 64 || q[job] != ',' || !isdigit((unsigned char)q[job + 1]))
        return 0;
    char *end;
    long r = strtol(q + job + 1, &end, 10);
    if (strncmp(end, close, sizeof(close) - 1))
        return 0;
    end += sizeof(close) - 1;
    *rank = r;
    return (size_t)(end + (*end == ' ') - p);
}

/*
 * Splits the stream into each rank's own output (out[r] for rank r < n). Open MPI tags every
 * piece a rank wrote, and cuts a long line into pieces that other ranks' pieces interleave:
 * each rank's pieces, joined in order, are what it wrote. topotune-node writes no '<' and no
 * space, so nothing it prints is taken for a tag; a NUL one prints hides nothing after it.
 * Returns the highest rank seen + 1.
 */
static int split_ranks(const char *text, size_t len, struct util_buf *out, int n)
{
    long rank = -1, r = -1;
    int seen = 0;
    const char *piece = NULL, *end = text + len;
    for (const char *p = text;; p++) {
        size_t tag = p < end && *p == '[' ? tag_at(p, &r) : 0;
        if (p == end || tag) {
            if (piece && rank >= 0 && rank < n)
                util_buf_add(&out[rank], piece, (size_t)(p - piece));
            if (p == end)
                return seen;
            rank = r;
            seen = r >= 0 && r < n && r + 1 > seen ? (int)r + 1 : seen;
            piece = p + tag;
            p += tag - 1;
        }
    }
}

/* What rank r's lines said: its host line, its report (NULL when none came, or more than one:
 * damaged) and its clock (-1 when it did not pass the barrier, or said it twice). Only those are
 * kept: a node printing a flood of other lines costs what it printed, not a document each. */
struct said {
    char *host;
    json_t *report;
    int reports, clocks;
    double clock;
};

static void read_said(const char *text, size_t len, struct said *s)
{
    *s = (struct said){.clock = -1};
    for (const char *line = text, *end = text + len, *nl; line < end; line = nl + 1) {
        nl = memchr(line, '\n', (size_t)(end - line));
        nl = nl ? nl : end;
        json_t *doc = json_loadb(line, (size_t)(nl - line), 0, NULL), *v;
        if (json_is_object(v = json_object_get(doc, "report")) && !s->reports++)
            s->report = json_incref(v);
        else if (json_is_string(v = json_object_get(doc, "host")) && !s->host)
            s->host = util_xstrdup(json_string_value(v));
        else if (json_is_number(v = json_object_get(doc, "clock")))
            s->clock = s->clocks++ ? -1 : json_number_value(v);
        json_decref(doc);
    }
    if (s->reports > 1) {
        json_decref(s->report);
        s->report = NULL;
    }
    if (s->clocks > 1)
        s->clock = -1;
}

static void said_release(struct said *s)
{
    free(s->host);
    json_decref(s->report);
}

/* The name a node gives itself, from its host line or its report. */
static const char *own_name(const struct said *s)
{
    return s->host ? s->host : json_string_value(json_object_get(s->report, "host"));
}

/* The key of name (len bytes): the whole of it or its first label (first), lowercase (DNS
 * ignores case). */
static const char *key_of(const char *name, size_t len, int first, char key[256])
{
    size_t n = first ? strcspn(name, ".,") : len;
    n = n < len ? n : len;
    n = n < 255 ? n : 255;
    for (size_t i = 0; i < n; i++)
        key[i] = (char)tolower((unsigned char)name[i]);
    key[n] = '\0';
    return key;
}

/*
 * The listed names no rank claimed (by its own name: whole, or its first label either way), in
 * list order, as a new array: Open MPI places the ranks in its own order (the rank on mpirun's
 * host first), so the list's r-th name may be another's. One pass over each: a list of thousands.
 */
static json_t *unclaimed_hosts(const struct said *s, int n, const char *hosts)
{
    json_t *claimed = json_object(), *left = json_array();
    char key[256];
    for (int k = 0; k < n; k++) {
        const char *own = own_name(&s[k]);
        for (int first = 0; own && first < 2; first++)
            json_object_set_new(claimed, key_of(own, strlen(own), first, key), json_true());
    }
    for (const char *p = hosts; p && *p; p += strcspn(p, ","), p += *p == ',') {
        size_t len = strcspn(p, ",");
        if (!json_object_get(claimed, key_of(p, len, 0, key)) &&
            !json_object_get(claimed, key_of(p, len, 1, key)))
            json_array_append_new(left, json_stringn(p, len));
    }
    json_decref(claimed);
    return left;
}

/* Rank r's node (said by s): its report with "rank" (and "clock" past the barrier), or {"host",
 * "rank", "error"} saying why no report came. A rank that said nothing is named by the one
 * listed host no rank claimed; else not at all (the list's r-th name may be another's), its
 * error saying which hosts it is one of. */
static json_t *rank_node(const struct said *s, int r, const json_t *unclaimed, const char *ended)
{
    if (s->report) {
        json_t *node = json_deep_copy(s->report);
        json_object_set_new(node, "rank", json_integer(r));
        if (s->clock >= 0)
            json_object_set_new(node, "clock", json_real(s->clock));
        return node;
    }
    json_t *node = json_pack("{s:i,s:b}", "rank", r, "answered", 0);
    const char *host = s->host;
    size_t i;
    json_t *u;
    if (!host && json_array_size(unclaimed) == 1)
        host = json_string_value(json_array_get(unclaimed, 0));
    struct util_buf among = UTIL_BUF_INIT;
    json_array_foreach(host ? NULL : unclaimed, i, u)
        if (i < 5)
            util_buf_addf(&among, "%s%s",
                          i ? ", " : " (one of the hosts no report named: ", json_string_value(u));
    if (among.len)
        util_buf_adds(&among, json_array_size(unclaimed) > 5 ? ", ...)" : ")");
    if (host)
        json_object_set_new(node, "host", json_string(host));
    json_object_set_new(
        node, "error",
        s->reports > 1 ? json_string("it printed more than one report: its output is damaged")
        : s->host      ? json_sprintf("topotune-node started there but sent no report: %s", ended)
                       : json_sprintf("topotune-node sent nothing from there%s: %s",
                                      util_buf_str(&among), ended));
    util_buf_release(&among);
    return node;
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
    char **env = util_xcalloc(n + LAUNCH_TCP_ENV_MAX + 3, sizeof(char *));
    int k = launch_tcp_env(env, 1);
    /* a site's Open MPI settings that change what the tags look like (a date before each, XML)
     * are off for this launch: the reports are read out of the tagged stream */
    env[k++] = util_xstrdup("OMPI_MCA_orte_timestamp_output=0");
    env[k++] = util_xstrdup("OMPI_MCA_orte_xml_output=0");
    for (size_t i = 0; i < n; i++)
        if (!strncmp(environ[i], "NCCL_", 5) && strchr(environ[i], '='))
            env[k++] = util_xstrdup(environ[i]);
    return env;
}

/* The nodes' reports out of mpirun's stdout, one per rank; NULL when none came back (said). n:
 * the ranks started (the hosts named, or the allocation's nodes; 0 when not known). */
static json_t *read_nodes(const char *out_path, const char *hosts, int n, int allocation,
                          const struct util_child *ch, const char *ended)
{
    struct util_buf b = UTIL_BUF_INIT;
    int cap = n ? n : 1 << 16, got = 0, clocks = 0;
    struct util_buf *text = util_xcalloc((size_t)cap, sizeof(*text));
    if (util_file_read(out_path, 256 << 20, &b))
        util_warning("mpirun's output could not be read whole (over 256 MiB): the reports past "
                     "its first 256 MiB are lost");
    int seen = split_ranks(util_buf_str(&b), b.len, text, cap), ranks = n ? n : seen;
    util_buf_release(&b);
    struct said *s = util_xcalloc((size_t)ranks + 1, sizeof(*s));
    for (int r = 0; r < ranks; r++) {
        read_said(util_buf_str(&text[r]), text[r].len, &s[r]);
        util_buf_release(&text[r]);
        got += s[r].report != NULL;
        clocks += s[r].clock >= 0;
    }
    for (int r = ranks; r < cap; r++)
        util_buf_release(&text[r]);
    free(text);
    json_t *nodes = json_array(), *unclaimed = got ? unclaimed_hosts(s, ranks, hosts) : NULL;
    for (int r = 0; got && r < ranks; r++) /* none came back: nothing to name */
        json_array_append_new(nodes, rank_node(&s[r], r, unclaimed, ended));
    json_decref(unclaimed);
    for (int r = 0; r < ranks; r++)
        said_release(&s[r]);
    free(s);
    if (!got)
        util_error("the nodes' reports did not come back: %s; %s", ended,
                   ch->exit_code == 0 ? "is topotune-node installed at the same path on every "
                                        "host?"
                                      : SSH_FIX);
    else if (allocation && seen < allocation && !ch->timed_out && ch->exit_code == 0)
        util_error("%d node report(s) came back for the allocation's %d nodes: mpirun did not "
                   "start one on each (an Open MPI built without Slurm's support starts them "
                   "here): give --hosts, or use an Open MPI that reads the allocation",
                   got, allocation);
    else {
        if (got == ranks && !clocks && ch->timed_out)
            util_warning("every node reported, but none passed the MPI barrier after the reports "
                         "within the deadline: MPI could not connect the nodes (a firewall "
                         "between them, or Open MPI on the wrong interface: set "
                         "OMPI_MCA_btl_tcp_if_include); clocks not compared");
        else if (ch->timed_out || ch->exit_code != 0)
            util_warning("%s", ended); /* every node's own words said after */
        return nodes;
    }
    json_decref(nodes);
    return NULL;
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
    struct launch l = {.launcher = "mpirun",
                       .np = nhosts,
                       .hosts = nhosts ? hosts : NULL,
                       .env = env,
                       .tag_output = 1};
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
    if (ch.exec_errno) {
        util_error("cannot start mpirun: %s: install Open MPI (tools/install-deps.sh)",
                   strerror(ch.exec_errno));
        goto done;
    }
    char tail[1024], ended[1536];
    log_tail(log, tail, sizeof(tail));
    struct util_buf named = UTIL_BUF_INIT;
    launch_hosts_blamed(log, hosts, 1, &named); /* one rank a host */
    if (ch.timed_out)
        snprintf(ended, sizeof(ended),
                 "mpirun did not finish within %.0f s (a node hung or could not be reached: run "
                 "topotune doctor on it alone)%s%s (%s)",
                 timeout_s, named.len ? "; its log names " : "", util_buf_str(&named),
                 tail[0] ? tail : "no output");
    else if (ch.exit_code != 0)
        snprintf(ended, sizeof(ended), "mpirun failed (%s %d)%s%s: %s",
                 ch.signal ? "signal" : "exit", ch.signal ? ch.signal : ch.exit_code,
                 named.len ? "; its log names " : "", util_buf_str(&named),
                 tail[0] ? tail : "no output");
    else
        snprintf(ended, sizeof(ended), "mpirun ended without it");
    util_buf_release(&named);
    int allocation = nhosts ? 0 : allocation_nodes();
    nodes = read_nodes(out, hosts, nhosts ? nhosts : allocation, allocation, &ch, ended);
done:
    for (char **e = env; *e; e++)
        free(*e);
    free(env);
    if (lfd >= 0)
        close(lfd), util_temp_remove(log);
    if (ofd >= 0)
        close(ofd), util_temp_remove(out);
    launch_argv_free(argv);
    free(program);
    free(node);
    return nodes;
}
