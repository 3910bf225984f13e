// SPDX-License-Identifier: Apache-2.0
/* The resolved rule set and the queries on it: what resolve.c builds and protect.c adds
 * to, and what plan/ reads.  Both resolve.c and protect.c call these; neither calls the
 * other back (resolve.c calls protect.c). */
#include "policy/rules.h"

#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

int access_rank(cordon_access a)
{
    switch (a) {
    case CORDON_ACCESS_NONE: return 3;
    case CORDON_ACCESS_WRITE: return 2;
    case CORDON_ACCESS_READ: return 1;
    }
    return 0;
}

void rrule_clear(rrule *r)
{
    free(r->path);
    free(r->given);
    free(r->source);
    free(r->symlink);
    free(r->first_missing);
    strv_free(&r->crossed);
}

void resolved_free(resolved *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_rules; i++)
        rrule_clear(&r->rules[i]);
    free(r->rules);
    for (size_t i = 0; i < r->n_links; i++) {
        free(r->links[i].path);
        free(r->links[i].target);
        free(r->links[i].source);
    }
    free(r->links);
    for (size_t i = 0; i < r->n_notes; i++) {
        free(r->notes[i].path);
        free(r->notes[i].source);
        free(r->notes[i].why);
    }
    free(r->notes);
    strv_free(&r->gitdirs);
    for (size_t i = 0; i < r->n_hides; i++) {
        free(r->hides[i].path);
        free(r->hides[i].source);
    }
    free(r->hides);
    free(r->runtime_dir);
    free(r->home);
    free(r->workspace);
    free(r->cwd);
    *r = (resolved){0};
}

/* A path with ".." after a component that does not exist means nothing to the kernel
 * today and, once the component is made, whatever it becomes (canon.h): refuse it rather
 * than let a rule rest on a lexical guess (--deny DIR/nope/../secret would hide nothing,
 * --allow-ro DIR/nope/../sub would leave sub writable).  `what` names the input. */
int resolve_refuse_dotdot(canon *c, const char *what, cordon_error *err)
{
    if (!c->dotdot_after_missing)
        return 0;
    err_set(err, CORDON_STAGE_RESOLVE, 0,
            "%s: '..' follows %s, which %s, so the kernel cannot resolve this path (and once it "
            "exists the path may name something else); write the path without '..'%s%s%s",
            what, c->first_missing, c->missing_under_file ? "is not a directory" : "does not exist",
            c->path ? " (perhaps " : "", c->path ? c->path : "", c->path ? ")" : "");
    canon_free(c);
    return -1;
}

int resolve_add_rule(resolved *r, const char *given, cordon_access access, rule_origin origin, const char *source,
                     int line, cordon_error *err)
{
    canon c;
    if (canon_resolve(given, &c, err) < 0) {
        if (line > 0)
            return err_wrap(err, "%s:%d: \"%s\"", source, line, given);
        return err_wrap(err, "%s %s", source, given);
    }
    return resolve_add_canon(r, given, &c, access, origin, source, line, err);
}

int resolve_add_canon(resolved *r, const char *given, canon *cp, cordon_access access, rule_origin origin,
                      const char *source, int line, cordon_error *err)
{
    canon c = *cp;
    *cp = (canon){0};
    if (c.dotdot_after_missing) {
        char *what = line > 0 ? xasprintf("%s:%d: \"%s\"", source, line, given) : xasprintf("%s %s", source, given);
        int ret = resolve_refuse_dotdot(&c, what, err);
        if (line > 0)
            err->stage = CORDON_STAGE_SETTINGS;
        free(what);
        return ret;
    }
    grow(&r->rules, &r->cap_rules, r->n_rules + 1, sizeof *r->rules);
    r->rules[r->n_rules++] = (rrule){
        .path = c.path,
        .given = xstrdup(given),
        .access = access,
        .origin = origin,
        .source = xstrdup(source),
        .line = line,
        .type = c.type,
        .dev = c.dev,
        .ino = c.ino,
        .symlink = c.symlink,
        .crossed = c.crossed,
        .first_missing = c.first_missing,
        .missing_under_file = c.missing_under_file,
    };
    return 0;
}

/* Does a rule other than the base name `path` or a directory above it? */
bool resolved_rule_covers(const resolved *r, const char *path)
{
    for (size_t i = 0; i < r->n_rules; i++) {
        rule_origin o = r->rules[i].origin;
        if (o != ORIGIN_BASE && o != ORIGIN_PROTECT && path_has_prefix(path, r->rules[i].path))
            return true;
    }
    return false;
}

bool resolved_shows(const resolved *r, const char *path)
{
    if (path_has_prefix(path, "/proc") || path_has_prefix(path, "/dev"))
        return false;
    const rrule *x = resolved_lookup(r, path);
    if (!x || x->access == CORDON_ACCESS_NONE)
        return false;
    /* the private /tmp and HOME are mounted over what a shallower rule shows there */
    if (path_has_prefix(path, "/tmp") && !path_has_prefix(x->path, "/tmp") && !resolved_rule_covers(r, "/tmp"))
        return false;
    if (private_home_at(r) && !r->home_cow && path_has_prefix(path, r->home) && !path_has_prefix(x->path, r->home))
        return false;
    return true;
}

bool private_home_at(const resolved *r)
{
    if (r->no_private_dirs)
        return false; /* the home shows as the view shows it */
    return r->home && !resolved_rule_covers(r, r->home) && strcmp(r->home, "/") != 0 &&
           !path_has_prefix(r->home, "/tmp") && !path_has_prefix(r->home, "/proc") && !path_has_prefix(r->home, "/dev");
}

static int cmp_rules(const void *a, const void *b)
{
    const rrule *x = a, *y = b;
    int c = path_cmp(x->path, y->path);
    if (c)
        return c;
    return access_rank(y->access) - access_rank(x->access);
}

void resolved_sort(resolved *r)
{
    if (r->n_rules == 0)
        return;
    qsort(r->rules, r->n_rules, sizeof *r->rules, cmp_rules);
    for (size_t i = 0; i < r->n_rules; i++)
        r->rules[i].shadowed = i > 0 && strcmp(r->rules[i].path, r->rules[i - 1].path) == 0;
    r->n_sorted = r->n_rules;
}

static bool lookup_takes(const rrule *x, bool with_missing)
{
    return !x->shadowed && (with_missing || x->type != FT_MISSING);
}

/* The first rule, in array order, whose path is exactly `path`. */
static const rrule *rule_exactly(const resolved *r, const char *path, bool with_missing)
{
    size_t sorted = r->n_sorted < r->n_rules ? r->n_sorted : r->n_rules;
    size_t lo = 0, hi = sorted;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (path_cmp(r->rules[mid].path, path) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < sorted && strcmp(r->rules[i].path, path) == 0; i++)
        if (lookup_takes(&r->rules[i], with_missing))
            return &r->rules[i];
    for (size_t i = sorted; i < r->n_rules; i++)
        if (strcmp(r->rules[i].path, path) == 0 && lookup_takes(&r->rules[i], with_missing))
            return &r->rules[i];
    return NULL;
}

const rrule *resolved_at_or_above(const resolved *r, const char *path, bool with_missing)
{
    if (path[0] != '/')
        return NULL;
    char *p = xstrdup(path);
    const rrule *hit = NULL;
    for (;;) {
        hit = rule_exactly(r, p, with_missing);
        if (hit || !path_to_parent(p))
            break;
    }
    free(p);
    return hit;
}

const rrule *resolved_lookup(const resolved *r, const char *path)
{
    return resolved_at_or_above(r, path, true);
}
