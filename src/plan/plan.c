// SPDX-License-Identifier: Apache-2.0
#include "plan/plan.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

const char *const plan_dev_nodes[PLAN_DEV_NODES] = {"/dev/null",   "/dev/zero",    "/dev/full",
                                                    "/dev/random", "/dev/urandom", "/dev/tty"};

const char *plan_kind_name(plan_kind k)
{
    switch (k) {
    case PLAN_BIND: return "bind";
    case PLAN_HIDE: return "hide";
    case PLAN_TMPFS: return "tmpfs";
    case PLAN_SYMLINK: return "symlink";
    case PLAN_DEV: return "dev";
    case PLAN_PROC: return "proc";
    case PLAN_NOTE: return "note";
    case PLAN_OVERLAY: return "overlay";
    case PLAN_HOLD: return "hold";
    case PLAN_COW: return "cow";
    case PLAN_FILE: return "file";
    }
    return "?";
}

void plan_free(plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_ops; i++) {
        free(p->ops[i].dest);
        free(p->ops[i].src);
        free(p->ops[i].why);
        free(p->ops[i].upper);
        free(p->ops[i].work);
    }
    free(p->ops);
    for (size_t i = 0; i < p->n_cc_rules; i++) {
        free(p->cc_rules[i].path);
        free(p->cc_rules[i].why);
    }
    free(p->cc_rules);
    for (size_t i = 0; i < p->n_rules; i++) {
        free(p->rules[i].path);
        free(p->rules[i].why);
    }
    free(p->rules);
    strv_free(&p->warnings);
    net_plan_free(&p->net);
    strv_free(&p->env);
    strv_free(&p->env_home_fallback);
    free(p->home);
    free(p->home_fallback);
    free(p->hostname);
    free(p->tmpdir);
    free(p->cwd);
    *p = (plan){0};
}

static plan_op *add_op(plan *p, plan_kind kind, const char *dest, const char *src, char *why_owned)
{
    grow(&p->ops, &p->cap_ops, p->n_ops + 1, sizeof *p->ops);
    plan_op *op = &p->ops[p->n_ops++];
    *op = (plan_op){
        .kind = kind,
        .dest = xstrdup(dest),
        .src = src ? xstrdup(src) : NULL,
        .why = why_owned,
    };
    return op;
}

const char *plan_cc_kind_name(plan_cc_kind k)
{
    switch (k) {
    case PLAN_NOCREATE: return "nocreate";
    case PLAN_GITDIR: return "gitdir";
    case PLAN_LIFT: return "lift";
    }
    return "?";
}

static void add_cc(plan *p, plan_cc_kind kind, const char *path, char *why_owned)
{
    grow(&p->cc_rules, &p->cap_cc_rules, p->n_cc_rules + 1, sizeof *p->cc_rules);
    p->cc_rules[p->n_cc_rules++] = (plan_cc_rule){.kind = kind, .path = xstrdup(path), .why = why_owned};
}

static bool user_origin(rule_origin o)
{
    return o == ORIGIN_FLAG || o == ORIGIN_SETTINGS;
}

__attribute__((format(printf, 2, 3))) static void warn(plan *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *w = NULL;
    if (vasprintf(&w, fmt, ap) < 0)
        w = NULL;
    va_end(ap);
    if (w)
        strv_push(&p->warnings, w);
}

static char *rule_why(const rrule *r)
{
    if (r->line > 0)
        return xasprintf("%s:%d", r->source, r->line);
    return xstrdup(r->source);
}

/* Among operations sorted so far, order matters only between a path and those below
 * it; kind_order breaks ties at one path (a rule, then a private tmpfs over it). */
static int kind_order(plan_kind k)
{
    switch (k) {
    case PLAN_BIND:
    case PLAN_HIDE:
    case PLAN_SYMLINK:
    case PLAN_OVERLAY:
    case PLAN_HOLD:
    case PLAN_COW: return 0;
    case PLAN_TMPFS:
    case PLAN_DEV:
    case PLAN_PROC: return 1;
    case PLAN_FILE:
    case PLAN_NOTE: return 2;
    }
    return 3;
}

static int cmp_ops(const void *a, const void *b)
{
    const plan_op *x = a, *y = b;
    int c = path_cmp(x->dest, y->dest);
    if (c)
        return c;
    return kind_order(x->kind) - kind_order(y->kind);
}

static int cmp_cc_rules(const void *a, const void *b)
{
    const plan_cc_rule *x = a, *y = b;
    int c = path_cmp(x->path, y->path);
    return c ? c : (int)x->kind - (int)y->kind;
}

void plan_sort(plan *p)
{
    qsort(p->ops, p->n_ops, sizeof *p->ops, cmp_ops);
    if (p->n_cc_rules)
        qsort(p->cc_rules, p->n_cc_rules, sizeof *p->cc_rules, cmp_cc_rules);
}

const plan_op *plan_covering(const plan *p, const char *path)
{
    const plan_op *best = NULL;
    for (size_t i = 0; i < p->n_ops; i++) {
        const plan_op *op = &p->ops[i];
        if (!plan_op_mounts(op) || !path_has_prefix(path, op->dest))
            continue;
        if (!best || strlen(op->dest) >= strlen(best->dest))
            best = op;
    }
    return best;
}

static bool base_covers(const resolved *r, const char *path)
{
    for (size_t i = 0; i < r->n_rules; i++)
        if (!r->rules[i].shadowed && path_has_prefix(path, r->rules[i].path))
            return true;
    return false;
}

/* A base rule at exactly `dest` is replaced by a private mount there. */
static void drop_base_bind_at(plan *p, const char *dest, const char *what)
{
    for (size_t i = 0; i < p->n_ops; i++) {
        plan_op *op = &p->ops[i];
        if (op->kind == PLAN_BIND && strcmp(op->dest, dest) == 0) {
            op->kind = PLAN_NOTE;
            char *why = xasprintf("%s: replaced by the private %s", op->why, what);
            free(op->why);
            op->why = why;
        }
    }
}

static int add_rule_ops(const resolved *r, plan *p, cordon_error *err)
{
    for (size_t i = 0; i < r->n_rules; i++) {
        const rrule *x = &r->rules[i];
        if (x->shadowed)
            continue;
        if (x->type == FT_MISSING) {
            if (x->access != CORDON_ACCESS_NONE) {
                char *why = rule_why(x);
                add_op(p, PLAN_NOTE, x->path, NULL,
                       xasprintf("%s: does not exist; nothing to %s", why,
                                 x->access == CORDON_ACCESS_WRITE ? "allow" : "show"))
                    ->user = user_origin(x->origin);
                if (user_origin(x->origin))
                    warn(p, "%s %s: does not exist; the rule does nothing", why, x->given);
                free(why);
                continue;
            }
            /* A denied path that does not exist is only safe to skip where the command
             * cannot create it: not below a writable bind. */
            const rrule *parent = NULL;
            for (size_t j = 0; j < r->n_rules; j++) {
                const rrule *y = &r->rules[j];
                if (y->shadowed || y == x || y->type == FT_MISSING || strcmp(y->path, x->path) == 0 ||
                    !path_has_prefix(x->path, y->path))
                    continue;
                if (!parent || strlen(y->path) > strlen(parent->path))
                    parent = y;
            }
            if (parent && parent->access == CORDON_ACCESS_WRITE) {
                /* The command could create it: the creation control refuses its first
                 * missing component (nothing is placed on the host). */
                char *why = rule_why(x);
                if (x->missing_under_file || !x->first_missing) {
                    err_set(err, CORDON_STAGE_PLAN, 0,
                            "%s %s: the path does not exist and a file stands where a directory of it "
                            "would be, in the writable %s (%s); the command could replace that file and "
                            "create the path, so cordon refuses: fix the path or drop the rule",
                            why, x->given, parent->path, parent->source);
                    free(why);
                    return -1;
                }
                bool dup = false;
                for (size_t k = 0; k < p->n_cc_rules; k++)
                    dup |= p->cc_rules[k].kind == PLAN_NOCREATE && strcmp(p->cc_rules[k].path, x->first_missing) == 0;
                if (!dup)
                    add_cc(p, PLAN_NOCREATE, x->first_missing, xstrdup(why));
                free(why);
                continue;
            }
            char *why = rule_why(x);
            add_op(p, PLAN_NOTE, x->path, NULL, xasprintf("%s: does not exist; nothing to hide", why))->user =
                user_origin(x->origin);
            if (user_origin(x->origin))
                warn(p, "%s %s: does not exist (and nothing inside can create it); the rule does nothing", why,
                     x->given);
            free(why);
            continue;
        }
        bool dir = x->type == FT_DIR;
        if (strcmp(x->path, "/") == 0) {
            /* Only --base host binds "/" (rules on "/" are expanded by resolve.c). */
            p->root_is_host = true;
            p->root_dev = x->dev;
            p->root_ino = x->ino;
            continue;
        }
        if (x->access == CORDON_ACCESS_NONE) {
            plan_op *op = add_op(p, PLAN_HIDE, x->path, NULL, rule_why(x));
            op->is_dir = dir;
            op->user = user_origin(x->origin);
        } else {
            plan_op *op = add_op(p, PLAN_BIND, x->path, x->path, rule_why(x));
            op->user = user_origin(x->origin);
            op->read_only = x->access != CORDON_ACCESS_WRITE;
            op->is_dir = dir;
            op->pin = x->pin;
            op->dev = x->dev;
            op->ino = x->ino;
        }
    }
    for (size_t i = 0; i < r->n_links; i++)
        add_op(p, PLAN_SYMLINK, r->links[i].path, r->links[i].target, xstrdup(r->links[i].source));
    /* A rule granting write on exactly a path (not the workspace as a whole) lifts the
     * creation control's git rules there: --allow .git/hooks makes hooks writable. */
    for (size_t i = 0; i < r->n_rules; i++) {
        const rrule *x = &r->rules[i];
        if (!x->shadowed && x->access == CORDON_ACCESS_WRITE && x->type != FT_MISSING &&
            (x->origin == ORIGIN_FLAG || x->origin == ORIGIN_SETTINGS) && strcmp(x->path, "/") != 0)
            add_cc(p, PLAN_LIFT, x->path, rule_why(x));
    }
    for (size_t i = 0; i < r->gitdirs.n; i++)
        add_cc(p, PLAN_GITDIR, r->gitdirs.v[i], xstrdup("git directory: its HEAD may be rewritten"));
    return 0;
}

/* The operations that mount something above the one at hand, nearest last: walking the
 * sorted operations (path_cmp keeps a directory's subtree right after it) with this
 * stack finds each one's nearest enclosing mount in constant time, not by a scan of all
 * the earlier ones (a deny glob makes thousands). */
typedef struct {
    size_t *v;
    size_t n, cap;
} mount_stack;

static void mount_stack_free(mount_stack *s)
{
    free(s->v);
}

/* The nearest operation on the stack that mounts strictly above `dest` (the operations
 * visited in sorted order). */
static const plan_op *mount_stack_parent(const plan *p, mount_stack *s, const char *dest)
{
    while (s->n > 0 && !path_has_prefix(dest, p->ops[s->v[s->n - 1]].dest))
        s->n--;
    for (size_t k = s->n; k-- > 0;)
        if (strcmp(p->ops[s->v[k]].dest, dest) != 0)
            return &p->ops[s->v[k]];
    return NULL;
}

static void mount_stack_push(const plan *p, mount_stack *s, size_t i)
{
    if (!plan_op_mounts(&p->ops[i]))
        return;
    grow(&s->v, &s->cap, s->n + 1, sizeof *s->v);
    s->v[s->n++] = i;
}

/* A bind whose nearest enclosing operation is a bind of the same host tree with the
 * same access adds nothing (binds are recursive): drop it, it only costs time. */
static void drop_redundant(plan *p)
{
    mount_stack st __attribute__((cleanup(mount_stack_free))) = {0};
    for (size_t i = 0; i < p->n_ops; mount_stack_push(p, &st, i), i++) {
        plan_op *op = &p->ops[i];
        const plan_op *parent = mount_stack_parent(p, &st, op->dest);
        if (op->kind != PLAN_BIND || op->pin)
            continue;
        bool same = parent ? parent->kind == PLAN_BIND && parent->read_only == op->read_only &&
                                 strcmp(parent->src, parent->dest) == 0
                           : p->root_is_host && op->read_only;
        if (same) {
            if (op->user && op->read_only) /* (an exact write rule lifts protections: not idle) */
                warn(p, "%s %s: already %s through %s (%s); the rule adds nothing", op->why, op->dest,
                     op->read_only ? "read-only" : "writable", parent ? parent->dest : "/",
                     parent ? parent->why : "the host root");
            char *why = xasprintf("%s: already %s through %s", op->why, op->read_only ? "read-only" : "writable",
                                  parent ? parent->dest : "/");
            free(op->why);
            op->why = why;
            op->kind = PLAN_NOTE;
        }
    }
}

/* Directories that only hold mount points are read-only (README, "Always, whatever the
 * base"): where a mount lies two or more levels below a private writable mount (HOME,
 * /tmp), the directory on the way that cordon would otherwise make in that writable
 * mount (so that a write there "succeeded" and vanished, `echo hi > ../sibling.txt` from
 * a workspace in /tmp/x) is a read-only one of its own.  Below the home of --base host
 * (a PLAN_COW) it is the real directory, bound onto itself read-only.  Returns how many
 * were added. */
static size_t add_holders(plan *p)
{
    size_t added = 0, n = p->n_ops;
    mount_stack st __attribute__((cleanup(mount_stack_free))) = {0};
    for (size_t i = 0; i < n; mount_stack_push(p, &st, i), i++) {
        /* (add_op may move the array: indices, not pointers, across it) */
        if (!plan_op_mounts(&p->ops[i]))
            continue;
        const char *dest = p->ops[i].dest;
        const plan_op *parent = mount_stack_parent(p, &st, dest);
        if (!parent || (parent->kind != PLAN_TMPFS && parent->kind != PLAN_COW))
            continue;
        size_t pl = strlen(parent->dest);
        const char *rest = dest + pl + (strcmp(parent->dest, "/") != 0);
        const char *slash = strchr(rest, '/');
        if (!slash)
            continue; /* right in the private mount, which is writable */
        bool view = parent->kind == PLAN_COW;
        char *hold = xasprintf("%.*s", (int)(slash - dest), dest);
        char *why =
            xasprintf("holds %s; read-only (a write here would vanish with the private %s)", dest, parent->dest);
        bool have = false;
        for (size_t j = 0; j < p->n_ops && !have; j++)
            have = plan_op_mounts(&p->ops[j]) && strcmp(p->ops[j].dest, hold) == 0;
        if (!have) {
            plan_op *h = add_op(p, PLAN_HOLD, hold, NULL, why);
            h->from_view = view;
            h->is_dir = true;
            added++;
        } else {
            free(why);
        }
        free(hold);
    }
    return added;
}

/* A git configuration value, quoted (git-config(1)). */
static void git_quote(strv *parts, const char *v)
{
    size_t n = strlen(v);
    char *q = xmalloc(2 * n + 3), *o = q;
    *o++ = '"';
    for (const char *c = v; *c; c++) {
        if (*c == '\\' || *c == '"')
            *o++ = '\\';
        if (*c == '\n') {
            *o++ = '\\';
            *o++ = 'n';
            continue;
        }
        *o++ = *c;
    }
    *o++ = '"';
    *o = '\0';
    strv_push(parts, q);
}

/* The private HOME's .gitconfig: the host's identity and nothing else, so that `git
 * commit` works without the host's configuration (its credential helpers, tokens in URL
 * rewrites, includes) being shown. */
static void add_git_identity(const resolved *r, plan *p, const char *home)
{
    const gitconfig_identity *id = &r->git_identity;
    if (!id->name[0] && !id->email[0])
        return;
    strv q = {0};
    git_quote(&q, id->name);
    git_quote(&q, id->email);
    char *text = xasprintf("# written by cordon: the host's git identity, and nothing else of its configuration\n"
                           "[user]\n%s%s%s%s%s%s",
                           id->name[0] ? "\tname = " : "", id->name[0] ? q.v[0] : "", id->name[0] ? "\n" : "",
                           id->email[0] ? "\temail = " : "", id->email[0] ? q.v[1] : "", id->email[0] ? "\n" : "");
    strv_free(&q);
    char *dest = path_join(home, ".gitconfig");
    add_op(p, PLAN_FILE, dest, text,
           xstrdup("git identity from the host's configuration (user.name, user.email only)"));
    free(dest);
    free(text);
}

/* Does an operation mount something strictly below `dir`? */
static bool mounts_below(const plan *p, const char *dir)
{
    for (size_t i = 0; i < p->n_ops; i++)
        if (plan_op_mounts(&p->ops[i]) && strcmp(p->ops[i].dest, dir) != 0 && path_has_prefix(p->ops[i].dest, dir))
            return true;
    return false;
}

static const char *access_verb(cordon_access a)
{
    return a == CORDON_ACCESS_NONE ? "hidden" : a == CORDON_ACCESS_WRITE ? "writable" : "read-only";
}

/* A rule of the caller's that another won at the same path changes nothing. */
static void warn_overridden(const resolved *r, plan *p)
{
    for (size_t i = 0; i < r->n_rules; i++) {
        const rrule *x = &r->rules[i];
        if (!x->shadowed || !user_origin(x->origin))
            continue;
        const rrule *w = NULL;
        for (size_t j = 0; j < r->n_rules && !w; j++)
            if (!r->rules[j].shadowed && strcmp(r->rules[j].path, x->path) == 0)
                w = &r->rules[j];
        char *why = rule_why(x);
        /* (the same access twice is not reported: a rule that names a path exactly means
         * more than its access there, e.g. --allow of the home lifts its refusal) */
        if (w && w->access != x->access)
            warn(p,
                 "%s %s: overridden by %s, which makes the same path %s (at equal length deny beats write "
                 "beats read); the rule changes nothing",
                 why, x->given, w->source, access_verb(w->access));
        free(why);
    }
}

/* Is the directory at path (of type t, covered by cov) there inside? */
static bool cwd_visible(const plan *out, const plan_op *cov, const char *path, ftype t)
{
    if (strcmp(path, "/") == 0)
        return true;
    if (!cov && out->root_is_host)
        return t == FT_DIR;
    if (cov && (cov->kind == PLAN_BIND || cov->kind == PLAN_COW || (cov->kind == PLAN_HOLD && cov->from_view)))
        return t == FT_DIR;
    if (cov && cov->kind != PLAN_HIDE)
        return strcmp(cov->dest, path) == 0;
    return false;
}

plan_input plan_input_of(const struct cordon_policy *pol, cordon_isolation isolation)
{
    return (plan_input){.isolation = isolation,
                        .network = pol->network,
                        .proc = !pol->no_proc,
                        .no_nested = pol->no_nested,
                        .inherit_pid_ns = pol->inherit_pid_ns,
                        .cwd_given = pol->cwd != NULL,
                        .no_workspace = pol->no_workspace,
                        .limits = pol->limits,
                        .view = pol->view,
                        .bare = pol->bare,
                        .keep_caps = pol->keep_caps,
                        .hostname = pol->hostname,
                        .tmpfs = pol->tmpfs,
                        .n_tmpfs = pol->n_tmpfs,
                        .timeout = pol->timeout};
}

/* --isolation landlock: the winning rules as they are, for confine/llonly.c. */
static void add_landlock_rules(const resolved *r, plan *out)
{
    out->rules = xcalloc(r->n_rules ? r->n_rules : 1, sizeof *out->rules);
    bool root_rule = false;
    for (size_t i = 0; i < r->n_rules; i++) {
        const rrule *x = &r->rules[i];
        if (x->shadowed)
            continue;
        root_rule |= strcmp(x->path, "/") == 0;
        out->rules[out->n_rules++] = (plan_rule){.path = xstrdup(x->path),
                                                 .access = x->access,
                                                 .exists = x->type != FT_MISSING,
                                                 .is_dir = x->type == FT_DIR,
                                                 .why = xstrdup(x->source)};
    }
    /* --base host shows "/" itself as a directory to list (resolve.c may have expanded
     * the base into its entries). */
    out->list_root = r->base == CORDON_BASE_HOST && !root_rule;
}

/* What no plan can be made of. */
static int refuse_input(const plan *out, cordon_error *err)
{
    if (out->bare && (out->isolation == CORDON_ISOLATION_LANDLOCK || out->no_nested))
        return err_set(err, CORDON_STAGE_PLAN, 0,
                       "cordon's protections cannot be turned off with --isolation landlock or --no-nested "
                       "(they are all such a sandbox has)");
    if (out->inherit_pid_ns && !out->proc)
        return err_set(err, CORDON_STAGE_PLAN, 0,
                       "sharing the caller's PID namespace shows the caller's /proc: it cannot be combined "
                       "with --no-proc");
    return 0;
}

/* /tmp: private unless a rule names it (or "/"); then TMPDIR is a private directory of
 * its own.  True when /tmp is private. */
static bool add_private_tmp(const resolved *r, plan *out)
{
    bool tmp_private = !resolved_rule_covers(r, "/tmp");
    if (tmp_private) {
        drop_base_bind_at(out, "/tmp", "/tmp");
        add_op(out, PLAN_TMPFS, "/tmp", NULL, xstrdup("private /tmp"))->mode = 01777;
        out->tmpdir = r->no_private_dirs ? NULL : xstrdup("/tmp");
    } else if (!r->no_private_dirs) {
        add_op(out, PLAN_TMPFS, PLAN_PRIVATE_TMP, NULL, xstrdup("private TMPDIR (a rule covers /tmp)"))->mode = 0700;
        out->tmpdir = xstrdup(PLAN_PRIVATE_TMP);
    }
    return tmp_private;
}

/* HOME: a private tmpfs at the caller's home path, so that ~ means the same
 * inside, unless a rule shows that path (then elsewhere), or the mount point would
 * have to be created inside a host directory.  True when HOME is at the caller's path. */
static bool add_private_home(const resolved *r, plan *out)
{
    bool home_here = private_home_at(r) && (r->home_type == FT_DIR || !base_covers(r, r->home));
    if (r->no_private_dirs) {
        /* the command's HOME is its environment's, showing what the view shows there */
    } else if (home_here && r->home_cow) {
        /* --base host: the real home, read-only underneath, writes to a private layer,
         * so that what is installed there (~/.local/bin, ~/.cargo, ~/.nvm) keeps
         * working; its credential stores are hidden by policy/protect.c's rules */
        drop_base_bind_at(out, r->home, "HOME");
        plan_op *op = add_op(out, PLAN_COW, r->home, r->home,
                             xstrdup("HOME: the real home, read-only underneath, writes to a private layer"));
        op->is_dir = true;
        op->dev = r->home_dev;
        op->ino = r->home_ino;
        out->home = xstrdup(r->home);
        out->home_fallback = xstrdup(out->root_is_host ? PLAN_HOME_FALLBACK_IN_TMP : PLAN_PRIVATE_HOME);
    } else if (home_here) {
        drop_base_bind_at(out, r->home, "HOME");
        add_op(out, PLAN_TMPFS, r->home, NULL, xstrdup("private HOME"))->mode = 0700;
        out->home = xstrdup(r->home);
        add_git_identity(r, out, out->home);
    } else {
        add_op(out, PLAN_TMPFS, PLAN_PRIVATE_HOME, NULL,
               xstrdup(r->home ? "private HOME (a rule covers the home directory)" : "private HOME"))
            ->mode = 0700;
        out->home = xstrdup(PLAN_PRIVATE_HOME);
        add_git_identity(r, out, out->home);
    }
    return home_here;
}

/* /dev, and /proc fresh, the caller's, or hidden. */
static void add_dev_proc(plan *out)
{
    add_op(out, PLAN_DEV, "/dev", NULL, xstrdup("minimal /dev"));
    if (out->proc)
        add_op(out, PLAN_PROC, "/proc", NULL,
               xstrdup(out->inherit_pid_ns ? "the caller's /proc, read-only (the caller's PID namespace)"
                                           : "fresh /proc"));
    else if (out->root_is_host)
        /* the host root bound whole brings the host's /proc along: --no-proc hides it */
        add_op(out, PLAN_HIDE, "/proc", NULL, xstrdup("--no-proc: the host's /proc hidden"))->is_dir = true;
}

/* cordon_policy_add_tmpfs: over what is shown there (mounted after the rules at the
 * same path: kind_order) */
static int add_tmpfs_ops(const plan_input *in, plan *out, cordon_error *err)
{
    for (size_t i = 0; i < in->n_tmpfs; i++) {
        if (in->isolation == CORDON_ISOLATION_LANDLOCK)
            return err_set(err, CORDON_STAGE_PLAN, 0, "a tmpfs (%s) needs namespaces, not --isolation landlock",
                           in->tmpfs[i].path);
        if (in->tmpfs[i].target)
            add_op(out, PLAN_SYMLINK, in->tmpfs[i].path, in->tmpfs[i].target, xstrdup("symlink"));
        else if (in->tmpfs[i].data)
            add_op(out, PLAN_FILE, in->tmpfs[i].path, in->tmpfs[i].data, xstrdup("file"))->mode = in->tmpfs[i].mode;
        else {
            plan_op *op = add_op(out, PLAN_TMPFS, in->tmpfs[i].path, NULL, xstrdup("tmpfs"));
            op->mode = in->tmpfs[i].mode;
            op->size = in->tmpfs[i].size;
        }
    }
    return 0;
}

/* The working directory must exist inside: under a shown host path, or exactly a
 * private directory. One the caller did not choose that would not be visible (cordon
 * started elsewhere, --workspace DIR) becomes the workspace, when that is shown. */
static int choose_cwd(const resolved *r, const plan_input *in, plan *out, cordon_error *err)
{
    const plan_op *cov = plan_covering(out, r->cwd);
    bool visible = cwd_visible(out, cov, r->cwd, r->cwd_type);
    if (!visible && !in->cwd_given && !in->no_workspace && r->workspace && r->cwd_type == FT_DIR &&
        !(cov && cov->kind == PLAN_HIDE) && cwd_visible(out, plan_covering(out, r->workspace), r->workspace, FT_DIR)) {
        out->cwd = xstrdup(r->workspace);
        out->cwd_is_workspace = true;
        visible = true;
    }
    if (!visible)
        return err_opt(err, CORDON_STAGE_PLAN, 0, "chdir", "the working directory %s %s inside the sandbox; %s", r->cwd,
                       r->cwd_type == FT_MISSING         ? "does not exist"
                       : (cov && cov->kind == PLAN_HIDE) ? "is hidden"
                                                         : "would not be visible",
                       in->cwd_given ? "choose a working directory that a rule shows"
                                     : "start from a directory the sandbox shows, show this one, or choose "
                                       "another working directory");
    if (!out->cwd)
        out->cwd = xstrdup(r->cwd);
    return 0;
}

int plan_build(const resolved *r, const plan_input *in, plan *out, cordon_error *err)
{
    *out = (plan){.network = in->network,
                  .proc = in->proc,
                  .no_nested = in->no_nested,
                  .bare = in->bare,
                  .keep_caps = in->keep_caps,
                  .hostname = in->hostname ? xstrdup(in->hostname) : NULL,
                  .inherit_pid_ns = in->inherit_pid_ns,
                  .isolation = in->isolation};
    if (refuse_input(out, err) < 0 || add_rule_ops(r, out, err) < 0) {
        plan_free(out);
        return -1;
    }
    warn_overridden(r, out);
    bool tmp_private = add_private_tmp(r, out);
    bool home_here = add_private_home(r, out);
    if (out->root_is_host && !r->no_private_dirs && (!home_here || !tmp_private)) {
        plan_free(out);
        return err_set(err, CORDON_STAGE_PLAN, 0, "internal error: the host root cannot be bound whole");
    }
    /* TMPDIR holds nothing: with the workspace (or another mount) below /tmp, it is a
     * private directory of its own there. */
    if (tmp_private && out->tmpdir && mounts_below(out, "/tmp")) {
        add_op(out, PLAN_TMPFS, PLAN_TMPDIR_IN_TMP, NULL,
               xstrdup("private TMPDIR (/tmp holds a mount: TMPDIR is kept empty)"))
            ->mode = 0700;
        free(out->tmpdir);
        out->tmpdir = xstrdup(PLAN_TMPDIR_IN_TMP);
    }
    add_dev_proc(out);
    if (add_tmpfs_ops(in, out, err) < 0) {
        plan_free(out);
        return -1;
    }

    /* Not a mount: carried along for supervise/limits.c, and for explain. */
    out->limits = in->limits;
    out->timeout = in->timeout;

    plan_sort(out);
    drop_redundant(out);
    if (add_holders(out))
        qsort(out->ops, out->n_ops, sizeof *out->ops, cmp_ops);
    if (choose_cwd(r, in, out, err) < 0) {
        plan_free(out);
        return -1;
    }
    if (in->view) {
        if (plan_apply_view(in->view, out, err) < 0) {
            plan_free(out);
            return -1;
        }
        if (in->view->host_dir)
            plan_sort(out);
    }
    if (in->isolation == CORDON_ISOLATION_LANDLOCK)
        add_landlock_rules(r, out);
    return 0;
}
