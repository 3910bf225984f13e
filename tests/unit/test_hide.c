// SPDX-License-Identifier: Apache-2.0
/* Unit tests for what cordon hides and keeps read-only by itself around the caller's home
 * and the host (src/policy/protect.c, sensitive.c): credential stores wherever the home is
 * shown, --hide, /run and $XDG_RUNTIME_DIR under --base host, the home (or / or above it)
 * as a writable workspace, the home's start-up files, and the pins that keep the
 * directories above a hidden or read-only path from being renamed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/plan.h"
#include "policy/policy.h"
#include "policy/resolve.h"
#include "policy/sensitive.h"
#include "util/path.h"
#include "util/strv.h"

#include "fixture.h"

static int setup(void **state)
{
    return fixture_setup(state, "hide", FX_WS | FX_HOME | FX_POLICY);
}

/* The winning rule exactly at `path`, or NULL. */
static const rrule *winner(const fixture *f, const char *path)
{
    for (size_t i = 0; i < f->r.n_rules; i++)
        if (!f->r.rules[i].shadowed && strcmp(f->r.rules[i].path, path) == 0)
            return &f->r.rules[i];
    return NULL;
}

static const rrule *winner_rel(const fixture *f, const char *rel)
{
    char *p = fx(f, rel);
    const rrule *x = winner(f, p);
    free(p);
    return x;
}

/* The access the sandbox gives at DIR/rel: -1 not shown, else a cordon_access. */
static int access_rel(const fixture *f, const char *rel)
{
    char *p = fx(f, rel);
    int a = resolved_shows(&f->r, p) ? (int)resolved_lookup(&f->r, p)->access : -1;
    free(p);
    return a;
}

static bool hidden_by_cordon(const fixture *f, const char *rel)
{
    const rrule *x = winner_rel(f, rel);
    return x && x->origin == ORIGIN_PROTECT && x->access == CORDON_ACCESS_NONE;
}

static void resolve_fails(fixture *f, const char *text)
{
    drop_results(f);
    resolved r;
    if (resolve_policy(f->p, &f->host, &r, &f->err) == 0) {
        resolved_free(&r);
        fail_msg("resolve_policy succeeded, expected a failure (%s)", text);
    }
    assert_contains(f->err.message, text);
}

/* ---- credential stores ---------------------------------------------------------------- */

/* Under --base system too: a rule that shows the home (or a directory above a store)
 * shows the stores, so they are hidden. */
static void test_stores_base_system(void **state)
{
    fixture *f = *state;
    mk(f, "home/.ssh");
    touch(f, "home/.ssh/id");
    mk(f, "home/.config");
    mk(f, "home/.config/gh");
    touch(f, "home/.pgpass");
    touch(f, "home/notes");
    fresh_policy(f, CORDON_BASE_SYSTEM);
    rule(f, "home", CORDON_ACCESS_READ);
    plan_ok(f);
    assert_true(hidden_by_cordon(f, "home/.ssh"));
    assert_true(hidden_by_cordon(f, "home/.config/gh"));
    assert_true(hidden_by_cordon(f, "home/.pgpass"));
    assert_int_equal(access_rel(f, "home/notes"), CORDON_ACCESS_READ);
    assert_int_equal(access_rel(f, "home/.ssh/id"), -1);
    /* a rule on a directory above one store shows (and so hides) only that one */
    fresh_policy(f, CORDON_BASE_SYSTEM);
    rule(f, "home/.config", CORDON_ACCESS_READ);
    plan_ok(f);
    assert_true(hidden_by_cordon(f, "home/.config/gh"));
    assert_null(winner_rel(f, "home/.ssh"));
    /* a rule inside a store shows that part again (the longest path wins) */
    fresh_policy(f, CORDON_BASE_SYSTEM);
    rule(f, "home", CORDON_ACCESS_READ);
    rule(f, "home/.ssh/id", CORDON_ACCESS_READ);
    plan_ok(f);
    assert_true(hidden_by_cordon(f, "home/.ssh"));
    assert_int_equal(access_rel(f, "home/.ssh/id"), CORDON_ACCESS_READ);
}

/* ---- --hide ------------------------------------------------------------------------------ */

static void test_hide_paths(void **state)
{
    fixture *f = *state;
    touch(f, "ws/token");
    touch(f, "home/.tool");
    fresh_policy(f, CORDON_BASE_EMPTY);
    char *token = fx(f, "ws/token");
    assert_int_equal(cordon_policy_hide(f->p, token, &f->err), 0);
    policy_add_hide(f->p, "~/.tool", ORIGIN_SETTINGS, "s.json", 3, true);
    policy_add_hide(f->p, "missing", ORIGIN_SETTINGS, "s.json", 4, true);
    rule(f, "home", CORDON_ACCESS_READ);
    resolve_ok(f);
    assert_true(hidden_by_cordon(f, "ws/token"));
    assert_true(hidden_by_cordon(f, "home/.tool"));
    assert_contains(winner_rel(f, "home/.tool")->source, "s.json:3 (hiddenPaths \"~/.tool\")");
    assert_contains(winner_rel(f, "ws/token")->source, "--hide ");
    /* a missing path is not held */
    assert_null(winner_rel(f, "ws/missing"));
    /* where nothing shows it, nothing to hide */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->no_workspace = true;
    assert_int_equal(cordon_policy_hide(f->p, token, &f->err), 0);
    resolve_ok(f);
    assert_null(winner_rel(f, "ws/token"));
    /* a rule naming the path exactly shows it after all */
    fresh_policy(f, CORDON_BASE_EMPTY);
    assert_int_equal(cordon_policy_hide(f->p, token, &f->err), 0);
    rule(f, "ws/token", CORDON_ACCESS_READ);
    plan_ok(f);
    assert_int_equal(winner_rel(f, "ws/token")->origin, ORIGIN_FLAG);
    assert_int_equal(access_rel(f, "ws/token"), CORDON_ACCESS_READ);
    /* bad input */
    assert_int_equal(cordon_policy_hide(f->p, "relative", &f->err), -1);
    assert_int_equal(f->err.stage, CORDON_STAGE_USAGE);
    assert_string_equal(f->err.option, "hide"); /* the CLI names its flag */
    fresh_policy(f, CORDON_BASE_EMPTY);
    char *guess = fx(f, "ws/nope/../token");
    assert_int_equal(cordon_policy_hide(f->p, guess, &f->err), 0);
    resolve_fails(f, "'..' follows");
    free(guess);
    free(token);
}

/* ---- --base host: /run, /var/run, $XDG_RUNTIME_DIR -------------------------------------- */

static void test_run_hidden(void **state)
{
    fixture *f = *state;
    struct stat st;
    if (stat("/run", &st) < 0 || !S_ISDIR(st.st_mode))
        skip();
    fresh_policy(f, CORDON_BASE_HOST);
    plan_ok(f);
    const rrule *run = winner(f, "/run");
    assert_non_null(run);
    assert_int_equal(run->origin, ORIGIN_PROTECT);
    assert_int_equal(run->access, CORDON_ACCESS_NONE);
    assert_non_null(op_find(&f->pl, PLAN_HIDE, "/run"));
    /* a rule that shows /run lifts it */
    fresh_policy(f, CORDON_BASE_HOST);
    rule_abs(f, "/run", CORDON_ACCESS_READ);
    plan_ok(f);
    assert_int_equal(winner(f, "/run")->origin, ORIGIN_FLAG);
    /* a rule below /run re-shows just that path */
    if (stat("/run/lock", &st) == 0) {
        fresh_policy(f, CORDON_BASE_HOST);
        rule_abs(f, "/run/lock", CORDON_ACCESS_READ);
        plan_ok(f);
        assert_int_equal(winner(f, "/run")->access, CORDON_ACCESS_NONE);
        assert_true(resolved_shows(&f->r, "/run/lock"));
    }
    /* other bases do not show /run in the first place */
    fresh_policy(f, CORDON_BASE_SYSTEM);
    plan_ok(f);
    assert_null(winner(f, "/run"));

    /* $XDG_RUNTIME_DIR where the base shows it: outside /tmp (private), so in /var/tmp */
    char xdg[] = "/var/tmp/cordon-test-xdg.XXXXXX";
    if (!mkdtemp(xdg))
        skip();
    char real[4096];
    assert_non_null(realpath(xdg, real));
    f->host.runtime_dir = real;
    fresh_policy(f, CORDON_BASE_HOST);
    plan_ok(f);
    const rrule *x = winner(f, real);
    bool ok = x && x->origin == ORIGIN_PROTECT && x->access == CORDON_ACCESS_NONE;
    /* a rule that shows it lifts it */
    fresh_policy(f, CORDON_BASE_HOST);
    rule_abs(f, real, CORDON_ACCESS_READ);
    plan_ok(f);
    bool lifted = winner(f, real) && winner(f, real)->origin == ORIGIN_FLAG;
    f->host.runtime_dir = NULL;
    rmdir(xdg);
    assert_true(ok);
    assert_true(lifted);
}

/* ---- the home as a writable workspace ------------------------------------------------ */

static void test_home_workspace(void **state)
{
    fixture *f = *state;
    /* the home, a directory above it, and / */
    const char *const refused[] = {f->home, f->dir, "/"};
    for (size_t i = 0; i < 3; i++) {
        fresh_policy(f, CORDON_BASE_EMPTY);
        assert_int_equal(cordon_policy_set_workspace(f->p, refused[i], &f->err), 0);
        resolve_fails(f, "--no-workspace");
        assert_int_equal(f->err.stage, CORDON_STAGE_RESOLVE);
        assert_contains(f->err.message, "--workspace DIR");
        /* the current directory as the workspace */
        fresh_policy(f, CORDON_BASE_EMPTY);
        f->host.cwd = refused[i];
        resolve_fails(f, "(the current directory)");
        f->host.cwd = f->ws;
        /* --allow of exactly that directory: the caller means it */
        fresh_policy(f, CORDON_BASE_EMPTY);
        assert_int_equal(cordon_policy_set_workspace(f->p, refused[i], &f->err), 0);
        rule_abs(f, refused[i], CORDON_ACCESS_WRITE);
        resolve_ok(f);
        /* read-only, or no workspace: nothing writable to refuse */
        fresh_policy(f, CORDON_BASE_EMPTY);
        assert_int_equal(cordon_policy_set_workspace(f->p, refused[i], &f->err), 0);
        f->p->read_only = true;
        resolve_ok(f);
    }
    /* a settings file's rule does not lift it, nor a read-only one, nor a rule below */
    fresh_policy(f, CORDON_BASE_EMPTY);
    assert_int_equal(cordon_policy_set_workspace(f->p, f->home, &f->err), 0);
    policy_add_rule(f->p, "~", CORDON_ACCESS_WRITE, ORIGIN_SETTINGS, "s.json", 2, true);
    rule(f, "home", CORDON_ACCESS_READ);
    resolve_fails(f, "--allow ");
    /* a project below the home is fine */
    fresh_policy(f, CORDON_BASE_EMPTY);
    mk(f, "home/project");
    char *proj = fx(f, "home/project");
    assert_int_equal(cordon_policy_set_workspace(f->p, proj, &f->err), 0);
    resolve_ok(f);
    free(proj);
    /* no HOME: only / is refused */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->host.home = NULL;
    assert_int_equal(cordon_policy_set_workspace(f->p, f->dir, &f->err), 0);
    resolve_ok(f);
    f->host.home = f->home;
}

/* ---- start-up files -------------------------------------------------------------------- */

static const home_entry *startup(const char *path)
{
    for (size_t i = 0; i < n_startup_files; i++)
        if (strcmp(startup_files[i].path, path) == 0)
            return &startup_files[i];
    fail_msg("%s is not a start-up file", path);
    return NULL;
}

static void test_startup_files(void **state)
{
    fixture *f = *state;
    touch(f, "home/.bashrc");
    touch(f, "home/.gitconfig");
    mk(f, "home/.config");
    mk(f, "home/.ssh");
    touch(f, "home/.ssh/authorized_keys");
    assert_non_null(startup(".bashrc"));
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->no_workspace = true;
    rule(f, "home", CORDON_ACCESS_WRITE);
    resolve_ok(f);
    assert_int_equal(access_rel(f, "home"), CORDON_ACCESS_WRITE);
    assert_int_equal(access_rel(f, "home/.bashrc"), CORDON_ACCESS_READ);
    assert_int_equal(access_rel(f, "home/.gitconfig"), CORDON_ACCESS_READ);
    assert_int_equal(winner_rel(f, "home/.bashrc")->origin, ORIGIN_PROTECT);
    /* .ssh: a credential store first (hidden), so its authorized_keys is not writable */
    assert_true(hidden_by_cordon(f, "home/.ssh"));
    /* missing ones cannot be created (a deny of the missing name) */
    const rrule *zshrc = winner_rel(f, "home/.zshrc");
    assert_non_null(zshrc);
    assert_int_equal(zshrc->access, CORDON_ACCESS_NONE);
    assert_int_equal(zshrc->type, FT_MISSING);
    /* .config exists: .config/systemd is held; .local does not: .local/bin is not */
    assert_non_null(winner_rel(f, "home/.config/systemd"));
    /* ... and every other entry below .config, although the first one's pin made .config
     * a writable rule of cordon's own */
    assert_non_null(winner_rel(f, "home/.config/nvim"));
    assert_non_null(winner_rel(f, "home/.config/autostart"));
    assert_null(winner_rel(f, "home/.local/bin"));
    /* a rule granting write on exactly that path lifts it */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->no_workspace = true;
    rule(f, "home", CORDON_ACCESS_WRITE);
    rule(f, "home/.bashrc", CORDON_ACCESS_WRITE);
    resolve_ok(f);
    assert_int_equal(winner_rel(f, "home/.bashrc")->origin, ORIGIN_FLAG);
    assert_int_equal(access_rel(f, "home/.bashrc"), CORDON_ACCESS_WRITE);
    /* a read-only home: nothing to add */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->no_workspace = true;
    rule(f, "home", CORDON_ACCESS_READ);
    resolve_ok(f);
    assert_null(winner_rel(f, "home/.bashrc"));
    assert_null(winner_rel(f, "home/.zshrc"));
}

/* ---- pins ------------------------------------------------------------------------------- */

static bool pinned(const fixture *f, const char *rel)
{
    const rrule *x = winner_rel(f, rel);
    return x && x->pin && x->access == CORDON_ACCESS_WRITE;
}

static void test_pins(void **state)
{
    fixture *f = *state;
    mk(f, "ws/config");
    mk(f, "ws/config/deep");
    mk(f, "ws/config/deep/secrets");
    touch(f, "ws/config/deep/secrets/key");
    mk(f, "ws/other");
    static const cordon_access acc[] = {CORDON_ACCESS_NONE, CORDON_ACCESS_READ};
    for (size_t i = 0; i < 2; i++) {
        fresh_policy(f, CORDON_BASE_EMPTY);
        rule(f, "ws/config/deep/secrets", acc[i]);
        plan_ok(f);
        assert_true(pinned(f, "ws/config"));
        assert_true(pinned(f, "ws/config/deep"));
        assert_false(pinned(f, "ws/other"));
        assert_non_null(op_rel(f, PLAN_BIND, "ws/config"));
        assert_non_null(op_rel(f, PLAN_BIND, "ws/config/deep"));
    }
    /* a deny glob's matches, and --hide, the same */
    fresh_policy(f, CORDON_BASE_EMPTY);
    char *glob = fx(f, "ws/**/key");
    assert_int_equal(cordon_policy_add_deny_glob(f->p, glob, NULL, &f->err), 0);
    plan_ok(f);
    assert_true(pinned(f, "ws/config/deep/secrets"));
    assert_true(pinned(f, "ws/config"));
    free(glob);
    fresh_policy(f, CORDON_BASE_EMPTY);
    char *h = fx(f, "ws/config/deep/secrets/key");
    assert_int_equal(cordon_policy_hide(f->p, h, &f->err), 0);
    plan_ok(f);
    assert_true(pinned(f, "ws/config/deep"));
    free(h);
    /* in a read-only tree nothing can be renamed: no pins */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->read_only = true;
    rule(f, "ws/config/deep/secrets", CORDON_ACCESS_NONE);
    plan_ok(f);
    assert_false(pinned(f, "ws/config"));
    /* directly below the writable root: the root is a mount already, nothing to pin */
    fresh_policy(f, CORDON_BASE_EMPTY);
    rule(f, "ws/config", CORDON_ACCESS_NONE);
    plan_ok(f);
    for (size_t i = 0; i < f->r.n_rules; i++)
        assert_false(f->r.rules[i].pin);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_stores_base_system), T(test_hide_paths),    T(test_run_hidden),
        T(test_home_workspace),     T(test_startup_files), T(test_pins),
    };
#undef T
    return cmocka_run_group_tests_name("hide", tests, NULL, NULL);
}
