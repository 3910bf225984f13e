// SPDX-License-Identifier: Apache-2.0
/* The workspace's changes against the source as it is now.
 *
 * Overlay backends (kernel, fuse): only the upper layer is walked, with the source at the
 * same path beside it.  In the upper layer:
 *   - a whiteout (a character device 0/0; fuse-overlayfs may also write `.wh.NAME`) hides
 *     what the source has at that name: D for it (every file below, for a directory);
 *   - an opaque directory (xattr user.overlay.opaque, or fuse-overlayfs's
 *     trusted.overlay.opaque / user.fuseoverlayfs.opaque / `.wh..wh..opq`) hides all the
 *     source has below it: what the upper does not hold there is deleted;
 *   - any other entry is what the view shows: compared with the source's (type, mode,
 *     content), A when the source has nothing there, M when they differ, nothing when
 *     they are the same (a file opened for writing is copied up even when unchanged).
 * The kernel backend mounts with redirect_dir=nofollow and metacopy=off, so a renamed
 * directory is a copy plus a whiteout and every copied-up file holds its data.
 *
 * Copy backend: the whole copy is walked; an entry whose metadata is what the manifest
 * recorded was not touched by the workspace (whatever the source did meanwhile), any
 * other is compared with the source; manifest entries the copy lost are deletions.
 *
 * Worktree backend: git's own, the diff of the source's base commit against a tree of the
 * worktree as it is.
 *
 * `.git` (at any depth) is never a change; changes to the protected top-level names and
 * special files are set aside (skipped), never integrated. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "util/fdutil.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"
#include "workspace/ws.h"

static const char *const protected_names[] = {".cordon",   ".codex",  ".agents", ".claude",
                                              ".mcp.json", ".vscode", ".idea",   ".gitmodules"};

bool ws_protected_name(const char *rel)
{
    size_t n = strcspn(rel, "/");
    for (size_t i = 0; i < sizeof protected_names / sizeof *protected_names; i++)
        if (strlen(protected_names[i]) == n && strncmp(rel, protected_names[i], n) == 0)
            return true;
    return false;
}

typedef enum fmt { FMT_KERNEL, FMT_FUSE, FMT_COPY } fmt;

/* Besides A, M and D (files), two statuses for directories, applied by integrate but
 * never shown: 'N' a directory the source lacks, 'X' one the view no longer has
 * (removed once what it held is gone). */

typedef struct walk {
    ws_changes *out;
    fmt f;
    const char *top; /* absolute path of the upper layer or the copy */
    const char *src; /* the source, for messages */
    ws_mfile *mf;    /* copy */
    cordon_error *err;
} walk;

void ws_changes_free(ws_changes *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].path);
        free(c->v[i].from);
    }
    for (size_t i = 0; i < c->n_skipped; i++) {
        free(c->skipped[i].path);
        free(c->skipped[i].from);
    }
    free(c->v);
    free(c->skipped);
    *c = (ws_changes){0};
}

static bool is_dot(const char *n)
{
    return n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'));
}

static char *join_rel(const char *rel, const char *name)
{
    return *rel ? xasprintf("%s/%s", rel, name) : xstrdup(name);
}

static void add(walk *w, char status, const char *rel, mode_t mode, bool special)
{
    ws_change c = {.status = status, .path = xstrdup(rel), .mode = mode};
    if (status != 'D')
        c.from = path_join(w->top, rel);
    if (special || ws_protected_name(rel)) {
        grow(&w->out->skipped, &w->out->cap_skipped, w->out->n_skipped + 1, sizeof c);
        w->out->skipped[w->out->n_skipped++] = c;
    } else {
        grow(&w->out->v, &w->out->cap, w->out->n + 1, sizeof c);
        w->out->v[w->out->n++] = c;
    }
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of a directory (NULL on error, errno set). */
static char **list_dir(int fd, size_t *n)
{
    DIR *d = opendir_dup(fd);
    if (!d)
        return NULL;
    strv v = {0};
    struct dirent *de;
    while ((errno = 0, de = readdir(d)) != NULL)
        if (!is_dot(de->d_name))
            strv_push(&v, xstrdup(de->d_name));
    int e = errno;
    closedir(d);
    if (e) {
        strv_free(&v);
        errno = e;
        return NULL;
    }
    if (!v.v)
        v.v = xcalloc(1, sizeof *v.v);
    qsort(v.v, v.n, sizeof *v.v, cmp_str);
    *n = v.n;
    return v.v;
}

static void free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* Everything the source has at rel (fd/name) is deleted: D for it, or for every
 * non-directory below it. */
static int deleted(walk *w, int lfd, const char *name, const char *rel, int depth)
{
    if (strcmp(name, ".git") == 0)
        return 0;
    struct stat st;
    if (fstatat(lfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : err_set(w->err, CORDON_STAGE_WORKSPACE, errno, "%s/%s", w->src, rel);
    if (!S_ISDIR(st.st_mode)) {
        add(w, 'D', rel, st.st_mode, !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode));
        return 0;
    }
    if (depth > 4096)
        return err_set(w->err, CORDON_STAGE_WORKSPACE, ELOOP, "%s/%s: too deep", w->src, rel);
    _cleanup_fd_ int fd = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return err_set(w->err, CORDON_STAGE_WORKSPACE, errno, "cannot read %s/%s", w->src, rel);
    size_t n = 0;
    char **names = list_dir(fd, &n);
    if (!names)
        return err_set(w->err, CORDON_STAGE_WORKSPACE, errno, "cannot list %s/%s", w->src, rel);
    int ret = 0;
    for (size_t i = 0; ret == 0 && i < n; i++) {
        char *r = join_rel(rel, names[i]);
        ret = deleted(w, fd, names[i], r, depth + 1);
        free(r);
    }
    free_names(names, n);
    if (ret == 0)
        add(w, 'X', rel, st.st_mode, false); /* then the directory itself, once empty */
    return ret;
}

static bool same_content(int afd, const char *a, int bfd, const char *b, const struct stat *as, const struct stat *bs,
                         bool *same, cordon_error *err, const char *rel)
{
    *same = false;
    if (as->st_size != bs->st_size)
        return true;
    _cleanup_fd_ int x = openat(afd, a, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    _cleanup_fd_ int y = openat(bfd, b, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    if (x < 0 || y < 0) {
        err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read %s to compare it", rel);
        return false;
    }
    static const size_t bs_len = 65536;
    char *p = xmalloc(bs_len), *q = xmalloc(bs_len);
    bool ok = true, eq = true;
    for (;;) {
        ssize_t n = read(x, p, bs_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            ok = false;
            break;
        }
        ssize_t got = 0;
        while (got < n) {
            ssize_t m = read(y, q + got, (size_t)(n - got));
            if (m < 0 && errno == EINTR)
                continue;
            if (m <= 0)
                break;
            got += m;
        }
        if (got != n || memcmp(p, q, (size_t)n) != 0) {
            eq = false;
            break;
        }
        if (n == 0)
            break;
    }
    free(p);
    free(q);
    if (!ok) {
        err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read %s to compare it", rel);
        return false;
    }
    *same = eq;
    return true;
}

/* The view has the non-directory `ust` at rel (in ufd/name); the source has lfd/name. */
static int compare_leaf(walk *w, int ufd, const char *uname, const struct stat *ust, int lfd, const char *rel,
                        const char *lname, int depth)
{
    bool special = !S_ISREG(ust->st_mode) && !S_ISLNK(ust->st_mode);
    struct stat lst;
    if (lfd < 0 || fstatat(lfd, lname, &lst, AT_SYMLINK_NOFOLLOW) < 0) {
        if (lfd >= 0 && errno != ENOENT && errno != ENOTDIR)
            return err_set(w->err, CORDON_STAGE_WORKSPACE, errno, "%s/%s", w->src, rel);
        add(w, 'A', rel, ust->st_mode, special);
        return 0;
    }
    if (S_ISDIR(lst.st_mode)) {
        if (deleted(w, lfd, lname, rel, depth) < 0)
            return -1;
        add(w, 'A', rel, ust->st_mode, special);
        return 0;
    }
    if (special || (ust->st_mode & S_IFMT) != (lst.st_mode & S_IFMT) ||
        (S_ISREG(ust->st_mode) && (ust->st_mode & 07777) != (lst.st_mode & 07777))) {
        add(w, 'M', rel, ust->st_mode, special);
        return 0;
    }
    if (S_ISLNK(ust->st_mode)) {
        char a[4096], b[4096];
        ssize_t na = readlinkat(ufd, uname, a, sizeof a), nb = readlinkat(lfd, lname, b, sizeof b);
        if (na < 0 || nb < 0)
            return err_set(w->err, CORDON_STAGE_WORKSPACE, errno, "cannot read the symlink %s", rel);
        if (na != nb || memcmp(a, b, (size_t)na) != 0)
            add(w, 'M', rel, ust->st_mode, false);
        return 0;
    }
    bool same;
    if (!same_content(ufd, uname, lfd, lname, ust, &lst, &same, w->err, rel))
        return -1;
    if (!same)
        add(w, 'M', rel, ust->st_mode, false);
    return 0;
}

static bool has_xattr_y(int fd, const char *name)
{
    char v[8];
    ssize_t n = fgetxattr(fd, name, v, sizeof v);
    return n >= 1 && (v[0] == 'y' || v[0] == 'x');
}

static bool is_opaque(const walk *w, int fd, char **names, size_t n)
{
    if (w->f == FMT_KERNEL)
        return has_xattr_y(fd, "user.overlay.opaque");
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], ".wh..wh..opq") == 0)
            return true;
    return has_xattr_y(fd, "user.fuseoverlayfs.opaque") || has_xattr_y(fd, "trusted.overlay.opaque") ||
           has_xattr_y(fd, "user.overlay.opaque");
}

static bool is_whiteout(const struct stat *st)
{
    return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

static bool in_sorted(char **names, size_t n, const char *x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(names[mid], x);
        if (c == 0)
            return true;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

/* One directory of the upper layer (ufd) against the source's at the same path (lfd, or
 * -1 when the source has no directory there). */
static int walk_upper(walk *w, int ufd, int lfd, const char *rel, bool opaque, int depth)
{
    if (depth > 4096)
        return err_set(w->err, CORDON_STAGE_WORKSPACE, ELOOP, "%s: too deep", rel);
    size_t n = 0;
    char **names = list_dir(ufd, &n);
    if (!names)
        return err_set(w->err, CORDON_STAGE_WORKSPACE, errno, "cannot list the upper layer at %s", rel[0] ? rel : "/");
    int ret = 0;
    for (size_t i = 0; ret == 0 && i < n; i++) {
        const char *name = names[i];
        if (strcmp(name, ".git") == 0)
            continue;
        if (w->f == FMT_FUSE && strncmp(name, ".wh.", 4) == 0) {
            if (strcmp(name, ".wh..wh..opq") == 0 || strcmp(name, ".wh..opq") == 0)
                continue;
            const char *hidden = name + 4;
            if (lfd >= 0 && !in_sorted(names, n, hidden) && strcmp(hidden, ".git") != 0) {
                char *r = join_rel(rel, hidden);
                ret = deleted(w, lfd, hidden, r, depth + 1);
                free(r);
            }
            continue;
        }
        struct stat st;
        if (fstatat(ufd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            ret = err_set(w->err, CORDON_STAGE_WORKSPACE, errno, "the upper layer at %s/%s", rel, name);
            break;
        }
        char *r = join_rel(rel, name);
        if (is_whiteout(&st)) {
            if (lfd >= 0)
                ret = deleted(w, lfd, name, r, depth + 1);
            free(r);
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            _cleanup_fd_ int u2 = openat(ufd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (u2 < 0) {
                ret = err_set(w->err, CORDON_STAGE_WORKSPACE, errno,
                              "cannot read the upper layer at %s (a directory the command made unreadable?)", r);
                free(r);
                break;
            }
            int l2 = -1;
            struct stat lst;
            if (lfd >= 0 && fstatat(lfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0) {
                if (S_ISDIR(lst.st_mode))
                    l2 = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                else
                    ret = deleted(w, lfd, name, r, depth + 1); /* a file replaced by a directory */
            }
            size_t k = 0;
            char **sub = NULL;
            bool op = false;
            if (ret == 0 && l2 < 0)
                add(w, 'N', r, st.st_mode, false); /* a directory the source does not have */
            if (ret == 0) {
                sub = list_dir(u2, &k);
                op = sub && is_opaque(w, u2, sub, k);
                free_names(sub, k);
                ret = walk_upper(w, u2, l2, r, op, depth + 1);
            }
            if (l2 >= 0)
                close(l2);
        } else {
            ret = compare_leaf(w, ufd, name, &st, lfd, r, name, depth + 1);
        }
        free(r);
    }
    /* an opaque directory shows nothing of the source's: the rest is deleted */
    if (ret == 0 && opaque && lfd >= 0) {
        size_t ln = 0;
        char **lnames = list_dir(lfd, &ln);
        if (!lnames)
            ret = err_set(w->err, CORDON_STAGE_WORKSPACE, errno, "cannot list %s/%s", w->src, rel);
        for (size_t i = 0; ret == 0 && i < ln; i++) {
            if (in_sorted(names, n, lnames[i]) || strcmp(lnames[i], ".git") == 0)
                continue;
            char *r = join_rel(rel, lnames[i]);
            ret = deleted(w, lfd, lnames[i], r, depth + 1);
            free(r);
        }
        if (lnames)
            free_names(lnames, ln);
    }
    free_names(names, n);
    return ret;
}

/* The copy: every entry; those the manifest knows unchanged are skipped. */
static int walk_copy(walk *w, int cfd, int lfd, const char *rel, bool fresh, int depth)
{
    if (depth > 4096)
        return err_set(w->err, CORDON_STAGE_WORKSPACE, ELOOP, "%s: too deep", rel);
    size_t n = 0;
    char **names = list_dir(cfd, &n);
    if (!names)
        return err_set(w->err, CORDON_STAGE_WORKSPACE, errno, "cannot list the copy at %s", rel[0] ? rel : "/");
    int ret = 0;
    for (size_t i = 0; ret == 0 && i < n; i++) {
        const char *name = names[i];
        if (strcmp(name, ".git") == 0)
            continue;
        struct stat st;
        if (fstatat(cfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            ret = err_set(w->err, CORDON_STAGE_WORKSPACE, errno, "the copy at %s/%s", rel, name);
            break;
        }
        char *r = join_rel(rel, name);
        bool same = !fresh && !S_ISDIR(st.st_mode) && ws_manifest_same(w->mf, r, &st);
        if (S_ISDIR(st.st_mode)) {
            /* a directory the manifest knows as one: what is below decides; one it does
             * not know is the workspace's, with all below it */
            bool known = !fresh && ws_manifest_known_dir(w->mf, r);
            struct stat lst;
            int l2 = -1;
            if (lfd >= 0 && fstatat(lfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0) {
                if (S_ISDIR(lst.st_mode))
                    l2 = openat(lfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                else if (!known)
                    ret = deleted(w, lfd, name, r, depth + 1); /* the workspace replaced it */
            }
            if (ret == 0 && l2 < 0 && !known)
                add(w, 'N', r, st.st_mode, false);
            _cleanup_fd_ int c2 = openat(cfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (c2 < 0) {
                ret = err_set(w->err, CORDON_STAGE_WORKSPACE, errno, "cannot read the copy at %s", r);
            } else if (ret == 0) {
                ret = walk_copy(w, c2, l2, r, !known, depth + 1);
            }
            if (l2 >= 0)
                close(l2);
        } else if (!same) {
            /* touched by the workspace: compare with the source as it is now */
            ret = compare_leaf(w, cfd, name, &st, lfd, r, name, depth + 1);
        }
        free(r);
    }
    free_names(names, n);
    return ret;
}

static int cmp_change(const void *a, const void *b)
{
    const ws_change *x = a, *y = b;
    int c = path_cmp(x->path, y->path);
    return c ? c : x->status - y->status;
}

static void sort_unique(ws_change *v, size_t *n)
{
    if (*n == 0)
        return;
    qsort(v, *n, sizeof *v, cmp_change);
    size_t k = 0;
    for (size_t i = 0; i < *n; i++) {
        if (k > 0 && strcmp(v[k - 1].path, v[i].path) == 0 && v[k - 1].status == v[i].status) {
            free(v[i].path);
            free(v[i].from);
            continue;
        }
        v[k++] = v[i];
    }
    *n = k;
}

int ws_changes_compute(cordon_workspace *ws, ws_changes *out, cordon_error *err)
{
    *out = (ws_changes){0};
    if (ws->st.backend == CORDON_WS_NONE)
        return 0;
    if (ws->st.backend == CORDON_WS_WORKTREE)
        return ws_worktree_changes(ws, out, err);
    _cleanup_fd_ int lfd = open(ws->st.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (lfd < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "workspace %s: cannot open its source %s", ws->st.name,
                       ws->st.source);
    bool copy = ws->st.backend == CORDON_WS_COPY;
    char *top = ws_path(ws, copy ? "copy" : "upper");
    walk w = {.out = out,
              .f = copy                               ? FMT_COPY
                   : ws->st.backend == CORDON_WS_FUSE ? FMT_FUSE
                                                      : FMT_KERNEL,
              .top = top,
              .src = ws->st.source,
              .err = err};
    int ret = -1;
    _cleanup_fd_ int tfd = open(top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (tfd < 0) {
        err_set(err, CORDON_STAGE_WORKSPACE, errno, "workspace %s: cannot open %s", ws->st.name, top);
        goto out;
    }
    if (copy) {
        char *mpath = ws_path(ws, "manifest");
        int r = ws_manifest_load(mpath, &w.mf, err);
        free(mpath);
        if (r < 0)
            goto out;
        if (walk_copy(&w, tfd, lfd, "", false, 0) < 0)
            goto out;
        /* what the copy had and lost: deleted by the workspace */
        size_t n = ws_manifest_count(w.mf);
        for (size_t i = 0; i < n; i++) {
            bool is_dir, seen;
            const char *p = ws_manifest_path(w.mf, i, &is_dir, &seen);
            if (seen || strcmp(p, ".git") == 0 || strncmp(p, ".git/", 5) == 0 || strstr(p, "/.git/") ||
                (strlen(p) >= 5 && strcmp(p + strlen(p) - 5, "/.git") == 0))
                continue;
            char *dir = xstrdup(p), *slash = strrchr(dir, '/');
            const char *leaf = slash ? slash + 1 : p;
            int pfd = lfd;
            _cleanup_fd_ int sub = -1;
            if (slash) {
                *slash = '\0';
                struct open_how how = {.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                                       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
                sub = (int)syscall(SYS_openat2, lfd, dir, &how, sizeof how);
                pfd = sub;
            }
            if (pfd >= 0) {
                struct stat st;
                if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) == is_dir)
                    add(&w, is_dir ? 'X' : 'D', p, st.st_mode, !is_dir && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode));
            }
            free(dir);
        }
    } else {
        if (walk_upper(&w, tfd, lfd, "", false, 0) < 0)
            goto out;
    }
    sort_unique(out->v, &out->n);
    sort_unique(out->skipped, &out->n_skipped);
    ret = 0;
out:
    if (w.mf)
        ws_manifest_free(w.mf);
    free(top);
    if (ret < 0)
        ws_changes_free(out);
    return ret;
}

/* ---------------------------------------------------------------------------------- */
/* worktree: git's own change set and diff */

ws_git ws_worktree_git(const cordon_workspace *ws, char **tree)
{
    *tree = ws_path(ws, "tree");
    return (ws_git){.work_tree = *tree, .hold = ws->held};
}

/* A tree of the worktree as it is (uncommitted and untracked files included), written
 * through a temporary index so that the worktree's own is untouched. */
int ws_worktree_tree(const cordon_workspace *ws, char **out, cordon_error *err)
{
    char *tree;
    ws_git g = ws_worktree_git(ws, &tree);
    char *index = ws_path(ws, "worktree.index");
    g.index = index;
    unlink(index);
    int ret = -1;
    const char *rt[] = {"read-tree", "HEAD", NULL};
    const char *add[] = {"add", "-A", "--", ".", NULL};
    const char *wt[] = {"write-tree", NULL};
    if (ws_git_ok(&g, rt, NULL, 0, NULL, err) == 0 && ws_git_ok(&g, add, NULL, 0, NULL, err) == 0 &&
        ws_git_ok(&g, wt, NULL, 0, out, err) == 0)
        ret = 0;
    unlink(index);
    free(index);
    free(tree);
    return ret;
}

int ws_worktree_changes(cordon_workspace *ws, ws_changes *out, cordon_error *err)
{
    *out = (ws_changes){0};
    char *t = NULL;
    if (ws_worktree_tree(ws, &t, err) < 0)
        return -1;
    ws_git g = ws_source_git(ws);
    const char *dt[] = {"diff-tree", "-r", "--no-renames", "--name-status", "-z", ws->st.base, t, NULL};
    ws_out o;
    int r = ws_git_run(&g, dt, NULL, 0, &o, err);
    free(t);
    if (r < 0)
        return -1;
    const char *text = o.out;
    size_t len = o.out_len;
    for (size_t i = 0; i < len;) {
        const char *st = text + i;
        i += strlen(st) + 1;
        if (i >= len)
            break;
        const char *path = text + i;
        i += strlen(path) + 1;
        ws_change c = {.status = st[0] == 'A' ? 'A' : st[0] == 'D' ? 'D' : 'M', .path = xstrdup(path)};
        if (ws_protected_name(path)) {
            grow(&out->skipped, &out->cap_skipped, out->n_skipped + 1, sizeof c);
            out->skipped[out->n_skipped++] = c;
        } else {
            grow(&out->v, &out->cap, out->n + 1, sizeof c);
            out->v[out->n++] = c;
        }
    }
    ws_out_free(&o);
    return 0;
}

int ws_worktree_diff(cordon_workspace *ws, bool name_status, FILE *out, cordon_error *err)
{
    char *t = NULL;
    if (ws_worktree_tree(ws, &t, err) < 0)
        return -1;
    ws_git g = ws_source_git(ws);
    const char *dt_ns[] = {"diff-tree", "-r", "--no-renames", "--name-status", ws->st.base, t, NULL};
    const char *dt_p[] = {"diff-tree", "-r", "--no-renames", "-p", "--binary", "--no-color", ws->st.base, t, NULL};
    char *text = NULL;
    int r = ws_git_ok(&g, name_status ? dt_ns : dt_p, NULL, 0, &text, err);
    free(t);
    if (r < 0)
        return -1;
    if (*text)
        fprintf(out, "%s\n", text);
    free(text);
    return 0;
}
