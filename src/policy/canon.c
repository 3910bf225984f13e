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

/* One walk of canon_walk: the path resolved so far, and what is still to walk. */
typedef struct walk {
    const char *in;
    canon *out;
    char **blocked;
    cordon_error *err;
    char resolved[PATH_MAX];
    char *rest; /* what is still to walk; symlink targets are spliced in front */
    char *cur;  /* where in rest */
    char *first_link;
    int links;
    bool missing;
    struct stat st;
    bool have_st; /* st is of resolved */
} walk;

/* The next component into COMP: 1, or 0 at the end, or -1 when it is too long. */
static int next_component(walk *w, char comp[NAME_MAX + 1])
{
    while (*w->cur == '/')
        w->cur++;
    if (!*w->cur)
        return 0;
    char *end = strchr(w->cur, '/');
    size_t n = end ? (size_t)(end - w->cur) : strlen(w->cur);
    if (n > NAME_MAX)
        return err_set(w->err, CORDON_STAGE_RESOLVE, ENAMETOOLONG, "'%s'", w->in);
    memcpy(comp, w->cur, n);
    comp[n] = '\0';
    w->cur += n;
    w->have_st = false;
    return 1;
}

/* COMP appended to the path resolved so far. */
static int append_component(walk *w, const char *comp)
{
    size_t n = strlen(comp);
    size_t rl = strlen(w->resolved);
    if (rl + 1 + n >= PATH_MAX)
        return err_set(w->err, CORDON_STAGE_RESOLVE, ENAMETOOLONG, "'%s'", w->in);
    if (rl > 1)
        w->resolved[rl++] = '/';
    memcpy(w->resolved + rl, comp, n + 1);
    return 0;
}

/* What the path resolved so far is: 1 a symlink to follow, 0 anything else (or missing,
 * from here on), -1 when it cannot be looked at. */
static int look_at(walk *w)
{
    if (lstat(w->resolved, &w->st) < 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            w->missing = true;
            w->out->first_missing = xstrdup(w->resolved);
            return 0;
        }
        int e = errno;
        if (w->blocked && (e == EACCES || e == EPERM)) {
            *w->blocked = xstrdup(w->resolved);
            pop_component(*w->blocked);
        }
        return err_set(w->err, CORDON_STAGE_RESOLVE, e, "cannot look at '%s' (resolving '%s')", w->resolved, w->in);
    }
    if (S_ISLNK(w->st.st_mode))
        return 1;
    w->have_st = true;
    if (!S_ISDIR(w->st.st_mode) && *w->cur) {
        /* a file used as a directory: nothing below it can exist */
        w->missing = true;
        w->out->missing_under_file = true;
        w->out->first_missing = xstrdup(w->resolved);
    }
    return 0;
}

/* The symlink at the path resolved so far: its target spliced in front of the rest. */
static int follow_link(walk *w)
{
    if (++w->links > MAX_SYMLINKS)
        return err_set(w->err, CORDON_STAGE_RESOLVE, ELOOP, "resolving '%s'", w->in);
    char target[PATH_MAX];
    ssize_t tl = readlink(w->resolved, target, sizeof target - 1);
    if (tl < 0)
        return err_set(w->err, CORDON_STAGE_RESOLVE, errno, "cannot read symlink '%s'", w->resolved);
    target[tl] = '\0';
    if (!w->first_link)
        w->first_link = xstrdup(w->resolved);
    strv_push(&w->out->crossed, xstrdup(w->resolved));
    pop_component(w->resolved);
    if (target[0] == '/')
        strcpy(w->resolved, "/");
    char *next = xasprintf("%s%s", target, w->cur); /* cur is "" or starts with "/" */
    free(w->rest);
    w->rest = next;
    w->cur = w->rest;
    return 0;
}

/* The walk done: the canonical path and what is there. */
static int finish_walk(walk *w)
{
    canon *out = w->out;
    out->path = xstrdup(w->resolved);
    out->symlink = w->first_link;
    if (w->missing) {
        out->type = FT_MISSING;
        return 0;
    }
    if (!w->have_st && lstat(w->resolved, &w->st) < 0) {
        if (errno == ENOENT) {
            out->type = FT_MISSING;
            return 0;
        }
        int e = errno;
        canon_free(out);
        return err_set(w->err, CORDON_STAGE_RESOLVE, e, "cannot look at '%s'", w->resolved);
    }
    out->type = type_of(w->st.st_mode);
    out->dev = w->st.st_dev;
    out->ino = w->st.st_ino;
    return 0;
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

    walk w = {.in = in, .out = out, .blocked = blocked, .err = err, .resolved = "/", .rest = xstrdup(in)};
    w.cur = w.rest;
    for (;;) {
        char comp[NAME_MAX + 1];
        int r = next_component(&w, comp);
        if (r < 0)
            goto fail;
        if (r == 0)
            break;
        if (strcmp(comp, ".") == 0)
            continue;
        if (strcmp(comp, "..") == 0) {
            /* Below a missing component (or a file) the kernel would stop with ENOENT
             * (ENOTDIR); popping lexically only guesses what the path will mean. */
            if (w.missing)
                out->dotdot_after_missing = true;
            pop_component(w.resolved);
            continue;
        }
        if (append_component(&w, comp) < 0)
            goto fail;
        if (w.missing)
            continue; /* below a missing component everything is lexical */
        r = look_at(&w);
        if (r < 0 || (r > 0 && follow_link(&w) < 0))
            goto fail;
    }
    free(w.rest);
    return finish_walk(&w);

fail:
    free(w.rest);
    free(w.first_link);
    strv_free(&out->crossed);
    free(out->first_missing);
    out->first_missing = NULL;
    return -1;
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
