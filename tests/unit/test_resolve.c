// SPDX-License-Identifier: Apache-2.0
/* Unit tests for rule resolution (src/policy/resolve.c and canon.c): expansion of
 * settings syntax, the base and rules on "/", resolution of rule paths on the host the
 * way the kernel does it, and the winner at each path.
 *
 * Fixtures live in a fresh mkdtemp() directory (canonicalised, so that the expected
 * paths do not depend on symlinks above it) and are removed afterwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/canon.h"
#include "policy/policy.h"
#include "policy/protect.h"
#include "policy/resolve.h"
#include "util/path.h"
#include "util/strv.h"

#include "fixture.h"

/* ---- fixture helpers (the rest in fixture.h) ------------------------------------- */

static int setup(void **state)
{
    return fixture_setup(state, "resolve", FX_WS | FX_HOME | FX_POLICY);
}

static void resolve_fails(fixture *f, cordon_stage stage)
{
    if (f->have_r)
        resolved_free(&f->r);
    f->have_r = false;
    resolved r;
    if (resolve_policy(f->p, &f->host, &r, &f->err) == 0) {
        resolved_free(&r);
        fail_msg("resolve_policy succeeded, expected a failure");
    }
    assert_int_equal(f->err.stage, stage);
}

/* The winning rule exactly at DIR/rel (or the absolute path when rel starts with '/'). */
static const rrule *winner_at(const fixture *f, const char *path)
{
    const rrule *w = NULL;
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *x = &f->r.rules[i];
        if (strcmp(x->path, path) != 0 || x->shadowed)
            continue;
        if (w)
            fail_msg("two winners at %s", path);
        w = x;
    }
    return w;
}

static size_t count_at(const fixture *f, const char *path)
{
    size_t n = 0;
    for (size_t i = 0; i < f->r.n_rules; i++)
        n += strcmp(f->r.rules[i].path, path) == 0;
    return n;
}

/* Rules the policy asked for (flags, settings, workspace, base): every rule except those
 * cordon adds by itself to protect metadata atop writable paths (ORIGIN_PROTECT). */
static size_t n_user_rules(const fixture *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->r.n_rules; i++)
        n += f->r.rules[i].origin != ORIGIN_PROTECT;
    return n;
}

static size_t n_protect_rules(const fixture *f)
{
    return f->r.n_rules - n_user_rules(f);
}

/* The i-th rule (in sorted order) that is not a protect rule. */
static const rrule *user_rule(const fixture *f, size_t k)
{
    for (size_t i = 0; i < f->r.n_rules; i++)
        if (f->r.rules[i].origin != ORIGIN_PROTECT && k-- == 0)
            return &f->r.rules[i];
    fail_msg("fewer than %zu user rules", k + 1);
    return NULL;
}

/* Atop the writable directory `root` (absolute), with no .git and none of the default
 * names present: .cordon, .codex and .agents are held missing (hidden), by cordon. */
static void assert_default_names_held(const fixture *f, const char *root)
{
    for (size_t i = 0; i < protect_n_default_names; i++) {
        char *p = path_join(root, protect_default_names[i]);
        const rrule *x = winner_at(f, p);
        if (!x)
            fail_msg("%s is not protected", p);
        assert_int_equal(x->origin, ORIGIN_PROTECT);
        assert_int_equal(x->access, CORDON_ACCESS_NONE);
        assert_int_equal(x->type, FT_MISSING);
        assert_string_equal(x->first_missing, p);
        assert_int_equal(count_at(f, p), 1);
        free(p);
    }
}

static const rlink *link_at(const fixture *f, const char *path)
{
    for (size_t i = 0; i < f->r.n_links; i++)
        if (strcmp(f->r.links[i].path, path) == 0)
            return &f->r.links[i];
    return NULL;
}

/* The access resolved_lookup gives at DIR/rel; -1 when no rule covers it. */
static int lookup_rel(const fixture *f, const char *rel)
{
    char *p = fx(f, rel);
    const rrule *x = resolved_lookup(&f->r, p);
    free(p);
    return x ? (int)x->access : -1;
}

/* The single rule whose `given` is DIR/rel. */
static const rrule *given_rel(const fixture *f, const char *rel)
{
    char *g = xasprintf("%s/%s", f->dir, rel);
    const rrule *w = NULL;
    for (size_t i = 0; i < f->r.n_rules; i++)
        if (strcmp(f->r.rules[i].given, g) == 0)
            w = &f->r.rules[i];
    if (!w)
        fail_msg("no rule given as %s", g);
    free(g);
    return w;
}

static void assert_path_rel(const fixture *f, const char *got, const char *rel)
{
    char *want = fx(f, rel);
    if (!got || strcmp(got, want) != 0) {
        char msg[PATH_MAX * 2 + 64];
        snprintf(msg, sizeof msg, "got \"%s\", expected \"%s\"", got ? got : "(null)", want);
        free(want);
        fail_msg("%s", msg);
    }
    free(want);
}

static void assert_sorted(const fixture *f)
{
    for (size_t i = 1; i < f->r.n_rules; i++) {
        const rrule *a = &f->r.rules[i - 1], *b = &f->r.rules[i];
        int c = path_cmp(a->path, b->path);
        assert_true(c <= 0);
        if (c == 0) {
            /* the winner first, the rest shadowed, by decreasing precedence */
            assert_true(access_rank(a->access) >= access_rank(b->access));
            assert_true(b->shadowed);
        } else {
            assert_false(b->shadowed);
        }
    }
    if (f->r.n_rules)
        assert_false(f->r.rules[0].shadowed);
}

/* ---- precedence ----------------------------------------------------------------- */

static void test_access_rank(void **state)
{
    (void)state;
    assert_true(access_rank(CORDON_ACCESS_NONE) > access_rank(CORDON_ACCESS_WRITE));
    assert_true(access_rank(CORDON_ACCESS_WRITE) > access_rank(CORDON_ACCESS_READ));
    assert_true(access_rank(CORDON_ACCESS_READ) > 0);
}

static void nested_setup(fixture *f)
{
    mk(f, "repo");
    mk(f, "repo/a");
    mk(f, "repo/a/b");
    mk(f, "repo/x");
    assert_int_equal(cordon_policy_set_no_workspace(f->p, true, &f->err), 0);
}

static void check_nested(fixture *f)
{
    assert_int_equal(lookup_rel(f, "repo"), CORDON_ACCESS_WRITE);
    assert_int_equal(lookup_rel(f, "repo/x"), CORDON_ACCESS_WRITE);
    assert_int_equal(lookup_rel(f, "repo/x/y/z"), CORDON_ACCESS_WRITE);
    assert_int_equal(lookup_rel(f, "repo/a"), CORDON_ACCESS_NONE);
    assert_int_equal(lookup_rel(f, "repo/a/x"), CORDON_ACCESS_NONE);
    assert_int_equal(lookup_rel(f, "repo/a/bb"), CORDON_ACCESS_NONE); /* not below a/b */
    assert_int_equal(lookup_rel(f, "repo/a/b"), CORDON_ACCESS_WRITE);
    assert_int_equal(lookup_rel(f, "repo/a/b/x"), CORDON_ACCESS_WRITE);
    assert_int_equal(lookup_rel(f, "repo-other"), -1);
    assert_int_equal(lookup_rel(f, "repox"), -1);
    assert_null(resolved_lookup(&f->r, f->dir));
    assert_null(resolved_lookup(&f->r, "/"));
    /* the lookup returns the rule itself */
    char *b = fx(f, "repo/a/b");
    char *bx = fx(f, "repo/a/b/x");
    assert_string_equal(resolved_lookup(&f->r, bx)->path, b);
    free(b);
    free(bx);
    assert_sorted(f);
}

/* --allow /repo --deny /repo/a --allow /repo/a/b */
static void test_nested_allow_deny_allow(void **state)
{
    fixture *f = *state;
    nested_setup(f);
    rule(f, "repo", CORDON_ACCESS_WRITE);
    rule(f, "repo/a", CORDON_ACCESS_NONE);
    rule(f, "repo/a/b", CORDON_ACCESS_WRITE);
    resolve_ok(f);
    assert_int_equal(n_user_rules(f), 3);
    check_nested(f);
    /* sorted parent first */
    assert_path_rel(f, f->r.rules[0].path, "repo");
    assert_path_rel(f, user_rule(f, 0)->path, "repo");
    assert_path_rel(f, user_rule(f, 1)->path, "repo/a");
    assert_path_rel(f, user_rule(f, 2)->path, "repo/a/b");
    /* both writable directories get the default names held; nothing in the hidden one */
    char *repo = fx(f, "repo"), *b = fx(f, "repo/a/b");
    assert_default_names_held(f, repo);
    assert_default_names_held(f, b);
    assert_int_equal(n_protect_rules(f), 2 * protect_n_default_names);
    assert_int_equal(lookup_rel(f, "repo/.codex"), CORDON_ACCESS_NONE);
    assert_int_equal(lookup_rel(f, "repo/a/.codex"), CORDON_ACCESS_NONE); /* the deny */
    free(repo);
    free(b);
}

/* The order the rules are given in does not matter: specificity decides. */
static void test_nested_any_order(void **state)
{
    fixture *f = *state;
    nested_setup(f);
    rule(f, "repo/a/b", CORDON_ACCESS_WRITE);
    rule(f, "repo/a", CORDON_ACCESS_NONE);
    rule(f, "repo", CORDON_ACCESS_WRITE);
    resolve_ok(f);
    check_nested(f);
}

/* At equal path, deny > write > read, whatever the order given. */
static void test_conflict_at_equal_path(void **state)
{
    fixture *f = *state;
    static const cordon_access perms[6][3] = {
        {CORDON_ACCESS_READ, CORDON_ACCESS_WRITE, CORDON_ACCESS_NONE},
        {CORDON_ACCESS_READ, CORDON_ACCESS_NONE, CORDON_ACCESS_WRITE},
        {CORDON_ACCESS_WRITE, CORDON_ACCESS_READ, CORDON_ACCESS_NONE},
        {CORDON_ACCESS_WRITE, CORDON_ACCESS_NONE, CORDON_ACCESS_READ},
        {CORDON_ACCESS_NONE, CORDON_ACCESS_READ, CORDON_ACCESS_WRITE},
        {CORDON_ACCESS_NONE, CORDON_ACCESS_WRITE, CORDON_ACCESS_READ},
    };
    mk(f, "d");
    char *d = fx(f, "d");
    char *dx = fx(f, "d/x");
    assert_int_equal(cordon_policy_set_no_workspace(f->p, true, &f->err), 0);
    for (size_t k = 0; k < 6; k++) {
        for (int n = 2; n <= 3; n++) {
            cordon_policy_free(f->p);
            f->p = cordon_policy_new();
            f->p->base = CORDON_BASE_EMPTY;
            f->p->no_workspace = true;
            cordon_access best = CORDON_ACCESS_READ;
            for (int i = 0; i < n; i++) {
                rule(f, "d", perms[k][i]);
                if (access_rank(perms[k][i]) > access_rank(best))
                    best = perms[k][i];
            }
            resolve_ok(f);
            assert_int_equal(n_user_rules(f), n);
            /* metadata is protected atop d only when d ends up writable */
            assert_int_equal(n_protect_rules(f), best == CORDON_ACCESS_WRITE ? protect_n_default_names : 0);
            if (best == CORDON_ACCESS_WRITE)
                assert_default_names_held(f, d);
            const rrule *w = winner_at(f, d);
            assert_non_null(w);
            assert_int_equal(w->access, best);
            assert_int_equal(resolved_lookup(&f->r, dx)->access, best);
            assert_ptr_equal(resolved_lookup(&f->r, d), w);
            assert_sorted(f);
        }
    }
    free(d);
    free(dx);
}

/* Two spellings of one path are one path: they conflict like identical rules. */
static void test_conflict_across_spellings(void **state)
{
    fixture *f = *state;
    mk(f, "d");
    ln(f, "d", "alias");
    f->p->no_workspace = true;
    rule(f, "alias/", CORDON_ACCESS_NONE);
    rule(f, "d/.", CORDON_ACCESS_WRITE);
    rule(f, "d/../d", CORDON_ACCESS_READ);
    resolve_ok(f);
    char *d = fx(f, "d");
    assert_int_equal(count_at(f, d), 3);
    assert_int_equal(winner_at(f, d)->access, CORDON_ACCESS_NONE);
    assert_non_null(winner_at(f, d)->symlink);
    free(d);
}

static void test_duplicates(void **state)
{
    fixture *f = *state;
    mk(f, "d");
    f->p->no_workspace = true;
    rule(f, "d", CORDON_ACCESS_WRITE);
    rule(f, "d", CORDON_ACCESS_WRITE);
    resolve_ok(f);
    assert_int_equal(n_user_rules(f), 2);
    char *d = fx(f, "d");
    assert_int_equal(count_at(f, d), 2);
    /* protected once, not once per duplicate */
    assert_int_equal(n_protect_rules(f), protect_n_default_names);
    assert_default_names_held(f, d);
    assert_non_null(winner_at(f, d)); /* exactly one winner (winner_at fails on two) */
    assert_true(f->r.rules[0].shadowed != f->r.rules[1].shadowed);
    assert_false(f->r.rules[0].shadowed);
    assert_int_equal(lookup_rel(f, "d/y"), CORDON_ACCESS_WRITE);
    free(d);
}

/* A rule on the workspace itself conflicts with the workspace rule. */
static void test_deny_workspace_itself(void **state)
{
    fixture *f = *state;
    rule(f, "ws", CORDON_ACCESS_NONE);
    resolve_ok(f);
    assert_int_equal(count_at(f, f->ws), 2);
    const rrule *w = winner_at(f, f->ws);
    assert_int_equal(w->access, CORDON_ACCESS_NONE);
    assert_int_equal(w->origin, ORIGIN_FLAG);
}

/* ---- spelling: trailing slashes, ".", ".." ------------------------------------- */

static void test_dots_and_slashes(void **state)
{
    fixture *f = *state;
    mk(f, "repo");
    mk(f, "repo/a");
    mk(f, "repo/b");
    f->p->no_workspace = true;
    rule(f, "repo/a/../b/", CORDON_ACCESS_READ);
    rule(f, "repo//b/.", CORDON_ACCESS_READ);
    rule(f, "repo/./b//", CORDON_ACCESS_READ);
    rule(f, "repo/a/../../repo/b", CORDON_ACCESS_READ);
    resolve_ok(f);
    assert_int_equal(f->r.n_rules, 4);
    struct stat st;
    char *b = fx(f, "repo/b");
    assert_int_equal(stat(b, &st), 0);
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *x = &f->r.rules[i];
        assert_string_equal(x->path, b);
        assert_int_equal(x->type, FT_DIR);
        assert_null(x->symlink);
        assert_true(x->dev == st.st_dev && x->ino == st.st_ino);
    }
    /* given keeps the spelling */
    assert_path_rel(f, given_rel(f, "repo/a/../b/")->given, "repo/a/../b/");
    free(b);
}

/* ".." above the root stays at the root, as in the kernel. */
static void test_dotdot_at_root(void **state)
{
    fixture *f = *state;
    canon c;
    assert_int_equal(canon_resolve("/../../usr/./", &c, &f->err), 0);
    assert_string_equal(c.path, "/usr");
    assert_int_equal(c.type, FT_DIR);
    canon_free(&c);
    assert_int_equal(canon_resolve("/", &c, &f->err), 0);
    assert_string_equal(c.path, "/");
    assert_int_equal(c.type, FT_DIR);
    assert_null(c.symlink);
    canon_free(&c);
    assert_int_equal(canon_resolve("relative/path", &c, &f->err), -1);
    assert_int_equal(f->err.stage, CORDON_STAGE_RESOLVE);
    assert_null(c.path);
}

/* ".." after a symlink goes to the parent of what the link names, not lexically back. */
static void test_dotdot_after_symlink(void **state)
{
    fixture *f = *state;
    mk(f, "real");
    mk(f, "real/sub");
    mk(f, "real/x");
    mk(f, "x"); /* the lexical answer exists too, so a lexical resolver would "work" */
    char *abs_target = fx(f, "real/sub");
    ln(f, abs_target, "abs");
    ln(f, "real/sub", "rel");
    free(abs_target);
    f->p->no_workspace = true;
    rule(f, "abs/../x", CORDON_ACCESS_READ);
    rule(f, "rel/../x/", CORDON_ACCESS_WRITE);
    rule(f, "abs/..", CORDON_ACCESS_NONE);
    resolve_ok(f);
    const rrule *a = given_rel(f, "abs/../x");
    assert_path_rel(f, a->path, "real/x");
    assert_path_rel(f, a->symlink, "abs");
    assert_int_equal(a->type, FT_DIR);
    const rrule *r = given_rel(f, "rel/../x/");
    assert_path_rel(f, r->path, "real/x");
    assert_path_rel(f, r->symlink, "rel");
    const rrule *d = given_rel(f, "abs/..");
    assert_path_rel(f, d->path, "real");
    /* nothing landed on the lexical DIR/x */
    char *x = fx(f, "x");
    assert_int_equal(count_at(f, x), 0);
    free(x);
}

/* ---- symlinked rule paths -------------------------------------------------------- */

static void test_symlink_rule_paths(void **state)
{
    fixture *f = *state;
    mk(f, "real");
    mk(f, "real/sub");
    touch(f, "real/sub/file");
    mk(f, "other");
    char *abs_target = fx(f, "real/sub");
    ln(f, abs_target, "abs");           /* absolute target */
    ln(f, "real/sub", "rel");           /* relative target */
    ln(f, "../other", "real/up");       /* relative target with ".." */
    ln(f, "rel", "chain");              /* a link to a link */
    ln(f, "real", "mid");               /* a link in the middle of a path */
    ln(f, "sub/file", "real/filelink"); /* a link to a file */
    f->p->no_workspace = true;
    rule(f, "abs", CORDON_ACCESS_READ);
    rule(f, "rel", CORDON_ACCESS_READ);
    rule(f, "real/up", CORDON_ACCESS_READ);
    rule(f, "chain", CORDON_ACCESS_READ);
    rule(f, "mid/sub/file", CORDON_ACCESS_NONE);
    rule(f, "real/filelink", CORDON_ACCESS_READ);
    rule(f, "real", CORDON_ACCESS_READ); /* writable, it would make real/up suspect */
    resolve_ok(f);

    struct stat sub, file;
    assert_int_equal(stat(abs_target, &sub), 0);
    char *filep = fx(f, "real/sub/file");
    assert_int_equal(stat(filep, &file), 0);
    free(filep);
    free(abs_target);

    const rrule *x = given_rel(f, "abs");
    assert_path_rel(f, x->path, "real/sub");
    assert_path_rel(f, x->symlink, "abs");
    assert_int_equal(x->type, FT_DIR);
    assert_true(x->dev == sub.st_dev && x->ino == sub.st_ino);

    x = given_rel(f, "rel");
    assert_path_rel(f, x->path, "real/sub");
    assert_path_rel(f, x->symlink, "rel");
    assert_true(x->dev == sub.st_dev && x->ino == sub.st_ino);

    x = given_rel(f, "real/up");
    assert_path_rel(f, x->path, "other");
    assert_path_rel(f, x->symlink, "real/up");

    x = given_rel(f, "chain");
    assert_path_rel(f, x->path, "real/sub");
    assert_path_rel(f, x->symlink, "chain"); /* the first one crossed */

    x = given_rel(f, "mid/sub/file");
    assert_path_rel(f, x->path, "real/sub/file");
    assert_path_rel(f, x->symlink, "mid");
    assert_int_equal(x->type, FT_FILE);
    assert_true(x->dev == file.st_dev && x->ino == file.st_ino);

    x = given_rel(f, "real/filelink");
    assert_path_rel(f, x->path, "real/sub/file");
    assert_int_equal(x->type, FT_FILE);

    x = given_rel(f, "real");
    assert_null(x->symlink);
    assert_int_equal(x->type, FT_DIR);

    /* "abs", "rel" and "chain" are one path; read + read: one winner */
    char *s = fx(f, "real/sub");
    assert_int_equal(count_at(f, s), 3);
    assert_non_null(winner_at(f, s));
    free(s);
    assert_sorted(f);
}

/* A link to a file, as the last component, is that file (e.g. a dotfile manager's
 * ~/.netrc -> dotfiles/netrc); with a trailing slash it is not a directory. */
static void test_symlink_to_file_last(void **state)
{
    fixture *f = *state;
    mk(f, "dotfiles");
    touch(f, "dotfiles/netrc");
    ln(f, "dotfiles/netrc", "netrc-rel");
    char *abs = fx(f, "dotfiles/netrc");
    ln(f, abs, "netrc-abs");
    struct stat st;
    assert_int_equal(stat(abs, &st), 0);
    static const char *const names[] = {"netrc-rel", "netrc-abs"};
    for (size_t i = 0; i < 2; i++) {
        canon c;
        char *p = fx(f, names[i]);
        assert_int_equal(canon_resolve(p, &c, &f->err), 0);
        assert_string_equal(c.path, abs);
        assert_int_equal(c.type, FT_FILE);
        assert_true(c.dev == st.st_dev && c.ino == st.st_ino);
        assert_string_equal(c.symlink, p);
        canon_free(&c);
        char *slash = xasprintf("%s/", p);
        assert_int_equal(canon_resolve(slash, &c, &f->err), 0);
        assert_int_equal(c.type, FT_MISSING);
        canon_free(&c);
        free(slash);
        free(p);
    }
    /* as a rule: hidden as a file, not a note about a missing path */
    f->p->no_workspace = true;
    rule(f, "netrc-rel", CORDON_ACCESS_NONE);
    resolve_ok(f);
    assert_int_equal(winner_at(f, abs)->type, FT_FILE);
    free(abs);
}

/* A link whose target does not exist resolves to the missing target. */
static void test_dangling_symlink(void **state)
{
    fixture *f = *state;
    ln(f, "nowhere/deeper", "dangling");
    f->p->no_workspace = true;
    rule(f, "dangling", CORDON_ACCESS_NONE);
    resolve_ok(f);
    const rrule *x = given_rel(f, "dangling");
    assert_path_rel(f, x->path, "nowhere/deeper");
    assert_path_rel(f, x->symlink, "dangling");
    assert_int_equal(x->type, FT_MISSING);
}

static void test_symlink_loop(void **state)
{
    fixture *f = *state;
    ln(f, "loop2", "loop1");
    ln(f, "loop1", "loop2");
    f->p->no_workspace = true;
    rule(f, "loop1", CORDON_ACCESS_READ);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    assert_int_equal(f->err.errnum, ELOOP);
    assert_contains(f->err.message, "--allow-ro");
    assert_contains(f->err.message, "loop1");
}

static void test_symlink_self_loop_inside_path(void **state)
{
    fixture *f = *state;
    ln(f, "self", "self");
    canon c;
    char *p = fx(f, "self/x/y");
    assert_int_equal(canon_resolve(p, &c, &f->err), -1);
    assert_int_equal(f->err.errnum, ELOOP);
    assert_null(c.path);
    free(p);
}

/* 40 links are followed; 41 are a loop. */
static void test_symlink_chain_limit(void **state)
{
    fixture *f = *state;
    mk(f, "end");
    char name[32], target[32];
    for (int i = 1; i <= 41; i++) {
        snprintf(name, sizeof name, "l%d", i);
        if (i == 1)
            snprintf(target, sizeof target, "end");
        else
            snprintf(target, sizeof target, "l%d", i - 1);
        ln(f, target, name);
    }
    canon c;
    char *p40 = fx(f, "l40");
    assert_int_equal(canon_resolve(p40, &c, &f->err), 0);
    assert_path_rel(f, c.path, "end");
    assert_path_rel(f, c.symlink, "l40");
    canon_free(&c);
    char *p41 = fx(f, "l41");
    assert_int_equal(canon_resolve(p41, &c, &f->err), -1);
    assert_int_equal(f->err.errnum, ELOOP);
    free(p40);
    free(p41);
}

/* ---- missing paths ---------------------------------------------------------------- */

static void test_missing_paths(void **state)
{
    fixture *f = *state;
    touch(f, "file");
    f->p->no_workspace = true;
    rule(f, "nope", CORDON_ACCESS_READ);
    rule(f, "nope/deeper/still", CORDON_ACCESS_WRITE);
    rule(f, "file/below", CORDON_ACCESS_NONE);
    rule(f, "file", CORDON_ACCESS_READ);
    resolve_ok(f);
    const rrule *x = given_rel(f, "nope");
    assert_path_rel(f, x->path, "nope");
    assert_int_equal(x->type, FT_MISSING);
    x = given_rel(f, "nope/deeper/still");
    assert_path_rel(f, x->path, "nope/deeper/still");
    assert_int_equal(x->type, FT_MISSING);
    assert_path_rel(f, x->first_missing, "nope");
    x = given_rel(f, "file/below");
    assert_path_rel(f, x->path, "file/below");
    assert_int_equal(x->type, FT_MISSING);
    x = given_rel(f, "file");
    assert_int_equal(x->type, FT_FILE);
    assert_int_equal(lookup_rel(f, "nope/deeper/still/z"), CORDON_ACCESS_WRITE);
}

/* ".." after a missing component, or after a file: the kernel answers ENOENT (ENOTDIR)
 * today and, once the component exists, whatever it turns out to be.  canon.c says the
 * result is only a guess, and every rule resting on one is refused. */
static void test_dotdot_after_missing_canon(void **state)
{
    fixture *f = *state;
    mk(f, "sub");
    touch(f, "sub/s.txt");
    touch(f, "file");
    static const char *const guesses[] = {"nope/../sub/s.txt", "nope/..", "nope/deeper/../still", "file/../sub",
                                          "sub/nope/x/../../s.txt"};
    for (size_t i = 0; i < sizeof guesses / sizeof *guesses; i++) {
        char *p = fx(f, guesses[i]);
        canon c;
        assert_int_equal(canon_resolve(p, &c, &f->err), 0);
        if (!c.dotdot_after_missing)
            fail_msg("%s: not flagged as a guess", guesses[i]);
        assert_non_null(c.first_missing);
        canon_free(&c);
        free(p);
    }
    /* the same spellings with every component present are exact */
    mk(f, "nope");
    mk(f, "sub/nope");
    mk(f, "sub/nope/x");
    static const char *const exact[] = {"nope/../sub/s.txt", "nope/..", "sub/nope/x/../../s.txt", "sub/../missing",
                                        "sub/missing"};
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
        char *p = fx(f, exact[i]);
        canon c;
        assert_int_equal(canon_resolve(p, &c, &f->err), 0);
        if (c.dotdot_after_missing)
            fail_msg("%s: flagged, but the kernel resolves it", exact[i]);
        canon_free(&c);
        free(p);
    }
    /* a symlink to nothing, then "..": the kernel stops at the link's missing target */
    ln(f, "gone/away", "dangling");
    char *p = fx(f, "dangling/../sub");
    canon c;
    assert_int_equal(canon_resolve(p, &c, &f->err), 0);
    assert_true(c.dotdot_after_missing);
    canon_free(&c);
    free(p);
}

static void test_dotdot_after_missing_refused(void **state)
{
    fixture *f = *state;
    mk(f, "sub");
    touch(f, "sub/s.txt");
    static const cordon_access acc[] = {CORDON_ACCESS_NONE, CORDON_ACCESS_READ, CORDON_ACCESS_WRITE};
    for (size_t i = 0; i < 3; i++) {
        fresh_policy(f, CORDON_BASE_EMPTY);
        rule(f, "nope/../sub/s.txt", acc[i]);
        resolve_fails(f, CORDON_STAGE_RESOLVE);
        assert_contains(f->err.message, "'..' follows");
        assert_contains(f->err.message, "/nope, which does not exist");
        assert_contains(f->err.message, "/sub/s.txt)"); /* the likely meaning, suggested */
    }
    /* the workspace, the working directory and HOME are path inputs too */
    fresh_policy(f, CORDON_BASE_EMPTY);
    char *ws = fx(f, "ws/nope/../../sub");
    assert_int_equal(cordon_policy_set_workspace(f->p, ws, &f->err), 0);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    assert_contains(f->err.message, "--workspace");
    free(ws);
    fresh_policy(f, CORDON_BASE_EMPTY);
    char *cwd = fx(f, "nope/../sub");
    assert_int_equal(cordon_policy_set_cwd(f->p, cwd, &f->err), 0);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    assert_contains(f->err.message, "--chdir");
    free(cwd);
    fresh_policy(f, CORDON_BASE_EMPTY);
    char *home = fx(f, "nope/../home");
    f->host.home = home;
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    assert_contains(f->err.message, "HOME");
    f->host.home = f->home;
    free(home);
    /* a settings file: named with its line, stage settings */
    fresh_policy(f, CORDON_BASE_EMPTY);
    char *doc = xasprintf("{\"sandbox\": {\n \"deniedPaths\": [\"%s/nope/../sub/s.txt\"]}}", f->dir);
    assert_int_equal(settings_load_buffer(f->p, "s.json", doc, strlen(doc), &f->err), 0);
    resolve_fails(f, CORDON_STAGE_SETTINGS);
    assert_contains(f->err.message, "s.json:2:");
    free(doc);
}

/* ---- workspace, read-only ---------------------------------------------------------- */

static void test_workspace_default_is_cwd(void **state)
{
    fixture *f = *state;
    resolve_ok(f);
    assert_string_equal(f->r.workspace, f->ws);
    assert_string_equal(f->r.cwd, f->ws);
    assert_int_equal(f->r.cwd_type, FT_DIR);
    assert_int_equal(n_user_rules(f), 1);
    assert_int_equal(n_protect_rules(f), protect_n_default_names);
    assert_default_names_held(f, f->ws);
    const rrule *w = winner_at(f, f->ws);
    assert_non_null(w);
    assert_int_equal(w->access, CORDON_ACCESS_WRITE);
    assert_int_equal(w->origin, ORIGIN_WORKSPACE);
    assert_int_equal(w->type, FT_DIR);
}

static void test_workspace_explicit(void **state)
{
    fixture *f = *state;
    mk(f, "proj");
    ln(f, "proj", "projlink");
    char *pl = fx(f, "projlink/");
    assert_int_equal(cordon_policy_set_workspace(f->p, pl, &f->err), 0);
    free(pl);
    resolve_ok(f);
    assert_path_rel(f, f->r.workspace, "proj");
    assert_string_equal(f->r.cwd, f->ws); /* the cwd is still the current directory */
    assert_int_equal(n_user_rules(f), 1);
    assert_int_equal(n_protect_rules(f), protect_n_default_names);
    char *proj = fx(f, "proj");
    assert_default_names_held(f, proj);
    free(proj);
    assert_path_rel(f, f->r.rules[0].path, "proj");
    assert_string_equal(f->r.rules[0].source, "workspace");
    assert_int_equal(f->r.rules[0].origin, ORIGIN_WORKSPACE);
    assert_null(winner_at(f, f->ws));
}

static void test_workspace_missing_is_an_error(void **state)
{
    fixture *f = *state;
    char *p = fx(f, "gone");
    assert_int_equal(cordon_policy_set_workspace(f->p, p, &f->err), 0);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    assert_contains(f->err.message, p);
    free(p);
    /* a file is not a workspace either */
    touch(f, "afile");
    p = fx(f, "afile");
    assert_int_equal(cordon_policy_set_workspace(f->p, p, &f->err), 0);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    assert_int_equal(f->err.errnum, ENOTDIR);
    free(p);
}

static void test_no_workspace(void **state)
{
    fixture *f = *state;
    mk(f, "d");
    assert_int_equal(cordon_policy_set_no_workspace(f->p, true, &f->err), 0);
    rule(f, "d", CORDON_ACCESS_READ);
    resolve_ok(f);
    assert_int_equal(f->r.n_rules, 1);
    for (size_t i = 0; i < f->r.n_rules; i++)
        assert_int_not_equal(f->r.rules[i].origin, ORIGIN_WORKSPACE);
    assert_int_equal(lookup_rel(f, "ws"), -1);
    assert_string_equal(f->r.cwd, f->ws);

    /* --no-workspace does not need the current directory to be a directory */
    char *gone = fx(f, "gone");
    f->host.cwd = gone;
    resolve_ok(f);
    assert_int_equal(f->r.cwd_type, FT_MISSING);
    free(gone);
    f->host.cwd = f->ws;

    /* --workspace after --no-workspace turns it back on */
    assert_int_equal(cordon_policy_set_workspace(f->p, f->ws, &f->err), 0);
    resolve_ok(f);
    assert_non_null(winner_at(f, f->ws));
}

static void test_read_only(void **state)
{
    fixture *f = *state;
    mk(f, "w");
    mk(f, "r");
    mk(f, "d");
    assert_int_equal(cordon_policy_set_read_only(f->p, true, &f->err), 0);
    rule(f, "w", CORDON_ACCESS_WRITE);
    rule(f, "r", CORDON_ACCESS_READ);
    rule(f, "d", CORDON_ACCESS_NONE);
    policy_add_rule(f->p, "sub", CORDON_ACCESS_WRITE, ORIGIN_SETTINGS, "s.json", 4, true);
    resolve_ok(f);
    assert_int_equal(winner_at(f, f->ws)->access, CORDON_ACCESS_READ);
    assert_int_equal(lookup_rel(f, "w/x"), CORDON_ACCESS_READ);
    assert_int_equal(lookup_rel(f, "r"), CORDON_ACCESS_READ);
    assert_int_equal(lookup_rel(f, "d"), CORDON_ACCESS_NONE);
    assert_int_equal(lookup_rel(f, "ws/sub"), CORDON_ACCESS_READ);
    for (size_t i = 0; i < f->r.n_rules; i++)
        assert_int_not_equal(f->r.rules[i].access, CORDON_ACCESS_WRITE);
}

/* ---- settings-style expansion ---------------------------------------------------- */

static const rrule *settings_rule(fixture *f, const char *path, int line)
{
    const rrule *w = NULL;
    for (size_t i = 0; i < f->r.n_rules; i++)
        if (f->r.rules[i].origin == ORIGIN_SETTINGS && f->r.rules[i].line == line)
            w = &f->r.rules[i];
    if (!w)
        fail_msg("no settings rule from line %d (%s)", line, path);
    assert_string_equal(w->source, "s.json");
    return w;
}

static void test_settings_expansion(void **state)
{
    fixture *f = *state;
    mk(f, "data");
    mk(f, "ws/sub"); /* "sub/.." below: only exact where sub exists */
    char *data = fx(f, "data");
    assert_int_equal(cordon_policy_set_data_root(f->p, data, &f->err), 0);
    policy_add_rule(f->p, "~/x", CORDON_ACCESS_WRITE, ORIGIN_SETTINGS, "s.json", 1, true);
    policy_add_rule(f->p, "~", CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 2, true);
    policy_add_rule(f->p, "<workspace>/x", CORDON_ACCESS_NONE, ORIGIN_SETTINGS, "s.json", 3, true);
    policy_add_rule(f->p, "<workspace>", CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 4, true);
    policy_add_rule(f->p, "<data-root>/x", CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 5, true);
    policy_add_rule(f->p, "<data-root>", CORDON_ACCESS_WRITE, ORIGIN_SETTINGS, "s.json", 6, true);
    policy_add_rule(f->p, "sub/dir", CORDON_ACCESS_WRITE, ORIGIN_SETTINGS, "s.json", 7, true);
    policy_add_rule(f->p, "./sub/../other", CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 8, true);
    policy_add_rule(f->p, "/abs/olute", CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 9, true);
    policy_add_rule(f->p, "~/.cache/pip", CORDON_ACCESS_WRITE, ORIGIN_SETTINGS, "s.json", 10, true);
    resolve_ok(f);
    assert_path_rel(f, settings_rule(f, "~/x", 1)->path, "home/x");
    assert_path_rel(f, settings_rule(f, "~/x", 1)->given, "home/x");
    assert_path_rel(f, settings_rule(f, "~", 2)->path, "home");
    assert_path_rel(f, settings_rule(f, "<workspace>/x", 3)->path, "ws/x");
    assert_path_rel(f, settings_rule(f, "<workspace>", 4)->path, "ws");
    assert_path_rel(f, settings_rule(f, "<data-root>/x", 5)->path, "data/x");
    assert_path_rel(f, settings_rule(f, "<data-root>", 6)->path, "data");
    assert_path_rel(f, settings_rule(f, "sub/dir", 7)->path, "ws/sub/dir");
    assert_path_rel(f, settings_rule(f, "./sub/../other", 8)->path, "ws/other");
    assert_string_equal(settings_rule(f, "/abs/olute", 9)->path, "/abs/olute");
    assert_path_rel(f, settings_rule(f, "~/.cache/pip", 10)->path, "home/.cache/pip");
    assert_int_equal(settings_rule(f, "<data-root>", 6)->type, FT_DIR);
    /* the workspace rule (write) beats the settings <workspace> rule (read) */
    assert_int_equal(winner_at(f, f->ws)->access, CORDON_ACCESS_WRITE);
    free(data);
}

/* <workspace> and relative paths follow --workspace, ~ follows the canonical HOME. */
static void test_settings_expansion_follows_workspace_and_home(void **state)
{
    fixture *f = *state;
    mk(f, "proj");
    mk(f, "realhome");
    ln(f, "realhome", "homelink");
    char *proj = fx(f, "proj");
    char *hl = fx(f, "homelink");
    assert_int_equal(cordon_policy_set_workspace(f->p, proj, &f->err), 0);
    f->host.home = hl;
    policy_add_rule(f->p, "<workspace>/a", CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 1, true);
    policy_add_rule(f->p, "b", CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 2, true);
    policy_add_rule(f->p, "~/c", CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 3, true);
    resolve_ok(f);
    assert_path_rel(f, settings_rule(f, "", 1)->path, "proj/a");
    assert_path_rel(f, settings_rule(f, "", 2)->path, "proj/b");
    assert_path_rel(f, settings_rule(f, "", 3)->path, "realhome/c");
    assert_path_rel(f, f->r.home, "realhome");
    assert_int_equal(f->r.home_type, FT_DIR);
    free(proj);
    free(hl);
}

static void expect_settings_error(fixture *f, const char *path, const char *needle)
{
    cordon_policy_free(f->p);
    f->p = cordon_policy_new();
    f->p->base = CORDON_BASE_EMPTY;
    policy_add_rule(f->p, path, CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 7, true);
    resolve_fails(f, CORDON_STAGE_SETTINGS);
    assert_contains(f->err.message, "s.json:7");
    assert_contains(f->err.message, path);
    assert_contains(f->err.message, needle);
}

static void test_settings_expansion_errors(void **state)
{
    fixture *f = *state;
    expect_settings_error(f, "~user", "~user");
    expect_settings_error(f, "~user/x", "~user");
    expect_settings_error(f, "~root", "~user");
    /* <data-root> without cordon_policy_set_data_root */
    expect_settings_error(f, "<data-root>/x", "no data root");
    assert_string_equal(f->err.option, "dataRoot");
    expect_settings_error(f, "<data-root>", "no data root");
    expect_settings_error(f, "<bogus>/x", "<workspace>");
    expect_settings_error(f, "<workspace>x", "unknown placeholder");
    /* ~ needs HOME */
    f->host.home = NULL;
    expect_settings_error(f, "~/x", "HOME");
    f->host.home = "relative/home";
    expect_settings_error(f, "~", "HOME");
    f->host.home = f->home;
}

/* Without expansion, settings syntax is just a (relative, hence refused) path. */
static void test_no_expansion_for_flags(void **state)
{
    fixture *f = *state;
    policy_add_rule(f->p, "~/x", CORDON_ACCESS_READ, ORIGIN_FLAG, "--allow-ro", 0, false);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    assert_contains(f->err.message, "~/x");
    assert_int_equal(cordon_policy_add_path(f->p, "rel", CORDON_ACCESS_READ, "--allow-ro", &f->err), -1);
    assert_int_equal(f->err.stage, CORDON_STAGE_USAGE);
}

/* A resolution failure in a settings rule names the file and line. */
static void test_settings_resolution_error_names_line(void **state)
{
    fixture *f = *state;
    ln(f, "me", "me");
    char *p = fx(f, "me");
    policy_add_rule(f->p, p, CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 12, true);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    assert_contains(f->err.message, "s.json:12");
    assert_contains(f->err.message, p);
    assert_int_equal(f->err.errnum, ELOOP);
    free(p);
}

/* ---- reserved paths ---------------------------------------------------------------- */

static void expect_reserved(fixture *f, const char *path, cordon_access a)
{
    cordon_policy_free(f->p);
    f->p = cordon_policy_new();
    f->p->base = CORDON_BASE_EMPTY;
    assert_int_equal(cordon_policy_add_path(f->p, path, a, "--allow", &f->err), 0);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    assert_contains(f->err.message, path);
    assert_contains(f->err.message, "cordon itself");
}

static void test_proc_and_dev_refused(void **state)
{
    fixture *f = *state;
    expect_reserved(f, "/proc", CORDON_ACCESS_READ);
    expect_reserved(f, "/proc", CORDON_ACCESS_NONE);
    expect_reserved(f, "/proc/", CORDON_ACCESS_WRITE);
    expect_reserved(f, "/proc/1", CORDON_ACCESS_READ);
    expect_reserved(f, "/proc/self/fd", CORDON_ACCESS_READ);
    expect_reserved(f, "/proc/sys/kernel", CORDON_ACCESS_READ);
    expect_reserved(f, "/dev", CORDON_ACCESS_READ);
    expect_reserved(f, "/dev/", CORDON_ACCESS_NONE);
    expect_reserved(f, "/usr/../dev", CORDON_ACCESS_READ);
    /* through a symlink */
    ln(f, "/proc", "procl");
    char *pl = fx(f, "procl");
    expect_reserved(f, pl, CORDON_ACCESS_READ);
    free(pl);
    /* settings rules too */
    cordon_policy_free(f->p);
    f->p = cordon_policy_new();
    f->p->base = CORDON_BASE_EMPTY;
    policy_add_rule(f->p, "/proc", CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 3, true);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    assert_contains(f->err.message, "s.json");
}

static void test_single_devices_and_lookalikes_allowed(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_add_path(f->p, "/dev/null", CORDON_ACCESS_READ, "--allow-ro", &f->err), 0);
    mk(f, "proc");
    mk(f, "dev");
    rule(f, "proc", CORDON_ACCESS_READ);
    rule(f, "dev", CORDON_ACCESS_READ);
    resolve_ok(f);
    assert_non_null(winner_at(f, "/dev/null"));
    assert_int_equal(winner_at(f, "/dev/null")->type, FT_OTHER);
}

/* ---- the base and rules on "/" --------------------------------------------------- */

static const rrule *rule_at(const fixture *f, const char *path)
{
    return winner_at(f, path);
}

static void test_rule_on_root_expands(void **state)
{
    fixture *f = *state;
    f->p->no_workspace = true;
    assert_int_equal(cordon_policy_add_path(f->p, "/", CORDON_ACCESS_READ, "--allow-ro", &f->err), 0);
    resolve_ok(f);
    assert_null(rule_at(f, "/"));
    assert_int_equal(count_at(f, "/"), 0);
    const rrule *usr = rule_at(f, "/usr");
    assert_non_null(usr);
    assert_int_equal(usr->access, CORDON_ACCESS_READ);
    assert_int_equal(usr->origin, ORIGIN_FLAG);
    assert_string_equal(usr->source, "--allow-ro");
    assert_int_equal(usr->type, FT_DIR);
    assert_int_equal(count_at(f, "/proc"), 0);
    assert_int_equal(count_at(f, "/dev"), 0);
    /* a rule on "/" shows /tmp (unlike the host base) */
    struct stat st;
    if (lstat("/tmp", &st) == 0 && S_ISDIR(st.st_mode))
        assert_non_null(rule_at(f, "/tmp"));
    /* top-level symlinks are recreated, not bound */
    if (lstat("/bin", &st) == 0 && S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink("/bin", target, sizeof target - 1);
        assert_true(n > 0);
        target[n] = '\0';
        const rlink *l = link_at(f, "/bin");
        assert_non_null(l);
        assert_string_equal(l->target, target);
        assert_string_equal(l->source, "--allow-ro");
        assert_int_equal(count_at(f, "/bin"), 0);
    }
    /* every rule is one level below "/" */
    for (size_t i = 0; i < f->r.n_rules; i++)
        assert_int_equal(path_depth(f->r.rules[i].path), 1);
    /* nothing else is lost: the fixture below /tmp (or wherever) is covered */
    assert_non_null(resolved_lookup(&f->r, f->ws));
    assert_sorted(f);
}

static void test_rule_on_root_keeps_deeper_rules(void **state)
{
    fixture *f = *state;
    f->p->no_workspace = true;
    mk(f, "secret");
    rule(f, "secret", CORDON_ACCESS_NONE);
    assert_int_equal(cordon_policy_add_path(f->p, "/", CORDON_ACCESS_WRITE, "--allow", &f->err), 0);
    assert_int_equal(cordon_policy_add_path(f->p, "/usr", CORDON_ACCESS_READ, "--allow-ro", &f->err), 0);
    resolve_ok(f);
    assert_int_equal(lookup_rel(f, "secret/x"), CORDON_ACCESS_NONE);
    assert_int_equal(resolved_lookup(&f->r, "/usr/bin")->access, CORDON_ACCESS_WRITE);
    assert_int_equal(count_at(f, "/usr"), 2);
    assert_int_equal(resolved_lookup(&f->r, "/etc/passwd")->access, CORDON_ACCESS_WRITE);
}

/* Read-only mode also applies to a write rule on "/". */
static void test_rule_on_root_read_only(void **state)
{
    fixture *f = *state;
    f->p->no_workspace = true;
    assert_int_equal(cordon_policy_set_read_only(f->p, true, &f->err), 0);
    assert_int_equal(cordon_policy_add_path(f->p, "/", CORDON_ACCESS_WRITE, "--allow", &f->err), 0);
    resolve_ok(f);
    assert_true(f->r.n_rules > 0);
    for (size_t i = 0; i < f->r.n_rules; i++)
        assert_int_equal(f->r.rules[i].access, CORDON_ACCESS_READ);
}

static void test_base_system(void **state)
{
    fixture *f = *state;
    f->p->base = CORDON_BASE_SYSTEM;
    resolve_ok(f);
    const rrule *usr = rule_at(f, "/usr");
    assert_non_null(usr);
    assert_int_equal(usr->access, CORDON_ACCESS_READ);
    assert_int_equal(usr->origin, ORIGIN_BASE);
    assert_string_equal(usr->source, "base system");
    static const char *const dirs[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        struct stat st;
        if (lstat(dirs[i], &st) < 0) {
            assert_int_equal(count_at(f, dirs[i]), 0);
            assert_null(link_at(f, dirs[i]));
        } else if (S_ISLNK(st.st_mode)) {
            char target[PATH_MAX];
            ssize_t n = readlink(dirs[i], target, sizeof target - 1);
            assert_true(n > 0);
            target[n] = '\0';
            const rlink *l = link_at(f, dirs[i]);
            if (!l)
                fail_msg("no link for %s -> %s", dirs[i], target);
            assert_string_equal(l->target, target);
            assert_string_equal(l->source, "base system");
            assert_int_equal(count_at(f, dirs[i]), 0);
        } else if (S_ISDIR(st.st_mode)) {
            const rrule *x = rule_at(f, dirs[i]);
            if (!x)
                fail_msg("no base rule for %s", dirs[i]);
            assert_int_equal(x->access, CORDON_ACCESS_READ);
            assert_int_equal(x->origin, ORIGIN_BASE);
        }
    }
    /* nothing else of the host */
    assert_int_equal(count_at(f, "/home"), 0);
    assert_int_equal(count_at(f, "/var"), 0);
    assert_int_equal(count_at(f, "/root"), 0);
    assert_int_equal(count_at(f, "/tmp"), 0);
    for (size_t i = 0; i < f->r.n_rules; i++)
        if (f->r.rules[i].origin == ORIGIN_BASE)
            assert_int_equal(f->r.rules[i].access, CORDON_ACCESS_READ);
    /* the workspace is still there, writable */
    assert_int_equal(winner_at(f, f->ws)->access, CORDON_ACCESS_WRITE);
}

/* The base stays read: read-only mode and the base's rank do not interfere. */
static void test_base_system_read_only_mode(void **state)
{
    fixture *f = *state;
    f->p->base = CORDON_BASE_SYSTEM;
    assert_int_equal(cordon_policy_set_read_only(f->p, true, &f->err), 0);
    resolve_ok(f);
    assert_int_equal(rule_at(f, "/usr")->access, CORDON_ACCESS_READ);
    assert_int_equal(winner_at(f, f->ws)->access, CORDON_ACCESS_READ);
}

static void test_base_empty(void **state)
{
    fixture *f = *state;
    f->p->base = CORDON_BASE_EMPTY;
    resolve_ok(f);
    for (size_t i = 0; i < f->r.n_rules; i++)
        assert_int_not_equal(f->r.rules[i].origin, ORIGIN_BASE);
    assert_int_equal(f->r.n_links, 0);
    assert_int_equal(n_user_rules(f), 1);                          /* the workspace */
    assert_int_equal(n_protect_rules(f), protect_n_default_names); /* and what cordon protects atop it */
    assert_default_names_held(f, f->ws);
    assert_null(resolved_lookup(&f->r, "/usr/bin"));

    f->p->no_workspace = true;
    resolve_ok(f);
    assert_int_equal(f->r.n_rules, 0);
    assert_null(resolved_lookup(&f->r, f->ws));
}

/* --base host, when a private mount point has to be made at the top of the root (here
 * the private HOME at /.cordon/home, since there is no HOME): one rule per entry. */
static void test_base_host(void **state)
{
    fixture *f = *state;
    f->p->base = CORDON_BASE_HOST;
    f->host.home = NULL;
    resolve_ok(f);
    assert_int_equal(count_at(f, "/"), 0);
    const rrule *usr = rule_at(f, "/usr");
    assert_non_null(usr);
    assert_int_equal(usr->origin, ORIGIN_BASE);
    assert_string_equal(usr->source, "base host");
    assert_int_equal(count_at(f, "/proc"), 0);
    assert_int_equal(count_at(f, "/dev"), 0);
    assert_int_equal(count_at(f, "/tmp"), 0); /* private unless a rule names it */
    for (size_t i = 0; i < f->r.n_rules; i++)
        if (f->r.rules[i].origin == ORIGIN_BASE) {
            assert_int_equal(f->r.rules[i].access, CORDON_ACCESS_READ);
            assert_int_equal(path_depth(f->r.rules[i].path), 1);
        }
}

/* --base host, when every private mount point exists on the host (/tmp, /dev, /proc
 * and the home directory): the host root as one read-only rule on "/". */
static void test_base_host_whole_root(void **state)
{
    fixture *f = *state;
    struct stat st;
    /* Every host cordon supports has them (and cmocka's skip() would count as a failure
     * under meson's TAP parser). */
    if (stat("/tmp", &st) < 0 || stat("/dev", &st) < 0 || stat("/proc", &st) < 0)
        fail_msg("this test needs /tmp, /dev and /proc on the host");
    f->p->base = CORDON_BASE_HOST;
    f->host.home = "/usr"; /* any existing directory outside /tmp that no rule names */
    resolve_ok(f);
    const rrule *root = rule_at(f, "/");
    assert_non_null(root);
    assert_int_equal(root->access, CORDON_ACCESS_READ);
    assert_int_equal(root->origin, ORIGIN_BASE);
    assert_int_equal(root->type, FT_DIR);
    assert_int_equal(stat("/", &st), 0);
    assert_true(root->dev == st.st_dev && root->ino == st.st_ino);
    assert_int_equal(count_at(f, "/usr"), 0);
    assert_int_equal(resolved_lookup(&f->r, "/usr/bin")->access, CORDON_ACCESS_READ);
    assert_int_equal(resolved_lookup(&f->r, f->ws)->access, CORDON_ACCESS_WRITE);
    assert_ptr_equal(f->r.rules, root); /* "/" sorts first */

    /* a rule covering /tmp needs /.cordon/tmp: back to one rule per entry */
    assert_int_equal(cordon_policy_add_path(f->p, "/tmp", CORDON_ACCESS_READ, "--allow-ro", &f->err), 0);
    resolve_ok(f);
    assert_int_equal(count_at(f, "/"), 0);
    assert_non_null(rule_at(f, "/usr"));
}

static void test_rule_covers_and_private_home(void **state)
{
    fixture *f = *state;
    f->p->base = CORDON_BASE_SYSTEM;
    f->host.home = "/nonexistent-cordon-unit/home";
    resolve_ok(f);
    /* the base does not count */
    assert_false(resolved_rule_covers(&f->r, "/usr/bin"));
    assert_true(resolved_rule_covers(&f->r, f->ws));
    char *below = fx(f, "ws/a/b");
    assert_true(resolved_rule_covers(&f->r, below));
    free(below);
    char *beside = fx(f, "wsx");
    assert_false(resolved_rule_covers(&f->r, beside));
    free(beside);
    assert_false(resolved_rule_covers(&f->r, "/tmp"));
    assert_true(private_home_at(&f->r));

    static const char *const not_here[] = {"/tmp/h", "/tmp", "/proc/h", "/dev/h", "/"};
    for (size_t i = 0; i < sizeof not_here / sizeof *not_here; i++) {
        f->host.home = not_here[i];
        resolve_ok(f);
        if (private_home_at(&f->r))
            fail_msg("private HOME at %s", not_here[i]);
    }
    f->host.home = NULL;
    resolve_ok(f);
    assert_false(private_home_at(&f->r));
    /* a home that a rule shows (or a directory above it) */
    f->host.home = "/nonexistent-cordon-unit/home";
    assert_int_equal(
        cordon_policy_add_path(f->p, "/nonexistent-cordon-unit", CORDON_ACCESS_READ, "--allow-ro", &f->err), 0);
    resolve_ok(f);
    assert_false(private_home_at(&f->r));
    f->host.home = f->home;
}

/* ---- symlinks inside writable paths ---------------------------------------------- */

/* A rule crossing a symlink inside a writable path: the command could have planted it. */
static void test_planted_symlink_fails_closed(void **state)
{
    fixture *f = *state;
    mk(f, "empty");
    ln(f, "../empty", "ws/secrets");
    rule(f, "ws/secrets", CORDON_ACCESS_NONE);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    char *link = fx(f, "ws/secrets");
    char *real = fx(f, "empty");
    assert_contains(f->err.message, link);
    assert_contains(f->err.message, f->ws);
    assert_contains(f->err.message, real);
    assert_contains(f->err.message, "--deny");

    /* from a settings file: file and line */
    cordon_policy_free(f->p);
    f->p = cordon_policy_new();
    f->p->base = CORDON_BASE_EMPTY;
    policy_add_rule(f->p, "<workspace>/secrets/x", CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 5, true);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    assert_contains(f->err.message, "s.json:5");
    assert_contains(f->err.message, link);

    /* inside a writable --allow, not only the workspace */
    cordon_policy_free(f->p);
    f->p = cordon_policy_new();
    f->p->base = CORDON_BASE_EMPTY;
    f->p->no_workspace = true;
    mk(f, "w");
    ln(f, "/usr", "w/l");
    rule(f, "w", CORDON_ACCESS_WRITE);
    rule(f, "w/l/bin", CORDON_ACCESS_READ);
    resolve_fails(f, CORDON_STAGE_RESOLVE);
    free(link);
    link = fx(f, "w/l");
    assert_contains(f->err.message, link);
    free(link);
    free(real);
}

/* Symlinks that are not inside a writable path are followed as the kernel would. */
static void test_symlink_outside_writable_is_followed(void **state)
{
    fixture *f = *state;
    mk(f, "ro");
    mk(f, "target");
    ln(f, "../target", "ro/l");
    rule(f, "ro", CORDON_ACCESS_READ);
    rule(f, "ro/l", CORDON_ACCESS_NONE);
    /* the writable path itself named through a symlink outside it */
    ln(f, "ws", "wslink");
    rule(f, "wslink", CORDON_ACCESS_WRITE);
    resolve_ok(f);
    assert_path_rel(f, given_rel(f, "ro/l")->path, "target");
    assert_int_equal(count_at(f, f->ws), 2);
}

/* The check must look at every symlink the path crosses, not only the first: here the
 * rule enters the writable workspace through a harmless link outside it, then crosses
 * a link planted inside the workspace. */
static void test_planted_symlink_after_another_symlink(void **state)
{
    fixture *f = *state;
    mk(f, "empty");
    ln(f, "../empty", "ws/secrets"); /* planted by an earlier run */
    ln(f, "ws", "wslink");           /* the user's own way to the repository */
    rule(f, "wslink/secrets", CORDON_ACCESS_NONE);
    resolved r;
    int rc = resolve_policy(f->p, &f->host, &r, &f->err);
    if (rc == 0) {
        char msg[PATH_MAX * 2 + 256];
        const rrule *x = NULL;
        for (size_t i = 0; i < r.n_rules; i++)
            if (r.rules[i].origin == ORIGIN_FLAG)
                x = &r.rules[i];
        snprintf(msg, sizeof msg,
                 "--deny %s/wslink/secrets followed the symlink %s/ws/secrets planted in the "
                 "writable workspace and now hides %s instead (symlink recorded: %s)",
                 f->dir, f->dir, x ? x->path : "?", x && x->symlink ? x->symlink : "(none)");
        resolved_free(&r);
        fail_msg("%s", msg);
    }
    assert_int_equal(f->err.stage, CORDON_STAGE_RESOLVE);
    char *link = fx(f, "ws/secrets");
    assert_contains(f->err.message, link);
    free(link);
}

/* ---- HOME and the working directory ----------------------------------------------- */

static void test_home_and_cwd(void **state)
{
    fixture *f = *state;
    mk(f, "ws/sub");
    ln(f, "ws/sub", "sublink");
    char *sl = fx(f, "sublink");
    assert_int_equal(cordon_policy_set_cwd(f->p, sl, &f->err), 0);
    f->host.home = "/nonexistent-cordon-unit/home/";
    resolve_ok(f);
    assert_path_rel(f, f->r.cwd, "ws/sub");
    assert_int_equal(f->r.cwd_type, FT_DIR);
    assert_string_equal(f->r.home, "/nonexistent-cordon-unit/home");
    assert_int_equal(f->r.home_type, FT_MISSING);
    free(sl);

    /* no HOME, or a relative one: no home */
    f->host.home = NULL;
    resolve_ok(f);
    assert_null(f->r.home);
    f->host.home = "rel";
    resolve_ok(f);
    assert_null(f->r.home);
}

/* The longest rule at or above a path, by bisection over the sorted rules and a scan of
 * those added since: the same answer a scan of all of them gives. */
static void test_at_or_above(void **state)
{
    (void)state;
    rrule rules[] = {
        {.path = (char *)"/", .type = FT_DIR},
        {.path = (char *)"/a", .type = FT_DIR},
        {.path = (char *)"/a", .type = FT_DIR, .shadowed = true},
        {.path = (char *)"/a/b", .type = FT_MISSING},
        {.path = (char *)"/a/b/c", .type = FT_FILE},
        {.path = (char *)"/a-b", .type = FT_DIR},
        /* added after the sort */
        {.path = (char *)"/a/x", .type = FT_DIR},
        {.path = (char *)"/a", .type = FT_FILE},
    };
    resolved r = {.rules = rules, .n_rules = 8, .n_sorted = 6};
    assert_ptr_equal(resolved_at_or_above(&r, "/", false), &rules[0]);
    assert_ptr_equal(resolved_at_or_above(&r, "/z/y", false), &rules[0]);
    assert_ptr_equal(resolved_at_or_above(&r, "/a", false), &rules[1]); /* not the shadowed one */
    assert_ptr_equal(resolved_at_or_above(&r, "/a/b/c/d", false), &rules[4]);
    assert_ptr_equal(resolved_at_or_above(&r, "/a/b/d", false), &rules[1]); /* /a/b is missing */
    assert_ptr_equal(resolved_at_or_above(&r, "/a/b/d", true), &rules[3]);
    assert_ptr_equal(resolved_at_or_above(&r, "/a-b/q", false), &rules[5]);
    assert_ptr_equal(resolved_at_or_above(&r, "/a/x/y", false), &rules[6]); /* from the tail */
    assert_ptr_equal(resolved_lookup(&r, "/a/bb"), &rules[1]);
    r.n_sorted = 0; /* nothing sorted yet: all of it scanned */
    assert_ptr_equal(resolved_at_or_above(&r, "/a/b/c", false), &rules[4]);
    assert_ptr_equal(resolved_at_or_above(&r, "/a", false), &rules[1]);
    assert_null(resolved_at_or_above(&r, "relative", false));
    rules[0].shadowed = true;
    assert_null(resolved_at_or_above(&r, "/q", false));
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, fixture_teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_access_rank),
        cmocka_unit_test(test_at_or_above),
        T(test_nested_allow_deny_allow),
        T(test_nested_any_order),
        T(test_conflict_at_equal_path),
        T(test_conflict_across_spellings),
        T(test_duplicates),
        T(test_deny_workspace_itself),
        T(test_dots_and_slashes),
        T(test_dotdot_at_root),
        T(test_dotdot_after_symlink),
        T(test_symlink_rule_paths),
        T(test_symlink_to_file_last),
        T(test_dangling_symlink),
        T(test_symlink_loop),
        T(test_symlink_self_loop_inside_path),
        T(test_symlink_chain_limit),
        T(test_missing_paths),
        T(test_dotdot_after_missing_canon),
        T(test_dotdot_after_missing_refused),
        T(test_workspace_default_is_cwd),
        T(test_workspace_explicit),
        T(test_workspace_missing_is_an_error),
        T(test_no_workspace),
        T(test_read_only),
        T(test_settings_expansion),
        T(test_settings_expansion_follows_workspace_and_home),
        T(test_settings_expansion_errors),
        T(test_no_expansion_for_flags),
        T(test_settings_resolution_error_names_line),
        T(test_proc_and_dev_refused),
        T(test_single_devices_and_lookalikes_allowed),
        T(test_rule_on_root_expands),
        T(test_rule_on_root_keeps_deeper_rules),
        T(test_rule_on_root_read_only),
        T(test_base_system),
        T(test_base_system_read_only_mode),
        T(test_base_empty),
        T(test_base_host),
        T(test_base_host_whole_root),
        T(test_rule_covers_and_private_home),
        T(test_planted_symlink_fails_closed),
        T(test_symlink_outside_writable_is_followed),
        T(test_planted_symlink_after_another_symlink),
        T(test_home_and_cwd),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
