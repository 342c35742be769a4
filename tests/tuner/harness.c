/* SPDX-License-Identifier: MIT */
/*
 * The tuner plugin loaded as NCCL loads it, checked decision by decision:
 *     tuner-harness PLUGIN.so SCENARIO
 *     tuner-harness PLUGIN.so local-nccl FAKE-NCCL.so
 *     tuner-harness PLUGIN.so chain FAKE-NEXT.so FAKE-NEXT-V2.so
 * Scenarios: load, hits-1x8, hits-4x8, unavailable, v2, mismatch, malformed, logs, threads,
 * node-kind, channels, local-nccl, chain.
 * Exit 0 when every check holds, 1 otherwise (each failed check printed to stderr).
 */
#include "harness.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *harness_plugin;
atomic_int harness_failures;
struct emu_plugin loaded[16];

void harness_fail(const char *file, int line, const char *fmt, ...)
{
    if (atomic_fetch_add(&harness_failures, 1) >= 40)
        return; /* enough to see the pattern */
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL %s:%d: %s\n", file, line, msg);
}

/* --- Scratch files and the environment. --------------------------------------------------- */

static char scratch[256];
static char written[64][320];
static int nwritten;

const char *table_file(const char *name, const char *text, size_t len)
{
    char want[320];
    int i = 0;
    snprintf(want, sizeof(want), "%s/%s", scratch, name);
    while (i < nwritten && strcmp(written[i], want) != 0)
        i++;
    if (i == nwritten && nwritten == 64) {
        fprintf(stderr, "harness: more than 64 scratch files\n");
        exit(2);
    }
    nwritten += i == nwritten;
    char *path = strcpy(written[i], want);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "harness: cannot write %s\n", path);
        exit(2);
    }
    return path;
}

static void remove_scratch(void)
{
    for (int i = 0; i < nwritten; i++)
        unlink(written[i]);
    if (scratch[0])
        rmdir(scratch);
}

void env_set(const char *name, const char *value)
{
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

void env_main_table(void)
{
    env_set("TOPOTUNE_TUNER_TABLE", table_file("main.txt", main_table, strlen(main_table)));
    env_set("NCCL_TUNER_CONFIG_FILE", NULL);
    env_set("TOPOTUNE_CLASS", MAIN_CLASS);
    env_set("NCCL_ALGO", NULL);
    env_set("NCCL_PROTO", NULL);
    env_set("TOPOTUNE_NEXT_TUNER", "none"); /* no tuner of this machine's in the way */
    env_set("NCCL_NET_PLUGIN", NULL);
    env_set("TOPOTUNE_DRIVER_GPUS", NULL);
    emu_nccl_version = 22809;
}

/* --- The main table and its oracle. ------------------------------------------------------ */

const char main_table[] = "# topotune tuner table 1\n"
                          "# class=" MAIN_CLASS "\n"
                          "# nccl_min=2.21.0\n"
                          "# nccl_max=2.30.99\n"
                          "# source=harness (a key the plugin does not know: ignored)\n"
                          "# a comment, not a key\n"
                          "collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol,channels\n"
                          "# one node of 8 GPUs: 256 KiB to 1 MiB - 1 has no row\n"
                          "allreduce,0,65535,1,8,tree,ll,0\n"
                          "allreduce,65536,262143,1,8,ring,ll128,8\n"
                          "allreduce,1048576,inf,1,8,nvls,simple\n"
                          "allgather,0,4095,*,*,ring,ll,\n"
                          "allgather,4096,18446744073709551615,1,*,nvls,simple,16\n"
                          "reducescatter,1024,2047,1,8,tree,simple,0\n"
                          "broadcast,0,1023,*,*,ring,simple,4\n"
                          "reducescatter,0,inf,*,*,pat,simple,0\n"
                          "\n"
                          "# four nodes of 8 GPUs\n"
                          "allreduce,0,32767,4,32,tree,ll,2\n"
                          "allreduce,32768,8388607,4,32,ring,ll128,0\n"
                          "allreduce,8388608,inf,4,32,nvls,simple,0\n"
                          "allgather,0,inf,4,32,ring,simple,24\n";

/* Collectives: 0 broadcast, 1 reduce, 2 allgather, 3 reducescatter, 4 allreduce. Algorithms:
 * 0 tree, 1 ring, 4 nvls, 6 pat. Protocols: 0 LL, 1 LL128, 2 Simple. */
const struct row main_rows[] = {
    {4, 0, 65535, 1, 8, 0, 0, 0},
    {4, 65536, 262143, 1, 8, 1, 1, 8},
    {4, 1048576, UINT64_MAX, 1, 8, 4, 2, 0},
    {2, 0, 4095, 0, 0, 1, 0, 0},
    {2, 4096, UINT64_MAX, 1, 0, 4, 2, 16},
    {3, 1024, 2047, 1, 8, 0, 2, 0},
    {0, 0, 1023, 0, 0, 1, 2, 4},
    {3, 0, UINT64_MAX, 0, 0, 6, 2, 0},
    {4, 0, 32767, 4, 32, 0, 0, 2},
    {4, 32768, 8388607, 4, 32, 1, 1, 0},
    {4, 8388608, UINT64_MAX, 4, 32, 4, 2, 0},
    {2, 0, UINT64_MAX, 4, 32, 1, 2, 24},
};
const size_t main_nrows = sizeof(main_rows) / sizeof(main_rows[0]);

size_t sweep_sizes[160];
size_t sweep_nsizes;

static void add_size(size_t v)
{
    for (size_t i = 0; i < sweep_nsizes; i++)
        if (sweep_sizes[i] == v)
            return;
    sweep_sizes[sweep_nsizes++] = v;
}

static void make_sizes(void)
{
    add_size(0);
    for (int k = 0; k <= 40; k++) {
        size_t v = (size_t)1 << k;
        add_size(v - 1);
        add_size(v);
        add_size(v + 1);
    }
    add_size(SIZE_MAX - 1);
    add_size(SIZE_MAX);
}

static const struct row *oracle(const struct row *rows, size_t nrows, int coll, uint64_t bytes,
                                size_t nodes, size_t ranks)
{
    for (size_t i = 0; i < nrows; i++) {
        const struct row *r = &rows[i];
        if (r->coll == coll && bytes >= r->lo && bytes <= r->hi &&
            (!r->nodes || r->nodes == nodes) && (!r->ranks || r->ranks == ranks))
            return r;
    }
    return NULL;
}

static enum outcome check_untouched(const struct emu_call *call,
                                    const float before[EMU_ALGOS][EMU_PROTOS], int unavailable)
{
    CHECK(memcmp(before, call->table, sizeof(call->table)) == 0,
          "%s coll %d %zu bytes: the cost table changed", unavailable ? "unavailable" : "miss",
          call->coll, call->bytes);
    CHECK(call->n_channels == SENTINEL_CHANNELS, "coll %d %zu bytes: nChannels written (%d)",
          call->coll, call->bytes, call->n_channels);
    return unavailable ? OUT_UNAVAILABLE : OUT_MISS;
}

enum outcome check_call(const struct emu_comm *c, const struct row *rows, size_t nrows, int coll,
                        size_t bytes, int ll128)
{
    int na = c->p->gen->num_algo, a, p;
    struct emu_call call = {.coll = coll, .bytes = bytes, .n_channels = SENTINEL_CHANNELS};
    float before[EMU_ALGOS][EMU_PROTOS];
    emu_costs(coll, c->nodes, c->ranks, bytes, na, ll128, call.table);
    memcpy(before, call.table, sizeof(before));
    emu_call(c, &call);
    CHECK(call.rc == 0, "getCollInfo returned %d", call.rc);
    const struct row *r = oracle(rows, nrows, coll, bytes, c->nodes, c->ranks);
    if (!r || r->algo >= na || before[r->algo][r->proto] < 0.0f)
        return check_untouched(&call, before, r != NULL);
    CHECK(emu_pick(call.table, na, &a, &p) == 0 && a == r->algo && p == r->proto,
          "NCCL %s %zux%zu coll %d %zu bytes: NCCL picks %d/%d, the row says %d/%d",
          c->p->gen->release, c->nodes, c->ranks, coll, bytes, a, p, r->algo, r->proto);
    for (int i = 0; i < EMU_ALGOS; i++)
        for (int j = 0; j < EMU_PROTOS; j++)
            if (i != r->algo || j != r->proto)
                CHECK(call.table[i][j] == before[i][j] ||
                          (before[i][j] == 0.0f && call.table[i][j] > 0.0f),
                      "coll %d %zu bytes: entry %d/%d changed from %g to %g", coll, bytes, i, j,
                      (double)before[i][j], (double)call.table[i][j]);
    int want = r->channels ? r->channels : SENTINEL_CHANNELS;
    CHECK(call.n_channels == want, "coll %d %zu bytes: nChannels %d, want %d", coll, bytes,
          call.n_channels, want);
    return OUT_HIT;
}

void check_sweep(const struct emu_comm *c, const struct row *rows, size_t nrows, int ll128,
                 int counts[3])
{
    for (int coll = 0; coll < 5; coll++)
        for (size_t i = 0; i < sweep_nsizes; i++)
            counts[check_call(c, rows, nrows, coll, sweep_sizes[i], ll128)]++;
}

static int load_all(void)
{
    for (size_t g = 0; g < emu_ngens; g++)
        if (emu_load(&loaded[g], harness_plugin, &emu_gens[g]) != 0)
            return -1;
    return 0;
}

static void unload_all(void)
{
    for (size_t g = 0; g < emu_ngens; g++)
        emu_unload(&loaded[g]);
}

/* --- Scenarios. --------------------------------------------------------------------------- */

/* Every release finds its newest interface, named topotune; nothing else is exported; the
 * library can be closed and opened again, as NCCL does when its last communicator goes. */
static int scenario_load(void)
{
    env_main_table();
    for (size_t g = 0; g < emu_ngens; g++) {
        CHECK(loaded[g].version == emu_gens[g].newest, "NCCL %s resolved v%d, not v%d",
              emu_gens[g].release, loaded[g].version, emu_gens[g].newest);
    }
    void *lib = loaded[0].lib;
    const struct tuner_nccl_v2 *v2 = dlsym(lib, "ncclTunerPlugin_v2");
    const struct tuner_nccl_v3 *v3 = dlsym(lib, "ncclTunerPlugin_v3");
    const struct tuner_nccl_v4 *v4 = dlsym(lib, "ncclTunerPlugin_v4");
    const struct tuner_nccl_v5 *v5 = dlsym(lib, "ncclTunerPlugin_v5");
    const struct tuner_nccl_v6 *v6 = dlsym(lib, "ncclTunerPlugin_v6");
    CHECK(v2 && v2->init && v2->get_coll_info && v2->destroy, "v2 incomplete");
    CHECK(v3 && v3->init && v3->get_coll_info && v3->destroy, "v3 incomplete");
    CHECK(v4 && v4->init && v4->get_coll_info && v4->destroy, "v4 incomplete");
    CHECK(v5 && v5->init && v5->get_coll_info && v5->finalize, "v5 incomplete");
    CHECK(v6 && v6->init && v6->get_coll_info && v6->finalize && v6->get_chunk_size,
          "v6 incomplete (its chunk-size hook forwards to a next tuner's)");
    CHECK(!dlsym(lib, "ncclTunerPlugin_v1"), "v1 exported (2.19/2.20 would load it)");
    static const char *const internal[] = {"tuner_table_parse", "tuner_table_load",
                                           "tuner_table_match", "ctx_new", "decide"};
    for (size_t i = 0; i < sizeof(internal) / sizeof(internal[0]); i++)
        CHECK(!dlsym(lib, internal[i]), "%s is exported", internal[i]);
    if (v6) {
        int ch = SENTINEL_CHANNELS; /* a context that init could not allocate */
        float t[EMU_ALGOS][EMU_PROTOS] = {{1.0f}};
        CHECK(v6->get_coll_info(NULL, 4, 100, 1, (float **)t, 7, 3, 0, &ch) == 0 &&
                  ch == SENTINEL_CHANNELS && t[0][0] == 1.0f,
              "a NULL context is not a no-op");
        CHECK(v6->finalize(NULL) == 0, "finalize(NULL) failed");
        size_t chunk = 4096;
        CHECK(v6->get_chunk_size(NULL, 4, 100, 1, 2, 4, &chunk) == 0 && chunk == 4096,
              "a NULL context's chunk size changed");
    }
    for (int round = 0; round < 3; round++) {
        unload_all();
        CHECK(load_all() == 0, "reload %d failed", round);
        struct emu_comm c;
        CHECK(emu_comm_init(&c, &loaded[emu_ngens - 1], 1, 8) == 0, "init after reload");
        CHECK(check_call(&c, main_rows, main_nrows, 4, 100, 1) == OUT_HIT, "no hit after reload");
        CHECK(emu_comm_destroy(&c) == 0, "destroy after reload");
    }
    return 0;
}

/* Every size of every collective through every release from 2.22 on, on one shape. */
static int scenario_hits(size_t nodes, size_t ranks)
{
    env_main_table();
    for (size_t g = 0; g < emu_ngens; g++) {
        if (loaded[g].version < 3)
            continue; /* v2 has no cost table: scenario v2 */
        int counts[3] = {0};
        struct emu_comm c;
        emu_log_reset();
        CHECK(emu_comm_init(&c, &loaded[g], nodes, ranks) == 0, "init failed");
        CHECK(emu_logged.warn == 0 && emu_logged.info == 1,
              "NCCL %s: %d warnings, %d load lines for the main table", emu_gens[g].release,
              emu_logged.warn, emu_logged.info);
        check_sweep(&c, main_rows, main_nrows, 1, counts);
        CHECK(emu_comm_destroy(&c) == 0, "destroy failed");
        CHECK(counts[OUT_HIT] > 0 && counts[OUT_MISS] > 0 && counts[OUT_UNAVAILABLE] > 0,
              "NCCL %s %zux%zu: %d hits, %d misses, %d unavailable: a category untested",
              emu_gens[g].release, nodes, ranks, counts[OUT_HIT], counts[OUT_MISS],
              counts[OUT_UNAVAILABLE]);
        printf("NCCL %s v%d %zux%zu: %d hits, %d misses, %d unavailable\n", emu_gens[g].release,
               loaded[g].version, nodes, ranks, counts[OUT_HIT], counts[OUT_MISS],
               counts[OUT_UNAVAILABLE]);
    }
    return 0;
}

/* One call by hand: NCCL's costs for `coll` at `bytes` (LL128 on or off). */
static struct emu_call call_at(const struct emu_comm *c, int coll, size_t bytes, int ll128)
{
    struct emu_call call = {.coll = coll, .bytes = bytes, .n_channels = SENTINEL_CHANNELS};
    emu_costs(coll, c->nodes, c->ranks, bytes, c->p->gen->num_algo, ll128, call.table);
    return call;
}

static void expect_untouched(const struct emu_comm *c, int coll, size_t bytes, int ll128,
                             const char *what)
{
    struct emu_call call = call_at(c, coll, bytes, ll128), before = call;
    emu_call(c, &call);
    CHECK(call.rc == 0 && memcmp(call.table, before.table, sizeof(call.table)) == 0 &&
              call.n_channels == SENTINEL_CHANNELS,
          "NCCL %s: %s: touched", c->p->gen->release, what);
    CHECK(emu_log_count("unavailable here") + emu_log_count("not in this NCCL") == 1,
          "NCCL %s: %s: not logged as unavailable", c->p->gen->release, what);
    emu_log_reset();
}

/* Rows whose pair NCCL marked -1 (or that its table does not have) change nothing. */
static int scenario_unavailable(void)
{
    env_main_table();
    for (size_t g = 1; g < emu_ngens; g++) {
        struct emu_comm one, four;
        CHECK(emu_comm_init(&one, &loaded[g], 1, 8) == 0, "init");
        CHECK(emu_comm_init(&four, &loaded[g], 4, 32) == 0, "init");
        emu_log_reset();
        expect_untouched(&one, 4, 100000, 0, "ring/LL128 with LL128 off");
        expect_untouched(&one, 3, 1500, 1, "tree for reducescatter");
        expect_untouched(&one, 3, 1 << 20, 1, "PAT with 8 ranks per node, or no PAT at all");
        expect_untouched(&four, 4, 64 << 20, 1, "NVLS across nodes without CollNet");
        CHECK(emu_comm_destroy(&one) == 0 && emu_comm_destroy(&four) == 0, "destroy");
    }
    /* NCCL's own table holds an exact 0 before the chosen pair: the choice must still win. */
    struct emu_comm c;
    CHECK(emu_comm_init(&c, &loaded[emu_ngens - 1], 1, 8) == 0, "init");
    struct emu_call call = call_at(&c, 4, 2 << 20, 1);
    call.table[0][2] = 0.0f; /* tree/Simple */
    emu_call(&c, &call);
    int a, p;
    CHECK(emu_pick(call.table, 7, &a, &p) == 0 && a == 4 && p == 2 && call.table[0][2] > 0.0f,
          "an existing 0 entry beat the table's choice (%d/%d)", a, p);
    CHECK(emu_comm_destroy(&c) == 0, "destroy");
    return 0;
}

/* NCCL 2.21 (v2): outputs instead of a cost table, and only pairs it always builds. */
static void v2_case(const struct emu_comm *c, int coll, size_t bytes, int collnet, int nvls,
                    int algo, int proto, int channels)
{
    struct emu_call call = {.coll = coll,
                            .bytes = bytes,
                            .n_channels = SENTINEL_CHANNELS,
                            .algo = -1,
                            .proto = -1,
                            .collnet = collnet,
                            .nvls = nvls};
    emu_call(c, &call);
    CHECK(call.rc == 0 && call.algo == algo && call.proto == proto && call.n_channels == channels,
          "v2 %zux%zu coll %d %zu bytes collnet %d nvls %d: got %d/%d/%d, want %d/%d/%d", c->nodes,
          c->ranks, coll, bytes, collnet, nvls, call.algo, call.proto, call.n_channels, algo, proto,
          channels);
}

static int scenario_v2(void)
{
    const int S = SENTINEL_CHANNELS;
    env_main_table();
    struct emu_comm one, four;
    CHECK(loaded[0].version == 2, "NCCL 2.21 did not get v2");
    CHECK(emu_comm_init(&one, &loaded[0], 1, 8) == 0, "init");
    CHECK(emu_comm_init(&four, &loaded[0], 4, 32) == 0, "init");
    v2_case(&one, 4, 100, 0, 1, 0, 0, S);       /* tree/LL */
    v2_case(&one, 4, 100000, 0, 1, -1, -1, S);  /* ring/LL128: LL128 not through v2 */
    v2_case(&one, 4, 300000, 0, 1, -1, -1, S);  /* no row */
    v2_case(&one, 4, 2 << 20, 0, 1, 4, 2, S);   /* NVLS with NVLS support */
    v2_case(&one, 4, 2 << 20, 0, 0, -1, -1, S); /* ... and without */
    v2_case(&one, 0, 100, 0, 0, 1, 2, 4);       /* ring/Simple, 4 channels */
    /* NVLS allgather on one node: the row's pair, not its 16 channels (2.21 caps a tuned call at
     * the group's largest count, not at its NVLS channels: enqueue.cc, usableChannels) */
    v2_case(&one, 2, 8192, 0, 1, 4, 2, S);
    v2_case(&one, 3, 1500, 0, 1, -1, -1, S);      /* tree for reducescatter */
    v2_case(&one, 3, 1 << 20, 0, 1, -1, -1, S);   /* PAT */
    v2_case(&one, 1, 100, 0, 1, -1, -1, S);       /* reduce: no row */
    v2_case(&four, 4, 100, 0, 0, 0, 0, 2);        /* tree/LL, 2 channels */
    v2_case(&four, 4, 64 << 20, 0, 1, -1, -1, S); /* NVLS across nodes without CollNet */
    v2_case(&four, 4, 64 << 20, 1, 1, 4, 2, S);   /* ... with CollNet */
    v2_case(&four, 2, 1 << 20, 0, 0, 1, 2, 24);   /* ring/Simple, 24 channels */
    CHECK(emu_comm_destroy(&one) == 0 && emu_comm_destroy(&four) == 0, "destroy");
    /* NCCL_ALGO/NCCL_PROTO may exclude what v2 would force: nothing is applied then. */
    env_set("NCCL_ALGO", "^tree");
    CHECK(emu_comm_init(&one, &loaded[0], 1, 8) == 0, "init");
    v2_case(&one, 4, 100, 0, 1, -1, -1, S);
    v2_case(&one, 0, 100, 0, 0, -1, -1, S);
    CHECK(emu_comm_destroy(&one) == 0, "destroy");
    env_set("NCCL_ALGO", NULL);
    return 0;
}

/* What the plugin says, at which level, under which subsystem. */
static int scenario_logs(void)
{
    env_main_table();
    struct emu_comm c;
    emu_log_reset();
    CHECK(emu_comm_init(&c, &loaded[5], 1, 8) == 0, "init");
    const char *path = getenv("TOPOTUNE_TUNER_TABLE");
    CHECK(emu_logged.info == 1 && emu_log_count(path) == 1 && emu_log_count("12 rows") == 1 &&
              emu_log_count("8 for 1 nodes x 8 ranks") == 1 && emu_log_count(MAIN_CLASS) == 1,
          "load line: %s", emu_logged.n ? emu_logged.line[0] : "(none)");
    emu_log_reset();
    check_call(&c, main_rows, main_nrows, 4, 100, 1);
    check_call(&c, main_rows, main_nrows, 4, 300000, 1);
    check_call(&c, main_rows, main_nrows, 0, 64, 1);
    check_call(&c, main_rows, main_nrows, 3, 1500, 1);
    CHECK(emu_logged.tuning == 4 && emu_logged.info == 0 && emu_logged.warn == 0,
          "%d TUNING lines for 4 calls", emu_logged.tuning);
    /* the same decisions again log nothing: a job logs per call no more with the plugin than
     * without it (verify compares runs with it and without) */
    for (int again = 0; again < 3; again++) {
        check_call(&c, main_rows, main_nrows, 4, 100, 1);
        check_call(&c, main_rows, main_nrows, 4, 300001, 1);
        check_call(&c, main_rows, main_nrows, 0, 64, 1);
        check_call(&c, main_rows, main_nrows, 3, 1500, 1);
    }
    CHECK(emu_logged.tuning == 4, "%d TUNING lines once the 4 decisions were made",
          emu_logged.tuning);
    CHECK(emu_log_count("allreduce 100 bytes -> tree/ll, NCCL's 0 channels (line 9)") == 1,
          "hit: %s", emu_logged.line[0]);
    CHECK(emu_log_count("allreduce 300000 bytes: no row") == 1, "miss: %s", emu_logged.line[1]);
    CHECK(emu_log_count("broadcast 64 bytes -> ring/simple, 4 channels") == 1, "channels: %s",
          emu_logged.line[2]);
    CHECK(emu_log_count("line 14 wants tree/simple, unavailable here") == 1, "unavailable: %s",
          emu_logged.line[3]);
    CHECK(emu_logged.bad_flags == 0, "wrong subsystem flags %#lx", emu_logged.bad_flags);
    CHECK(emu_comm_destroy(&c) == 0, "destroy");
    /* a refused table: one WARN, under every subsystem bit as NCCL's WARN() */
    env_set("TOPOTUNE_CLASS", "another-class");
    emu_log_reset();
    CHECK(emu_comm_init(&c, &loaded[5], 1, 8) == 0, "init");
    CHECK(emu_logged.warn == 1 && emu_logged.bad_flags == 0 && emu_log_count(path) == 1 &&
              emu_log_count("another-class") == 1,
          "refusal: %s", emu_logged.n ? emu_logged.line[0] : "(none)");
    emu_log_reset();
    check_call(&c, main_rows, 0, 4, 100, 1);
    CHECK(emu_log_count("no table in use") == 1, "refused table's calls: %s", emu_logged.line[0]);
    CHECK(emu_comm_destroy(&c) == 0, "destroy");
    /* a class with an escape sequence and a line of its own: one clean line in NCCL's log */
    env_set("TOPOTUNE_CLASS", "evil\x1b]0;title\x07\nNCCL WARN forged");
    emu_log_reset();
    CHECK(emu_comm_init(&c, &loaded[5], 1, 8) == 0, "init");
    CHECK(emu_logged.warn == 1 && !strpbrk(emu_logged.line[0], "\x1b\x07\n") &&
              emu_log_count("evil?]0;title??NCCL WARN forged") == 1,
          "hostile class: %s", emu_logged.n ? emu_logged.line[0] : "(none)");
    CHECK(emu_comm_destroy(&c) == 0, "destroy");
    /* a table path with an escape and a line end, refused for its NCCL range: one clean line */
    env_set("TOPOTUNE_CLASS", NULL);
    static const char old_nccl[] = "# topotune tuner table 1\n# nccl_max=2.18.0\n"
                                   "collective,min_bytes,max_bytes,nodes,ranks,algorithm,"
                                   "protocol,channels\n";
    env_set("TOPOTUNE_TUNER_TABLE",
            table_file("esc\x1b[31m\nNCCL WARN forged.txt", old_nccl, sizeof(old_nccl) - 1));
    emu_log_reset();
    CHECK(emu_comm_init(&c, &loaded[5], 1, 8) == 0, "init");
    CHECK(emu_logged.warn == 1 && !strpbrk(emu_logged.line[0], "\x1b\n") &&
              emu_log_count("esc?[31m?NCCL WARN forged.txt") == 1 &&
              emu_log_count("valid for NCCL") == 1,
          "hostile path: %s", emu_logged.n ? emu_logged.line[0] : "(none)");
    CHECK(emu_comm_destroy(&c) == 0, "destroy");
    return 0;
}

typedef int (*warnings_fn)(const char **text);

/* A fake NCCL (fake-nccl.c) opened RTLD_LOCAL, its logger made the one every init gets; its
 * warning counter in *warnings. NULL, said, when it cannot be opened or lacks them. */
static void *open_fake_nccl(const char *path, warnings_fn *warnings)
{
    void *fake = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
    CHECK(fake != NULL, "cannot open %s: %s", path, dlerror());
    if (!fake)
        return NULL;
    *warnings = (warnings_fn)dlsym(fake, "fake_nccl_warnings");
    emu_logger = (tuner_nccl_logger)dlsym(fake, "fake_nccl_log");
    CHECK(*warnings && emu_logger, "fake NCCL incomplete");
    if (*warnings && emu_logger)
        return fake;
    emu_logger = emu_log;
    dlclose(fake);
    return NULL;
}

/* NCCL loaded RTLD_LOCAL (PyTorch): the plugin must find ncclGetVersion in the library its
 * logger comes from, since dlsym(RTLD_DEFAULT) sees only this program's (made to fail here). */
static int scenario_local_nccl(const char *fake_path)
{
    warnings_fn warnings;
    void *fake = open_fake_nccl(fake_path, &warnings);
    if (!fake)
        return -1;
    env_main_table();
    emu_nccl_version = 0; /* this program's ncclGetVersion fails */
    static const char *const ranges[2] = {"# nccl_min=2.29.3\n# nccl_max=2.29.3\n",
                                          "# nccl_min=2.21.0\n# nccl_max=2.29.2\n"};
    const char *text;
    for (int refused = 0; refused < 2; refused++) {
        char table[4096];
        snprintf(table, sizeof(table), "# topotune tuner table 1\n%s%s", ranges[refused],
                 strstr(main_table, "collective,"));
        env_set("TOPOTUNE_TUNER_TABLE", table_file("local.txt", table, strlen(table)));
        int before = warnings(&text);
        struct emu_comm c;
        CHECK(emu_comm_init(&c, &loaded[5], 1, 8) == 0, "init");
        CHECK(warnings(&text) - before == refused, "NCCL 2.29.3 loaded locally: %d warnings",
              warnings(&text) - before);
        CHECK(!refused || strstr(text, "this is NCCL 2.29.3"), "warning: %s", text);
        CHECK(check_call(&c, main_rows, refused ? 0 : main_nrows, 4, 100, 1) ==
                  (refused ? OUT_MISS : OUT_HIT),
              "table %s", refused ? "applied" : "not applied");
        CHECK(emu_comm_destroy(&c) == 0, "destroy");
    }
    emu_logger = emu_log;
    dlclose(fake);
    return 0;
}

/* An NCCL whose library exports no ncclGetVersion (a static build inside a larger one) while
 * another NCCL in the process does: that one is not the NCCL calling, so the version is unknown
 * and the table's range not checked (it was read from the other one and the table refused). */
static int scenario_local_nccl_noversion(const char *fake_path)
{
    warnings_fn warnings;
    void *fake = open_fake_nccl(fake_path, &warnings);
    if (!fake)
        return -1;
    CHECK(!dlsym(fake, "ncclGetVersion"), "the fake NCCL has ncclGetVersion");
    emu_nccl_version = 22903; /* this program's ncclGetVersion: another NCCL, 2.29.3 */
    char table[4096];
    snprintf(table, sizeof(table),
             "# topotune tuner table 1\n# nccl_min=2.21.0\n"
             "# nccl_max=2.29.2\n%s",
             strstr(main_table, "collective,"));
    env_set("TOPOTUNE_TUNER_TABLE", table_file("noversion.txt", table, strlen(table)));
    const char *text;
    int before = warnings(&text);
    struct emu_comm c;
    CHECK(emu_comm_init(&c, &loaded[5], 1, 8) == 0, "init");
    CHECK(warnings(&text) == before, "refused by another NCCL's version: %s", text);
    CHECK(check_call(&c, main_rows, main_nrows, 4, 100, 1) == OUT_HIT, "table not applied");
    CHECK(emu_comm_destroy(&c) == 0, "destroy");
    emu_nccl_version = 0;
    emu_logger = emu_log;
    dlclose(fake);
    return 0;
}

/* Many communicators at once in many threads, each with its own context. */
#define THREADS 16
#define ROUNDS  6

static atomic_long thread_calls;

static void *thread_main(void *arg)
{
    static const size_t shape[4][2] = {{1, 8}, {4, 32}, {2, 16}, {1, 8}};
    unsigned id = (unsigned)(uintptr_t)arg;
    emu_log_reset();
    for (int round = 0; round < ROUNDS; round++) {
        struct emu_comm c[4];
        for (int k = 0; k < 4; k++) {
            size_t g = 2 + (id + (unsigned)round + (unsigned)k) % (emu_ngens - 2); /* v3..v6 */
            CHECK(emu_comm_init(&c[k], &loaded[g], shape[k][0], shape[k][1]) == 0, "init");
        }
        for (size_t i = 0; i < sweep_nsizes; i++) /* interleaved across the four */
            for (int coll = 0; coll < 5; coll++)
                for (int k = 0; k < 4; k++) {
                    check_call(&c[k], main_rows, main_nrows, coll, sweep_sizes[i], 1);
                    atomic_fetch_add(&thread_calls, 1);
                }
        for (int k = 0; k < 4; k++)
            CHECK(emu_comm_destroy(&c[k]) == 0, "destroy");
    }
    CHECK(emu_logged.warn == 0 && emu_logged.info == 4 * ROUNDS,
          "thread %u: %d warnings, %d load lines", id, emu_logged.warn, emu_logged.info);
    return NULL;
}

static int scenario_threads(void)
{
    env_main_table();
    pthread_t t[THREADS];
    for (unsigned i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, thread_main, (void *)(uintptr_t)i) != 0)
            return -1;
    for (unsigned i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("%d threads, %d communicators, %ld checked calls\n", THREADS, THREADS * ROUNDS * 4,
           atomic_load(&thread_calls));
    return 0;
}

static const struct {
    const char *name;
    int (*run)(void);
} scenarios[] = {
    {"load", scenario_load},
    {"unavailable", scenario_unavailable},
    {"v2", scenario_v2},
    {"mismatch", scenario_mismatch},
    {"malformed", scenario_malformed},
    {"logs", scenario_logs},
    {"threads", scenario_threads},
    {"node-kind", scenario_node_kind},
    {"digest", scenario_digest},
    {"channels", scenario_channels},
};

static int run_hits_1x8(void)
{
    return scenario_hits(1, 8);
}

static int run_hits_4x8(void)
{
    return scenario_hits(4, 32);
}

int main(int argc, char **argv)
{
    int unsupported = argc == 4 && !strcmp(argv[2], "chain-unsupported");
    int app_tuner = argc == 4 && !strcmp(argv[2], "chain-static");
    int noversion = argc == 4 && !strcmp(argv[2], "local-nccl-noversion");
    if (argc != 3 && !(argc == 4 && !strcmp(argv[2], "local-nccl")) && !unsupported && !app_tuner &&
        !noversion && !(argc == 6 && !strcmp(argv[2], "chain"))) {
        fprintf(stderr, "usage: tuner-harness PLUGIN.so SCENARIO | PLUGIN.so local-nccl FAKE.so | "
                        "PLUGIN.so chain NEXT.so NEXT-V2.so CYCLE.so | PLUGIN.so "
                        "chain-unsupported NEXT.so | PLUGIN.so chain-static NEXT.so | "
                        "PLUGIN.so local-nccl-noversion FAKE.so\n");
        return 2;
    }
    /* the application's tuner in the global scope before NCCL loads the plugin */
    void *app = app_tuner ? dlopen(argv[3], RTLD_NOW | RTLD_GLOBAL) : NULL;
    if (app_tuner && !app) {
        fprintf(stderr, "tuner-harness: %s\n", dlerror());
        return 2;
    }
    harness_plugin = argv[1];
    int (*run)(void) = !strcmp(argv[2], "hits-1x8")   ? run_hits_1x8
                       : !strcmp(argv[2], "hits-4x8") ? run_hits_4x8
                                                      : NULL;
    for (size_t i = 0; !run && argc == 3 && i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
        if (!strcmp(argv[2], scenarios[i].name))
            run = scenarios[i].run;
    if (!run && argc == 3) {
        fprintf(stderr, "tuner-harness: unknown scenario '%s'\n", argv[2]);
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch, sizeof(scratch), "%s/tuner-harness-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(scratch)) {
        perror("tuner-harness: mkdtemp");
        return 2;
    }
    atexit(remove_scratch);
    make_sizes();
    env_main_table();
    if (load_all() != 0)
        return 1;
    int rc = argc == 6     ? scenario_chain(argv[3], argv[4], argv[5])
             : unsupported ? scenario_chain_unsupported(argv[3])
             : app_tuner   ? scenario_chain_static(argv[3])
             : noversion   ? scenario_local_nccl_noversion(argv[3])
             : argc == 4   ? scenario_local_nccl(argv[3])
                           : run();
    unload_all();
    int failed = atomic_load(&harness_failures);
    printf("%s: %s (%d failed checks)\n", argv[2], rc == 0 && failed == 0 ? "ok" : "FAILED",
           failed);
    return rc == 0 && failed == 0 ? 0 : 1;
}
