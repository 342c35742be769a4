/* SPDX-License-Identifier: MIT */
/* Unit tests for util/: buffers, atomic files, JSON helpers, option parsing. */
#include "util/buf.h"
#include "util/child.h"
#include "util/env.h"
#include "util/error.h"
#include "util/file.h"
#include "util/json.h"
#include "util/jsonl.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/num.h"
#include "util/opts.h"
#include "util/quote.h"
#include "util/text.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[64];

static int make_tmpdir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/topotune-unit-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
    (void)state;
    return util_remove_tree_at(AT_FDCWD, tmpdir, 16);
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void test_buf(void **state)
{
    (void)state;
    struct util_buf b = UTIL_BUF_INIT;
    assert_string_equal(util_buf_str(&b), "");
    assert_int_equal(util_buf_adds(&b, "abc"), 0);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(util_buf_addf(&b, "%d,", i), 0);
    assert_int_equal(strncmp(util_buf_str(&b), "abc0,1,2,", 9), 0);
    assert_int_equal(b.len, strlen(b.data));
    util_buf_reset(&b);
    assert_int_equal(b.len, 0);
    util_buf_adds(&b, "x");
    char *s = util_buf_detach(&b);
    assert_string_equal(s, "x");
    assert_null(b.data);
    free(s);
    util_buf_release(&b);
}

/* The last lines of a log: trailing newlines and spaces cut, short texts whole. */
static void test_text_tail(void **state)
{
    (void)state;
    const char *t = "one\ntwo\nthree\n\n  ";
    size_t len = strlen(t), start = util_text_tail(t, &len, 2);
    assert_int_equal(len, strlen("one\ntwo\nthree"));
    assert_int_equal(start, strlen("one\n"));
    len = strlen(t);
    assert_int_equal(util_text_tail(t, &len, 10), 0);
    len = 0;
    assert_int_equal(util_text_tail("", &len, 1), 0);
}

/* Inputs are regular files (a FIFO refused at once, a link only when followed); outputs are
 * never written through a link, a FIFO or a hard link planted at their name. */
static void test_file_open_kinds(void **state)
{
    (void)state;
    char victim[128], lnk[128], fifo[128], hard[128], fresh[128];
    snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
    snprintf(lnk, sizeof(lnk), "%s/lnk", tmpdir);
    snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
    snprintf(hard, sizeof(hard), "%s/hard", tmpdir);
    snprintf(fresh, sizeof(fresh), "%s/fresh", tmpdir);
    assert_int_equal(util_file_write_atomic(victim, "precious", 8), 0);
    assert_int_equal(symlink(victim, lnk), 0);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    assert_int_equal(link(victim, hard), 0);
    const char *why = NULL;
    int fd = util_file_open_input(lnk, 1, &why); /* a path the user named: followed */
    assert_true(fd >= 0);
    assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
    close(fd);
    assert_int_equal(util_file_open_input(lnk, 0, &why), -1);
    assert_non_null(strstr(why, "symbolic link"));
    assert_int_equal(util_file_open_input(fifo, 1, &why), -1); /* refused, not waited on */
    assert_non_null(strstr(why, "not a regular file"));
    assert_int_equal(util_file_open_input(tmpdir, 1, &why), -1);
    assert_non_null(strstr(why, "directory"));
    const char *outs[] = {lnk, fifo, hard};
    for (int how = UTIL_FILE_TRUNC; how <= UTIL_FILE_APPEND; how++)
        for (size_t i = 0; i < 3; i++) {
            assert_int_equal(util_file_open_output(outs[i], (enum util_file_how)how, &why), -1);
            assert_non_null(why);
        }
    /* An atomic write replaces the name by rename(): a link, FIFO or directory there is
     * refused rather than replaced (as root, -o /dev/null would have replaced the device). */
    util_log_init("test", UTIL_LOG_QUIET);
    const char *kept[] = {lnk, fifo, tmpdir};
    for (size_t i = 0; i < 3; i++)
        assert_int_equal(util_file_write_atomic(kept[i], "x", 1), UTIL_EIO);
    struct stat st;
    assert_int_equal(lstat(lnk, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    struct util_buf b = UTIL_BUF_INIT;
    assert_int_equal(util_file_read(victim, 64, &b), 0);
    assert_string_equal(util_buf_str(&b), "precious");
    util_buf_release(&b);
    fd = util_file_open_output(fresh, UTIL_FILE_APPEND, &why);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "x", 1), 1);
    close(fd);
    fd = util_file_open_output(fresh, UTIL_FILE_TRUNC, &why);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(util_file_read(fresh, 64, &b), 0);
    assert_int_equal(b.len, 0);
    util_buf_release(&b);
    unlink(victim), unlink(lnk), unlink(fifo), unlink(hard), unlink(fresh);
}

static void test_atomic_write(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof(path), "%s/out.txt", tmpdir);
    assert_int_equal(util_file_write_atomic(path, "one\n", 4), 0);
    assert_int_equal(util_file_write_atomic(path, "second\n", 7), 0);
    struct util_buf b = UTIL_BUF_INIT;
    assert_int_equal(util_file_read(path, 100, &b), 0);
    assert_string_equal(util_buf_str(&b), "second\n");
    util_buf_reset(&b);
    assert_int_equal(util_file_read(path, 3, &b), UTIL_EINVAL); /* larger than allowed */
    util_buf_release(&b);
    assert_int_equal(count_entries(tmpdir), 1); /* no temporary left behind */

    char missing[160];
    snprintf(missing, sizeof(missing), "%s/no/such/dir/out.txt", tmpdir);
    util_log_init("test", UTIL_LOG_QUIET);
    assert_int_equal(util_file_write_atomic(missing, "x", 1), UTIL_EIO);
    assert_int_equal(util_file_read(missing, 10, &b), UTIL_ENOENT);

    /* a log's end: the last bytes of a longer file, a shorter file whole, never a link */
    assert_int_equal(util_file_write_atomic(path, "first\nsecond\nlast\n", 18), 0);
    util_buf_reset(&b);
    assert_int_equal(util_file_read_tail(path, 5, &b), 0);
    assert_string_equal(util_buf_str(&b), "last\n");
    util_buf_reset(&b);
    assert_int_equal(util_file_read_tail(path, 100, &b), 0);
    assert_string_equal(util_buf_str(&b), "first\nsecond\nlast\n");
    char lnk[160];
    snprintf(lnk, sizeof(lnk), "%s/tail-link", tmpdir);
    assert_int_equal(symlink(path, lnk), 0);
    util_buf_reset(&b);
    assert_int_not_equal(util_file_read_tail(lnk, 100, &b), 0);
    assert_int_equal(b.len, 0);
    unlink(lnk);
    util_buf_release(&b);
}

/* path holds exactly want (at most 15 bytes). */
static void assert_file_is(const char *path, const char *want)
{
    struct util_buf text = UTIL_BUF_INIT;
    assert_int_equal(util_file_read(path, 16, &text), 0);
    assert_string_equal(util_buf_str(&text), want);
    util_buf_release(&text);
}

/* Files written together: none lands until all are staged; a failed stage leaves the earlier
 * ones' temporaries for release to remove and their names untouched. */
static void test_files_all_or_none(void **state)
{
    (void)state;
    char a[128], b[128], bad[160];
    snprintf(a, sizeof(a), "%s/a.json", tmpdir);
    snprintf(b, sizeof(b), "%s/b.md", tmpdir);
    snprintf(bad, sizeof(bad), "%s/no/such/dir/c.html", tmpdir);
    assert_int_equal(util_file_write_atomic(a, "old", 3), 0);
    int entries = count_entries(tmpdir);
    util_log_init("test", UTIL_LOG_QUIET);
    struct util_files f = UTIL_FILES_INIT;
    assert_int_equal(util_files_stage(&f, a, "new", 3), 0);
    assert_int_equal(util_files_stage(&f, b, "md", 2), 0);
    assert_int_equal(util_files_stage(&f, bad, "x", 1), UTIL_EIO);
    util_files_release(&f);
    assert_file_is(a, "old");
    assert_int_equal(access(b, F_OK), -1);
    assert_int_equal(count_entries(tmpdir), entries); /* no temporary left */
    assert_int_equal(util_files_stage(&f, a, "new", 3), 0);
    assert_int_equal(util_files_stage(&f, b, "md", 2), 0);
    assert_file_is(a, "old"); /* staged, not yet landed */
    assert_int_equal(util_files_commit(&f), 0);
    util_files_release(&f);
    assert_file_is(a, "new");
    assert_file_is(b, "md");
    assert_int_equal(count_entries(tmpdir), entries + 1);
    /* a rename refused (a folder made at b's name after staging): the first landed, the one
     * after it is not renamed but removed with the rest */
    char c[128];
    snprintf(c, sizeof(c), "%s/c.html", tmpdir);
    unlink(b);
    assert_int_equal(util_files_stage(&f, a, "newer", 5), 0);
    assert_int_equal(util_files_stage(&f, b, "md", 2), 0);
    assert_int_equal(util_files_stage(&f, c, "html", 4), 0);
    assert_int_equal(mkdir(b, 0755), 0);
    assert_int_equal(util_files_commit(&f), UTIL_EIO);
    util_files_release(&f);
    assert_file_is(a, "newer");
    assert_int_equal(access(c, F_OK), -1);
    assert_int_equal(count_entries(tmpdir), entries + 1); /* a.json and the folder b.md */
    rmdir(b);
    unlink(a);
}

static void test_json(void **state)
{
    (void)state;
    json_t *o = json_object();
    util_json_set(o, "a", util_json_str_or_null(NULL));
    util_json_set(o, "b", util_json_count_or_null(-1));
    util_json_set(o, "c", util_json_count_or_null(7));
    assert_true(json_is_null(json_object_get(o, "a")));
    assert_true(json_is_null(json_object_get(o, "b")));
    util_json_set(o, "s", json_string("x"));
    assert_string_equal(util_json_str(o, "s", "?"), "x");
    assert_string_equal(util_json_str(o, "a", "?"), "?"); /* null */
    assert_string_equal(util_json_str(o, "c", "?"), "?"); /* not a string */
    assert_null(util_json_str(NULL, "s", NULL));
    json_object_del(o, "s");
    assert_int_equal(json_integer_value(json_object_get(o, "c")), 7);
    char path[128];
    snprintf(path, sizeof(path), "%s/o.json", tmpdir);
    assert_int_equal(util_json_write(path, o), 0);
    json_t *back = util_json_load(path);
    assert_non_null(back);
    assert_true(json_equal(o, back));
    json_decref(back);
    json_decref(o);

    assert_int_equal(util_file_write_atomic(path, "{\"a\": 1,", 8), 0);
    util_log_init("test", UTIL_LOG_QUIET);
    assert_null(util_json_load(path));
}

/* A parse of a NULL-terminated argv literal (util_opts_parse moves positionals within it). */
static int parse_with(const struct util_opt *opts, int max_pos, int keep, char **argv, int *npos)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    const struct util_opts_cmd cmd = {"topo", "", opts, max_pos, keep};
    return util_opts_parse(&cmd, argc, argv, npos);
}

static void test_opts(void **state)
{
    (void)state;
    const char *input = NULL, *json = NULL;
    int flag = 0, npos;
    const struct util_opt opts[] = {
        {"input", 'i', UTIL_OPT_STRING, &input, "FILE", "input"},
        {"json", 0, UTIL_OPT_OPTSTRING, &json, "FILE", "json"},
        {"matrix", 'm', UTIL_OPT_FLAG, &flag, NULL, "flag"},
        {0},
    };
    char *argv1[] = {"topo", "-i", "a.xml", "--json", "-m", "extra", NULL};
    assert_int_equal(parse_with(opts, -1, 0, argv1, &npos), 0);
    assert_string_equal(input, "a.xml");
    assert_string_equal(json, "-"); /* bare --json: stdout */
    assert_int_equal(flag, 1);
    assert_int_equal(npos, 1);
    assert_string_equal(argv1[1], "extra"); /* positionals from argv[1] on */

    char *argv2[] = {"topo", "--json=out.json", "--input", "b.xml", NULL};
    assert_int_equal(parse_with(opts, -1, 0, argv2, &npos), 0);
    assert_string_equal(json, "out.json");
    assert_string_equal(input, "b.xml");

    util_log_init("test", UTIL_LOG_QUIET);
    char *argv3[] = {"topo", "--nope", NULL};
    assert_int_equal(parse_with(opts, -1, 0, argv3, &npos), UTIL_EUSAGE);
    char *argv4[] = {"topo", "--input", NULL};
    assert_int_equal(parse_with(opts, -1, 0, argv4, &npos), UTIL_EUSAGE);
    char *argv5[] = {"topo", "--matrix=1", NULL};
    assert_int_equal(parse_with(opts, -1, 0, argv5, &npos), UTIL_EUSAGE);
    char *too_many[] = {"topo", "a", "b", NULL};
    assert_int_equal(parse_with(opts, 1, 0, too_many, &npos), UTIL_EUSAGE);

    struct util_opt_list prices = {0};
    const struct util_opt list_opts[] = {{"price", 0, UTIL_OPT_LIST, &prices, "N=A", "price"}, {0}};
    char *argv6[] = {"compare", "--price", "a=1", "x", "--price=b=2", NULL};
    assert_int_equal(parse_with(list_opts, -1, 0, argv6, &npos), 0);
    assert_int_equal(prices.n, 2); /* every occurrence, in order */
    assert_string_equal(prices.items[0], "a=1");
    assert_string_equal(prices.items[1], "b=2");
    assert_int_equal(npos, 1);
    assert_string_equal(argv6[1], "x");

    /* nccl-tests' attached forms: -b8 -e128M; an attached value on a flag is refused */
    char *argv7[] = {"bench", "-ia.xml", "-m", NULL};
    input = NULL, flag = 0;
    assert_int_equal(parse_with(opts, -1, 0, argv7, &npos), 0);
    assert_string_equal(input, "a.xml");
    assert_int_equal(flag, 1);
    char *argv8[] = {"bench", "-mx", NULL};
    assert_int_equal(parse_with(opts, -1, 0, argv8, &npos), UTIL_EUSAGE);

    /* after "--", everything is positional: a command and its own flags, even ours */
    char *argv10[] = {"env", "-m", "--", "prog", "-i", "--nope", "--", NULL};
    flag = 0, input = NULL;
    assert_int_equal(parse_with(opts, -1, 0, argv10, &npos), 0);
    assert_int_equal(flag, 1);
    assert_null(input);
    assert_int_equal(npos, 4);
    assert_string_equal(argv10[1], "prog");
    assert_string_equal(argv10[2], "-i");
    assert_string_equal(argv10[3], "--nope");
    assert_string_equal(argv10[4], "--");

    /* a pass-through command keeps unknown options and their values in order */
    char *argv9[] = {"bench", "-b", "8", "-i", "c.xml", "--e=1M", "-n5", NULL};
    assert_int_equal(parse_with(opts, -1, 1, argv9, &npos), 0);
    assert_string_equal(input, "c.xml");
    assert_int_equal(npos, 4);
    assert_string_equal(argv9[1], "-b");
    assert_string_equal(argv9[2], "8");
    assert_string_equal(argv9[3], "--e=1M");
    assert_string_equal(argv9[4], "-n5");
}

/* Typed options: each number checked by its type and range in the table, nowhere else. */
static void test_opts_typed(void **state)
{
    (void)state;
    int iters = 20, npos;
    double tol = 0.15;
    size_t size = 0;
    const char *backend = NULL;
    struct util_opt_ints nodes = {{0}, 0}, ranks = {{0}, 0};
    const struct util_opt opts[] = {
        {"iters", 'n', UTIL_OPT_INT, &iters, "N", "iters", .min = 1, .max = 100000},
        {"tolerance", 0, UTIL_OPT_DOUBLE, &tol, "X", "tol", .min = 0.01, .max = 0.9},
        {"size", 0, UTIL_OPT_SIZE, &size, "SIZE", "size", .min = 1, .max = 17179869184.0},
        {"backend", 0, UTIL_OPT_CHOICE, &backend, "B", "b", .choices = "nccl mpi sim"},
        {"nodes", 0, UTIL_OPT_INTS, &nodes, "N,...", "nodes", .min = 1, .max = 4096},
        {"ranks", 0, UTIL_OPT_INTS, &ranks, "N,...", "ranks", .min = 1, .max = 8, .max_items = 3},
        {0},
    };
    char *good[] = {"x",         "-n5", "--tolerance", "0.5",    "--size=0.5K",
                    "--backend", "mpi", "--nodes",     "1,2,64", NULL};
    assert_int_equal(parse_with(opts, 0, 0, good, &npos), 0);
    assert_int_equal(iters, 5);
    assert_true(tol == 0.5);
    assert_int_equal(size, 512);
    assert_string_equal(backend, "mpi");
    assert_int_equal(nodes.n, 3);
    assert_int_equal(nodes.v[2], 64);
    char *three[] = {"x", "--ranks", "1,2,8", NULL};
    assert_int_equal(parse_with(opts, 0, 0, three, &npos), 0);
    assert_int_equal(ranks.n, 3);
    char *size_g[] = {"x", "--size", "16G", NULL};
    assert_int_equal(parse_with(opts, 0, 0, size_g, &npos), 0);
    assert_int_equal(size, 16ULL << 30);

    util_log_init("test", UTIL_LOG_QUIET);
    /* empty, partly numeric, out of range, not finite, a wrong word: each refused, the field kept
     */
    const char *bad[][2] = {{"--iters", ""},
                            {"--iters", "0"},
                            {"--iters", "5x"},
                            {"--iters", "1e3"},
                            {"--iters", "100001"},
                            {"--tolerance", "nan"},
                            {"--tolerance", "1"},
                            {"--tolerance", "inf"},
                            {"--size", "17G"},
                            {"--size", "0"},
                            {"--size", "1Q"},
                            {"--backend", "tcp"},
                            {"--backend", ""},
                            {"--nodes", "1,,2"},
                            {"--nodes", "0"},
                            {"--nodes", "1,"},
                            {"--ranks", "1,2,3,4"}, /* past the option's own bound */
                            {"--iters", "99999999999999999999"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        char *argv[] = {"x", (char *)bad[i][0], (char *)bad[i][1], NULL};
        iters = 7;
        assert_int_equal(parse_with(opts, 0, 0, argv, &npos), UTIL_EUSAGE);
        assert_int_equal(iters, 7);
    }

    long long v;
    double d;
    size_t b;
    assert_int_equal(util_parse_int("-3", -5, 5, &v), 0);
    assert_int_equal(v, -3);
    assert_int_equal(util_parse_int(NULL, 0, 5, &v), UTIL_EINVAL);
    assert_int_equal(util_parse_double("1e-3", 0, 1, &d), 0);
    assert_int_equal(util_parse_size("1.5M", 0, 1e15, &b), 0);
    assert_int_equal(b, 1572864);
    char text[32];
    assert_string_equal(util_size_text(16.0 * (1 << 30), text, sizeof(text)), "16G");
    assert_string_equal(util_size_text(1000, text, sizeof(text)), "1000");
}

/* The variable policy: an allow-list of exact names; whatever runs a program, loads code, names a
 * path, an address or a mail recipient is refused with its reason, and so is every other name
 * of the families; words match whole, never as substrings. */
static void test_env_policy(void **state)
{
    (void)state;
    unsetenv("TOPOTUNE_ALLOW_VARS");
    const char *ok[] = {"NCCL_ALGO",
                        "NCCL_P2P_DISABLE",
                        "NCCL_P2P_DIRECT_DISABLE",
                        "NCCL_IB_HCA",
                        "NCCL_SOCKET_IFNAME",
                        "NCCL_MAX_CTAS",
                        "NCCL_DEBUG",
                        "OMPI_MCA_btl",
                        "OMPI_MCA_btl_tcp_if_include",
                        "OMPI_MCA_coll_tuned_allreduce_algorithm",
                        "UCX_TLS",
                        "FI_PROVIDER",
                        "TORCH_NCCL_ASYNC_ERROR_HANDLING",
                        "CUDA_DEVICE_MAX_CONNECTIONS"};
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
        assert_null(util_env_refused(ok[i]));
    const char *bad[] = {"LD_PRELOAD",
                         "LD_LIBRARY_PATH",
                         "PATH",
                         "BASH_ENV",
                         "ENV",
                         "PYTHONPATH",
                         "NCCL_NET_PLUGIN",
                         "NCCL_TUNER_PLUGIN",
                         "NCCL_ENV_PLUGIN",
                         "NCCL_COMM_ID",
                         "NCCL_CONF_FILE",
                         "NCCL_GRAPH_FILE",
                         "CUDA_INJECTION64_PATH",
                         "CUDA_HOME",
                         "CUDA_VISIBLE_DEVICES",
                         "OMPI_MCA_plm_rsh_agent",
                         "OMPI_MCA_mca_base_component_path",
                         "OMPI_MCA_coll_tuned_dynamic_rules_filename",
                         "OMPI_MCA_orte_launch_agent",
                         "FI_PROVIDER_PATH",
                         "NCCL_DEBUG_FILE",
                         "NCCL_TOPO_DUMP_FILE",
                         "UCX_GDB_COMMAND",
                         "UCX_HANDLE_ERRORS",
                         "UCX_ERROR_MAIL_TO",
                         "UCX_ERROR_SIGNALS",
                         "UCX_MODULE_DIR",
                         "UCX_PROFILE_MODE",
                         "TORCH_NCCL_DUMP_ON_TIMEOUT",
                         "NCCL_SOMETHING_NEW",
                         "HOME",
                         "nccl_algo",
                         "NCCL-ALGO",
                         ""};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (!util_env_refused(bad[i]))
            fail_msg("%s passes the policy", bad[i]);
    }
    assert_string_equal(util_env_refused("LD_PRELOAD"), "the dynamic loader reads it");
    assert_string_equal(util_env_refused("BASH_ENV"), "a shell reads it at startup");
    assert_string_equal(util_env_refused("UCX_GDB_COMMAND"), "it names a program to run");
    /* whole words only: DIR is no part of DIRECT, FILE none of PROFILE */
    assert_int_equal(strncmp(util_env_refused("UCX_PROFILE_MODE"), "not a variable", 14), 0);
    assert_null(util_env_refused("NCCL_P2P_DIRECT_DISABLE"));
    /* values: NCCL's integers in decimal only; "" never (NCCL reads it as unset) */
    assert_null(util_env_value_refused("NCCL_MAX_CTAS", "8"));
    assert_null(util_env_value_refused("NCCL_IB_GID_INDEX", "-1"));
    assert_null(util_env_value_refused("NCCL_ALGO", "Ring,Tree"));
    assert_null(util_env_value_refused("OMPI_MCA_btl", ""));
    assert_non_null(util_env_value_refused("NCCL_MAX_CTAS", "010"));
    assert_non_null(util_env_value_refused("NCCL_MAX_CTAS", "0x8"));
    assert_non_null(util_env_value_refused("NCCL_NVLS_CHUNKSIZE", "1K"));
    assert_non_null(util_env_value_refused("NCCL_PAT_ENABLE", "-"));
    assert_non_null(util_env_value_refused("NCCL_ALGO", ""));
    assert_non_null(util_env_value_refused("NCCL_MAX_CTAS", "-0"));  /* 0, twice */
    assert_non_null(util_env_value_refused("NCCL_MAX_CTAS", "+16")); /* 16, twice */
    assert_non_null(util_env_value_refused("NCCL_SHM_USE_CUDA_MEMCPY", "1K"));
    /* names no NCCL from 2.12 reads: refused, with the reason */
    assert_int_equal(strncmp(util_env_refused("NCCL_STEPS"), "NCCL reads no such", 18), 0);
    assert_int_equal(strncmp(util_env_refused("NCCL_IB_GDR_LEVEL"), "no NCCL from 2.12", 17), 0);
    assert_string_equal(util_env_refused("NCCL_X_DIR"),
                        "it names a directory to load from or write to");
    /* the operator's additions: exact names, never one refused by name or word */
    setenv("TOPOTUNE_ALLOW_VARS", "NCCL_FAKE_MODE,UCX_GDB_COMMAND NCCL_SITE_PLUGIN LD_AUDIT", 1);
    assert_null(util_env_refused("NCCL_FAKE_MODE"));
    assert_non_null(util_env_refused("NCCL_FAKE_MOD"));
    assert_non_null(util_env_refused("UCX_GDB_COMMAND"));
    assert_non_null(util_env_refused("NCCL_SITE_PLUGIN"));
    assert_non_null(util_env_refused("LD_AUDIT"));
    unsetenv("TOPOTUNE_ALLOW_VARS");
    assert_non_null(util_env_refused("NCCL_FAKE_MODE"));
}

/* NCCL's configuration files as NCCL loads them: under the environment, the user's file first,
 * the first line of a name wins, nothing trimmed but the line end; a FIFO is not waited on. */
static void test_env_nccl_conf(void **state)
{
    (void)state;
    char user[128], home[128], dot[160], fifo[128];
    snprintf(user, sizeof(user), "%s/site.conf", tmpdir);
    const char *text = "# NCCL_UNIT_A=comment\r\nNCCL_UNIT_A=1\r\nNCCL_UNIT_A=2\n"
                       "no assignment\nNCCL_UNIT_B= spaced \n=nameless\nNCCL_UNIT_C=";
    assert_int_equal(util_file_write_atomic(user, text, strlen(text)), 0);
    setenv("NCCL_CONF_FILE", user, 1);
    const char *from = "x";
    assert_string_equal(util_env_nccl("NCCL_UNIT_A", &from), "1");
    assert_string_equal(from, user);
    assert_string_equal(util_env_nccl("NCCL_UNIT_B", NULL), " spaced ");
    assert_string_equal(util_env_nccl("NCCL_UNIT_C", NULL), "");
    assert_null(util_env_nccl("no assignment", NULL));
    assert_null(util_env_nccl("NCCL_UNIT_D", &from));
    assert_null(from);
    json_t *files = util_env_nccl_files();
    assert_string_equal(json_string_value(json_array_get(json_object_get(files, "NCCL_UNIT_A"), 0)),
                        "1");
    json_decref(files);
    setenv("NCCL_UNIT_A", "env", 1); /* the environment wins, and is no file's */
    assert_string_equal(util_env_nccl("NCCL_UNIT_A", &from), "env");
    assert_null(from);
    files = util_env_nccl_files();
    assert_null(json_object_get(files, "NCCL_UNIT_A"));
    json_decref(files);
    unsetenv("NCCL_UNIT_A");
    /* NCCL_CONF_FILE empty: ~/.nccl.conf instead, read again for the new $HOME */
    snprintf(home, sizeof(home), "%s/home", tmpdir);
    snprintf(dot, sizeof(dot), "%s/.nccl.conf", home);
    assert_int_equal(mkdir(home, 0755), 0);
    assert_int_equal(util_file_write_atomic(dot, "NCCL_UNIT_A=home\n", 17), 0);
    setenv("NCCL_CONF_FILE", "", 1);
    char *old_home = getenv("HOME") ? util_xstrdup(getenv("HOME")) : NULL;
    setenv("HOME", home, 1);
    assert_string_equal(util_env_nccl("NCCL_UNIT_A", &from), "home");
    assert_string_equal(from, dot);
    assert_null(util_env_nccl("NCCL_UNIT_B", NULL));
    /* a site's long file (100 KiB of comments first): NCCL reads it all, and so is it here */
    char big[160];
    snprintf(big, sizeof(big), "%s/big.conf", tmpdir);
    size_t pad = 100 * 1024;
    char *long_text = util_xmalloc(pad + 32);
    memset(long_text, '#', pad);
    long_text[pad - 1] = '\n';
    strcpy(long_text + pad, "NCCL_UNIT_A=far\n");
    assert_int_equal(util_file_write_atomic(big, long_text, strlen(long_text)), 0);
    free(long_text);
    setenv("NCCL_CONF_FILE", big, 1);
    assert_string_equal(util_env_nccl("NCCL_UNIT_A", NULL), "far");
    /* a FIFO NCCL would block on: not read, no wait */
    snprintf(fifo, sizeof(fifo), "%s/fifo.conf", tmpdir);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    setenv("NCCL_CONF_FILE", fifo, 1);
    assert_null(util_env_nccl("NCCL_UNIT_A", NULL));
    unsetenv("NCCL_CONF_FILE");
    if (old_home)
        setenv("HOME", old_home, 1);
    else
        unsetenv("HOME");
    free(old_home);
}

/* Each format's quoting keeps a hostile value one value. */
static void test_quote(void **state)
{
    (void)state;
    struct util_buf b = UTIL_BUF_INIT;
    util_quote_shell(&b, "x'; touch pwned; echo '");
    assert_string_equal(util_buf_str(&b), "'x'\\''; touch pwned; echo '\\'''");
    util_buf_reset(&b);
    util_quote_yaml(&b, "550\n---\nkind: \"Pod\"\\");
    assert_string_equal(util_buf_str(&b), "\"550\\x0a---\\x0akind: \\\"Pod\\\"\\\\\"");
    util_buf_reset(&b);
    util_quote_dockerfile(&b, "a\"$HOME\\\nb");
    assert_string_equal(util_buf_str(&b), "\"a\\\"\\$HOME\\\\?b\"");
    util_buf_reset(&b);
    util_quote_csv(&b, "Ring");
    assert_string_equal(util_buf_str(&b), "Ring");
    util_buf_reset(&b);
    util_quote_csv(&b, "a,\"b\"\n");
    assert_string_equal(util_buf_str(&b), "\"a,\"\"b\"\"\n\"");
    util_buf_reset(&b);
    util_quote_comment(&b, "12.4\nexport LD_PRELOAD=/x\x1b[2J");
    assert_string_equal(util_buf_str(&b), "12.4?export LD_PRELOAD=/x?[2J");
    util_buf_release(&b);
}

/* Children: the environment is built before fork and applied by execve (PATH still searched);
 * a child reaped by someone else is "lost", never "exit 0"; a child of ours from before the
 * run is neither killed nor reaped by it. */
static void test_child(void **state)
{
    (void)state;
    char log[128], *env[] = {"TOPOTUNE_TEST_VALUE=a,b;c", NULL};
    snprintf(log, sizeof(log), "%s/child.log", tmpdir);
    char *argv[] = {"sh", "-c", "echo \"$TOPOTUNE_TEST_VALUE\"; exit 3", NULL};
    struct util_child c = {.argv = argv, .env = env, .log = log, .timeout_s = 10, .grace_s = 1};
    assert_int_equal(util_child_run(&c), 0);
    assert_int_equal(c.exit_code, 3);
    struct util_buf b = UTIL_BUF_INIT;
    assert_int_equal(util_file_read(log, 4096, &b), 0);
    assert_string_equal(util_buf_str(&b), "a,b;c\n");
    util_buf_release(&b);

    char *missing[] = {"topotune-no-such-program", NULL};
    struct util_child m = {.argv = missing, .log = log};
    assert_int_equal(util_child_run(&m), -1);
    assert_int_equal(m.exec_errno, ENOENT);
    struct util_child none = {.argv = NULL, .log = log}; /* a launch line that was refused */
    assert_int_equal(util_child_run(&none), -1);
    assert_int_equal(none.exec_errno, EINVAL);
    assert_true(none.wall_s == 0); /* nothing ran: no time spent */

    pid_t mine = fork(); /* started some other way, before the run */
    if (mine == 0) {
        sleep(2);
        _exit(5);
    }
    char *quick[] = {"true", NULL};
    struct util_child q = {.argv = quick, .log = log, .timeout_s = 10};
    assert_int_equal(util_child_run(&q), 0);
    assert_int_equal(q.exit_code, 0);
    int status = 0;
    assert_int_equal(waitpid(mine, &status, 0), mine); /* still ours to reap */
    assert_int_equal(WEXITSTATUS(status), 5);

    char *slow[] = {"sleep", "0.2", NULL};
    struct util_child s = {.argv = slow, .log = log, .timeout_s = 10};
    assert_int_equal(util_child_start(&s), 0);
    assert_int_equal(waitpid(s.pid, &status, 0), s.pid); /* someone else reaps it */
    assert_int_equal(util_child_wait(&s), 0);
    assert_int_equal(s.lost, 1);
    assert_int_equal(s.exit_code, -1);
}

/* Reports' text: wrapped at spaces within a width; HTML safe in text and quoted attributes. */
static void test_text_format(void **state)
{
    (void)state;
    struct util_buf b = UTIL_BUF_INIT;
    util_text_wrap(&b, "  a: ", "     ", "one two three four", 15);
    assert_string_equal(util_buf_str(&b), "  a: one two\n     three four\n");
    util_buf_reset(&b);
    util_text_wrap(&b, "", "  ", "averyveryverylongword x", 8); /* a long word stands alone */
    assert_string_equal(util_buf_str(&b), "averyveryverylongword\n  x\n");
    util_buf_reset(&b);
    util_text_html(&b, "<a href=\"x\">it's & more</a>\xc3\xa9");
    assert_string_equal(util_buf_str(&b),
                        "&lt;a href=&quot;x&quot;&gt;it&#39;s &amp; more&lt;/a&gt;\xc3\xa9");
    util_buf_release(&b);
}

/* Numbers as a person writes them: never an exponent (a measured 1,370 us once read 1.37e+03). */
static void test_text_number(void **state)
{
    (void)state;
    static const struct {
        double v;
        int digits;
        const char *want;
    } cases[] = {
        {1370.4, 3, "1,370"},   {137.04, 3, "137"},
        {13.704, 3, "13.7"},    {0.013704, 3, "0.0137"},
        {2.0, 3, "2"},          {999.96, 3, "1,000"},
        {0.99996, 3, "1"},      {1234567.8, 3, "1,234,568"},
        {300000, 6, "300,000"}, {0.5, 6, "0.5"},
        {-1370.4, 3, "-1,370"}, {0, 3, "0"},
        {1e300, 3, NULL},       {1e-20, 3, "0"},
        {-1e-20, 3, "0"},
    };
    struct util_buf b = UTIL_BUF_INIT;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        util_buf_reset(&b);
        util_text_number(&b, cases[i].v, cases[i].digits);
        if (cases[i].want)
            assert_string_equal(util_buf_str(&b), cases[i].want);
        else /* 1e300: 301 digits and their commas, no exponent */
            assert_true(b.len == 301 + 100 && !strchr(util_buf_str(&b), 'e'));
    }
    util_buf_reset(&b);
    util_text_fixed(&b, 1234.5, 2);
    assert_string_equal(util_buf_str(&b), "1,234.50");
    util_buf_reset(&b);
    util_text_fixed(&b, 12.0, 2);
    assert_string_equal(util_buf_str(&b), "12.00");
    util_buf_reset(&b);
    util_text_number(&b, 1.0 / 0.0, 3);
    util_text_number(&b, 0.0 / 0.0, 3);
    assert_string_equal(util_buf_str(&b), "infnan");
    /* a string from a file, shown: one line, no escape sequence */
    assert_string_equal(util_text_shown(&b, "a\x1b[2Jb\nc"), "ab\xef\xbf\xbd"
                                                             "c");
    assert_string_equal(util_text_shown(&b, NULL), "");
    util_buf_release(&b);
}

/* Directories made with their parents; a directory held by one holder is refused to the next. */
static void test_dirs(void **state)
{
    (void)state;
    char dir[128], holder[32] = "";
    snprintf(dir, sizeof(dir), "%s/a/b/c", tmpdir);
    assert_int_equal(util_mkdir_p(dir), 0);
    assert_int_equal(util_mkdir_p(dir), 0); /* already there: fine */
    struct stat st;
    assert_int_equal(stat(dir, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    char longname[2100];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_int_equal(util_mkdir_p(longname), -1);
    assert_int_equal(errno, ENAMETOOLONG);
    assert_int_equal(util_mkdir_p(""), -1); /* nothing to make */
    assert_int_equal(errno, ENOENT);

    int fd = util_lock_dir(dir, holder, sizeof(holder));
    assert_true(fd >= 0);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC); /* children never hold it */
    assert_int_equal(util_lock_dir(dir, holder, sizeof(holder)), -1);
    assert_int_equal(errno, EWOULDBLOCK);
    char pid[32];
    snprintf(pid, sizeof(pid), "%d", (int)getpid());
    assert_string_equal(holder, pid); /* the holder is named */
    char lockfile[2200];
    snprintf(lockfile, sizeof(lockfile), "%s/.lock", dir);
    assert_int_equal(unlink(lockfile), 0); /* removed while held: still held */
    assert_int_equal(util_lock_dir(dir, holder, sizeof(holder)), -1);
    assert_int_equal(errno, EWOULDBLOCK);
    close(fd);
    fd = util_lock_dir(dir, holder, sizeof(holder)); /* released with its descriptor */
    assert_true(fd >= 0);
    close(fd);
    snprintf(dir, sizeof(dir), "%s/no/such", tmpdir);
    assert_int_equal(util_lock_dir(dir, holder, sizeof(holder)), -1);
    assert_int_equal(errno, ENOENT);
}

/* Out of memory ends the process with one line naming the size: no NULL reaches a caller. Jansson
 * allocates through the same function once util_mem_init ran. */
static void test_mem(void **state)
{
    (void)state;
    char *s = util_xstrndup("abcdef", 3);
    assert_string_equal(s, "abc");
    s = util_xrealloc(s, 64);
    free(s);
    util_mem_init();
    json_malloc_t m;
    json_free_t f;
    json_get_alloc_funcs(&m, &f);
    assert_ptr_equal(m, util_xmalloc);
#ifndef __SANITIZE_ADDRESS__ /* ASan reports a huge request itself, before ours can */
    char log[128];
    snprintf(log, sizeof(log), "%s/oom.log", tmpdir);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(fd, STDERR_FILENO);
        volatile size_t huge = SIZE_MAX / 2;
        free(util_xmalloc(huge));
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    struct util_buf b = UTIL_BUF_INIT;
    assert_int_equal(util_file_read(log, 4096, &b), 0);
    assert_non_null(strstr(util_buf_str(&b), "topotune: out of memory ("));
    util_buf_release(&b);
#endif
}

/* Whole lines are documents; a last line without its newline is torn and left out; any other bad
 * line is damage and refuses the file. */
static void test_jsonl_torn_last_line_left_out(void **state)
{
    (void)state;
    const char *data = "{\"rep\": 0}\n{\"rep\": 1}\n{\"rep\": 2, \"out";
    size_t good;
    json_t *r = util_jsonl_parse("r.jsonl", data, strlen(data), &good);
    assert_int_equal(json_array_size(r), 2);
    assert_int_equal(good, 22);
    json_decref(r);
    const char *damaged = "{\"rep\": 0}\n{\"rep\": 1\n{\"rep\": 2}\n";
    assert_null(util_jsonl_parse("r.jsonl", damaged, strlen(damaged), &good));
    const char *dup = "{\"rep\": 0, \"rep\": 1}\n";
    assert_null(util_jsonl_parse("r.jsonl", dup, strlen(dup), &good));
    /* every record is an object; a file of tiny lines past the cap is refused, not parsed
     * into 45 times its size */
    assert_null(util_jsonl_parse("r.jsonl", "[]\n", 3, &good));
    size_t n = 3 * ((size_t)UTIL_JSONL_MAX_LINES + 1);
    char *many = util_xmalloc(n + 1);
    for (size_t i = 0; i < n; i += 3)
        memcpy(many + i, "{}\n", 3);
    many[n] = '\0';
    assert_null(util_jsonl_parse("r.jsonl", many, n, &good));
    free(many);
    /* one line of nested empty arrays: as many values as lines would be */
    size_t m = 3 * ((size_t)UTIL_JSONL_MAX_VALUES + 1) + 8;
    char *deep = util_xmalloc(m + 1);
    memcpy(deep, "{\"a\":[", 6);
    size_t at = 6;
    for (size_t i = 0; i <= (size_t)UTIL_JSONL_MAX_VALUES; i++, at += 3)
        memcpy(deep + at, "[],", 3);
    memcpy(deep + at - 1, "]}\n", 3);
    at += 2;
    assert_null(util_jsonl_parse("r.jsonl", deep, at, &good));
    free(deep);
}

/* A reader leaves the torn line in the file; the owner (--resume) cuts it; appends come back. */
static void test_jsonl_repair_cuts_only_for_the_owner(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof(path), "%s/results.jsonl", tmpdir);
    json_t *r = util_jsonl_load(path, UTIL_JSONL_READ); /* missing: no run yet */
    assert_int_equal(json_array_size(r), 0);
    json_decref(r);
    json_t *line = json_pack("{s:s,s:i}", "config_id", "a", "rep", 0);
    assert_int_equal(util_jsonl_append(path, line), 0);
    json_decref(line);
    int fd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0 && write(fd, "{\"torn", 6) == 6);
    close(fd);
    struct stat st;
    r = util_jsonl_load(path, UTIL_JSONL_READ);
    assert_int_equal(json_array_size(r), 1);
    json_decref(r);
    assert_int_equal(stat(path, &st), 0);
    off_t torn = st.st_size;
    r = util_jsonl_load(path, UTIL_JSONL_REPAIR);
    assert_int_equal(json_array_size(r), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(r, 0), "config_id")), "a");
    json_decref(r);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_size, torn - 6);
    unlink(path);
}

/* Ids become path components: no "..", no leading dot or dash, a short safe set. */
static void test_valid_id_is_one_path_component(void **state)
{
    (void)state;
    assert_true(util_valid_id("hgx-h100.8gpu_v2"));
    /* a host a node names itself: what gethostname gives, nothing a reader must quote */
    assert_true(util_valid_host("gpu-node01.cluster_a"));
    assert_false(util_valid_host(NULL));
    assert_false(util_valid_host(""));
    assert_false(util_valid_host("n2;x"));
    assert_false(util_valid_host("n$(id)"));
    char long_host[70];
    memset(long_host, 'a', sizeof(long_host) - 1);
    long_host[63] = '\0';
    assert_true(util_valid_host(long_host));
    long_host[63] = 'a';
    long_host[64] = '\0';
    assert_false(util_valid_host(long_host));
    assert_false(util_valid_id(".hidden"));
    assert_false(util_valid_id("-rf"));
    assert_false(util_valid_id("a..b"));
    assert_false(util_valid_id("a/b"));
    assert_false(util_valid_id(""));
    assert_false(util_valid_id(NULL));
    char longest[130];
    memset(longest, 'a', 129), longest[129] = '\0';
    assert_false(util_valid_id(longest));
    longest[128] = '\0';
    assert_true(util_valid_id(longest));
}

/* The median of odd and even counts, sorting in place; nothing counts as 0. */
static void test_median(void **state)
{
    (void)state;
    double odd[] = {5, -1, 3}, even[] = {4, 1, 3, 2}, one[] = {7};
    assert_true(util_median(odd, 3) == 3);
    assert_true(odd[0] == -1 && odd[1] == 3 && odd[2] == 5);
    assert_true(util_median(even, 4) == 2.5);
    assert_true(even[0] == 1 && even[3] == 4);
    assert_true(util_median(one, 1) == 7);
    assert_true(util_median(NULL, 0) == 0);
    assert_true(util_median(one, -1) == 0);
    util_sort_doubles(NULL, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buf),
        cmocka_unit_test(test_median),
        cmocka_unit_test(test_text_tail),
        cmocka_unit_test(test_atomic_write),
        cmocka_unit_test(test_files_all_or_none),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_opts),
        cmocka_unit_test(test_opts_typed),
        cmocka_unit_test(test_env_policy),
        cmocka_unit_test(test_env_nccl_conf),
        cmocka_unit_test(test_file_open_kinds),
        cmocka_unit_test(test_quote),
        cmocka_unit_test(test_child),
        cmocka_unit_test(test_dirs),
        cmocka_unit_test(test_text_format),
        cmocka_unit_test(test_text_number),
        cmocka_unit_test(test_mem),
        cmocka_unit_test(test_jsonl_torn_last_line_left_out),
        cmocka_unit_test(test_jsonl_repair_cuts_only_for_the_owner),
        cmocka_unit_test(test_valid_id_is_one_path_component),
    };
    return cmocka_run_group_tests_name("unit.util", tests, make_tmpdir, remove_tmpdir);
}
