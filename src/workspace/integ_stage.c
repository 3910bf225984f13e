// SPDX-License-Identifier: Apache-2.0
/* The files of an integration (integ.h): the source reached without following
 * symlinks, the staging directory, the files applied, the workspace reset. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"
#include "util/trace.h"
#include "workspace/integ.h"
#include "workspace/ws.h"

/* ---------------------------------------------------------------------------------- */
/* the source, reached without following symlinks */

int integ_open_beneath(int root, const char *rel, int flags)
{
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, root, rel && *rel ? rel : ".", &how, sizeof how);
}

void integ_split_rel(const char *rel, char **dir, const char **leaf)
{
    const char *slash = strrchr(rel, '/');
    *dir = slash ? xstrndup(rel, (size_t)(slash - rel)) : xstrdup("");
    *leaf = slash ? slash + 1 : rel;
}

/* Make rel a directory in the source (and its parents); what stands in the way (a file
 * or a symlink where the view has a directory) goes: the workspace's version wins. */
int integ_ensure_dir(int root, const char *rel, mode_t mode, cordon_error *err)
{
    int cur = fcntl(root, F_DUPFD_CLOEXEC, 3);
    if (cur < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "dup");
    char *copy = xstrdup(rel);
    char *save = NULL;
    int ret = 0;
    for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        int next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && (errno == ENOTDIR || errno == ELOOP)) {
            if (unlinkat(cur, c, 0) < 0 && errno != ENOENT) {
                ret = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot replace %s in the source", rel);
                break;
            }
            errno = ENOENT;
        }
        if (next < 0 && errno == ENOENT) {
            if (mkdirat(cur, c, mode & 07777) < 0 && errno != EEXIST) {
                ret = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot create %s in the source", rel);
                break;
            }
            next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            ret = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open %s in the source", rel);
            break;
        }
        close(cur);
        cur = next;
    }
    free(copy);
    if (ret < 0) {
        close(cur);
        return -1;
    }
    return cur;
}

/* Write rec's content as the file `name` in dirfd (created anew). */
static int write_content(const jrec *r, int dirfd, const char *name, int owner_dirfd, const char *owner_name,
                         cordon_error *err)
{
    unlinkat(dirfd, name, 0);
    if (S_ISLNK(r->mode)) {
        char target[4096];
        ssize_t n = ws_readlink_nofollow(r->from, target, sizeof target - 1);
        if (n < 0)
            return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read the workspace's %s", r->path);
        target[n] = '\0';
        if (symlinkat(target, dirfd, name) < 0)
            return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s%s", r->path,
                           errno == ENOSPC || errno == EDQUOT ? " (the disk is full)" : "");
        return 0;
    }
    _cleanup_fd_ int in = ws_open_nofollow(r->from, O_RDONLY);
    if (in < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read the workspace's %s", r->path);
    _cleanup_fd_ int out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s", r->path);
    if (ws_copy_data(in, out) < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s%s", r->path,
                       errno == ENOSPC || errno == EDQUOT ? " (the disk is full)" : "");
    if (geteuid() == 0 && owner_dirfd >= 0) {
        /* as root: keep the file's owner (a new file takes its directory's) */
        struct stat st;
        if (fstatat(owner_dirfd, owner_name, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
            fstatat(owner_dirfd, "", &st, AT_EMPTY_PATH) == 0) {
            if (fchown(out, st.st_uid, st.st_gid) < 0)
                return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot give %s its owner", r->path);
        }
    }
    if (fchmod(out, r->mode & 07777) < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s", r->path);
    return 0;
}

static char *stage_name(size_t i)
{
    return xasprintf("%zu", i);
}

/* ---------------------------------------------------------------------------------- */
/* staging */

static bool same_mount(int a, int b)
{
    struct statx x, y;
    if (statx(a, "", AT_EMPTY_PATH, STATX_MNT_ID, &x) < 0 || statx(b, "", AT_EMPTY_PATH, STATX_MNT_ID, &y) < 0)
        return false;
    return x.stx_dev_major == y.stx_dev_major && x.stx_dev_minor == y.stx_dev_minor &&
           (!(x.stx_mask & STATX_MNT_ID) || !(y.stx_mask & STATX_MNT_ID) || x.stx_mnt_id == y.stx_mnt_id);
}

/* Where new files are written before they are renamed into the source: a directory on
 * the same mount (rename(2) cannot cross one), as invisible as can be. */
char *integ_choose_stage(const cordon_workspace *ws, int srcfd, bool git)
{
    {
        _cleanup_fd_ int d = open(ws->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (d >= 0 && same_mount(srcfd, d))
            return ws_path(ws, "stage");
    }
    if (git) {
        char *gd = path_join(ws->st.source, ".git");
        struct stat st;
        _cleanup_fd_ int d =
            lstat(gd, &st) == 0 && S_ISDIR(st.st_mode) ? open(gd, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        if (d >= 0 && same_mount(srcfd, d)) {
            char *p = xasprintf("%s/cordon-stage-%s", gd, ws->st.name);
            free(gd);
            return p;
        }
        free(gd);
    }
    return xasprintf("%s/.cordon-stage-%s", ws->st.source, ws->st.name);
}

int integ_unstage(const journal *j, cordon_error *err)
{
    if (!j->stage)
        return 0;
    return ws_rmtree_path(j->stage, err);
}

/* The kernel backend's upper layer is emptied once the source has everything, and no run
 * can touch it meanwhile (integrate holds the run lock): its file is staged by a hard link
 * instead of a copy, the overlay's own marks (user.overlay.*) taken off first.  False
 * when that cannot be done (another mount, another backend): then it is copied. */
static bool link_content(const cordon_workspace *ws, const jrec *r, int sfd, const char *name, int owner_dirfd,
                         const char *owner_name)
{
    if (ws->st.backend != CORDON_WS_KERNEL)
        return false;
    if (!S_ISLNK(r->mode)) {
        char names[4096];
        ssize_t n = llistxattr(r->from, names, sizeof names);
        if (n < 0 && errno != ENOTSUP)
            return false;
        for (ssize_t k = 0; k < n; k += (ssize_t)strlen(names + k) + 1)
            if (strncmp(names + k, "user.overlay.", 13) == 0 && lremovexattr(r->from, names + k) < 0)
                return false;
    }
    unlinkat(sfd, name, 0);
    if (linkat(AT_FDCWD, r->from, sfd, name, 0) < 0)
        return false;
    struct stat st, own;
    if (geteuid() == 0 && owner_dirfd >= 0 && fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        (fstatat(owner_dirfd, owner_name, &own, AT_SYMLINK_NOFOLLOW) == 0 ||
         fstatat(owner_dirfd, "", &own, AT_EMPTY_PATH) == 0) &&
        (st.st_uid != own.st_uid || st.st_gid != own.st_gid) &&
        fchownat(sfd, name, own.st_uid, own.st_gid, AT_SYMLINK_NOFOLLOW) < 0) {
        unlinkat(sfd, name, 0);
        return false;
    }
    return true;
}

int integ_stage_files(const cordon_workspace *ws, journal *j, cordon_error *err)
{
    if (mkdir(j->stage, 0700) < 0 && errno != EEXIST)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot create the staging directory %s", j->stage);
    _cleanup_fd_ int sfd = open(j->stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sfd < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open %s", j->stage);
    _cleanup_fd_ int root = open(ws->st.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (size_t i = 0; i < j->n; i++) {
        const jrec *r = &j->v[i];
        if (r->status != 'A' && r->status != 'M')
            continue;
        char *dir;
        const char *leaf;
        integ_split_rel(r->path, &dir, &leaf);
        _cleanup_fd_ int od = root >= 0 ? integ_open_beneath(root, dir, O_PATH | O_DIRECTORY) : -1;
        free(dir);
        char *name = stage_name(i);
        int rr = link_content(ws, r, sfd, name, od, leaf) ? 0 : write_content(r, sfd, name, od, leaf, err);
        free(name);
        if (rr < 0)
            return -1;
    }
    return 0;
}

/* The files: deletions (deepest first), directories gone and new, then every staged
 * file renamed over its target.  Idempotent: a recovery runs it again.  `restage`: the
 * staged files cannot be trusted (the machine restarted since: their data may never have
 * reached the disk), so every file is written again from the workspace. */
int integ_apply_files(const cordon_workspace *ws, const journal *j, bool restage, cordon_error *err)
{
    _cleanup_fd_ int root = open(ws->st.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open the source %s", ws->st.source);
    _cleanup_fd_ int sfd = j->stage && !restage ? open(j->stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    for (size_t k = j->n; k > 0; k--) {
        const jrec *r = &j->v[k - 1];
        if (r->status != 'D' && r->status != 'X')
            continue;
        char *dir;
        const char *leaf;
        integ_split_rel(r->path, &dir, &leaf);
        int d = integ_open_beneath(root, dir, O_PATH | O_DIRECTORY);
        free(dir);
        if (d < 0)
            continue; /* gone already, or now behind a symlink: nothing of ours there */
        int rr = unlinkat(d, leaf, r->status == 'X' ? AT_REMOVEDIR : 0);
        int e = errno;
        close(d);
        if (rr < 0 && e != ENOENT && e != ENOTEMPTY && e != EEXIST && e != ENOTDIR && e != EISDIR)
            return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot remove %s from the source", r->path);
    }
    for (size_t k = 0; k < j->n; k++) {
        const jrec *r = &j->v[k];
        if (r->status != 'N')
            continue;
        int d = integ_ensure_dir(root, r->path, r->mode ? r->mode : 0755, err);
        if (d < 0)
            return -1;
        close(d);
    }
    for (size_t k = 0; k < j->n; k++) {
        const jrec *r = &j->v[k];
        if (r->status != 'A' && r->status != 'M')
            continue;
        char *dir;
        const char *leaf;
        integ_split_rel(r->path, &dir, &leaf);
        int d = *dir ? integ_ensure_dir(root, dir, 0755, err) : fcntl(root, F_DUPFD_CLOEXEC, 3);
        free(dir);
        if (d < 0)
            return err_wrap(err, "integrating %s", r->path);
        char *name = stage_name(k);
        int rr = -1;
        errno = ENOENT;
        if (sfd >= 0)
            rr = renameat(sfd, name, d, leaf);
        if (rr < 0 && (errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST)) {
            /* a directory stands where the view has a file: it goes (what it held is
             * deleted above, unless the source has new files there: last writer wins) */
            if (ws_rmtree(d, leaf, err) < 0) {
                close(d);
                free(name);
                return -1;
            }
            rr = renameat(sfd, name, d, leaf);
        }
        if (rr < 0 && errno == ENOENT) {
            /* not staged (any more): renamed by an earlier, interrupted run, or not to be
             * trusted; the workspace's content again, from the upper layer or the copy
             * (intact until the source has everything for sure) */
            char tmp[64];
            snprintf(tmp, sizeof tmp, ".cordon-integrate.%zu", k);
            if (write_content(r, d, tmp, d, leaf, err) < 0 ||
                (renameat(d, tmp, d, leaf) < 0 &&
                 (errno != EISDIR || ws_rmtree(d, leaf, err) < 0 || renameat(d, tmp, d, leaf) < 0))) {
                int e = errno;
                unlinkat(d, tmp, 0);
                close(d);
                free(name);
                return err->message[0] ? -1 : err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot write %s", r->path);
            }
            rr = 0;
        }
        free(name);
        if (rr < 0) {
            int e = errno;
            close(d);
            return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot write %s in the source", r->path);
        }
        close(d);
    }
    return 0;
}

/* After the source has it all: the workspace starts again from the source (kernel, fuse:
 * an empty upper layer; copy: the manifest knows the copy's new state). */
int integ_reset_workspace(cordon_workspace *ws, const journal *j, cordon_error *err)
{
    if (ws->st.backend == CORDON_WS_COPY) {
        const char **rels = xcalloc(j->n + 1, sizeof *rels);
        for (size_t i = 0; i < j->n; i++)
            rels[i] = j->v[i].path;
        char *copy = ws_path(ws, "copy"), *mf = ws_path(ws, "manifest");
        int r = ws_manifest_refresh(copy, mf, rels, j->n, err);
        free(copy);
        free(mf);
        free(rels);
        return r;
    }
    if (ws->st.backend != CORDON_WS_KERNEL && ws->st.backend != CORDON_WS_FUSE)
        return 0;
    bool fuse = ws->st.backend == CORDON_WS_FUSE;
    if (fuse && ws_fuse_mounted(ws) && ws_fuse_unmount(ws, err) < 0)
        return err_wrap(err, "the changes are integrated, but the workspace's view could not be unmounted to "
                             "start it again from the source");
    static const char *const layers[] = {"upper", "work"};
    for (size_t i = 0; i < 2; i++) {
        char *p = ws_path(ws, layers[i]);
        char *old = xasprintf("%s.old", p);
        /* a new, empty layer in one rename: never a half-emptied one */
        if (access(p, F_OK) == 0) {
            if (ws_rmtree_path(old, err) < 0 || rename(p, old) < 0) {
                int e = errno;
                free(p);
                free(old);
                return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot reset the workspace's %s layer", layers[i]);
            }
        }
        if (mkdir(p, 0700) < 0 && errno != EEXIST) {
            int e = errno;
            free(p);
            free(old);
            return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot reset the workspace's %s layer", layers[i]);
        }
        int r = ws_rmtree_path(old, err);
        free(p);
        free(old);
        if (r < 0)
            return -1;
    }
    if (fuse && ws_fuse_mount(ws, err) < 0)
        return err_wrap(err, "the changes are integrated, but the workspace's view could not be mounted again");
    return 0;
}
