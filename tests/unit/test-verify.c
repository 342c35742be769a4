/* SPDX-License-Identifier: MIT */
/* verify/: the profile read, its variables (the reference keeps only the system ones), gains. */
#include "util/file.h"
#include "verify/internal.h"
#include "verify/verify.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char profile_text[] =
    "{\"class\": \"h100-x\", \"variables\": ["
    "{\"name\": \"NCCL_P2P_DISABLE\", \"value\": \"1\", \"role\": \"system\"},"
    "{\"name\": \"NCCL_ALGO\", \"value\": \"Ring\", \"role\": \"tuning\"},"
    "{\"name\": \"NCCL_PROTO\", \"value\": \"Simple\"}]}";

/* The reference runs with the cure only; env-only and env+table with every variable. */
static void test_variables(void **state)
{
    (void)state;
    json_t *profile = json_loads(profile_text, 0, NULL);
    json_t *all = verify_variables(profile, 0), *sys = verify_variables(profile, 1);
    assert_int_equal(json_object_size(all), 3);
    assert_int_equal(json_object_size(sys), 1);
    assert_string_equal(json_string_value(json_object_get(sys, "NCCL_P2P_DISABLE")), "1");
    struct util_buf words = UTIL_BUF_INIT;
    verify_env_words(sys, &words);
    assert_string_equal(util_buf_str(&words), "NCCL_P2P_DISABLE=1");
    util_buf_release(&words);
    json_decref(all);
    json_decref(sys);
    json_decref(profile);
}

static void test_gain(void **state)
{
    (void)state;
    assert_float_equal(verify_gain(110, 100), 10, 1e-9);
    assert_float_equal(verify_gain(50, 100), -50, 1e-9);
    assert_float_equal(verify_gain(50, 0), 0, 0); /* nothing to gain over */
}

/* A directory or its profile.json: the table is beside it; a file that is no profile, refused. */
static void test_load_profile(void **state)
{
    (void)state;
    char dir[64] = "/tmp/topotune-unit-XXXXXX", file[160], table[256], beside[160];
    assert_non_null(mkdtemp(dir));
    snprintf(beside, sizeof(beside), "%s/tuner-table.txt", dir);
    snprintf(file, sizeof(file), "%s/profile.json", dir);
    assert_int_equal(util_file_write_atomic(file, profile_text, strlen(profile_text)), 0);
    json_t *p = verify_load_profile(dir, table, sizeof(table));
    assert_non_null(p);
    assert_string_equal(json_string_value(json_object_get(p, "class")), "h100-x");
    assert_string_equal(table, beside);
    json_decref(p);
    p = verify_load_profile(file, table, sizeof(table));
    assert_non_null(p);
    assert_string_equal(table, beside);
    json_decref(p);
    assert_int_equal(util_file_write_atomic(file, "{\"class\": 3}", 12), 0);
    assert_null(verify_load_profile(dir, table, sizeof(table)));
    assert_int_equal(util_remove_tree_at(AT_FDCWD, dir, 4), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_variables),
        cmocka_unit_test(test_gain),
        cmocka_unit_test(test_load_profile),
    };
    return cmocka_run_group_tests_name("unit.verify", tests, NULL, NULL);
}
