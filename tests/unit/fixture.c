// SPDX-License-Identifier: Apache-2.0
/* The shared unit-test fixture: see fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "util/path.h"
#include "util/strv.h"

/* ---- set-up and tear-down ----------------------------------------------------------- */

static char *fixture_subdir(fixture *f, const char *name)
{
    char *p = path_join(f->dir, name);
    if (mkdir(p, 0755) < 0) {
        free(p);
        return NULL;
    }
    return p;
}

int fixture_setup(void **state, const char *name, unsigned flags)
{
    fixture *f = xcalloc(1, sizeof *f);
    f->row = *state;
    const char *tmp = getenv("TMPDIR");
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/cordon-test-%s.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp", name);
    if (!mkdtemp(tmpl) || !realpath(tmpl, f->dir)) {
        free(f);
        return -1;
    }
    *state = f; /* from here on the teardown cleans up */
    if ((flags & FX_WS) && !(f->ws = fixture_subdir(f, "ws")))
        return -1;
    if ((flags & FX_HOME) && !(f->home = fixture_subdir(f, "home")))
        return -1;
    if ((flags & FX_W) && !(f->w = fixture_subdir(f, "w")))
        return -1;
    if (flags & FX_POLICY) {
        f->p = cordon_policy_new();
        /* most tests look only at their own rules */
        f->p->base = CORDON_BASE_EMPTY;
        f->host = (host_info){.home = f->home, .cwd = f->ws, .root = "/"};
    }
    return 0;
}

/* Stubs are mode 0400: make every directory writable and searchable before removing. */
static int unlock_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)ftw;
    if (type == FTW_D || type == FTW_DNR)
        chmod(path, (st->st_mode & 07777) | 0700);
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    return remove(path);
}

int fixture_teardown(void **state)
{
    fixture *f = *state;
    drop_results(f);
    plan_free(&f->pl); /* a plan made by hand (a no-op after drop_results()) */
    cordon_policy_free(f->p);
    nftw(f->dir, unlock_entry, 16, FTW_PHYS);
    int r = nftw(f->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    free(f->ws);
    free(f->home);
    free(f->w);
    free(f);
    return r;
}

/* ---- files ------------------------------------------------------------------------ */

char *fx(const fixture *f, const char *rel)
{
    return path_join(f->dir, rel);
}

void mk(const fixture *f, const char *rel)
{
    char *p = fx(f, rel);
    if (mkdir(p, 0755) < 0)
        fail_msg("mkdir %s: %s", p, strerror(errno));
    free(p);
}

void mk_mode(const fixture *f, const char *rel, mode_t mode)
{
    char *p = fx(f, rel);
    if (mkdir(p, mode) < 0 || chmod(p, mode) < 0)
        fail_msg("mkdir %s: %s", p, strerror(errno));
    free(p);
}

void write_file(const fixture *f, const char *rel, const char *text)
{
    char *p = fx(f, rel);
    int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0)
        fail_msg("create %s: %s", p, strerror(errno));
    size_t len = text ? strlen(text) : 0;
    if (len && write(fd, text, len) != (ssize_t)len)
        fail_msg("write %s: %s", p, strerror(errno));
    close(fd);
    free(p);
}

void touch(const fixture *f, const char *rel)
{
    write_file(f, rel, NULL);
}

void ln(const fixture *f, const char *target, const char *rel)
{
    char *p = fx(f, rel);
    if (symlink(target, p) < 0)
        fail_msg("symlink %s: %s", p, strerror(errno));
    free(p);
}

/* ---- the policy, resolved and planned --------------------------------------------- */

void drop_results(fixture *f)
{
    if (f->have_pl)
        plan_free(&f->pl);
    if (f->have_r)
        resolved_free(&f->r);
    f->have_pl = f->have_r = false;
}

void fresh_policy(fixture *f, cordon_base base)
{
    drop_results(f);
    cordon_policy_free(f->p);
    f->p = cordon_policy_new();
    f->p->base = base;
}

void rule_abs(fixture *f, const char *path, cordon_access a)
{
    const char *src = a == CORDON_ACCESS_NONE ? "--deny" : a == CORDON_ACCESS_READ ? "--allow-ro" : "--allow";
    if (cordon_policy_add_path(f->p, path, a, src, &f->err) < 0)
        fail_msg("add %s: %s", path, f->err.message);
}

void rule(fixture *f, const char *rel, cordon_access a)
{
    char *p = fx(f, rel);
    rule_abs(f, p, a);
    free(p);
}

void resolve_ok(fixture *f)
{
    drop_results(f);
    if (resolve_policy(f->p, &f->host, &f->r, &f->err) < 0)
        fail_msg("resolve_policy: %s", f->err.message);
    f->have_r = true;
}

void plan_ok(fixture *f)
{
    resolve_ok(f);
    if (plan_build(&f->r, FX_INPUT(f), &f->pl, &f->err) < 0)
        fail_msg("plan_build: %s", f->err.message);
    f->have_pl = true;
}

/* ---- operations of a plan ----------------------------------------------------------- */

long op_index(const plan *pl, plan_kind kind, const char *dest)
{
    long found = -1;
    for (size_t i = 0; i < pl->n_ops; i++)
        if (pl->ops[i].kind == kind && strcmp(pl->ops[i].dest, dest) == 0) {
            if (found >= 0)
                fail_msg("two %s operations at %s", plan_kind_name(kind), dest);
            found = (long)i;
        }
    return found;
}

const plan_op *op_find(const plan *pl, plan_kind kind, const char *dest)
{
    long i = op_index(pl, kind, dest);
    return i < 0 ? NULL : &pl->ops[i];
}

const plan_op *op_at(const plan *pl, plan_kind kind, const char *dest)
{
    long i = op_index(pl, kind, dest);
    if (i < 0)
        fail_msg("no %s operation at %s", plan_kind_name(kind), dest);
    return &pl->ops[i];
}

const plan_op *op_rel(const fixture *f, plan_kind kind, const char *rel)
{
    char *p = fx(f, rel);
    long i = op_index(&f->pl, kind, p);
    if (i < 0)
        fail_msg("no %s operation at %s", plan_kind_name(kind), p);
    free(p);
    return &f->pl.ops[i];
}

const plan_cc_rule *cc_find(const plan *pl, plan_cc_kind kind, const char *path)
{
    const plan_cc_rule *found = NULL;
    for (size_t i = 0; i < pl->n_cc_rules; i++)
        if (pl->cc_rules[i].kind == kind && strcmp(pl->cc_rules[i].path, path) == 0) {
            if (found)
                fail_msg("two %s rules at %s", plan_cc_kind_name(kind), path);
            found = &pl->cc_rules[i];
        }
    return found;
}

const plan_cc_rule *cc_rel(const fixture *f, plan_cc_kind kind, const char *rel)
{
    char *p = fx(f, rel);
    const plan_cc_rule *c = cc_find(&f->pl, kind, p);
    if (!c)
        fail_msg("no %s rule at %s", plan_cc_kind_name(kind), p);
    free(p);
    return c;
}

long idx_rel(const fixture *f, plan_kind kind, const char *rel)
{
    char *p = fx(f, rel);
    long i = op_index(&f->pl, kind, p);
    free(p);
    return i;
}
