// SPDX-License-Identifier: Apache-2.0
/* The creation control's decision as a pure function (cc_judge, src/supervise/cc_decide.c):
 * the verdict from the rules held in memory and the answers to its look-ups, here given
 * by the test instead of a file system (doc/security.md, "The creation control" and
 * "The git invariant").  Every combination of the answers, for each kind of name and
 * each act, against what the rules say; and that a look-up is asked only when the
 * verdict depends on it (the cost of a call that cannot matter). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "supervise/creation.h"

enum { A_HOST, A_BECOMES, A_GUARDED, A_LIFTED, A_HOOKS, N_ANSWERS };

typedef struct fake {
    bool answer[N_ANSWERS];
    unsigned asked[N_ANSWERS];
    const char *ll; /* the Landlock rule's answer */
    unsigned ll_asked;
} fake;

static const char *f_ll(void *ctx, bool names)
{
    (void)names;
    fake *f = ctx;
    f->ll_asked++;
    return f->ll;
}

#define ANSWER(fn, i)         \
    static bool fn(void *ctx) \
    {                         \
        fake *f = ctx;        \
        f->asked[i]++;        \
        return f->answer[i];  \
    }
ANSWER(f_host, A_HOST)
ANSWER(f_becomes, A_BECOMES)
ANSWER(f_guarded, A_GUARDED)
ANSWER(f_lifted, A_LIFTED)
ANSWER(f_hooks, A_HOOKS)

static const char *judge(const cc_state *cc, const struct stat *dst, const char *name, cc_act act, fake *f)
{
    const cc_look look = {.ctx = f,
                          .ll_rule = f_ll,
                          .host = f_host,
                          .becomes_git_like = f_becomes,
                          .guarded = f_guarded,
                          .name_lifted = f_lifted,
                          .hooks_dir = f_hooks};
    return cc_judge(cc, dst, name, act, &look);
}

static int setup(void **state)
{
    cc_state *cc = calloc(1, sizeof *cc);
    assert_non_null(cc);
    *state = cc;
    return 0;
}

static int teardown(void **state)
{
    free(*state);
    return 0;
}

static const struct stat dir_st = {.st_dev = 7, .st_ino = 42, .st_mode = S_IFDIR | 0755};
static const char *const names[] = {"a.txt", ".git", "HEAD", "objects", "config", "hooks", "info", ".claude"};
static const cc_act acts[] = {CC_CREATE, CC_WRITE, CC_SOURCE};

static bool sensitive(const char *name)
{
    static const char *const s[] = {"config", "config.worktree", "commondir", "gitdir", "hooks",
                                    "info",   "worktrees",       "modules"};
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        if (strcmp(s[i], name) == 0)
            return true;
    return false;
}

/* What the rules of creation.h say, written out from them. */
static bool refused_by_rules(const fake *f, const char *name, cc_act act, bool known_gitdir, bool dir_lifted)
{
    if (!f->answer[A_HOST])
        return false;
    if (act != CC_SOURCE && strcmp(name, ".git") == 0)
        return true;
    if (act == CC_CREATE && !known_gitdir && f->answer[A_BECOMES])
        return true;
    if (sensitive(name) && f->answer[A_GUARDED] && !f->answer[A_LIFTED])
        return true;
    return !dir_lifted && f->answer[A_HOOKS];
}

/* Every combination of the answers, names, acts, a directory known as a git directory
 * at start or not, lifted or not. */
static void test_every_answer(void **state)
{
    cc_state *cc = *state;
    unsigned cases = 0, refusals = 0;
    for (int known = 0; known < 2; known++)
        for (int lifted = 0; lifted < 2; lifted++) {
            cc->n_gitdirs = (size_t)known;
            cc->gitdirs[0].dev = dir_st.st_dev;
            cc->gitdirs[0].ino = dir_st.st_ino;
            cc->n_lifted = (size_t)lifted;
            cc->lifted[0].dev = dir_st.st_dev;
            cc->lifted[0].ino = dir_st.st_ino;
            for (unsigned bits = 0; bits < 1u << N_ANSWERS; bits++)
                for (size_t n = 0; n < sizeof names / sizeof names[0]; n++)
                    for (size_t a = 0; a < sizeof acts / sizeof acts[0]; a++) {
                        fake f = {0};
                        for (int i = 0; i < N_ANSWERS; i++)
                            f.answer[i] = bits & (1u << i);
                        bool want = refused_by_rules(&f, names[n], acts[a], known, lifted);
                        const char *why = judge(cc, &dir_st, names[n], acts[a], &f);
                        if ((why != NULL) != want)
                            fail_msg("%s act %d answers %#x known %d lifted %d: %s, want %s", names[n], (int)acts[a],
                                     bits, known, lifted, why ? why : "allowed", want ? "refused" : "allowed");
                        for (int i = 0; i < N_ANSWERS; i++)
                            assert_true(f.asked[i] <= 1); /* each look-up at most once */
                        assert_int_equal(f.ll_asked, 0);  /* not --isolation landlock */
                        cases++;
                        refusals += want;
                    }
        }
    assert_int_equal(cases, 4 * 32 * 8 * 3);
    assert_true(refusals > 0 && refusals < cases); /* both verdicts are reached */
}

/* A plain name in a directory that is neither git-like nor hooks costs the look-ups it
 * must (host, becoming git-like, hooks), never the guarded and lifted ones. */
static void test_asks_what_matters(void **state)
{
    cc_state *cc = *state;
    fake f = {.answer = {[A_HOST] = true}};
    assert_null(judge(cc, &dir_st, "a.txt", CC_CREATE, &f));
    assert_int_equal(f.asked[A_GUARDED], 0);
    assert_int_equal(f.asked[A_LIFTED], 0);
    assert_int_equal(f.asked[A_HOOKS], 1);
    /* on a private file system nothing after "host" is asked */
    fake p = {0};
    assert_null(judge(cc, &dir_st, "config", CC_WRITE, &p));
    for (int i = A_BECOMES; i < N_ANSWERS; i++)
        assert_int_equal(p.asked[i], 0);
}

/* The plan's protected names are refused on any file system, and only their creation. */
static void test_rules(void **state)
{
    cc_state *cc = *state;
    cc->n_rules = 1;
    cc->rules[0].dev = dir_st.st_dev;
    cc->rules[0].ino = dir_st.st_ino;
    strcpy(cc->rules[0].name, ".claude");
    cc->rules[0].why = "protected";
    fake f = {0}; /* a private file system */
    assert_string_equal(judge(cc, &dir_st, ".claude", CC_CREATE, &f), "protected");
    assert_null(judge(cc, &dir_st, ".claude", CC_WRITE, &f));
    assert_null(judge(cc, &dir_st, ".claudex", CC_CREATE, &f));
    struct stat other = dir_st;
    other.st_ino = 43;
    assert_null(judge(cc, &other, ".claude", CC_CREATE, &f));
}

/* --isolation landlock: the plan's rule answers first, and with `names` for a creation. */
static void test_landlock_first(void **state)
{
    cc_state *cc = *state;
    cc->ll_mode = true;
    fake f = {.ll = "read-only", .answer = {[A_HOST] = true}};
    assert_string_equal(judge(cc, &dir_st, "a.txt", CC_CREATE, &f), "read-only");
    assert_int_equal(f.asked[A_HOST], 0);
    fake g = {.answer = {[A_HOST] = true}};
    assert_null(judge(cc, &dir_st, "a.txt", CC_WRITE, &g));
    assert_int_equal(g.ll_asked, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_asks_what_matters, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rules, setup, teardown),
        cmocka_unit_test_setup_teardown(test_landlock_first, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
