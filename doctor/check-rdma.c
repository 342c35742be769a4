/* SPDX-License-Identifier: MIT */
/*
 * InfiniBand and RoCE ports, read from /sys/class/infiniband (under the sysfs
 * root): NCCL skips ports that are not ACTIVE, so a node whose ports are all
 * down silently falls back to TCP sockets. On RoCE, NCCL needs the GID index of
 * a RoCE v2 GID carrying an IPv4 address; older NCCL takes index 0 (RoCE v1 or
 * a link-local address) unless NCCL_IB_GID_INDEX says otherwise.
 */
#include "doctor/internal.h"
#include "util/buf.h"
#include "util/env.h"
#include "util/file.h"
#include "util/json.h"
#include "util/mem.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GIDS 256

struct rdma_scan {
    int ports, active, roce, roce_bad, gid_wrong;
    int suggest; /* the RoCE v2 IPv4 GID index of the first RoCE port, or -1 */
    struct util_buf evidence;
};

/* Reads /sys/class/infiniband/DEV/ports/PORT/ATTR; index >= 0 is appended to attr ("gids/3"). */
static int read_attr(struct util_buf *val, const char *dev, const char *port, const char *attr,
                     int index)
{
    struct util_buf path = UTIL_BUF_INIT;
    util_buf_addf(&path, "/sys/class/infiniband/%s/ports/%s/%s", dev, port, attr);
    if (index >= 0)
        util_buf_addf(&path, "/%d", index);
    int rc = util_sysfs_read_line(path.data, val);
    util_buf_release(&path);
    return rc;
}

/* "0000:0000:0000:0000:0000:ffff:0a00:0001" is ::ffff:10.0.0.1: an IPv4 GID. */
static int ipv4_gid(const char *gid, char *addr, size_t len)
{
    unsigned a, b, c, d;
    if (strncmp(gid, "0000:0000:0000:0000:0000:ffff:", 30) ||
        sscanf(gid + 30, "%2x%2x:%2x%2x", &a, &b, &c, &d) != 4)
        return 0;
    snprintf(addr, len, "%u.%u.%u.%u", a, b, c, d);
    return 1;
}

/* The first GID index of a port that is RoCE v2 with an IPv4 address, or -1. */
static int roce_v2_index(const char *dev, const char *port, char *addr, size_t len)
{
    struct util_buf gid = UTIL_BUF_INIT, type = UTIL_BUF_INIT;
    int found = -1;
    for (int i = 0; i < MAX_GIDS && found < 0; i++) {
        if (read_attr(&gid, dev, port, "gids", i))
            break;
        if (read_attr(&type, dev, port, "gid_attrs/types", i) == 0 &&
            strcmp(util_buf_str(&type), "RoCE v2") == 0 && ipv4_gid(util_buf_str(&gid), addr, len))
            found = i;
    }
    util_buf_release(&gid);
    util_buf_release(&type);
    return found;
}

/* One port's facts: {dev, port, active, roce, gid (the RoCE v2 IPv4 GID index, -1), addr}; NULL
 * for a port of another link layer than InfiniBand or Ethernet (the kernel's "Unknown": EFA),
 * which NCCL's IB transport skips (net_ib/init.cc) and reaches, if at all, through a net plugin. */
static json_t *port_facts(const char *dev, const char *port)
{
    struct util_buf state = UTIL_BUF_INIT, layer = UTIL_BUF_INIT;
    read_attr(&state, dev, port, "state", -1);
    read_attr(&layer, dev, port, "link_layer", -1);
    const char *l = util_buf_str(&layer);
    if (*l && strcmp(l, "InfiniBand") && strcmp(l, "Ethernet")) {
        util_buf_release(&state);
        util_buf_release(&layer);
        return NULL;
    }
    int active = strstr(util_buf_str(&state), "ACTIVE") != NULL;
    int roce = strcmp(util_buf_str(&layer), "Ethernet") == 0;
    char addr[64] = "";
    int gid = roce && active ? roce_v2_index(dev, port, addr, sizeof(addr)) : -1;
    util_buf_release(&state);
    util_buf_release(&layer);
    return json_pack("{s:s,s:s,s:b,s:b,s:i,s:s}", "dev", dev, "port", port, "active", active,
                     "roce", roce, "gid", gid, "addr", addr);
}

static int by_dev_port(const void *a, const void *b)
{
    json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
    int c = strcmp(json_string_value(json_object_get(x, "dev")),
                   json_string_value(json_object_get(y, "dev")));
    return c ? c
             : atoi(json_string_value(json_object_get(x, "port"))) -
                   atoi(json_string_value(json_object_get(y, "port")));
}

/* The ports of one device, into out. */
static void device_ports(json_t *out, const char *dev)
{
    struct util_buf dir = UTIL_BUF_INIT;
    util_buf_addf(&dir, "%s/sys/class/infiniband/%s/ports", util_sysfs_root(), dev);
    DIR *d = opendir(dir.data);
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') {
            json_t *p = port_facts(dev, e->d_name);
            if (p)
                json_array_append_new(out, p);
        }
    if (d)
        closedir(d);
    util_buf_release(&dir);
}

json_t *doctor_rdma_ports(void)
{
    json_t *ports = json_array();
    struct util_buf dir = UTIL_BUF_INIT;
    util_buf_addf(&dir, "%s/sys/class/infiniband", util_sysfs_root());
    DIR *d = opendir(dir.data);
    for (struct dirent *e; d && (e = readdir(d));) /* Slingshot's verbs devices (cxi*) are not */
        if (e->d_name[0] != '.' && strncmp(e->d_name, "cxi", 3) != 0) /* NCCL's: it uses OFI */
            device_ports(ports, e->d_name);
    if (d)
        closedir(d);
    util_buf_release(&dir);
    size_t n = json_array_size(ports);
    json_t **items = util_xmalloc(sizeof(json_t *) * (n + 1));
    for (size_t i = 0; i < n; i++)
        items[i] = json_incref(json_array_get(ports, i));
    qsort(items, n, sizeof(json_t *), by_dev_port);
    json_array_clear(ports);
    for (size_t i = 0; i < n; i++)
        json_array_append_new(ports, items[i]);
    free(items);
    return ports;
}

static void scan_port(struct rdma_scan *s, const json_t *p)
{
    const char *dev = json_string_value(json_object_get(p, "dev"));
    const char *port = json_string_value(json_object_get(p, "port"));
    int active = json_is_true(json_object_get(p, "active"));
    int roce = json_is_true(json_object_get(p, "roce"));
    s->ports++;
    s->active += active;
    util_buf_addf(&s->evidence, "%s%s/%s %s %s", s->evidence.len ? "; " : "", dev, port,
                  roce ? "RoCE" : "IB", active ? "ACTIVE" : "not active");
    if (roce && active) {
        int index = (int)json_integer_value(json_object_get(p, "gid"));
        const char *want = util_env_nccl("NCCL_IB_GID_INDEX", NULL);
        s->roce++;
        if (index < 0) {
            s->roce_bad++;
            util_buf_addf(&s->evidence, " with no RoCE v2 GID holding an IPv4 address");
        } else {
            util_buf_addf(&s->evidence, " RoCE v2 GID index %d (%s)", index,
                          json_string_value(json_object_get(p, "addr")));
            if (s->suggest < 0)
                s->suggest = index;
            /* a negative index is NCCL's own default: it picks the GID itself */
            long long w = want && *want ? strtoll(want, NULL, 0) : -1; /* as NCCL reads it */
            if (w >= 0 && w != index) {
                s->gid_wrong++;
                util_buf_addf(&s->evidence, ", but NCCL_IB_GID_INDEX=%s", want);
            }
        }
    }
}

void doctor_check_rdma(json_t *c, const struct topo *t)
{
    struct rdma_scan s = {.suggest = -1, .evidence = UTIL_BUF_INIT};
    struct util_buf fix = UTIL_BUF_INIT, usable = UTIL_BUF_INIT;
    json_t *ports = doctor_rdma_ports(), *p;
    const char *hca = util_env_nccl("NCCL_IB_HCA", NULL); /* nccl.conf's too: NCCL reads it */
    size_t i;
    int all = 0; /* every port here; s counts those NCCL_IB_HCA leaves NCCL */
    json_array_foreach(ports, i, p) {
        all++;
        if (json_is_true(json_object_get(p, "active")))
            util_buf_addf(&usable, "%s%s:%s", usable.len ? "," : "=", util_json_str(p, "dev", "?"),
                          util_json_str(p, "port", "?"));
        if (doctor_hca_takes(hca, p))
            scan_port(&s, p);
    }
    json_decref(ports);
    int libfabric = topo_libfabric_nics(t); /* NICs reached through the plugin, not verbs */
    if (libfabric) { /* NCCL runs on the plugin's NICs alone: the verbs ports are not its */
        doctor_add(c, "rdma", "pass", NULL,
                   "%d EFA or Slingshot NIC(s), which NCCL reaches through its net plugin "
                   "(aws-ofi-nccl), not verbs%s",
                   libfabric,
                   all ? "; the InfiniBand or RoCE ports beside them carry none of NCCL's "
                         "traffic (an AWS p6's manage its NVSwitches)"
                       : "");
        goto out;
    }
    if (all && hca && *hca && !s.active) { /* NCCL then finds no device and uses sockets */
        doctor_add(c, "rdma", "fail",
                   usable.len ? "set NCCL_IB_HCA to this node's active ports, or leave it unset"
                              : "check cables and the subnet manager (ibstat, ibv_devinfo)",
                   "NCCL_IB_HCA=%s takes no active port of the %d here%s%s: NCCL finds no IB "
                   "device and falls back to TCP sockets",
                   hca, all, usable.len ? "; active: " : "", util_buf_str(&usable));
        goto out;
    }
    const char *status = "pass";
    if (!s.ports) {
        doctor_add(c, "rdma", "pass", NULL, "no InfiniBand or RoCE device: NCCL uses sockets");
        goto out;
    }
    if (!s.active) {
        status = "fail";
        util_buf_addf(&fix, "no port is active, so NCCL falls back to TCP sockets: check cables "
                            "and the subnet manager (ibstat, ibv_devinfo)");
    } else if (s.gid_wrong) {
        status = "fail";
        util_buf_addf(&fix, "export NCCL_IB_GID_INDEX=%d", s.suggest);
    } else if (s.roce_bad) {
        status = "warn";
        util_buf_addf(&fix, "give the RoCE interface an IPv4 address so that a RoCE v2 GID "
                            "exists (ip addr add ... dev <netdev>)");
    } else if (s.active < s.ports) {
        status = "warn";
        util_buf_addf(&fix, "NCCL skips ports that are not active: fix their cables or leave "
                            "them out on purpose with NCCL_IB_HCA");
    } else if (s.suggest >= 0 && (!util_env_nccl("NCCL_IB_GID_INDEX", NULL) ||
                                  atoi(util_env_nccl("NCCL_IB_GID_INDEX", NULL)) < 0)) {
        util_buf_addf(&s.evidence,
                      "; NCCL 2.21 and later find this GID themselves, older "
                      "NCCL needs NCCL_IB_GID_INDEX=%d",
                      s.suggest);
    }
    doctor_add(c, "rdma", status, fix.len ? util_buf_str(&fix) : NULL,
               "%d of %d port(s) active: %s", s.active, s.ports, util_buf_str(&s.evidence));
out:
    util_buf_release(&s.evidence);
    util_buf_release(&fix);
    util_buf_release(&usable);
}
