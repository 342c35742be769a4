/* SPDX-License-Identifier: MIT */
/* The tuner table parser on its own: what it accepts at the edges of the format and limits,
 * what each row reads as, which row a call matches, and the messages of what it refuses. */
#include "tuner/tuner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            failures++;                                                                            \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                   \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

#define MAGIC   "# topotune tuner table 1\n"
#define COLUMNS "collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol,channels\n"

static int parse(struct tuner_table *t, const char *text, size_t len, char *err)
{
    return tuner_table_parse(t, text, len, err, 256);
}

static void test_edges(void)
{
    static const char text[] = "# topotune tuner table 1   \r\n"
                               "# class=h100-sxm5-80gb-8x-nvs-1a2b3c4d\r\n"
                               "# nccl_min = 2.21.5\n"
                               "#nccl_max=2.30.99\n"
                               "# note: a=b is prose, not a key\n"
                               "# future_key=whatever\n"
                               "\n"
                               " " COLUMNS "AllReduce , 0 , 262143 , 1 , 8 , TREE , LL , 0\r\n"
                               "allreduce,262144,inf,1,8,nvls,simple\n"
                               "allgather,0,18446744073709551615,*,*,ring,ll128,\n"
                               "# class=ignored-after-columns\n"
                               "\t\n"
                               "reducescatter,5,5,2,16,collnet_chain,simple,64\n"
                               "broadcast,0,0,*,3,nvls_tree,ll,1\n"
                               "reduce,1,2,4,*,pat,simple,0\n"
                               "allreduce,0,10,1,8,collnet_direct,simple,0"; /* no final newline */
    struct tuner_table t = TUNER_TABLE_INIT;
    char err[256];
    CHECK(parse(&t, text, sizeof(text) - 1, err) == 0, "edges: %s", err);
    CHECK(strcmp(t.class_id, "h100-sxm5-80gb-8x-nvs-1a2b3c4d") == 0, "class %s", t.class_id);
    CHECK(t.nccl_min == 22105 && t.nccl_max == 23099, "versions %u %u", t.nccl_min, t.nccl_max);
    CHECK(t.nrules == 7, "%zu rows", t.nrules);
    if (t.nrules == 7) {
        const struct tuner_rule *r = t.rules;
        CHECK(r[0].coll == TUNER_COLL_ALLREDUCE && r[0].min_bytes == 0 &&
                  r[0].max_bytes == 262143 && r[0].nodes == 1 && r[0].ranks == 8 &&
                  r[0].algo == TUNER_ALGO_TREE && r[0].proto == TUNER_PROTO_LL &&
                  r[0].channels == 0 && r[0].line == 9,
              "row 0");
        CHECK(r[1].max_bytes == UINT64_MAX && r[1].algo == TUNER_ALGO_NVLS &&
                  r[1].proto == TUNER_PROTO_SIMPLE && r[1].channels == 0,
              "row 1 (inf, no channels)");
        CHECK(r[2].max_bytes == UINT64_MAX && r[2].nodes == TUNER_ANY && r[2].ranks == TUNER_ANY &&
                  r[2].proto == TUNER_PROTO_LL128 && r[2].channels == 0,
              "row 2 (UINT64_MAX, *, empty channels)");
        CHECK(r[3].coll == TUNER_COLL_REDUCESCATTER && r[3].algo == TUNER_ALGO_COLLNET_CHAIN &&
                  r[3].channels == 64 && r[3].line == 14,
              "row 3");
        CHECK(r[4].coll == TUNER_COLL_BROADCAST && r[4].algo == TUNER_ALGO_NVLS_TREE &&
                  r[4].nodes == TUNER_ANY && r[4].ranks == 3,
              "row 4");
        CHECK(r[5].coll == TUNER_COLL_REDUCE && r[5].algo == TUNER_ALGO_PAT && r[5].nodes == 4,
              "row 5");
        CHECK(r[6].algo == TUNER_ALGO_COLLNET_DIRECT && r[6].line == 17, "row 6");
    }
    tuner_table_release(&t);
    CHECK(t.rules == NULL && t.nrules == 0, "release");
}

static void test_match(void)
{
    static const char text[] = MAGIC COLUMNS "allreduce,0,99,1,8,tree,ll,0\n"
                                             "allreduce,50,199,1,*,ring,simple,0\n"
                                             "allreduce,0,inf,*,*,nvls,simple,0\n";
    struct tuner_table t = TUNER_TABLE_INIT;
    char err[256];
    CHECK(parse(&t, text, sizeof(text) - 1, err) == 0, "match: %s", err);
    const struct tuner_rule *r;
    CHECK((r = tuner_table_match(&t, 4, 60, 1, 8)) && r->algo == TUNER_ALGO_TREE, "first wins");
    CHECK((r = tuner_table_match(&t, 4, 100, 1, 8)) && r->algo == TUNER_ALGO_RING, "boundary");
    CHECK((r = tuner_table_match(&t, 4, 60, 1, 16)) && r->algo == TUNER_ALGO_RING, "ranks *");
    CHECK((r = tuner_table_match(&t, 4, 60, 2, 16)) && r->algo == TUNER_ALGO_NVLS, "nodes *");
    CHECK((r = tuner_table_match(&t, 4, UINT64_MAX, 9, 9)) && r->algo == TUNER_ALGO_NVLS, "inf");
    CHECK(!tuner_table_match(&t, 2, 60, 1, 8), "other collective");
    CHECK(!tuner_table_match(&t, 5, 60, 1, 8) && !tuner_table_match(&t, -1, 60, 1, 8),
          "out-of-range collective");
    tuner_table_release(&t);
}

/* Exactly at each limit is accepted; one over is refused with the limit's message. */
static void test_limits(void)
{
    size_t cap = (1 << 20) + 4096, len;
    char *text = malloc(cap), err[256];
    struct tuner_table t = TUNER_TABLE_INIT;
    if (!text)
        exit(2);
    static const char row[] = "allreduce,0,65535,1,8,tree,ll,0\n";
    len = (size_t)sprintf(text, MAGIC COLUMNS);
    for (int i = 0; i < TUNER_TABLE_MAX_ROWS; i++)
        len += (size_t)sprintf(text + len, "%s", row);
    CHECK(parse(&t, text, len, err) == 0 && t.nrules == 4096, "4096 rows: %s", err);
    tuner_table_release(&t);
    len += (size_t)sprintf(text + len, "%s", row);
    CHECK(parse(&t, text, len, err) == TUNER_ELIMIT && strstr(err, "line 4099: more than 4096"),
          "4097 rows: %s", err);

    len = (size_t)sprintf(text, MAGIC COLUMNS "#");
    memset(text + len, 'x', TUNER_TABLE_MAX_LINE - 1);
    len += TUNER_TABLE_MAX_LINE - 1;
    text[len++] = '\r'; /* not counted: part of the line end */
    text[len++] = '\n';
    CHECK(parse(&t, text, len, err) == 0, "a 1024-byte line: %s", err);
    text[len - 2] = 'x';
    CHECK(parse(&t, text, len, err) == TUNER_ELIMIT && strstr(err, "line 3: longer than"),
          "a 1025-byte line: %s", err);

    len = (size_t)sprintf(text, MAGIC COLUMNS);
    while (len < (1 << 20)) {
        size_t n = (1 << 20) - len < 100 ? (1 << 20) - len : 100;
        memset(text + len, '#', n - 1);
        text[len + n - 1] = '\n';
        len += n;
    }
    CHECK(len == (1 << 20) && parse(&t, text, len, err) == 0, "exactly 1 MiB: %s", err);
    text[len++] = '\n';
    CHECK(parse(&t, text, len, err) == TUNER_ELIMIT && strstr(err, "larger than"), "1 MiB + 1");
    free(text);
}

static void test_refusals(void)
{
    static const struct {
        const char *text, *message;
    } bad[] = {
        {"", "empty file"},
        {"\n", "line 1: not a topotune tuner table"},
        {"# topotune tuner table 10\n" COLUMNS, "line 1: table version \"10\" is not 1"},
        {MAGIC "# nccl_max=3.0.100\n" COLUMNS, "line 2: nccl_max \"3.0.100\""},
        {MAGIC "# nccl_max=2.28.9.1\n" COLUMNS, "line 2: nccl_max"},
        {MAGIC "# nccl_min=0.1.0\n" COLUMNS, "line 2: nccl_min"},
        {MAGIC "# class=\n" COLUMNS, "line 2: class"},
        {MAGIC "# class=a b\n" COLUMNS, "line 2: class"},
        {MAGIC COLUMNS COLUMNS, "line 3: unknown collective \"collective\""},
        {MAGIC COLUMNS "allreduce,,1,1,8,ring,ll,0\n", "line 3: min_bytes \"\""},
        {MAGIC COLUMNS "allreduce,0,inf,1,4294967296,ring,ll,0\n", "line 3: ranks"},
        {MAGIC COLUMNS "allreduce,0,inf,1,8,ring,ll, 7x\n", "line 3: channels \"7x\""},
        {MAGIC COLUMNS "allreduce,inf,inf,1,8,ring,ll,0\n", "line 3: min_bytes \"inf\""},
        {MAGIC "# digest=0123456789ABCDEF\n" COLUMNS, "line 2: digest"},
        {MAGIC "# digest=0123456789abcde\n" COLUMNS, "line 2: digest"},
        {MAGIC "# digest=0123456789abcdef\n# digest=0123456789abcdef\n" COLUMNS,
         "line 3: digest given twice"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct tuner_table t = TUNER_TABLE_INIT;
        char err[256];
        int rc = parse(&t, bad[i].text, strlen(bad[i].text), err);
        CHECK(rc == TUNER_EFORMAT && strstr(err, bad[i].message) && t.nrules == 0 && !t.rules,
              "refusal %zu: rc %d, \"%s\", want \"%s\"", i, rc, err, bad[i].message);
    }
    struct tuner_table t = TUNER_TABLE_INIT;
    char err[256];
    CHECK(tuner_table_load(&t, "/nonexistent/table", err, sizeof(err)) == TUNER_EIO &&
              strstr(err, "cannot read it"),
          "missing file: %s", err);
    CHECK(tuner_table_parse(&t, "x", 1, NULL, 0) == TUNER_EFORMAT, "no message buffer");
}

/* The digest: of what decides calls (comments and line ends do not count), and the table's own
 * digest= header checked against it. */
static void test_digest(void)
{
    static const char a[] = MAGIC "# class=c\n" COLUMNS "allreduce,0,inf,1,8,ring,ll,0\n",
                      b[] = MAGIC "# class=c\r\n# a comment\r\n" COLUMNS
                                  "allreduce , 0 , inf , 1 , 8 , ring , ll , 0\r\n",
                      c[] = MAGIC "# class=c\n" COLUMNS "allreduce,0,inf,1,8,ring,ll,2\n";
    struct tuner_table ta = TUNER_TABLE_INIT, tb = TUNER_TABLE_INIT, tc = TUNER_TABLE_INIT;
    char err[256], hex[TUNER_DIGEST_CHARS + 1], text[512];
    CHECK(!parse(&ta, a, strlen(a), err) && !parse(&tb, b, strlen(b), err) &&
              !parse(&tc, c, strlen(c), err),
          "parse: %s", err);
    CHECK(ta.digest == tb.digest && ta.digest != tc.digest, "digest of the meaning");
    tuner_digest_format(ta.digest, hex);
    CHECK(tuner_table_identity(&ta, hex, err, sizeof(err)) == 0 &&
              tuner_table_identity(&ta, NULL, err, sizeof(err)) == 0,
          "its own digest named: %s", err);
    CHECK(tuner_table_identity(&tc, hex, err, sizeof(err)) != 0 &&
              strstr(err, "not the table the job was launched with"),
          "another's digest: %s", err);
    snprintf(text, sizeof(text), MAGIC "# digest=%s\n# class=c\n" COLUMNS "%s", hex,
             "allreduce,0,inf,1,8,ring,ll,2\n"); /* c's rows under a's digest */
    tuner_table_release(&tc);
    CHECK(!parse(&tc, text, strlen(text), err) && tc.has_declared && tc.declared == ta.digest,
          "the digest= header read: %s", err);
    CHECK(tuner_table_identity(&tc, NULL, err, sizeof(err)) != 0 &&
              strstr(err, "its rows are not those its digest= header names"),
          "a header that is not its rows': %s", err);
    tuner_table_release(&ta);
    tuner_table_release(&tb);
    tuner_table_release(&tc);
}

/* Header keys in any case: "# GPUS=4" is the gpus check, not prose that skips it. */
static void test_key_case(void)
{
    static const char text[] = MAGIC "# Class=c1\n# GPUS=4\n# GPU_Model=NVIDIA L4\n"
                                     "# NCCL_MAX=2.28.9\n# A note=not a key\n" COLUMNS;
    struct tuner_table t = TUNER_TABLE_INIT;
    char err[256];
    CHECK(!parse(&t, text, strlen(text), err) && !strcmp(t.class_id, "c1") && t.gpus == 4 &&
              !strcmp(t.gpu_model, "NVIDIA L4") && t.nccl_max == 22809,
          "keys in capitals: %s (class %s, gpus %u)", err, t.class_id, t.gpus);
    tuner_table_release(&t);
    static const char twice[] = MAGIC "# gpus=4\n# GPUS=8\n" COLUMNS;
    CHECK(parse(&t, twice, strlen(twice), err) == TUNER_EFORMAT && strstr(err, "gpus given twice"),
          "a key twice in two cases: %s", err);
}

static void test_names_versions(void)
{
    char v[32];
    CHECK(tuner_version_code(2, 28, 9) == 22809, "code");
    tuner_version_format(22809, v, sizeof(v));
    CHECK(strcmp(v, "2.28.9") == 0, "format %s", v);
    tuner_version_format(2708, v, sizeof(v)); /* NCCL 2.7.8's old form */
    CHECK(strcmp(v, "2.7.8") == 0, "old format %s", v);
    CHECK(!strcmp(tuner_coll_name(TUNER_COLL_REDUCESCATTER), "reducescatter") &&
              !strcmp(tuner_algo_name(TUNER_ALGO_NVLS_TREE), "nvls_tree") &&
              !strcmp(tuner_proto_name(TUNER_PROTO_LL128), "ll128") &&
              !strcmp(tuner_coll_name(7), "?") && !strcmp(tuner_algo_name(-1), "?"),
          "names");
}

int main(void)
{
    test_edges();
    test_match();
    test_limits();
    test_refusals();
    test_digest();
    test_key_case();
    test_names_versions();
    printf("tuner table: %s (%d failed checks)\n", failures ? "FAILED" : "ok", failures);
    return failures ? 1 : 0;
}
