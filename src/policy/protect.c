// SPDX-License-Identifier: Apache-2.0
#include "policy/protect.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy/canon.h"
#include "policy/gitconfig.h"
#include "policy/sensitive.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"

/* Names protected at the top of every writable path (README, "Workspace protection"):
 * what agents and editors load from a project as configuration, and git's submodule
 * list. */
const char *const protect_default_names[] = {
    ".cordon", ".codex", ".agents", ".claude", ".mcp.json", ".vscode", ".idea", ".gitmodules",
};
const size_t protect_n_default_names = sizeof protect_default_names / sizeof *protect_default_names;
#define default_names protect_default_names
/* Inside a git directory: what would run code, or configure code to run, outside; and
 * what points git at another directory to read those from. */
static const char *const git_files[] = {"hooks", "config", "config.worktree", "commondir", "gitdir"};
#define MODULES_MAX_DEPTH 8

static bool user_origin(rule_origin o)
{
    return o == ORIGIN_FLAG || o == ORIGIN_SETTINGS || o == ORIGIN_WORKSPACE;
}

/* A user rule exactly at `path`? */
static const rrule *user_rule_at(const resolved *r, const char *path)
{
    for (size_t i = 0; i < r->n_rules; i++)
        if (user_origin(r->rules[i].origin) && strcmp(r->rules[i].path, path) == 0)
            return &r->rules[i];
    return NULL;
}

/* The winning rule with the longest path at or above `path` that mounts something: a
 * rule on a path that does not exist shows, hides and protects nothing. */
static const rrule *effective(const resolved *r, const char *path)
{
    return resolved_at_or_above(r, path, false);
}

/* A directory can be renamed even when something is mounted below it: the command
 * could `mv .git .git-old` and build a fresh .git/hooks.  Every directory above `below`
 * whose parent is writable must be a mount point (rename(2) of one fails with EBUSY):
 * a rule that mounts something there (a read-only or hidden one) is one; a writable
 * rule is one only if the plan keeps it (it would drop it as redundant): pin it; else
 * bind the directory onto itself. */
static int pin_between(resolved *r, const char *below, cordon_error *err)
{
    char *dir = xstrdup(below);
    int ret = 0;
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
            break;
        *slash = '\0';
        /* can `dir` be renamed, that is: is its parent writable? */
        char *parent = xstrdup(dir);
        path_to_parent(parent);
        const rrule *pe = effective(r, parent);
        free(parent);
        if (!pe || pe->access != CORDON_ACCESS_WRITE)
            continue;
        const rrule *eff = effective(r, dir);
        if (eff && strcmp(eff->path, dir) == 0) {
            if (eff->access == CORDON_ACCESS_WRITE)
                r->rules[eff - r->rules].pin = true; /* keep it in the plan */
            continue;
        }
        if (!eff || eff->access != CORDON_ACCESS_WRITE)
            continue; /* not reachable */
        char *source = xasprintf("pinned: holds %s", below);
        ret = resolve_add_rule(r, dir, CORDON_ACCESS_WRITE, ORIGIN_PROTECT, source, 0, err);
        free(source);
        if (ret < 0)
            break;
        r->rules[r->n_rules - 1].pin = true;
    }
    free(dir);
    return ret;
}

/* Can the sandbox write anything in `dir` or below it?  Where it cannot, a protection
 * there has nothing to protect, and a directory of the caller's that cordon cannot
 * search there cannot be made searchable by the command either (chmod needs a writable
 * mount); protect_path then goes on without looking. */
static bool writable_in_or_below(const char *dir, void *arg)
{
    const resolved *r = arg;
    const rrule *eff = effective(r, dir);
    if (eff && eff->access == CORDON_ACCESS_WRITE)
        return true;
    for (size_t i = 0; i < r->n_rules; i++)
        if (!r->rules[i].shadowed && r->rules[i].access == CORDON_ACCESS_WRITE &&
            path_has_prefix(r->rules[i].path, dir))
            return true;
    return false;
}

/* Keep `path` read-only if it would otherwise be writable; where it is missing, keep it
 * from being created (the creation control refuses the name: plan.c, PLAN_NOCREATE). */
static int protect_path(resolved *r, const char *path, const char *what, const char *root, bool hold_missing,
                        cordon_error *err)
{
    canon c;
    if (canon_resolve(path, &c, err) < 0) {
        /* Below a directory the caller may not search (--allow / as a user: /lost+found)
         * the command, with the caller's uid and no capability, can create and change
         * nothing either -- unless the caller owns that directory (chmod 000 WS by one
         * run, chmod 755 WS by the next's command): canon_unreadable decides, and fails
         * closed. */
        if (err->errnum == EACCES || err->errnum == EPERM) {
            err_clear(err);
            _cleanup_free_ char *why = xasprintf("protecting the %s %s in the writable %s", what, path, root);
            return canon_unreadable_if(path, why, writable_in_or_below, r, err);
        }
        return err_wrap(err, "protecting %s", path);
    }
    int ret = 0;
    bool missing = c.type == FT_MISSING;
    for (size_t i = 0; i < r->n_rules; i++)
        if (r->rules[i].origin == ORIGIN_PROTECT && !r->rules[i].pin && strcmp(r->rules[i].path, c.path) == 0)
            goto out; /* protected already (a name given twice, a worktree met twice) */
    /* A symlink crossed inside a writable path could be replaced by the command: add the
     * rule as spelled, so that resolve.c fails closed on it. */
    for (size_t k = 0; k < c.crossed.n; k++) {
        const rrule *w = effective(r, c.crossed.v[k]);
        if (w && w->access == CORDON_ACCESS_WRITE && strcmp(w->path, c.crossed.v[k]) != 0) {
            char *source = xasprintf("protected %s in writable %s", what, root);
            ret = resolve_add_rule(r, path, missing ? CORDON_ACCESS_NONE : CORDON_ACCESS_READ, ORIGIN_PROTECT, source,
                                   0, err);
            free(source);
            goto out;
        }
    }
    /* Below a file nothing can be made (and the file itself is held when it matters). */
    if (missing && (!hold_missing || c.missing_under_file))
        goto out;
    const rrule *eff = effective(r, c.path);
    if (!eff || eff->access != CORDON_ACCESS_WRITE)
        goto out; /* already read-only or hidden */
    if (strcmp(eff->path, c.path) == 0 && user_origin(eff->origin))
        goto out; /* a rule grants write on exactly this path */
    char *source = xasprintf("protected %s in writable %s", what, root);
    char *below = xstrdup(missing ? c.first_missing : c.path);
    /* The path as spelled (a symlink crossed inside a writable path fails closed),
     * resolved once: c is what resolve_add_rule would resolve again; the rule takes it. */
    ret = resolve_add_canon(r, path, &c, missing ? CORDON_ACCESS_NONE : CORDON_ACCESS_READ, ORIGIN_PROTECT, source, 0,
                            err);
    free(source);
    if (ret == 0)
        ret = pin_between(r, below, err);
    free(below);
out:
    canon_free(&c);
    return ret;
}

/* A git directory found at start: HEAD may be rewritten there (creation.h). */
static void note_gitdir(resolved *r, const char *gitdir)
{
    canon c;
    cordon_error ignored = {0};
    if (canon_resolve(gitdir, &c, &ignored) < 0)
        return;
    const rrule *eff = effective(r, c.path);
    if (c.type == FT_DIR && eff && eff->access == CORDON_ACCESS_WRITE && !strv_contains(&r->gitdirs, c.path))
        strv_push(&r->gitdirs, xstrdup(c.path));
    canon_free(&c);
}

/* What the configuration files of a repository (and the host's) name for a host git to
 * run or read: kept read-only, or uncreatable (gitconfig.h). */
static int protect_config_targets(resolved *r, const char *gitdir, const char *root, cordon_error *err)
{
    strv unread = {0}, too_large = {0};
    gitconfig_ctx ctx = {.home = r->home, .worktree = root, .unread = &unread, .too_large = &too_large};
    strv targets = {0};
    char *files[] = {path_join(gitdir, "config"), path_join(gitdir, "config.worktree"), NULL};
    for (size_t i = 0; files[i]; i++)
        gitconfig_paths(&ctx, files[i], &targets);
    /* the host's own configuration: system and global, as git finds them */
    const char *env[] = {getenv("GIT_CONFIG_SYSTEM"), getenv("GIT_CONFIG_GLOBAL"), NULL};
    for (size_t i = 0; i < 2; i++)
        if (env[i] && env[i][0] == '/')
            gitconfig_paths(&ctx, env[i], &targets);
    gitconfig_paths(&ctx, "/etc/gitconfig", &targets);
    if (r->home) {
        char *g = path_join(r->home, ".gitconfig");
        gitconfig_paths(&ctx, g, &targets);
        free(g);
        const char *xdg = getenv("XDG_CONFIG_HOME");
        char *x = xdg && xdg[0] == '/' ? path_join(xdg, "git/config") : path_join(r->home, ".config/git/config");
        gitconfig_paths(&ctx, x, &targets);
        free(x);
    }
    for (size_t i = 0; files[i]; i++)
        free(files[i]);
    int ret = 0;
    /* A configuration file that cannot be read names nothing today; made readable again
     * (by the caller after the run), what it names in a writable path is what the command
     * may have changed meanwhile. */
    for (size_t i = 0; ret == 0 && i < unread.n; i++) {
        _cleanup_free_ char *why =
            xasprintf("reading the git configuration %s (for what it names in the writable %s)", unread.v[i], root);
        ret = canon_unreadable(unread.v[i], why, err);
    }
    strv_free(&unread);
    if (ret == 0 && too_large.n > 0)
        ret = err_set(err, CORDON_STAGE_RESOLVE, EFBIG,
                      "the git configuration %s is larger than cordon reads (1 MiB), so it cannot tell what it names "
                      "in the writable %s for a host git to run or read; make it smaller",
                      too_large.v[0], root);
    strv_free(&too_large);
    for (size_t i = 0; ret == 0 && i < targets.n; i++)
        ret = protect_path(r, targets.v[i], "target of the git configuration", root, true, err);
    strv_free(&targets);
    return ret;
}

/* Open the directory `path` of a git directory for listing (worktrees/, modules/): *d
 * NULL when it is not there.  One that cannot be read fails closed unless no command
 * running as the caller could get in either, or nothing in it is writable
 * (canon_unreadable_if): what is in it is what a host git runs. */
static int open_git_list(resolved *r, const char *path, const char *root, DIR **d, cordon_error *err)
{
    *d = opendir(path);
    if (*d || errno == ENOENT || errno == ENOTDIR)
        return 0;
    int e = errno;
    _cleanup_free_ char *why = xasprintf("protecting the git directories in the writable %s", root);
    if (e == EACCES || e == EPERM)
        return canon_unreadable_if(path, why, writable_in_or_below, r, err);
    return err_set(err, CORDON_STAGE_RESOLVE, e, "%s: cannot list %s", why, path);
}

static int protect_git_dir(resolved *r, const char *gitdir, const char *root, int depth, cordon_error *err)
{
    note_gitdir(r, gitdir);
    if (depth == 0 && protect_config_targets(r, gitdir, root, err) < 0)
        return -1;
    for (size_t i = 0; i < sizeof git_files / sizeof *git_files; i++) {
        char *p = path_join(gitdir, git_files[i]);
        char *what = xasprintf("git %s", git_files[i]);
        /* Missing names are refused anyway in every git directory of the host (the
         * creation control): only hooks and config are listed by name. */
        int ret = protect_path(r, p, what, root, i < 2, err);
        free(what);
        free(p);
        if (ret < 0)
            return -1;
    }
    if (depth >= MODULES_MAX_DEPTH)
        return 0;
    /* Linked worktrees keep their own HEAD, commondir and gitdir in worktrees/NAME. */
    if (depth == 0) {
        _cleanup_free_ char *wts = path_join(gitdir, "worktrees");
        _cleanup_dir_ DIR *w = NULL;
        if (open_git_list(r, wts, root, &w, err) < 0)
            return -1;
        struct dirent *de;
        int ret = 0;
        while (w && ret == 0 && (errno = 0, de = readdir(w)) != NULL) {
            if (de->d_name[0] == '.')
                continue;
            char *wt = path_join(wts, de->d_name);
            ret = protect_git_dir(r, wt, root, MODULES_MAX_DEPTH, err);
            free(wt);
        }
        if (w && ret == 0 && errno != 0)
            ret = err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot list %s (the linked worktrees of %s)", wts, root);
        if (ret < 0)
            return -1;
    }
    /* Submodules keep their repositories in .git/modules/NAME (nested: .../modules/...). */
    _cleanup_free_ char *modules = path_join(gitdir, "modules");
    _cleanup_dir_ DIR *d = NULL;
    if (open_git_list(r, modules, root, &d, err) < 0)
        return -1;
    if (!d)
        return 0;
    int ret = 0;
    struct dirent *de;
    while (ret == 0 && (errno = 0, de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' && (de->d_name[1] == '\0' || (de->d_name[1] == '.' && de->d_name[2] == '\0')))
            continue;
        char *sub = path_join(modules, de->d_name);
        struct stat st;
        /* a symlink here is followed: protecting through it inside a writable path
         * then fails closed (resolve.c) */
        if (lstat(sub, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))
            ret = protect_git_dir(r, sub, root, depth + 1, err);
        free(sub);
    }
    if (ret == 0 && errno != 0)
        ret = err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot list %s (the submodules of %s)", modules, root);
    return ret;
}

/* Read a one-line file such as .git ("gitdir: X") or commondir ("X") into *out; *out
 * NULL if absent, empty or not a file.  One that exists and cannot be read fails closed
 * unless no command running as the caller could read it either (canon_unreadable): it
 * names the git directory whose hooks a host git runs. */
static int read_small(const char *path, const char *root, char **out, cordon_error *err)
{
    *out = NULL;
    _cleanup_fd_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR || e == ELOOP)
            return 0; /* not there, or a symlink (not followed: a path through it fails closed) */
        _cleanup_free_ char *why = xasprintf("reading the git file %s in the writable %s", path, root);
        if (e == EACCES || e == EPERM)
            return canon_unreadable(path, why, err);
        return err_set(err, CORDON_STAGE_RESOLVE, e, "%s", why);
    }
    struct stat st;
    if (fstat(fd, &st) < 0)
        return err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot look at %s", path);
    if (!S_ISREG(st.st_mode))
        return 0;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n < 0)
        return err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot read %s", path);
    if (n == 0)
        return 0;
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    *out = xstrdup(buf);
    return 0;
}

static char *relative_to(const char *base, const char *p)
{
    return p[0] == '/' ? xstrdup(p) : path_join(base, p);
}

static int protect_git(resolved *r, const char *root, cordon_error *err)
{
    char *dotgit = path_join(root, ".git");
    struct stat st;
    int ret = 0;
    if (lstat(dotgit, &st) < 0) {
        int e = errno;
        if (e == EACCES || e == EPERM) {
            /* the writable root cannot be searched: is .git there? */
            _cleanup_free_ char *why = xasprintf("looking for the git directory of the writable %s", root);
            ret = canon_unreadable(dotgit, why, err);
        } else if (e != ENOENT && e != ENOTDIR) {
            ret = err_set(err, CORDON_STAGE_RESOLVE, e, "cannot look at %s", dotgit);
        }
        free(dotgit);
        return ret;
    }
    if (S_ISREG(st.st_mode)) {
        /* A worktree or a submodule checkout: ".git" names the real git directory; the
         * file itself stays read-only, or the command could point it elsewhere. */
        ret = protect_path(r, dotgit, "git file", root, false, err);
        char *line = NULL;
        if (ret == 0)
            ret = read_small(dotgit, root, &line, err);
        if (line && strncmp(line, "gitdir:", 7) == 0) {
            const char *g = line + 7;
            while (*g == ' ' || *g == '\t')
                g++;
            char *gitdir = relative_to(root, g);
            ret = protect_git_dir(r, gitdir, root, 0, err);
            char *commonfile = path_join(gitdir, "commondir");
            char *common = NULL;
            if (ret == 0)
                ret = read_small(commonfile, root, &common, err);
            if (ret == 0 && common) {
                char *cdir = relative_to(gitdir, common);
                ret = protect_git_dir(r, cdir, root, 0, err);
                free(cdir);
            }
            free(common);
            free(commonfile);
            free(gitdir);
        }
        free(line);
    } else {
        /* A directory, or a symlink: protecting below it resolves through it, and a
         * symlink inside a writable path makes the run fail closed (resolve.c). */
        ret = protect_git_dir(r, dotgit, root, 0, err);
    }
    free(dotgit);
    return ret;
}

static int protect_writable_root(resolved *r, const struct cordon_policy *p, const char *root, cordon_error *err)
{
    if (protect_git(r, root, err) < 0)
        return -1;
    for (size_t i = 0; i < protect_n_default_names + p->protect.n; i++) {
        const char *name = i < protect_n_default_names ? default_names[i] : p->protect.v[i - protect_n_default_names];
        char *path = path_join(root, name);
        int ret = protect_path(r, path, name, root, true, err);
        free(path);
        if (ret < 0)
            return -1;
    }
    return 0;
}

/* ---- hidden paths: credential stores, other users' homes, host sockets, --hide ------ */

/* Hide `path` where the sandbox would show it: an empty, unwritable directory or file in
 * its place.  exact: a rule that names the path exactly shows it after all (credential
 * stores, --hide); otherwise any rule at or above it that is not the base does (/run).  A
 * missing path is not held: nothing to read there, and what the command creates is its
 * own. */
static int hide(resolved *r, const char *path, const char *source, bool exact, cordon_error *err)
{
    canon c;
    if (canon_resolve(path, &c, err) < 0) {
        /* Below a directory the caller may not search (a HOME of /root for uid 65534),
         * the command, with the caller's uid and no capability, cannot read it either --
         * unless the caller owns that directory and could chmod it: then fail closed
         * (canon_unreadable). */
        if (err->errnum == EACCES || err->errnum == EPERM) {
            err_clear(err);
            return canon_unreadable(path, source, err);
        }
        return err_wrap(err, "%s", source);
    }
    int ret = 0;
    if (c.dotdot_after_missing) {
        ret = err_set(err, CORDON_STAGE_RESOLVE, 0,
                      "%s: '..' follows %s, which does not exist, so the kernel cannot resolve the path; "
                      "write it without '..'",
                      source, c.first_missing);
        goto out;
    }
    if (c.type == FT_MISSING)
        goto out;
    if (exact ? user_rule_at(r, c.path) != NULL : resolved_rule_covers(r, c.path))
        goto out; /* a rule shows it */
    if (!resolved_shows(r, c.path))
        goto out;                                                                             /* not visible anyway */
    ret = resolve_add_canon(r, path, &c, CORDON_ACCESS_NONE, ORIGIN_PROTECT, source, 0, err); /* resolved once */
out:
    canon_free(&c);
    return ret;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory `dir` (sorted), or -1 when it cannot be listed. */
static int list_names(const char *dir, strv *out)
{
    int fd = open_no_symlinks(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    struct dirent *de; /* (the DIR owns fd now) */
    while ((errno = 0, de = readdir(d)) != NULL)
        strv_push(out, xstrdup(de->d_name));
    int e = errno;
    closedir(d);
    if (e != 0) {
        strv_free(out);
        return -1;
    }
    if (out->n > 1)
        qsort(out->v, out->n, sizeof *out->v, cmp_str);
    return 0;
}

/* The credential stores of the caller's home (sensitive.c), wherever a rule shows them. */
static int hide_credentials(resolved *r, cordon_error *err)
{
    if (!r->home || strcmp(r->home, "/") == 0)
        return 0;
    /* Most stores are not there: the home listed once, a store whose first component
     * is not in it skipped without a look of its own (the look would find it missing,
     * which hides nothing).  A home that cannot be listed: each store looked at. */
    strv names = {0};
    bool listed = list_names(r->home, &names) == 0;
    for (size_t i = 0; i < n_credential_stores; i++) {
        if (listed) {
            char first[NAME_MAX + 1];
            size_t l = strcspn(credential_stores[i].path, "/");
            const char *key = first;
            if (l > NAME_MAX)
                l = NAME_MAX;
            memcpy(first, credential_stores[i].path, l);
            first[l] = '\0';
            if (names.n == 0 || !bsearch(&key, names.v, names.n, sizeof *names.v, cmp_str))
                continue;
        }
        char *p = path_join(r->home, credential_stores[i].path);
        /* Cheap first (every run passes here): where the view does not show the store as
         * spelled (the private HOME in place of the real one, a base without the home),
         * the home is not visible there, whatever symlinks it holds. */
        if (!resolved_shows(r, p)) {
            free(p);
            continue;
        }
        char *source = xasprintf("credential store: %s", credential_stores[i].what);
        int ret = hide(r, p, source, true, err);
        free(source);
        free(p);
        if (ret < 0) {
            strv_free(&names);
            return -1;
        }
    }
    strv_free(&names);
    return 0;
}

/* Every other user's home, /home/X and /root, unless a rule names it (or /home). */
static int hide_other_homes(resolved *r, cordon_error *err)
{
    strv homes = {0};
    DIR *d = opendir("/home");
    int e = d ? 0 : errno;
    if (!d && e != ENOENT && e != ENOTDIR && resolved_shows(r, "/home")) {
        /* a /home that cannot be listed but can be searched shows the homes in it by name */
        if (e != EACCES && e != EPERM)
            return err_set(err, CORDON_STAGE_RESOLVE, e, "cannot list /home (to hide other users' homes)");
        if (canon_unreadable("/home", "hiding other users' homes", err) < 0)
            return -1;
    }
    if (d) {
        struct dirent *de;
        while ((errno = 0, de = readdir(d)) != NULL)
            if (de->d_name[0] != '.' || (de->d_name[1] != '\0' && strcmp(de->d_name, "..") != 0))
                strv_push(&homes, path_join("/home", de->d_name));
        e = errno;
        closedir(d);
        if (e != 0) { /* a home not listed would go unhidden */
            strv_free(&homes);
            return err_set(err, CORDON_STAGE_RESOLVE, e, "cannot list /home (to hide other users' homes)");
        }
    }
    strv_push(&homes, xstrdup("/root"));
    int ret = 0;
    for (size_t i = 0; ret == 0 && i < homes.n; i++) {
        const char *h = homes.v[i];
        if (r->home && path_has_prefix(r->home, h))
            continue; /* the caller's own */
        if (user_rule_at(r, "/home") && path_has_prefix(h, "/home"))
            continue;
        struct stat st;
        if (lstat(h, &st) == 0 && S_ISDIR(st.st_mode))
            ret = hide(r, h, "another user's home", true, err);
    }
    strv_free(&homes);
    return ret;
}

/* Files of /etc that are symlinks into /run on some systems (systemd-resolved's
 * resolv.conf, a container's machine-id): shown again when /run is hidden. */
static const char *const etc_links_into_run[] = {"/etc/resolv.conf", "/etc/machine-id", "/etc/hostname",
                                                 "/etc/hosts",       "/etc/localtime",  "/etc/timezone"};

/* --base host: the host's service sockets (docker.sock, D-Bus, ssh and gpg agents,
 * systemd) live under /run and $XDG_RUNTIME_DIR; a read-only bind does not keep a
 * command from connect()ing to a socket, so they are hidden unless a rule shows them. */
static int hide_host_sockets(resolved *r, cordon_error *err)
{
    if (r->base != CORDON_BASE_HOST)
        return 0;
    const char *dirs[] = {"/run", "/var/run", r->runtime_dir};
    size_t before = r->n_rules;
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++)
        if (dirs[i] &&
            hide(r, dirs[i], "host service sockets (--base host; a rule that shows them lifts this)", false, err) < 0)
            return -1;
    if (r->n_rules == before)
        return 0;
    for (size_t i = 0; i < sizeof etc_links_into_run / sizeof *etc_links_into_run; i++) {
        const char *link = etc_links_into_run[i];
        char target[4096];
        ssize_t tl = readlink(link, target, sizeof target - 1);
        if (tl <= 0)
            continue; /* not a symlink (or not there) */
        target[tl] = '\0';
        if (!strstr(target, "run/"))
            continue; /* /etc/localtime -> /usr/share/zoneinfo/...: not into /run */
        canon c;
        if (canon_resolve(link, &c, err) < 0) {
            err_clear(err);
            continue; /* an unreadable link: nothing to show */
        }
        const rrule *x = resolved_lookup(r, c.path);
        bool show = c.type == FT_FILE && x && x->origin == ORIGIN_PROTECT && x->access == CORDON_ACCESS_NONE &&
                    resolved_shows(r, link) == false && strcmp(x->path, c.path) != 0;
        /* only a regular file the hiding covers, never a socket */
        if (show) {
            char *source = xasprintf("shown: %s points here (below the hidden %s)", link, x->path);
            int ret = resolve_add_rule(r, c.path, CORDON_ACCESS_READ, ORIGIN_PROTECT, source, 0, err);
            free(source);
            if (ret < 0) {
                canon_free(&c);
                return -1;
            }
        }
        canon_free(&c);
    }
    return 0;
}

/* cordon's own state, the copy-on-write workspaces (README, "Copy-on-write workspaces"):
 * a sandbox that could read or write it could drive a workspace of its caller's (its
 * upper layer is what `integrate` brings back).  Hidden wherever a rule shows it, like a
 * credential store, unless a rule names the directory exactly.  (The sessions' sockets
 * need no rule: the holder refuses every sandboxed client, README "Sessions".) */
static int hide_cordon_state(resolved *r, cordon_error *err)
{
    const char *xs = getenv("XDG_STATE_HOME");
    _cleanup_free_ char *state = NULL;
    if (xs && xs[0] == '/')
        state = path_join(xs, "cordon");
    else if (r->home && strcmp(r->home, "/") != 0)
        state = path_join(r->home, ".local/state/cordon");
    if (!state || !resolved_shows(r, state))
        return 0;
    return hide(r, state, "cordon's own state (copy-on-write workspaces): no sandbox may drive them", true, err);
}

/* --hide and hiddenPaths. */
static int hide_requested(resolved *r, cordon_error *err)
{
    for (size_t i = 0; i < r->n_hides; i++)
        if (hide(r, r->hides[i].path, r->hides[i].source, true, err) < 0)
            return -1;
    return 0;
}

/* ---- the home as a writable path ------------------------------------------------------ */

/* A writable workspace that is the home, "/" or a directory above the home would let the
 * command read every credential and rewrite what the caller's shell runs at its next
 * start: refused, unless --allow names that directory (README, "The home and the host"). */
static int check_home_workspace(const resolved *r, const struct cordon_policy *p, cordon_error *err)
{
    const char *ws = r->workspace;
    if (p->no_workspace || p->read_only || !ws)
        return 0;
    bool root = strcmp(ws, "/") == 0;
    bool home = r->home && strcmp(ws, r->home) == 0;
    bool above = r->home && !home && path_has_prefix(r->home, ws);
    if (!root && !home && !above)
        return 0;
    /* --allow WORKSPACE: the caller means it.  (Looked up among the policy's rules: a rule
     * on "/" is one rule per top-level entry by now.) */
    for (size_t i = 0; i < p->n_rules; i++) {
        const policy_rule *pr = &p->rules[i];
        if (pr->origin != ORIGIN_FLAG || pr->access != CORDON_ACCESS_WRITE)
            continue;
        canon c;
        cordon_error ignored;
        if (canon_resolve(pr->path, &c, &ignored) < 0)
            continue;
        bool same = strcmp(c.path, ws) == 0;
        canon_free(&c);
        if (same)
            return 0;
    }
    const char *what = root ? "the root directory" : home ? "your home directory" : "a directory above your home";
    return err_set(err, CORDON_STAGE_RESOLVE, 0,
                   "the workspace %s%s is %s: writable, it would let the command read your credentials "
                   "and change what your shell and tools run at start-up (.bashrc, .gitconfig, "
                   ".ssh/authorized_keys ...); run cordon from a project directory, or pass --workspace DIR, "
                   "--no-workspace or --read-only; to mean it, add --allow %s (credential stores stay "
                   "hidden and start-up files read-only)",
                   ws, p->workspace ? "" : " (the current directory)", what, ws);
}

/* Wherever the home is writable, its start-up files (sensitive.c) stay read-only unless a
 * rule grants write on exactly that path; missing ones cannot be created (refused by the
 * creation control like a protected name, where their parent directory exists: a rule
 * on a missing parent would keep the whole parent, ~/.config say, from being made). */
static int protect_startup_files(resolved *r, cordon_error *err)
{
    if (!r->home || strcmp(r->home, "/") == 0)
        return 0;
    for (size_t i = 0; i < n_startup_files; i++) {
        char *p = path_join(r->home, startup_files[i].path);
        const rrule *eff = effective(r, p);
        int ret = 0;
        /* writable: by a rule of the caller's, or by a pin an entry before this one added */
        if (eff && eff->access == CORDON_ACCESS_WRITE) {
            char *parent = xstrdup(p);
            *strrchr(parent, '/') = '\0';
            struct stat st;
            bool hold = stat(parent, &st) == 0 && S_ISDIR(st.st_mode);
            char *what = xasprintf("start-up file %s (%s)", startup_files[i].path, startup_files[i].what);
            ret = protect_path(r, p, what, r->home, hold, err);
            free(what);
            free(parent);
        }
        free(p);
        if (ret < 0)
            return -1;
    }
    return 0;
}

/* ---- pins for hidden and read-only paths -------------------------------------------- */

int protect_pin(resolved *r, cordon_error *err)
{
    /* A hidden or read-only path below a writable directory is only as good as the names
     * above it: `mv config c2` would carry config/secrets along, and the next run with the
     * same --deny config/secrets would find nothing to hide while c2/secrets shows.  So
     * every directory between the writable parent and the path is a mount point (rename(2)
     * of one fails with EBUSY), as protected paths have (pin_between). */
    size_t n = r->n_rules;
    strv below = {0};
    for (size_t i = 0; i < n; i++) {
        const rrule *x = &r->rules[i];
        if (x->shadowed || x->access == CORDON_ACCESS_WRITE || x->type == FT_MISSING || x->pin)
            continue;
        /* the longest rule strictly above it */
        const rrule *eff = NULL;
        char *parent = xstrdup(x->path);
        if (path_to_parent(parent))
            eff = effective(r, parent);
        free(parent);
        if (eff && eff->access == CORDON_ACCESS_WRITE)
            strv_push(&below, xstrdup(x->path));
    }
    int ret = 0;
    for (size_t i = 0; ret == 0 && i < below.n; i++)
        ret = pin_between(r, below.v[i], err);
    strv_free(&below);
    return ret;
}

int protect_expand(resolved *r, const struct cordon_policy *p, cordon_error *err)
{
    if (check_home_workspace(r, p, err) < 0)
        return -1;
    /* bubblewrap's exact mode: the caller's own --hide only (doc/bwrap.md) */
    if (p->bare)
        return hide_requested(r, err);
    /* The writable roots are fixed before anything is added. */
    strv roots = {0};
    for (size_t i = 0; i < r->n_rules; i++) {
        const rrule *x = &r->rules[i];
        if (!x->shadowed && x->access == CORDON_ACCESS_WRITE && user_origin(x->origin) && x->type == FT_DIR)
            strv_push(&roots, xstrdup(x->path));
    }
    int ret = 0;
    for (size_t i = 0; ret == 0 && i < roots.n; i++)
        ret = protect_writable_root(r, p, roots.v[i], err);
    strv_free(&roots);
    /* A --deny of a missing path in a writable directory is refused at its first missing
     * component (plan.c): pin the directories above that, too, or the command could
     * rename one away and make the path anew. */
    size_t n = r->n_rules;
    for (size_t i = 0; ret == 0 && i < n; i++) {
        const rrule *x = &r->rules[i];
        if (x->shadowed || x->access != CORDON_ACCESS_NONE || x->type != FT_MISSING || !x->first_missing ||
            x->missing_under_file || x->origin == ORIGIN_PROTECT)
            continue;
        const rrule *eff = effective(r, x->first_missing);
        if (!eff || eff->access != CORDON_ACCESS_WRITE)
            continue;
        char *below = xstrdup(x->first_missing);
        ret = pin_between(r, below, err);
        free(below);
    }
    /* What must stay hidden wherever it would be shown, and the home's start-up files
     * wherever it is writable. */
    if (ret == 0)
        ret = hide_credentials(r, err);
    if (ret == 0)
        ret = hide_other_homes(r, err);
    if (ret == 0)
        ret = hide_host_sockets(r, err);
    if (ret == 0)
        ret = hide_cordon_state(r, err);
    if (ret == 0)
        ret = hide_requested(r, err);
    if (ret == 0)
        ret = protect_startup_files(r, err);
    return ret;
}
