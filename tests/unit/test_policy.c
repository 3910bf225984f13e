// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the public policy setters (policy.c): each validates its input at once
 * and says what is wrong; a refused value leaves the policy as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy.h"
#include "util/strv.h"

typedef struct fixture {
    struct cordon_policy *p;
    cordon_error err;
} fixture;

static int setup(void **state)
{
    fixture *f = xcalloc(1, sizeof *f);
    f->p = cordon_policy_new();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    cordon_policy_free(f->p);
    free(f);
    return 0;
}

#define assert_contains(hay, needle)                                     \
    do {                                                                 \
        if (!strstr((hay), (needle)))                                    \
            fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle)); \
    } while (0)

/* A refused call returns -1 with a usage error that says `expect`; "[option] text" also
 * wants cordon_error.option to name the setting (messages name no command-line flag: the
 * caller adds its own names). */
static void assert_usage_error(int r, const cordon_error *err, const char *expect)
{
    assert_int_equal(r, -1);
    assert_int_equal(err->stage, CORDON_STAGE_USAGE);
    if (expect[0] == '[') {
        const char *close = strchr(expect, ']');
        assert_non_null(close);
        assert_int_equal(strlen(err->option), (size_t)(close - expect - 1));
        assert_memory_equal(err->option, expect + 1, (size_t)(close - expect - 1));
        expect = close + 2;
    } else {
        assert_string_equal(err->option, "");
    }
    assert_string_equal(err->message, expect);
}

static void test_defaults(void **state)
{
    fixture *f = *state;
    assert_int_equal(f->p->base, CORDON_BASE_SYSTEM);
    assert_int_equal(f->p->network, CORDON_NETWORK_NONE);
    assert_false(f->p->network_set);
    assert_false(f->p->read_only_set);
    assert_int_equal(f->p->n_rules, 0);
    assert_int_equal(f->p->n_env, 0);
    assert_null(f->p->workspace);
    assert_true(f->p->timeout == 0.0);
    assert_int_equal(cordon_policy_settings_enabled(f->p), -1);
    cordon_policy_free(NULL); /* must be a no-op */
}

static void test_add_path(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_add_path(f->p, "/a//b/./c/../d/", CORDON_ACCESS_READ, "--allow-ro", &f->err), 0);
    assert_int_equal(f->p->n_rules, 1);
    const policy_rule *r = &f->p->rules[0];
    /* Kept as written: ".." after a symlink names another file than a lexical ".."
     * would, so canon.c resolves it on the host later. */
    assert_string_equal(r->path, "/a//b/./c/../d/");
    assert_int_equal(r->access, CORDON_ACCESS_READ);
    assert_int_equal(r->origin, ORIGIN_FLAG);
    assert_string_equal(r->source, "--allow-ro");
    assert_int_equal(r->line, 0);
    assert_false(r->expand); /* flags are absolute already: no ~ or <workspace> */

    /* Without a source the rule still gets a name for messages. */
    assert_int_equal(cordon_policy_add_path(f->p, "/x", CORDON_ACCESS_NONE, NULL, &f->err), 0);
    assert_string_equal(f->p->rules[1].source, "path rule");
}

static void test_add_path_refused(void **state)
{
    fixture *f = *state;
    assert_usage_error(cordon_policy_add_path(f->p, "rel/x", CORDON_ACCESS_WRITE, "--allow", &f->err), &f->err,
                       "--allow: 'rel/x' is a relative path; give an absolute path "
                       "(for example \"$PWD/rel/x\")");
    assert_usage_error(cordon_policy_add_path(f->p, "", CORDON_ACCESS_WRITE, "--deny", &f->err), &f->err,
                       "--deny: empty path; give an absolute path");
    assert_usage_error(cordon_policy_add_path(f->p, NULL, CORDON_ACCESS_WRITE, "--allow", &f->err), &f->err,
                       "--allow: empty path; give an absolute path");
    assert_usage_error(cordon_policy_add_path(f->p, "~/x", CORDON_ACCESS_READ, "--allow-ro", &f->err), &f->err,
                       "--allow-ro: '~/x' is a relative path; give an absolute path "
                       "(for example \"$PWD/~/x\")");
    assert_usage_error(cordon_policy_add_path(f->p, "/x", (cordon_access)7, "--allow", &f->err), &f->err,
                       "--allow: unknown access 7");
    assert_int_equal(f->p->n_rules, 0);
}

static void test_absolute_setters(void **state)
{
    fixture *f = *state;
    assert_usage_error(cordon_policy_set_data_root(f->p, "data", &f->err), &f->err,
                       "[dataRoot] 'data' is a relative path; give an absolute path "
                       "(for example \"$PWD/data\")");
    assert_usage_error(cordon_policy_set_data_root(f->p, "", &f->err), &f->err,
                       "[dataRoot] empty path; give an absolute path");
    assert_null(f->p->data_root);
    assert_usage_error(cordon_policy_set_cwd(f->p, "./sub", &f->err), &f->err,
                       "[chdir] './sub' is a relative path; give an absolute path "
                       "(for example \"$PWD/./sub\")");
    assert_null(f->p->cwd);

    assert_int_equal(cordon_policy_set_data_root(f->p, "/srv/data", &f->err), 0);
    assert_string_equal(f->p->data_root, "/srv/data");
    assert_int_equal(cordon_policy_set_cwd(f->p, "/work/x", &f->err), 0);
    assert_string_equal(f->p->cwd, "/work/x");
}

static void test_workspace(void **state)
{
    fixture *f = *state;
    assert_usage_error(cordon_policy_set_workspace(f->p, "", &f->err), &f->err, "[workspace] empty path");
    /* NULL is no workspace (--no-workspace; 0.1's cordon_policy_set_no_workspace) */
    assert_int_equal(cordon_policy_set_workspace(f->p, NULL, &f->err), 0);
    assert_true(f->p->no_workspace);

    assert_int_equal(cordon_policy_set_no_workspace(f->p, true, &f->err), 0);
    assert_int_equal(cordon_policy_set_workspace(f->p, "/w/b", &f->err), 0);
    assert_string_equal(f->p->workspace, "/w/b");
    assert_false(f->p->no_workspace); /* choosing a workspace undoes --no-workspace */

    /* A relative workspace is taken against the current directory. */
    char cwd[PATH_MAX];
    assert_non_null(getcwd(cwd, sizeof cwd));
    char *want = xasprintf("%s/sub", strcmp(cwd, "/") == 0 ? "" : cwd);
    assert_int_equal(cordon_policy_set_workspace(f->p, "sub", &f->err), 0);
    assert_string_equal(f->p->workspace, want);
    free(want);
}

static void test_set_env(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_env(f->p, "A=1", &f->err), 0);
    assert_int_equal(cordon_policy_set_env(f->p, "EMPTY=", &f->err), 0);
    assert_int_equal(cordon_policy_set_env(f->p, "B=x=y", &f->err), 0);
    assert_int_equal(f->p->n_env, 3);
    assert_int_equal(f->p->env[0].kind, ENV_SET);
    assert_string_equal(f->p->env[0].name, "A");
    assert_string_equal(f->p->env[0].value, "1");
    assert_string_equal(f->p->env[1].name, "EMPTY");
    assert_string_equal(f->p->env[1].value, "");
    assert_string_equal(f->p->env[2].name, "B"); /* split at the first '=' */
    assert_string_equal(f->p->env[2].value, "x=y");

    assert_usage_error(cordon_policy_set_env(f->p, "NOVALUE", &f->err), &f->err, "[env] 'NOVALUE' is not NAME=VALUE");
    assert_usage_error(cordon_policy_set_env(f->p, "=x", &f->err), &f->err,
                       "[env] '=x' does not start with a variable name (no spaces or control characters)");
    assert_usage_error(cordon_policy_set_env(f->p, "A B=x", &f->err), &f->err,
                       "[env] 'A B=x' does not start with a variable name (no spaces or control characters)");
    assert_usage_error(cordon_policy_set_env(f->p, "", &f->err), &f->err, "[env] '' is not NAME=VALUE");
    assert_usage_error(cordon_policy_set_env(f->p, NULL, &f->err), &f->err, "[env] '' is not NAME=VALUE");
    assert_int_equal(f->p->n_env, 3);
}

static void test_keep_env(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_keep_env(f->p, "HOME", &f->err), 0);
    assert_int_equal(f->p->n_env, 1);
    assert_int_equal(f->p->env[0].kind, ENV_KEEP);
    assert_string_equal(f->p->env[0].name, "HOME");
    assert_null(f->p->env[0].value);

    assert_usage_error(cordon_policy_keep_env(f->p, "A=B", &f->err), &f->err,
                       "[keepEnv] 'A=B' is not a variable name (not empty; no '=', spaces or control characters)");
    assert_usage_error(cordon_policy_keep_env(f->p, "", &f->err), &f->err,
                       "[keepEnv] '' is not a variable name (not empty; no '=', spaces or control characters)");
    assert_usage_error(cordon_policy_keep_env(f->p, NULL, &f->err), &f->err,
                       "[keepEnv] '' is not a variable name (not empty; no '=', spaces or control characters)");
    assert_int_equal(f->p->n_env, 1);

    assert_int_equal(cordon_policy_set_clear_env(f->p, true, &f->err), 0);
    assert_true(f->p->clear_env);
}

static void test_timeout_accepted(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_timeout_string(f->p, "2.5", &f->err), 0);
    assert_true(f->p->timeout == 2.5);
    assert_int_equal(cordon_policy_set_timeout_string(f->p, "10", &f->err), 0);
    assert_true(f->p->timeout == 10.0);
    assert_int_equal(cordon_policy_set_timeout_string(f->p, "0.001", &f->err), 0);
    assert_true(f->p->timeout == 0.001);
    assert_int_equal(cordon_policy_set_timeout_string(f->p, "31536000", &f->err), 0);
    assert_true(f->p->timeout == 31536000.0);
    /* The numeric setter takes 0 as "no timeout". */
    assert_int_equal(cordon_policy_set_timeout(f->p, 0, &f->err), 0);
    assert_true(f->p->timeout == 0.0);
}

static void test_timeout_refused(void **state)
{
    fixture *f = *state;
    static const char *const bad[] = {"-1",  "abc", "0",  "0.0",   "1e999", "1e3", "nan",
                                      "inf", " 1",  "1 ", "1.2.3", "0x10",  "+5",  "."};
    assert_int_equal(cordon_policy_set_timeout_string(f->p, "7", &f->err), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *want = xasprintf("[timeout] '%s' is not a positive number of seconds (e.g. 10 or 2.5)", bad[i]);
        assert_usage_error(cordon_policy_set_timeout_string(f->p, bad[i], &f->err), &f->err, want);
        free(want);
    }
    assert_usage_error(cordon_policy_set_timeout_string(f->p, "", &f->err), &f->err,
                       "[timeout] empty value; give seconds, e.g. 2.5");
    assert_usage_error(cordon_policy_set_timeout_string(f->p, NULL, &f->err), &f->err,
                       "[timeout] empty value; give seconds, e.g. 2.5");
    assert_int_equal(cordon_policy_set_timeout_string(f->p, "31536001", &f->err), -1);
    assert_contains(f->err.message, "'31536001' is more than a year"); /* repeats the input */
    assert_int_equal(cordon_policy_set_timeout(f->p, -0.5, &f->err), -1);
    assert_contains(f->err.message, "between 0 and 31536000");
    assert_int_equal(cordon_policy_set_timeout(f->p, (double)NAN, &f->err), -1);
    assert_int_equal(cordon_policy_set_timeout(f->p, (double)INFINITY, &f->err), -1);
    assert_true(f->p->timeout == 7.0); /* unchanged by every refusal */
}

static void test_base_names(void **state)
{
    fixture *f = *state;
    static const struct {
        const char *name;
        cordon_base base;
    } ok[] = {{"system", CORDON_BASE_SYSTEM}, {"host", CORDON_BASE_HOST}, {"empty", CORDON_BASE_EMPTY}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        cordon_base b = (cordon_base)-1;
        assert_int_equal(cordon_base_from_string(ok[i].name, &b, &f->err), 0);
        assert_int_equal(b, ok[i].base);
        assert_string_equal(base_name(b), ok[i].name); /* names round-trip */
        assert_int_equal(cordon_policy_set_base(f->p, b, &f->err), 0);
        assert_int_equal(f->p->base, ok[i].base);
    }
    cordon_base b = CORDON_BASE_HOST;
    assert_usage_error(cordon_base_from_string("System", &b, &f->err), &f->err,
                       "unknown base 'System': use one of system, host, empty");
    assert_usage_error(cordon_base_from_string(NULL, &b, &f->err), &f->err,
                       "unknown base '': use one of system, host, empty");
    assert_int_equal(b, CORDON_BASE_HOST);
    assert_usage_error(cordon_policy_set_base(f->p, (cordon_base)9, &f->err), &f->err, "unknown base 9");
    assert_int_equal(f->p->base, CORDON_BASE_EMPTY);
}

static void test_network_names(void **state)
{
    fixture *f = *state;
    cordon_network n = (cordon_network)-1;
    assert_int_equal(cordon_network_from_string("none", &n, &f->err), 0);
    assert_int_equal(n, CORDON_NETWORK_NONE);
    assert_int_equal(cordon_network_from_string("host", &n, &f->err), 0);
    assert_int_equal(n, CORDON_NETWORK_HOST);
    assert_int_equal(cordon_network_from_string("proxy", &n, &f->err), 0);
    assert_int_equal(n, CORDON_NETWORK_PROXY);
    assert_string_equal(network_name(CORDON_NETWORK_HOST), "host");
    assert_usage_error(cordon_network_from_string("off", &n, &f->err), &f->err,
                       "unknown network mode 'off': use one of none, host, proxy");
    assert_usage_error(cordon_network_from_string(NULL, &n, &f->err), &f->err,
                       "unknown network mode '': use one of none, host, proxy");
}

static void test_set_network(void **state)
{
    fixture *f = *state;
    assert_usage_error(cordon_policy_set_network(f->p, (cordon_network)5, &f->err), &f->err, "unknown network mode 5");
    assert_false(f->p->network_set); /* a refused value must not pin the setting */
    assert_int_equal(f->p->network, CORDON_NETWORK_NONE);
    assert_int_equal(cordon_policy_set_network(f->p, CORDON_NETWORK_PROXY, &f->err), 0);
    assert_int_equal(f->p->network, CORDON_NETWORK_PROXY);

    assert_int_equal(cordon_policy_set_network(f->p, CORDON_NETWORK_HOST, &f->err), 0);
    assert_int_equal(f->p->network, CORDON_NETWORK_HOST);
    assert_true(f->p->network_set);
}

static void test_flags(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_read_only(f->p, false, &f->err), 0);
    assert_false(f->p->read_only);
    assert_true(f->p->read_only_set); /* even "false" is an explicit choice */
    assert_int_equal(cordon_policy_set_proc(f->p, false, &f->err), 0);
    assert_true(f->p->no_proc);
    assert_int_equal(cordon_policy_set_proc(f->p, true, &f->err), 0);
    assert_false(f->p->no_proc);
}

static void test_name_tables(void **state)
{
    (void)state;
    assert_string_equal(access_name(CORDON_ACCESS_NONE), "deny");
    assert_string_equal(access_name(CORDON_ACCESS_READ), "read");
    assert_string_equal(access_name(CORDON_ACCESS_WRITE), "write");
    assert_string_equal(origin_name(ORIGIN_SETTINGS), "settings");
    assert_string_equal(origin_name(ORIGIN_FLAG), "flag");
    assert_string_equal(access_name((cordon_access)42), "?");
}

/* The public wrapper reaches the settings reader. */
static void test_load_settings_wrapper(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_load_settings(f->p, "/nonexistent/cordon/settings.json", &f->err), -1);
    assert_int_equal(f->err.stage, CORDON_STAGE_SETTINGS);
    assert_contains(f->err.message, "settings file /nonexistent/cordon/settings.json: cannot read");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_defaults, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_path_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_absolute_setters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_workspace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_accepted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timeout_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_base_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_network_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_network, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flags, setup, teardown),
        cmocka_unit_test(test_name_tables),
        cmocka_unit_test_setup_teardown(test_load_settings_wrapper, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
