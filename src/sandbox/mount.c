// SPDX-License-Identifier: Apache-2.0
#include "sandbox/mount.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <limits.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/ns.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/path.h"

static int fd_mount_id(int fd, uint64_t *id)
{
    struct statx stx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0)
        return -1;
    if (!(stx.stx_mask & STATX_MNT_ID)) {
        errno = ENOSYS;
        return -1;
    }
    *id = stx.stx_mnt_id;
    return 0;
}

int mnt_mark_ours(root_scratch *s, int mnt_fd, cordon_error *err)
{
    uint64_t id;
    if (fd_mount_id(mnt_fd, &id) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot read a mount id (statx)");
    if (s->n_ours >= s->cap)
        return err_set(err, CORDON_STAGE_ROOT, ENOSPC, "too many mounts");
    s->ours[s->n_ours++] = id;
    return 0;
}

int mnt_ro_later(root_scratch *s, int mnt_fd, cordon_error *err)
{
    if (s->n_later_ro >= s->cap)
        return err_set(err, CORDON_STAGE_ROOT, ENOSPC, "too many mounts");
    int fd = fcntl(mnt_fd, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "dup");
    s->later_ro[s->n_later_ro++] = fd;
    return 0;
}

bool mnt_is_ours(const root_scratch *s, int dir_fd)
{
    uint64_t id;
    if (fd_mount_id(dir_fd, &id) < 0)
        return false;
    for (size_t i = 0; i < s->n_ours; i++)
        if (s->ours[i] == id)
            return true;
    return false;
}

int mnt_new_tmpfs(const char *mode, unsigned attrs, cordon_error *err)
{
    _cleanup_fd_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0) {
        int e = errno;
        if (e == EPERM) /* the first mount in the new namespace: AppArmor's userns rule */
            return err_opt(err, CORDON_STAGE_ROOT, e, "isolation",
                           "cannot create a tmpfs (fsopen) in the new user namespace (%s)%s", ns_userns_hint(),
                           NS_ISOLATION_HINT);
        return err_set(err, CORDON_STAGE_ROOT, e, "cannot create a tmpfs (fsopen)");
    }
    if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot create a tmpfs (fsconfig)");
    int m = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
    if (m < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot create a tmpfs (fsmount)");
    return m;
}

int mnt_private_tmpfs(root_scratch *s, unsigned mode, unsigned attrs, cordon_error *err)
{
    char m[16];
    snprintf(m, sizeof m, "%o", mode);
    if (s->private_fd < 0)
        return mnt_new_tmpfs(m, attrs, err);
    char name[16];
    snprintf(name, sizeof name, "%u", s->n_private++);
    if (mkdirat(s->private_fd, name, 0700) < 0 || fchmodat(s->private_fd, name, mode, 0) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot make a private directory in the --limit-memory tmpfs");
    int t = open_tree(s->private_fd, name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (t < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot bind a private directory of the --limit-memory tmpfs");
    if (mnt_set_attr(t, NULL, attrs, false, err) < 0) {
        close(t);
        return -1;
    }
    return t;
}

int mnt_set_attr(int tree_fd, const char *path, unsigned set, bool recursive, cordon_error *err)
{
    struct mount_attr a = {.attr_set = set};
    unsigned flags = (path && *path ? 0 : AT_EMPTY_PATH) | (recursive ? AT_RECURSIVE : 0);
    if (mount_setattr(tree_fd, path ? path : "", flags, &a, sizeof a) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot set mount attributes (mount_setattr)");
    return 0;
}

int mnt_attach(int tree_fd, int dest_fd, const char *dest, cordon_error *err)
{
    if (move_mount(tree_fd, "", dest_fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot mount on %s (move_mount)", dest);
    return 0;
}

/* The common case in one walk of the kernel's: `path` (canonical, absolute) exists, of
 * the kind asked, and crosses no symlink.  openat2(RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH)
 * from root_fd reaches what the walk below would, component by component (each a
 * directory, none a symlink, mounts crossed alike), in one call and one fstat instead of
 * three calls per component.  -1 when the walk must decide: anything missing, a
 * symlink, "." or "..", a kind other than the one asked, no openat2 (Linux 5.6): the walk
 * then creates, refuses or explains exactly as it did before. */
static int open_dest_fast(int root_fd, const char *path, dest_create create)
{
    const char *rel = path;
    while (*rel == '/')
        rel++;
    size_t n = strlen(rel);
    if (n == 0 || n >= PATH_MAX)
        return -1;
    for (const char *c = rel; *c;) {
        size_t l = strcspn(c, "/");
        if (l == 0 || (l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.') || l > NAME_MAX)
            return -1; /* "//", ".", "..": the walk says what is wrong */
        c += l;
        if (*c == '/' && *++c == '\0')
            return -1; /* a trailing slash */
    }
    struct open_how how = {.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_BENEATH};
    int fd = (int)syscall(SYS_openat2, root_fd, rel, &how, sizeof how);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode) || (create == DEST_DIR && !S_ISDIR(st.st_mode)) ||
        (create == DEST_FILE && S_ISDIR(st.st_mode))) {
        close(fd);
        return -1;
    }
    return fd;
}

int mnt_open_dest(int root_fd, const root_scratch *s, const char *path, dest_create create, cordon_error *err)
{
    int fast = open_dest_fast(root_fd, path, create);
    if (fast >= 0)
        return fast;
    const char *p = path;
    int cur = -1;
    /* A mount point to make (in /dev, in a tmpfs): its parent the fast way, and only the
     * last component through the walk, which checks, creates and opens it. */
    const char *slash = strrchr(path, '/');
    if (create != DEST_EXISTING && slash && slash != path && slash[1] && (size_t)(slash - path) < PATH_MAX) {
        char parent[PATH_MAX];
        memcpy(parent, path, (size_t)(slash - path));
        parent[slash - path] = '\0';
        cur = open_dest_fast(root_fd, parent, DEST_DIR);
        if (cur >= 0)
            p = slash + 1;
    }
    if (cur < 0)
        cur = openat(root_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (cur < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot open the new root");
    struct stat st = {.st_mode = S_IFDIR};
    char comp[NAME_MAX + 1];
    int got;
    while ((got = path_next_name(&p, comp)) > 0) {
        bool last = *p == '\0';
        if (strcmp(comp, "..") == 0 || strcmp(comp, ".") == 0) {
            close(cur);
            return err_set(err, CORDON_STAGE_ROOT, EINVAL, "'%s' is not a canonical path", path);
        }
        int next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && errno == ENOENT && create != DEST_EXISTING) {
            if (!mnt_is_ours(s, cur)) {
                close(cur);
                return err_set(err, CORDON_STAGE_ROOT, 0,
                               "refusing to create the mount point %s: '%s' would be made in a "
                               "host directory",
                               path, comp);
            }
            int r = (last && create == DEST_FILE) ? mknodat(cur, comp, S_IFREG | 0444, 0) : mkdirat(cur, comp, 0755);
            if (r < 0 && errno != EEXIST) {
                int e2 = errno;
                close(cur);
                return err_set(err, CORDON_STAGE_ROOT, e2, "cannot create the mount point %s", path);
            }
            next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            int e2 = errno;
            close(cur);
            return err_set(err, CORDON_STAGE_ROOT, e2, "cannot open %s in the new root", path);
        }
        close(cur);
        cur = next;
        if (fstat(cur, &st) < 0) {
            int e2 = errno;
            close(cur);
            return err_set(err, CORDON_STAGE_ROOT, e2, "cannot look at %s", path);
        }
        if (S_ISLNK(st.st_mode)) {
            close(cur);
            size_t upto = (size_t)(p - path); /* the path up to this component */
            while (upto > 1 && path[upto - 1] == '/')
                upto--;
            return err_set(err, CORDON_STAGE_ROOT, ELOOP,
                           "refusing to follow the symlink at %.*s while setting up %s (setup "
                           "never follows symlinks)",
                           (int)upto, path, path);
        }
        if (!last && !S_ISDIR(st.st_mode)) {
            close(cur);
            return err_set(err, CORDON_STAGE_ROOT, ENOTDIR, "cannot set up %s", path);
        }
    }
    if (got < 0) {
        close(cur);
        return err_set(err, CORDON_STAGE_ROOT, ENAMETOOLONG, "%s", path);
    }
    if (create == DEST_DIR && !S_ISDIR(st.st_mode)) {
        close(cur);
        return err_set(err, CORDON_STAGE_ROOT, ENOTDIR, "the mount point %s", path);
    }
    if (create == DEST_FILE && S_ISDIR(st.st_mode)) {
        close(cur);
        return err_set(err, CORDON_STAGE_ROOT, EISDIR, "the mount point %s", path);
    }
    return cur;
}
