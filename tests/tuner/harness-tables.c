/* SPDX-License-Identifier: MIT */
/* Tables the plugin must refuse (one warning, NCCL's defaults) and the near misses it must not. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAGIC   "# topotune tuner table 1\n"
#define COLUMNS "collective,min_bytes,max_bytes,nodes,ranks,algorithm,protocol,channels\n"
#define ROW     "allreduce,0,65535,1,8,tree,ll,0\n"

/* The limits tuner/tuner.h states, restated here as the specification the tests hold it to. */
#define LINE_LIMIT 1024
#define ROW_LIMIT  4096
#define FILE_LIMIT (1 << 20)

/* The calls checked for "NCCL's defaults": every collective at a few sizes, hits of the main
 * table among them. */
static const size_t probe_sizes[] = {0, 100, 70000, 2 << 20, 64 << 20};

static void expect_untouched_calls(const struct emu_comm *c, const char *what)
{
    for (int coll = 0; coll < 5; coll++)
        for (size_t i = 0; i < sizeof(probe_sizes) / sizeof(probe_sizes[0]); i++) {
            if (c->p->version >= 3) {
                CHECK(check_call(c, main_rows, 0, coll, probe_sizes[i], 1) == OUT_MISS,
                      "%s: not a miss", what);
                continue;
            }
            struct emu_call call = {.coll = coll,
                                    .bytes = probe_sizes[i],
                                    .algo = -1,
                                    .proto = -1,
                                    .n_channels = SENTINEL_CHANNELS,
                                    .nvls = 1};
            emu_call(c, &call);
            CHECK(call.rc == 0 && call.algo == -1 && call.proto == -1 &&
                      call.n_channels == SENTINEL_CHANNELS,
                  "%s: v2 outputs written", what);
        }
}

void expect_defaults(const char *what, const char *needle)
{
    for (size_t g = 0; g < emu_ngens; g++) {
        struct emu_comm c;
        emu_log_reset();
        CHECK(emu_comm_init(&c, &loaded[g], 1, 8) == 0, "%s: init failed", what);
        CHECK(emu_logged.warn == 1 && emu_logged.info == 0,
              "NCCL %s: %s: %d warnings and %d load lines, want 1 and 0", emu_gens[g].release, what,
              emu_logged.warn, emu_logged.info);
        CHECK(!needle || emu_log_count(needle) == 1, "%s: warning without \"%s\": %s", what, needle,
              emu_logged.n ? emu_logged.line[0] : "(none)");
        if (g == 0 && emu_logged.n)
            printf("%-28s %s\n", what, emu_logged.line[0]);
        expect_untouched_calls(&c, what);
        CHECK(emu_comm_destroy(&c) == 0, "%s: destroy failed", what);
    }
}

void expect_applied(const char *what)
{
    for (size_t g = 1; g < emu_ngens; g++) {
        struct emu_comm c;
        emu_log_reset();
        CHECK(emu_comm_init(&c, &loaded[g], 1, 8) == 0, "%s: init failed", what);
        CHECK(emu_logged.warn == 0 && emu_log_count("loaded '") == 1,
              "%s: %d warnings, %d load lines", what, emu_logged.warn, emu_log_count("loaded '"));
        CHECK(check_call(&c, main_rows, main_nrows, 4, 100, 1) == OUT_HIT, "%s: not applied", what);
        CHECK(emu_comm_destroy(&c) == 0, "%s: destroy failed", what);
    }
}

/* The main table with its header lines replaced by `header`. */
static const char *table_with_header(const char *name, const char *header)
{
    static char text[8192];
    const char *rows = strstr(main_table, COLUMNS);
    snprintf(text, sizeof(text), MAGIC "%s%s", header, rows);
    return table_file(name, text, strlen(text));
}

int scenario_mismatch(void)
{
    env_main_table();
    env_set("TOPOTUNE_CLASS", "a100-sxm4-40gb-other");
    expect_defaults("class differs", "measured on class " MAIN_CLASS);
    env_set("TOPOTUNE_CLASS", NULL);
    expect_applied("no TOPOTUNE_CLASS");
    env_set("TOPOTUNE_CLASS", "any-class");
    env_set("TOPOTUNE_TUNER_TABLE", table_with_header("noclass.txt", "# nccl_min=2.21.0\n"));
    expect_applied("table without class");

    env_main_table();
    env_set("TOPOTUNE_TUNER_TABLE",
            table_with_header("range.txt", "# nccl_min=2.22.3\n# nccl_max=2.28.9\n"));
    emu_nccl_version = 22105;
    expect_defaults("NCCL 2.21.5 below nccl_min", "this is NCCL 2.21.5");
    emu_nccl_version = 22901;
    expect_defaults("NCCL 2.29.1 above nccl_max", "valid for NCCL 2.22.3 to 2.28.9");
    emu_nccl_version = 22203;
    expect_applied("NCCL 2.22.3 = nccl_min");
    emu_nccl_version = 22809;
    expect_applied("NCCL 2.28.9 = nccl_max");
    emu_nccl_version = 0;
    expect_applied("NCCL version unknown");
    env_set("TOPOTUNE_TUNER_TABLE", table_with_header("minonly.txt", "# nccl_min=2.29.0\n"));
    emu_nccl_version = 22809;
    expect_defaults("NCCL 2.28.9 below a lone min", "to any");

    env_main_table();
    env_set("TOPOTUNE_TUNER_TABLE", NULL);
    expect_defaults("no table variable", "no table");
    env_set("NCCL_TUNER_CONFIG_FILE", table_file("alt.txt", main_table, strlen(main_table)));
    expect_applied("NCCL_TUNER_CONFIG_FILE");
    env_set("NCCL_TUNER_CONFIG_FILE", table_file("bad.txt", "x\n", 2));
    env_set("TOPOTUNE_TUNER_TABLE", table_file("good.txt", main_table, strlen(main_table)));
    expect_applied("TOPOTUNE_TUNER_TABLE wins");
    env_set("TOPOTUNE_TUNER_TABLE", "/nonexistent/topotune/table.txt");
    expect_defaults("missing file", "No such file");
    char dir[300];
    snprintf(dir, sizeof(dir), "%s", table_file("dir-placeholder", "", 0));
    *strrchr(dir, '/') = '\0';
    env_set("TOPOTUNE_TUNER_TABLE", dir);
    expect_defaults("a directory", "not a regular file");
    return 0;
}

/* A table made of `n` copies of `line` after the header, for the limits. */
static char *repeated(const char *head, const char *line, size_t n, size_t *len)
{
    size_t hl = strlen(head), ll = strlen(line);
    char *text = malloc(hl + n * ll + 1);
    if (!text)
        exit(2);
    memcpy(text, head, hl);
    for (size_t i = 0; i < n; i++)
        memcpy(text + hl + i * ll, line, ll);
    *len = hl + n * ll;
    text[*len] = '\0';
    return text;
}

static void malformed(const char *what, const char *text, size_t len, const char *needle)
{
    env_set("TOPOTUNE_TUNER_TABLE", table_file("malformed.txt", text, len));
    expect_defaults(what, needle);
}

#define BAD(what, text, needle) malformed(what, text, sizeof(text) - 1, needle)

int scenario_malformed(void)
{
    env_main_table();
    BAD("empty file", "", "empty file");
    BAD("example plugin CSV", "allreduce,0,65535,tree,ll,-1,1,8,-1,-1\n", "line 1: not a");
    BAD("magic without version", "# topotune tuner table\n" COLUMNS ROW, "line 1");
    BAD("table version 2", "# topotune tuner table 2\n" COLUMNS ROW, "is not 1");
    BAD("no column line", MAGIC ROW, "line 2: expected the column line");
    BAD("only the magic", MAGIC, "no column line");
    BAD("columns misspelt", MAGIC "collective,min,max,nodes,ranks,algorithm,protocol\n" ROW,
        "line 2");
    BAD("unknown collective", MAGIC COLUMNS "alltoall,0,1,1,8,ring,ll,0\n", "line 3: unknown coll");
    BAD("unknown algorithm", MAGIC COLUMNS "allreduce,0,1,1,8,treee,ll,0\n", "\"treee\"");
    BAD("unknown protocol", MAGIC COLUMNS "allreduce,0,1,1,8,ring,ll129,0\n", "\"ll129\"");
    BAD("min above max", MAGIC COLUMNS "allreduce,9,8,1,8,ring,ll,0\n", "below min_bytes");
    BAD("size with a suffix", MAGIC COLUMNS "allreduce,0,1M,1,8,ring,ll,0\n", "max_bytes");
    BAD("negative size", MAGIC COLUMNS "allreduce,-1,8,1,8,ring,ll,0\n", "min_bytes");
    BAD("size over 64 bits", MAGIC COLUMNS "allreduce,0,18446744073709551616,1,8,ring,ll,0\n",
        "max_bytes");
    BAD("zero nodes", MAGIC COLUMNS "allreduce,0,1,0,8,ring,ll,0\n", "nodes");
    BAD("ranks as a word", MAGIC COLUMNS "allreduce,0,1,1,eight,ring,ll,0\n", "ranks");
    BAD("65 channels", MAGIC COLUMNS "allreduce,0,1,1,8,ring,ll,65\n", "channels");
    BAD("channels -1", MAGIC COLUMNS "allreduce,0,1,1,8,ring,ll,-1\n", "channels");
    BAD("6 fields", MAGIC COLUMNS "allreduce,0,1,1,8,ring\n", "6 fields");
    BAD("9 fields", MAGIC COLUMNS "allreduce,0,1,1,8,ring,ll,0,0\n", "more than 8");
    BAD("class twice", MAGIC "# class=a\n# class=b\n" COLUMNS ROW, "class given twice");
    BAD("gpus 0", MAGIC "# gpus=0\n" COLUMNS ROW, "gpus \"0\"");
    BAD("gpus twice", MAGIC "# gpus=8\n# gpus=4\n" COLUMNS ROW, "gpus given twice");
    BAD("gpu_model with a control byte", MAGIC "# gpu_model=H100\x1b[2J\n" COLUMNS ROW,
        "gpu_model");
    BAD("nccl_min without patch", MAGIC "# nccl_min=2.28\n" COLUMNS ROW, "nccl_min \"2.28\"");
    BAD("nccl_min above nccl_max", MAGIC "# nccl_min=2.28.9\n# nccl_max=2.28.3\n" COLUMNS ROW,
        "nccl_min is above");
    BAD("a NUL byte", MAGIC COLUMNS "allreduce,0,1,1,8,ring,ll,0\0\n", "NUL");
    BAD("binary",
        "\x7f"
        "ELF\x02\x01\x01\0\0\0",
        "line 1");
    size_t len;
    char *text = repeated(MAGIC COLUMNS "#", "x", LINE_LIMIT, &len);
    malformed("a 1025-byte line", text, len, "line 3: longer than 1024");
    free(text);
    text = repeated(MAGIC COLUMNS, ROW, ROW_LIMIT + 1, &len);
    malformed("4097 rows", text, len, "more than 4096 rows");
    free(text);
    text = repeated(MAGIC COLUMNS, "# padding padding padding padding padding padding\n",
                    FILE_LIMIT / 50 + 10, &len);
    malformed("a file over 1 MiB", text, len, "larger than");
    free(text);
    return 0;
}
