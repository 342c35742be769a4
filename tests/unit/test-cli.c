/* SPDX-License-Identifier: MIT */
/* cli/: the one mapping from module codes to exit statuses (util/error.h's contract), and the
 * parse that ends a command after --help or a bad flag. */
#include "cli/cli.h"
#include "util/error.h"
#include "util/opts.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>

static void status_of_each_code(void **state)
{
    (void)state;
    assert_int_equal(cli_status(UTIL_OK), 0);
    assert_int_equal(cli_status(UTIL_OPTS_HELP), 0);
    assert_int_equal(cli_status(UTIL_EUSAGE), 2);
    assert_int_equal(cli_status(UTIL_EINVAL), 2);
    assert_int_equal(cli_status(UTIL_ENOENT), 2);
    assert_int_equal(cli_status(UTIL_ENOTSUP), 2);
    assert_int_equal(cli_status(UTIL_EIO), 1);
    assert_int_equal(cli_status(UTIL_ENOMEM), 1);
    assert_int_equal(cli_status(UTIL_EENV), 3);
    assert_int_equal(cli_status(UTIL_EINTR), 130); /* no signal seen: SIGINT's */
    /* a stray 1 (a verdict, a failed launch) is never taken for success */
    assert_int_equal(cli_status(1), 1);
}

static void parse_ends_after_help_or_a_bad_flag(void **state)
{
    (void)state;
    int n = 0;
    const struct util_opt opts[] = {{"n", 0, UTIL_OPT_INT, &n, "N", "a number", .min = 1, .max = 9},
                                    {0}};
    const struct util_opts_cmd cmd = {"topotune unit", "", opts, 0, 0};
    int npos, status = -1;
    char *ok[] = {"unit", "--n", "3", NULL};
    assert_int_equal(cli_parse(&cmd, 3, ok, &npos, &status), 0);
    assert_int_equal(n, 3);
    char *bad[] = {"unit", "--n", "10", NULL};
    assert_int_equal(cli_parse(&cmd, 3, bad, &npos, &status), 1);
    assert_int_equal(status, 2);
    char *help[] = {"unit", "--help", NULL};
    FILE *saved = stdout;
    stdout = fopen("/dev/null", "w"); /* the usage it prints is not this test's */
    assert_int_equal(cli_parse(&cmd, 2, help, &npos, &status), 1);
    fclose(stdout);
    stdout = saved;
    assert_int_equal(status, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(status_of_each_code),
        cmocka_unit_test(parse_ends_after_help_or_a_bad_flag),
    };
    return cmocka_run_group_tests_name("unit.cli", tests, NULL, NULL);
}
