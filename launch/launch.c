/* SPDX-License-Identifier: MIT */
/* Launch command lines, host lists, Open MPI's TCP pinning and the hosts a launcher's log blames.
 */
#include "launch/launch.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/child.h"
#include "util/error.h"
#include "util/file.h"
#include "util/log.h"
#include "util/mem.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int launch_known(const char *launcher)
{
    return launcher && (!strcmp(launcher, "direct") || !strcmp(launcher, "mpirun") ||
                        !strcmp(launcher, "srun"));
}

static void add(char ***argv, int *n, const char *arg)
{
    *argv = util_xrealloc(*argv, (size_t)(*n + 2) * sizeof(char *));
    (*argv)[(*n)++] = util_xstrdup(arg);
    (*argv)[*n] = NULL;
}

/* prefix followed by v, then suffix: "-n8", "ppr:2:node". */
static void add_int(char ***argv, int *n, const char *prefix, int v, const char *suffix)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%s%d%s", prefix, v, suffix);
    add(argv, n, buf);
}

/* Forwarding by name: the value travels in the launcher's environment, never on its command line.
 */
static void add_forward(char ***argv, int *n, char *const *env)
{
    for (char *const *e = env; e && *e; e++) {
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)strcspn(*e, "="), *e);
        add(argv, n, "-x");
        add(argv, n, name);
    }
}

/* The hostfiles launch_argv wrote, removed by launch_argv_free (the launch's argv names them). */
#define HOSTFILES_MAX 8
static char *hostfiles[HOSTFILES_MAX];

/*
 * A list longer than this goes in a hostfile: Linux takes no argument longer than 128 KiB
 * (MAX_ARG_STRLEN), so --host with a few thousand names could not start (E2BIG), nor could
 * srun -w. One name a line, with slots (mpirun) or plain (srun reads a -w value holding a '/'
 * as a file). Returns the file's path (kept until launch_argv_free), or NULL.
 */
#define LAUNCH_HOSTS_INLINE_MAX (32 * 1024)
static const char *hostfile(const char *hosts, int slots)
{
    int k = 0;
    while (k < HOSTFILES_MAX && hostfiles[k])
        k++;
    char path[4096];
    int fd = k < HOSTFILES_MAX ? util_temp_file(path, sizeof(path), "topotune-hosts")
                               : (errno = EMFILE, -1); /* every slot's launch line alive */
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "w");
    for (const char *p = hosts; f && *p; p += strcspn(p, ","), p += *p == ',')
        if (strcspn(p, ","))
            fprintf(f, slots ? "%.*s slots=%d\n" : "%.*s\n", (int)strcspn(p, ","), p, slots);
    if (!f || ferror(f) | fclose(f)) {
        int err = errno ? errno : EIO;
        if (!f)
            close(fd);
        util_temp_remove(path);
        errno = err;
        return NULL;
    }
    return hostfiles[k] = util_xstrdup(path);
}

static void add_mpirun(char ***argv, int *n, const struct launch *l, int nhosts, const char *file)
{
    add(argv, n, "mpirun");
    if (geteuid() == 0)
        add(argv, n, "--allow-run-as-root");
    add(argv, n, "--oversubscribe");
    if (l->tag_output)
        add(argv, n, "--tag-output");
    if (l->np > 0) {
        add(argv, n, "-np");
        add_int(argv, n, "", l->np, "");
    }
    if (nhosts) { /* the same number of ranks on every host, consecutive ranks together */
        add(argv, n, file ? "--hostfile" : "--host");
        add(argv, n, file ? file : l->hosts);
        add(argv, n, "--map-by");
        add_int(argv, n, "ppr:", l->np / nhosts, ":node");
    } else if (l->np <= 0) { /* Open MPI reads the allocation: one process per node */
        add(argv, n, "--map-by");
        add(argv, n, "ppr:1:node");
    }
    add_forward(argv, n, l->env);
}

char **launch_argv(const struct launch *l, char *const *program)
{
    int nhosts = launch_count_hosts(l->hosts);
    if (!launch_known(l->launcher) || (nhosts && (l->np < nhosts || l->np % nhosts)) ||
        (!strcmp(l->launcher, "direct") && l->np > 1))
        return NULL;
    const char *file = NULL; /* a list Linux would refuse as one argument: its hostfile */
    if (nhosts && strcmp(l->launcher, "direct") && strlen(l->hosts) > LAUNCH_HOSTS_INLINE_MAX &&
        !(file = hostfile(l->hosts, strcmp(l->launcher, "mpirun") ? 0 : l->np / nhosts)))
        return util_error("cannot write a hostfile for the %d hosts (a list of %zu bytes, more "
                          "than one argument may hold) in TMPDIR or /tmp: %s",
                          nhosts, strlen(l->hosts), strerror(errno)),
               NULL;
    char **argv = NULL;
    int n = 0;
    if (!strcmp(l->launcher, "mpirun")) {
        add_mpirun(&argv, &n, l, nhosts, file);
    } else if (!strcmp(l->launcher, "srun")) {
        add(&argv, &n, "srun");
        add_int(&argv, &n, "-n", l->np > 0 ? l->np : 1, "");
        if (nhosts) { /* these nodes of the allocation, the same number of ranks on each */
            add(&argv, &n, "-w");
            add(&argv, &n, file ? file : l->hosts);
            add_int(&argv, &n, "-N", nhosts, "");
            add_int(&argv, &n, "--ntasks-per-node=", l->np / nhosts, "");
        }
        add(&argv, &n, "--export=ALL");
    }
    for (char *const *p = program; *p; p++)
        add(&argv, &n, *p);
    return argv;
}

void launch_argv_free(char **argv)
{
    for (char **p = argv; p && *p; p++) {
        for (int k = 0; k < HOSTFILES_MAX; k++)
            if (hostfiles[k] && !strcmp(hostfiles[k], *p)) {
                util_temp_remove(hostfiles[k]);
                free(hostfiles[k]);
                hostfiles[k] = NULL;
            }
        free(*p);
    }
    free(argv);
}

int launch_in_slurm(void)
{
    const char *job = getenv("SLURM_JOB_ID");
    return job && *job;
}

static int in_path(const char *prog)
{
    char *found = util_child_which(prog);
    int ok = found != NULL;
    free(found);
    return ok;
}

int launch_usable(const char *launcher)
{
    if (!strcmp(launcher, "srun") && !in_path("srun"))
        return util_error("srun not found on PATH: install Slurm's client (slurm-client) or use "
                          "--launcher mpirun"),
               UTIL_EENV;
    if (!strcmp(launcher, "mpirun") && !in_path("mpirun"))
        return util_error("mpirun not found: install Open MPI (apt-get install openmpi-bin) or use "
                          "--launcher direct"),
               UTIL_EENV;
    return 0;
}

int launch_count_hosts(const char *hosts)
{
    int n = 0;
    for (const char *p = hosts; p && *p; p += strcspn(p, ","), p += *p == ',')
        n += strcspn(p, ",") > 0;
    return n;
}

/* The user's own choice of interfaces or address family for kind (oob or btl). */
/* 1 when the Open MPI parameter file at path sets name ("name = value" lines, # comments). */
static int file_sets(const char *path, const char *name)
{
    FILE *f = path && *path ? fopen(path, "r") : NULL;
    char line[1024];
    int found = 0;
    size_t n = strlen(name);
    while (f && !found && fgets(line, sizeof(line), f)) {
        const char *p = line + strspn(line, " \t");
        found = !strncmp(p, name, n) && (p[n] == '=' || p[n] == ' ' || p[n] == '\t');
    }
    if (f)
        fclose(f);
    return found;
}

/* 1 when one of Open MPI's parameter files sets name: OMPI_MCA_mca_base_param_files' (a colon
 * list), else the user's and the installation's (OPAL_PREFIX's, Debian's /etc/openmpi, or beside
 * the mpirun on PATH). */
static int param_files_set(const char *name)
{
    const char *list = getenv("OMPI_MCA_mca_base_param_files"), *home = getenv("HOME"),
               *prefix = getenv("OPAL_PREFIX");
    char path[4096];
    if (list) {
        for (const char *p = list; *p; p += strcspn(p, ":"), p += *p == ':') {
            snprintf(path, sizeof(path), "%.*s", (int)strcspn(p, ":"), p);
            if (file_sets(path, name))
                return 1;
        }
        return 0;
    }
    snprintf(path, sizeof(path), "%s/.openmpi/mca-params.conf", home ? home : "");
    if (home && file_sets(path, name))
        return 1;
    snprintf(path, sizeof(path), "%s/etc/openmpi-mca-params.conf", prefix ? prefix : "");
    if (prefix && file_sets(path, name))
        return 1;
    if (file_sets("/etc/openmpi/openmpi-mca-params.conf", name))
        return 1;
    char *mpirun = util_child_which("mpirun"), *bin = mpirun ? strrchr(mpirun, '/') : NULL;
    int found = 0;
    if (bin) { /* PREFIX/bin/mpirun: PREFIX/etc */
        *bin = '\0';
        snprintf(path, sizeof(path), "%s/../etc/openmpi-mca-params.conf", mpirun);
        found = file_sets(path, name);
    }
    free(mpirun);
    return found;
}

/* 1 when the user chose Open MPI's TCP interfaces or families for kind (oob, btl): in the
 * environment or a parameter file (a site's oob_tcp_if_include with our exclude: Open MPI
 * refuses both, and every --hosts run failed). */
static int set_by_user(const char *kind)
{
    const char *suffixes[] = {"if_include", "if_exclude", "disable_family", "disable_ipv4_family",
                              "disable_ipv6_family"};
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        char name[64];
        snprintf(name, sizeof(name), "OMPI_MCA_%s_tcp_%s", kind, suffixes[i]);
        if (getenv(name) || param_files_set(name + strlen("OMPI_MCA_")))
            return 1;
    }
    return 0;
}

int launch_tcp_env(char **env, int btl)
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
        env[n++] = util_xstrdup("OMPI_MCA_oob_tcp_disable_ipv6_family=1");
    }
    if (btl && !set_by_user("btl")) { /* Open MPI's own default excludes, kept */
        util_buf_addf(&b, "OMPI_MCA_btl_tcp_if_exclude=127.0.0.1/8,sppp,%s", util_buf_str(&names));
        env[n++] = util_buf_detach(&b);
        env[n++] = util_xstrdup("OMPI_MCA_btl_tcp_disable_family=6");
    }
    util_buf_release(&names);
    return n;
}

static int by_name(const void *a, const void *b)
{
    return strcasecmp(*(char *const *)a, *(char *const *)b);
}

int launch_check_names(const char *hosts)
{
    static const char name_chars[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_";
    char slurm_chars[sizeof(name_chars) + 3];
    snprintf(slurm_chars, sizeof(slurm_chars), "%s[],", name_chars);
    if (strchr(hosts, '[') && strchr(hosts, ']') && !hosts[strspn(hosts, slurm_chars)])
        return util_error("--hosts: Slurm's node list form (node[01-04]), which mpirun does not "
                          "expand: give the names (scontrol show hostnames LIST | paste -sd,) "
                          "or --allocation inside the job"),
               UTIL_EUSAGE;
    int n = launch_count_hosts(hosts), k = 0, rc = 0;
    char **names = util_xcalloc((size_t)n + 1, sizeof(char *));
    for (const char *p = hosts; *p && !rc; p += strcspn(p, ","), p += *p == ',') {
        size_t len = strcspn(p, ",");
        if (!len)
            continue;
        names[k] = util_xstrndup(p, len);
        if (strspn(names[k], name_chars) < len || strchr(".-_", *p) || len > 255)
            rc = (util_error("--hosts: host %d is not a host name (letters, digits, '.', '-' and "
                             "'_', a letter or digit first, at most 255; no blank, no ':slots')",
                             k + 1),
                  UTIL_EUSAGE);
        k++;
    }
    qsort(names, (size_t)k, sizeof(char *), by_name);
    for (int i = 1; !rc && i < k; i++)
        if (!strcasecmp(names[i - 1], names[i]))
            rc = (strcmp(names[i - 1], names[i])
                      ? util_error("--hosts: hosts '%s' and '%s' are one host: host names ignore "
                                   "case",
                                   names[i - 1], names[i])
                      : util_error("--hosts: host '%s' is listed twice", names[i]),
                  UTIL_EUSAGE);
    for (int i = 0; i < k; i++)
        free(names[i]);
    free(names);
    return rc;
}

int launch_check_nodes(const char *hosts, int allocation)
{
    if (hosts && allocation)
        return util_error("--hosts and --allocation both name the nodes: give one"), UTIL_EUSAGE;
    if (hosts && !launch_count_hosts(hosts))
        return util_error("invalid value '%s' for --hosts: expected host names, h1,h2,...", hosts),
               UTIL_EUSAGE;
    if (hosts && launch_check_names(hosts))
        return UTIL_EUSAGE;
    if (allocation && !launch_in_slurm())
        return util_error("--allocation: not inside a Slurm allocation (no SLURM_JOB_ID): run it "
                          "inside salloc or sbatch, or give --hosts"),
               UTIL_EUSAGE;
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

/* Open MPI's own reports name the node in a separate line: hence the second pass. */
/* The hosts of the ranks Open MPI's "Process name: [[J,1],R]" lines name (ppn a host), once. */
static void ranks_blamed(const char *log, const char *hosts, int ppn, struct util_buf *out)
{
    int n = launch_count_hosts(hosts);
    char *named = util_xcalloc((size_t)n + 1, 1);
    for (const char *p = log; ppn > 0 && (p = strstr(p, "Process name: [[")); p++) {
        unsigned job, step, rank;
        if (sscanf(p, "Process name: [[%u,%u],%u]", &job, &step, &rank) == 3 &&
            rank / (unsigned)ppn < (unsigned)n)
            named[rank / (unsigned)ppn] = 1;
    }
    int i = 0;
    for (const char *h = hosts; *h && i < n; h += *h == ',') {
        size_t len = strcspn(h, ",");
        if (len && named[i++])
            util_buf_addf(out, "%s%.*s", out->len ? ", " : "", (int)len, h);
        h += len;
    }
    free(named);
}

void launch_hosts_blamed(const char *log_path, const char *hosts, int ppn, struct util_buf *out)
{
    struct util_buf log = UTIL_BUF_INIT;
    if (util_file_read(log_path, 4 << 20, &log) || !hosts) {
        util_buf_release(&log);
        return;
    }
    ranks_blamed(util_buf_str(&log), hosts, ppn, out); /* an empty log has no data */
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
