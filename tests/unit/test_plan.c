// SPDX-License-Identifier: Apache-2.0
/* Unit tests for the mount plan (src/plan/plan.c): the resolved policy compiled into an
 * ordered list of operations, private /tmp and HOME, redundant binds (a pinned one is
 * never dropped: protect.c pins the directories above what it holds, so that they
 * cannot be renamed away), the working directory check.
 *
 * Fixtures live in a fresh mkdtemp() directory (canonicalised) and are removed
 * afterwards; a few tests look at /usr and /etc of the host (a normal Debian). */
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

#include "plan/env.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "policy/resolve.h"
#include "util/path.h"
#include "util/strv.h"

#include "fixture.h"

/* A home path that is not below /tmp, not below the system base and does not exist:
 * the private HOME can be mounted right there. */
#define FAKE_HOME "/nonexistent-cordon-unit/home"

/* ---- fixture helpers (the rest in fixture.h) ------------------------------------- */

static int setup(void **state)
{
    if (fixture_setup(state, "plan", FX_WS | FX_POLICY) < 0)
        return -1;
    fixture *f = *state;
    f->host.home = FAKE_HOME;
    return 0;
}

static void check_invariants(const plan *pl);

static void build_ok(fixture *f)
{
    plan_ok(f);
    check_invariants(&f->pl);
}

static void build_fails(fixture *f)
{
    resolve_ok(f);
    plan pl;
    if (plan_build(&f->r, FX_INPUT(f), &pl, &f->err) == 0) {
        plan_free(&pl);
        fail_msg("plan_build succeeded, expected a failure");
    }
    assert_int_equal(f->err.stage, CORDON_STAGE_PLAN);
    /* a failed build leaves nothing to free */
    assert_null(pl.ops);
    assert_int_equal(pl.n_ops, 0);
}

/* Operations (other than notes) at exactly dest. */
static size_t ops_at(const plan *pl, const char *dest)
{
    size_t n = 0;
    for (size_t i = 0; i < pl->n_ops; i++)
        n += plan_op_mounts(&pl->ops[i]) && strcmp(pl->ops[i].dest, dest) == 0;
    return n;
}

/* Pinned binds in the plan. */
static size_t n_pins(const plan *pl)
{
    size_t n = 0;
    for (size_t i = 0; i < pl->n_ops; i++)
        n += pl->ops[i].kind == PLAN_BIND && pl->ops[i].pin;
    return n;
}

/* A pin at DIR/rel: a writable bind of the directory onto itself, kept although the
 * writable bind above it makes it redundant, holding DIR/holds. */
static const plan_op *assert_pin(const fixture *f, const char *rel, const char *holds)
{
    const plan_op *b = op_rel(f, PLAN_BIND, rel);
    char *p = fx(f, rel);
    if (!b->pin)
        fail_msg("%s is bound but not pinned (%s)", p, b->why);
    assert_false(b->read_only);
    assert_true(b->is_dir);
    assert_string_equal(b->src, p);
    struct stat st;
    assert_int_equal(stat(p, &st), 0);
    assert_true(b->dev == st.st_dev && b->ino == st.st_ino);
    char *h = fx(f, holds);
    char *why = xasprintf("pinned: holds %s", h);
    assert_string_equal(b->why, why);
    free(why);
    free(h);
    assert_int_equal(idx_rel(f, PLAN_NOTE, rel), -1); /* not dropped as redundant */
    assert_int_equal(ops_at(&f->pl, p), 1);
    free(p);
    return b;
}

/* Parents before children; every op has a dest and a why; binds have a source. */
static void check_invariants(const plan *pl)
{
    for (size_t i = 0; i < pl->n_ops; i++) {
        const plan_op *a = &pl->ops[i];
        assert_non_null(a->dest);
        assert_int_equal(a->dest[0], '/');
        assert_non_null(a->why);
        if (a->kind == PLAN_BIND || a->kind == PLAN_SYMLINK)
            assert_non_null(a->src);
        for (size_t j = i + 1; j < pl->n_ops; j++) {
            const plan_op *b = &pl->ops[j];
            if (strcmp(a->dest, b->dest) != 0 && path_has_prefix(a->dest, b->dest))
                fail_msg("%s %s (#%zu) comes before its parent %s %s (#%zu)", plan_kind_name(a->kind), a->dest, i,
                         plan_kind_name(b->kind), b->dest, j);
            assert_true(path_cmp(a->dest, b->dest) <= 0);
        }
    }
}

/* ---- order ------------------------------------------------------------------------- */

static void nested_rules(fixture *f, bool reverse)
{
    mk(f, "repo");
    mk(f, "repo/a");
    mk(f, "repo/a/b");
    if (reverse) {
        rule(f, "repo/a/b", CORDON_ACCESS_WRITE);
        rule(f, "repo/a", CORDON_ACCESS_NONE);
        rule(f, "repo", CORDON_ACCESS_WRITE);
    } else {
        rule(f, "repo", CORDON_ACCESS_WRITE);
        rule(f, "repo/a", CORDON_ACCESS_NONE);
        rule(f, "repo/a/b", CORDON_ACCESS_WRITE);
    }
}

static void check_nested_plan(fixture *f)
{
    long repo = idx_rel(f, PLAN_BIND, "repo");
    long a = idx_rel(f, PLAN_HIDE, "repo/a");
    long b = idx_rel(f, PLAN_BIND, "repo/a/b");
    assert_true(repo >= 0 && a >= 0 && b >= 0);
    assert_true(repo < a);
    assert_true(a < b);
    const plan_op *o = &f->pl.ops[repo];
    assert_false(o->read_only);
    assert_true(o->is_dir);
    char *rp = fx(f, "repo");
    assert_string_equal(o->src, rp);
    struct stat st;
    assert_int_equal(stat(rp, &st), 0);
    assert_true(o->dev == st.st_dev && o->ino == st.st_ino);
    free(rp);
    assert_true(f->pl.ops[a].is_dir);
    assert_false(f->pl.ops[b].read_only);
    assert_true(f->pl.ops[b].is_dir);
    /* exactly one operation at each of these paths */
    char *p = fx(f, "repo/a");
    assert_int_equal(ops_at(&f->pl, p), 1);
    free(p);
    /* what covers a path inside is the longest rule */
    char *x = fx(f, "repo/x");
    char *ax = fx(f, "repo/a/x");
    char *bx = fx(f, "repo/a/b/x");
    assert_ptr_equal(plan_covering(&f->pl, x), &f->pl.ops[repo]);
    assert_ptr_equal(plan_covering(&f->pl, ax), &f->pl.ops[a]);
    assert_ptr_equal(plan_covering(&f->pl, bx), &f->pl.ops[b]);
    free(x);
    free(ax);
    free(bx);
}

/* --allow /repo --deny /repo/a --allow /repo/a/b: bind-rw, hide, bind-rw, in order. */
static void test_nested_order(void **state)
{
    fixture *f = *state;
    nested_rules(f, false);
    build_ok(f);
    check_nested_plan(f);
}

static void test_nested_order_reversed(void **state)
{
    fixture *f = *state;
    nested_rules(f, true);
    build_ok(f);
    check_nested_plan(f);
}

/* Siblings sharing a string prefix do not get between a parent and its children. */
static void test_order_with_prefix_siblings(void **state)
{
    fixture *f = *state;
    mk(f, "a");
    mk(f, "a/b");
    mk(f, "a-b");
    mk(f, "a.b");
    rule(f, "a-b", CORDON_ACCESS_READ);
    rule(f, "a/b", CORDON_ACCESS_NONE);
    rule(f, "a.b", CORDON_ACCESS_READ);
    rule(f, "a", CORDON_ACCESS_WRITE);
    build_ok(f);
    long a = idx_rel(f, PLAN_BIND, "a");
    long ab = idx_rel(f, PLAN_HIDE, "a/b");
    long amb = idx_rel(f, PLAN_BIND, "a-b");
    long adb = idx_rel(f, PLAN_BIND, "a.b");
    assert_true(a < ab && ab < amb && amb < adb);
}

/* A bigger plan, with the base: every parent precedes everything below it. */
static void test_parents_first_with_base(void **state)
{
    fixture *f = *state;
    f->p->base = CORDON_BASE_SYSTEM;
    mk(f, "ws/d");
    mk(f, "ws/d/e");
    touch(f, "ws/d/e/f");
    rule(f, "ws/d/e/f", CORDON_ACCESS_NONE);
    rule(f, "ws/d", CORDON_ACCESS_READ);
    rule(f, "ws/d/e", CORDON_ACCESS_WRITE);
    rule_abs(f, "/usr", CORDON_ACCESS_NONE);
    rule_abs(f, "/usr/bin", CORDON_ACCESS_READ);
    build_ok(f); /* check_invariants does the work */
    /* the deny beats the base's read at /usr */
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/usr"), -1);
    assert_true(op_index(&f->pl, PLAN_HIDE, "/usr") < op_index(&f->pl, PLAN_BIND, "/usr/bin"));
    assert_true(op_at(&f->pl, PLAN_BIND, "/usr/bin")->read_only);
    const plan_op *hf = op_rel(f, PLAN_HIDE, "ws/d/e/f");
    assert_false(hf->is_dir); /* a file is hidden by a file */
    assert_true(op_rel(f, PLAN_BIND, "ws/d")->read_only);
    assert_false(op_rel(f, PLAN_BIND, "ws/d/e")->read_only);
}

/* Conflicts and duplicates: one operation per path, the winner's. */
static void test_conflicts_and_duplicates(void **state)
{
    fixture *f = *state;
    mk(f, "c");
    mk(f, "d");
    rule(f, "c", CORDON_ACCESS_WRITE);
    rule(f, "c", CORDON_ACCESS_NONE);
    rule(f, "c", CORDON_ACCESS_READ);
    rule(f, "d", CORDON_ACCESS_READ);
    rule(f, "d", CORDON_ACCESS_READ);
    rule(f, "d/", CORDON_ACCESS_WRITE);
    build_ok(f);
    char *c = fx(f, "c"), *d = fx(f, "d");
    assert_int_equal(ops_at(&f->pl, c), 1);
    assert_non_null(op_at(&f->pl, PLAN_HIDE, c));
    assert_int_equal(ops_at(&f->pl, d), 1);
    assert_false(op_at(&f->pl, PLAN_BIND, d)->read_only);
    free(c);
    free(d);
}

/* ---- paths that do not exist ------------------------------------------------------ */

static void test_missing_allow_is_a_note(void **state)
{
    fixture *f = *state;
    rule(f, "nope", CORDON_ACCESS_WRITE);
    rule(f, "nope-ro", CORDON_ACCESS_READ);
    build_ok(f);
    const plan_op *n = op_rel(f, PLAN_NOTE, "nope");
    assert_contains(n->why, "does not exist");
    assert_contains(n->why, "--allow");
    assert_contains(op_rel(f, PLAN_NOTE, "nope-ro")->why, "does not exist");
    char *p = fx(f, "nope");
    assert_int_equal(ops_at(&f->pl, p), 0);
    free(p);
    assert_int_equal(idx_rel(f, PLAN_BIND, "nope-ro"), -1);
}

/* A denied path that does not exist yet below a writable rule: the command could create
 * it, so the plan holds its first missing component for the run with a stub (an empty
 * directory cordon creates on the host, covered by an empty read-only one inside). */
static void test_missing_deny_under_writable_is_held(void **state)
{
    fixture *f = *state;
    rule(f, "ws/secrets", CORDON_ACCESS_NONE);
    build_ok(f);
    const plan_cc_rule *h = cc_rel(f, PLAN_NOCREATE, "ws/secrets");
    assert_string_equal(h->why, "--deny");
    assert_int_equal(idx_rel(f, PLAN_NOTE, "ws/secrets"), -1); /* not "nothing to hide" */
    assert_int_equal(idx_rel(f, PLAN_HIDE, "ws/secrets"), -1); /* nothing is mounted there */
    char *p = fx(f, "ws/secrets/x");
    /* not a mount: the creation control refuses the name (what covers it is a bind) */
    assert_int_equal(plan_covering(&f->pl, p)->kind, PLAN_BIND);
    free(p);
    /* directly in the writable workspace: nothing to pin (the workspace is a mount point
     * and the stub is one) */
    assert_int_equal(n_pins(&f->pl), 0);

    /* deeper below a writable rule, and from a settings file: the first missing
     * component is held, once for every denied path below it, and the existing
     * directory above it is pinned (`mv a a-old; mkdir -p a/b/c` must fail) */
    fresh_policy(f, CORDON_BASE_EMPTY);
    mk(f, "ws/a");
    rule(f, "ws", CORDON_ACCESS_WRITE);
    policy_add_rule(f->p, "<workspace>/a/b/c/.env", CORDON_ACCESS_NONE, ORIGIN_SETTINGS, "s.json", 3, true);
    policy_add_rule(f->p, "<workspace>/a/b/d", CORDON_ACCESS_NONE, ORIGIN_SETTINGS, "s.json", 4, true);
    build_ok(f);
    h = cc_rel(f, PLAN_NOCREATE, "ws/a/b"); /* cc_rel fails on two */
    assert_string_equal(h->why, "s.json:3");
    char *ab = fx(f, "ws/a/b");
    for (size_t i = 0; i < f->pl.n_ops; i++)
        if (strcmp(f->pl.ops[i].dest, ab) != 0 && path_has_prefix(f->pl.ops[i].dest, ab))
            fail_msg("%s operation at %s below the held %s", plan_kind_name(f->pl.ops[i].kind), f->pl.ops[i].dest, ab);
    assert_int_equal(ops_at(&f->pl, ab), 0); /* nothing mounted: refused by the creation control */
    free(ab);
    p = fx(f, "ws/a/b/c/.env");
    /* not a mount: the creation control refuses the name (what covers it is a bind) */
    assert_int_equal(plan_covering(&f->pl, p)->kind, PLAN_BIND);
    free(p);
    const plan_op *pin = assert_pin(f, "ws/a", "ws/a/b");
    assert_int_equal(n_pins(&f->pl), 1);
    assert_true(idx_rel(f, PLAN_BIND, "ws") < idx_rel(f, PLAN_BIND, "ws/a"));
    assert_int_equal(idx_rel(f, PLAN_HIDE, "ws/a/b"), -1); /* refused, not mounted */
    /* the existing parent stays writable (through its pin), only the missing name is
     * held */
    p = fx(f, "ws/a/other");
    assert_ptr_equal(plan_covering(&f->pl, p), pin);
    free(p);
    /* a level deeper: every directory between the workspace and the stub */
    fresh_policy(f, CORDON_BASE_EMPTY);
    mk(f, "ws/a/x");
    mk(f, "ws/a/x/y");
    rule(f, "ws/a/x/y/z/secret", CORDON_ACCESS_NONE);
    build_ok(f);
    assert_non_null(cc_rel(f, PLAN_NOCREATE, "ws/a/x/y/z"));
    assert_pin(f, "ws/a", "ws/a/x/y/z");
    assert_pin(f, "ws/a/x", "ws/a/x/y/z");
    assert_pin(f, "ws/a/x/y", "ws/a/x/y/z");
    assert_int_equal(n_pins(&f->pl), 3);

    /* a writable rule other than the workspace (the working directory inside it) */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->no_workspace = true;
    mk(f, "w");
    char *w = fx(f, "w");
    f->host.cwd = w;
    rule(f, "w", CORDON_ACCESS_WRITE);
    rule(f, "w/nope", CORDON_ACCESS_NONE);
    build_ok(f);
    h = cc_rel(f, PLAN_NOCREATE, "w/nope");
    assert_int_equal(n_pins(&f->pl), 0);
    f->host.cwd = f->ws;
    free(w);

    /* an existing denied path is hidden as it is: no stub */
    fresh_policy(f, CORDON_BASE_EMPTY);
    touch(f, "ws/file");
    mk(f, "ws/dir");
    rule(f, "ws/file", CORDON_ACCESS_NONE);
    rule(f, "ws/dir", CORDON_ACCESS_NONE);
    build_ok(f);
    assert_non_null(op_rel(f, PLAN_HIDE, "ws/file"));
    assert_false(op_rel(f, PLAN_HIDE, "ws/file")->is_dir);
    assert_non_null(op_rel(f, PLAN_HIDE, "ws/dir"));
    assert_true(op_rel(f, PLAN_HIDE, "ws/dir")->is_dir);
    assert_int_equal(n_pins(&f->pl), 0);
}

/* A missing denied path below a *file* in a writable path cannot be held with a stub (a
 * directory cannot be made where the file is; the command could replace the file with
 * a directory): still an error. */
static void test_missing_deny_below_a_file_fails(void **state)
{
    fixture *f = *state;
    touch(f, "ws/file");
    rule(f, "ws/file/below", CORDON_ACCESS_NONE);
    build_fails(f);
    char *p = fx(f, "ws/file/below");
    assert_contains(f->err.message, p);
    assert_contains(f->err.message, "does not exist");
    assert_contains(f->err.message, "a file stands");
    assert_contains(f->err.message, f->ws); /* the writable parent */
    assert_contains(f->err.message, "--deny");
    free(p);

    /* deeper, and from a settings file */
    fresh_policy(f, CORDON_BASE_EMPTY);
    policy_add_rule(f->p, "<workspace>/file/x/y", CORDON_ACCESS_NONE, ORIGIN_SETTINGS, "s.json", 6, true);
    build_fails(f);
    assert_contains(f->err.message, "s.json:6");
    p = fx(f, "ws/file/x/y");
    assert_contains(f->err.message, p);
    free(p);

    /* below a file in a writable rule other than the workspace */
    fresh_policy(f, CORDON_BASE_EMPTY);
    mk(f, "w");
    touch(f, "w/f");
    rule(f, "w", CORDON_ACCESS_WRITE);
    rule(f, "w/f/g", CORDON_ACCESS_NONE);
    build_fails(f);
    p = fx(f, "w/f/g");
    assert_contains(f->err.message, p);
    free(p);
    p = fx(f, "w");
    assert_contains(f->err.message, p);
    free(p);

    /* a read-only rule on the file itself keeps it from being replaced: a note */
    fresh_policy(f, CORDON_BASE_EMPTY);
    rule(f, "ws/file", CORDON_ACCESS_READ);
    rule(f, "ws/file/below", CORDON_ACCESS_NONE);
    build_ok(f);
    assert_contains(op_rel(f, PLAN_NOTE, "ws/file/below")->why, "nothing to hide");
    assert_true(op_rel(f, PLAN_BIND, "ws/file")->read_only);

    /* so does a read-only workspace */
    fresh_policy(f, CORDON_BASE_EMPTY);
    assert_int_equal(cordon_policy_set_read_only(f->p, true, &f->err), 0);
    rule(f, "ws/file/below", CORDON_ACCESS_NONE);
    build_ok(f);
    assert_contains(op_rel(f, PLAN_NOTE, "ws/file/below")->why, "nothing to hide");
}

static void test_missing_deny_elsewhere_is_a_note(void **state)
{
    fixture *f = *state;
    mk(f, "ro");
    mk(f, "hidden");
    rule(f, "nope", CORDON_ACCESS_NONE); /* below no rule at all */
    rule(f, "ro", CORDON_ACCESS_READ);
    rule(f, "ro/nope", CORDON_ACCESS_NONE); /* below a read-only rule */
    rule(f, "hidden", CORDON_ACCESS_NONE);
    rule(f, "hidden/nope", CORDON_ACCESS_NONE); /* below a hidden path */
    rule(f, "ws/ro", CORDON_ACCESS_READ);
    rule(f, "ws/ro/nope/deeper", CORDON_ACCESS_NONE);
    mk(f, "ws/ro");
    build_ok(f);
    assert_contains(op_rel(f, PLAN_NOTE, "nope")->why, "does not exist; nothing to hide");
    assert_contains(op_rel(f, PLAN_NOTE, "ro/nope")->why, "nothing to hide");
    assert_contains(op_rel(f, PLAN_NOTE, "hidden/nope")->why, "nothing to hide");
    assert_contains(op_rel(f, PLAN_NOTE, "ws/ro/nope/deeper")->why, "nothing to hide");
    assert_int_equal(idx_rel(f, PLAN_HIDE, "nope"), -1);
    assert_int_equal(n_pins(&f->pl), 0); /* nothing held: nothing to pin */
}

/* Read-only mode: a missing path below the (now read-only) workspace is only a note. */
static void test_missing_deny_in_read_only_workspace(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_read_only(f->p, true, &f->err), 0);
    rule(f, "ws/secrets", CORDON_ACCESS_NONE);
    build_ok(f);
    assert_non_null(op_rel(f, PLAN_NOTE, "ws/secrets"));
    assert_true(op_rel(f, PLAN_BIND, "ws")->read_only);
    assert_int_equal(n_pins(&f->pl), 0);
}

/* A read-only rule on a path that does not exist mounts nothing, so it cannot protect
 * a missing denied path below it from the writable rule above: the first missing
 * component (the read rule's own path) is held with a stub instead. */
static void test_missing_deny_under_missing_read_rule(void **state)
{
    fixture *f = *state;
    rule(f, "ws/future", CORDON_ACCESS_READ);
    rule(f, "ws/future/secret", CORDON_ACCESS_NONE);
    build_ok(f);
    const plan_cc_rule *h = cc_rel(f, PLAN_NOCREATE, "ws/future");
    assert_string_equal(h->why, "--deny");
    assert_contains(op_rel(f, PLAN_NOTE, "ws/future")->why, "nothing to show");
    char *p = fx(f, "ws/future/secret");
    /* not a mount: the creation control refuses the name (what covers it is a bind) */
    assert_int_equal(plan_covering(&f->pl, p)->kind, PLAN_BIND);
    assert_int_equal(ops_at(&f->pl, p), 0);
    free(p);
    p = fx(f, "ws/future");
    assert_int_equal(ops_at(&f->pl, p), 0); /* refused, not mounted; the read rule is only a note */
    free(p);
    assert_int_equal(n_pins(&f->pl), 0); /* the refused name is directly in the workspace */
}

/* What cordon protects atop the writable workspace reaches the plan: missing names are
 * held with stubs, existing ones bound read-only. */
static void test_protected_names_in_plan(void **state)
{
    fixture *f = *state;
    mk(f, "ws/.codex");
    build_ok(f);
    static const char *const held[] = {"ws/.cordon", "ws/.agents"};
    for (size_t i = 0; i < 2; i++) {
        const plan_cc_rule *h = cc_rel(f, PLAN_NOCREATE, held[i]);
        assert_contains(h->why, "protected");
        assert_contains(h->why, f->ws);
    }
    const plan_op *c = op_rel(f, PLAN_BIND, "ws/.codex");
    assert_true(c->read_only);
    assert_true(c->is_dir);
    assert_int_equal(idx_rel(f, PLAN_HIDE, "ws/.codex"), -1);
    assert_true(idx_rel(f, PLAN_BIND, "ws") < idx_rel(f, PLAN_BIND, "ws/.codex"));
    assert_false(c->pin);
    /* directly in the workspace: nothing pinned */
    assert_int_equal(n_pins(&f->pl), 0);

    /* a read-only workspace: nothing to protect, nothing to hold, nothing to pin */
    fresh_policy(f, CORDON_BASE_EMPTY);
    mk(f, "ws/.git");
    mk(f, "ws/.git/hooks");
    assert_int_equal(cordon_policy_set_read_only(f->p, true, &f->err), 0);
    build_ok(f);
    for (size_t i = 0; i < f->pl.n_ops; i++)
        assert_false(f->pl.ops[i].kind == PLAN_HIDE);
    assert_int_equal(n_pins(&f->pl), 0);
}

/* .git/hooks and .git/config protected: .git itself is pinned (bound writable onto
 * itself, although the workspace's bind makes that redundant) so that the command
 * cannot `mv .git .git-old` and make a fresh .git/hooks; git still writes in .git. */
static void test_git_dir_pinned(void **state)
{
    fixture *f = *state;
    mk(f, "ws/.git");
    mk(f, "ws/.git/hooks");
    touch(f, "ws/.git/config");
    mk(f, "ws/.git/objects");
    build_ok(f);
    const plan_op *pin = assert_pin(f, "ws/.git", "ws/.git/hooks");
    assert_true(op_rel(f, PLAN_BIND, "ws/.git/hooks")->read_only);
    assert_true(op_rel(f, PLAN_BIND, "ws/.git/config")->read_only);
    assert_false(op_rel(f, PLAN_BIND, "ws/.git/hooks")->pin);
    assert_true(idx_rel(f, PLAN_BIND, "ws") < idx_rel(f, PLAN_BIND, "ws/.git"));
    assert_true(idx_rel(f, PLAN_BIND, "ws/.git") < idx_rel(f, PLAN_BIND, "ws/.git/config"));
    assert_true(idx_rel(f, PLAN_BIND, "ws/.git") < idx_rel(f, PLAN_BIND, "ws/.git/hooks"));
    char *p = fx(f, "ws/.git/objects/ab");
    assert_ptr_equal(plan_covering(&f->pl, p), pin); /* still writable */
    free(p);
    assert_int_equal(n_pins(&f->pl), 1);

    /* hooks missing: the stub pins .git just the same */
    fresh_policy(f, CORDON_BASE_EMPTY);
    p = fx(f, "ws/.git/hooks");
    assert_int_equal(rmdir(p), 0);
    free(p);
    build_ok(f);
    assert_non_null(cc_rel(f, PLAN_NOCREATE, "ws/.git/hooks"));
    assert_pin(f, "ws/.git", "ws/.git/hooks");
    assert_int_equal(n_pins(&f->pl), 1);
}

/* drop_redundant drops a bind below a bind of the same tree with the same access, but
 * never a pinned one (rrule.pin carried into plan_op.pin); the pin is set by hand here,
 * on rules protect.c does not touch (read-only ones), and on a writable one. */
static void test_pinned_bind_never_dropped(void **state)
{
    fixture *f = *state;
    mk(f, "repo");
    mk(f, "repo/a");
    mk(f, "repo/a/b");
    for (int writable = 0; writable < 2; writable++) {
        fresh_policy(f, CORDON_BASE_EMPTY);
        cordon_access acc = writable ? CORDON_ACCESS_WRITE : CORDON_ACCESS_READ;
        rule(f, "repo", acc);
        rule(f, "repo/a", acc);
        rule(f, "repo/a/b", acc);
        resolve_ok(f);
        char *a = fx(f, "repo/a");
        bool found = false;
        for (size_t i = 0; i < f->r.n_rules; i++)
            if (strcmp(f->r.rules[i].path, a) == 0 && !f->r.rules[i].shadowed) {
                f->r.rules[i].pin = true;
                found = true;
            }
        assert_true(found);
        if (plan_build(&f->r, FX_INPUT(f), &f->pl, &f->err) < 0)
            fail_msg("plan_build: %s", f->err.message);
        f->have_pl = true;
        check_invariants(&f->pl);
        const plan_op *b = op_rel(f, PLAN_BIND, "repo/a");
        assert_true(b->pin);
        assert_int_equal(b->read_only, !writable);
        assert_string_equal(b->src, a);
        assert_int_equal(idx_rel(f, PLAN_NOTE, "repo/a"), -1);
        if (!writable) {
            /* unpinned below it: dropped as before, now through the pin */
            assert_contains(op_rel(f, PLAN_NOTE, "repo/a/b")->why, "already read-only through");
            assert_contains(op_rel(f, PLAN_NOTE, "repo/a/b")->why, a);
            assert_int_equal(idx_rel(f, PLAN_BIND, "repo/a/b"), -1);
            assert_false(op_rel(f, PLAN_BIND, "repo")->pin);
            assert_int_equal(n_pins(&f->pl), 1);
        }
        free(a);
    }
}

/* ---- /tmp and HOME ------------------------------------------------------------------ */

/* TMPDIR is /tmp, unless /tmp holds a mount (the workspace below it): then a private
 * directory of its own there, empty and holding nothing. */
static void check_tmpdir(fixture *f)
{
    if (path_has_prefix(f->ws, "/tmp")) {
        assert_string_equal(f->pl.tmpdir, PLAN_TMPDIR_IN_TMP);
        assert_int_equal(op_at(&f->pl, PLAN_TMPFS, PLAN_TMPDIR_IN_TMP)->mode, 0700);
        for (size_t i = 0; i < f->pl.n_ops; i++)
            if (plan_op_mounts(&f->pl.ops[i]) && strcmp(f->pl.ops[i].dest, PLAN_TMPDIR_IN_TMP) != 0)
                assert_false(path_has_prefix(f->pl.ops[i].dest, PLAN_TMPDIR_IN_TMP));
    } else {
        assert_string_equal(f->pl.tmpdir, "/tmp");
    }
}

static void test_private_tmp(void **state)
{
    fixture *f = *state;
    build_ok(f);
    const plan_op *t = op_at(&f->pl, PLAN_TMPFS, "/tmp");
    assert_int_equal(t->mode, 01777);
    check_tmpdir(f);
    assert_int_equal(op_index(&f->pl, PLAN_TMPFS, PLAN_PRIVATE_TMP), -1);
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/tmp"), -1);
    /* a rule below /tmp is mounted on top of the private /tmp */
    if (path_has_prefix(f->ws, "/tmp"))
        assert_true(op_index(&f->pl, PLAN_TMPFS, "/tmp") < idx_rel(f, PLAN_BIND, "ws"));
}

/* cordon_policy_add_tmpfs (bubblewrap's --tmpfs): a tmpfs of that mode, mounted after the
 * rule at its path and before what lies below it. */
static void test_added_tmpfs(void **state)
{
    fixture *f = *state;
    mk(f, "ws/sub");
    mk(f, "ws/sub/in");
    rule(f, "ws/sub/in", CORDON_ACCESS_READ);
    char *sub = fx(f, "ws/sub");
    cordon_error e = {0};
    assert_int_equal(cordon_policy_add_tmpfs(f->p, sub, 0700, 4096, &e), 0);
    char *link = fx(f, "ws/sub/l");
    assert_int_equal(cordon_policy_add_symlink(f->p, link, "there", &e), 0); /* (bwrap's --symlink) */
    build_ok(f);
    assert_string_equal(op_at(&f->pl, PLAN_SYMLINK, link)->src, "there");
    assert_true(idx_rel(f, PLAN_TMPFS, "ws/sub") < idx_rel(f, PLAN_SYMLINK, "ws/sub/l"));
    free(link);
    const plan_op *t = op_at(&f->pl, PLAN_TMPFS, sub);
    assert_int_equal(t->mode, 0700);
    assert_int_equal(t->size, 4096);
    assert_true(idx_rel(f, PLAN_BIND, "ws") < idx_rel(f, PLAN_TMPFS, "ws/sub"));
    assert_true(idx_rel(f, PLAN_TMPFS, "ws/sub") < idx_rel(f, PLAN_BIND, "ws/sub/in"));
    free(sub);
    assert_int_equal(cordon_policy_add_tmpfs(f->p, "relative", 0755, 0, &e), -1);
    assert_int_equal(cordon_policy_add_tmpfs(f->p, "/", 0755, 0, &e), -1);
    assert_int_equal(cordon_policy_add_tmpfs(f->p, "/x", 010000, 0, &e), -1);
}

/* Directories that only hold mount points below a private writable mount are read-only
 * mounts of their own (issue 9, item 3); right in the private mount nothing is added. */
static void test_holders(void **state)
{
    fixture *f = *state;
    if (!path_has_prefix(f->ws, "/tmp"))
        return; /* the fixture lives elsewhere: no private /tmp above it */
    build_ok(f);
    /* /tmp/cordon-test-plan.X/ws: /tmp/cordon-test-plan.X holds it */
    char *top = xasprintf("/tmp/%.*s", (int)strcspn(f->ws + 5, "/"), f->ws + 5);
    const plan_op *h = op_at(&f->pl, PLAN_HOLD, top);
    assert_false(h->from_view);
    assert_true(op_index(&f->pl, PLAN_HOLD, top) > op_index(&f->pl, PLAN_TMPFS, "/tmp"));
    assert_true(op_index(&f->pl, PLAN_HOLD, top) < idx_rel(f, PLAN_BIND, "ws"));
    assert_int_equal(op_index(&f->pl, PLAN_HOLD, PLAN_TMPDIR_IN_TMP), -1);
    free(top);
    check_invariants(&f->pl);

    /* --base host with the home outside /tmp: the home is a PLAN_COW, and what holds a
     * rule below it is the directory as the overlay shows it */
    fresh_policy(f, CORDON_BASE_HOST);
    f->host.home = "/usr";
    rule_abs(f, "/usr/share/doc", CORDON_ACCESS_WRITE);
    build_ok(f);
    assert_non_null(op_at(&f->pl, PLAN_COW, "/usr"));
    assert_true(op_at(&f->pl, PLAN_HOLD, "/usr/share")->from_view);
    assert_int_equal(op_index(&f->pl, PLAN_TMPFS, "/usr"), -1);
    f->host.home = f->home;
}

static void check_tmp_covered(fixture *f)
{
    const plan_op *t = op_at(&f->pl, PLAN_TMPFS, PLAN_PRIVATE_TMP);
    assert_int_equal(t->mode, 0700);
    assert_string_equal(f->pl.tmpdir, PLAN_PRIVATE_TMP);
    assert_int_equal(op_index(&f->pl, PLAN_TMPFS, "/tmp"), -1);
}

static void test_rule_covering_tmp(void **state)
{
    fixture *f = *state;
    rule_abs(f, "/tmp", CORDON_ACCESS_WRITE);
    build_ok(f);
    check_tmp_covered(f);
    assert_false(op_at(&f->pl, PLAN_BIND, "/tmp")->read_only);

    fresh_policy(f, CORDON_BASE_EMPTY);
    rule_abs(f, "/tmp/", CORDON_ACCESS_READ);
    build_ok(f);
    check_tmp_covered(f);
    assert_true(op_at(&f->pl, PLAN_BIND, "/tmp")->read_only);

    fresh_policy(f, CORDON_BASE_EMPTY);
    rule_abs(f, "/tmp", CORDON_ACCESS_NONE);
    f->p->no_workspace = true;
    f->host.cwd = "/usr";
    rule_abs(f, "/", CORDON_ACCESS_READ);
    build_ok(f);
    check_tmp_covered(f);
    assert_non_null(op_at(&f->pl, PLAN_HIDE, "/tmp"));

    /* a rule on "/" covers /tmp too */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->no_workspace = true;
    rule_abs(f, "/", CORDON_ACCESS_READ);
    build_ok(f);
    check_tmp_covered(f);
    assert_true(op_at(&f->pl, PLAN_BIND, "/tmp")->read_only);
    f->host.cwd = f->ws;
}

/* The base does not count as a rule covering /tmp. */
static void test_base_host_keeps_tmp_private(void **state)
{
    fixture *f = *state;
    f->p->base = CORDON_BASE_HOST;
    build_ok(f);
    check_tmpdir(f);
    assert_int_equal(op_at(&f->pl, PLAN_TMPFS, "/tmp")->mode, 01777);
    assert_non_null(op_at(&f->pl, PLAN_BIND, "/usr"));
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/proc"), -1);
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/dev"), -1);
}

/* --base host with every private mount point present on the host: the host root is
 * bound whole (one recursive read-only bind), not one bind per top-level entry. */
static void test_base_host_whole_root(void **state)
{
    fixture *f = *state;
    struct stat st;
    /* Every host cordon supports has them (and cmocka's skip() would count as a failure
     * under meson's TAP parser). */
    if (stat("/tmp", &st) < 0 || stat("/dev", &st) < 0 || stat("/proc", &st) < 0)
        fail_msg("this test needs /tmp, /dev and /proc on the host");
    f->p->base = CORDON_BASE_HOST;
    f->host.home = "/usr"; /* an existing directory outside /tmp that no rule names */
    rule_abs(f, "/etc", CORDON_ACCESS_READ);
    build_ok(f);
    assert_true(f->pl.root_is_host);
    assert_int_equal(stat("/", &st), 0);
    assert_true(f->pl.root_dev == st.st_dev && f->pl.root_ino == st.st_ino);
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/"), -1);
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/usr"), -1);
    /* a read rule adds nothing to the read-only host root; a write rule does */
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/etc"), -1);
    assert_contains(op_at(&f->pl, PLAN_NOTE, "/etc")->why, "already read-only through /");
    assert_false(op_at(&f->pl, PLAN_BIND, f->ws)->read_only);
    /* private /tmp over the host's; the home the real one under a private layer */
    check_tmpdir(f);
    assert_int_equal(op_at(&f->pl, PLAN_TMPFS, "/tmp")->mode, 01777);
    assert_string_equal(f->pl.home, "/usr");
    assert_string_equal(op_at(&f->pl, PLAN_COW, "/usr")->src, "/usr");
    assert_string_equal(f->pl.home_fallback, PLAN_HOME_FALLBACK_IN_TMP);
    assert_non_null(op_at(&f->pl, PLAN_DEV, "/dev"));
    assert_non_null(op_at(&f->pl, PLAN_PROC, "/proc"));

    /* the working directory may be anywhere in the host root, if it is a directory */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->base = CORDON_BASE_HOST;
    assert_int_equal(cordon_policy_set_cwd(f->p, "/etc", &f->err), 0);
    build_ok(f);
    assert_true(f->pl.root_is_host);
    assert_string_equal(f->pl.cwd, "/etc");
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->base = CORDON_BASE_HOST;
    assert_int_equal(cordon_policy_set_cwd(f->p, "/nonexistent-cordon-unit", &f->err), 0);
    build_fails(f);
    assert_contains(f->err.message, "does not exist");
    f->host.home = FAKE_HOME;
}

/* Without a usable home directory the root is a tmpfs with one bind per entry. */
static void test_base_host_per_entry(void **state)
{
    fixture *f = *state;
    f->p->base = CORDON_BASE_HOST;
    build_ok(f); /* FAKE_HOME does not exist */
    assert_false(f->pl.root_is_host);
    assert_true(op_at(&f->pl, PLAN_BIND, "/usr")->read_only);
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/"), -1);
    assert_string_equal(f->pl.home, FAKE_HOME);
}

static void test_private_home_at_home_path(void **state)
{
    fixture *f = *state;
    build_ok(f);
    const plan_op *h = op_at(&f->pl, PLAN_TMPFS, FAKE_HOME);
    assert_int_equal(h->mode, 0700);
    assert_string_equal(f->pl.home, FAKE_HOME);
    assert_int_equal(op_index(&f->pl, PLAN_TMPFS, PLAN_PRIVATE_HOME), -1);
}

static void check_home_elsewhere(fixture *f)
{
    const plan_op *h = op_at(&f->pl, PLAN_TMPFS, PLAN_PRIVATE_HOME);
    assert_int_equal(h->mode, 0700);
    assert_string_equal(f->pl.home, PLAN_PRIVATE_HOME);
}

static void test_home_covered_by_rule(void **state)
{
    fixture *f = *state;
    /* a rule on the home itself (here missing: only a note, but it still names it) */
    rule_abs(f, FAKE_HOME, CORDON_ACCESS_READ);
    build_ok(f);
    check_home_elsewhere(f);
    assert_int_equal(op_index(&f->pl, PLAN_TMPFS, FAKE_HOME), -1);

    /* a rule above the home */
    fresh_policy(f, CORDON_BASE_EMPTY);
    mk(f, "home");
    mk(f, "home/u");
    char *home = fx(f, "home/u");
    f->host.home = home;
    rule(f, "home", CORDON_ACCESS_WRITE);
    build_ok(f);
    check_home_elsewhere(f);
    assert_int_equal(op_index(&f->pl, PLAN_TMPFS, home), -1);
    f->host.home = FAKE_HOME;
    free(home);
}

static void test_home_not_mountable_in_place(void **state)
{
    fixture *f = *state;
    /* below /tmp */
    f->host.home = "/tmp/nonexistent-cordon-unit-home";
    build_ok(f);
    check_home_elsewhere(f);

    /* a missing path inside a base directory: the mount point would have to be made
     * in a host directory */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->base = CORDON_BASE_SYSTEM;
    f->host.home = "/usr/nonexistent-cordon-unit-home";
    build_ok(f);
    check_home_elsewhere(f);

    /* "/" */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->host.home = "/";
    build_ok(f);
    check_home_elsewhere(f);

    /* no HOME */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->host.home = NULL;
    build_ok(f);
    check_home_elsewhere(f);
    f->host.home = FAKE_HOME;
}

/* A home that is an existing directory of the base replaces the base's bind there. */
static void test_home_replaces_base_bind(void **state)
{
    fixture *f = *state;
    struct stat st;
    if (stat("/etc", &st) < 0 || !S_ISDIR(st.st_mode))
        fail_msg("this test needs /etc on the host"); /* not skip(): a failure under meson */
    f->p->base = CORDON_BASE_SYSTEM;
    f->host.home = "/etc";
    build_ok(f);
    assert_string_equal(f->pl.home, "/etc");
    assert_int_equal(op_at(&f->pl, PLAN_TMPFS, "/etc")->mode, 0700);
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/etc"), -1);
    assert_contains(op_at(&f->pl, PLAN_NOTE, "/etc")->why, "replaced by the private HOME");
    assert_ptr_equal(plan_covering(&f->pl, "/etc/passwd"), op_at(&f->pl, PLAN_TMPFS, "/etc"));
}

/* ---- redundant binds -------------------------------------------------------------- */

static void test_redundant_read_below_base(void **state)
{
    fixture *f = *state;
    f->p->base = CORDON_BASE_SYSTEM;
    rule_abs(f, "/usr/share", CORDON_ACCESS_READ);
    build_ok(f);
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/usr/share"), -1);
    const plan_op *n = op_at(&f->pl, PLAN_NOTE, "/usr/share");
    assert_contains(n->why, "--allow-ro");
    assert_contains(n->why, "already read-only through /usr");
    assert_ptr_equal(plan_covering(&f->pl, "/usr/share/doc"), op_at(&f->pl, PLAN_BIND, "/usr"));

    /* write below read is not redundant */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->base = CORDON_BASE_SYSTEM;
    rule_abs(f, "/usr/share", CORDON_ACCESS_WRITE);
    build_ok(f);
    assert_false(op_at(&f->pl, PLAN_BIND, "/usr/share")->read_only);
    assert_int_equal(op_index(&f->pl, PLAN_NOTE, "/usr/share"), -1);
}

static void test_redundant_write_below_write(void **state)
{
    fixture *f = *state;
    mk(f, "repo");
    mk(f, "repo/a");
    mk(f, "repo/a/b");
    mk(f, "repo/a/b/c");
    rule(f, "repo", CORDON_ACCESS_WRITE);
    rule(f, "repo/a", CORDON_ACCESS_WRITE);
    build_ok(f);
    /* Every writable root holds .codex, .cordon and .agents, so repo/a must stay a mount
     * point (a pin) that cannot be renamed away: no longer dropped as redundant. */
    assert_true(op_rel(f, PLAN_BIND, "repo/a")->pin);
    assert_false(op_rel(f, PLAN_BIND, "repo/a")->read_only);

    /* alternating access: every bind is needed */
    fresh_policy(f, CORDON_BASE_EMPTY);
    rule(f, "repo", CORDON_ACCESS_WRITE);
    rule(f, "repo/a", CORDON_ACCESS_READ);
    rule(f, "repo/a/b", CORDON_ACCESS_WRITE);
    rule(f, "repo/a/b/c", CORDON_ACCESS_READ);
    build_ok(f);
    assert_false(op_rel(f, PLAN_BIND, "repo")->read_only);
    assert_true(op_rel(f, PLAN_BIND, "repo/a")->read_only);
    assert_false(op_rel(f, PLAN_BIND, "repo/a/b")->read_only);
    assert_true(op_rel(f, PLAN_BIND, "repo/a/b/c")->read_only);

    /* below a hidden path a bind is needed again */
    fresh_policy(f, CORDON_BASE_EMPTY);
    rule(f, "repo", CORDON_ACCESS_WRITE);
    rule(f, "repo/a", CORDON_ACCESS_NONE);
    rule(f, "repo/a/b", CORDON_ACCESS_WRITE);
    build_ok(f);
    assert_non_null(op_rel(f, PLAN_BIND, "repo/a/b"));

    /* two levels of redundancy collapse onto the outermost bind */
    fresh_policy(f, CORDON_BASE_EMPTY);
    rule(f, "repo", CORDON_ACCESS_READ);
    rule(f, "repo/a", CORDON_ACCESS_READ);
    rule(f, "repo/a/b", CORDON_ACCESS_READ);
    f->p->no_workspace = true;
    f->host.cwd = f->dir;
    rule(f, "", CORDON_ACCESS_READ);
    build_ok(f);
    assert_contains(op_rel(f, PLAN_NOTE, "repo/a/b")->why, "through");
    assert_contains(op_rel(f, PLAN_NOTE, "repo")->why, "through");
    assert_non_null(op_at(&f->pl, PLAN_BIND, f->dir));
    f->host.cwd = f->ws;
}

/* ---- the working directory ------------------------------------------------------- */

static void test_cwd_under_workspace(void **state)
{
    fixture *f = *state;
    mk(f, "ws/deep");
    mk(f, "ws/deep/er");
    char *d = fx(f, "ws/deep/er");
    f->host.cwd = d;
    assert_int_equal(cordon_policy_set_workspace(f->p, f->ws, &f->err), 0);
    build_ok(f);
    assert_string_equal(f->pl.cwd, d);
    free(d);
}

static void test_cwd_hidden(void **state)
{
    fixture *f = *state;
    mk(f, "ws/secret");
    mk(f, "ws/secret/in");
    char *in = fx(f, "ws/secret/in");
    assert_int_equal(cordon_policy_set_workspace(f->p, f->ws, &f->err), 0);
    f->host.cwd = in;
    rule(f, "ws/secret", CORDON_ACCESS_NONE);
    build_fails(f);
    assert_contains(f->err.message, in);
    assert_contains(f->err.message, "is hidden");

    /* the hidden path itself */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->host.cwd = f->ws;
    char *s = fx(f, "ws/secret");
    assert_int_equal(cordon_policy_set_cwd(f->p, s, &f->err), 0);
    rule(f, "ws/secret", CORDON_ACCESS_NONE);
    build_fails(f);
    assert_contains(f->err.message, "is hidden");
    assert_string_equal(f->err.option, "chdir"); /* the caller names its flag for it */
    free(s);
    free(in);
}

static void test_cwd_outside_every_rule(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_no_workspace(f->p, true, &f->err), 0);
    build_fails(f);
    assert_contains(f->err.message, f->ws);
    assert_contains(f->err.message, "would not be visible");

    /* with the system base, but outside it */
    fresh_policy(f, CORDON_BASE_EMPTY);
    f->p->base = CORDON_BASE_SYSTEM;
    f->p->no_workspace = true;
    build_fails(f);
    assert_contains(f->err.message, "would not be visible");

    /* --chdir outside every rule */
    fresh_policy(f, CORDON_BASE_EMPTY);
    mk(f, "elsewhere");
    char *e = fx(f, "elsewhere");
    assert_int_equal(cordon_policy_set_cwd(f->p, e, &f->err), 0);
    build_fails(f);
    assert_contains(f->err.message, e);
    assert_string_equal(f->err.option, "chdir"); /* the caller names its flag for it */
    free(e);
}

static void test_cwd_visible_elsewhere(void **state)
{
    fixture *f = *state;
    /* inside the base */
    f->p->base = CORDON_BASE_SYSTEM;
    assert_int_equal(cordon_policy_set_cwd(f->p, "/usr", &f->err), 0);
    build_ok(f);
    assert_string_equal(f->pl.cwd, "/usr");

    /* exactly the private /tmp */
    fresh_policy(f, CORDON_BASE_EMPTY);
    assert_int_equal(cordon_policy_set_cwd(f->p, "/tmp", &f->err), 0);
    build_ok(f);
    assert_string_equal(f->pl.cwd, "/tmp");

    /* exactly the private HOME, even though it does not exist on the host */
    fresh_policy(f, CORDON_BASE_EMPTY);
    assert_int_equal(cordon_policy_set_cwd(f->p, FAKE_HOME, &f->err), 0);
    build_ok(f);
    assert_string_equal(f->pl.cwd, FAKE_HOME);
}

static void test_cwd_not_a_visible_directory(void **state)
{
    fixture *f = *state;
    /* below the private /tmp but not the tmpfs itself: empty there */
    assert_int_equal(cordon_policy_set_cwd(f->p, "/tmp/nonexistent-cordon-unit", &f->err), 0);
    build_fails(f);

    /* a file */
    fresh_policy(f, CORDON_BASE_EMPTY);
    touch(f, "ws/file");
    char *file = fx(f, "ws/file");
    assert_int_equal(cordon_policy_set_cwd(f->p, file, &f->err), 0);
    build_fails(f);
    free(file);

    /* missing below a shown path */
    fresh_policy(f, CORDON_BASE_EMPTY);
    char *gone = fx(f, "ws/gone");
    assert_int_equal(cordon_policy_set_cwd(f->p, gone, &f->err), 0);
    build_fails(f);
    assert_contains(f->err.message, "does not exist");
    free(gone);
}

/* ---- the rest of the view -------------------------------------------------------- */

static void test_dev_proc_network(void **state)
{
    fixture *f = *state;
    build_ok(f);
    assert_non_null(op_at(&f->pl, PLAN_DEV, "/dev"));
    assert_non_null(op_at(&f->pl, PLAN_PROC, "/proc"));
    assert_true(f->pl.proc);
    assert_int_equal(f->pl.network, CORDON_NETWORK_NONE);

    fresh_policy(f, CORDON_BASE_EMPTY);
    assert_int_equal(cordon_policy_set_proc(f->p, false, &f->err), 0);
    assert_int_equal(cordon_policy_set_network(f->p, CORDON_NETWORK_HOST, &f->err), 0);
    build_ok(f);
    assert_false(f->pl.proc);
    assert_int_equal(op_index(&f->pl, PLAN_PROC, "/proc"), -1);
    assert_non_null(op_at(&f->pl, PLAN_DEV, "/dev"));
    assert_int_equal(f->pl.network, CORDON_NETWORK_HOST);
}

static void test_base_system_plan(void **state)
{
    fixture *f = *state;
    f->p->base = CORDON_BASE_SYSTEM;
    build_ok(f);
    const plan_op *usr = op_at(&f->pl, PLAN_BIND, "/usr");
    assert_true(usr->read_only);
    assert_true(usr->is_dir);
    assert_string_equal(usr->src, "/usr");
    struct stat st;
    assert_int_equal(stat("/usr", &st), 0);
    assert_true(usr->dev == st.st_dev && usr->ino == st.st_ino);
    assert_string_equal(usr->why, "base system");
    if (lstat("/bin", &st) == 0 && S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink("/bin", target, sizeof target - 1);
        assert_true(n > 0);
        target[n] = '\0';
        const plan_op *l = op_at(&f->pl, PLAN_SYMLINK, "/bin");
        assert_string_equal(l->src, target);
        assert_int_equal(op_index(&f->pl, PLAN_BIND, "/bin"), -1);
    }
    /* the workspace stays writable */
    assert_false(op_at(&f->pl, PLAN_BIND, f->ws)->read_only);
    /* nothing else of the host: /var, /home, /root are not shown */
    assert_null(plan_covering(&f->pl, "/var/lib"));
    assert_null(plan_covering(&f->pl, "/root"));
}

static void test_base_empty_plan(void **state)
{
    fixture *f = *state;
    build_ok(f);
    for (size_t i = 0; i < f->pl.n_ops; i++) {
        const plan_op *o = &f->pl.ops[i];
        assert_int_not_equal(o->kind, PLAN_SYMLINK);
        if (o->kind == PLAN_BIND)
            assert_string_equal(o->dest, f->ws);
    }
    assert_null(plan_covering(&f->pl, "/usr/bin"));
}

static void test_read_only_plan(void **state)
{
    fixture *f = *state;
    mk(f, "extra");
    assert_int_equal(cordon_policy_set_read_only(f->p, true, &f->err), 0);
    rule(f, "extra", CORDON_ACCESS_WRITE);
    build_ok(f);
    assert_true(op_at(&f->pl, PLAN_BIND, f->ws)->read_only);
    assert_true(op_rel(f, PLAN_BIND, "extra")->read_only);
    for (size_t i = 0; i < f->pl.n_ops; i++)
        if (f->pl.ops[i].kind == PLAN_BIND)
            assert_true(f->pl.ops[i].read_only);
    /* private HOME and TMPDIR stay writable tmpfs */
    assert_non_null(op_at(&f->pl, PLAN_TMPFS, f->pl.home));
    assert_non_null(op_at(&f->pl, PLAN_TMPFS, f->pl.tmpdir));
}

static void test_rule_on_root_plan(void **state)
{
    fixture *f = *state;
    f->p->no_workspace = true;
    f->host.cwd = "/usr";
    rule_abs(f, "/", CORDON_ACCESS_READ);
    build_ok(f);
    assert_true(op_at(&f->pl, PLAN_BIND, "/usr")->read_only);
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/"), -1);
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/proc"), -1);
    assert_int_equal(op_index(&f->pl, PLAN_BIND, "/dev"), -1);
    assert_non_null(op_at(&f->pl, PLAN_PROC, "/proc"));
    assert_non_null(op_at(&f->pl, PLAN_DEV, "/dev"));
    assert_string_equal(f->pl.tmpdir, PLAN_PRIVATE_TMP);
    assert_string_equal(f->pl.cwd, "/usr");
}

static void test_settings_rule_why(void **state)
{
    fixture *f = *state;
    mk(f, "ws/sub");
    policy_add_rule(f->p, "sub", CORDON_ACCESS_READ, ORIGIN_SETTINGS, "s.json", 9, true);
    build_ok(f);
    assert_string_equal(op_rel(f, PLAN_BIND, "ws/sub")->why, "s.json:9");
    assert_true(op_rel(f, PLAN_BIND, "ws/sub")->read_only);
}

static void test_plan_covering(void **state)
{
    fixture *f = *state;
    plan pl = {0};
    assert_null(plan_covering(&pl, "/x"));
    mk(f, "a");
    rule(f, "a", CORDON_ACCESS_READ);
    rule(f, "a/missing", CORDON_ACCESS_READ); /* a note: skipped */
    build_ok(f);
    const plan_op *a = op_rel(f, PLAN_BIND, "a");
    char *p = fx(f, "a/missing/x");
    assert_ptr_equal(plan_covering(&f->pl, p), a);
    free(p);
    p = fx(f, "ab");
    assert_ptr_not_equal(plan_covering(&f->pl, p), a); /* "/x/ab" is not below "/x/a" */
    free(p);
    assert_null(plan_covering(&f->pl, "/nonexistent-cordon-unit"));
    assert_ptr_equal(plan_covering(&f->pl, "/dev/null"), op_at(&f->pl, PLAN_DEV, "/dev"));
    assert_null(plan_covering(&f->pl, "/"));
}

/* The isolation is an input of the plan: under Landlock the plan carries the winning rules
 * (what confine/llonly.c enforces, with nothing else of the resolved policy), and with
 * namespaces it carries none. */
static void test_landlock_rules_in_plan(void **state)
{
    fixture *f = *state;
    mk(f, "ws/ro");
    rule(f, "ws/ro", CORDON_ACCESS_READ);
    rule(f, "ws/ro", CORDON_ACCESS_NONE); /* wins at equal path: the read one is shadowed */
    rule(f, "ws/gone", CORDON_ACCESS_NONE);
    resolve_ok(f);
    plan_input in = plan_input_of(f->p, CORDON_ISOLATION_LANDLOCK);
    if (plan_build(&f->r, &in, &f->pl, &f->err) < 0)
        fail_msg("plan_build: %s", f->err.message);
    f->have_pl = true;
    assert_int_equal(f->pl.isolation, CORDON_ISOLATION_LANDLOCK);
    size_t winners = 0;
    for (size_t i = 0; i < f->r.n_rules; i++)
        winners += !f->r.rules[i].shadowed;
    assert_int_equal(f->pl.n_rules, winners);
    char *ro = fx(f, "ws/ro"), *gone = fx(f, "ws/gone");
    int seen_ro = 0, seen_gone = 0;
    for (size_t i = 0; i < f->pl.n_rules; i++) {
        const plan_rule *x = &f->pl.rules[i];
        if (strcmp(x->path, ro) == 0) {
            seen_ro++;
            assert_int_equal(x->access, CORDON_ACCESS_NONE);
            assert_true(x->exists && x->is_dir);
        } else if (strcmp(x->path, gone) == 0) {
            seen_gone++;
            assert_false(x->exists);
        }
        assert_non_null(x->why);
    }
    assert_int_equal(seen_ro, 1);
    assert_int_equal(seen_gone, 1);
    assert_false(f->pl.list_root); /* not --base host */
    free(ro);
    free(gone);

    /* positive control: the same policy with namespaces carries no rules */
    plan_free(&f->pl);
    f->have_pl = false;
    plan_ok(f);
    assert_int_equal(f->pl.isolation, CORDON_ISOLATION_NAMESPACES);
    assert_int_equal(f->pl.n_rules, 0);
    assert_null(f->pl.rules);
}

/* --base host under Landlock: "/" itself may be listed unless a rule names it. */
static void test_landlock_list_root(void **state)
{
    fixture *f = *state;
    fresh_policy(f, CORDON_BASE_HOST);
    resolve_ok(f);
    plan_input in = plan_input_of(f->p, CORDON_ISOLATION_LANDLOCK);
    if (plan_build(&f->r, &in, &f->pl, &f->err) < 0)
        fail_msg("plan_build: %s", f->err.message);
    f->have_pl = true;
    bool root_rule = false;
    for (size_t i = 0; i < f->pl.n_rules; i++)
        root_rule |= strcmp(f->pl.rules[i].path, "/") == 0;
    assert_true(f->pl.list_root != root_rule);
    assert_true(f->pl.n_rules > 0);
}

/* plan_seal (plan/seal.c): the plan made final, its hash taking in every field a later
 * stage reads, so that the check before the exec (supervise/child.c) fails on any
 * change.  Each change below is undone after, and the plan is intact again (the positive
 * control: the hash is stable over an unchanged plan). */
static void test_seal(void **state)
{
    fixture *f = *state;
    assert_int_equal(cordon_policy_set_timeout(f->p, 7, &f->err), 0);
    assert_int_equal(cordon_policy_add_env(f->p, "A=1", &f->err), 0);
    build_ok(f);
    plan *pl = &f->pl;
    assert_true(pl->timeout == 7); /* the timeout is the plan's */
    assert_false(plan_intact(pl)); /* not sealed yet */
    char path[] = "PATH=/bin", secret[] = "SECRET=x";
    char *host_env[] = {path, secret, NULL};
    pl->env = env_build(f->p, host_env, pl->home, pl->tmpdir);
    pl->home_fallback = xstrdup("/fallback-home");
    strv_push(&pl->warnings, xstrdup("a warning"));
    plan_seal(pl);
    assert_true(plan_intact(pl));
    assert_int_not_equal(pl->sealed, 0);
    /* the environment for a home the kernel would not overlay: HOME moved, the rest kept */
    assert_int_equal(pl->env_home_fallback.n, pl->env.n);
    bool moved = false;
    for (size_t i = 0; i < pl->env.n; i++) {
        bool home = strncmp(pl->env.v[i], "HOME=", 5) == 0;
        moved |= home && strcmp(pl->env_home_fallback.v[i], "HOME=/fallback-home") == 0;
        if (!home)
            assert_string_equal(pl->env_home_fallback.v[i], pl->env.v[i]);
    }
    assert_true(moved);
    assert_null(pl->env_home_fallback.v[pl->env_home_fallback.n]);

#define FLIP_BYTE(s)                   \
    do {                               \
        (s)[0] ^= 1;                   \
        assert_false(plan_intact(pl)); \
        (s)[0] ^= 1;                   \
        assert_true(plan_intact(pl));  \
    } while (0)
#define FLIP_BOOL(b)                   \
    do {                               \
        (b) = !(b);                    \
        assert_false(plan_intact(pl)); \
        (b) = !(b);                    \
        assert_true(plan_intact(pl));  \
    } while (0)
    assert_true(pl->n_ops > 0);
    FLIP_BYTE(pl->ops[0].dest);
    FLIP_BYTE(pl->ops[pl->n_ops - 1].dest);
    FLIP_BOOL(pl->ops[0].read_only);
    FLIP_BOOL(pl->ops[0].in_view);
    assert_true(pl->n_cc_rules > 0); /* the workspace's protected names */
    FLIP_BYTE(pl->cc_rules[0].path);
    FLIP_BYTE(pl->cc_rules[pl->n_cc_rules - 1].why);
    FLIP_BYTE(pl->env.v[0]);
    FLIP_BYTE(pl->env.v[pl->env.n - 1]);
    FLIP_BYTE(pl->env_home_fallback.v[0]);
    FLIP_BYTE(pl->cwd);
    FLIP_BYTE(pl->home);
    FLIP_BYTE(pl->warnings.v[0]);
    FLIP_BOOL(pl->proc);
    FLIP_BOOL(pl->bare);
    FLIP_BOOL(pl->net.proxy);
    FLIP_BOOL(pl->no_nested);
#undef FLIP_BYTE
#undef FLIP_BOOL
    pl->timeout = 8;
    assert_false(plan_intact(pl));
    pl->timeout = 7;
    pl->limits.v[CORDON_LIMIT_PIDS] = 5;
    assert_false(plan_intact(pl));
    pl->limits.v[CORDON_LIMIT_PIDS] = 0;
    pl->isolation = CORDON_ISOLATION_LANDLOCK;
    assert_false(plan_intact(pl));
    pl->isolation = CORDON_ISOLATION_NAMESPACES;
    assert_true(plan_intact(pl));
    /* an environment entry added, or one taken away */
    strv_push(&pl->env, xstrdup("B=2"));
    assert_false(plan_intact(pl));
    free(pl->env.v[--pl->env.n]);
    pl->env.v[pl->env.n] = NULL;
    assert_true(plan_intact(pl));
    plan_free(pl);
    assert_false(plan_intact(pl));
}

static void test_kind_names_and_free(void **state)
{
    fixture *f = *state;
    assert_string_equal(plan_kind_name(PLAN_BIND), "bind");
    assert_string_equal(plan_kind_name(PLAN_HIDE), "hide");
    assert_string_equal(plan_kind_name(PLAN_TMPFS), "tmpfs");
    assert_string_equal(plan_kind_name(PLAN_SYMLINK), "symlink");
    assert_string_equal(plan_kind_name(PLAN_DEV), "dev");
    assert_string_equal(plan_kind_name(PLAN_PROC), "proc");
    assert_string_equal(plan_kind_name(PLAN_NOTE), "note");
    build_ok(f);
    plan_free(&f->pl);
    assert_null(f->pl.ops);
    assert_int_equal(f->pl.n_ops, 0);
    assert_null(f->pl.home);
    plan_free(&f->pl); /* twice is fine */
    plan_free(NULL);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, fixture_teardown)
    const struct CMUnitTest tests[] = {
        T(test_nested_order),
        T(test_nested_order_reversed),
        T(test_order_with_prefix_siblings),
        T(test_parents_first_with_base),
        T(test_conflicts_and_duplicates),
        T(test_missing_allow_is_a_note),
        T(test_missing_deny_under_writable_is_held),
        T(test_missing_deny_below_a_file_fails),
        T(test_missing_deny_elsewhere_is_a_note),
        T(test_missing_deny_in_read_only_workspace),
        T(test_missing_deny_under_missing_read_rule),
        T(test_protected_names_in_plan),
        T(test_git_dir_pinned),
        T(test_pinned_bind_never_dropped),
        T(test_private_tmp),
        T(test_added_tmpfs),
        T(test_holders),
        T(test_rule_covering_tmp),
        T(test_base_host_keeps_tmp_private),
        T(test_base_host_whole_root),
        T(test_base_host_per_entry),
        T(test_private_home_at_home_path),
        T(test_home_covered_by_rule),
        T(test_home_not_mountable_in_place),
        T(test_home_replaces_base_bind),
        T(test_redundant_read_below_base),
        T(test_redundant_write_below_write),
        T(test_cwd_under_workspace),
        T(test_cwd_hidden),
        T(test_cwd_outside_every_rule),
        T(test_cwd_visible_elsewhere),
        T(test_cwd_not_a_visible_directory),
        T(test_dev_proc_network),
        T(test_base_system_plan),
        T(test_base_empty_plan),
        T(test_read_only_plan),
        T(test_rule_on_root_plan),
        T(test_settings_rule_why),
        T(test_plan_covering),
        T(test_landlock_rules_in_plan),
        T(test_landlock_list_root),
        T(test_kind_names_and_free),
        T(test_seal),
    };
#undef T
    return cmocka_run_group_tests(tests, NULL, NULL);
}
