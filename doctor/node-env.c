/* SPDX-License-Identifier: MIT */
/* The values of a profile that differ from node to node, resolved on this node. */
#include "doctor/doctor.h"
#include "doctor/internal.h"
#include "util/buf.h"
#include "util/env.h"
#include "util/json.h"
#include "util/text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The profile's value of name, or NULL when it does not set it. */
static const char *profile_value(const json_t *profile, const char *name)
{
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(profile, "variables"), i, v)
        if (!strcmp(util_json_str(v, "name", ""), name))
            return util_json_str(v, "value", NULL);
    return NULL;
}

/* 1 when port p can carry NCCL's traffic: active, and a RoCE port only with its RoCE v2 GID. */
static int usable(const json_t *p)
{
    return json_is_true(json_object_get(p, "active")) &&
           !(json_is_true(json_object_get(p, "roce")) &&
             json_integer_value(json_object_get(p, "gid")) < 0);
}

/* One NCCL_IB_HCA entry ("mlx5_0", "mlx5_0:1") against a port, as NCCL reads it: the device by
 * prefix, or whole with exact ("=..." lists); the port when the entry names one. */
static int entry_takes(const char *entry, size_t len, int exact, const json_t *p)
{
    const char *dev = util_json_str(p, "dev", ""), *port = util_json_str(p, "port", "");
    /* the colon within this entry only: strcspn ran to the value's end once per entry and port,
     * and a profile of 200,000 entries held env --node for minutes */
    const char *colon = memchr(entry, ':', len);
    size_t d = colon ? (size_t)(colon - entry) : len;
    if (strncmp(dev, entry, d) || (exact && dev[d]))
        return 0;
    return d == len ||
           ((size_t)strlen(port) == len - d - 1 && !strncmp(port, entry + d + 1, len - d - 1));
}

int doctor_hca_takes(const char *value, const json_t *p)
{
    if (!value || !*value)
        return 1;
    int exclude = value[0] == '^', exact = value[exclude] == '=', hit = 0, entries = 0;
    for (const char *e = value + exclude + exact; *e && !hit;
         e += strcspn(e, ","), e += *e == ',') {
        size_t len = strcspn(e, ",");
        entries += len > 0;
        hit = len && entry_takes(e, len, exact, p);
    }
    if (!entries) /* NCCL's matchIfList: an empty list matches every device ("^," takes none) */
        hit = 1;
    return exclude ? !hit : hit;
}

/* A value as a note shows it, into b: its first 140 bytes, made safe text (a cut inside a UTF-8
 * character, or a shell's value of other bytes, made the note no UTF-8, and Jansson dropped it
 * without a word). */
static const char *clip(struct util_buf *b, const char *s)
{
    size_t len = strlen(s);
    util_buf_reset(b);
    util_text_clean(b, s, len < 150 ? len : 140, 0);
    if (len >= 150)
        util_buf_adds(b, "...");
    return util_buf_str(b);
}

/* One more entry that is not here (n before it): the first few into missing, then "..." (a note,
 * not a copy: a hostile list of 300,000 entries made one of megabytes). */
static void add_missing(struct util_buf *missing, const char *e, size_t len, int n)
{
    if (n && missing->len > 200) { /* the cut said once */
        if (memcmp(missing->data + missing->len - 4, ",...", 4))
            util_buf_adds(missing, ",...");
        return;
    }
    if (missing->len)
        util_buf_adds(missing, ",");
    util_text_clean(missing, e, len > 64 ? 64 : len, 0);
}

/*
 * The entries of an NCCL_IB_HCA value that no usable port here takes, comma-joined into missing;
 * 0 for an exclusion list ("^..."), which names what NCCL leaves out, not what it needs.
 */
static int hca_missing(const char *value, const json_t *ports, struct util_buf *missing)
{
    if (value[0] == '^')
        return 0;
    int exact = value[0] == '=', n = 0;
    for (const char *e = value + exact; *e; e += strcspn(e, ","), e += *e == ',') {
        size_t len = strcspn(e, ","), i;
        int taken = 0;
        json_t *p;
        json_array_foreach(ports, i, p)
            taken |= len && usable(p) && entry_takes(e, len, exact, p);
        if (len && !taken)
            add_missing(missing, e, len, n++);
    }
    return n;
}

/* The profile's NCCL_IB_HCA where this node has what it names (an exclusion list always), else
 * "=dev:port,..." of this node's usable ports. */
static void hca(json_t *env, json_t *notes, const json_t *ports, const char *want)
{
    struct util_buf b = UTIL_BUF_INIT, missing = UTIL_BUF_INIT;
    struct util_buf shown = UTIL_BUF_INIT;
    if (want && !hca_missing(want, ports, &missing)) {
        json_object_set_new(env, "NCCL_IB_HCA", json_string(want));
        goto out;
    }
    size_t i;
    json_t *p;
    json_array_foreach(ports, i, p)
        if (usable(p))
            util_buf_addf(&b, "%s%s:%s", b.len ? "," : "=", util_json_str(p, "dev", "?"),
                          util_json_str(p, "port", "?"));
    if (b.len) {
        json_object_set_new(env, "NCCL_IB_HCA", json_string(util_buf_str(&b)));
        if (want)
            json_array_append_new(notes,
                                  json_sprintf("NCCL_IB_HCA: the profile's %s names what this "
                                               "node lacks (%s): its active ports instead",
                                               clip(&shown, want), util_buf_str(&missing)));
    } else {
        json_object_set_new(env, "NCCL_IB_HCA", json_null());
        json_array_append_new(notes, json_string("NCCL_IB_HCA: no active InfiniBand or RoCE port "
                                                 "on this node: unset, left to NCCL (sockets)"));
    }
out:
    util_buf_release(&b);
    util_buf_release(&missing);
    util_buf_release(&shown);
}

/* The RoCE v2 IPv4 GID index of the active RoCE ports, when they agree. */
static void gid(json_t *env, json_t *notes, const json_t *ports)
{
    long long index = -1;
    int mixed = 0;
    size_t i;
    json_t *p;
    json_array_foreach(ports, i, p) {
        long long g = json_integer_value(json_object_get(p, "gid"));
        if (!json_is_true(json_object_get(p, "roce")) || g < 0)
            continue;
        mixed |= index >= 0 && g != index;
        index = index < 0 ? g : index;
    }
    if (index >= 0 && !mixed)
        json_object_set_new(env, "NCCL_IB_GID_INDEX", json_sprintf("%lld", index));
    else
        json_object_set_new(env, "NCCL_IB_GID_INDEX", json_null());
    if (index < 0 || mixed)
        json_array_append_new(notes,
                              json_string(mixed ? "NCCL_IB_GID_INDEX: this node's RoCE ports have "
                                                  "different RoCE v2 GID indexes: unset, left to "
                                                  "NCCL"
                                                : "NCCL_IB_GID_INDEX: no active RoCE port with a "
                                                  "RoCE v2 IPv4 GID on this node: unset, left to "
                                                  "NCCL"));
}

/* The profile's interface when this node has one it takes, else this node's data interface. */
static void ifname(json_t *env, json_t *notes, const char *want)
{
    char name[256];
    json_t *mine = NULL; /* a name of bytes that are not UTF-8 (the kernel allows them): none */
    if (want && doctor_data_interface(want, name, sizeof(name)))
        json_object_set_new(env, "NCCL_SOCKET_IFNAME", json_string(want));
    else if (doctor_data_interface(NULL, name, sizeof(name)) && (mine = json_sprintf("=%s", name)))
        json_object_set_new(env, "NCCL_SOCKET_IFNAME", mine);
    else if (doctor_data_interface(NULL, name, sizeof(name))) {
        json_object_set_new(env, "NCCL_SOCKET_IFNAME", json_null());
        json_array_append_new(notes, json_string("NCCL_SOCKET_IFNAME: this node's data interface "
                                                 "has a name that is not UTF-8, which no value "
                                                 "here can carry: unset, left to NCCL"));
    } else {
        json_object_set_new(env, "NCCL_SOCKET_IFNAME", json_null());
        json_array_append_new(notes, json_string("NCCL_SOCKET_IFNAME: no interface with an "
                                                 "address here but bridges and veths: unset, "
                                                 "left to NCCL"));
    }
}

/* The per-node names other than NCCL's: interface and device lists of Open MPI and UCX, which
 * name one node's devices as NCCL_IB_HCA and NCCL_SOCKET_IFNAME do (an image that pinned them
 * left a node whose devices are named otherwise without its transport). Exclusion lists
 * (..._if_exclude) name what to leave out: every node's, not resolved. */
static const char *const other_lists[] = {"OMPI_MCA_btl_tcp_if_include",
                                          "OMPI_MCA_oob_tcp_if_include", "UCX_NET_DEVICES"};

static int other_list_name(const char *name)
{
    for (size_t i = 0; i < sizeof(other_lists) / sizeof(other_lists[0]); i++)
        if (!strcmp(name, other_lists[i]))
            return 1;
    return 0;
}

/* One entry of such a list present here: a subnet (a.b.c.d/n: every node's), UCX's "all", an
 * RDMA device:port that is usable here, or one of the interfaces up here (ifs). */
static int entry_here(const char *e, size_t len, const json_t *ports, const json_t *ifs)
{
    size_t i;
    json_t *x;
    if (len == 0 || memchr(e, '/', len) || (len == 3 && !strncmp(e, "all", 3)))
        return 1;
    if (memchr(e, ':', len)) {
        json_array_foreach(ports, i, x)
            if (usable(x) && entry_takes(e, len, 1, x))
                return 1;
        return 0;
    }
    json_array_foreach(ifs, i, x) {
        const char *name = json_string_value(x);
        if (strlen(name) == len && !strncmp(name, e, len))
            return 1;
    }
    return 0;
}

/* How many entries of the list are not here, the first of them comma-joined into missing (a
 * few hundred bytes: a note, not a copy). The interfaces are read once (a hostile list of
 * 300,000 entries would have read sysfs once each). */
static int list_missing(const char *value, const json_t *ports, struct util_buf *missing)
{
    json_t *ifs = doctor_up_interface_names();
    int n = 0;
    for (const char *e = value; *e; e += strcspn(e, ","), e += *e == ',') {
        size_t len = strcspn(e, ",");
        if (!entry_here(e, len, ports, ifs))
            add_missing(missing, e, len, n++);
    }
    json_decref(ifs);
    return n;
}

/* The profile's list where this node has all it names; else this node's own: its usable RDMA
 * ports (dev:port) for a UCX list that named ports, its data interface for the rest; else unset,
 * left to the library (every device). */
static void other_list(json_t *env, json_t *notes, const json_t *ports, const char *name,
                       const char *want)
{
    struct util_buf b = UTIL_BUF_INIT, missing = UTIL_BUF_INIT;
    char data[256];
    struct util_buf shown = UTIL_BUF_INIT;
    if (!list_missing(want, ports, &missing)) {
        json_object_set_new(env, name, json_string(want));
        goto out;
    }
    size_t i;
    json_t *p;
    if (!strcmp(name, "UCX_NET_DEVICES") && strchr(want, ':'))
        json_array_foreach(ports, i, p)
            if (usable(p))
                util_buf_addf(&b, "%s%s:%s", b.len ? "," : "", util_json_str(p, "dev", "?"),
                              util_json_str(p, "port", "?"));
    if (!b.len && doctor_data_interface(NULL, data, sizeof(data)))
        util_buf_adds(&b, data);
    json_object_set_new(env, name, b.len ? json_string(util_buf_str(&b)) : json_null());
    json_array_append_new(
        notes, json_sprintf("%s: the profile's %s names what this node lacks "
                            "(%s): %s",
                            name, clip(&shown, want), util_buf_str(&missing),
                            b.len ? "this node's own instead" : "unset, left to the library"));
out:
    util_buf_release(&b);
    util_buf_release(&missing);
    util_buf_release(&shown);
}

/* doctor_node_env over ports already read (NULL: read here when a name needs them). */
static json_t *node_env(const json_t *profile, int every, const json_t *ports, json_t **notes)
{
    json_t *env = json_object(), *read = NULL;
    *notes = json_array();
    const char *want_hca = profile_value(profile, "NCCL_IB_HCA");
    int rdma = every || want_hca || profile_value(profile, "NCCL_IB_GID_INDEX") ||
               profile_value(profile, "UCX_NET_DEVICES");
    if (rdma && !ports)
        ports = read = doctor_rdma_ports();
    if (every || want_hca)
        hca(env, *notes, ports, want_hca);
    if (every || profile_value(profile, "NCCL_IB_GID_INDEX"))
        gid(env, *notes, ports);
    const char *want = profile_value(profile, "NCCL_SOCKET_IFNAME");
    if (every || want)
        ifname(env, *notes, want);
    for (size_t i = 0; i < sizeof(other_lists) / sizeof(other_lists[0]); i++)
        if ((want = profile_value(profile, other_lists[i])))
            other_list(env, *notes, ports, other_lists[i], want);
    json_decref(read);
    return env;
}

json_t *doctor_node_env(const json_t *profile, int every, json_t **notes)
{
    return node_env(profile, every, NULL, notes);
}

/* What this shell sets for name against this node's value: NULL when they agree, else why. */
static const char *disagrees(const char *name, const char *set, const char *here,
                             const json_t *ports, struct util_buf *why)
{
    if (other_list_name(name)) {
        struct util_buf missing = UTIL_BUF_INIT, shown = UTIL_BUF_INIT;
        if (list_missing(set, ports, &missing))
            util_buf_addf(why, "%s=%s names what this node lacks (%s); this node's is %s", name,
                          clip(&shown, set), util_buf_str(&missing),
                          here ? here : "none (the library's own)");
        util_buf_release(&missing);
        util_buf_release(&shown);
    } else if (!strcmp(name, "NCCL_IB_HCA")) {
        struct util_buf missing = UTIL_BUF_INIT, shown = UTIL_BUF_INIT;
        if (hca_missing(set, ports, &missing))
            util_buf_addf(why,
                          "NCCL_IB_HCA=%s names what no active port here takes (%s); this "
                          "node's are %s",
                          clip(&shown, set), util_buf_str(&missing), here ? here : "none");
        util_buf_release(&missing);
        util_buf_release(&shown);
    } else if (!strcmp(name, "NCCL_SOCKET_IFNAME")) {
        char raw[256]; /* NCCL's pick; lo by an exclusion ("^docker") is no data interface */
        int found = doctor_nccl_interface(set, raw, sizeof(raw));
        if (found && !strcmp(raw, "lo") && set[0] == '^')
            util_buf_addf(why,
                          "NCCL_SOCKET_IFNAME=%s takes lo here (an exclusion leaves lo in): a job "
                          "across nodes cannot start%s%s",
                          set, here ? "; this node's is " : "", here ? here : "");
        else if (!found)
            util_buf_addf(why, "NCCL_SOCKET_IFNAME=%s takes no interface with an address here%s%s",
                          set, here ? "; this node's is " : "", here ? here : "");
    } else if (here && strtoll(set, NULL, 0) >= 0 && strtoll(set, NULL, 0) != atoll(here)) {
        /* read as NCCL reads it (strtoll, base 0: "03" is 3); a negative index is NCCL's
         * default, which picks the GID itself */
        util_buf_addf(why, "%s=%s, but this node's RoCE v2 IPv4 GID is at index %s", name, set,
                      here);
    }
    return why->len ? util_buf_str(why) : NULL;
}

void doctor_check_node_values(json_t *checks, const json_t *profile)
{
    int any = 0;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(profile, "variables"), i, v)
        any |= util_env_per_node(util_json_str(v, "name", ""));
    if (!any) /* nothing per node: no sysfs to read */
        return;
    json_t *ports = doctor_rdma_ports(), *notes, *env = node_env(profile, 0, ports, &notes);
    struct util_buf evidence = UTIL_BUF_INIT, why = UTIL_BUF_INIT;
    int bad = 0;
    json_array_foreach(json_object_get(profile, "variables"), i, v) {
        const char *name = util_json_str(v, "name", "");
        if (!util_env_per_node(name))
            continue;
        const char *here = json_string_value(json_object_get(env, name)), *set = getenv(name);
        util_buf_reset(&why);
        if (set && disagrees(name, set, here, ports, &why)) {
            bad = 1;
            util_buf_addf(&evidence, "%s%s", evidence.len ? "; " : "", util_buf_str(&why));
        } else {
            util_buf_addf(&evidence, "%s%s: this node's %s", evidence.len ? "; " : "", name,
                          here ? here : "(none: left to NCCL)");
        }
    }
    json_array_foreach(notes, i, v)
        util_buf_addf(&evidence, "; %s", json_string_value(v));
    doctor_add(checks, "node-values",
               bad                      ? "fail"
               : json_array_size(notes) ? "warn"
                                        : "pass",
               bad || json_array_size(notes)
                   ? "resolve them on each node: eval \"$(topotune env --node --profile DIR)\", "
                     "as the profile's launch scripts do"
                   : NULL,
               "%s", util_buf_str(&evidence));
    util_buf_release(&evidence);
    util_buf_release(&why);
    json_decref(env);
    json_decref(notes);
    json_decref(ports);
}
