// SPDX-License-Identifier: Apache-2.0
#include "policy/canon.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"

#define MAX_SYMLINKS 40

const char *ftype_name(ftype t)
{
    switch (t) {
    case FT_MISSING: return "missing";
    case FT_DIR: return "dir";
    case FT_FILE: return "file";
    case FT_OTHER: return "special";
    }
    return "?";
}

void canon_free(canon *c)
{
    if (!c)
        return;
    free(c->path);
    free(c->symlink);
    free(c->first_missing);
    c->path = c->symlink = c->first_missing = NULL;
    strv_free(&c->crossed);
}

static ftype type_of(mode_t m)
{
    if (S_ISDIR(m))
        return FT_DIR;
    if (S_ISREG(m))
        return FT_FILE;
    return FT_OTHER;
}

/* Pop the last component of an absolute path in place ("/" stays "/"). */
static void pop_component(char *p)
{
    char *s = strrchr(p, '/');
    if (s == p)
        p[1] = '\0';
    else if (s)
        *s = '\0';
}

/* canon_resolve; when it fails with EACCES or EPERM on a component, *blocked (if
 * blocked is not NULL) gets the directory that could not be searched, as resolved so
 * far (canonical: every symlink before it followed). */
static int canon_walk(const char *in, canon *out, char **blocked, cordon_error *err)
{
    *out = (canon){0};
    if (!in || in[0] != '/')
        return err_set(err, CORDON_STAGE_RESOLVE, 0, "'%s' is not an absolute path", in ? in : "");
    if (strlen(in) >= PATH_MAX)
        return err_set(err, CORDON_STAGE_RESOLVE, ENAMETOOLONG, "'%.64s...'", in);

    int ret = 0;
    char resolved[PATH_MAX] = "/";
    /* `rest` holds what is still to walk; symlink targets are spliced in front. */
    char *rest = xstrdup(in);
    char *first_link = NULL;
    int links = 0;
    bool missing = false;
    struct stat st = {0};
    bool have_st = false;

    char *cur = rest;
    while (*cur) {
        while (*cur == '/')
            cur++;
        if (!*cur)
            break;
        char *end = strchr(cur, '/');
        size_t n = end ? (size_t)(end - cur) : strlen(cur);
        char comp[NAME_MAX + 1];
        if (n > NAME_MAX) {
            ret = err_set(err, CORDON_STAGE_RESOLVE, ENAMETOOLONG, "'%s'", in);
            goto fail;
        }
        memcpy(comp, cur, n);
        comp[n] = '\0';
        cur += n;
        have_st = false;

        if (strcmp(comp, ".") == 0)
            continue;
        if (strcmp(comp, "..") == 0) {
            /* Below a missing component (or a file) the kernel would stop with ENOENT
             * (ENOTDIR); popping lexically only guesses what the path will mean. */
            if (missing)
                out->dotdot_after_missing = true;
            pop_component(resolved);
            continue;
        }
        size_t rl = strlen(resolved);
        if (rl + 1 + n >= PATH_MAX) {
            ret = err_set(err, CORDON_STAGE_RESOLVE, ENAMETOOLONG, "'%s'", in);
            goto fail;
        }
        if (rl > 1)
            resolved[rl++] = '/';
        memcpy(resolved + rl, comp, n + 1);
        if (missing)
            continue; /* below a missing component everything is lexical */

        if (lstat(resolved, &st) < 0) {
            if (errno == ENOENT || errno == ENOTDIR) {
                missing = true;
                out->first_missing = xstrdup(resolved);
                continue;
            }
            int e = errno;
            if (blocked && (e == EACCES || e == EPERM)) {
                *blocked = xstrdup(resolved);
                pop_component(*blocked);
            }
            ret = err_set(err, CORDON_STAGE_RESOLVE, e, "cannot look at '%s' (resolving '%s')", resolved, in);
            goto fail;
        }
        if (!S_ISLNK(st.st_mode)) {
            have_st = true;
            if (!S_ISDIR(st.st_mode) && *cur) {
                /* a file used as a directory: nothing below it can exist */
                missing = true;
                out->missing_under_file = true;
                out->first_missing = xstrdup(resolved);
            }
            continue;
        }
        if (++links > MAX_SYMLINKS) {
            ret = err_set(err, CORDON_STAGE_RESOLVE, ELOOP, "resolving '%s'", in);
            goto fail;
        }
        char target[PATH_MAX];
        ssize_t tl = readlink(resolved, target, sizeof target - 1);
        if (tl < 0) {
            ret = err_set(err, CORDON_STAGE_RESOLVE, errno, "cannot read symlink '%s'", resolved);
            goto fail;
        }
        target[tl] = '\0';
        if (!first_link)
            first_link = xstrdup(resolved);
        strv_push(&out->crossed, xstrdup(resolved));
        pop_component(resolved);
        if (target[0] == '/')
            strcpy(resolved, "/");
        char *next = xasprintf("%s%s", target, cur); /* cur is "" or starts with "/" */
        free(rest);
        rest = next;
        cur = rest;
    }
    free(rest);
    rest = NULL;

    out->path = xstrdup(resolved);
    out->symlink = first_link;
    if (missing) {
        out->type = FT_MISSING;
        return 0;
    }
    if (!have_st && lstat(resolved, &st) < 0) {
        if (errno == ENOENT) {
            out->type = FT_MISSING;
            return 0;
        }
        int e = errno;
        canon_free(out);
        return err_set(err, CORDON_STAGE_RESOLVE, e, "cannot look at '%s'", resolved);
    }
    out->type = type_of(st.st_mode);
    out->dev = st.st_dev;
    out->ino = st.st_ino;
    return 0;

fail:
    free(rest);
    free(first_link);
    strv_free(&out->crossed);
    free(out->first_missing);
    out->first_missing = NULL;
    return ret;
}

/* The common case in one call: a path without "." or ".." that exists and crosses no
 * symlink is its own canonical form (slashes collapsed), and the kernel's own walk with
 * openat2(RESOLVE_NO_SYMLINKS) says so without an lstat per component (bench/bwrap.sh:
 * resolving a policy stats the same parents again and again).  1 when it did, 0 when
 * the component walk must decide (a symlink, a missing or unsearchable component, "."
 * or "..", no openat2). */
static int canon_fast(const char *in, canon *out)
{
    size_t n = strlen(in);
    if (in[0] != '/' || n >= PATH_MAX || (n > 1 && in[n - 1] == '/'))
        return 0; /* (a trailing slash says "a directory": the walk checks that) */
    char path[PATH_MAX];
    size_t k = 0;
    for (const char *p = in; *p;) {
        while (*p == '/')
            p++;
        if (!*p)
            break;
        size_t l = strcspn(p, "/");
        if ((l == 1 && p[0] == '.') || (l == 2 && p[0] == '.' && p[1] == '.') || l > NAME_MAX)
            return 0;
        path[k++] = '/';
        memcpy(path + k, p, l);
        k += l;
        p += l;
    }
    if (k == 0)
        path[k++] = '/';
    path[k] = '\0';
    struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    _cleanup_fd_ int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    struct stat st;
    if (fd < 0 && errno == ENOENT && k > 1) {
        /* only the last component missing: its parent a directory reached the same way
         * (O_DIRECTORY: the open itself says it is one, no fstat) */
        char *slash = strrchr(path, '/');
        *slash = '\0';
        how.flags |= O_DIRECTORY;
        _cleanup_fd_ int parent = (int)syscall(SYS_openat2, AT_FDCWD, slash == path ? "/" : path, &how, sizeof how);
        *slash = '/';
        if (parent < 0)
            return 0;
        *out = (canon){.path = xstrdup(path), .type = FT_MISSING, .first_missing = xstrdup(path)};
        return 1;
    }
    if (fd < 0 || fstat(fd, &st) < 0 || S_ISLNK(st.st_mode))
        return 0;
    *out = (canon){.path = xstrdup(path), .type = type_of(st.st_mode), .dev = st.st_dev, .ino = st.st_ino};
    return 1;
}

int canon_resolve(const char *in, canon *out, cordon_error *err)
{
    if (in && canon_fast(in, out))
        return 0;
    return canon_walk(in, out, NULL, err);
}

int canon_unreadable(const char *path, const char *what, cordon_error *err)
{
    return canon_unreadable_if(path, what, NULL, NULL, err);
}

int canon_unreadable_if(const char *path, const char *what, bool (*matters)(const char *blocked, void *arg), void *arg,
                        cordon_error *err)
{
    _cleanup_free_ char *blocked = NULL;
    canon c;
    cordon_error e = {0};
    /* on the way: the walk stopped at a directory it may not search above `path`; else
     * `path` itself, resolved (its canonical name, which need not be `path`) */
    bool on_the_way = canon_walk(path, &c, &blocked, &e) < 0;
    if (on_the_way) {
        if (!blocked) {
            *err = e;
            return err_wrap(err, "%s", what);
        }
    } else {
        ftype t = c.type;
        blocked = steal_pointer(&c.path);
        canon_free(&c);
        if (t == FT_MISSING)
            return err_set(err, CORDON_STAGE_RESOLVE, 0,
                           "%s: %s could not be read, and is gone now: it changed while cordon looked; run again", what,
                           path);
    }
    /* `blocked` is now what cordon cannot get into: a directory it may not search (on the
     * way to `path`), or `path` itself, which it may not list or read. */
    if (matters && !matters(blocked, arg))
        return 0;
    _cleanup_fd_ int fd = open_no_symlinks(blocked, O_PATH | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        return err_set(err, CORDON_STAGE_RESOLVE, errno, "%s: cannot look at %s, which cordon may not read", what,
                       blocked);
    bool dir = S_ISDIR(st.st_mode);
    if (st.st_uid == geteuid())
        return err_set(err, CORDON_STAGE_RESOLVE, EACCES,
                       "%s: cordon cannot look at %s: it may not %s %s (mode %04o), which is yours, so a command "
                       "running as you could make it %s again and reach what cordon did not see; make it %s "
                       "(chmod u+%s %s) and run again",
                       what, path, on_the_way || dir ? "search and list" : "read", blocked,
                       (unsigned)(st.st_mode & 07777), dir ? "searchable" : "readable",
                       dir ? "searchable and listable" : "readable", dir ? "rx" : "r", blocked);
    /* Someone else's: only its owner can change its mode or ACL, and the command runs with
     * the caller's ids and no capability.  A directory on the way that the caller cannot
     * search keeps everything below it out of the command's reach too; `path` itself, a
     * directory the caller may search but not list, does not: a name guessed in it opens. */
    if (!on_the_way && dir && faccessat(AT_FDCWD, blocked, X_OK, AT_EACCESS) == 0)
        return err_set(err, CORDON_STAGE_RESOLVE, EACCES,
                       "%s: cordon cannot list %s (mode %04o, not yours), which a command running as you could "
                       "still enter by name; narrow what you asked for, or hide the directory whole (--deny %s)",
                       what, blocked, (unsigned)(st.st_mode & 07777), blocked);
    return 0;
}
