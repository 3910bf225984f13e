// SPDX-License-Identifier: Apache-2.0
#include "supervise/pathwalk.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define PW_MAX_LINKS  40 /* as the kernel (MAXSYMLINKS) */
#define PROC_ROOT_INO 1

static void close_if(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

void pw_ptrace_cap(bool on)
{
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    d[0].permitted = 1u << CAP_SYS_PTRACE;
    d[0].effective = on ? 1u << CAP_SYS_PTRACE : 0;
    /* Fails when the supervisor does not hold it (--isolation landlock as a user): the
     * read is then tried without, and fails as the kernel decides. */
    (void)syscall(SYS_capset, &h, d);
}

static int mnt_ino(int fd, uint64_t *mnt, ino_t *ino);

int pw_init(pw_ctx *c, int proc_fd)
{
    c->proc_fd = proc_fd;
    c->proc_foreign = false;
    c->n_fs = 0;
    c->next_evict = 0;
    c->cur = NULL;
    for (unsigned i = 0; i < PW_THREADS; i++)
        c->threads[i] = (pw_thread){.pidfd = -1, .ptid = -1, .umask = -1, .root_same = -1};
    c->root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (c->root_fd < 0)
        return -errno;
    return mnt_ino(c->root_fd, &c->root_mnt, &c->root_ino);
}

static void forget(pw_thread *t)
{
    if (t->pidfd >= 0)
        close(t->pidfd);
    *t = (pw_thread){.pidfd = -1, .umask = -1, .root_same = -1};
}

/* Is the entry's thread still the one it was made for? */
static bool alive(const pw_thread *t)
{
    struct pollfd p = {.fd = t->pidfd, .events = POLLIN};
    return poll(&p, 1, 0) == 0;
}

static int read_status(int dirfd, const char *path, char *buf, size_t size);

/* The id of pidfd's process in proc_fd's PID namespace: the "Pid:" of its fdinfo read
 * through that procfs (the kernel prints it in the namespace of the procfs it is read
 * through); -1 when it cannot be told. */
static pid_t id_in_procfs(int proc_fd, int pidfd)
{
    char p[48], text[1024];
    snprintf(p, sizeof p, "self/fdinfo/%d", pidfd);
    if (read_status(proc_fd, p, text, sizeof text) < 0)
        return -1;
    const char *f = strstr(text, "\nPid:");
    if (!f)
        return -1;
    char *end;
    long id = strtol(f + 5, &end, 10);
    return id > 0 && (*end == '\n' || *end == '\0') ? (pid_t)id : -1;
}

/* tid's id in proc_fd, without a pidfd of the thread kept: a kernel before 6.9 has no
 * PIDFD_THREAD, and a pidfd of a thread group's leader names the thread itself only
 * when it is the leader; another thread stays unnamed (-1). */
static pid_t id_without_thread_pidfd(const pw_ctx *c, pid_t tid)
{
    int fd = (int)syscall(SYS_pidfd_open, tid, 0);
    if (fd < 0)
        return -1;
    pid_t id = id_in_procfs(c->proc_fd, fd);
    close(fd);
    return id;
}

pid_t pw_proc_id(const pw_ctx *c, pid_t tid)
{
    if (!c->proc_foreign)
        return tid;
    return tid == c->t.tid ? c->t.ptid : -1;
}

void pw_begin(pw_ctx *c, pid_t tid)
{
    c->t = (pw_target){.tid = tid, .ptid = c->proc_foreign ? -1 : tid, .root_fd = -1, .cwd_fd = -1};
    c->cur = NULL;
    for (unsigned i = 0; i < PW_THREADS; i++) {
        pw_thread *t = &c->threads[i];
        if (t->pidfd >= 0 && t->tid == tid) {
            if (alive(t)) {
                c->cur = t;
                c->t.ptid = c->proc_foreign ? t->ptid : tid;
                return;
            }
            forget(t); /* gone: the id may name another thread now */
        }
    }
    /* a new entry, with a pidfd of the thread itself (PIDFD_THREAD, Linux 6.9) */
    int fd = (int)syscall(SYS_pidfd_open, tid, O_EXCL /* PIDFD_THREAD */);
    if (fd < 0) {
        if (c->proc_foreign)
            c->t.ptid = id_without_thread_pidfd(c, tid);
        return; /* nothing remembered: every fact is read again */
    }
    pid_t ptid = c->proc_foreign ? id_in_procfs(c->proc_fd, fd) : tid;
    c->t.ptid = ptid;
    pw_thread *t = NULL;
    for (unsigned i = 0; i < PW_THREADS && !t; i++)
        if (c->threads[i].pidfd < 0)
            t = &c->threads[i];
    if (!t) {
        t = &c->threads[c->next_evict];
        c->next_evict = (c->next_evict + 1) % PW_THREADS;
        forget(t);
    }
    *t = (pw_thread){.tid = tid, .tgid = 0, .ptid = ptid, .pidfd = fd, .umask = -1, .root_same = -1};
    c->cur = t;
}

int pw_umask(pw_ctx *c)
{
    if (c->cur && c->cur->umask >= 0)
        return c->cur->umask;
    char p[48], text[2048];
    snprintf(p, sizeof p, "%d/status", (int)c->t.ptid);
    int r = read_status(c->proc_fd, p, text, sizeof text);
    if (r < 0)
        return r;
    const char *u = strstr(text, "\nUmask:"), *g = strstr(text, "\nTgid:");
    if (!u || !g)
        return -EINVAL;
    int mask = (int)(strtoul(u + 7, NULL, 8) & 0777);
    if (c->cur) {
        c->cur->umask = mask;
        c->cur->tgid = (pid_t)strtol(g + 6, NULL, 10);
    }
    return mask;
}

void pw_thread_changed(pw_ctx *c, pid_t tid, int mask)
{
    pid_t tgid = 0;
    for (unsigned i = 0; i < PW_THREADS; i++)
        if (c->threads[i].pidfd >= 0 && c->threads[i].tid == tid)
            tgid = c->threads[i].tgid;
    for (unsigned i = 0; i < PW_THREADS; i++) {
        pw_thread *t = &c->threads[i];
        if (t->pidfd < 0 || !(t->tid == tid || (tgid && t->tgid == tgid)))
            continue;
        if (mask >= 0 && t->tid != tid && t->umask < 0)
            continue;
        if (mask >= 0)
            t->umask = mask & 0777; /* umask(2) changes the thread group's (CLONE_FS) */
        else
            t->root_same = -1, t->umask = -1;
    }
}

void pw_end(pw_ctx *c)
{
    close_if(&c->t.root_fd);
    close_if(&c->t.cwd_fd);
}

void pw_result_close(pw_result *r)
{
    close_if(&r->dir_fd);
    close_if(&r->obj_fd);
}

/* openat(proc, "TID/what"), with CAP_SYS_PTRACE for a thread that made itself
 * non-dumpable: its own /proc entries are always the thread's to use. */
static int proc_open_tid(pw_ctx *c, const char *what, int flags)
{
    char p[64];
    snprintf(p, sizeof p, "%d/%s", (int)c->t.ptid, what);
    int fd = openat(c->proc_fd, p, flags | O_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM)) {
        pw_ptrace_cap(true);
        fd = openat(c->proc_fd, p, flags | O_CLOEXEC);
        int e = errno;
        pw_ptrace_cap(false);
        errno = e;
    }
    return fd < 0 ? -errno : fd;
}

static int mnt_ino(int fd, uint64_t *mnt, ino_t *ino)
{
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, &sx) < 0)
        return -errno;
    *mnt = sx.stx_mnt_id;
    *ino = (ino_t)sx.stx_ino;
    return 0;
}

static int target_root(pw_ctx *c)
{
    if (c->t.root_fd >= 0)
        return c->t.root_fd;
    int fd = proc_open_tid(c, "root", O_PATH | O_DIRECTORY);
    if (fd < 0)
        return fd == -ENOENT ? -ESRCH : fd;
    int r = mnt_ino(fd, &c->t.root_mnt, &c->t.root_ino);
    if (r < 0) {
        close(fd);
        return r;
    }
    c->t.root_fd = fd;
    return fd;
}

static int target_cwd(pw_ctx *c)
{
    if (c->t.cwd_fd >= 0)
        return c->t.cwd_fd;
    int fd = proc_open_tid(c, "cwd", O_PATH | O_DIRECTORY);
    if (fd < 0)
        return fd == -ENOENT ? -ESRCH : fd;
    c->t.cwd_fd = fd;
    return fd;
}

int pw_thread_fd(pw_ctx *c, int fd)
{
    if (fd < 0)
        return -EBADF;
    char what[32];
    snprintf(what, sizeof what, "fd/%d", fd);
    int r = proc_open_tid(c, what, O_PATH);
    return r == -ENOENT ? -EBADF : r;
}

bool pw_is_procfs(pw_ctx *c, int fd, dev_t dev)
{
    for (unsigned i = 0; i < c->n_fs; i++)
        if (c->fs[i].dev == dev)
            return c->fs[i].proc;
    struct statfs sf;
    bool proc = fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
    if (c->n_fs < sizeof c->fs / sizeof c->fs[0])
        c->fs[c->n_fs++] = (__typeof__(c->fs[0])){.dev = dev, .proc = proc};
    return proc;
}

static int dup_fd(int fd)
{
    int d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    return d < 0 ? -errno : d;
}

/* Read "Key:\tN\tN..." from a status file into ids (at most max); returns the count. */
static int status_ids(const char *text, const char *key, long *ids, int max)
{
    const char *k = strstr(text, key);
    if (!k)
        return 0;
    k += strlen(key);
    int n = 0;
    while (n < max) {
        while (*k == ' ' || *k == '\t')
            k++;
        if (*k < '0' || *k > '9')
            break;
        ids[n++] = strtol(k, (char **)&k, 10);
    }
    return n;
}

static int read_status(int dirfd, const char *path, char *buf, size_t size)
{
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, buf, size - 1);
    int e = errno;
    close(fd);
    if (n < 0)
        return -e;
    buf[n] = '\0';
    return 0;
}

/* The PID namespace of the process `pid` of the procfs `dirfd` (its ns/pid link). */
static int pidns_of(int dirfd, const char *pid, struct stat *st)
{
    char p[96];
    snprintf(p, sizeof p, "%s/ns/pid", pid);
    if (fstatat(dirfd, p, st, 0) == 0)
        return 0;
    pw_ptrace_cap(true);
    int r = fstatat(dirfd, p, st, 0);
    pw_ptrace_cap(false);
    return r;
}

/* What "self" (or "thread-self") in the procfs whose root is `procroot` means for the
 * thread: its ids in that procfs's PID namespace.  The candidates are the thread's ids
 * at each level (NStgid); the one that names the thread there is the one whose innermost
 * id and PID namespace are the thread's (two processes of one namespace never share an
 * id in it). */
static int self_name(pw_ctx *c, int procroot, bool thread, char *out, size_t size)
{
    char mine[2048], theirs[2048], p[64];
    snprintf(p, sizeof p, "%d/status", (int)c->t.ptid);
    int r = read_status(c->proc_fd, p, mine, sizeof mine);
    if (r < 0)
        return r;
    long tg[32], tp[32];
    int ntg = status_ids(mine, "\nNStgid:", tg, 32), ntp = status_ids(mine, "\nNSpid:", tp, 32);
    if (ntg == 0 || ntg != ntp)
        return -ENOENT;
    snprintf(p, sizeof p, "%d", (int)c->t.ptid);
    struct stat ns_mine;
    if (pidns_of(c->proc_fd, p, &ns_mine) < 0)
        return -errno;
    for (int k = ntg - 1; k >= 0; k--) {
        snprintf(p, sizeof p, "%ld/status", tg[k]);
        if (read_status(procroot, p, theirs, sizeof theirs) < 0)
            continue;
        long cand[32];
        int nc = status_ids(theirs, "\nNStgid:", cand, 32);
        if (nc == 0 || cand[nc - 1] != tg[ntg - 1])
            continue;
        snprintf(p, sizeof p, "%ld", tg[k]);
        struct stat ns_theirs;
        if (pidns_of(procroot, p, &ns_theirs) < 0 || ns_theirs.st_dev != ns_mine.st_dev ||
            ns_theirs.st_ino != ns_mine.st_ino)
            continue;
        if (thread)
            snprintf(out, size, "%ld/task/%ld", tg[k], tp[k]);
        else
            snprintf(out, size, "%ld", tg[k]);
        return 0;
    }
    return -ENOENT; /* the thread is not in that procfs's namespace: as the kernel says */
}

/* Replace the component at [p, p+n) of c->buf by `with` and continue from the start
 * of the buffer; the rest of the path (from p+n, its slashes included) is kept. */
static int path_splice(pw_ctx *c, char **p, size_t n, const char *with, size_t wlen)
{
    char *rest = *p + n;
    size_t rlen = strlen(rest);
    if (wlen + rlen >= PW_PATH_MAX)
        return -ENAMETOOLONG;
    memmove(c->buf + wlen, rest, rlen + 1);
    memmove(c->buf, with, wlen);
    *p = c->buf;
    return 0;
}

static int dotdot(pw_ctx *c, int *cur)
{
    int root = target_root(c);
    if (root < 0)
        return root;
    uint64_t m = 0;
    ino_t i = 0;
    int r = mnt_ino(*cur, &m, &i);
    if (r < 0)
        return r;
    if (m == c->t.root_mnt && i == c->t.root_ino)
        return 0; /* ".." of the root is the root */
    int up = openat(*cur, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (up < 0)
        return -errno;
    close(*cur);
    *cur = up;
    return 0;
}

/* Does the thread have the supervisor's root (and so the same "/" and ".." clamp)? */
static bool root_is_mine(pw_ctx *c)
{
    if (c->cur && c->cur->root_same >= 0)
        return c->cur->root_same == 1;
    char p[48];
    snprintf(p, sizeof p, "%d/root", (int)c->t.ptid);
    struct statx sx;
    bool same = statx(c->proc_fd, p, AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, &sx) == 0 &&
                (sx.stx_mask & STATX_MNT_ID) && sx.stx_mnt_id == c->root_mnt && (ino_t)sx.stx_ino == c->root_ino;
    if (c->cur)
        c->cur->root_same = same;
    return same;
}

/* The common case in one system call: the thread has the supervisor's root, so the
 * kernel resolves the directory part for it exactly as it would for the thread, as long
 * as no magic link is crossed (RESOLVE_NO_MAGICLINKS: ELOOP) and the directory is not in
 * a procfs ("self" would be the supervisor).  1 when done, 0 when the walk must do it
 * (also whenever the kernel fails: its error may be the supervisor's), or -errno. */
static int fast_resolve(pw_ctx *c, int dirfd, const char *path, size_t len, unsigned flags, pw_result *out)
{
    if (flags & PW_WHOLE)
        return 0;
    const char *slash = memrchr(path, '/', len);
    while (slash && slash > path && slash[-1] == '/')
        slash--;
    const char *last = slash ? slash + 1 : path;
    size_t ln = len - (size_t)(last - path);
    if (ln == 0 || ln >= PW_NAME_MAX || memchr(last, '/', ln) || strcmp(last, ".") == 0 || strcmp(last, "..") == 0)
        return 0; /* trailing slashes, dots: the walk knows them */
    if (!root_is_mine(c))
        return 0;
    int start, own = -1;
    if (path[0] == '/')
        start = c->root_fd;
    else if (dirfd == AT_FDCWD)
        start = target_cwd(c);
    else {
        start = own = pw_thread_fd(c, dirfd);
        struct stat st;
        if (own >= 0 && (fstat(own, &st) < 0 || !S_ISDIR(st.st_mode))) {
            close(own);
            return -ENOTDIR;
        }
    }
    if (start < 0)
        return start;
    int dir;
    if (!slash) {
        dir = dup_fd(start);
    } else {
        char d[PW_PATH_MAX];
        size_t dl = slash == path ? 1 : (size_t)(slash - path);
        memcpy(d, path, dl);
        d[dl] = '\0';
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS};
        dir = (int)syscall(SYS_openat2, start, d, &how, sizeof how);
        if (dir < 0)
            dir = 0; /* the walk finds the thread's own answer: on the way the path may
                      * have crossed /proc/self, which is the supervisor here (a missing
                      * /proc/self/fd/N said ENOENT where the thread's fd N is a file:
                      * ENOTDIR, unit/pathwalk) */
    }
    if (own >= 0)
        close(own);
    if (dir <= 0)
        return dir;
    if (fstat(dir, &out->dir_st) < 0 || pw_is_procfs(c, dir, out->dir_st.st_dev)) {
        close(dir);
        return 0;
    }
    memcpy(out->name, last, ln);
    out->name[ln] = '\0';
    struct stat st;
    if ((flags & PW_FOLLOW_LAST) && fstatat(dir, out->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
        close(dir);
        return 0; /* a symlink to follow: the walk */
    }
    out->dir_fd = dir;
    return 1;
}

/* A walk under way: where it stands (cur, the rest of the path in c->buf) and the
 * component it looks at.  Each step function returns 0 to go on with the next
 * component, PW_DONE when *out is filled (and owns the descriptors it holds), or
 * -errno; cur stays the walk's until it is handed to *out (then -1). */
typedef struct pw_walk {
    pw_ctx *c;
    unsigned flags;
    pw_result *out;
    int cur;        /* the directory reached so far (O_PATH) */
    unsigned links; /* symlinks followed */
    bool own_proc;  /* inside the thread's own /proc/PID (after "self") */
    char *p;        /* the rest of the path */
    char comp[PW_NAME_MAX];
    size_t n;         /* comp's length */
    char *after;      /* the path after comp and its slashes */
    bool slash, last; /* comp is followed by a slash; comp is the last component */
} pw_walk;
#define PW_DONE    1
#define PW_ENTERED 2 /* walk_link: a magic link followed, its object in *next */

/* The walk's starting point: the thread's root, working directory or descriptor. */
static int walk_start(pw_walk *w, int dirfd)
{
    pw_ctx *c = w->c;
    int r;
    if (c->buf[0] == '/')
        r = target_root(c);
    else if (dirfd == AT_FDCWD)
        r = target_cwd(c);
    else
        r = pw_thread_fd(c, dirfd);
    if (r < 0)
        return r;
    if (c->buf[0] == '/' || dirfd == AT_FDCWD) {
        w->cur = dup_fd(r);
        return w->cur < 0 ? w->cur : 0;
    }
    w->cur = r;
    struct stat st;
    if (fstat(w->cur, &st) < 0 || !S_ISDIR(st.st_mode))
        return -ENOTDIR;
    return 0;
}

/* Hand cur to *out as the directory holding the last component. */
static int walk_give_dir(pw_walk *w)
{
    w->out->dir_fd = w->cur;
    w->cur = -1;
    return fstat(w->out->dir_fd, &w->out->dir_st) < 0 ? -errno : PW_DONE;
}

/* Nothing left: "/", or a path that only went up and down names cur itself. */
static int walk_at_end(pw_walk *w)
{
    w->out->dot = true;
    if (w->flags & PW_WHOLE) {
        w->out->obj_fd = w->cur;
        w->cur = -1;
        return PW_DONE;
    }
    return walk_give_dir(w);
}

/* Cut the next component out of the path. */
static int walk_parse(pw_walk *w)
{
    char *e = strchr(w->p, '/');
    w->n = e ? (size_t)(e - w->p) : strlen(w->p);
    if (w->n >= PW_NAME_MAX)
        return -ENAMETOOLONG;
    memcpy(w->comp, w->p, w->n);
    w->comp[w->n] = '\0';
    w->after = w->p + w->n;
    w->slash = false;
    while (*w->after == '/') {
        w->after++;
        w->slash = true;
    }
    w->last = *w->after == '\0';
    return 0;
}

/* The last component, not "." nor "..": the name the caller acts on, unless it is a
 * symlink to follow (then 0: it is walked as an intermediate component). */
static int walk_last(pw_walk *w)
{
    struct stat st;
    if ((w->flags & PW_FOLLOW_LAST) && fstatat(w->cur, w->comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
        return 0;
    memcpy(w->out->name, w->comp, w->n + 1);
    w->out->slash = w->slash;
    return walk_give_dir(w);
}

/* A magic link of /proc (fd/N, cwd, root, exe): the kernel follows it to the object, as
 * it would for the thread.  PW_ENTERED with the object in *next and *st. */
static int walk_magic(pw_walk *w, int *next, struct stat *st)
{
    close(*next);
    *next = openat(w->cur, w->comp, O_PATH | O_CLOEXEC);
    if (*next < 0 && w->own_proc && (errno == EACCES || errno == EPERM)) {
        pw_ptrace_cap(true);
        *next = openat(w->cur, w->comp, O_PATH | O_CLOEXEC);
        int e2 = errno;
        pw_ptrace_cap(false);
        errno = e2;
    }
    if (*next < 0)
        return -errno;
    if (fstat(*next, st) < 0) {
        int r = -errno;
        close(*next);
        *next = -1;
        return r;
    }
    w->own_proc = w->own_proc && pw_is_procfs(w->c, *next, st->st_dev);
    return PW_ENTERED;
}

/* A plain symlink: its target spliced into the path, from the thread's root when it is
 * absolute. */
static int walk_symlink(pw_walk *w, int next)
{
    pw_ctx *c = w->c;
    ssize_t ln = readlinkat(next, "", c->link, sizeof c->link);
    close(next);
    if (ln < 0)
        return -errno;
    if (ln == 0)
        return -ENOENT;
    if ((size_t)ln >= sizeof c->link)
        return -ENAMETOOLONG;
    int r = path_splice(c, &w->p, w->n, c->link, (size_t)ln);
    if (r < 0 || c->buf[0] != '/')
        return r;
    int root = target_root(c);
    if (root < 0)
        return root;
    int d = dup_fd(root);
    if (d < 0)
        return d;
    close(w->cur);
    w->cur = d;
    return 0;
}

/* The component `next` (its stat in *st) is a symlink: "self" of the thread's /proc, a
 * magic link, or a plain one.  0 to go on, PW_ENTERED (*next the object), or -errno;
 * *next is consumed unless PW_ENTERED. */
static int walk_link(pw_walk *w, int *next, struct stat *st)
{
    pw_ctx *c = w->c;
    if (++w->links > PW_MAX_LINKS) {
        close(*next);
        return -ELOOP;
    }
    struct stat dst;
    bool proc = pw_is_procfs(c, *next, st->st_dev);
    bool proc_root = proc && fstat(w->cur, &dst) == 0 && dst.st_ino == PROC_ROOT_INO;
    if (proc && proc_root && (strcmp(w->comp, "self") == 0 || strcmp(w->comp, "thread-self") == 0)) {
        /* "self" is the thread, not the supervisor */
        close(*next);
        char name[64];
        int r = self_name(c, w->cur, w->comp[0] == 't', name, sizeof name);
        if (r < 0 || (r = path_splice(c, &w->p, w->n, name, strlen(name))) < 0)
            return r;
        w->own_proc = true;
        return 0;
    }
    if (proc && !proc_root)
        return walk_magic(w, next, st);
    return walk_symlink(w, *next);
}

/* Step into `next` (its stat in *st), or end on it: the object itself when it is the
 * last component and wanted whole, or a magic link's object. */
static int walk_enter(pw_walk *w, int next, const struct stat *st)
{
    if (w->last && w->slash && !S_ISDIR(st->st_mode)) {
        /* "/proc/self/fd/N/" of a file: the kernel says ENOTDIR (unit/pathwalk) */
        close(next);
        return -ENOTDIR;
    }
    if (w->last && ((w->flags & PW_WHOLE) || !S_ISDIR(st->st_mode) || !w->slash)) {
        /* PW_WHOLE, or a magic link followed as the last component: the object itself */
        w->out->obj_fd = next;
        return PW_DONE;
    }
    if (!S_ISDIR(st->st_mode)) {
        close(next);
        return -ENOTDIR;
    }
    if (!pw_is_procfs(w->c, next, st->st_dev))
        w->own_proc = false;
    close(w->cur);
    w->cur = next;
    w->p = w->after;
    return 0;
}

/* One component of the walk. */
static int walk_step(pw_walk *w)
{
    while (*w->p == '/')
        w->p++;
    if (!*w->p)
        return walk_at_end(w);
    int r = walk_parse(w);
    if (r < 0)
        return r;
    bool dot = strcmp(w->comp, ".") == 0, dotdot_c = strcmp(w->comp, "..") == 0;
    if (w->last && !(w->flags & PW_WHOLE) && !dot && !dotdot_c && (r = walk_last(w)) != 0)
        return r;
    if (dot || dotdot_c) {
        w->p = w->after;
        return dot ? 0 : dotdot(w->c, &w->cur);
    }
    int next = openat(w->cur, w->comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0)
        return -errno;
    struct stat st;
    if (fstat(next, &st) < 0) {
        r = -errno;
        close(next);
        return r;
    }
    if (S_ISLNK(st.st_mode) && (r = walk_link(w, &next, &st)) != PW_ENTERED)
        return r;
    return walk_enter(w, next, &st);
}

int pw_resolve(pw_ctx *c, int dirfd, const char *path, unsigned flags, pw_result *out)
{
    *out = (pw_result){.dir_fd = -1, .obj_fd = -1};
    size_t len = strlen(path);
    if (len == 0)
        return -ENOENT;
    if (len >= PW_PATH_MAX)
        return -ENAMETOOLONG;
    int fast = fast_resolve(c, dirfd, path, len, flags, out);
    if (fast != 0)
        return fast < 0 ? fast : 0;
    memcpy(c->buf, path, len + 1);
    pw_walk w = {.c = c, .flags = flags, .out = out, .cur = -1, .p = c->buf};
    int r = walk_start(&w, dirfd);
    while (r == 0)
        r = walk_step(&w);
    if (w.cur >= 0)
        close(w.cur);
    if (r < 0)
        pw_result_close(out);
    return r < 0 ? r : 0;
}
