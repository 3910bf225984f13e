// SPDX-License-Identifier: Apache-2.0
/* The creation control's operations on names (open, mknod, symlink, rename, unlink,
 * link) and the serving of one notification. */
#include "supervise/cc_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>

#include "confine/seccomp.h"
#include "supervise/report.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/trace.h"

/* Clear the O_NONBLOCK the supervisor added to an open of its own. */
static int unblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

/* open(O_TMPFILE): an unnamed file in the directory the path names. */
static int open_tmpfile(cc_state *cc, const call *c, int dirfd, const char *path, int flags, mode_t mode)
{
    pw_result r;
    int e = pw_resolve(&cc->pw, dirfd, path, PW_WHOLE, &r);
    if (e < 0)
        return -e;
    int obj = r.obj_fd;
    struct stat st;
    if (fstat(obj, &st) < 0 || !S_ISDIR(st.st_mode)) {
        pw_result_close(&r);
        return ENOTDIR;
    }
    if (!cc_still_valid(cc, c->id) || (e = cc_with_umask(cc, c->tid)) < 0) {
        pw_result_close(&r);
        return e < 0 ? -e : ENOENT;
    }
    int fd = openat(obj, ".", (flags | O_CLOEXEC), mode);
    e = errno;
    pw_result_close(&r);
    if (fd < 0)
        return e;
    cc_respond_fd(cc, c->id, c->tid, fd, flags & O_CLOEXEC);
    close(fd);
    return -1;
}

/* The walk ended on an object (a magic link of /proc): reopen the file it names, as the
 * kernel does.  Closes r. */
static int open_object(cc_state *cc, const call *c, pw_result *r, int flags)
{
    bool cloexec = flags & O_CLOEXEC;
    int fd = -1, e;
    const char *why = cc_decide_object(cc, r->obj_fd, CC_WRITE);
    if (why) {
        pw_result_close(r);
        return cc_refuse(cc, c, why);
    }
    struct stat st;
    if (fstat(r->obj_fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0)) {
        fd = cc_open_ctty(cc, c->tid, flags);
        pw_result_close(r);
        if (fd < 0)
            return -fd;
    } else {
        char p[48];
        snprintf(p, sizeof p, "self/fd/%d", r->obj_fd);
        if (!cc_still_valid(cc, c->id)) {
            pw_result_close(r);
            return ENOENT;
        }
        fd = openat(cc->pw.proc_fd, p, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_NONBLOCK | O_CLOEXEC);
        e = errno;
        if (fd < 0 && e == EWOULDBLOCK && !(flags & O_NONBLOCK) && S_ISREG(st.st_mode) && !cc->in_worker) {
            /* a lease to break: wait for it in a worker (the descriptor is the
             * worker's too, under the same number) */
            cc_open_in_worker(cc, c->id, c->tid, cc->pw.proc_fd, p, flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW), cloexec,
                              false);
            pw_result_close(r);
            return -1;
        }
        pw_result_close(r);
        if (fd < 0)
            return e;
        if (!(flags & O_NONBLOCK))
            (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK & (O_APPEND | O_ASYNC | O_DIRECT | O_NOATIME));
    }
    cc_respond_fd(cc, c->id, c->tid, fd, cloexec);
    close(fd);
    return -1;
}

/* open(O_CREAT | O_EXCL) of a name that is not there: decided as a creation without
 * asking first whether the name exists (the open's O_EXCL asks the kernel, on the same
 * directory descriptor).  When it does exist, or the creation is refused, 1: the caller
 * decides again knowing that the name exists, as for any other open, so that what is
 * refused and what is logged do not change; it only saves the fstatat of a name that
 * is, for most such opens, new.  Else an errno, or -1 (answered). */
static int open_excl_new(cc_state *cc, const call *c, const pw_result *r, int flags, mode_t mode)
{
    if (cc_decide(cc, r->dir_fd, &r->dir_st, r->name, CC_CREATE))
        return 1;
    int e;
    if (!cc_still_valid(cc, c->id))
        return ENOENT;
    if ((e = cc_with_umask(cc, c->tid)) < 0)
        return -e;
    int fd = openat(r->dir_fd, r->name, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    if (fd < 0)
        return errno == EEXIST ? 1 : errno;
    cc_respond_fd(cc, c->id, c->tid, fd, flags & O_CLOEXEC);
    close(fd);
    return -1;
}

/* Open an existing name or create one, by the walk's result; 0 when it changed under
 * us (walk again).  Closes r. */
static int open_named(cc_state *cc, const call *c, pw_result *r, int flags, mode_t mode, unsigned pwf)
{
    bool cloexec = flags & O_CLOEXEC;
    bool creat = flags & O_CREAT;
    int fd, e;
    struct stat st;
    bool exists = cc_exists_at(r->dir_fd, r->name, &st);
    const char *why = cc_decide(cc, r->dir_fd, &r->dir_st, r->name, exists ? CC_WRITE : CC_CREATE);
    if (why) {
        pw_result_close(r);
        return cc_refuse(cc, c, why);
    }
    if (!cc_still_valid(cc, c->id)) {
        pw_result_close(r);
        return ENOENT;
    }
    if (exists && S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0)) {
        fd = cc_open_ctty(cc, c->tid, flags);
        pw_result_close(r);
        if (fd < 0)
            return -fd;
        cc_respond_fd(cc, c->id, c->tid, fd, cloexec);
        close(fd);
        return -1;
    }
    if ((exists && S_ISFIFO(st.st_mode) && !(flags & O_NONBLOCK)) ||
        (exists && pw_is_procfs(&cc->pw, r->dir_fd, r->dir_st.st_dev) && cc_other_userns(cc, c->tid))) {
        bool userns = !S_ISFIFO(st.st_mode) || (flags & O_NONBLOCK);
        cc_open_in_worker(cc, c->id, c->tid, r->dir_fd, r->name, (flags & ~O_CREAT) | O_NOFOLLOW, cloexec, userns);
        pw_result_close(r);
        return -1;
    }
    int f = flags | O_NOFOLLOW | O_CLOEXEC;
    if (exists && !(flags & O_EXCL))
        f &= ~O_CREAT; /* an existing file: if it goes meanwhile, decide again */
    if (!exists && (e = cc_with_umask(cc, c->tid)) < 0) {
        pw_result_close(r);
        return -e;
    }
    /* an existing file may hold a lease, which an open for writing breaks and then
     * waits for (lease-break-time): never in PID 1, which serves every other call */
    bool nb = exists && S_ISREG(st.st_mode) && !(flags & O_NONBLOCK) && !cc->in_worker;
    fd = openat(r->dir_fd, r->name, nb ? f | O_NONBLOCK : f, mode);
    e = errno;
    if (fd < 0 && nb && e == EWOULDBLOCK) {
        cc_open_in_worker(cc, c->id, c->tid, r->dir_fd, r->name, f & ~O_CREAT, cloexec, false);
        pw_result_close(r);
        return -1;
    }
    if (fd >= 0 && nb && unblock(fd) < 0) {
        e = errno;
        close(fd);
        pw_result_close(r);
        return e;
    }
    pw_result_close(r);
    if (fd < 0)
        return (e == ENOENT && exists && creat) || (e == ELOOP && pwf) ? 0 : e; /* 0: it changed under us */
    cc_respond_fd(cc, c->id, c->tid, fd, cloexec);
    close(fd);
    return -1;
}

static int do_open(cc_state *cc, const call *c, int dirfd, const char *path, int flags, mode_t mode)
{
    bool creat = flags & O_CREAT;
    if ((flags & O_TMPFILE) == O_TMPFILE)
        return open_tmpfile(cc, c, dirfd, path, flags, mode);
    bool excl = creat && (flags & O_EXCL);
    unsigned pwf = ((flags & O_NOFOLLOW) || excl) ? 0 : PW_FOLLOW_LAST;
    for (int attempt = 0; attempt < 4; attempt++) {
        pw_result r;
        int e = pw_resolve(&cc->pw, dirfd, path, pwf, &r);
        if (e < 0)
            return -e;
        if (r.obj_fd >= 0)
            return open_object(cc, c, &r, flags);
        if (r.dot || r.slash) {
            /* a directory (or what must be one), opened for writing or created */
            struct stat st;
            bool dir_exists = r.dot || cc_exists_at(r.dir_fd, r.name, &st);
            pw_result_close(&r);
            return dir_exists || creat ? EISDIR : ENOENT;
        }
        if (excl && (e = open_excl_new(cc, c, &r, flags, mode)) != 1) {
            pw_result_close(&r);
            return e;
        }
        if ((e = open_named(cc, c, &r, flags, mode, pwf)) != 0)
            return e;
    }
    return EAGAIN;
}

/* Resolve a path whose last component is to be created. */
static int resolve_new(cc_state *cc, int dirfd, const char *path, pw_result *r)
{
    int e = pw_resolve(&cc->pw, dirfd, path, 0, r);
    if (e < 0)
        return -e;
    if (r->obj_fd >= 0 || r->dot) {
        pw_result_close(r);
        return EEXIST;
    }
    return 0;
}

static int do_mknod(cc_state *cc, const call *c, int dirfd, const char *path, mode_t mode, dev_t dev, bool dir)
{
    pw_result r;
    int e = resolve_new(cc, dirfd, path, &r);
    if (e)
        return e;
    if (r.slash && !dir) {
        pw_result_close(&r);
        return ENOENT;
    }
    /* decided as a new name without asking first whether it exists (most do not): an
     * existing one fails the call with EEXIST, the kernel's answer, and is never refused
     * (mkdirat and mknodat on the same descriptor make a new name or fail) */
    const char *why = cc_decide(cc, r.dir_fd, &r.dir_st, r.name, CC_CREATE);
    if (!why && !dir && S_ISFIFO(mode))
        why = cc_fifo_hangs_git(cc, r.dir_fd, &r.dir_st, r.name);
    if (why) {
        struct stat st;
        bool exists = cc_exists_at(r.dir_fd, r.name, &st);
        pw_result_close(&r);
        return exists ? EEXIST : cc_refuse(cc, c, why);
    }
    if (!cc_still_valid(cc, c->id) || (e = cc_with_umask(cc, c->tid)) < 0) {
        pw_result_close(&r);
        return e < 0 ? -e : ENOENT;
    }
    int rc = dir ? mkdirat(r.dir_fd, r.name, mode) : mknodat(r.dir_fd, r.name, mode, dev);
    e = errno;
    pw_result_close(&r);
    return rc < 0 ? e : 0;
}

static int do_symlink(cc_state *cc, const call *c, const char *target, int dirfd, const char *path)
{
    pw_result r;
    int e = resolve_new(cc, dirfd, path, &r);
    if (e)
        return e;
    const char *why = r.slash ? NULL : cc_decide(cc, r.dir_fd, &r.dir_st, r.name, CC_CREATE);
    if (why) {
        pw_result_close(&r);
        return cc_refuse(cc, c, why);
    }
    if (!cc_still_valid(cc, c->id)) {
        pw_result_close(&r);
        return ENOENT;
    }
    int rc = r.slash ? (errno = ENOENT, -1) : symlinkat(target, r.dir_fd, r.name);
    e = errno;
    pw_result_close(&r);
    return rc < 0 ? e : 0;
}

static int do_rename(cc_state *cc, const call *c, int odirfd, const char *opath, int ndirfd, const char *npath,
                     unsigned flags)
{
    pw_result o, n;
    int e = pw_resolve(&cc->pw, odirfd, opath, 0, &o);
    if (e < 0)
        return -e;
    if (o.obj_fd >= 0 || o.dot) {
        pw_result_close(&o);
        return EBUSY;
    }
    if ((e = pw_resolve(&cc->pw, ndirfd, npath, 0, &n)) < 0) {
        pw_result_close(&o);
        return -e;
    }
    if (n.obj_fd >= 0 || n.dot) {
        pw_result_close(&o);
        pw_result_close(&n);
        return EBUSY;
    }
    const char *why = cc_decide(cc, n.dir_fd, &n.dir_st, n.name, CC_CREATE);
    if (!why && (flags & (RENAME_EXCHANGE | RENAME_WHITEOUT)))
        why = cc_decide(cc, o.dir_fd, &o.dir_st, o.name, CC_CREATE);
    if (!why && cc->ll_mode) /* the old name goes: its directory must be writable too */
        why = cc_ll_decide(cc, o.dir_fd, &o.dir_st, o.name, true);
    if (!why && (cc_ll_pinned(cc, o.dir_fd, o.name) || cc_ll_pinned(cc, n.dir_fd, n.name))) {
        pw_result_close(&o);
        pw_result_close(&n);
        return EBUSY; /* as the mount point says with namespaces (not a refusal: git tries) */
    }
    if (!why && (flags & RENAME_WHITEOUT) && cc_is_host(cc, o.dir_fd, &o.dir_st))
        why = WHY_WHITEOUT;
    struct stat ost, nst;
    if (!why && cc_exists_at(o.dir_fd, o.name, &ost) && S_ISFIFO(ost.st_mode))
        why = cc_fifo_hangs_git(cc, n.dir_fd, &n.dir_st, n.name);
    if (!why && (flags & RENAME_EXCHANGE) && cc_exists_at(n.dir_fd, n.name, &nst) && S_ISFIFO(nst.st_mode))
        why = cc_fifo_hangs_git(cc, o.dir_fd, &o.dir_st, o.name);
    if (why) {
        pw_result_close(&o);
        pw_result_close(&n);
        return cc_refuse(cc, c, why);
    }
    int rc = -1;
    if (cc_still_valid(cc, c->id))
        rc =
            flags ? renameat2(o.dir_fd, o.name, n.dir_fd, n.name, flags) : renameat(o.dir_fd, o.name, n.dir_fd, n.name);
    else
        errno = ENOENT;
    e = errno;
    pw_result_close(&o);
    pw_result_close(&n);
    return rc < 0 ? e : 0;
}

/* --isolation landlock only (SC_CMD_LANDLOCK): unlink, unlinkat and rmdir, by the
 * rules of the view (ll_decide), then performed here on the directory resolved. */
static int do_unlink(cc_state *cc, const call *c, int dirfd, const char *path, int flags)
{
    if (flags & ~AT_REMOVEDIR)
        return EINVAL;
    if (!cc->ll_mode)
        return ENOSYS; /* never: the filter sends these only in that mode */
    pw_result r;
    int e = pw_resolve(&cc->pw, dirfd, path, 0, &r);
    if (e < 0)
        return -e;
    if (r.obj_fd >= 0 || r.dot) {
        bool obj = r.obj_fd >= 0;
        pw_result_close(&r);
        return obj ? EBUSY : (flags & AT_REMOVEDIR) ? EINVAL : EISDIR;
    }
    struct stat st;
    if (r.slash && !(flags & AT_REMOVEDIR) && cc_exists_at(r.dir_fd, r.name, &st)) {
        pw_result_close(&r);
        return S_ISDIR(st.st_mode) ? EISDIR : ENOTDIR;
    }
    const char *why = cc_ll_decide(cc, r.dir_fd, &r.dir_st, r.name, true);
    if (!why && cc_ll_pinned(cc, r.dir_fd, r.name)) {
        pw_result_close(&r);
        return EBUSY; /* as the mount point says (git removes empty directories up to it) */
    }
    if (why) {
        pw_result_close(&r);
        return cc_refuse(cc, c, why);
    }
    int rc = -1;
    if (cc_still_valid(cc, c->id))
        rc = unlinkat(r.dir_fd, r.name, flags);
    else
        errno = ENOENT;
    e = errno;
    pw_result_close(&r);
    return rc < 0 ? e : 0;
}

static int do_link(cc_state *cc, const call *c, int odirfd, const char *opath, int ndirfd, const char *npath, int flags)
{
    pw_result o = {.dir_fd = -1, .obj_fd = -1}, n;
    int e;
    if ((flags & AT_EMPTY_PATH) && opath[0] == '\0') {
        int fd = pw_thread_fd(&cc->pw, odirfd);
        if (fd < 0)
            return -fd;
        o.obj_fd = fd;
    } else if ((e = pw_resolve(&cc->pw, odirfd, opath, (flags & AT_SYMLINK_FOLLOW) ? PW_FOLLOW_LAST : 0, &o)) < 0) {
        return -e;
    }
    if (o.dot) {
        pw_result_close(&o);
        return EPERM; /* a directory */
    }
    if ((e = resolve_new(cc, ndirfd, npath, &n)) != 0) {
        pw_result_close(&o);
        return e;
    }
    struct stat st;
    bool have = o.obj_fd >= 0 ? fstat(o.obj_fd, &st) == 0 : cc_exists_at(o.dir_fd, o.name, &st);
    const char *why = NULL;
    if (have && S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID)))
        why = "a hard link to a set-user-ID or set-group-ID file would keep it runnable on the host";
    if (!why)
        why = o.obj_fd >= 0 ? cc_decide_object(cc, o.obj_fd, CC_SOURCE)
                            : cc_decide(cc, o.dir_fd, &o.dir_st, o.name, CC_SOURCE);
    if (!why)
        why = cc_decide(cc, n.dir_fd, &n.dir_st, n.name, CC_CREATE);
    if (!why && have && S_ISFIFO(st.st_mode))
        why = cc_fifo_hangs_git(cc, n.dir_fd, &n.dir_st, n.name);
    if (why) {
        pw_result_close(&o);
        pw_result_close(&n);
        return cc_refuse(cc, c, why);
    }
    int rc = -1;
    if (!cc_still_valid(cc, c->id)) {
        errno = ENOENT;
    } else if (o.obj_fd >= 0) {
        char p[48];
        snprintf(p, sizeof p, "self/fd/%d", o.obj_fd);
        rc = linkat(cc->pw.proc_fd, p, n.dir_fd, n.name, AT_SYMLINK_FOLLOW);
    } else {
        rc = linkat(o.dir_fd, o.name, n.dir_fd, n.name, 0);
    }
    e = errno;
    pw_result_close(&o);
    pw_result_close(&n);
    return rc < 0 ? e : 0;
}

/* What supervise/sockets.c needs of the creation control (it calls nothing here). */
static const char *sk_decide_create(void *ctx, int dir, const struct stat *dst, const char *name)
{
    return cc_decide(ctx, dir, dst, name, CC_CREATE);
}

static void sk_refused(void *ctx, const char *what, const char *path, const char *why)
{
    cc_refuse_log(ctx, what, path, why);
}

static pid_t sk_fork_worker(void *ctx, uint64_t id)
{
    return cc_fork_worker(ctx, id);
}

static int serve_socket(cc_state *cc, const call *c, sc_op op, uint32_t arch, long long *val)
{
    sk_host h = {.listener = cc->listener,
                 .pw = &cc->pw,
                 .ctx = cc,
                 .decide_create = sk_decide_create,
                 .refused = sk_refused,
                 .fork_worker = sk_fork_worker};
    sk_call sc = {.id = c->id, .tid = c->tid, .compat = !(arch & __AUDIT_ARCH_64BIT)};
    memcpy(sc.args, c->args, sizeof sc.args);
    int which = op == SC_OP_CONNECT   ? SK_CONNECT
                : op == SC_OP_BIND    ? SK_BIND
                : op == SC_OP_SENDTO  ? SK_SENDTO
                : op == SC_OP_SENDMSG ? SK_SENDMSG
                                      : SK_SENDMMSG;
    return sk_serve(&cc->sk, &h, which, &sc, val);
}

/* Let the kernel do the call (its arguments are in registers, which the thread cannot
 * change any more: nothing was decided on its memory). */
static void respond_continue(cc_state *cc, uint64_t id)
{
    struct seccomp_notif_resp *resp = (struct seccomp_notif_resp *)cc->resp;
    memset(resp, 0, sizeof *resp);
    resp->id = id;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    (void)ioctl(cc->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

/* Does the call work on files (and so may wait on a FUSE server)? */
static bool on_files(sc_op op)
{
    switch (op) {
    case SC_OP_NONE:
    case SC_OP_PRCTL:
    case SC_OP_FSOPEN:
    case SC_OP_MOUNT:
    case SC_OP_UMASK:
    case SC_OP_NEWROOT: return false;
    default: return true;
    }
}

/* Read the paths the call names, once: the decision and the act use these copies. */
static int read_paths(const call *c, const cc_req *rq, char *p1, char *p2)
{
    int e;
    if (rq->path_arg >= 0 && (e = cc_read_string(c->tid, rq->path_addr, p1, PW_PATH_MAX)) < 0)
        return -e;
    if (rq->path2_arg >= 0 && (e = cc_read_string(c->tid, rq->path2_addr, p2, PW_PATH_MAX)) < 0)
        return -e;
    return 0;
}

/* Perform a decoded file call (kinds CC_K_OPEN to CC_K_META): its paths read, then the
 * operation of its kind.  An errno, 0 (answered with val 0) or -1 (answered already). */
static int perform_file_call(cc_state *cc, call *c, const cc_req *rq)
{
    char *p1 = cc->path1, *p2 = cc->path2;
    int err = read_paths(c, rq, p1, p2);
    if (err)
        return err;
    c->what = rq->what;
    c->path = rq->path2_arg >= 0 ? p2 : rq->path_arg >= 0 ? p1 : "";
    switch (rq->kind) {
    case CC_K_OPEN: return do_open(cc, c, rq->dirfd, p1, rq->flags, rq->mode);
    case CC_K_MKNOD: return do_mknod(cc, c, rq->dirfd, p1, rq->mode, rq->dev, rq->dir);
    case CC_K_RENAME: return do_rename(cc, c, rq->dirfd, p1, rq->dirfd2, p2, (unsigned)rq->flags);
    case CC_K_LINK: return do_link(cc, c, rq->dirfd, p1, rq->dirfd2, p2, rq->flags);
    case CC_K_UNLINK: return do_unlink(cc, c, rq->dirfd, p1, rq->flags);
    case CC_K_SYMLINK: return do_symlink(cc, c, p1, rq->dirfd2, p2);
    case CC_K_META: {
        const char *path = rq->path_arg < 0 || (rq->empty_is_self && p1[0] == '\0') ? NULL : p1;
        return cc_do_meta(cc, c, rq->dirfd, path, rq->follow, &rq->meta);
    }
    default: return ENOSYS;
    }
}

void cc_serve_one(cc_state *cc)
{
#ifdef CORDON_TRACE_TIMING
    long long t0 = trace_us();
#endif
    struct seccomp_notif *req = (struct seccomp_notif *)cc->req;
    memset(cc->req, 0, sizeof cc->req);
    if (ioctl(cc->listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
        return; /* EINTR, or ENOENT: the thread is gone already */
    call c = {.id = req->id, .tid = (pid_t)req->pid, .arch = req->data.arch, .path = ""};
    memcpy(c.args, req->data.args, sizeof c.args);
    sc_op op = seccomp_notify_op(req->data.arch, req->data.nr);
    cc_req rq;
    cc_decode(op, c.arch, c.args, &rq);
    pw_begin(&cc->pw, c.tid);
    cc->tid = c.tid;
    if (cc->fuse_made && !cc->in_worker && on_files(op)) {
        pid_t w = cc_fork_worker(cc, c.id);
        if (w != 0) {
            pw_end(&cc->pw);
            if (w < 0)
                cc_respond(cc, c.id, 0, -w);
            return; /* the worker answers */
        }
        cc->in_worker = true;
    }
    int err = rq.error;
    long long val = 0;
    if (!err) {
        switch (rq.kind) {
        case CC_K_PRCTL: err = cc_do_prctl(cc, &c, &val); break;
        case CC_K_NEWFS:
            c.what = rq.what;
            err = cc_do_new_fs(cc, &c, op == SC_OP_FSOPEN);
            break;
        case CC_K_THREAD:
            /* what the supervisor remembers of the thread changes; the call itself is the
             * kernel's (its arguments decide nothing here) */
            pw_thread_changed(&cc->pw, c.tid, op == SC_OP_UMASK ? (int)(c.args[0] & 0777) : -1);
            pw_end(&cc->pw);
            respond_continue(cc, c.id);
            return;
        case CC_K_SOCKET: err = serve_socket(cc, &c, op, req->data.arch, &val); break;
        default: err = perform_file_call(cc, &c, &rq); break;
        }
    }
    pw_end(&cc->pw);
    umask(077);
    if (err >= 0)
        cc_respond(cc, c.id, val, err);
    if (cc->in_worker)
        _exit(0);
#ifdef CORDON_TRACE_TIMING
    cc->trace_calls++;
    cc->trace_us += trace_us() - t0;
#endif
}
