/* SPDX-License-Identifier: MIT */
/* Unit tests for launch/: the direct, mpirun and srun lines launch_argv builds (every launch of
 * the sweep, bench, gather and doctor goes through it), the environment forwarded by name, host
 * lists, the --hosts/--allocation check, Open MPI's TCP exclusions and the hosts a log blames. */
#include "launch/launch.h"
#include "util/buf.h"
#include "util/error.h"
#include "util/file.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *const program[] = {"topotune-bench", "-b", "8", NULL};

/* The line as one string, words separated by a space (no test value holds one). */
static void join(char **argv, struct util_buf *out)
{
    util_buf_reset(out);
    for (char **a = argv; *a; a++)
        util_buf_addf(out, "%s%s", a == argv ? "" : " ", *a);
}

/* launch_argv's line for l (NULL: it refused l) against want; "" for want means refused. */
static void line_is(const struct launch *l, const char *want)
{
    char **argv = launch_argv(l, program);
    if (!*want) {
        assert_null(argv);
        return;
    }
    assert_non_null(argv);
    struct util_buf got = UTIL_BUF_INIT;
    join(argv, &got);
    launch_argv_free(argv);
    if (strcmp(util_buf_str(&got), want))
        fail_msg("got '%s', want '%s'", util_buf_str(&got), want);
    util_buf_release(&got);
}

/* What every mpirun line starts with: root needs --allow-run-as-root, ranks may outnumber cores. */
static const char *mpirun(void)
{
    return geteuid() == 0 ? "mpirun --allow-run-as-root --oversubscribe" : "mpirun --oversubscribe";
}

static void known_launchers(void **state)
{
    (void)state;
    assert_true(launch_known("direct") && launch_known("mpirun") && launch_known("srun"));
    assert_false(launch_known("ssh"));
    assert_false(launch_known(""));
    assert_false(launch_known(NULL));
    assert_false(launch_known("MPIRUN"));
    struct launch l = {"ssh", 1, NULL, NULL};
    line_is(&l, "");
}

/* direct: the program itself, as given, for one process; more than one is refused. */
static void direct_is_the_program_alone(void **state)
{
    (void)state;
    struct launch l = {"direct", 1, NULL, NULL};
    line_is(&l, "topotune-bench -b 8");
    l.np = 0;
    line_is(&l, "topotune-bench -b 8");
    l.np = 2;
    line_is(&l, "");
}

/* mpirun without hosts: -np, nothing placed by us. */
static void mpirun_np_on_this_host(void **state)
{
    (void)state;
    char want[256];
    struct launch l = {"mpirun", 8, NULL, NULL};
    snprintf(want, sizeof(want), "%s -np 8 topotune-bench -b 8", mpirun());
    line_is(&l, want);
}

/* mpirun with np 0 and no hosts: one process per node of the allocation. */
static void mpirun_np0_one_per_node(void **state)
{
    (void)state;
    char want[256];
    struct launch l = {"mpirun", 0, NULL, NULL};
    snprintf(want, sizeof(want), "%s --map-by ppr:1:node topotune-bench -b 8", mpirun());
    line_is(&l, want);
}

/* mpirun with hosts: the same number of consecutive ranks on every host. */
static void mpirun_hosts_same_ranks_per_node(void **state)
{
    (void)state;
    char want[256];
    struct launch l = {"mpirun", 6, "h1,h2,h3", NULL};
    snprintf(want, sizeof(want), "%s -np 6 --host h1,h2,h3 --map-by ppr:2:node topotune-bench -b 8",
             mpirun());
    line_is(&l, want);
    l.np = 3;
    snprintf(want, sizeof(want), "%s -np 3 --host h1,h2,h3 --map-by ppr:1:node topotune-bench -b 8",
             mpirun());
    line_is(&l, want);
}

/* Ranks that cannot be spread evenly over the hosts are refused, by either launcher. */
static void uneven_ranks_refused(void **state)
{
    (void)state;
    const char *launchers[] = {"mpirun", "srun"};
    for (int i = 0; i < 2; i++) {
        struct launch l = {launchers[i], 5, "h1,h2", NULL};
        line_is(&l, ""); /* 5 on 2 */
        l.np = 1;
        line_is(&l, ""); /* fewer ranks than hosts */
        l.np = 0;
        line_is(&l, ""); /* a host list and no rank count */
    }
}

/* mpirun forwards each variable with -x NAME: the value stays in the launcher's environment. */
static void mpirun_forwards_names_not_values(void **state)
{
    (void)state;
    char *env[] = {"NCCL_ALGO=Ring", "ODD=a b;c'd\"e$(x)", "EMPTY=", NULL};
    struct launch l = {"mpirun", 2, NULL, env};
    char want[256];
    snprintf(want, sizeof(want), "%s -np 2 -x NCCL_ALGO -x ODD -x EMPTY topotune-bench -b 8",
             mpirun());
    line_is(&l, want);
    char **argv = launch_argv(&l, program);
    for (char **a = argv; *a; a++)
        if (strchr(*a, '=') || strstr(*a, "Ring") || strchr(*a, ';'))
            fail_msg("a value reached the command line: '%s'", *a);
    launch_argv_free(argv);
}

/* srun: -n, and every variable through --export=ALL (srun splits --export lists on commas). */
static void srun_exports_all(void **state)
{
    (void)state;
    char *env[] = {"NCCL_SOCKET_IFNAME=eth0,eth1", NULL};
    struct launch l = {"srun", 8, NULL, env};
    line_is(&l, "srun -n8 --export=ALL topotune-bench -b 8");
    l.np = 0; /* what Slurm places: one task */
    line_is(&l, "srun -n1 --export=ALL topotune-bench -b 8");
}

/* srun with hosts: those nodes of the allocation, the same number of tasks on each. */
static void srun_hosts_nodes_and_tasks_per_node(void **state)
{
    (void)state;
    struct launch l = {"srun", 8, "n1,n2", NULL};
    line_is(&l, "srun -n8 -w n1,n2 -N2 --ntasks-per-node=4 --export=ALL topotune-bench -b 8");
}

/* The program's words pass as they are, one argument each: no shell splits or unquotes them. */
static void program_words_kept_whole(void **state)
{
    (void)state;
    char *const odd[] = {"/opt/my dir/bench", "--name=a b", "'q'", "$HOME", "", NULL};
    const char *launchers[] = {"direct", "mpirun", "srun"};
    for (int i = 0; i < 3; i++) {
        struct launch l = {launchers[i], 1, NULL, NULL};
        char **argv = launch_argv(&l, odd);
        assert_non_null(argv);
        int n = 0;
        while (argv[n])
            n++;
        assert_true(n >= 5);
        for (int k = 0; k < 5; k++)
            assert_string_equal(argv[n - 5 + k], odd[k]);
        launch_argv_free(argv);
    }
    launch_argv_free(NULL);
}

/* A list of thousands of hosts: a hostfile, one name a line (Linux refuses an argument of 128
 * KiB: mpirun --host with 7,000 names could not start), removed with the line. */
static void long_host_list_in_a_hostfile(void **state)
{
    (void)state;
    struct util_buf hosts = UTIL_BUF_INIT;
    for (int i = 0; i < 7000; i++)
        util_buf_addf(&hosts, "%sgpu-rack%02d-node%04d", i ? "," : "", i / 100, i);
    assert_true(hosts.len > 128 * 1024);
    const char *launchers[] = {"mpirun", "srun"}, *flag[] = {"--hostfile", "-w"};
    for (int k = 0; k < 2; k++) {
        struct launch l = {.launcher = launchers[k], .np = 14000, .hosts = util_buf_str(&hosts)};
        char **argv = launch_argv(&l, program);
        assert_non_null(argv);
        int at = -1;
        for (int i = 0; argv[i]; i++) {
            assert_true(strlen(argv[i]) < 4096);
            if (!strcmp(argv[i], flag[k]))
                at = i + 1;
        }
        assert_true(at > 0);
        char *path = strdup(argv[at]);
        struct util_buf text = UTIL_BUF_INIT;
        assert_int_equal(util_file_read(path, 1 << 20, &text), 0);
        assert_true(!strncmp(util_buf_str(&text),
                             k ? "gpu-rack00-node0000\ngpu-rack00-node0001\n"
                               : "gpu-rack00-node0000 slots=2\ngpu-rack00-node0001 slots=2\n",
                             k ? 40 : 56));
        assert_non_null(strstr(util_buf_str(&text),
                               k ? "\ngpu-rack69-node6999\n" : "\ngpu-rack69-node6999 slots=2\n"));
        launch_argv_free(argv);
        assert_int_equal(access(path, F_OK), -1);
        util_buf_release(&text);
        free(path);
    }
    util_buf_release(&hosts);
}

static void count_hosts(void **state)
{
    (void)state;
    assert_int_equal(launch_count_hosts(NULL), 0);
    assert_int_equal(launch_count_hosts(""), 0);
    assert_int_equal(launch_count_hosts(","), 0);
    assert_int_equal(launch_count_hosts("a"), 1);
    assert_int_equal(launch_count_hosts("a,b,c"), 3);
    assert_int_equal(launch_count_hosts("a,,b,"), 2);
    assert_int_equal(launch_count_hosts(",node-1"), 1);
}

/* --hosts and --allocation: one of them, a list with names, an allocation only inside Slurm. */
static void check_nodes_rules(void **state)
{
    (void)state;
    const char *job = getenv("SLURM_JOB_ID");
    char *saved = job ? strdup(job) : NULL;
    unsetenv("SLURM_JOB_ID");
    assert_int_equal(launch_in_slurm(), 0);
    assert_int_equal(launch_check_nodes(NULL, 0), 0);
    assert_int_equal(launch_check_nodes("h1,h2", 0), 0);
    assert_int_equal(launch_check_nodes("h1", 1), UTIL_EUSAGE);
    assert_int_equal(launch_check_nodes(",,", 0), UTIL_EUSAGE);
    assert_int_equal(launch_check_nodes("", 0), UTIL_EUSAGE);
    assert_int_equal(launch_check_nodes(NULL, 1), UTIL_EUSAGE); /* outside Slurm */
    setenv("SLURM_JOB_ID", "", 1);
    assert_int_equal(launch_in_slurm(), 0);
    setenv("SLURM_JOB_ID", "42", 1);
    assert_int_equal(launch_in_slurm(), 1);
    assert_int_equal(launch_check_nodes(NULL, 1), 0);
    if (saved)
        setenv("SLURM_JOB_ID", saved, 1);
    else
        unsetenv("SLURM_JOB_ID");
    free(saved);
}

/* Open MPI kept off container bridges and on IPv4: oob always, btl when asked, neither over the
 * user's choice of interfaces or family. */
static void tcp_env_excludes_bridges_unless_user_chose(void **state)
{
    (void)state;
    const char *vars[] = {"OMPI_MCA_oob_tcp_if_include", "OMPI_MCA_oob_tcp_if_exclude",
                          "OMPI_MCA_btl_tcp_if_include", "OMPI_MCA_btl_tcp_if_exclude",
                          "OMPI_MCA_btl_tcp_disable_family"};
    for (int i = 0; i < 5; i++)
        unsetenv(vars[i]);
    char *env[LAUNCH_TCP_ENV_MAX + 1] = {0};
    int n = launch_tcp_env(env, 1);
    assert_int_equal(n, 4);
    assert_true(!strncmp(env[0], "OMPI_MCA_oob_tcp_if_exclude=docker0,virbr0", 42));
    assert_string_equal(env[1], "OMPI_MCA_oob_tcp_disable_ipv6_family=1");
    assert_true(
        !strncmp(env[2], "OMPI_MCA_btl_tcp_if_exclude=127.0.0.1/8,sppp,docker0,virbr0", 60));
    assert_string_equal(env[3], "OMPI_MCA_btl_tcp_disable_family=6");
    for (int i = 0; i < n; i++)
        free(env[i]), env[i] = NULL;
    n = launch_tcp_env(env, 0); /* no btl: oob only */
    assert_int_equal(n, 2);
    assert_true(!strncmp(env[0], "OMPI_MCA_oob_", 13) && !strncmp(env[1], "OMPI_MCA_oob_", 13));
    free(env[0]), free(env[1]);
    setenv("OMPI_MCA_oob_tcp_if_include", "ib0", 1);
    n = launch_tcp_env(env, 1); /* the user's oob choice stands; btl still set */
    assert_int_equal(n, 2);
    assert_true(!strncmp(env[0], "OMPI_MCA_btl_", 13) && !strncmp(env[1], "OMPI_MCA_btl_", 13));
    free(env[0]), free(env[1]);
    unsetenv("OMPI_MCA_oob_tcp_if_include");
    setenv("OMPI_MCA_oob_tcp_disable_ipv4_family", "1", 1); /* oob on IPv6: the user's */
    n = launch_tcp_env(env, 0);
    assert_int_equal(n, 0);
    unsetenv("OMPI_MCA_oob_tcp_disable_ipv4_family");
    setenv("OMPI_MCA_oob_tcp_if_include", "ib0", 1);
    setenv("OMPI_MCA_btl_tcp_disable_family", "4", 1); /* an IPv6 network: the user's */
    assert_int_equal(launch_tcp_env(env, 1), 0);
    unsetenv("OMPI_MCA_btl_tcp_disable_family");
    setenv("OMPI_MCA_btl_tcp_if_exclude", "eth9", 1);
    assert_int_equal(launch_tcp_env(env, 1), 0);
    for (int i = 0; i < 5; i++)
        unsetenv(vars[i]);
}

/* The hosts that log names, for hosts of ppn ranks each, as launch_hosts_blamed writes them. */
static void blamed_ppn(const char *log, const char *hosts, int ppn, const char *want)
{
    char path[] = "/tmp/topotune-unit-launch-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, log, strlen(log)) == (ssize_t)strlen(log));
    close(fd);
    struct util_buf out = UTIL_BUF_INIT;
    launch_hosts_blamed(path, hosts, ppn, &out);
    unlink(path);
    if (strcmp(util_buf_str(&out), want))
        fail_msg("log blames '%s', want '%s'", util_buf_str(&out), want);
    util_buf_release(&out);
}

static void blamed_is(const char *log, const char *hosts, const char *want)
{
    blamed_ppn(log, hosts, 0, want);
}

/* Open MPI names a rank that exited non-zero by its number, no host: the host that runs it (the
 * log named n1, in Open MPI's later routing message, for n3's rank). */
static void blamed_by_rank(void **state)
{
    (void)state;
    static const char log[] = "Primary job terminated normally, but 1 process returned\n"
                              "  Process name: [[15015,1],2]\n  Exit code:    127\n"
                              "target node: n1\n";
    blamed_ppn(log, "n1,n2,n3", 1, "n3");
    blamed_ppn(log, "n1,n2,n3", 2, "n2"); /* ranks 2 and 3 on the second host */
    blamed_ppn(log, "n1,n2,n3", 0, "n1"); /* ranks per host unknown: the mention */
    blamed_ppn("  Process name: [[1,1],9]\n", "n1,n2", 1, ""); /* no such rank here */
}

/* A line that says what failed names the host; hosts merely mentioned elsewhere are not blamed. */
static void blamed_on_the_failure_line(void **state)
{
    (void)state;
    blamed_is(
        "[h1] daemon started\nssh: Could not resolve hostname h2: Name or service not known\n",
        "h1,h2,h3", "h2");
    blamed_is("ssh: connect to host h3 port 22: Connection refused\n"
              "ssh: connect to host h1 port 22: No route to host\n",
              "h1,h2,h3", "h1, h3");
    blamed_is("h2: permission denied (publickey)\n", "h1,h2", "h2"); /* any case */
}

/* A name inside another (h1 in h10, node-1 in node-10, gpu in gpu-2 or rack-gpu) is not that
 * host: a hyphen joins a name's parts. */
static void blamed_whole_names_only(void **state)
{
    (void)state;
    blamed_is("ssh: connect to host h10 port 22: Connection timed out\n", "h1,h10", "h10");
    blamed_is("node-10 is down\n", "node-1,node-10", "node-10");
    blamed_is("xh1y: unreachable\n", "h1", "");
    blamed_is("gpu-2: Connection refused\n", "gpu,gpu-2", "gpu-2");
    blamed_is("rack-gpu: Connection refused\n", "gpu", "");
}

/* No failure line: Open MPI's own report names the node on a line of its own. */
static void blamed_by_any_mention_without_failure_words(void **state)
{
    (void)state;
    blamed_is("ORTE was unable to reliably start one or more daemons.\n  Node: h2\n", "h1,h2",
              "h2");
    blamed_is("all good\n", "h1,h2", "");
}

/* Nothing to read, or no hosts: nothing blamed. */
static void blamed_nothing_without_log_or_hosts(void **state)
{
    (void)state;
    struct util_buf out = UTIL_BUF_INIT;
    launch_hosts_blamed("/nonexistent/topotune-unit.log", "h1", 1, &out);
    assert_int_equal(out.len, 0);
    blamed_is("h1: Connection refused\n", NULL, "");
    util_buf_release(&out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_launchers),
        cmocka_unit_test(direct_is_the_program_alone),
        cmocka_unit_test(mpirun_np_on_this_host),
        cmocka_unit_test(mpirun_np0_one_per_node),
        cmocka_unit_test(mpirun_hosts_same_ranks_per_node),
        cmocka_unit_test(uneven_ranks_refused),
        cmocka_unit_test(mpirun_forwards_names_not_values),
        cmocka_unit_test(srun_exports_all),
        cmocka_unit_test(srun_hosts_nodes_and_tasks_per_node),
        cmocka_unit_test(program_words_kept_whole),
        cmocka_unit_test(long_host_list_in_a_hostfile),
        cmocka_unit_test(count_hosts),
        cmocka_unit_test(check_nodes_rules),
        cmocka_unit_test(tcp_env_excludes_bridges_unless_user_chose),
        cmocka_unit_test(blamed_by_rank),
        cmocka_unit_test(blamed_on_the_failure_line),
        cmocka_unit_test(blamed_whole_names_only),
        cmocka_unit_test(blamed_by_any_mention_without_failure_words),
        cmocka_unit_test(blamed_nothing_without_log_or_hosts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
