// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the command's environment (src/plan/env.c): pure, no host state. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"
#include "plan/env.h"
#include "util/strv.h"

#define HOME_IN "/.cordon/home"
#define TMP_IN  "/.cordon/tmp"

/* A typical caller's environment, secrets included. */
static const char *const host_env_c[] = {
    "PATH=/usr/local/bin:/usr/bin:/bin",
    "TERM=xterm-256color",
    "LANG=C.UTF-8",
    "LC_ALL=en_US.UTF-8",
    "LC_CTYPE=C.UTF-8",
    "LC_=bare-prefix",
    "TZ=Europe/Paris",
    "USER=alice",
    "LOGNAME=alice",
    "HOME=/home/alice",
    "TMPDIR=/var/tmp/alice",
    "SECRET=hunter2",
    "AWS_SECRET_ACCESS_KEY=xyz",
    "PATHEXT=.exe",
    "MYPATH=/x",
    "path=/lower",
    "LD_PRELOAD=/evil.so",
    "SSH_AUTH_SOCK=/run/ssh",
    "NOEQUALSSIGN",
    "EMPTY=",
    NULL,
};
#define host_env ((char *const *)host_env_c)

typedef struct fixture {
    struct cordon_policy *p;
    strv env;
    cordon_error err;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    f->p = cordon_policy_new();
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    strv_free(&f->env);
    cordon_policy_free(f->p);
    free(f);
    return 0;
}

/* The value of NAME in the built environment, or NULL; fails on duplicates. */
static const char *get(const strv *e, const char *name)
{
    size_t n = strlen(name);
    const char *found = NULL;
    for (size_t i = 0; i < e->n; i++) {
        assert_non_null(e->v[i]);
        if (strncmp(e->v[i], name, n) == 0 && e->v[i][n] == '=') {
            if (found)
                fail_msg("%s appears twice in the environment", name);
            found = e->v[i] + n + 1;
        }
    }
    return found;
}

static void assert_terminated(const strv *e)
{
    assert_non_null(e->v);
    assert_null(e->v[e->n]);
    for (size_t i = 0; i < e->n; i++) {
        assert_non_null(e->v[i]);
        assert_non_null(strchr(e->v[i], '='));
    }
}

static void build(fixture *f, char *const *henv)
{
    f->env = env_build(f->p, henv, HOME_IN, TMP_IN);
    assert_terminated(&f->env);
}

static void test_passlist_names(void **state)
{
    (void)state;
    const char *yes[] = {"PATH", "TERM", "LANG", "TZ", "USER", "LOGNAME", "LC_ALL", "LC_CTYPE", "LC_X"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!env_in_passlist(yes[i], strlen(yes[i])))
            fail_msg("%s should be in the passlist", yes[i]);
    const char *no[] = {"SECRET", "HOME",   "TMPDIR", "LC_",    "LC",       "L",        "",         "PATHX",
                        "PAT",    "MYPATH", "path",   "lc_all", "TERMINFO", "LANGUAGE", "USERNAME", "LD_PRELOAD"};
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (env_in_passlist(no[i], strlen(no[i])))
            fail_msg("%s should not be in the passlist", no[i]);
    /* the length, not the NUL, delimits the name ("PATH=..." with len 4 is PATH) */
    assert_true(env_in_passlist("PATH=/bin", 4));
    assert_false(env_in_passlist("PATH=/bin", 3));
    assert_false(env_in_passlist("PATHX", 5));
}

static void test_default_passlist(void **state)
{
    fixture *f = *state;
    build(f, host_env);
    assert_string_equal(get(&f->env, "PATH"), "/usr/local/bin:/usr/bin:/bin");
    assert_string_equal(get(&f->env, "TERM"), "xterm-256color");
    assert_string_equal(get(&f->env, "LANG"), "C.UTF-8");
    assert_string_equal(get(&f->env, "LC_ALL"), "en_US.UTF-8");
    assert_string_equal(get(&f->env, "LC_CTYPE"), "C.UTF-8");
    assert_string_equal(get(&f->env, "TZ"), "Europe/Paris");
    assert_string_equal(get(&f->env, "USER"), "alice");
    assert_string_equal(get(&f->env, "LOGNAME"), "alice");
    /* secrets and everything else stay out */
    assert_null(get(&f->env, "SECRET"));
    assert_null(get(&f->env, "AWS_SECRET_ACCESS_KEY"));
    assert_null(get(&f->env, "LC_"));
    assert_null(get(&f->env, "PATHEXT"));
    assert_null(get(&f->env, "MYPATH"));
    assert_null(get(&f->env, "path"));
    assert_null(get(&f->env, "LD_PRELOAD"));
    assert_null(get(&f->env, "SSH_AUTH_SOCK"));
    assert_null(get(&f->env, "EMPTY"));
    /* HOME and TMPDIR are the private directories, not the caller's */
    assert_string_equal(get(&f->env, "HOME"), HOME_IN);
    assert_string_equal(get(&f->env, "TMPDIR"), TMP_IN);
    /* 8 passed + HOME + TMPDIR, nothing else */
    assert_int_equal(f->env.n, 10);
    for (size_t i = 0; i < f->env.n; i++)
        assert_null(strstr(f->env.v[i], "hunter2"));
}

static void test_null_and_empty_host_env(void **state)
{
    fixture *f = *state;
    f->env = env_build(f->p, NULL, HOME_IN, TMP_IN);
    assert_terminated(&f->env);
    assert_int_equal(f->env.n, 2);
    assert_string_equal(get(&f->env, "HOME"), HOME_IN);
    assert_string_equal(get(&f->env, "TMPDIR"), TMP_IN);
    strv_free(&f->env);

    char *empty[] = {NULL};
    f->env = env_build(f->p, empty, NULL, NULL);
    /* even an empty result is a NULL-terminated vector */
    assert_int_equal(f->env.n, 0);
    assert_non_null(f->env.v);
    assert_null(f->env.v[0]);
}

static void test_clear_env(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_clear_env(f->p, true, &f->err), 0);
    build(f, host_env);
    assert_null(get(&f->env, "PATH"));
    assert_null(get(&f->env, "TERM"));
    assert_null(get(&f->env, "LC_ALL"));
    assert_null(get(&f->env, "SECRET"));
    assert_string_equal(get(&f->env, "HOME"), HOME_IN);
    assert_string_equal(get(&f->env, "TMPDIR"), TMP_IN);
    assert_int_equal(f->env.n, 2);
}

static void test_clear_env_no_home(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_clear_env(f->p, true, &f->err), 0);
    f->env = env_build(f->p, host_env, NULL, NULL);
    assert_terminated(&f->env);
    assert_int_equal(f->env.n, 0);
}

static void test_keep_env(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_keep_env(f->p, "SECRET", &f->err), 0);
    assert_int_equal(cordon_policy_keep_env(f->p, "NOT_SET_ANYWHERE", &f->err), 0);
    assert_int_equal(cordon_policy_keep_env(f->p, "EMPTY", &f->err), 0);
    /* a name without '=' in the host environment is not a variable */
    assert_int_equal(cordon_policy_keep_env(f->p, "NOEQUALSSIGN", &f->err), 0);
    /* a prefix of a set variable is not that variable */
    assert_int_equal(cordon_policy_keep_env(f->p, "SSH", &f->err), 0);
    build(f, host_env);
    assert_string_equal(get(&f->env, "SECRET"), "hunter2");
    assert_string_equal(get(&f->env, "EMPTY"), "");
    assert_null(get(&f->env, "NOT_SET_ANYWHERE"));
    assert_null(get(&f->env, "NOEQUALSSIGN"));
    assert_null(get(&f->env, "SSH"));
    for (size_t i = 0; i < f->env.n; i++) {
        assert_string_not_equal(f->env.v[i], "NOT_SET_ANYWHERE=");
        assert_string_not_equal(f->env.v[i], "NOEQUALSSIGN");
    }
    /* the passlist still applies, other secrets still do not pass */
    assert_non_null(get(&f->env, "PATH"));
    assert_null(get(&f->env, "AWS_SECRET_ACCESS_KEY"));
    assert_int_equal(f->env.n, 12);
}

static void test_keep_env_with_clear_env(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_clear_env(f->p, true, &f->err), 0);
    assert_int_equal(cordon_policy_keep_env(f->p, "PATH", &f->err), 0);
    assert_int_equal(cordon_policy_keep_env(f->p, "UNSET_VAR", &f->err), 0);
    build(f, host_env);
    assert_string_equal(get(&f->env, "PATH"), "/usr/local/bin:/usr/bin:/bin");
    assert_null(get(&f->env, "UNSET_VAR"));
    assert_null(get(&f->env, "TERM"));
    assert_int_equal(f->env.n, 3); /* PATH HOME TMPDIR */
}

static void test_set_env_overrides_passlist(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_env(f->p, "PATH=/opt/bin", &f->err), 0);
    assert_int_equal(cordon_policy_set_env(f->p, "LC_ALL=C", &f->err), 0);
    assert_int_equal(cordon_policy_set_env(f->p, "NEW=a=b", &f->err), 0);
    assert_int_equal(cordon_policy_set_env(f->p, "BLANK=", &f->err), 0);
    build(f, host_env);
    /* replaced in place, not duplicated (get() fails on a duplicate) */
    assert_string_equal(get(&f->env, "PATH"), "/opt/bin");
    assert_string_equal(get(&f->env, "LC_ALL"), "C");
    assert_string_equal(get(&f->env, "NEW"), "a=b");
    assert_string_equal(get(&f->env, "BLANK"), "");
    assert_string_equal(get(&f->env, "TERM"), "xterm-256color");
    assert_int_equal(f->env.n, 12);
}

static void test_ops_apply_in_order(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_env(f->p, "SECRET=replaced", &f->err), 0);
    assert_int_equal(cordon_policy_keep_env(f->p, "SECRET", &f->err), 0);
    assert_int_equal(cordon_policy_keep_env(f->p, "USER", &f->err), 0);
    assert_int_equal(cordon_policy_set_env(f->p, "USER=bob", &f->err), 0);
    assert_int_equal(cordon_policy_set_env(f->p, "X=1", &f->err), 0);
    assert_int_equal(cordon_policy_set_env(f->p, "X=2", &f->err), 0);
    build(f, host_env);
    assert_string_equal(get(&f->env, "SECRET"), "hunter2"); /* the later --keep-env wins */
    assert_string_equal(get(&f->env, "USER"), "bob");       /* the later --env wins */
    assert_string_equal(get(&f->env, "X"), "2");
}

static void test_env_sets_home_and_tmpdir(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_env(f->p, "HOME=/work/home", &f->err), 0);
    build(f, host_env);
    assert_string_equal(get(&f->env, "HOME"), "/work/home");
    assert_string_equal(get(&f->env, "TMPDIR"), TMP_IN);
    strv_free(&f->env);

    cordon_policy_free(f->p);
    f->p = cordon_policy_new();
    assert_int_equal(cordon_policy_set_env(f->p, "TMPDIR=/scratch", &f->err), 0);
    build(f, host_env);
    assert_string_equal(get(&f->env, "HOME"), HOME_IN);
    assert_string_equal(get(&f->env, "TMPDIR"), "/scratch");
}

/* --keep-env HOME when HOME is not set leaves the private HOME in place. */
static void test_keep_unset_home(void **state)
{
    fixture *f = *state;
    static const char *const henv_c[] = {"PATH=/bin", NULL};
    char *const *henv = (char *const *)henv_c;
    assert_int_equal(cordon_policy_keep_env(f->p, "HOME", &f->err), 0);
    assert_int_equal(cordon_policy_keep_env(f->p, "TMPDIR", &f->err), 0);
    build(f, henv);
    assert_string_equal(get(&f->env, "HOME"), HOME_IN);
    assert_string_equal(get(&f->env, "TMPDIR"), TMP_IN);
    assert_int_equal(f->env.n, 3);
}

static void test_no_private_dirs(void **state)
{
    fixture *f = *state;
    f->env = env_build(f->p, host_env, NULL, NULL);
    assert_terminated(&f->env);
    assert_null(get(&f->env, "HOME"));
    assert_null(get(&f->env, "TMPDIR"));
    assert_int_equal(f->env.n, 8);
}

static void test_setter_validation(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_env(f->p, "NOVALUE", &f->err), -1);
    assert_int_equal(f->err.stage, CORDON_STAGE_USAGE);
    assert_int_equal(cordon_policy_set_env(f->p, "=x", &f->err), -1);
    assert_int_equal(cordon_policy_keep_env(f->p, "A=B", &f->err), -1);
    assert_int_equal(cordon_policy_keep_env(f->p, "", &f->err), -1);
    assert_int_equal(f->p->n_env, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_passlist_names),
        cmocka_unit_test_setup_teardown(test_default_passlist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_null_and_empty_host_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clear_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_clear_env_no_home, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_env_with_clear_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_set_env_overrides_passlist, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ops_apply_in_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_env_sets_home_and_tmpdir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_keep_unset_home, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_private_dirs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_setter_validation, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
