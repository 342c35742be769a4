/* SPDX-License-Identifier: MIT */
/*
 * topotune-node: started by mpirun once per node (see cluster/cluster.h). Each
 * rank maps its node, or runs doctor's checks on it, and rank 0 gathers the
 * reports over MPI and prints {"nodes": [...]} as one line on stdout. A node
 * that cannot be mapped reports {"error": ...} instead of failing the job, so
 * the others are still compared.
 *   topotune-node topo
 *   topotune-node doctor [--profile DIR] [--copy-timeout S]
 */
#include "doctor/doctor.h"
#include "topo/topo.h"
#include "util/json.h"
#include "util/mem.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <mpi.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

int main(int argc, char **argv)
{
    util_mem_init();
    if (argc < 2 || (strcmp(argv[1], "topo") && strcmp(argv[1], "doctor"))) {
        fprintf(stderr, "usage: topotune-node topo|doctor [--profile DIR] [--copy-timeout S]\n"
                        "(started by topotune topo --hosts and topotune doctor --hosts)\n");
        return 2;
    }
    /* The report first: doctor's checks start child processes (the P2P copy test), which is
     * safer before MPI_Init than after it (fork under some interconnects' drivers). */
    json_t *report = node_report(argc, argv);
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Every node reads its clock at the same moment (within the barrier's latency). */
    MPI_Barrier(MPI_COMM_WORLD);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    json_object_set_new(report, "clock", json_real((double)ts.tv_sec + ts.tv_nsec / 1e9));
    json_object_set_new(report, "rank", json_integer(rank));
    char *text = json_dumps(report, JSON_COMPACT);
    json_decref(report);
    int len = text ? (int)strlen(text) : 0;
    int *lens = rank == 0 ? util_xcalloc((size_t)size, sizeof(int)) : NULL;
    int *offs = rank == 0 ? util_xcalloc((size_t)size, sizeof(int)) : NULL;
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *all = NULL;
    if (rank == 0) {
        long total = 0;
        for (int i = 0; i < size; i++)
            offs[i] = (int)total, total += lens[i];
        all = util_xmalloc((size_t)total + 1);
    }
    MPI_Gatherv(text, len, MPI_CHAR, all, lens, offs, MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        fputs("{\"nodes\":[", stdout);
        for (int i = 0; i < size; i++)
            printf("%s%.*s", i ? "," : "", lens[i], all + offs[i]);
        fputs("]}\n", stdout);
        fflush(stdout);
    }
    free(all);
    free(lens);
    free(offs);
    free(text);
    MPI_Finalize();
    return 0;
}
