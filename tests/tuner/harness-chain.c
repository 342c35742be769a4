/* SPDX-License-Identifier: MIT */
/* The chain to the tuner NCCL would have loaded without us, the node-kind check against the
 * node the plugin runs on, and the channel clamp. */
#include "harness.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef void (*counts_fn)(int version, int *inits, int *calls, int *destroys);

static counts_fn counts_of(void *lib)
{
    return lib ? (counts_fn)dlsym(lib, "fake_next_counts") : NULL;
}

/* The fake next tuner's chunk-size hook calls (NCCL 2.30, v6): set by the scenarios that load it.
 */
static int (*chunk_calls)(void);

/* Through NCCL 2.30's chunk-size hook: a v6 next tuner's decides (the fake's 12345, called once);
 * with an older one, or none, the chunk NCCL computed stays. */
static void chunk_call(const struct emu_comm *c, int next_v6, const char *what)
{
    if (c->p->version != 6)
        return;
    const struct tuner_nccl_v6 *ours = c->p->sym;
    int before = chunk_calls ? chunk_calls() : 0;
    size_t chunk = 4096;
    CHECK(ours->get_chunk_size(c->ctx, 4, 1 << 20, 1, 2, 4, &chunk) == 0, "%s: chunk hook failed",
          what);
    int after = chunk_calls ? chunk_calls() : 0;
    CHECK(next_v6 ? chunk == 12345 && after == before + 1 : chunk == 4096 && after == before,
          "%s: chunk size %zu after %d forwarded calls", what, chunk, after - before);
}

static int calls_of(counts_fn f, int v)
{
    int i, c, d;
    f(v, &i, &c, &d);
    return c;
}

/* One call checked: a row of the main table decides it (NCCL picks the row's pair), or the
 * next tuner does (ring/LL, 3 channels) and it was called once through interface `v`. */
static void chained_call(const struct emu_comm *c, counts_fn f, int v, int coll, size_t bytes,
                         int ll128, int table_decides, const char *what)
{
    struct emu_call call = {.coll = coll, .bytes = bytes, .n_channels = SENTINEL_CHANNELS};
    emu_costs(coll, c->nodes, c->ranks, bytes, c->p->gen->num_algo, ll128, call.table);
    int before = calls_of(f, v), a, p;
    emu_call(c, &call);
    CHECK(call.rc == 0 && emu_pick(call.table, c->p->gen->num_algo, &a, &p) == 0,
          "NCCL %s: %s: no pick", c->p->gen->release, what);
    if (table_decides) {
        CHECK(calls_of(f, v) == before, "NCCL %s: %s: the next tuner was asked too",
              c->p->gen->release, what);
        return;
    }
    CHECK(calls_of(f, v) == before + 1, "NCCL %s: %s: the next tuner (v%d) was not asked",
          c->p->gen->release, what, v);
    CHECK(a == 1 && p == 0 && call.n_channels == 3,
          "NCCL %s: %s: the next tuner's ring/LL x3 not kept (%d/%d x%d)", c->p->gen->release, what,
          a, p, call.n_channels);
}

/* Every release from 2.22 on, chained to `next` (exporting v2..v6): the table's rows win, the
 * rest (no row, a row unavailable here) is the next tuner's, through the newest interface that
 * release resolves; init and destroy are forwarded once per communicator. */
static void chain_all_releases(counts_fn f, int v2_only, const char *what)
{
    for (size_t g = 1; g < emu_ngens; g++) {
        int v = v2_only ? 2 : loaded[g].version, i0, i1, d0, d1, c0;
        f(v, &i0, &c0, &d0);
        struct emu_comm c;
        emu_log_reset();
        CHECK(emu_comm_init(&c, &loaded[g], 1, 8) == 0, "init");
        CHECK(emu_log_count("elsewhere tuner fake-next (") == 1, "%s: load line: %s", what,
              emu_logged.n ? emu_logged.line[0] : "(none)");
        chained_call(&c, f, v, 4, 100, 1, 1, "a row (tree/LL)");
        chained_call(&c, f, v, 4, 300000, 1, 0, "no row");
        chained_call(&c, f, v, 4, 100000, 0, 0, "a row unavailable here (LL128 off)");
        chained_call(&c, f, v, 1, 100, 1, 0, "a collective without rows");
        chunk_call(&c, !v2_only, what);
        CHECK(emu_comm_destroy(&c) == 0, "destroy");
        f(v, &i1, &c0, &d1);
        CHECK(i1 == i0 + 1 && d1 == d0 + 1, "NCCL %s: %s: %d inits, %d destroys forwarded",
              emu_gens[g].release, what, i1 - i0, d1 - d0);
    }
}

static void expect_forwarded_all(counts_fn f, const char *what, const char *needle)
{
    const struct emu_plugin *p = &loaded[emu_ngens - 1];
    struct emu_comm c;
    emu_log_reset();
    CHECK(emu_comm_init(&c, p, 1, 8) == 0, "init");
    CHECK(emu_log_count(needle) == 1, "%s: no \"%s\": %s", what, needle,
          emu_logged.n ? emu_logged.line[0] : "(none)");
    chained_call(&c, f, p->version, 4, 100, 1, 0, what);
    CHECK(emu_comm_destroy(&c) == 0, "destroy");
}

/* The table applies, with one warning about the next tuner, and the rest is NCCL's. */
static void expect_applied_warned(const char *what, const char *needle)
{
    for (size_t g = 1; g < emu_ngens; g++) {
        struct emu_comm c;
        emu_log_reset();
        CHECK(emu_comm_init(&c, &loaded[g], 1, 8) == 0, "%s: init failed", what);
        CHECK(emu_logged.warn == 1 && emu_log_count(needle) == 1, "%s: %d warnings: %s", what,
              emu_logged.warn, emu_logged.n ? emu_logged.line[0] : "(none)");
        CHECK(check_call(&c, main_rows, main_nrows, 4, 100, 1) == OUT_HIT, "%s: no hit", what);
        CHECK(check_call(&c, main_rows, main_nrows, 4, 300000, 1) == OUT_MISS, "%s: not NCCL's",
              what);
        CHECK(emu_comm_destroy(&c) == 0, "%s: destroy failed", what);
    }
}

/* A next tuner whose getCollInfo fails, in every release: NCCL gets its error, as it would have
 * from it directly (it got success, and the half-written choice), and a v2-only one's outputs
 * stay out of the cost table (NCCL's own adapter checks the call first). A row still decides. */
static void next_fails(counts_fn f, int v2_only, const char *what)
{
    env_set("FAKE_NEXT_FAIL", "1");
    for (size_t g = 0; g < emu_ngens; g++) {
        struct emu_comm c;
        CHECK(emu_comm_init(&c, &loaded[g], 1, 8) == 0, "%s: init", what);
        int v = v2_only || g == 0 ? 2 : loaded[g].version, before = calls_of(f, v);
        struct emu_call call = {.coll = 4, .bytes = 300000, .algo = -1, .proto = -1, .nvls = 1};
        call.n_channels = SENTINEL_CHANNELS;
        emu_costs(4, c.nodes, c.ranks, 300000, c.p->gen->num_algo, 1, call.table);
        float costs[EMU_ALGOS][EMU_PROTOS];
        memcpy(costs, call.table, sizeof(costs));
        emu_call(&c, &call);
        CHECK(calls_of(f, v) == before + 1 && call.rc == 3, "NCCL %s: %s: result %d, not its error",
              c.p->gen->release, what, call.rc);
        CHECK(!v2_only || g == 0 || !memcmp(costs, call.table, sizeof(costs)),
              "NCCL %s: %s: a failed v2 call's choice written into the cost table",
              c.p->gen->release, what);
        if (g > 0)
            CHECK(check_call(&c, main_rows, main_nrows, 4, 100, 1) == OUT_HIT, "%s: no hit", what);
        CHECK(emu_comm_destroy(&c) == 0, "%s: destroy", what);
    }
    env_set("FAKE_NEXT_FAIL", NULL);
}

/* The support flags a v2-only next tuner gets from a cost table, as NCCL's own v2 adapter
 * (plugin/tuner/tuner_v2.cc) computes them: NVLS where NVLS or NVLS tree Simple is available,
 * CollNet where CollNet chain Simple is. */
static void v2_support_flags(void *next_v2)
{
    typedef void (*flags_fn)(int *collnet, int *nvls);
    flags_fn flags = (flags_fn)dlsym(next_v2, "fake_next_flags");
    CHECK(flags != NULL, "fake_next_flags: %s", dlerror());
    static const struct {
        int algo, proto, collnet, nvls;
        const char *what;
    } cases[] = {
        {5, 2, 0, 1, "NVLS tree Simple alone"},
        {4, 2, 0, 1, "NVLS Simple alone"},
        {4, 0, 0, 0, "NVLS LL alone (no NVLS for NCCL's adapter)"},
        {3, 2, 1, 0, "CollNet chain Simple alone"},
        {2, 2, 0, 0, "CollNet direct Simple alone (NCCL's adapter reads the chain)"},
    };
    const struct emu_plugin *p = &loaded[emu_ngens - 1];
    for (size_t i = 0; flags && i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct emu_comm c;
        CHECK(emu_comm_init(&c, p, 2, 16) == 0, "init");
        struct emu_call call = {.coll = 4, .bytes = 300000, .n_channels = SENTINEL_CHANNELS};
        for (int a = 0; a < EMU_ALGOS; a++)
            for (int k = 0; k < EMU_PROTOS; k++)
                call.table[a][k] = -1.0f;
        call.table[1][2] = 50.0f; /* ring Simple, always there */
        call.table[cases[i].algo][cases[i].proto] = 10.0f;
        emu_call(&c, &call);
        int collnet, nvls;
        flags(&collnet, &nvls);
        CHECK(collnet == cases[i].collnet && nvls == cases[i].nvls,
              "v2 support flags, %s: collnet %d nvls %d, NCCL's adapter gives %d and %d",
              cases[i].what, collnet, nvls, cases[i].collnet, cases[i].nvls);
        CHECK(emu_comm_destroy(&c) == 0, "destroy");
    }
}

int scenario_chain(const char *next_path, const char *next_v2_path, const char *cycle_path)
{
    void *next = dlopen(next_path, RTLD_NOW | RTLD_LOCAL);
    void *next_v2 = dlopen(next_v2_path, RTLD_NOW | RTLD_LOCAL);
    counts_fn f = counts_of(next), f2 = counts_of(next_v2);
    CHECK(f && f2, "cannot open the fake next tuners: %s", dlerror());
    if (!f || !f2)
        return -1;
    chunk_calls = (int (*)(void))dlsym(next, "fake_next_chunk_calls");
    env_main_table();
    env_set("TOPOTUNE_NEXT_TUNER", next_path);
    chain_all_releases(f, 0, "TOPOTUNE_NEXT_TUNER");
    next_fails(f, 0, "a next tuner failing its calls");

    /* NCCL 2.21 (v2): outputs, no cost table; the next tuner's v2 decides what the table
     * does not. */
    struct emu_comm c;
    CHECK(emu_comm_init(&c, &loaded[0], 1, 8) == 0, "init");
    int before = calls_of(f, 2);
    struct emu_call call = {.coll = 4, .bytes = 300000, .algo = -1, .proto = -1, .nvls = 1};
    call.n_channels = SENTINEL_CHANNELS;
    emu_call(&c, &call);
    CHECK(calls_of(f, 2) == before + 1 && call.algo == 1 && call.proto == 0 && call.n_channels == 3,
          "v2: not forwarded (%d/%d x%d)", call.algo, call.proto, call.n_channels);
    call = (struct emu_call){.coll = 4, .bytes = 100, .algo = -1, .proto = -1, .nvls = 1};
    emu_call(&c, &call);
    CHECK(calls_of(f, 2) == before + 1 && call.algo == 0 && call.proto == 0, "v2: row lost");
    CHECK(emu_comm_destroy(&c) == 0, "destroy");

    /* A next tuner with v2 only, under cost-table releases: its choice becomes the cheapest. */
    env_set("TOPOTUNE_NEXT_TUNER", next_v2_path);
    chain_all_releases(f2, 1, "a v2-only next tuner");
    next_fails(f2, 1, "a v2-only next tuner failing its calls");
    v2_support_flags(next_v2);

    /* Unset: found as NCCL finds it, in the network plugin's library. */
    env_set("TOPOTUNE_NEXT_TUNER", NULL);
    env_set("NCCL_NET_PLUGIN", next_path);
    chain_all_releases(f, 0, "the network plugin's tuner");
    /* a list (NCCL 2.27 and later): the first library that loads is NCCL's network */
    char list[1024];
    snprintf(list, sizeof(list), "/nonexistent/libnccl-net-x.so,,%s,%s", next_path, next_v2_path);
    env_set("NCCL_NET_PLUGIN", list);
    chain_all_releases(f, 0, "the first network plugin of a list that loads");
    env_set("NCCL_NET_PLUGIN", NULL);

    /* Whatever keeps the table out, the next tuner still decides every call. */
    env_set("TOPOTUNE_NEXT_TUNER", next_path);
    env_set("TOPOTUNE_CLASS", "another-class");
    expect_forwarded_all(f, "a table of another class", "tuner fake-next (");
    env_main_table();
    env_set("TOPOTUNE_NEXT_TUNER", next_path);
    static const char no_rows[] = "# topotune tuner table 1\n"
                                  "collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol,"
                                  "channels\n";
    env_set("TOPOTUNE_TUNER_TABLE", table_file("norows.txt", no_rows, sizeof(no_rows) - 1));
    expect_forwarded_all(f, "a table without rows", "0 for 1 nodes x 8 ranks");
    env_main_table();
    env_set("TOPOTUNE_NEXT_TUNER", next_path);
    env_set("TOPOTUNE_TUNER_TABLE", NULL);
    expect_forwarded_all(f, "no table", "no table");

    /* Never itself; "none" and a missing library leave NCCL's own choice, said once. */
    env_main_table();
    env_set("TOPOTUNE_NEXT_TUNER", harness_plugin);
    expect_applied_warned("chained to itself", "is this plugin");
    /* itself named next (an image built on one that had it): NCCL's own search follows, and
     * the network plugin's tuner decides what the table does not (it was left to defaults) */
    env_set("NCCL_NET_PLUGIN", next_path);
    chain_all_releases(f, 0, "itself named next: the network plugin's tuner");
    /* auto: the Dockerfile fragment's word for a base image that named no tuner */
    env_set("TOPOTUNE_NEXT_TUNER", "auto");
    chain_all_releases(f, 0, "auto: the network plugin's tuner");
    env_set("NCCL_NET_PLUGIN", NULL);
    env_set("TOPOTUNE_NEXT_TUNER", "/nonexistent/libnccl-tuner-x.so");
    expect_applied_warned("a missing next tuner", "/nonexistent/libnccl-tuner-x.so");
    /* NCCL, its named tuner library missing, takes the network plugin's tuner */
    env_set("NCCL_NET_PLUGIN", next_path);
    chain_all_releases(f, 0, "a missing next tuner: the network plugin's");
    env_set("NCCL_NET_PLUGIN", NULL);
    env_set("TOPOTUNE_NEXT_TUNER", "none");
    expect_applied("TOPOTUNE_NEXT_TUNER=none");

    /* A next tuner that chains back to ours: the instance its init creates chains to none
     * (once overflowed the stack: ours -> it -> ours -> ...), and the table still applies. */
    env_set("TOPOTUNE_NEXT_TUNER", cycle_path);
    env_set("FAKE_CYCLE_NEXT", harness_plugin);
    const struct emu_plugin *newest = &loaded[emu_ngens - 1];
    emu_log_reset();
    CHECK(emu_comm_init(&c, newest, 1, 8) == 0, "a cycle of tuners: init failed");
    CHECK(emu_log_count("a cycle of tuners") == 1, "a cycle of tuners: not said: %s",
          emu_logged.n ? emu_logged.line[0] : "(none)");
    CHECK(check_call(&c, main_rows, main_nrows, 4, 100, 1) == OUT_HIT, "a cycle: no hit");
    CHECK(emu_comm_destroy(&c) == 0, "a cycle of tuners: destroy failed");
    env_set("FAKE_CYCLE_NEXT", NULL);
    /* STATIC_PLUGIN (any case, a prefix of it: NCCL 2.22.3 on): the tuner linked into the
     * application, in the process's global scope (the fake made global to stand for it) */
    void *global = dlopen(next_path, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    CHECK(global != NULL, "cannot make the fake next tuner global: %s", dlerror());
    env_set("TOPOTUNE_NEXT_TUNER", "STATIC_PLUGIN");
    chain_all_releases(f, 0, "STATIC_PLUGIN: the application's own tuner");
    env_set("TOPOTUNE_NEXT_TUNER", "static");
    chain_all_releases(f, 0, "static: the application's own tuner");
    if (global)
        dlclose(global);
    env_set("TOPOTUNE_NEXT_TUNER", NULL);
    dlclose(next);
    dlclose(next_v2);
    return 0;
}

int scenario_chain_static(const char *next_path)
{
    void *next = dlopen(next_path, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL); /* main opened it */
    counts_fn f = counts_of(next);
    CHECK(f != NULL, "the fake next tuner is not loaded: %s", dlerror());
    if (!f)
        return -1;
    chunk_calls = (int (*)(void))dlsym(next, "fake_next_chunk_calls");
    env_main_table();
    env_set("TOPOTUNE_NEXT_TUNER", "STATIC_PLUGIN");
    chain_all_releases(f, 0, "STATIC_PLUGIN, global before the plugin");
    env_set("TOPOTUNE_NEXT_TUNER", NULL);
    dlclose(next);
    return 0;
}

/* Run with a libnccl-tuner.so without a tuner in the loader's path: NCCL opens it, finds no
 * interface it takes and loads no tuner; the network plugin's is not the next one either. */
int scenario_chain_unsupported(const char *next_path)
{
    void *next = dlopen(next_path, RTLD_NOW | RTLD_LOCAL);
    counts_fn f = counts_of(next);
    CHECK(f != NULL, "cannot open the fake next tuner: %s", dlerror());
    if (!f)
        return -1;
    env_main_table();
    env_set("TOPOTUNE_NEXT_TUNER", NULL);
    env_set("NCCL_NET_PLUGIN", next_path);
    for (size_t g = 1; g < emu_ngens; g++) {
        int v = loaded[g].version, i0, i1, c0;
        f(v, &i0, &c0, &i1);
        struct emu_comm c;
        emu_log_reset();
        CHECK(emu_comm_init(&c, &loaded[g], 1, 8) == 0, "init");
        CHECK(emu_log_count("elsewhere NCCL's defaults apply") == 1,
              "NCCL %s: libnccl-tuner.so without a tuner: %s", emu_gens[g].release,
              emu_logged.n ? emu_logged.line[0] : "(none)");
        CHECK(emu_comm_destroy(&c) == 0, "destroy");
        f(v, &i1, &c0, &c0);
        CHECK(i1 == i0, "NCCL %s: the network plugin's tuner was started", emu_gens[g].release);
    }
    env_set("NCCL_NET_PLUGIN", NULL);
    dlclose(next);
    return 0;
}

/* A directory laid out as the driver's GPU list: `n` GPUs of `model`. */
static const char *driver_dir(const char *name, int n, const char *model)
{
    static char dir[512];
    char path[1024];
    snprintf(dir, sizeof(dir), "%s", table_file("placeholder", "", 0));
    snprintf(strrchr(dir, '/') + 1, 200, "%s", name);
    mkdir(dir, 0755);
    for (int i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%s/0000:%02x:00.0", dir, 0x10 + i);
        mkdir(path, 0755);
        strcat(path, "/information");
        FILE *fp = fopen(path, "w");
        if (!fp)
            exit(2);
        fprintf(fp, "Model: \t %s\nIRQ:   42\nBus Type: PCIe\n", model);
        fclose(fp);
    }
    return dir;
}

static void remove_driver_dir(const char *dir)
{
    char path[2048];
    for (int i = 0; i < 16; i++) {
        snprintf(path, sizeof(path), "%s/0000:%02x:00.0/information", dir, 0x10 + i);
        unlink(path);
        *strrchr(path, '/') = '\0';
        rmdir(path);
    }
    rmdir(dir);
}

/* The main table's rows under other headers (whole lines, after the version line), written to
 * the scratch file name: the table as another kind of node's copy would say it. */
static const char *main_rows_with(const char *name, const char *headers)
{
    char text[4096];
    snprintf(text, sizeof(text), "# topotune tuner table 1\n%s%s", headers,
             strstr(main_table, "collective,"));
    return table_file(name, text, strlen(text));
}

/* The table names the kind of node it was measured on; the plugin compares it with the node it
 * runs on (the driver's GPU list), whatever the job's environment says. */
int scenario_node_kind(void)
{
    char dirs[3][512];
    env_main_table();
    env_set("TOPOTUNE_CLASS", NULL); /* the launch scripts no longer set it */
    env_set("TOPOTUNE_TUNER_TABLE",
            main_rows_with("kind.txt", "# class=" MAIN_CLASS "\n# gpus=8\n"
                                       "# gpu_model=NVIDIA H100 80GB HBM3\n"));
    snprintf(dirs[0], sizeof(dirs[0]), "%s", driver_dir("h100x8", 8, "NVIDIA H100 80GB HBM3"));
    snprintf(dirs[1], sizeof(dirs[1]), "%s", driver_dir("h100x4", 4, "NVIDIA H100 80GB HBM3"));
    snprintf(dirs[2], sizeof(dirs[2]), "%s", driver_dir("a100x8", 8, "NVIDIA A100-SXM4-80GB"));
    env_set("TOPOTUNE_DRIVER_GPUS", dirs[0]);
    expect_applied("the node measured on");
    env_set("TOPOTUNE_DRIVER_GPUS", dirs[1]);
    expect_defaults("a node of 4 GPUs", "this node has 4");
    env_set("TOPOTUNE_DRIVER_GPUS", dirs[2]);
    expect_defaults("a node of A100s", "this node has NVIDIA A100-SXM4-80GB");
    env_set("TOPOTUNE_DRIVER_GPUS", "/nonexistent/driver/gpus");
    expect_applied("a node whose GPUs cannot be read");
    CHECK(emu_log_count("is not checked") == 1, "unreadable GPU list not said");
    /* the profile's own class in the environment proves nothing about the node */
    env_set("TOPOTUNE_CLASS", MAIN_CLASS);
    env_set("TOPOTUNE_DRIVER_GPUS", dirs[2]);
    expect_defaults("a node of A100s, TOPOTUNE_CLASS the table's", "this node has NVIDIA A100");
    for (int i = 0; i < 3; i++)
        remove_driver_dir(dirs[i]);
    return 0;
}

/* The digest tuner/tuner.h specifies, from a table's expected reading: FNV-1a (64 bits) of
 * its header values and rows in their fixed text form. */
static void digest_of(const char *header, const struct row *rows, size_t nrows, char hex[17])
{
    char text[8192];
    size_t n = (size_t)snprintf(text, sizeof(text), "%s", header);
    for (size_t i = 0; i < nrows; i++)
        n += (size_t)snprintf(text + n, sizeof(text) - n, "%d,%llu,%llu,%u,%u,%d,%d,%d\n",
                              rows[i].coll, (unsigned long long)rows[i].lo,
                              (unsigned long long)rows[i].hi, rows[i].nodes, rows[i].ranks,
                              rows[i].algo, rows[i].proto, rows[i].channels);
    uint64_t h = 14695981039346656037ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)text[i]) * 1099511628211ULL;
    snprintf(hex, 17, "%016llx", (unsigned long long)h);
}

/* Every release's init fails, with one warning holding `needle` and saying why it fails. */
static void expect_refused(const char *what, const char *needle)
{
    for (size_t g = 0; g < emu_ngens; g++) {
        struct emu_comm c;
        emu_log_reset();
        CHECK(emu_comm_init(&c, &loaded[g], 1, 8) != 0, "NCCL %s: %s: the init succeeded",
              emu_gens[g].release, what);
        CHECK(emu_logged.warn == 1 && emu_log_count(needle) == 1 &&
                  emu_log_count("this communicator's init fails") == 1,
              "NCCL %s: %s: %d warnings: %s", emu_gens[g].release, what, emu_logged.warn,
              emu_logged.n ? emu_logged.line[0] : "(none)");
        CHECK(c.ctx == NULL, "%s: a context left", what);
    }
}

/* The job names its table by digest (TOPOTUNE_TUNER_DIGEST, which the launch scripts set): a
 * rank that cannot apply that very table fails its communicator's init, loudly, instead of
 * leaving NCCL's choice while its peers apply the rows (ranks deciding apart hang the job). */
int scenario_digest(void)
{
    char hex[17], cut[4096], dirs[2][512];
    digest_of("class=" MAIN_CLASS "\ngpu_model=\ngpus=0\nnccl=22100-23099\n", main_rows, main_nrows,
              hex);
    env_main_table();
    env_set("TOPOTUNE_TUNER_DIGEST", hex);
    expect_applied("the job's table");
    /* what decides calls, not the bytes: comments and spaces of a copy may differ */
    char spaced[4096];
    snprintf(spaced, sizeof(spaced), "%s# a comment of another copy\n", main_table);
    env_set("TOPOTUNE_TUNER_TABLE", table_file("spaced.txt", spaced, strlen(spaced)));
    expect_applied("the job's table with another comment");
    /* a copy cut short (the last row's end lost: a valid table of other rows) */
    size_t n = strlen(main_table) - 3;
    memcpy(cut, main_table, n);
    cut[n] = '\n';
    env_set("TOPOTUNE_TUNER_TABLE", table_file("cut.txt", cut, n + 1));
    expect_refused("a copy cut short", "not the table the job was launched with");
    env_set("TOPOTUNE_TUNER_TABLE", "/nonexistent/topotune/table.txt");
    expect_refused("no table on this node", "No such file");
    env_set("TOPOTUNE_TUNER_TABLE", NULL);
    expect_refused("no table variable", "no table");
    env_main_table();
    env_set("TOPOTUNE_TUNER_DIGEST", "12345678abcdefXY");
    expect_refused("a digest that is none", "the job's 12345678abcdefXY");

    /* the table's own digest= header (gen writes it): a copy whose rows differ from it is
     * damaged, left out with a warning, or, the job's table named, refused */
    char own[4096], edited[4096];
    snprintf(own, sizeof(own), "# topotune tuner table 1\n# digest=%s\n%s", hex,
             strstr(main_table, "# class="));
    env_set("TOPOTUNE_TUNER_DIGEST", NULL);
    env_set("TOPOTUNE_TUNER_TABLE", table_file("own.txt", own, strlen(own)));
    expect_applied("its own digest, matching");
    /* a row's channel count edited: still a table, not the one the header names */
    char *row = strstr(own, "allreduce,0,32767,4,32,tree,ll,2");
    snprintf(edited, sizeof(edited), "%.*sallreduce,0,32767,4,32,tree,ll,4%s", (int)(row - own),
             own, row + strlen("allreduce,0,32767,4,32,tree,ll,2"));
    env_set("TOPOTUNE_TUNER_TABLE", table_file("edited.txt", edited, strlen(edited)));
    expect_defaults("its own digest, a row edited", "its rows are not those its digest= header");
    env_set("TOPOTUNE_TUNER_DIGEST", hex);
    expect_refused("the job's table, a row edited", "its rows are not those its digest= header");
    env_main_table();

    /* another kind of node: refused when the job named the table, NCCL's choice when not */
    digest_of("class=\ngpu_model=\ngpus=8\nnccl=0-0\n", main_rows, main_nrows, hex);
    env_set("TOPOTUNE_TUNER_TABLE", main_rows_with("kind8.txt", "# gpus=8\n"));
    env_set("TOPOTUNE_TUNER_DIGEST", hex);
    snprintf(dirs[0], sizeof(dirs[0]), "%s", driver_dir("d-h100x8", 8, "NVIDIA H100 80GB HBM3"));
    snprintf(dirs[1], sizeof(dirs[1]), "%s", driver_dir("d-h100x4", 4, "NVIDIA H100 80GB HBM3"));
    env_set("TOPOTUNE_DRIVER_GPUS", dirs[0]);
    expect_applied("the job's table on its kind of node");
    /* another kind of node: every rank of a job of one kind refuses alike, so the table is
     * left out with a warning, the job's table named or not (as another NCCL) */
    env_set("TOPOTUNE_DRIVER_GPUS", dirs[1]);
    expect_defaults("the job's table on a node of 4 GPUs", "this node has 4");
    env_set("TOPOTUNE_TUNER_DIGEST", NULL);
    expect_defaults("no digest: a node of 4 GPUs", "this node has 4");
    env_set("TOPOTUNE_DRIVER_GPUS", NULL);
    for (int i = 0; i < 2; i++)
        remove_driver_dir(dirs[i]);
    return 0;
}

/* A row's channel count above NCCL's MAXCHANNELS (32 in the releases with the smallest) is
 * passed on as 32; counts within it unchanged. */
int scenario_channels(void)
{
    static const char text[] = "# topotune tuner table 1\n"
                               "collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol,"
                               "channels\n"
                               "allreduce,0,1023,*,*,ring,simple,64\n"
                               "allreduce,1024,inf,*,*,ring,simple,32\n"
                               "broadcast,0,inf,*,*,ring,simple,33\n";
    env_main_table();
    env_set("TOPOTUNE_TUNER_TABLE", table_file("channels.txt", text, sizeof(text) - 1));
    static const struct {
        int coll;
        size_t bytes;
        int want;
    } cases[] = {{4, 100, 32}, {4, 4096, 32}, {0, 100, 32}};
    for (size_t g = 0; g < emu_ngens; g++) {
        struct emu_comm c;
        CHECK(emu_comm_init(&c, &loaded[g], 1, 8) == 0, "init");
        for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
            struct emu_call call = {.coll = cases[k].coll,
                                    .bytes = cases[k].bytes,
                                    .n_channels = SENTINEL_CHANNELS,
                                    .algo = -1,
                                    .proto = -1};
            emu_costs(call.coll, 1, 8, call.bytes, loaded[g].gen->num_algo, 1, call.table);
            emu_call(&c, &call);
            CHECK(call.n_channels == cases[k].want, "NCCL %s: coll %d %zu bytes: %d channels",
                  emu_gens[g].release, call.coll, call.bytes, call.n_channels);
        }
        CHECK(emu_comm_destroy(&c) == 0, "destroy");
    }
    /* CollNet, and NVLS across nodes: NCCL runs them on the count it is given, unchecked
     * (enqueue.cc): the row's pair applies, its count is not passed; NVLS on one node keeps it */
    static const char unbounded[] = "# topotune tuner table 1\n"
                                    "collective,min_bytes,max_bytes,nodes,ranks,algorithm,"
                                    "protocol,channels\n"
                                    "allreduce,0,inf,2,16,nvls,simple,16\n"
                                    "allgather,0,inf,2,16,collnet_direct,simple,8\n"
                                    "allreduce,0,inf,1,8,nvls,simple,16\n";
    env_set("TOPOTUNE_TUNER_TABLE", table_file("unbounded.txt", unbounded, sizeof(unbounded) - 1));
    static const struct {
        size_t nodes, ranks;
        int coll, algo, want;
    } pairs[] = {
        {2, 16, 4, 4, SENTINEL_CHANNELS}, {2, 16, 2, 2, SENTINEL_CHANNELS}, {1, 8, 4, 4, 16}};
    for (size_t g = 1; g < emu_ngens; g++)
        for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); k++) {
            struct emu_comm c;
            CHECK(emu_comm_init(&c, &loaded[g], pairs[k].nodes, pairs[k].ranks) == 0, "init");
            struct emu_call call = {
                .coll = pairs[k].coll, .bytes = 1 << 20, .n_channels = SENTINEL_CHANNELS};
            for (int a = 0; a < EMU_ALGOS; a++)
                for (int q = 0; q < EMU_PROTOS; q++)
                    call.table[a][q] = a == pairs[k].algo || a == 1 ? 10.0f + (float)q : -1.0f;
            emu_call(&c, &call);
            int a, p;
            CHECK(emu_pick(call.table, loaded[g].gen->num_algo, &a, &p) == 0 &&
                      a == pairs[k].algo && p == 2,
                  "NCCL %s: %zu x %zu, algorithm %d: the row's pair not applied (%d/%d)",
                  emu_gens[g].release, pairs[k].nodes, pairs[k].ranks, pairs[k].algo, a, p);
            CHECK(call.n_channels == pairs[k].want,
                  "NCCL %s: %zu x %zu, algorithm %d: %d channels passed, want %d",
                  emu_gens[g].release, pairs[k].nodes, pairs[k].ranks, pairs[k].algo,
                  call.n_channels, pairs[k].want);
            CHECK(emu_comm_destroy(&c) == 0, "destroy");
        }
    return 0;
}
