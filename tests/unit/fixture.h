// SPDX-License-Identifier: Apache-2.0
/* The fixture shared by the unit tests of resolution, the plan, protection and stubs: a
 * fresh mkdtemp() directory (canonicalised, so that expected paths do not depend on
 * symlinks above it, and removed afterwards), helpers that make directories, files and
 * symlinks in it, a cordon_policy with rules on paths in it, and the resolved policy and
 * plan built from that, with look-ups of operations by path.
 *
 * Compiled into every unit test executable (tests/meson.build); include it after
 * <cmocka.h>. */
#ifndef CORDON_TESTS_UNIT_FIXTURE_H
#define CORDON_TESTS_UNIT_FIXTURE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "plan/plan.h"
#include "policy/policy.h"
#include "policy/resolve.h"
#include "util/err.h"

typedef struct fixture {
    char dir[PATH_MAX];      /* canonical */
    char *ws;                /* DIR/ws, the workspace and current directory (FX_WS) */
    char *home;              /* DIR/home (FX_HOME) */
    char *w;                 /* DIR/w (FX_W) */
    struct cordon_policy *p; /* FX_POLICY: base "empty"; NULL otherwise */
    host_info host;          /* FX_POLICY: home = home (or NULL), cwd = ws, root = "/" */
    resolved r;
    bool have_r;
    plan pl;
    bool have_pl;
    cordon_error err;
    char status[64]; /* stubs_create: one y/n per stub op */
    const void *row; /* the test's initial state (a table row), or NULL */
} fixture;

/* What fixture_setup() makes in the fixture directory. */
enum {
    FX_WS = 1 << 0,
    FX_HOME = 1 << 1,
    FX_W = 1 << 2,
    FX_POLICY = 1 << 3,
};

#define assert_contains(hay, needle)                                     \
    do {                                                                 \
        if (!strstr((hay), (needle)))                                    \
            fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle)); \
    } while (0)

/* A cmocka setup: a fixture in a fresh $TMPDIR/cordon-test-NAME.XXXXXX (TMPDIR only when
 * absolute, else /tmp); *state (the initial state) becomes f->row, then *state = f. */
int fixture_setup(void **state, const char *name, unsigned flags);
/* The matching teardown: frees what the fixture holds and removes the directory (made
 * writable and searchable first: stubs are mode 0400). */
int fixture_teardown(void **state);

/* ---- files ------------------------------------------------------------------------ */

char *fx(const fixture *f, const char *rel);                          /* DIR/rel, malloc'ed */
void mk(const fixture *f, const char *rel);                           /* a directory, mode 0755 (with the umask) */
void mk_mode(const fixture *f, const char *rel, mode_t mode);         /* exactly `mode` */
void touch(const fixture *f, const char *rel);                        /* a new empty file */
void write_file(const fixture *f, const char *rel, const char *text); /* a new file */
void ln(const fixture *f, const char *target, const char *rel);       /* a symlink */

/* ---- the policy, resolved and planned --------------------------------------------- */

void drop_results(fixture *f);                   /* free the resolved policy and the plan */
void fresh_policy(fixture *f, cordon_base base); /* a new, empty policy */
/* A flag rule (--deny, --allow-ro, --allow) on an absolute path / on DIR/rel (rel may
 * carry "..", "//", a trailing "/": kept as given). */
void rule_abs(fixture *f, const char *path, cordon_access a);
void rule(fixture *f, const char *rel, cordon_access a);
void resolve_ok(fixture *f); /* resolve_policy() into f->r, or fail */
/* The plan's input from the fixture's policy, with namespaces (a pointer valid in the
 * enclosing block). */
#define FX_INPUT(f) ((const plan_input *)(plan_input[]){plan_input_of((f)->p, CORDON_ISOLATION_NAMESPACES)})
void plan_ok(fixture *f); /* resolve_ok(), then plan_build() into f->pl, or fail */

/* ---- operations of a plan ----------------------------------------------------------- */

/* Index of the operation of `kind` at `dest`, or -1; fails when there are two. */
long op_index(const plan *pl, plan_kind kind, const char *dest);
/* The operation of `kind` at `dest`, or NULL; fails when there are two. */
const plan_op *op_find(const plan *pl, plan_kind kind, const char *dest);
/* The operation of `kind` at `dest` / at DIR/rel; fails when there is none or two. */
const plan_op *op_at(const plan *pl, plan_kind kind, const char *dest);
const plan_op *op_rel(const fixture *f, plan_kind kind, const char *rel);
/* The creation control's rule of `kind` at `path` (at DIR/rel), or NULL (fails); fails
 * when there are two. */
const plan_cc_rule *cc_find(const plan *pl, plan_cc_kind kind, const char *path);
const plan_cc_rule *cc_rel(const fixture *f, plan_cc_kind kind, const char *rel);
/* op_index() at DIR/rel in f->pl. */
long idx_rel(const fixture *f, plan_kind kind, const char *rel);

#endif
