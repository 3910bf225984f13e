// SPDX-License-Identifier: Apache-2.0
/* A Codex permission profile as cordon rules (doc/codex.md, "How a profile maps").
 *
 * Pure: what the host says (the policy cwd, TMPDIR, HOME, whether a path exists) comes in
 * through cx_host.  The precedence is cordon's own, which is Codex's: the longest path
 * wins, and at one path deny > write > read.  What Codex protects under every writable
 * root (.git and its gitdir: target, .codex, .agents) cordon protects by itself, with
 * .aws added to its list by cx_apply(). */
#include <stdlib.h>
#include <string.h>

#include "codex/codex.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

/* Codex's LINUX_PLATFORM_DEFAULT_READ_ROOTS beyond what --base system shows. */
static const char *const minimal_extra[] = {"/nix/store", "/run/current-system/sw"};

void cx_plan_free(cx_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_rules; i++)
        free(p->rules[i].path);
    free(p->rules);
    strv_free(&p->deny_globs);
    *p = (cx_plan){0};
}

static void add_rule(cx_plan *p, const char *path, cordon_access access, const char *why)
{
    for (size_t i = 0; i < p->n_rules; i++)
        if (p->rules[i].access == access && strcmp(p->rules[i].path, path) == 0)
            return;
    grow(&p->rules, &p->cap_rules, p->n_rules + 1, sizeof *p->rules);
    p->rules[p->n_rules++] = (cx_rule){xstrdup(path), access, why};
}

/* "/a/b/" -> "/a/b"; "/" stays. */
static char *strip_slashes(const char *s)
{
    char *r = xstrdup(s);
    size_t n = strlen(r);
    while (n > 1 && r[n - 1] == '/')
        r[--n] = '\0';
    return r;
}

/* An entry's path on the host, or NULL when it names nothing here (TMPDIR unset, no /tmp). */
typedef struct resolved_entry {
    char *path;
    cx_access access;
    bool skip_missing;
    const char *why;
} resolved_entry;

static char *special_path(const cx_entry *e, const cx_host *h, const char **why)
{
    switch (e->special) {
    case CX_SP_ROOT: *why = "root"; return xstrdup("/");
    case CX_SP_MINIMAL: *why = "minimal"; return NULL; /* the platform's directories: handled as a base */
    case CX_SP_PROJECT_ROOTS:
        *why = "project_roots";
        if (e->subpath && e->subpath[0] == '/')
            return strip_slashes(e->subpath); /* as Rust's Path::join: an absolute part replaces */
        if (e->subpath && *e->subpath) {
            char *j = path_join(h->policy_cwd, e->subpath);
            char *r = strip_slashes(j);
            free(j);
            return r;
        }
        return strip_slashes(h->policy_cwd);
    case CX_SP_TMPDIR:
        *why = "tmpdir";
        /* Codex ignores a TMPDIR that is unset, empty or relative. */
        return h->tmpdir && h->tmpdir[0] == '/' ? strip_slashes(h->tmpdir) : NULL;
    case CX_SP_SLASH_TMP: *why = "slash_tmp"; return h->is_dir("/tmp", h->ctx) ? xstrdup("/tmp") : NULL;
    }
    return NULL;
}

static cordon_access to_cordon(cx_access a)
{
    switch (a) {
    case CX_READ: return CORDON_ACCESS_READ;
    case CX_WRITE: return CORDON_ACCESS_WRITE;
    case CX_DENY: return CORDON_ACCESS_NONE;
    }
    return CORDON_ACCESS_NONE;
}

/* The entry with the longest path at or above `path` (precedence at equal length), or
 * NULL; `skip_root` leaves out entries on "/". */
static const resolved_entry *covering(const resolved_entry *v, size_t n, const char *path, bool skip_root)
{
    const resolved_entry *best = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!v[i].path || (skip_root && strcmp(v[i].path, "/") == 0) || !path_has_prefix(path, v[i].path))
            continue;
        size_t l = strlen(v[i].path), bl = best ? strlen(best->path) : 0;
        if (!best || l > bl || (l == bl && v[i].access > best->access))
            best = &v[i];
    }
    return best;
}

/* Codex's has_full_disk_write_access(): a root write entry that nothing narrows (a
 * non-write entry narrows unless it is minimal, a root read, or a read of a path that a
 * write entry also names). */
static bool full_disk_write(const cx_profile *prof, const resolved_entry *v)
{
    bool root_write = false;
    for (size_t i = 0; i < prof->n_entries; i++) {
        const cx_entry *e = &prof->entries[i];
        if (e->kind == CX_SPECIAL && e->special == CX_SP_ROOT && e->access == CX_WRITE)
            root_write = true;
    }
    if (!root_write)
        return false;
    for (size_t i = 0; i < prof->n_entries; i++) {
        const cx_entry *e = &prof->entries[i];
        if (e->access == CX_WRITE)
            continue;
        if (e->kind == CX_GLOB)
            return false;
        if (e->kind == CX_SPECIAL && e->special == CX_SP_MINIMAL)
            continue;
        if (e->kind == CX_SPECIAL && e->special == CX_SP_ROOT) {
            if (e->access == CX_DENY)
                return false;
            continue;
        }
        if (!v[i].path)
            continue; /* names nothing here */
        bool overridden = false;
        for (size_t j = 0; j < prof->n_entries; j++)
            overridden |= prof->entries[j].access == CX_WRITE && v[j].path && strcmp(v[j].path, v[i].path) == 0 &&
                          e->access == CX_READ;
        if (!overridden)
            return false;
    }
    return true;
}

/* Each entry's path on this host into V.  True when the platform's minimal set is
 * readable. */
static bool resolve_entries(const cx_profile *prof, const cx_host *h, resolved_entry *v)
{
    bool minimal = false;
    for (size_t i = 0; i < prof->n_entries; i++) {
        const cx_entry *e = &prof->entries[i];
        v[i].access = e->access;
        v[i].skip_missing = e->skip_missing;
        switch (e->kind) {
        case CX_PATH:
            v[i].path = strip_slashes(e->path);
            v[i].why = "path";
            break;
        case CX_SPECIAL:
            v[i].path = special_path(e, h, &v[i].why);
            if (e->special == CX_SP_MINIMAL && e->access != CX_DENY)
                minimal = true; /* platform defaults are read-only, whatever the access */
            break;
        case CX_GLOB: break; /* cx_map's deny globs */
        }
    }
    return minimal;
}

/* The root: readable means the whole host read-only (cordon's --base host, which
 * also hides the credential stores and other users' homes); writable, a rule on "/". */
static void map_root(const cx_profile *prof, const cx_host *h, const resolved_entry *v, bool minimal, cx_plan *out)
{
    const resolved_entry *root = NULL;
    for (size_t i = 0; i < prof->n_entries; i++)
        if (v[i].path && strcmp(v[i].path, "/") == 0 && (!root || v[i].access > root->access))
            root = &v[i];
    if (root && root->access == CX_READ) {
        out->base = CORDON_BASE_HOST;
        /* What --base host makes private, Codex shows as it is: the host's /tmp, read-only
         * unless an entry says otherwise.  (The home shows as it is too: cx_apply turns
         * the private HOME and TMPDIR off.) */
        if (h->is_dir("/tmp", h->ctx) && !covering(v, prof->n_entries, "/tmp", true))
            add_rule(out, "/tmp", CORDON_ACCESS_READ, "root (/tmp as it is)");
    } else if (root && root->access == CX_WRITE) {
        add_rule(out, "/", CORDON_ACCESS_WRITE, "root");
        if (minimal)
            out->base = CORDON_BASE_SYSTEM;
    } else if (minimal) {
        out->base = CORDON_BASE_SYSTEM;
    }
    if (minimal && out->base == CORDON_BASE_SYSTEM)
        for (size_t k = 0; k < sizeof minimal_extra / sizeof *minimal_extra; k++)
            if (h->exists(minimal_extra[k], h->ctx))
                add_rule(out, minimal_extra[k], CORDON_ACCESS_READ, "minimal");
}

/* A rule for each entry's path but the root's. */
static void map_entries(const cx_profile *prof, const cx_host *h, const resolved_entry *v, cx_plan *out)
{
    for (size_t i = 0; i < prof->n_entries; i++) {
        const resolved_entry *x = &v[i];
        if (!x->path || strcmp(x->path, "/") == 0)
            continue;
        if (!h->exists(x->path, h->ctx)) {
            if (x->skip_missing)
                continue; /* "missing_path_behavior": "skip" */
            /* Codex keeps a missing read-only or denied path from being created (it mounts
             * /dev/null on its first missing component); cordon's deny of a missing path
             * does that, and shows nothing. */
            add_rule(out, x->path, x->access == CX_WRITE ? CORDON_ACCESS_WRITE : CORDON_ACCESS_NONE, x->why);
            continue;
        }
        add_rule(out, x->path, to_cordon(x->access), x->why);
    }
}

/* Codex keeps .git, and the directory a .git file points to, wholly read-only under
 * every writable root (cordon alone would keep only its hooks and configuration so
 * that commits work). */
static void protect_git(const cx_host *h, cx_plan *out)
{
    size_t n = out->n_rules;
    for (size_t i = 0; i < n; i++) {
        if (out->rules[i].access != CORDON_ACCESS_WRITE || !h->is_dir(out->rules[i].path, h->ctx))
            continue;
        char *dotgit = path_join(out->rules[i].path, ".git");
        if (h->exists(dotgit, h->ctx)) {
            char *gitdir = h->gitdir_of ? h->gitdir_of(dotgit, h->ctx) : NULL;
            add_rule(out, dotgit, CORDON_ACCESS_READ, "protected .git");
            if (gitdir)
                add_rule(out, gitdir, CORDON_ACCESS_READ, "protected gitdir: of .git");
            free(gitdir);
        }
        free(dotgit);
    }
}

/* The glob entries that deny, as absolute patterns. */
static int map_deny_globs(const cx_profile *prof, const cx_host *h, cx_plan *out, cordon_error *err)
{
    for (size_t i = 0; i < prof->n_entries; i++) {
        const cx_entry *e = &prof->entries[i];
        if (e->kind != CX_GLOB || e->access != CX_DENY)
            continue; /* Codex applies glob entries that deny, and ignores the others */
        if (!*e->path)
            return err_set(err, CORDON_STAGE_USAGE, 0,
                           "unreadable glob \"\" (an empty pattern is the project root %s) cannot be safely "
                           "expanded; use a pattern with a non-root directory prefix",
                           h->policy_cwd);
        char *pat = e->path[0] == '/' ? xstrdup(e->path) : path_join(h->policy_cwd, e->path);
        strv_push(&out->deny_globs, pat);
    }
    out->glob_depth = prof->glob_depth;
    return 0;
}

int cx_map(const cx_profile *prof, const cx_host *h, bool proxy, cx_plan *out, cordon_error *err)
{
    *out = (cx_plan){.mode = CX_RUN_SANDBOX, .base = CORDON_BASE_EMPTY};
    out->network = proxy ? CORDON_NETWORK_PROXY : prof->network_enabled ? CORDON_NETWORK_HOST : CORDON_NETWORK_NONE;

    bool restricted = prof->kind == CX_MANAGED && prof->fs_restricted;
    resolved_entry *v = xcalloc(prof->n_entries + 1, sizeof *v);
    int ret = 0;
    bool minimal = restricted && resolve_entries(prof, h, v);
    if (!restricted || full_disk_write(prof, v)) {
        /* The whole disk writable (disabled, external, unrestricted, an unnarrowed root
         * write): the helper then runs the command without bubblewrap, and without any
         * sandbox at all when the network is enabled too. */
        if (out->network == CORDON_NETWORK_HOST)
            out->mode = CX_RUN_DIRECT;
        else
            add_rule(out, "/", CORDON_ACCESS_WRITE, "full disk write");
    } else {
        out->fs_restricted = true;
        map_root(prof, h, v, minimal, out);
        map_entries(prof, h, v, out);
        protect_git(h, out);
        ret = map_deny_globs(prof, h, out, err);
    }
    for (size_t i = 0; i < prof->n_entries; i++)
        free(v[i].path);
    free(v);
    if (ret < 0)
        cx_plan_free(out);
    return ret;
}

bool cx_is_wsl1(const char *proc_version, const char *osrelease)
{
    if (!proc_version || !strcasestr(proc_version, "microsoft"))
        return false;
    return !osrelease || !strstr(osrelease, "WSL2");
}
