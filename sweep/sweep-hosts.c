/* SPDX-License-Identifier: MIT */
/*
 * sweep --hosts: the sweep measures the hosts, not the machine it is started
 * on. They are mapped first through mpirun (cluster_gather); they must be one
 * node class, whose topology then stands for the sweep's. For measuring backends,
 * Open MPI's TCP transport is pinned to the IPv4 subnet every host shares, with
 * loopback and container bridges left out: a docker0 exists on every node and
 * joins none of them, and trying it stalls or fails the ranks.
 */
#include "bench/bench.h"
#include "cluster/cluster.h"
#include "launch/launch.h"
#include "sweep/sweep.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/log.h"
#include "util/mem.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "10.77.0.11/24" -> network 10.77.0.0 and prefix 24; 0 on success. */
static int parse_cidr(const char *cidr, uint32_t *net, int *prefix)
{
    char addr[64];
    const char *slash = strchr(cidr, '/');
    struct in_addr a;
    if (!slash || (size_t)(slash - cidr) >= sizeof(addr))
        return -1;
    snprintf(addr, sizeof(addr), "%.*s", (int)(slash - cidr), cidr);
    *prefix = atoi(slash + 1);
    if (inet_pton(AF_INET, addr, &a) != 1 || *prefix <= 0 || *prefix > 32)
        return -1;
    uint32_t mask = *prefix == 32 ? 0xffffffffu : ~(0xffffffffu >> *prefix);
    *net = ntohl(a.s_addr) & mask;
    return 0;
}

/* The node's interface on network net/prefix (not a container bridge), or NULL. */
static const char *iface_on(const json_t *node, uint32_t net, int prefix)
{
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(node, "interfaces"), i, f) {
        uint32_t n;
        int p;
        const char *name = json_string_value(json_object_get(f, "name"));
        if (name && !topo_iface_is_virtual(name) &&
            !parse_cidr(json_string_value(json_object_get(f, "cidr")), &n, &p) && n == net &&
            p == prefix)
            return name;
    }
    return NULL;
}

/* The first subnet of the first host that every host has an interface on: "10.77.0.0/24". */
static char *shared_subnet(const json_t *nodes)
{
    size_t i, j;
    json_t *f;
    json_array_foreach(json_object_get(json_array_get(nodes, 0), "interfaces"), i, f) {
        uint32_t net;
        int prefix, everywhere = 1;
        if (parse_cidr(json_string_value(json_object_get(f, "cidr")), &net, &prefix))
            continue;
        for (j = 0; j < json_array_size(nodes) && everywhere; j++)
            everywhere = iface_on(json_array_get(nodes, j), net, prefix) != NULL;
        if (!everywhere)
            continue;
        struct in_addr a = {.s_addr = htonl(net)};
        char addr[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &a, addr, sizeof(addr));
        struct util_buf b = UTIL_BUF_INIT;
        util_buf_addf(&b, "%s/%d", addr, prefix);
        return util_buf_detach(&b);
    }
    return NULL;
}

static const char *class_of(const json_t *node)
{
    return json_string_value(
        json_object_get(json_object_get(json_object_get(node, "topology"), "class"), "id"));
}

/* Every host mapped and of one class; else an error naming the hosts per class. */
static int one_class(const json_t *nodes)
{
    size_t i;
    json_t *n;
    struct util_buf odd = UTIL_BUF_INIT;
    const char *first = class_of(json_array_get(nodes, 0));
    json_array_foreach(nodes, i, n) {
        const char *host = json_string_value(json_object_get(n, "host"));
        if (!class_of(n)) {
            util_buf_release(&odd);
            return util_error("host %s could not be mapped (%s): run topotune topo on it",
                              host ? host : "?",
                              json_string_value(json_object_get(n, "error")) ?: "no topology"),
                   UTIL_EENV;
        }
        if (first && strcmp(class_of(n), first))
            util_buf_addf(&odd, ", %s is %s", host ? host : "?", class_of(n));
    }
    int rc = odd.len ? UTIL_EINVAL : 0;
    if (odd.len)
        util_error("the hosts are not one node class (%s is %s%s): sweep each class on its own, "
                   "with --hosts listing that class's hosts (topotune topo --hosts groups them)",
                   json_string_value(json_object_get(json_array_get(nodes, 0), "host")), first,
                   util_buf_str(&odd));
    util_buf_release(&odd);
    return rc;
}

/* The NCCL the runs load: the hosts' (a topology file's reader keeps no software), the first
 * host's when they differ, said. */
static void hosts_nccl(const json_t *nodes, struct topo *t)
{
    const char *first = NULL, *first_host = NULL;
    size_t i;
    json_t *n;
    json_array_foreach(nodes, i, n) {
        const char *v = json_string_value(
            json_object_get(json_object_get(json_object_get(n, "topology"), "software"), "nccl"));
        const char *host = json_string_value(json_object_get(n, "host"));
        if (!v || !*v || strlen(v) > 16 || v[strspn(v, "0123456789.")]) /* a version, or none */
            continue;
        if (!first) {
            first = v;
            first_host = host;
        } else if (strcmp(v, first)) {
            util_warning("the hosts load different NCCL releases (%s: %s, %s: %s): the version "
                         "rules use %s's",
                         first_host ? first_host : "?", first, host ? host : "?", v,
                         first_host ? first_host : "?");
            break;
        }
    }
    if (first && !t->software.nccl)
        t->software.nccl = util_xstrdup(first);
}

int sweep_map_hosts(struct sweep *sw, struct topo *t)
{
    json_t *nodes = cluster_gather(sw->hosts, "topo", NULL, 300);
    if (!nodes)
        return UTIL_EENV;
    int rc = one_class(nodes);
    const json_t *first = json_array_get(nodes, 0);
    if (!rc) {
        sw->host_topology = json_dumps(json_object_get(first, "topology"), JSON_COMPACT);
        rc = topo_load_buffer(t, json_string_value(json_object_get(first, "host")),
                              sw->host_topology, strlen(sw->host_topology))
                 ? UTIL_EENV
                 : 0;
    }
    if (!rc)
        hosts_nccl(nodes, t);
    if (!rc && strcmp(sw->backend, "sim")) { /* nccl also starts, and bootstraps, through MPI */
        sw->btl_subnet = shared_subnet(nodes);
        if (!sw->btl_subnet) {
            util_error("the hosts share no IPv4 subnet outside loopback and container bridges: set "
                       "OMPI_MCA_btl_tcp_if_include in the space's \"fixed\" to the network the "
                       "ranks should use");
            rc = UTIL_EENV;
        } else
            util_info("sweep: Open MPI's TCP transport pinned to %s, the subnet every host shares",
                      sw->btl_subnet);
    }
    if (!rc)
        sw->host_nodes = json_incref(nodes);
    json_decref(nodes);
    return rc;
}
