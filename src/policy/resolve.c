// SPDX-License-Identifier: Apache-2.0
#include "policy/resolve.h"
#include "policy/gittop.h"
#include "policy/glob.h"
#include "policy/protect.h"
#include "policy/toolchains.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <stdio.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

/* The directories of --base system, in the order the contract lists them. */
static const char *const system_dirs[] = {"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc"};

static void add_link(resolved *r, const char *path, const char *target, const char *source)
{
    for (size_t i = 0; i < r->n_links; i++)
        if (strcmp(r->links[i].path, path) == 0)
            return;
    grow(&r->links, &r->cap_links, r->n_links + 1, sizeof *r->links);
    r->links[r->n_links++] = (rlink){xstrdup(path), xstrdup(target), xstrdup(source)};
}

/* On a merged-/usr host /bin, /sbin and /lib* are symlinks into /usr: wherever a rule
 * shows /usr itself (--base empty --allow-ro /usr) and nothing names those paths, they are
 * recreated inside as the same symlinks, so that #!/bin/sh and the ELF loader
 * /lib64/ld-linux-x86-64.so.2 are found as on the host. */
static void merged_usr_links(resolved *r, const char *root)
{
    const rrule *usr = resolved_lookup(r, "/usr");
    if (!usr || usr->access == CORDON_ACCESS_NONE || !path_has_prefix("/usr", usr->path))
        return;
    static const char *const names[] = {"bin", "sbin", "lib", "lib32", "lib64", "libx32"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char *host = path_join(root, names[i]);
        char *inside = path_join("/", names[i]);
        char target[4096];
        ssize_t n = readlink(host, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            const char *t = target[0] == '/' ? target + 1 : target;
            if (strncmp(t, "usr/", 4) == 0 && !strstr(t, "..") && !resolved_lookup(r, inside))
                add_link(r, inside, target, "merged /usr: the same symlink as on the host");
        }
        free(host);
        free(inside);
    }
}

/* One entry of the host root: a symlink is recreated inside (e.g. /bin -> usr/bin on
 * merged-/usr systems), anything else becomes a rule; a missing entry is skipped.
 * dirs_only: only directories become rules (--base system). */
static int add_top_entry(resolved *r, const char *root, const char *name, cordon_access access, rule_origin origin,
                         const char *source, int line, bool dirs_only, cordon_error *err)
{
    char *host = path_join(root, name);
    char *inside = path_join("/", name);
    struct stat st;
    int ret = 0;
    if (lstat(host, &st) < 0) {
        if (errno != ENOENT)
            ret = err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot look at '%s'", host);
    } else if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlink(host, target, sizeof target - 1);
        if (n < 0) {
            ret = err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot read symlink '%s'", host);
        } else {
            target[n] = '\0';
            add_link(r, inside, target, source);
        }
    } else if (!dirs_only || S_ISDIR(st.st_mode)) {
        ret = resolve_add_rule(r, host, access, origin, source, line, err);
    }
    free(host);
    free(inside);
    return ret;
}

/* One rule per entry of `dir` (a directory of the host root), symlinks recreated.
 * Used for --base host and for any rule on "/", so that the sandbox's root stays a
 * tmpfs of its own in which private mount points can be made. */
static int expand_root(resolved *r, const char *root, cordon_access access, rule_origin origin, const char *source,
                       int line, bool skip_tmp, cordon_error *err)
{
    _cleanup_dir_ DIR *d = opendir(root);
    if (!d)
        return err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot list '%s'", root);
    int ret = 0;
    struct dirent *de;
    strv names = {0};
    while ((errno = 0, de = readdir(d)) != NULL) {
        const char *n = de->d_name;
        if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0)
            continue;
        /* cordon mounts its own /proc and /dev; /tmp is private unless a rule names it */
        if (strcmp(n, "proc") == 0 || strcmp(n, "dev") == 0 || (skip_tmp && strcmp(n, "tmp") == 0))
            continue;
        strv_push(&names, xstrdup(n));
    }
    if (errno != 0)
        ret = err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot list '%s'", root);
    for (size_t i = 0; ret == 0 && i < names.n; i++)
        ret = add_top_entry(r, root, names.v[i], access, origin, source, line, false, err);
    strv_free(&names);
    return ret;
}

/* --base host shows the real home under a private layer that takes the writes. */
static bool home_cow(const resolved *r)
{
    return r->base == CORDON_BASE_HOST && private_home_at(r) && r->home_type == FT_DIR;
}

/* --base host can bind the host root whole (one recursive bind, as bubblewrap's
 * --ro-bind / / does) when every private mount point already exists in it: /tmp,
 * /dev, /proc and the home directory.  Otherwise each top-level entry is bound on a
 * tmpfs root of cordon's own, in which the missing mount points can be made. */
static bool host_root_whole(const resolved *r, const char *root)
{
    static const char *const needed[] = {"tmp", "dev", "proc"};
    for (size_t i = 0; i < 3; i++) {
        char *pth = path_join(root, needed[i]);
        struct stat st;
        bool ok = lstat(pth, &st) == 0 && S_ISDIR(st.st_mode);
        free(pth);
        if (!ok)
            return false;
    }
    /* the private /tmp goes on /tmp, which exists; HOME and TMPDIR need places of their own */
    if (r->no_private_dirs)
        return true;
    return !resolved_rule_covers(r, "/tmp") && private_home_at(r) && r->home_type == FT_DIR;
}

static int expand_base(resolved *r, const struct cordon_policy *p, const char *root, cordon_error *err)
{
    switch (p->base) {
    case CORDON_BASE_EMPTY: return 0;
    case CORDON_BASE_HOST: {
        struct stat st;
        if (stat(root, &st) < 0)
            return err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot look at '%s'", root);
        if (host_root_whole(r, root)) {
            /* One rule on "/": the plan binds the host root whole (see plan.h). */
            grow(&r->rules, &r->cap_rules, r->n_rules + 1, sizeof *r->rules);
            r->rules[r->n_rules++] = (rrule){
                .path = xstrdup("/"),
                .given = xstrdup(root),
                .access = CORDON_ACCESS_READ,
                .origin = ORIGIN_BASE,
                .source = xstrdup("base host"),
                .type = FT_DIR,
                .dev = st.st_dev,
                .ino = st.st_ino,
            };
            return 0;
        }
        return expand_root(r, root, CORDON_ACCESS_READ, ORIGIN_BASE, "base host", 0, true, err);
    }
    case CORDON_BASE_SYSTEM:
        for (size_t i = 0; i < sizeof system_dirs / sizeof *system_dirs; i++)
            if (add_top_entry(r, root, system_dirs[i], CORDON_ACCESS_READ, ORIGIN_BASE, "base system", 0, true, err) <
                0)
                return -1;
        return 0;
    }
    return err_set(err, CORDON_STAGE_RESOLVE, 0, "unknown base %d", (int)p->base);
}

/* Settings syntax: ~, ~/x, <workspace>[/x], <data-root>[/x], relative (to the workspace). */
static char *expand_settings_path(const policy_rule *pr, const char *home, const char *workspace, const char *data_root,
                                  cordon_error *err)
{
    const char *s = pr->path;
    const char *where_file = pr->source;
    if (s[0] == '~') {
        if (s[1] != '\0' && s[1] != '/') {
            err_set(err, CORDON_STAGE_SETTINGS, 0, "%s:%d: \"%s\": only ~ and ~/ are understood (not ~user)",
                    where_file, pr->line, s);
            return NULL;
        }
        if (!home) {
            err_set(err, CORDON_STAGE_SETTINGS, 0, "%s:%d: \"%s\" uses ~ but HOME is not set to an absolute path",
                    where_file, pr->line, s);
            return NULL;
        }
        return path_join(home, s + 1);
    }
    static const char ws[] = "<workspace>", dr[] = "<data-root>";
    if (strncmp(s, ws, sizeof ws - 1) == 0 && (s[sizeof ws - 1] == '\0' || s[sizeof ws - 1] == '/'))
        return path_join(workspace, s + sizeof ws - 1);
    if (strncmp(s, dr, sizeof dr - 1) == 0 && (s[sizeof dr - 1] == '\0' || s[sizeof dr - 1] == '/')) {
        if (!data_root) {
            err_opt(err, CORDON_STAGE_SETTINGS, 0, "dataRoot",
                    "%s:%d: \"%s\" uses <data-root> but no data root was given", where_file, pr->line, s);
            return NULL;
        }
        return path_join(data_root, s + sizeof dr - 1);
    }
    if (s[0] == '<') {
        err_set(err, CORDON_STAGE_SETTINGS, 0, "%s:%d: \"%s\": unknown placeholder; known: <workspace>, <data-root>",
                where_file, pr->line, s);
        return NULL;
    }
    if (s[0] == '/')
        return xstrdup(s);
    return path_join(workspace, s);
}

/* "--deny /x" or "settings.json:3: \"/x\"": where a rule came from, for messages. */
static void rule_where(const rrule *r, char *buf, size_t size)
{
    if (r->line > 0)
        snprintf(buf, size, "%s:%d: \"%s\"", r->source, r->line, r->given);
    else
        snprintf(buf, size, "%s %s", r->source, r->given);
}

/* Rules cordon cannot honour: it mounts its own /proc and /dev. */
static int check_reserved(const rrule *r, cordon_error *err)
{
    if (path_has_prefix(r->path, "/proc") || strcmp(r->path, "/dev") == 0) {
        char where[256];
        rule_where(r, where, sizeof where);
        return err_set(err, CORDON_STAGE_RESOLVE, 0,
                       "%s: %s is provided by cordon itself (a fresh /proc and a minimal /dev); "
                       "rules cannot name it%s",
                       where, r->path,
                       strcmp(r->path, "/dev") == 0 ? " (rules on single devices such as /dev/kvm are fine)" : "");
    }
    return 0;
}

/* A rule whose path crosses a symlink that lies inside a writable path fails closed:
 * the command (or an earlier run) could have planted that symlink to aim the rule
 * somewhere else, e.g. --deny /repo/secrets where /repo/secrets -> /tmp/empty. */
static int check_planted_symlinks(const resolved *r, cordon_error *err)
{
    for (size_t i = 0; i < r->n_rules; i++) {
        const rrule *x = &r->rules[i];
        if (x->origin == ORIGIN_BASE)
            continue;
        for (size_t k = 0; k < x->crossed.n; k++) {
            const char *link = x->crossed.v[k];
            for (size_t j = 0; j < r->n_rules; j++) {
                const rrule *w = &r->rules[j];
                if (w->access != CORDON_ACCESS_WRITE || w->shadowed || strcmp(w->path, link) == 0 ||
                    !path_has_prefix(link, w->path))
                    continue;
                char where[256];
                rule_where(x, where, sizeof where);
                return err_set(err, CORDON_STAGE_RESOLVE, 0,
                               "%s crosses the symlink %s, which lies in the writable %s (%s); a "
                               "command could have planted it, so cordon will not follow it: name "
                               "the real path (%s) or remove the symlink",
                               where, link, w->path, w->source, x->path);
            }
        }
    }
    return 0;
}

/* ---- deny globs --------------------------------------------------------------------- */

static void add_note(resolved *r, const char *kind, const char *path, const char *source, char *why_owned)
{
    grow(&r->notes, &r->cap_notes, r->n_notes + 1, sizeof *r->notes);
    r->notes[r->n_notes++] = (rnote){kind, xstrdup(path), xstrdup(source), why_owned};
}

/* Is `path` (canonical) something the sandbox would show, so that hiding it matters?
 * NULL when yes, else why not.  Looked at before any glob rule is added. */
/* What the rules before the globs decided, that a match is judged by. */
typedef struct glob_view {
    size_t n_before; /* the rules before the first glob rule */
    bool tmp_private, home_private, home_cow;
} glob_view;

static const char *glob_hides_nothing(const resolved *r, const glob_view *v, const char *path)
{
    if (path_has_prefix(path, "/proc") || path_has_prefix(path, "/dev"))
        return "cordon provides its own /proc and /dev";
    resolved before = *r; /* the rules as they were before the first glob rule */
    before.n_rules = v->n_before;
    const rrule *x = resolved_lookup(&before, path);
    if (!x)
        return "not visible inside the sandbox";
    /* The private /tmp and HOME are mounted over what a shallower rule shows there;
     * rules below them are mounted on top again. */
    if (v->tmp_private && path_has_prefix(path, "/tmp") && !path_has_prefix(x->path, "/tmp"))
        return "inside the sandbox's private /tmp";
    if (v->home_private && !v->home_cow && path_has_prefix(path, r->home) && !path_has_prefix(x->path, r->home))
        return "inside the sandbox's private HOME";
    if (x->access == CORDON_ACCESS_NONE)
        return "already hidden";
    return NULL;
}

/* The deny globs being expanded (expand_globs), one entry of each array per glob. */
typedef struct glob_pass {
    size_t n;
    glob_pat **pats;
    canon *rc;          /* the canonical prefix */
    const char **roots; /* where the walk starts (rc's path), NULL: nothing there */
    char **sources;     /* the rule's source: the glob as written */
    char **wheres;      /* where it was written, for messages */
    size_t *count;      /* matches */
    glob_hits hits;
} glob_pass;

static void glob_pass_free(glob_pass *g)
{
    glob_hits_free(&g->hits);
    for (size_t i = 0; i < g->n; i++) {
        glob_pat_free(g->pats[i]);
        canon_free(&g->rc[i]);
        free(g->sources[i]);
        free(g->wheres[i]);
    }
    free(g->pats);
    free(g->rc);
    free(g->roots);
    free(g->sources);
    free(g->wheres);
    free(g->count);
}

/* Glob i compiled, its prefix resolved (symlinks followed like those of any rule path;
 * one planted in a writable path fails closed, check_glob_links). */
static int compile_glob(glob_pass *g, size_t i, const resolved *out, const struct cordon_policy *p, cordon_error *err)
{
    const policy_glob *pg = &p->globs[i];
    /* The rule's source names the glob as written, for explain and for messages. */
    g->sources[i] = pg->line > 0 ? xasprintf("%s:%d (deniedPaths \"%s\")", pg->source, pg->line, pg->pattern)
                                 : xasprintf("%s %s", pg->source, pg->pattern);
    g->wheres[i] = pg->line > 0 ? xasprintf("%s:%d", pg->source, pg->line) : xstrdup(pg->source);
    char *text;
    if (pg->expand) {
        policy_rule pr = {.path = pg->pattern, .source = pg->source, .line = pg->line};
        text = expand_settings_path(&pr, out->home, out->workspace, p->data_root, err);
        if (!text)
            return -1;
    } else {
        text = xstrdup(pg->pattern);
    }
    int r = glob_compile(text, &g->pats[i], err);
    free(text);
    if (r < 0) {
        err->stage = pg->line > 0 ? CORDON_STAGE_SETTINGS : CORDON_STAGE_USAGE;
        return err_wrap(err, "%s", g->wheres[i]);
    }
    if (canon_resolve(glob_pat_walk_from(g->pats[i]), &g->rc[i], err) < 0)
        return err_wrap(err, "%s", g->wheres[i]);
    if (g->rc[i].type != FT_DIR)
        return 0; /* nothing there: nothing to hide */
    if (strcmp(g->rc[i].path, "/") == 0 && !glob_pat_literal(g->pats[i]))
        return err_set(err, CORDON_STAGE_RESOLVE, 0,
                       "%s: deny glob '%s': its prefix %s is the root directory once symlinks are "
                       "followed, so expanding it would scan the whole file system",
                       g->wheres[i], glob_pat_text(g->pats[i]), glob_pat_prefix(g->pats[i]));
    g->roots[i] = g->rc[i].path;
    return 0;
}

/* A prefix that crosses a symlink inside a writable path fails closed, as any rule path
 * does (check_planted_symlinks), and whether or not the walk would find anything: the
 * command could have planted the link to send the walk elsewhere. */
static int check_glob_links(const glob_pass *g, const resolved *out, cordon_error *err)
{
    for (size_t i = 0; i < g->n; i++)
        for (size_t c = 0; c < g->rc[i].crossed.n; c++) {
            const char *link = g->rc[i].crossed.v[c];
            for (size_t j = 0; j < out->n_rules; j++) {
                const rrule *w = &out->rules[j];
                if (w->access != CORDON_ACCESS_WRITE || w->shadowed || strcmp(w->path, link) == 0 ||
                    !path_has_prefix(link, w->path))
                    continue;
                return err_set(err, CORDON_STAGE_RESOLVE, 0,
                               "%s: deny glob '%s' crosses the symlink %s, which lies in the writable %s (%s); "
                               "a command could have planted it, so cordon will not follow it: name the real "
                               "directory (%s) or remove the symlink",
                               g->wheres[i], glob_pat_text(g->pats[i]), link, w->path, w->source, g->rc[i].path);
            }
        }
    return 0;
}

/* The walk of every glob on the host.  A rule that shows something again below a
 * matched directory makes the walk look inside that directory too. */
static int walk_globs(glob_pass *g, const resolved *out, const struct cordon_policy *p, cordon_error *err)
{
    strv keep = {0};
    for (size_t i = 0; i < out->n_rules; i++)
        if (out->rules[i].access != CORDON_ACCESS_NONE && !out->rules[i].shadowed)
            strv_push(&keep, xstrdup(out->rules[i].path));
    glob_walk_opts o = {.max_depth = p->glob_depth, .keep_below = (const char *const *)keep.v, .n_keep = keep.n};
    size_t failed = 0;
    int r = glob_expand(g->pats, g->roots, g->n, &o, &g->hits, &failed, err);
    strv_free(&keep);
    return r < 0 ? err_wrap(err, "%s", g->wheres[failed < g->n ? failed : 0]) : 0;
}

/* One match a deny rule (appended), or a note saying why it needs none. */
static void add_glob_hit(resolved *out, const glob_pass *g, const glob_hit *h, const struct cordon_policy *p,
                         const glob_view *v)
{
    size_t i = h->pattern;
    const char *path = h->path;
    ftype type = h->type;
    dev_t dev = h->dev;
    ino_t ino = h->ino;
    if (h->is_link) {
        /* "A symlink match hides its target too": the target is what a command would read
         * through the link.  The link itself stays (setup never mounts over a symlink) and
         * now leads to an empty file or directory. */
        if (!h->target) {
            add_note(out, "skip", h->path, g->sources[i],
                     xasprintf("a symlink that cannot be followed (%s): nothing to hide", h->unfollowable));
            return;
        }
        if (h->target_type == FT_MISSING) {
            add_note(out, "skip", h->path, g->sources[i],
                     xasprintf("a symlink to %s, which does not exist: nothing to hide", h->target));
            return;
        }
        path = h->target;
        type = h->target_type;
        dev = h->target_dev;
        ino = h->target_ino;
    }
    const char *why = glob_hides_nothing(out, v, path);
    if (why) {
        add_note(out, "skip", h->is_link ? h->path : path, g->sources[i],
                 h->is_link ? xasprintf("a symlink to %s: %s", path, why) : xstrdup(why));
        return;
    }
    rrule x = {
        .path = xstrdup(path),
        .given = xstrdup(h->path),
        .access = CORDON_ACCESS_NONE,
        .origin = p->globs[i].origin,
        .source = xstrdup(g->sources[i]),
        .type = type,
        .dev = dev,
        .ino = ino,
        .symlink = g->rc[i].symlink ? xstrdup(g->rc[i].symlink) : NULL,
    };
    for (size_t c = 0; c < g->rc[i].crossed.n; c++)
        strv_push(&x.crossed, xstrdup(g->rc[i].crossed.v[c]));
    grow(&out->rules, &out->cap_rules, out->n_rules + 1, sizeof *out->rules);
    out->rules[out->n_rules++] = x;
}

/* One note per glob: how many matches under which directory, at what depth. */
static void add_glob_notes(resolved *out, const glob_pass *g, const struct cordon_policy *p)
{
    for (size_t i = 0; i < g->n; i++) {
        char depth[32] = "unlimited";
        if (p->glob_depth > 0 && !glob_pat_literal(g->pats[i]))
            snprintf(depth, sizeof depth, "%d", p->glob_depth);
        add_note(out, "glob", glob_pat_text(g->pats[i]), g->wheres[i],
                 g->roots[i] ? xasprintf("%zu match%s under %s (depth %s)", g->count[i], g->count[i] == 1 ? "" : "es",
                                         g->roots[i], depth)
                             : xasprintf("%s does not exist: nothing to expand", glob_pat_walk_from(g->pats[i])));
    }
}

/* --base host binds the host root whole only while nothing covers the private HOME's or
 * /tmp's place; a match above them (a deny glob of everything under /home matches /home)
 * turns the base back into one rule per top-level entry. */
static int rebase_after_globs(resolved *out, const struct cordon_policy *p, const char *root, size_t before,
                              cordon_error *err)
{
    bool whole = false;
    for (size_t i = 0; i < before; i++)
        if (out->rules[i].origin == ORIGIN_BASE && strcmp(out->rules[i].path, "/") == 0)
            whole = true;
    if (!whole || host_root_whole(out, root))
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < out->n_rules; i++) {
        if (out->rules[i].origin == ORIGIN_BASE && strcmp(out->rules[i].path, "/") == 0)
            rrule_clear(&out->rules[i]);
        else
            out->rules[k++] = out->rules[i];
    }
    out->n_rules = k;
    return expand_base(out, p, root, err);
}

/* Expand every deny glob on the host and add each match as a deny rule, like --deny.
 * Runs after the other rules and the base are resolved and sorted (what a match would
 * show decides whether it needs a rule), and may redo the base: a match above the
 * private HOME means the host root can no longer be bound whole. */
static int expand_globs(resolved *out, const struct cordon_policy *p, const char *root, cordon_error *err)
{
    size_t n = p->n_globs;
    if (n == 0)
        return 0;
    __attribute__((cleanup(glob_pass_free))) glob_pass g = {
        .n = n,
        .pats = xcalloc(n, sizeof *g.pats),
        .rc = xcalloc(n, sizeof *g.rc),
        .roots = xcalloc(n, sizeof *g.roots),
        .sources = xcalloc(n, sizeof *g.sources),
        .wheres = xcalloc(n, sizeof *g.wheres),
        .count = xcalloc(n, sizeof *g.count),
    };
    for (size_t i = 0; i < n; i++)
        if (compile_glob(&g, i, out, p, err) < 0)
            return -1;
    if (check_glob_links(&g, out, err) < 0 || walk_globs(&g, out, p, err) < 0)
        return -1;
    glob_view v = {.n_before = out->n_rules,
                   .tmp_private = !resolved_rule_covers(out, "/tmp"),
                   .home_private = private_home_at(out),
                   .home_cow = home_cow(out)};
    for (size_t k = 0; k < g.hits.n; k++) {
        g.count[g.hits.v[k].pattern]++;
        add_glob_hit(out, &g, &g.hits.v[k], p, &v);
    }
    add_glob_notes(out, &g, p);
    if (out->n_rules == v.n_before)
        return 0;
    if (rebase_after_globs(out, p, root, v.n_before, err) < 0)
        return -1;
    resolved_sort(out);
    return 0;
}

/* HOME, canonical (when it is an absolute path). */
static int resolve_home(resolved *out, const host_info *host, cordon_error *err)
{
    if (!host->home || host->home[0] != '/')
        return 0;
    canon c;
    if (canon_resolve(host->home, &c, err) < 0)
        return err_wrap(err, "HOME");
    if (resolve_refuse_dotdot(&c, "HOME", err) < 0)
        return -1;
    out->home = steal_pointer(&c.path);
    out->home_type = c.type;
    out->home_dev = c.dev;
    out->home_ino = c.ino;
    canon_free(&c); /* the rest: symlink, crossed, first_missing */
    return 0;
}

/* The workspace: the policy's, else the top of the git work tree around the current
 * directory (gittop.h), else the current directory; its rule unless there is none. */
static int resolve_workspace(resolved *out, const struct cordon_policy *p, const host_info *host, cordon_error *err)
{
    _cleanup_free_ char *ws_given = NULL;
    if (!p->workspace && !p->no_workspace && host->cwd) {
        ws_given = git_top_level(host->cwd, out->home);
        out->workspace_git_top = ws_given != NULL;
    }
    if (!ws_given)
        ws_given = xstrdup(p->workspace ? p->workspace : host->cwd);
    canon c;
    if (canon_resolve(ws_given, &c, err) < 0)
        return err_wrap(err, "workspace");
    if (resolve_refuse_dotdot(&c, p->workspace ? "--workspace" : "the current directory", err) < 0)
        return -1;
    if (c.type != FT_DIR && !p->no_workspace) {
        err_opt(err, CORDON_STAGE_RESOLVE, c.type == FT_MISSING ? ENOENT : ENOTDIR, "workspace", "workspace '%s'%s",
                ws_given, p->workspace ? "" : " (the current directory: set another workspace, or none)");
        canon_free(&c);
        return -1;
    }
    out->workspace = steal_pointer(&c.path);
    canon_free(&c); /* the rest: symlink, crossed, first_missing */
    if (p->no_workspace)
        return 0;
    cordon_access a = p->read_only ? CORDON_ACCESS_READ : CORDON_ACCESS_WRITE;
    return resolve_add_rule(out, out->workspace, a, ORIGIN_WORKSPACE,
                            p->workspace             ? "workspace"
                            : out->workspace_git_top ? "workspace (the top of the current directory's git work tree)"
                                                     : "workspace (current directory)",
                            0, err);
}

/* The policy's rules, --hide and hiddenPaths (expanded here, hidden by protect.c where
 * they are shown), and XDG_RUNTIME_DIR. */
static int collect_rules(resolved *out, const struct cordon_policy *p, const host_info *host, cordon_error *err)
{
    for (size_t i = 0; i < p->n_rules; i++) {
        const policy_rule *pr = &p->rules[i];
        _cleanup_free_ char *given =
            pr->expand ? expand_settings_path(pr, out->home, out->workspace, p->data_root, err) : xstrdup(pr->path);
        if (!given)
            return -1;
        cordon_access a = pr->access;
        if (p->read_only && a == CORDON_ACCESS_WRITE)
            a = CORDON_ACCESS_READ;
        if (resolve_add_rule(out, given, a, pr->origin, pr->source, pr->line, err) < 0)
            return -1;
    }

    if (p->toolchains && p->base != CORDON_BASE_HOST && toolchains_add(out, err) < 0)
        return -1;
    if (p->n_hides)
        out->hides = xcalloc(p->n_hides, sizeof *out->hides);
    for (size_t i = 0; i < p->n_hides; i++) {
        const policy_rule *pr = &p->hides[i];
        char *given =
            pr->expand ? expand_settings_path(pr, out->home, out->workspace, p->data_root, err) : xstrdup(pr->path);
        if (!given)
            return -1;
        out->hides[out->n_hides++] = (rhide){
            .path = given,
            .source = pr->line > 0 ? xasprintf("%s:%d (hiddenPaths \"%s\")", pr->source, pr->line, pr->path)
                                   : xasprintf("%s %s", pr->source, pr->path),
        };
    }
    if (host->runtime_dir && host->runtime_dir[0] == '/') {
        canon c;
        if (canon_resolve(host->runtime_dir, &c, err) < 0)
            return err_wrap(err, "XDG_RUNTIME_DIR");
        if (c.type == FT_DIR && !c.dotdot_after_missing)
            out->runtime_dir = steal_pointer(&c.path);
        canon_free(&c);
    }
    return 0;
}

/* A rule on "/" becomes one rule per top-level entry, like the host base; every rule
 * checked against the reserved paths; then the base (last: whether the host root can be
 * bound whole depends on the rules), sorted. */
static int expand_rules(resolved *out, const struct cordon_policy *p, const char *root, cordon_error *err)
{
    for (size_t i = 0; i < out->n_rules; i++) {
        rrule *r = &out->rules[i];
        if (strcmp(r->path, "/") != 0)
            continue;
        rrule copy = *r;
        out->rules[i] = out->rules[--out->n_rules];
        i--;
        int rc = expand_root(out, root, copy.access, copy.origin, copy.source, copy.line, false, err);
        rrule_clear(&copy);
        if (rc < 0)
            return -1;
    }
    for (size_t i = 0; i < out->n_rules; i++)
        if (check_reserved(&out->rules[i], err) < 0)
            return -1;
    if (expand_base(out, p, root, err) < 0)
        return -1;
    resolved_sort(out);
    merged_usr_links(out, root);
    return 0;
}

/* What cordon protects depends on which rules won: add it, then decide again. */
static int protect(resolved *out, const struct cordon_policy *p, cordon_error *err)
{
    size_t before = out->n_rules;
    if (protect_expand(out, p, err) < 0)
        return -1;
    if (out->n_rules != before)
        resolved_sort(out);
    before = out->n_rules;
    if (protect_pin(out, err) < 0)
        return -1;
    if (out->n_rules != before)
        resolved_sort(out);
    return 0;
}

/* The working directory, canonical. */
static int resolve_cwd(resolved *out, const struct cordon_policy *p, const host_info *host, cordon_error *err)
{
    canon c;
    if (canon_resolve(p->cwd ? p->cwd : host->cwd, &c, err) < 0)
        return err_wrap(err, "working directory");
    if (resolve_refuse_dotdot(&c, p->cwd ? "--chdir" : "the current directory", err) < 0)
        return -1;
    out->cwd = steal_pointer(&c.path);
    out->cwd_type = c.type;
    canon_free(&c); /* the rest: symlink, crossed, first_missing */
    return 0;
}

/* The passes, each adding to what the one before left: collect (HOME, the workspace,
 * the rules), expand (a rule on "/", the base, the deny globs), what the rules decide
 * (home_cow, once every rule but cordon's own protection is there: protect.c asks it),
 * protect, and the checks and the working directory. */
static int resolve_passes(const struct cordon_policy *p, const host_info *host, resolved *out, cordon_error *err)
{
    const char *root = host->root ? host->root : "/";
    if (resolve_home(out, host, err) < 0 || resolve_workspace(out, p, host, err) < 0 ||
        collect_rules(out, p, host, err) < 0 || expand_rules(out, p, root, err) < 0 ||
        expand_globs(out, p, root, err) < 0)
        return -1;
    out->home_cow = home_cow(out);
    /* git commit works in a private HOME: the host's identity, and only that (plan.c) */
    if (out->home && !p->no_private_dirs && !out->home_cow) {
        gitconfig_ctx gctx = {.home = out->home};
        gitconfig_read_identity(&gctx, &out->git_identity);
    }
    if (protect(out, p, err) < 0 || check_planted_symlinks(out, err) < 0)
        return -1;
    return resolve_cwd(out, p, host, err);
}

int resolve_policy(const struct cordon_policy *p, const host_info *host, resolved *out, cordon_error *err)
{
    *out = (resolved){.base = p->base, .no_private_dirs = p->no_private_dirs};
    if (resolve_passes(p, host, out, err) == 0)
        return 0;
    resolved_free(out);
    return -1;
}
