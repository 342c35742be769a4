/* SPDX-License-Identifier: MIT */
/*
 * topotune-node: started by mpirun once per node (see cluster/cluster.h). Each
 * rank prints three JSON lines on its stdout, which mpirun tags with its rank:
 * {"host": NAME} at once, {"report": {...}} when it has mapped its node or run
 * doctor's checks on it, and {"clock": SECONDS} after a barrier with the
 * others. Nothing waits for another node before the report, so a node that
 * hangs costs its own report only. A node that cannot be mapped reports
 * {"error": ...} instead of failing the job, so the others are still compared.
 *   topotune-node topo
 *   topotune-node doctor [--profile DIR] [--copy-timeout S]
 */
#include "doctor/doctor.h"
#include "topo/topo.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/mem.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* [{"name", "cidr"}]: the IPv4 interfaces that are up, besides loopback, for picking a network. */
static json_t *ipv4_interfaces(void)
{
    json_t *list = json_array();
    struct ifaddrs *ifs = NULL;
    if (getifaddrs(&ifs))
        return list;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !i->ifa_netmask ||
            !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
            continue;
        char addr[INET_ADDRSTRLEN], cidr[64];
        const struct in_addr *a =
            &((const struct sockaddr_in *)(const void *)i->ifa_addr)->sin_addr;
        uint32_t mask =
            ntohl(((const struct sockaddr_in *)(const void *)i->ifa_netmask)->sin_addr.s_addr);
        int prefix = 0;
        while (prefix < 32 && (mask & (0x80000000u >> prefix)))
            prefix++;
        inet_ntop(AF_INET, a, addr, sizeof(addr));
        snprintf(cidr, sizeof(cidr), "%s/%d", addr, prefix);
        json_array_append_new(list, json_pack("{s:s,s:s}", "name", i->ifa_name, "cidr", cidr));
    }
    freeifaddrs(ifs);
    return list;
}

static json_t *node_report(int argc, char **argv)
{
    const char *profile_dir = NULL;
    double copy_timeout = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--profile"))
            profile_dir = argv[i + 1];
        else if (!strcmp(argv[i], "--copy-timeout"))
            copy_timeout = atof(argv[i + 1]);
    }
    struct topo t;
    topo_init(&t);
    json_t *report = NULL;
    const char *described = getenv("TOPOTUNE_TOPOLOGY");
    if (topo_load(&t, NULL))
        report = json_pack("{s:s+}", "error", "this node could not be mapped: ",
                           described && *described ? "its TOPOTUNE_TOPOLOGY file is unreadable"
                                                   : "hwloc failed (run topotune topo on it)");
    else if (!strcmp(argv[1], "topo"))
        report =
            json_pack("{s:o,s:o}", "topology", topo_to_json(&t), "interfaces", ipv4_interfaces());
    else {
        json_t *profile = NULL;
        char path[4096];
        if (profile_dir) { /* the file doctor read, or a profile folder */
            struct stat st;
            int file = !stat(profile_dir, &st) && S_ISREG(st.st_mode);
            snprintf(path, sizeof(path), file ? "%s" : "%s/profile.json", profile_dir);
            profile = util_json_load(path);
        }
        report = doctor_node_report(&t, profile, copy_timeout);
        if (profile_dir && !profile) /* the profile is missing here: a failed check, not silence */
            json_array_append_new(
                json_object_get(report, "checks"),
                json_pack("{s:s,s:s,s:s+,s:s}", "name", "profile", "status", "fail", "evidence",
                          "cannot read ", path, "fix",
                          "put the profile at the same path on every node (a shared filesystem)"));
        json_decref(profile);
    }
    topo_release(&t);
    char host[256] = "?";
    gethostname(host, sizeof(host) - 1);
    json_object_set_new(report, "host", json_string(host));
    return report;
}

/* node_report in a child process: a crash while mapping or checking (hwloc, NVML on a sick GPU)
 * is this node's report, not the end of every node's (Open MPI ends the job when a rank dies). */
static json_t *report_in_child(int argc, char **argv, const char *host)
{
    int fd[2];
    pid_t pid = -1, parent = getpid();
    fflush(stdout);
    /* close-on-exec: the copy test's process does not hold the pipe open past the report */
    if (pipe2(fd, O_CLOEXEC) == 0 && (pid = fork()) < 0)
        close(fd[0]), close(fd[1]);
    if (pid < 0) /* no child to be had: the report here */
        return node_report(argc, argv);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0); /* a rank killed takes its report along */
        if (getppid() != parent)
            _exit(1);
        close(fd[0]);
        json_t *r = node_report(argc, argv);
        char *text = json_dumps(r, JSON_COMPACT);
        size_t len = text ? strlen(text) : 0, off = 0;
        for (ssize_t w = 1; off < len && w > 0; off += w > 0 ? (size_t)w : 0)
            w = write(fd[1], text + off, len - off);
        _exit(len && off == len ? 0 : 1);
    }
    close(fd[1]);
    struct util_buf b = UTIL_BUF_INIT;
    char chunk[65536];
    for (ssize_t got; (got = read(fd[0], chunk, sizeof(chunk))) != 0;)
        if (got > 0)
            util_buf_add(&b, chunk, (size_t)got);
        else if (errno != EINTR)
            break;
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    json_t *r = WIFEXITED(status) && WEXITSTATUS(status) == 0 && b.len
                    ? json_loadb(b.data, b.len, 0, NULL)
                    : NULL;
    util_buf_release(&b);
    if (json_is_object(r))
        return r;
    json_decref(r);
    char why[256];
    const char *what = strcmp(argv[1], "topo") ? "doctor" : "topo";
    if (WIFSIGNALED(status))
        snprintf(why, sizeof(why),
                 "topotune-node crashed (%s) while reading this node: run topotune %s on it",
                 strsignal(WTERMSIG(status)), what);
    else
        snprintf(why, sizeof(why),
                 "topotune-node's report of this node failed (exit %d): run topotune %s on it",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1, what);
    return json_pack("{s:s,s:s}", "host", host, "error", why);
}

/* One line on stdout, at once. No '<' or space in it (JSON escapes them in strings; a compact
 * dump has none outside): the piece of another rank's tag ("[1,3]<stdout>:") that a hostile host
 * name could print is never printed. */
static void say(json_t *doc)
{
    char *text = json_dumps(doc, JSON_COMPACT);
    for (const char *p = text ? text : ""; *p; p++) {
        if (*p == '<')
            fputs("\\u003c", stdout);
        else if (*p == ' ')
            fputs("\\u0020", stdout);
        else
            putchar(*p);
    }
    putchar('\n');
    fflush(stdout);
    free(text);
    json_decref(doc);
}

int main(int argc, char **argv)
{
    util_mem_init();
    if (argc < 2 || (strcmp(argv[1], "topo") && strcmp(argv[1], "doctor"))) {
        fprintf(stderr, "usage: topotune-node topo|doctor [--profile DIR] [--copy-timeout S]\n"
                        "(started by topotune topo --hosts and topotune doctor --hosts)\n");
        return 2;
    }
    /* The host first: a node that hangs while mapping is still named by its own word. */
    char host[256] = "?";
    gethostname(host, sizeof(host) - 1);
    say(json_pack("{s:s}", "host", host));
    /* The report before MPI_Init: MPI_Init waits for every rank (a hung node would hold every
     * report back), and doctor's checks start child processes (the P2P copy test), which is
     * safer before MPI_Init than after it (fork under some interconnects' drivers). */
    say(json_pack("{s:o}", "report", report_in_child(argc, argv, host)));
    MPI_Init(&argc, &argv);
    /* Every node reads its clock at the same moment (within the barrier's latency). */
    MPI_Barrier(MPI_COMM_WORLD);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    say(json_pack("{s:f}", "clock", (double)ts.tv_sec + ts.tv_nsec / 1e9));
    MPI_Finalize();
    return 0;
}
