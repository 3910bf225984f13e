// SPDX-License-Identifier: Apache-2.0
#include "sandbox/root.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/dev.h"
#include "sandbox/ns.h"
#include "sandbox/overlay.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/proc.h"
#include "util/strv.h"
#include "util/trace.h"

typedef struct build {
    const plan *p;
    root_scratch *s;
    int root_fd;  /* the new root */
    int stage_fd; /* a setup-only tmpfs holding the empty file hidden files are bound from */
    cordon_error *err;
} build;

#define EMPTY_NAME     "empty"
#define EMPTY_DIR_NAME "emptydir"

void root_scratch_init(root_scratch *s, const plan *p)
{
    *s = (root_scratch){0};
    s->tree_fds = xmalloc((p->n_ops + 1) * sizeof *s->tree_fds);
    for (size_t i = 0; i <= p->n_ops; i++)
        s->tree_fds[i] = -1;
    s->cap = p->n_ops + 16;
    s->later_ro = xcalloc(s->cap, sizeof *s->later_ro);
    s->ours = xcalloc(s->cap, sizeof *s->ours);
    s->proc_fd = -1;
    s->private_fd = -1;
}

void root_scratch_free(root_scratch *s)
{
    free(s->tree_fds);
    free(s->later_ro);
    free(s->ours);
    *s = (root_scratch){0};
}

/* The shared tmpfs of --limit-memory: `size` bytes of data in all, and one inode per KiB
 * of it (at least 4096), since inodes take memory too. */
static int new_capped_tmpfs(unsigned long long size, unsigned mode, cordon_error *err)
{
    _cleanup_fd_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot create a tmpfs (fsopen)");
    char sz[32], inodes[32], md[16];
    snprintf(sz, sizeof sz, "%llu", size);
    snprintf(inodes, sizeof inodes, "%llu", size / 1024 > 4096 ? size / 1024 : 4096);
    snprintf(md, sizeof md, "%04o", mode & 07777);
    if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", md, 0) < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "size", sz, 0) < 0 ||
        fsconfig(fs, FSCONFIG_SET_STRING, "nr_inodes", inodes, 0) < 0 ||
        fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot create a tmpfs of %s bytes (fsconfig)", sz);
    int m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    if (m < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot create a tmpfs (fsmount)");
    return m;
}

/* Open a bind source by descriptor, check that it is what the resolver saw, and clone
 * it (recursively) as a detached mount with the plan's attributes. */
static int open_source(const plan_op *op, cordon_error *err)
{
    if (!op->src)
        return err_set(err, CORDON_STAGE_ROOT, EINVAL, "%s: no source", op->why);
    _cleanup_fd_ int fd = open_no_symlinks(op->src, O_PATH | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ELOOP)
            return err_set(err, CORDON_STAGE_ROOT, errno,
                           "%s: %s now crosses a symlink (it changed after it was resolved); "
                           "refusing to follow it",
                           op->why, op->src);
        return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot open %s", op->why, op->src);
    }
    struct stat st;
    if (fstat(fd, &st) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot look at %s", op->why, op->src);
    if (st.st_dev != op->dev || st.st_ino != op->ino || S_ISDIR(st.st_mode) != op->is_dir)
        return err_set(err, CORDON_STAGE_ROOT, 0,
                       "%s: %s was replaced while the sandbox was being set up; refusing to bind it", op->why, op->src);
    int tree = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
    if (tree < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot bind %s (open_tree)", op->why, op->src);
    unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (op->read_only ? MOUNT_ATTR_RDONLY : 0);
    if (mnt_set_attr(tree, NULL, attrs, true, err) < 0) {
        close(tree);
        return err_wrap(err, "%s: %s", op->why, op->src);
    }
    return tree;
}

/* A copy-on-write workspace (PLAN_OVERLAY): a kernel overlay of the host's `src` (lower)
 * with the workspace's upper and work layers, created here, in the sandbox's own mount
 * namespace (nothing is mounted on the host), by descriptor: each layer opened without
 * following symlinks (the lower checked to be what the resolver saw), then handed to
 * fsconfig.  userxattr: the whiteouts and opaque directories of a user namespace's
 * overlay; no redirects or metadata-only copies, so that the upper layer holds every
 * change as plain files (src/workspace/changes.c reads it). */
static int open_layer(const char *path, const plan_op *op, bool check, cordon_error *err)
{
    struct open_how how = {
        .flags = O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW,
        .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot open the layer %s", op->why, path);
    struct stat st;
    if (check && (fstat(fd, &st) < 0 || st.st_dev != op->dev || st.st_ino != op->ino)) {
        close(fd);
        return err_set(err, CORDON_STAGE_ROOT, 0, "%s: %s was replaced while the sandbox was being set up", op->why,
                       path);
    }
    return fd;
}

static int open_overlay(const plan_op *op, cordon_error *err)
{
    _cleanup_fd_ int lower = open_layer(op->src, op, true, err);
    if (lower < 0)
        return -1;
    _cleanup_fd_ int upper = open_layer(op->upper, op, false, err);
    if (upper < 0)
        return -1;
    _cleanup_fd_ int work = open_layer(op->work, op, false, err);
    if (work < 0)
        return -1;
    char why[512];
    unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (op->read_only ? MOUNT_ATTR_RDONLY : 0);
    int m = overlay_mount(&lower, 1, upper, work, attrs, why, sizeof why);
    if (m < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot mount the kernel overlay of %s: %s", op->why, op->src,
                       why);
    return m;
}

/* A bind below an overlay: the path bound onto itself from inside the view (what the
 * view holds there, not what the host's lower layer holds), reached without symlinks. */
static int do_bind_in_view(build *b, const plan_op *op)
{
    _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, op->dest, DEST_EXISTING, b->err);
    if (d < 0)
        return err_wrap(b->err, "%s: in the workspace's view", op->why);
    struct stat st;
    if (fstat(d, &st) < 0)
        return err_set(b->err, CORDON_STAGE_ROOT, errno, "%s: cannot look at %s", op->why, op->dest);
    if (S_ISDIR(st.st_mode) != op->is_dir)
        return err_set(b->err, CORDON_STAGE_ROOT, 0,
                       "%s: %s is a %s in the workspace's view but a %s in its source; refusing to bind it", op->why,
                       op->dest, S_ISDIR(st.st_mode) ? "directory" : "file", op->is_dir ? "directory" : "file");
    _cleanup_fd_ int t = open_tree(d, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
    if (t < 0)
        return err_set(b->err, CORDON_STAGE_ROOT, errno, "%s: cannot bind %s (open_tree)", op->why, op->dest);
    unsigned attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (op->read_only ? MOUNT_ATTR_RDONLY : 0);
    if (mnt_set_attr(t, NULL, attrs, true, b->err) < 0 || mnt_attach(t, d, op->dest, b->err) < 0)
        return err_wrap(b->err, "%s", op->why);
    return 0;
}

static int do_symlink(build *b, const plan_op *op)
{
    const char *slash = strrchr(op->dest, '/');
    char parent[4096];
    size_t pl = (size_t)(slash - op->dest);
    if (pl >= sizeof parent)
        return err_set(b->err, CORDON_STAGE_ROOT, ENAMETOOLONG, "%s", op->dest);
    memcpy(parent, op->dest, pl);
    parent[pl] = '\0';
    _cleanup_fd_ int pfd = mnt_open_dest(b->root_fd, b->s, pl ? parent : "/", DEST_DIR, b->err);
    if (pfd < 0)
        return -1;
    /* an O_PATH fd cannot be used as a dirfd for symlinkat() checks of ownership */
    if (!mnt_is_ours(b->s, pfd))
        return err_set(b->err, CORDON_STAGE_ROOT, 0, "refusing to create the symlink %s in a host directory", op->dest);
    if (symlinkat(op->src, pfd, slash + 1) < 0) {
        char cur[4096];
        ssize_t n;
        if (errno == EEXIST && (n = readlinkat(pfd, slash + 1, cur, sizeof cur - 1)) >= 0) {
            cur[n] = '\0';
            if (strcmp(cur, op->src) == 0)
                return 0;
        }
        return err_set(b->err, CORDON_STAGE_ROOT, errno, "cannot create the symlink %s", op->dest);
    }
    return 0;
}

/* Does a later operation mount something below ops[i]? (The plan is sorted, so what
 * lies below a path comes right after it.) */
static bool has_children(const plan *p, size_t i)
{
    for (size_t j = i + 1; j < p->n_ops; j++) {
        if (!path_has_prefix(p->ops[j].dest, p->ops[i].dest))
            return false;
        if (plan_op_mounts(&p->ops[j]))
            return true;
    }
    return false;
}

static int do_hide(build *b, size_t i)
{
    const plan_op *op = &b->p->ops[i];
    if (op->is_dir && has_children(b->p, i)) {
        /* Mount points will be made in it: a tmpfs of its own, read-only at the end. */
        _cleanup_fd_ int m = mnt_new_tmpfs("0555", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, b->err);
        if (m < 0)
            return -1;
        _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, op->dest, DEST_DIR, b->err);
        if (d < 0 || mnt_attach(m, d, op->dest, b->err) < 0)
            return err_wrap(b->err, "%s: hiding %s", op->why, op->dest);
        if (mnt_mark_ours(b->s, m, b->err) < 0 || mnt_ro_later(b->s, m, b->err) < 0)
            return -1;
        return 0;
    }
    /* Otherwise a read-only clone of the staging area's empty directory or file. */
    const char *empty = op->is_dir ? EMPTY_DIR_NAME : EMPTY_NAME;
    _cleanup_fd_ int t = open_tree(b->stage_fd, empty, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    if (t < 0)
        return err_set(b->err, CORDON_STAGE_ROOT, errno, "%s: cannot hide %s (open_tree)", op->why, op->dest);
    if (mnt_set_attr(t, NULL, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, false,
                     b->err) < 0)
        return -1;
    _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, op->dest, op->is_dir ? DEST_DIR : DEST_FILE, b->err);
    if (d < 0 || mnt_attach(t, d, op->dest, b->err) < 0)
        return err_wrap(b->err, "%s: hiding %s", op->why, op->dest);
    return 0;
}

static int do_tmpfs(build *b, const plan_op *op)
{
    /* a size of its own (bwrap's --size): a tmpfs of that size, apart from --limit-memory's */
    _cleanup_fd_ int m = op->size ? new_capped_tmpfs(op->size, op->mode, b->err)
                                  : mnt_private_tmpfs(b->s, op->mode, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, b->err);
    if (m < 0)
        return -1;
    _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, op->dest, DEST_DIR, b->err);
    if (d < 0 || mnt_attach(m, d, op->dest, b->err) < 0)
        return err_wrap(b->err, "%s", op->why);
    return mnt_mark_ours(b->s, m, b->err);
}

static int do_bind(build *b, size_t i)
{
    const plan_op *op = &b->p->ops[i];
    _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, op->dest, op->is_dir ? DEST_DIR : DEST_FILE, b->err);
    if (d < 0 || mnt_attach(b->s->tree_fds[i], d, op->dest, b->err) < 0)
        return err_wrap(b->err, "%s", op->why);
    close(b->s->tree_fds[i]);
    b->s->tree_fds[i] = -1;
    return 0;
}

/* --inherit-pid-namespace: the caller's /proc (a fresh one would need CAP_SYS_ADMIN over
 * the caller's PID namespace), with what is mounted below it, read-only. */
static int do_caller_proc(build *b, const plan_op *op)
{
    _cleanup_fd_ int t = open_tree(AT_FDCWD, "/proc", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (t < 0)
        return err_set(b->err, CORDON_STAGE_ROOT, errno, "cannot bind the caller's /proc (open_tree)");
    struct statfs sf;
    if (fstatfs(t, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC)
        return err_set(b->err, CORDON_STAGE_ROOT, errno ? errno : EINVAL,
                       "the caller's /proc is not a procfs: cannot share the caller's PID namespace");
    if (mnt_set_attr(t, NULL, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, true,
                     b->err) < 0)
        return err_wrap(b->err, "the caller's /proc");
    _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, op->dest, DEST_DIR, b->err);
    if (d < 0 || mnt_attach(t, d, op->dest, b->err) < 0)
        return -1;
    return 0;
}

/* A directory that only holds mount points (PLAN_HOLD): a tmpfs of its own, read-only
 * once what it holds is mounted; or, below the home of --base host, the directory as the
 * overlay shows it, bound onto itself read-only (its content stays visible). */
static int do_hold(build *b, const plan_op *op)
{
    if (!op->from_view) {
        /* 0755, not 0555: in a sandbox nested in cordon's, the mount points are made by
         * the outer supervisor, with no capability to override a mode (read-only comes
         * from the mount, once sealed) */
        _cleanup_fd_ int m = mnt_new_tmpfs("0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, b->err);
        if (m < 0)
            return -1;
        _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, op->dest, DEST_DIR, b->err);
        if (d < 0 || mnt_attach(m, d, op->dest, b->err) < 0)
            return err_wrap(b->err, "%s", op->why);
        if (mnt_mark_ours(b->s, m, b->err) < 0 || mnt_ro_later(b->s, m, b->err) < 0)
            return -1;
        return 0;
    }
    _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, op->dest, DEST_EXISTING, b->err);
    if (d < 0)
        return err_wrap(b->err, "%s", op->why);
    struct stat st;
    if (fstat(d, &st) < 0 || !S_ISDIR(st.st_mode))
        return err_set(b->err, CORDON_STAGE_ROOT, errno ? errno : ENOTDIR, "%s: %s", op->why, op->dest);
    _cleanup_fd_ int t = open_tree(d, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
    if (t < 0)
        return err_set(b->err, CORDON_STAGE_ROOT, errno, "%s: cannot bind %s (open_tree)", op->why, op->dest);
    if (mnt_set_attr(t, NULL, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true, b->err) < 0 ||
        mnt_attach(t, d, op->dest, b->err) < 0)
        return err_wrap(b->err, "%s", op->why);
    /* the overlay's, not a host file system (the creation control's git rules) */
    return mnt_mark_ours(b->s, t, b->err);
}

/* A file cordon writes (PLAN_FILE), only ever in a tmpfs of its own. */
static int do_file(build *b, const plan_op *op)
{
    const char *slash = strrchr(op->dest, '/');
    char parent[4096];
    if (!slash || (size_t)(slash - op->dest) >= sizeof parent)
        return err_set(b->err, CORDON_STAGE_ROOT, ENAMETOOLONG, "%s", op->dest);
    size_t pl = (size_t)(slash - op->dest);
    memcpy(parent, op->dest, pl);
    parent[pl] = '\0';
    _cleanup_fd_ int pfd = mnt_open_dest(b->root_fd, b->s, pl ? parent : "/", DEST_DIR, b->err);
    if (pfd < 0)
        return err_wrap(b->err, "%s", op->why);
    if (!mnt_is_ours(b->s, pfd))
        return err_set(b->err, CORDON_STAGE_ROOT, 0, "refusing to write %s in a host directory", op->dest);
    /* (the mode as asked, not the umask's: a plan_op's mode 0 means 0644) */
    _cleanup_fd_ int fd = openat(pfd, slash + 1, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 || write_all(fd, op->src, strlen(op->src)) < 0 || fchmod(fd, op->mode ? op->mode : 0644) < 0)
        return err_set(b->err, CORDON_STAGE_ROOT, errno, "%s: cannot write %s", op->why, op->dest);
    return 0;
}

/* PLAN_COW, before the new root exists (the host tree is still the root): the lower
 * layer (the host directory, checked to be what the resolver saw), upper and work layers
 * in a private tmpfs attached over the build place `at` (a kernel needs layers it can
 * clone: attached, not detached mounts), and the overlay made from the three.  Returns
 * the overlay's detached mount; where the kernel refuses an overlay, the host directory
 * itself as a read-only recursive bind, with s->cow_fallback set. */
static int open_cow(const plan_op *op, root_scratch *s, int at, cordon_error *err)
{
    _cleanup_fd_ int lower = open_no_symlinks(op->src, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    struct stat st;
    if (lower < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot open %s", op->why, op->src);
    if (fstat(lower, &st) < 0 || st.st_dev != op->dev || st.st_ino != op->ino)
        return err_set(err, CORDON_STAGE_ROOT, 0, "%s: %s was replaced while the sandbox was being set up", op->why,
                       op->src);
    _cleanup_fd_ int layers = mnt_private_tmpfs(s, 0755, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
    if (layers < 0 || mnt_attach(layers, at, "the home's private layer", err) < 0)
        return -1;
    if (mkdirat(layers, "upper", st.st_mode & 07777) < 0 || mkdirat(layers, "work", 0700) < 0 ||
        fchmodat(layers, "upper", st.st_mode & 07777, 0) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot make the private layer", op->why);
    _cleanup_fd_ int upper = openat(layers, "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    _cleanup_fd_ int work = openat(layers, "work", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (upper < 0 || work < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot open the private layer", op->why);
    /* Inside another cordon the outer supervisor refuses kernel overlays (they would
     * create files past its creation control): do not ask, and say why. */
    int m = -1;
    if (s->under_cordon) {
        snprintf(s->cow_why, sizeof s->cow_why, "inside another cordon sandbox, which refuses kernel overlays");
        errno = EPERM;
    } else {
        m = overlay_mount(&lower, 1, upper, work, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, s->cow_why, sizeof s->cow_why);
    }
    if (m >= 0)
        return m;
    /* The kernel would not (an outer sandbox that refuses overlays, an old kernel): the
     * real home read-only, and HOME a private directory of its own. */
    size_t l = strlen(s->cow_why);
    snprintf(s->cow_why + l, sizeof s->cow_why - l, " (errno %d)", errno);
    s->cow_fallback = true;
    int t = open_tree(lower, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
    if (t < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot bind %s (open_tree)", op->why, op->src);
    if (mnt_set_attr(t, NULL, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, true, err) < 0) {
        close(t);
        return err_wrap(err, "%s: %s", op->why, op->src);
    }
    return t;
}

static int do_cow(build *b, size_t i)
{
    const plan_op *op = &b->p->ops[i];
    _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, op->dest, DEST_DIR, b->err);
    if (d < 0 || mnt_attach(b->s->tree_fds[i], d, op->dest, b->err) < 0)
        return err_wrap(b->err, "%s", op->why);
    /* The overlay is cordon's own file system: what the command creates there vanishes,
     * so the creation control's rules for host file systems do not apply to it.  The
     * read-only fallback is the host's. */
    if (!b->s->cow_fallback && mnt_mark_ours(b->s, b->s->tree_fds[i], b->err) < 0)
        return -1;
    close(b->s->tree_fds[i]);
    b->s->tree_fds[i] = -1;
    return 0;
}

/* The fallback HOME of a PLAN_COW the kernel would not overlay: after every operation
 * (it may lie in the private /tmp). */
static int do_home_fallback(build *b)
{
    const plan *p = b->p;
    if (!b->s->cow_fallback || !p->home_fallback)
        return 0;
    _cleanup_fd_ int m = mnt_private_tmpfs(b->s, 0700, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, b->err);
    if (m < 0)
        return -1;
    _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, p->home_fallback, DEST_DIR, b->err);
    if (d < 0 || mnt_attach(m, d, p->home_fallback, b->err) < 0)
        return err_wrap(b->err, "the private HOME (the home is read-only: %s)", b->s->cow_why);
    return mnt_mark_ours(b->s, m, b->err);
}

/* A fresh procfs of the caller's (the new) PID namespace, detached; -1 with errno.  The
 * kernel refuses it in a user namespace when no procfs is fully visible in the mount
 * namespace (mount_too_revealing(): a container runtime laid files or read-only binds
 * over parts of /proc, as Docker's, Podman's and Kubernetes' default masks do): EPERM. */
static int fresh_procfs(void)
{
    _cleanup_fd_ int fs = fsopen("proc", FSOPEN_CLOEXEC);
    if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        return -1;
    return fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
}

/* Was a fresh procfs refused because the caller's is masked (and nothing else)? */
static bool procfs_masked(int e)
{
    return e == EPERM || e == EACCES;
}

/* The caller's /proc, recursively (its masks come along, locked to it by the user
 * namespace), read-only, detached; -1 with err set. */
static int kept_procfs(cordon_error *err)
{
    int t = open_tree(AT_FDCWD, "/proc", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
    if (t < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot bind the caller's /proc (open_tree)");
    struct statfs sf;
    if (fstatfs(t, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC) {
        int e = errno ? errno : EINVAL;
        close(t);
        return err_set(err, CORDON_STAGE_ROOT, e, "the caller's /proc is not a procfs, and a fresh one is refused");
    }
    if (mnt_set_attr(t, NULL, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, true, err) <
        0) {
        close(t);
        return err_wrap(err, "the caller's /proc");
    }
    return t;
}

static int do_proc(build *b, const plan_op *op)
{
    if (b->p->inherit_pid_ns)
        return do_caller_proc(b, op);
    _cleanup_fd_ int m = fresh_procfs();
    if (m < 0 && procfs_masked(errno)) {
        /* A container that masks parts of /proc: its /proc, read-only, masks kept; the
         * command still has a PID namespace of its own (it names, signals and traces only
         * its own processes), and Landlock keeps the others' memory, environment and
         * descriptors closed (pid1.c).  What it shows: the container's other processes
         * and their command lines (cordon check, cordon explain, --status-json say so). */
        _cleanup_fd_ int t = kept_procfs(b->err);
        if (t < 0)
            return -1;
        _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, op->dest, DEST_DIR, b->err);
        if (d < 0 || mnt_attach(t, d, op->dest, b->err) < 0)
            return -1;
        b->s->proc_kept = true;
        return 0;
    }
    if (m < 0)
        return err_opt(b->err, CORDON_STAGE_ROOT, errno, "noProc", "cannot mount a fresh /proc");
    _cleanup_fd_ int d = mnt_open_dest(b->root_fd, b->s, op->dest, DEST_DIR, b->err);
    if (d < 0 || mnt_attach(m, d, op->dest, b->err) < 0)
        return -1;
    /* As bubblewrap does: the parts of /proc that configure the kernel stay read-only
     * even where the user namespace would let a write through.  That is only when the
     * caller is root: sysctls and sysrq-trigger check the file mode against the global
     * root uid, not capabilities.  For anyone else these files belong to a uid the
     * sandbox does not have, and the extra mounts would leave no fully visible /proc,
     * so that no sandbox inside could mount its own (the kernel's
     * mnt_already_visible()): nested cordon, bwrap and podman need one. */
    if (geteuid() != 0)
        return 0;
    static const char *const ro[] = {"sys", "sysrq-trigger", "irq", "bus"};
    for (size_t i = 0; i < sizeof ro / sizeof *ro; i++) {
        _cleanup_fd_ int target = openat(m, ro[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (target < 0) {
            if (errno == ENOENT)
                continue;
            return err_set(b->err, CORDON_STAGE_ROOT, errno, "cannot open /proc/%s", ro[i]);
        }
        _cleanup_fd_ int t = open_tree(m, ro[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        if (t < 0)
            return err_set(b->err, CORDON_STAGE_ROOT, errno, "cannot protect /proc/%s", ro[i]);
        if (mnt_set_attr(t, NULL, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, true,
                         b->err) < 0 ||
            mnt_attach(t, target, ro[i], b->err) < 0)
            return err_wrap(b->err, "protecting /proc/%s", ro[i]);
    }
    return 0;
}

static bool plan_hides(const plan *p)
{
    for (size_t i = 0; i < p->n_ops; i++)
        if (p->ops[i].kind == PLAN_HIDE)
            return true;
    return false;
}

static int pivot(int root_fd, cordon_error *err)
{
    _cleanup_fd_ int old = open("/", O_DIRECTORY | O_PATH | O_CLOEXEC);
    if (old < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot open the old root");
    if (fchdir(root_fd) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot enter the new root");
    /* pivot_root(".", ".") stacks the old root on top of the new one; detaching it
     * then leaves nothing of the host's mount tree reachable (as runc does). */
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "pivot_root");
    if (fchdir(old) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot enter the old root");
    if (umount2(".", MNT_DETACH) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot detach the old root");
    if (chdir("/") < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "chdir /");
    return 0;
}

/* 1. Every source opened while the host tree is still the root. */
static int open_sources(const plan *p, root_scratch *s, dev_sources *devs, cordon_error *err)
{
    for (size_t i = 0; i < p->n_ops; i++)
        if (p->ops[i].kind == PLAN_BIND && !p->ops[i].in_view && (s->tree_fds[i] = open_source(&p->ops[i], err)) < 0)
            return -1;
    for (size_t i = 0; i < p->n_ops; i++)
        if (p->ops[i].kind == PLAN_OVERLAY && (s->tree_fds[i] = open_overlay(&p->ops[i], err)) < 0)
            return -1;
    bool want_dev = false;
    for (size_t i = 0; i < p->n_ops; i++)
        want_dev |= p->ops[i].kind == PLAN_DEV;
    if (want_dev && dev_open_sources(devs, err) < 0)
        return -1;
    return 0;
}

/* The supervisor's procfs when the command gets none. */
static int open_supervisor_proc(const plan *p, root_scratch *s, cordon_error *err)
{
    if (p->proc || !s->want_proc_fd)
        return 0;
    if (p->inherit_pid_ns) {
        /* the caller's PID namespace: its procfs names the command's processes */
        s->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s->proc_fd < 0)
            return err_set(err, CORDON_STAGE_ROOT, errno, "cannot open the caller's /proc for the supervisor");
        return 0;
    }
    s->proc_fd = fresh_procfs();
    if (s->proc_fd < 0 && procfs_masked(errno)) {
        /* a container that masks parts of /proc: the caller's, for PID 1 only (the
         * creation control translates the command's ids into it: pathwalk.h) */
        s->proc_fd = kept_procfs(err);
        if (s->proc_fd < 0)
            return err_wrap(err, "a procfs for the supervisor");
        s->proc_kept = true;
    } else if (s->proc_fd < 0) {
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot mount a procfs for the supervisor");
    }
    return 0;
}

/* --base host: the host root, cloned before anything of cordon's own is attached over
 * /tmp (the staging area, the --limit-memory tmpfs), so that the new root shows
 * the host's /tmp where no private one covers it. */
static int open_host_root(const plan *p, int *out, cordon_error *err)
{
    if (!p->root_is_host)
        return 0;
    plan_op host = {.kind = PLAN_BIND,
                    .dest = (char *)"/",
                    .src = (char *)"/",
                    .read_only = true,
                    .is_dir = true,
                    .dev = p->root_dev,
                    .ino = p->root_ino,
                    .why = (char *)"base host"};
    *out = open_source(&host, err);
    return *out < 0 ? -1 : 0;
}

/* The staging tmpfs holding the empty file and directory that hide paths. */
static int attach_staging(const plan *p, int at, int *out, cordon_error *err)
{
    if (!plan_hides(p))
        return 0;
    *out = mnt_new_tmpfs("0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, err);
    if (*out < 0 || mnt_attach(*out, at, "the staging area", err) < 0)
        return -1;
    int fd = openat(*out, EMPTY_NAME, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0444);
    if (fd < 0 || mkdirat(*out, EMPTY_DIR_NAME, 0555) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot create the empty file and directory to hide with");
    close(fd);
    return 0;
}

/* --limit-memory: /tmp, HOME, TMPDIR and /dev/shm are directories of one tmpfs whose
 * size is the limit.  Attached over the build place too (cloning from a detached
 * mount needs a newer kernel); it goes with the old root, its clones stay. */
static int attach_memory_tmpfs(const plan *p, root_scratch *s, int at, int *out, cordon_error *err)
{
    if (!p->limits.v[CORDON_LIMIT_MEMORY])
        return 0;
    *out = new_capped_tmpfs(p->limits.v[CORDON_LIMIT_MEMORY], 0755, err);
    if (*out < 0 || mnt_attach(*out, at, "the --limit-memory tmpfs", err) < 0)
        return -1;
    s->private_fd = *out;
    return 0;
}

/* The new root: the host's (HOST_ROOT) or an empty tmpfs of cordon's, attached at AT. */
static int attach_new_root(const plan *p, root_scratch *s, int at, int *host_root, int *out, cordon_error *err)
{
    if (p->root_is_host) {
        *out = steal_fd(host_root);
        return mnt_attach(*out, at, "the new root", err);
    }
    *out = mnt_new_tmpfs("0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
    if (*out < 0 || mnt_attach(*out, at, "the new root", err) < 0)
        return -1;
    return mnt_mark_ours(s, *out, err);
}

/* 3. The plan, in order: parents before what lies below them. */
static int apply_plan(build *b, dev_sources *devs)
{
    const plan *p = b->p;
    for (size_t i = 0; i < p->n_ops; i++) {
        const plan_op *op = &p->ops[i];
        int r = 0;
        switch (op->kind) {
        case PLAN_BIND: r = op->in_view ? do_bind_in_view(b, op) : do_bind(b, i); break;
        case PLAN_OVERLAY: r = do_bind(b, i); break;
        case PLAN_HIDE: r = do_hide(b, i); break;
        case PLAN_TMPFS: r = do_tmpfs(b, op); break;
        case PLAN_SYMLINK: r = do_symlink(b, op); break;
        case PLAN_DEV: r = dev_build(b->root_fd, b->s, devs, b->err); break;
        case PLAN_PROC: r = do_proc(b, op); break;
        case PLAN_HOLD: r = do_hold(b, op); break;
        case PLAN_FILE: r = do_file(b, op); break;
        case PLAN_COW: r = do_cow(b, i); break;
        case PLAN_NOTE: break;
        }
        if (r < 0)
            return -1;
    }
    return 0;
}

/* 4. Seal: hidden directories, /dev and the root itself become read-only. */
static int seal(const plan *p, root_scratch *s, int root, cordon_error *err)
{
    for (size_t i = 0; i < s->n_later_ro; i++) {
        if (mnt_set_attr(s->later_ro[i], NULL, MOUNT_ATTR_RDONLY, false, err) < 0)
            return -1;
        close(s->later_ro[i]);
    }
    s->n_later_ro = 0;
    if (!p->root_is_host && mnt_set_attr(root, NULL, MOUNT_ATTR_RDONLY, false, err) < 0)
        return err_wrap(err, "making the new root read-only");
    return 0;
}

int root_build(const plan *p, root_scratch *s, cordon_error *err)
{
    /* Nothing done here may propagate back to the host's mount namespace. */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot make the mount namespace private (%s)",
                       "is the kernel refusing mounts "
                       "in user namespaces? see `cordon check`");
    dev_sources devs;
    if (open_sources(p, s, &devs, err) < 0 || open_supervisor_proc(p, s, err) < 0)
        return -1;
    TRACE("sources-open");
    /* 2. A staging tmpfs, then the new root, both attached over /tmp of this private
     * namespace (sources are already open, so what they cover does not matter); the
     * root is pivoted into at the end and the staging mount goes with the old root. */
    _cleanup_fd_ int at = open("/tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (at < 0)
        at = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (at < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot find a place to build the new root");
    _cleanup_fd_ int host_root = -1, stage = -1, priv = -1, root = -1;
    if (open_host_root(p, &host_root, err) < 0 || attach_staging(p, at, &stage, err) < 0 ||
        attach_memory_tmpfs(p, s, at, &priv, err) < 0)
        return -1;
    /* The home of --base host: its overlay, while the host tree is still the root. */
    for (size_t i = 0; i < p->n_ops; i++)
        if (p->ops[i].kind == PLAN_COW && (s->tree_fds[i] = open_cow(&p->ops[i], s, at, err)) < 0)
            return -1;
    if (attach_new_root(p, s, at, &host_root, &root, err) < 0)
        return -1;
    build b = {.p = p, .s = s, .root_fd = root, .stage_fd = stage, .err = err};
    if (apply_plan(&b, &devs) < 0 || do_home_fallback(&b) < 0)
        return -1;
    s->private_fd = -1; /* closed with `priv` */
    TRACE("plan-applied");
    if (seal(p, s, root, err) < 0)
        return -1;
    TRACE("sealed");
    return pivot(root, err);
}

int root_cow_probe(bool under_cordon, char *why, size_t n)
{
    int pidfd = -1;
    uid_t uid = geteuid();
    gid_t gid = getegid();
    pid_t pid = proc_fork(&pidfd);
    if (pid < 0) {
        snprintf(why, n, "cannot start a probe: %s", strerror(errno));
        return 0;
    }
    if (pid == 0) {
        /* a copy of a possibly multi-threaded caller: system calls only */
        cordon_error e = {0};
        if (under_cordon)
            _exit(3); /* refused there, as above */
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 || ns_write_id_maps(uid, gid, &e) < 0)
            _exit(1);
        int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        int m = -1;
        if (fs >= 0 && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
            m = fsmount(fs, FSMOUNT_CLOEXEC, 0);
        _cleanup_fd_ int at = open("/tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (m < 0 || at < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            move_mount(m, "", at, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0 ||
            mkdirat(m, "l", 0755) < 0 || mkdirat(m, "u", 0755) < 0 || mkdirat(m, "w", 0755) < 0)
            _exit(2);
        int l = openat(m, "l", O_PATH | O_DIRECTORY | O_CLOEXEC), u = openat(m, "u", O_PATH | O_DIRECTORY | O_CLOEXEC),
            w = openat(m, "w", O_PATH | O_DIRECTORY | O_CLOEXEC);
        char msg[8];
        _exit(overlay_mount(&l, 1, u, w, 0, msg, sizeof msg) >= 0 ? 0 : 100 + (errno & 0x7f));
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = proc_reap(pidfd, &si);
    close(pidfd);
    if (r < 0 || si.si_code != CLD_EXITED) {
        snprintf(why, n, "the probe did not finish");
        return 0;
    }
    if (si.si_status == 0)
        return 1;
    if (si.si_status == 1)
        snprintf(why, n, "no user namespace");
    else if (si.si_status == 2)
        snprintf(why, n, "no tmpfs in a user namespace");
    else if (si.si_status == 3)
        snprintf(why, n, "inside another cordon sandbox, which refuses kernel overlays");
    else
        snprintf(why, n, "the kernel refuses an overlay in a user namespace: %s", strerror(si.si_status - 100));
    return 0;
}

int root_proc_probe(char *why, size_t n)
{
    int pidfd = -1;
    uid_t uid = geteuid();
    gid_t gid = getegid();
    pid_t pid = proc_fork(&pidfd);
    if (pid < 0) {
        snprintf(why, n, "cannot start a probe: %s", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        /* a copy of a possibly multi-threaded caller: system calls only */
        cordon_error e = {0};
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID) < 0 || ns_write_id_maps(uid, gid, &e) < 0)
            _exit(1);
        pid_t in = fork(); /* the first process of the new PID namespace */
        if (in < 0)
            _exit(1);
        if (in == 0) {
            int m = fresh_procfs();
            _exit(m >= 0 ? 0 : 100 + (errno & 0x7f));
        }
        int st = 0;
        while (waitpid(in, &st, 0) < 0)
            if (errno != EINTR)
                _exit(1);
        _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
    }
    siginfo_t si;
    memset(&si, 0, sizeof si);
    int r = proc_reap(pidfd, &si);
    close(pidfd);
    if (r < 0 || si.si_code != CLD_EXITED) {
        snprintf(why, n, "the probe did not finish");
        return -1;
    }
    if (si.si_status == 0)
        return 1;
    if (si.si_status == 1) {
        snprintf(why, n, "no user or PID namespace");
        return -1;
    }
    int e = si.si_status - 100;
    snprintf(why, n, "the kernel refuses a fresh /proc in a user namespace: %s%s", strerror(e),
             procfs_masked(e) ? " (no fully visible /proc here: a container runtime laid masks over parts of it)" : "");
    return procfs_masked(e) ? 0 : -1;
}
