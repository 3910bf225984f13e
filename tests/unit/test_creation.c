// SPDX-License-Identifier: Apache-2.0
/* The git invariant of the creation control (doc/security.md, "The git invariant"),
 * checked exhaustively on a small model with the real decision (cc_decide) on a real
 * directory: every state a directory can reach from every start, through every
 * sequence of the operations a command has on it, gated by cc_decide exactly as the
 * supervisor gates them.
 *
 * A state is which of the marks (HEAD, objects, refs, commondir) and of the deciding
 * files (config, hooks) the directory holds, whether the directory was a git directory
 * at start (the plan's gitdir entries: known by identity), and whether a deciding file
 * was changed by the command since the start.  The operations: create a mark, remove a
 * mark (unlink and rmdir are not gated), create or write config, create hooks, make a
 * file inside hooks, and remove config or hooks.  Removing is not counted as a change
 * (doc/security.md says why).
 *
 * The invariant: no reachable state is git-like with a deciding file changed, nor a
 * git directory that was none at start (git would read its config there).  A
 * breadth-first search visits every reachable state (there are at most 256), applying
 * each operation to the directory on disk and asking cc_decide first.  A positive
 * control: with the gate off, the search does reach a violating state. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "supervise/creation.h"

#define N_MARKS 4
static const char *const marks[N_MARKS] = {"HEAD", "objects", "refs", "commondir"};

/* bits: 0-3 marks, 4 config, 5 hooks, 6 changed, 7 known at start, 8 a git directory
 * at start */
#define B_CONFIG  (1u << 4)
#define B_HOOKS   (1u << 5)
#define B_CHANGED (1u << 6)
#define B_KNOWN   (1u << 7)
#define B_WASGIT  (1u << 8)
#define N_STATES  512u

typedef struct model {
    char dir[64];
    cc_state *cc;
    bool gate;
} model;

static bool git_dir(unsigned s)
{
    return (s & 1u) && ((s & 8u) || ((s & 2u) && (s & 4u)));
}

static bool git_like(unsigned s)
{
    return git_dir(s) || ((s & 2u) && (s & 4u));
}

/* A violation: git-like with a deciding file changed, or a git directory (whose config
 * a host git reads there) that was none at start. */
static bool violates(unsigned s)
{
    return (git_like(s) && (s & B_CHANGED)) || (git_dir(s) && !(s & B_WASGIT));
}

static void rm_all(const char *dir)
{
    char p[128];
    for (int i = 0; i < N_MARKS; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, marks[i]);
        (void)unlink(p);
        (void)rmdir(p);
    }
    snprintf(p, sizeof p, "%s/config", dir);
    (void)unlink(p);
    snprintf(p, sizeof p, "%s/hooks/pre-commit", dir);
    (void)unlink(p);
    snprintf(p, sizeof p, "%s/hooks", dir);
    (void)rmdir(p);
}

/* Lay the directory out as state s says (marks as empty files or directories: their
 * type must not matter). */
static void lay_out(const model *m, unsigned s)
{
    rm_all(m->dir);
    char p[128];
    for (int i = 0; i < N_MARKS; i++) {
        if (!(s & (1u << i)))
            continue;
        snprintf(p, sizeof p, "%s/%s", m->dir, marks[i]);
        if (i == 1 || i == 2)
            assert_int_equal(mkdir(p, 0755), 0);
        else
            assert_int_equal(close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
    }
    if (s & B_CONFIG) {
        snprintf(p, sizeof p, "%s/config", m->dir);
        assert_int_equal(close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
    }
    if (s & B_HOOKS) {
        snprintf(p, sizeof p, "%s/hooks", m->dir);
        assert_int_equal(mkdir(p, 0755), 0);
    }
}

/* May the command do it?  (cc_decide on the directory, or in hooks.) */
static bool allowed(const model *m, const char *sub, const char *name, cc_act act)
{
    if (!m->gate)
        return true;
    char p[128];
    snprintf(p, sizeof p, "%s%s%s", m->dir, sub ? "/" : "", sub ? sub : "");
    int d = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
    assert_true(d >= 0);
    struct stat st;
    assert_int_equal(fstat(d, &st), 0);
    const char *why = cc_decide(m->cc, d, &st, name, act);
    close(d);
    return why == NULL;
}

#define N_OPS 13

/* Apply operation `op` to state s (laid out on disk): the next state, or s when the
 * gate refuses or the operation does not apply. */
static unsigned step(const model *m, unsigned s, int op)
{
    if (op < N_MARKS) { /* create a mark */
        if (s & (1u << op))
            return s;
        if (!allowed(m, NULL, marks[op], CC_CREATE))
            return s;
        unsigned n = s | (1u << op);
        if (op == 3) /* commondir is a deciding file too: it redirects git */
            n |= B_CHANGED;
        return n;
    }
    if (op < 2 * N_MARKS) /* remove a mark */
        return s & ~(1u << (op - N_MARKS));
    switch (op) {
    case 8: /* create or write config */
        if (!allowed(m, NULL, "config", (s & B_CONFIG) ? CC_WRITE : CC_CREATE))
            return s;
        return s | B_CONFIG | B_CHANGED;
    case 9: /* create hooks */
        if ((s & B_HOOKS) || !allowed(m, NULL, "hooks", CC_CREATE))
            return s;
        return s | B_HOOKS | B_CHANGED;
    case 10: /* a hook inside hooks */
        if (!(s & B_HOOKS) || !allowed(m, "hooks", "pre-commit", CC_CREATE))
            return s;
        return s | B_CHANGED;
    case 11: return s & ~B_CONFIG; /* unlink config: not a change (see above) */
    case 12: return s & ~B_HOOKS;
    }
    return s;
}

/* Every state reachable from every start; the number of violating ones. */
static unsigned explore(model *m)
{
    bool seen[N_STATES] = {false};
    unsigned queue[N_STATES], head = 0, tail = 0, bad = 0;
    struct stat st;
    assert_int_equal(stat(m->dir, &st), 0);
    for (unsigned s0 = 0; s0 < (1u << 6); s0++) {
        unsigned s = s0 | (git_dir(s0) ? B_WASGIT : 0);
        queue[tail++] = s; /* not known at start */
        seen[s] = true;
        if (git_dir(s)) { /* a git directory at start may be known */
            queue[tail++] = s | B_KNOWN;
            seen[s | B_KNOWN] = true;
        }
    }
    while (head < tail) {
        unsigned s = queue[head++];
        if (violates(s))
            bad++;
        m->cc->n_gitdirs = 0;
        if (s & B_KNOWN) {
            m->cc->gitdirs[0].dev = st.st_dev;
            m->cc->gitdirs[0].ino = st.st_ino;
            m->cc->n_gitdirs = 1;
        }
        lay_out(m, s); /* step() only asks: the directory stays as s says */
        for (int op = 0; op < N_OPS; op++) {
            unsigned n = step(m, s, op);
            if (!seen[n]) {
                seen[n] = true;
                queue[tail++] = n;
            }
        }
    }
    return bad;
}

static int setup(void **state)
{
    model *m = calloc(1, sizeof *m);
    assert_non_null(m);
    snprintf(m->dir, sizeof m->dir, "/tmp/cordon-test-creation.XXXXXX");
    assert_non_null(mkdtemp(m->dir));
    m->cc = calloc(1, sizeof *m->cc);
    assert_non_null(m->cc);
    struct stat st;
    assert_int_equal(stat(m->dir, &st), 0);
    m->cc->devs[0] = st.st_dev; /* a host file system: the git rules apply */
    m->cc->n_devs = 1;
    *state = m;
    return 0;
}

static int teardown(void **state)
{
    model *m = *state;
    rm_all(m->dir);
    rmdir(m->dir);
    free(m->cc);
    free(m);
    return 0;
}

static void test_invariant_holds(void **state)
{
    model *m = *state;
    m->gate = true;
    assert_int_equal(explore(m), 0);
}

static void test_ungated_violates(void **state)
{
    /* the positive control: the same search without the gate finds violations */
    model *m = *state;
    m->gate = false;
    assert_true(explore(m) > 0);
}

static void test_marks_any_type(void **state)
{
    /* objects as a symlink, refs as a socket-like file: still git-like, config refused */
    model *m = *state;
    char p[128];
    rm_all(m->dir);
    snprintf(p, sizeof p, "%s/objects", m->dir);
    assert_int_equal(symlink("elsewhere", p), 0);
    snprintf(p, sizeof p, "%s/refs", m->dir);
    assert_int_equal(close(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)), 0);
    m->gate = true;
    assert_false(allowed(m, NULL, "config", CC_CREATE));
    assert_false(allowed(m, NULL, "hooks", CC_CREATE));
    assert_true(allowed(m, NULL, "README", CC_CREATE));
    snprintf(p, sizeof p, "%s/objects", m->dir);
    assert_int_equal(unlink(p), 0);
    /* no longer git-like: config may be written, but objects may not come back */
    assert_true(allowed(m, NULL, "config", CC_CREATE));
    assert_false(allowed(m, NULL, "objects", CC_CREATE));
    rm_all(m->dir);
}

static void test_private_file_system(void **state)
{
    /* a file system that is not the host's (not in devs, no mount known): with no
     * thread to ask, it is the host's (fail closed) */
    model *m = *state;
    m->cc->n_devs = 0;
    m->gate = true;
    assert_false(allowed(m, NULL, ".git", CC_CREATE));
    struct stat st;
    assert_int_equal(stat(m->dir, &st), 0);
    m->cc->devs[0] = st.st_dev;
    m->cc->n_devs = 1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_invariant_holds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_ungated_violates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_marks_any_type, setup, teardown),
        cmocka_unit_test_setup_teardown(test_private_file_system, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
