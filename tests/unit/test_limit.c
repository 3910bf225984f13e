// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the resource limits in the policy (policy/limit.c) and their settings
 * keys (settings.c): what is accepted, what is refused and with which message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "policy/policy.h"

static void test_parse_pids_and_cpu(void **state)
{
    (void)state;
    cordon_error err = {0};
    unsigned long long v = 0;
    assert_int_equal(limit_parse(CORDON_LIMIT_PIDS, "50", &v, &err), 0);
    assert_int_equal(v, 50);
    assert_int_equal(limit_parse(CORDON_LIMIT_CPU, "3600", &v, &err), 0);
    assert_int_equal(v, 3600);
    assert_int_equal(limit_parse(CORDON_LIMIT_PIDS, "4194303", &v, &err), 0);
    const char *bad[] = {"",    "0",    "-1",  "+5", " 5",      "5 ",
                         "1.5", "0x10", "abc", "5k", "4194304", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err = (cordon_error){0};
        assert_int_equal(limit_parse(CORDON_LIMIT_PIDS, bad[i], &v, &err), -1);
        assert_int_equal(err.stage, CORDON_STAGE_USAGE);
        assert_string_equal(err.option, "limitPids"); /* the caller names its flag */
    }
    assert_int_equal(limit_parse(CORDON_LIMIT_CPU, "31536001", &v, &err), -1);
    assert_string_equal(err.option, "limitCpu");
    assert_int_equal(limit_parse(CORDON_LIMIT_CPU, "2.5", &v, &err), -1);
}

static void test_parse_memory(void **state)
{
    (void)state;
    cordon_error err = {0};
    unsigned long long v = 0;
    struct {
        const char *s;
        unsigned long long want;
    } good[] = {
        {"512M", 512ULL << 20},  {"512m", 512ULL << 20},  {"512MiB", 512ULL << 20},
        {"512MB", 512ULL << 20}, {"2G", 2ULL << 30},      {"1024K", 1ULL << 20},
        {"1T", 1ULL << 40},      {"1048576", 1ULL << 20}, {"1048577", 1048577},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        assert_int_equal(limit_parse(CORDON_LIMIT_MEMORY, good[i].s, &v, &err), 0);
        assert_int_equal(v, good[i].want);
    }
    const char *bad[] = {"",     "0",   "0M",  "M",   "12X",   "512Q", "1000",         "1023K",
                         "1.5G", "-5M", "5 M", "5Mi", "5MiBs", "5GG",  "99999999999T", "18446744073709551616"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err = (cordon_error){0};
        assert_int_equal(limit_parse(CORDON_LIMIT_MEMORY, bad[i], &v, &err), -1);
        assert_string_equal(err.option, "limitMemory");
    }
}

static void test_format(void **state)
{
    (void)state;
    char buf[64];
    limit_format(CORDON_LIMIT_MEMORY, 64ULL << 20, buf, sizeof buf);
    assert_string_equal(buf, "64 MiB");
    limit_format(CORDON_LIMIT_MEMORY, 3ULL << 30, buf, sizeof buf);
    assert_string_equal(buf, "3 GiB");
    limit_format(CORDON_LIMIT_MEMORY, 1048577, buf, sizeof buf);
    assert_string_equal(buf, "1048577 bytes");
    limit_format(CORDON_LIMIT_PIDS, 50, buf, sizeof buf);
    assert_string_equal(buf, "50");
    limit_format(CORDON_LIMIT_CPU, 2, buf, sizeof buf);
    assert_string_equal(buf, "2 s");
}

static void test_setters(void **state)
{
    (void)state;
    cordon_error err = {0};
    cordon_policy *p = cordon_policy_new();
    assert_int_equal(cordon_policy_set_limit_string(p, CORDON_LIMIT_MEMORY, "1G", &err), 0);
    assert_int_equal(p->limits.v[CORDON_LIMIT_MEMORY], 1ULL << 30);
    assert_int_equal(cordon_policy_set_limit(p, CORDON_LIMIT_PIDS, 10, &err), 0);
    assert_int_equal(p->limits.v[CORDON_LIMIT_PIDS], 10);
    /* 0 removes a limit */
    assert_int_equal(cordon_policy_set_limit(p, CORDON_LIMIT_PIDS, 0, &err), 0);
    assert_int_equal(p->limits.v[CORDON_LIMIT_PIDS], 0);
    /* a refused value changes nothing */
    assert_int_equal(cordon_policy_set_limit(p, CORDON_LIMIT_MEMORY, 5, &err), -1);
    assert_int_equal(p->limits.v[CORDON_LIMIT_MEMORY], 1ULL << 30);
    assert_int_equal(cordon_policy_set_limit(p, (cordon_limit)7, 5, &err), -1);
    assert_int_equal(cordon_policy_set_limit_string(p, CORDON_LIMIT_CPU, NULL, &err), -1);
    cordon_policy_free(p);
}

static int load(cordon_policy *p, const char *doc, cordon_error *err)
{
    return settings_load_buffer(p, "s.json", doc, strlen(doc), err);
}

static void test_settings_keys(void **state)
{
    (void)state;
    cordon_error err = {0};
    cordon_policy *p = cordon_policy_new();
    assert_int_equal(load(p, "{\"sandbox\": {\"limitPids\": 40, \"limitMemory\": \"300M\", \"limitCpu\": 20}}", &err),
                     0);
    assert_int_equal(p->limits.v[CORDON_LIMIT_PIDS], 40);
    assert_int_equal(p->limits.v[CORDON_LIMIT_MEMORY], 300ULL << 20);
    assert_int_equal(p->limits.v[CORDON_LIMIT_CPU], 20);
    assert_int_equal(load(p, "{\"sandbox\": {\"limitMemory\": 2097152}}", &err), 0);
    assert_int_equal(p->limits.v[CORDON_LIMIT_MEMORY], 2ULL << 20);
    cordon_policy_free(p);

    /* a setter wins over any settings file, before or after it */
    p = cordon_policy_new();
    assert_int_equal(cordon_policy_set_limit(p, CORDON_LIMIT_CPU, 3, &err), 0);
    assert_int_equal(load(p, "{\"sandbox\": {\"limitPids\": 40, \"limitCpu\": 20}}", &err), 0);
    assert_int_equal(p->limits.v[CORDON_LIMIT_CPU], 3);
    assert_int_equal(p->limits.v[CORDON_LIMIT_PIDS], 40);
    cordon_policy_free(p);
}

static void test_settings_bad(void **state)
{
    (void)state;
    struct {
        const char *doc, *msg;
    } bad[] = {
        {"{\"sandbox\": {\"limitPids\": \"50\"}}",
         "s.json:1: key \"sandbox.limitPids\" must be a whole number of processes (e.g. 100), not a string"},
        {"{\"sandbox\": {\"limitPids\": 0}}", "s.json:1: key \"sandbox.limitPids\" must be at least 1, not 0"},
        {"{\"sandbox\": {\"limitPids\": 2.5}}",
         "s.json:1: key \"sandbox.limitPids\" must be a whole number of processes (e.g. 100), not a number"},
        {"{\"sandbox\": {\"limitPids\": 5000000}}",
         "s.json:1: key \"sandbox.limitPids\": 5000000 is more than 4194303 processes"},
        {"{\"sandbox\": {\"limitMemory\": \"lots\"}}",
         "s.json:1: key \"sandbox.limitMemory\": 'lots' is not a size: bytes, or a number with K, M, G or T "
         "(powers of 1024), e.g. 512M or 2G"},
        {"{\"sandbox\": {\"limitMemory\": 12}}",
         "s.json:1: key \"sandbox.limitMemory\": 12 bytes is less than 1M; nothing can run in that"},
        {"{\"sandbox\": {\"limitMemory\": [1]}}",
         "s.json:1: key \"sandbox.limitMemory\" must be a size in bytes or a string such as \"512M\", not an array"},
        {"{\"sandbox\": {\"limitMemory\": \"1\\u0000G\"}}",
         "s.json:1: key \"sandbox.limitMemory\" contains a NUL byte (\\u0000)"},
        {"{\"sandbox\": {\"limitCpu\": -1}}", "s.json:1: key \"sandbox.limitCpu\" must be at least 1, not -1"},
        {"{\n\"sandbox\": {\n\"readOnly\": true,\n\"limitCpu\": true}}",
         "s.json:4: key \"sandbox.limitCpu\" must be a whole number of CPU seconds (e.g. 60), not a boolean"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        cordon_error err = {0};
        cordon_policy *p = cordon_policy_new();
        assert_int_equal(load(p, bad[i].doc, &err), -1);
        assert_int_equal(err.stage, CORDON_STAGE_SETTINGS);
        assert_string_equal(err.message, bad[i].msg);
        /* a file with an error changes nothing */
        assert_false(p->read_only);
        for (int k = 0; k < LIMITS_N; k++)
            assert_int_equal(p->limits.v[k], 0);
        cordon_policy_free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_pids_and_cpu),
        cmocka_unit_test(test_parse_memory),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_setters),
        cmocka_unit_test(test_settings_keys),
        cmocka_unit_test(test_settings_bad),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
