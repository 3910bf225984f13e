// SPDX-License-Identifier: Apache-2.0
/* The creation control's changes of mode, owner and length, new file systems in the
 * command's namespaces, and a nested cordon's protections. */
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

/* ------------------------------------------------------------------------------------ */
/* mode, owner and length: chmod, chown and truncate of an existing file */

/* The decision on a directory object: a guarded directory, or the hooks of one, keeps
 * its mode and owner (a group- or world-writable .git lets another user change hooks). */
static const char *decide_dir_meta(cc_state *cc, int obj, const struct stat *st)
{
    if (!S_ISDIR(st->st_mode) || !cc_is_host(cc, obj, st) || cc_lifted(cc, st))
        return NULL;
    if (cc_guarded(cc, obj, st) || cc_is_hooks_dir(cc, obj, st))
        return WHY_GIT_DIR;
    return NULL;
}

static int meta_perform(cc_state *cc, int obj, const struct stat *st, const meta_req *m)
{
    char p[48];
    snprintf(p, sizeof p, "self/fd/%d", obj);
    switch (m->kind) {
    case META_CHMOD:
        if (S_ISLNK(st->st_mode))
            return EOPNOTSUPP; /* as fchmodat2(AT_SYMLINK_NOFOLLOW) on a symlink */
        return fchmodat(cc->pw.proc_fd, p, m->mode, 0) < 0 ? errno : 0;
    case META_CHOWN: return fchownat(obj, "", m->uid, m->gid, AT_EMPTY_PATH) < 0 ? errno : 0;
    case META_TRUNCATE: {
        if (S_ISDIR(st->st_mode))
            return EISDIR;
        if (!S_ISREG(st->st_mode))
            return EINVAL;
        if (m->len < 0)
            return EINVAL;
        /* a lease on the file is broken by the open and waited for: in a worker */
        _cleanup_fd_ int fd =
            openat(cc->pw.proc_fd, p, O_WRONLY | O_NOCTTY | O_CLOEXEC | (cc->in_worker ? 0 : O_NONBLOCK));
        if (fd < 0)
            return errno == EWOULDBLOCK && !cc->in_worker ? -EWOULDBLOCK : errno;
        return ftruncate(fd, m->len) < 0 ? errno : 0;
    }
    }
    return EINVAL;
}

/* chmod, chown or truncate of `path` relative to `dirfd` (path NULL: of the thread's
 * descriptor dirfd itself), deciding on the name the file has in the thread's view and,
 * for a directory, on the directory itself; performed on a descriptor of the object. */
int cc_do_meta(cc_state *cc, const call *c, int dirfd, const char *path, bool follow, const meta_req *m)
{
    _cleanup_fd_ int obj = -1;
    const char *why = NULL;
    if (!path) {
        obj = pw_thread_fd(&cc->pw, dirfd);
        if (obj < 0)
            return -obj;
        why = cc_decide_object(cc, obj, CC_WRITE);
    } else {
        pw_result r;
        int e = pw_resolve(&cc->pw, dirfd, path, follow ? PW_FOLLOW_LAST : 0, &r);
        if (e < 0)
            return -e;
        if (r.obj_fd >= 0 || r.dot) {
            obj = fcntl(r.obj_fd >= 0 ? r.obj_fd : r.dir_fd, F_DUPFD_CLOEXEC, 3);
            e = errno;
            pw_result_close(&r);
            if (obj < 0)
                return e;
            why = cc_decide_object(cc, obj, CC_WRITE);
        } else {
            struct stat named, got;
            if (fstatat(r.dir_fd, r.name, &named, AT_SYMLINK_NOFOLLOW) < 0) {
                e = errno;
                pw_result_close(&r);
                return e;
            }
            if (r.slash && !S_ISDIR(named.st_mode)) {
                pw_result_close(&r);
                return ENOTDIR;
            }
            why = cc_decide(cc, r.dir_fd, &r.dir_st, r.name, CC_WRITE);
            obj = openat(r.dir_fd, r.name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
            e = errno;
            pw_result_close(&r);
            if (obj < 0)
                return e;
            if (fstat(obj, &got) < 0 || got.st_dev != named.st_dev || got.st_ino != named.st_ino)
                return EAGAIN; /* it changed under us */
        }
    }
    struct stat st;
    if (fstat(obj, &st) < 0)
        return errno;
    if (!why && m->kind != META_TRUNCATE)
        why = decide_dir_meta(cc, obj, &st);
    if (why)
        return cc_refuse(cc, c, why);
    if (!cc_still_valid(cc, c->id))
        return ENOENT;
    int e = meta_perform(cc, obj, &st, m);
    if (e != -EWOULDBLOCK)
        return e;
    pid_t w = cc_fork_worker(cc, c->id); /* a lease to wait for */
    if (w != 0)
        return w < 0 ? -w : -1;
    cc->in_worker = true;
    cc_respond(cc, c->id, 0, meta_perform(cc, obj, &st, m));
    _exit(0);
}

/* ------------------------------------------------------------------------------------ */
/* new file systems in the command's own namespaces */

/* Not sysfs: its files are the kernel's global settings, owned by the host's root and
 * checked against that uid alone, so a caller that is root would have them writable
 * through a read-write sysfs of a nested network namespace wherever the kernel finds a
 * sysfs mount it deems fully visible and not locked read-only (a container whose /sys
 * is a sysfs of its own, as systemd-nspawn's with a private network).  Nothing nested
 * needs one: runc and Podman bind /sys where the mount is refused, cordon binds it. */
static bool fs_type_allowed(const char *t)
{
    static const char *const ok[] = {"tmpfs",  "ramfs",   "proc", "devpts",  "mqueue",
                                     "cgroup", "cgroup2", "fuse", "fuseblk", "binfmt_misc"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (strcmp(t, ok[i]) == 0)
            return true;
    return strncmp(t, "fuse.", 5) == 0;
}

/* Does the thread hold CAP_SYS_ADMIN (in its own user namespace)? */
static bool thread_has_sys_admin(cc_state *cc, pid_t tid)
{
    char p[48];
    snprintf(p, sizeof p, "%d/status", (int)pw_proc_id(&cc->pw, tid));
    _cleanup_fd_ int fd = openat(cc->pw.proc_fd, p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, cc->status, sizeof cc->status - 1);
    if (n <= 0)
        return false;
    cc->status[n] = '\0';
    const char *c = strstr(cc->status, "CapEff:");
    return c && (strtoull(c + 7, NULL, 16) & (1ULL << 21 /* CAP_SYS_ADMIN */));
}

typedef struct ns_fds {
    int fd[8];
} ns_fds;

static const struct {
    const char *name;
    int type;
} ns_kinds[] = {
    {"user", CLONE_NEWUSER}, {"mnt", CLONE_NEWNS},        {"ipc", CLONE_NEWIPC}, {"net", CLONE_NEWNET},
    {"uts", CLONE_NEWUTS},   {"cgroup", CLONE_NEWCGROUP}, {"pid", CLONE_NEWPID},
};
#define N_NS (sizeof ns_kinds / sizeof ns_kinds[0])

/* In the worker: enter the thread's namespaces (the user namespace first, which the
 * supervisor's uid owns, giving the capabilities the others ask for), and its root and
 * working directory; the PID namespace only takes effect for children. */
static int enter_thread(cc_state *cc, pid_t tid)
{
    char p[64];
    int fds[N_NS];
    bool same[N_NS];
    /* every descriptor first: entering the user namespace changes the credentials */
    pw_ptrace_cap(true);
    for (size_t i = 0; i < N_NS; i++) {
        snprintf(p, sizeof p, "%d/ns/%s", (int)pw_proc_id(&cc->pw, tid), ns_kinds[i].name);
        fds[i] = openat(cc->pw.proc_fd, p, O_RDONLY | O_CLOEXEC);
        struct stat theirs, mine;
        snprintf(p, sizeof p, "self/ns/%s", ns_kinds[i].name);
        same[i] = fds[i] >= 0 && fstat(fds[i], &theirs) == 0 && fstatat(cc->pw.proc_fd, p, &mine, 0) == 0 &&
                  theirs.st_ino == mine.st_ino && theirs.st_dev == mine.st_dev;
    }
    pw_ptrace_cap(false);
    int r = 0;
    for (size_t i = 0; i < N_NS && r == 0; i++) {
        if (fds[i] < 0)
            r = -EPERM;
        else if (!same[i] && setns(fds[i], ns_kinds[i].type) < 0)
            r = -errno;
    }
    for (size_t i = 0; i < N_NS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return r;
}

static int enter_root_cwd(int root, int cwd)
{
    if (fchdir(root) < 0 || chroot(".") < 0 || fchdir(cwd) < 0)
        return -errno;
    return 0;
}

/* fsopen(2) and mount(2) of a new file system: in a worker that has entered the thread's
 * namespaces, root and working directory, with the type read once (an allowed one). */
int cc_do_new_fs(cc_state *cc, const call *c, bool is_fsopen)
{
    char *type = cc->path1, *target = cc->path2;
    int e = cc_read_string(c->tid, is_fsopen ? c->args[0] : c->args[2], type, PW_PATH_MAX);
    if (e < 0)
        return -e;
    call logged = *c; /* the path logged is the type */
    logged.path = type;
    if (!fs_type_allowed(type))
        return cc_refuse(cc, &logged, strcmp(type, "sysfs") == 0 ? WHY_SYSFS : WHY_FS_TYPE);
    if (!thread_has_sys_admin(cc, c->tid))
        return EPERM;
    if (strncmp(type, "fuse", 4) == 0)
        cc->fuse_made = true; /* before the worker that makes it: see cc_state */
    char *source = NULL, *data = NULL;
    if (!is_fsopen) {
        if ((e = cc_read_string(c->tid, c->args[1], target, PW_PATH_MAX)) < 0)
            return -e;
        if (c->args[0] && cc_read_string(c->tid, c->args[0], cc->pw.link, sizeof cc->pw.link) == 0)
            source = cc->pw.link;
        if (c->args[4] && cc_read_string(c->tid, c->args[4], cc->status, sizeof cc->status) == 0)
            data = cc->status;
    }
    /* A proc of a nested namespace, for a caller that is the host's root: only its
     * processes (subset=pid), none of /proc/sys or /proc/sysrq-trigger, whose files are
     * checked against the host's root uid alone.  The kernel refuses a nested proc where
     * cordon's /proc is the only one (it keeps those files read-only over it, so none is
     * fully visible), but allows it read-write where the mount namespace still holds a
     * fully visible /proc out of sight (systemd-nspawn enters its container by moving
     * its root over / and chroot, leaving the host's mounts beneath). */
    bool host_root = geteuid() == 0; /* PID 1's ids are the caller's (sandbox/ns.c) */
    int root = -1, cwd = -1;
    char p[64];
    snprintf(p, sizeof p, "%d/root", (int)pw_proc_id(&cc->pw, c->tid));
    pw_ptrace_cap(true);
    root = openat(cc->pw.proc_fd, p, O_PATH | O_DIRECTORY | O_CLOEXEC);
    snprintf(p, sizeof p, "%d/cwd", (int)pw_proc_id(&cc->pw, c->tid));
    cwd = openat(cc->pw.proc_fd, p, O_PATH | O_DIRECTORY | O_CLOEXEC);
    pw_ptrace_cap(false);
    if (root < 0 || cwd < 0 || !cc_still_valid(cc, c->id)) {
        e = root < 0 || cwd < 0 ? errno : ESRCH;
        if (root >= 0)
            close(root);
        if (cwd >= 0)
            close(cwd);
        return e;
    }
    pid_t w = cc_fork_worker(cc, c->id);
    if (w != 0) {
        close(root);
        close(cwd);
        return w < 0 ? -w : -1; /* the worker answers */
    }
    /* the worker */
    if ((e = enter_thread(cc, c->tid)) < 0) {
        cc_respond(cc, c->id, 0, -e);
        _exit(0);
    }
    pid_t w2 = fork(); /* in the thread's PID namespace (proc's instance depends on it) */
    if (w2 < 0) {
        cc_respond(cc, c->id, 0, errno);
        _exit(0);
    }
    if (w2 > 0) {
        /* a mount is answered here, once w2 is gone: the thread must not see it in its
         * PID namespace's /proc (fsopen's descriptor can only be handed over by w2) */
        int st = 0;
        while (waitpid(w2, &st, 0) < 0 && errno == EINTR)
            ;
        if (!is_fsopen)
            cc_respond(cc, c->id, 0, WIFEXITED(st) ? WEXITSTATUS(st) : EIO);
        _exit(0);
    }
    if ((e = enter_root_cwd(root, cwd)) < 0) {
        if (is_fsopen)
            cc_respond(cc, c->id, 0, -e);
        _exit(is_fsopen ? 0 : -e);
    }
    bool pids_only = strcmp(type, "proc") == 0 && host_root;
    if (is_fsopen) {
        int fd = fsopen(type, (unsigned)c->args[1] | FSOPEN_CLOEXEC);
        if (fd >= 0 && pids_only && fsconfig(fd, FSCONFIG_SET_STRING, "subset", "pid", 0) < 0) {
            cc_respond(cc, c->id, 0, EPERM); /* no subset=pid (Linux 5.8): no proc */
            _exit(0);
        }
        if (fd < 0)
            cc_respond(cc, c->id, 0, errno);
        else
            cc_respond_fd(cc, c->id, c->tid, fd, (unsigned)c->args[1] & FSOPEN_CLOEXEC);
        _exit(0);
    }
    if (pids_only) {
        /* the caller's own options, then subset=pid, which no later option or
         * reconfiguration undoes (the mount fails on a kernel without it) */
        char *opts = cc->path1; /* the type, read into it, is no longer needed */
        int n = snprintf(opts, PW_PATH_MAX, "%s%ssubset=pid", data ? data : "", data && *data ? "," : "");
        if (n < 0 || n >= PW_PATH_MAX)
            _exit(E2BIG);
        data = opts;
        type = (char *)"proc";
    }
    int r = mount(source, target, type, (unsigned long)c->args[3], data);
    _exit(r < 0 ? (errno > 0 && errno < 256 ? errno : EIO) : 0);
}

/* A nested cordon's request. */
int cc_do_prctl(cc_state *cc, const call *c, long long *val)
{
    unsigned long req = c->args[1];
    if (req == CC_PRCTL_HELLO) {
        *val = CC_PRCTL_HELLO_OK;
        return 0;
    }
    if (req != CC_PRCTL_ADD)
        return EINVAL;
    size_t len = c->args[3];
    if (len == 0 || len % sizeof(cc_wire) != 0 || len > sizeof cc->wire)
        return EINVAL;
    if (cc_read_mem(c->tid, c->args[2], cc->wire, len) < 0)
        return EFAULT;
    for (size_t i = 0; i < len / sizeof(cc_wire); i++) {
        cc_wire *w = &cc->wire[i];
        w->name[PW_NAME_MAX - 1] = '\0';
        int rc = 0;
        if (w->kind == CC_WIRE_NAME && w->name[0] && !strchr(w->name, '/'))
            rc = cc_add_rule(cc, (dev_t)w->dev, (ino_t)w->ino, w->name, "protected by a cordon inside this sandbox");
        else if (w->kind == CC_WIRE_DEV)
            rc = cc_add_dev(cc, (dev_t)w->dev);
        else
            return EINVAL;
        if (rc < 0)
            return ENOSPC;
    }
    *val = 0;
    return 0;
}
