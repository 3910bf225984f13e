#include "sandbox/stubs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/strv.h"

/* A stub is an empty directory of mode 0400: nothing can be made in it, and that mode
 * on an empty directory is what tells a stub from a directory a person made. */
#define STUB_MODE 0400
#define STUBS_MAX 24

static bool still_linked(int parent_fd, const char *name, int fd)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && fstatat(parent_fd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

static bool looks_like_stub(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 07777) != STUB_MODE || st.st_uid != geteuid())
        return false;
    char buf[256];
    if (lseek(fd, 0, SEEK_SET) < 0)
        return false;
    long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
    /* "." and ".." only: two small records */
    long off = 0;
    int entries = 0;
    while (n > 0 && off < n) {
        unsigned short reclen = *(unsigned short *)(buf + off + 16);
        entries++;
        off += reclen;
    }
    return n >= 0 && entries <= 2;
}

static int create_one(const plan_op *op, stub *s, cordon_error *err)
{
    const char *slash = strrchr(op->dest, '/');
    if (!slash || !slash[1] || strlen(slash + 1) >= sizeof s->name)
        return err_set(err, CORDON_STAGE_ROOT, EINVAL, "bad stub path %s", op->dest);
    snprintf(s->name, sizeof s->name, "%s", slash + 1);
    char parent[4096];
    size_t pl = (size_t)(slash - op->dest);
    if (pl >= sizeof parent)
        return err_set(err, CORDON_STAGE_ROOT, ENAMETOOLONG, "%s", op->dest);
    memcpy(parent, op->dest, pl);
    parent[pl] = '\0';
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    s->parent_fd = (int)syscall(SYS_openat2, AT_FDCWD, pl ? parent : "/", &how, sizeof how);
    if (s->parent_fd < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot open %s without following symlinks",
                       op->why, pl ? parent : "/");
    for (int attempt = 0; attempt < 64; attempt++) { /* each retry means another run took our fresh stub for a stale one (at most once each) */
        bool made = mkdirat(s->parent_fd, s->name, STUB_MODE) == 0;
        if (!made && (errno == EACCES || errno == EPERM || errno == EROFS)) {
            /* The command runs with our credentials and no capabilities: it could not
             * create it either. */
            s->held = false;
            return 0;
        }
        if (!made && errno != EEXIST)
            return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot hold %s for the run", op->why, op->dest);
        /* the mode is what marks a stub: do not let the caller's umask change it (the
         * name is one component in a directory opened without following symlinks, and
         * nothing runs in the sandbox yet) */
        if (made && fchmodat(s->parent_fd, s->name, STUB_MODE, 0) < 0) {
            /* Until we hold its lock, a concurrent run may take a fresh stub for one that
             * a killed run left (stubs_reap_stale) and remove it: make it again. */
            if (errno == ENOENT)
                continue;
            return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot set up the stub %s", op->why, op->dest);
        }
        s->fd = openat(s->parent_fd, s->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s->fd < 0) {
            if (errno == ENOENT)
                continue; /* removed meanwhile by the run that owned it: try again */
            return err_set(err, CORDON_STAGE_ROOT, errno,
                           "%s: %s appeared during setup and cannot be held; refusing", op->why, op->dest);
        }
        /* Something made meanwhile that is not a stub: hidden all the same, never removed. */
        s->held = true;
        s->ours = made || looks_like_stub(s->fd);
        if (!s->ours)
            return 0;
        /* Every run using a stub holds a shared lock on it for as long as it runs (its
         * janitor keeps the lock if cordon dies); the last one out removes it. */
        if (flock(s->fd, LOCK_SH) < 0)
            return err_set(err, CORDON_STAGE_ROOT, errno, "cannot lock the stub %s", op->dest);
        if (still_linked(s->parent_fd, s->name, s->fd))
            return 0;
        close(s->fd); /* removed between our open and our lock: make it again */
        s->fd = -1;
    }
    return err_set(err, CORDON_STAGE_ROOT, EAGAIN, "%s: could not hold %s for the run", op->why, op->dest);
}

bool stubs_reap_stale(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || !slash[1])
        return false;
    char parent[4096];
    size_t pl = (size_t)(slash - path);
    if (pl >= sizeof parent)
        return false;
    memcpy(parent, path, pl);
    parent[pl] = '\0';
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    _cleanup_fd_ int pfd = (int)syscall(SYS_openat2, AT_FDCWD, pl ? parent : "/", &how, sizeof how);
    if (pfd < 0)
        return false;
    _cleanup_fd_ int fd = openat(pfd, slash + 1, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || !looks_like_stub(fd) || flock(fd, LOCK_EX | LOCK_NB) < 0)
        return false; /* not a stub, or a live run holds it */
    return still_linked(pfd, slash + 1, fd) && unlinkat(pfd, slash + 1, AT_REMOVEDIR) == 0;
}

int stubs_create(const plan *p, stubs *s, char *status, cordon_error *err)
{
    *s = (stubs){.janitor = -1, .janitor_fd = -1};
    size_t n = 0;
    for (size_t i = 0; i < p->n_ops; i++)
        n += p->ops[i].kind == PLAN_HIDE && p->ops[i].stub;
    if (n == 0)
        return 0;
    if (n > STUBS_MAX)
        return err_set(err, CORDON_STAGE_ROOT, 0,
                       "%zu missing paths to hold in writable directories; at most %d are supported", n, STUBS_MAX);
    s->v = xcalloc(n, sizeof *s->v);
    for (size_t i = 0; i < p->n_ops; i++) {
        if (p->ops[i].kind != PLAN_HIDE || !p->ops[i].stub)
            continue;
        stub *x = &s->v[s->n++];
        x->parent_fd = x->fd = -1;
        if (create_one(&p->ops[i], x, err) < 0) {
            stubs_release(s, true);
            return -1;
        }
        status[s->n - 1] = x->held ? 'y' : 'n';
    }
    return 0;
}

static void release_one(stub *s)
{
    /* Turning our shared lock into an exclusive one succeeds only when no other run
     * (nor another run's janitor) holds the stub. */
    if (s->ours && s->fd >= 0 && flock(s->fd, LOCK_EX | LOCK_NB) == 0 && still_linked(s->parent_fd, s->name, s->fd) &&
        looks_like_stub(s->fd))
        unlinkat(s->parent_fd, s->name, AT_REMOVEDIR);
    if (s->fd >= 0)
        close(s->fd);
    if (s->parent_fd >= 0)
        close(s->parent_fd);
    s->fd = s->parent_fd = -1;
}

static void release_all(stubs *s)
{
    for (size_t i = 0; i < s->n; i++)
        release_one(&s->v[i]);
}

int stubs_start_janitor(stubs *s, int pidfd, cordon_error *err)
{
    if (s->n == 0)
        return 0;
    pid_t pid = fork();
    if (pid < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot start the stub janitor");
    if (pid == 0) {
        /* Outside the sandbox, holding nothing but what it needs. */
        int keep[1 + 2 * STUBS_MAX];
        size_t k = 0;
        keep[k++] = pidfd;
        for (size_t i = 0; i < s->n; i++) {
            keep[k++] = s->v[i].fd;
            keep[k++] = s->v[i].parent_fd;
        }
        detach_janitor(keep, k);
        /* PID 1 ends when the sandbox does, normally or because cordon died (its
         * parent-death signal); then nothing can use the stubs any more. */
        struct pollfd pf = {.fd = pidfd, .events = POLLIN};
        while (poll(&pf, 1, -1) < 0 && errno == EINTR)
            ;
        release_all(s);
        _exit(0);
    }
    s->janitor = pid;
    return 0;
}

void stubs_release(stubs *s, bool wait_janitor)
{
    release_all(s);
    if (s->janitor > 0 && wait_janitor) {
        while (waitpid(s->janitor, NULL, 0) < 0 && errno == EINTR)
            ;
        s->janitor = -1;
    }
    free(s->v);
    s->v = NULL;
    s->n = 0;
}

/* What the janitor is told about each stub; the descriptors travel alongside
 * (SCM_RIGHTS): parent_fd then fd, for those that are open. */
typedef struct handover {
    uint32_t n;
    struct {
        uint8_t has_parent, has_fd, ours, held;
        char name[256];
    } v[STUBS_MAX];
} handover;

static __attribute__((noreturn)) void janitor_main(const plan *p, int pidfd, int sock)
{
    int keep[2] = {pidfd, sock};
    detach_janitor(keep, 2);
    /* A copy of a possibly multi-threaded process: no allocation from here on. */
    handover h;
    memset(&h, 0, sizeof h);
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * 2 * STUBS_MAX)];
    } c;
    struct iovec iov = {.iov_base = &h, .iov_len = sizeof h};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = sizeof c.buf};
    ssize_t r;
    while ((r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR)
        ;
    if (r < (ssize_t)sizeof h.n || h.n > STUBS_MAX) {
        /* cordon is gone before it handed the stubs over: PID 1 was never told to
         * mount them, so remove what it made (and no live run holds). */
        for (size_t i = 0; i < p->n_ops; i++)
            if (p->ops[i].kind == PLAN_HIDE && p->ops[i].stub)
                stubs_reap_stale(p->ops[i].dest);
        _exit(0);
    }
    const int *fds = NULL;
    size_t nfds = 0;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
        fds = (const int *)(void *)CMSG_DATA(cm);
        nfds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    }
    stub v[STUBS_MAX];
    size_t k = 0;
    for (uint32_t i = 0; i < h.n; i++) {
        v[i] = (stub){.parent_fd = -1, .fd = -1, .ours = h.v[i].ours, .held = h.v[i].held};
        memcpy(v[i].name, h.v[i].name, sizeof v[i].name);
        v[i].name[sizeof v[i].name - 1] = '\0';
        if (h.v[i].has_parent && k < nfds)
            v[i].parent_fd = fds[k++];
        if (h.v[i].has_fd && k < nfds)
            v[i].fd = fds[k++];
    }
    stubs s = {.v = v, .n = h.n, .janitor = -1, .janitor_fd = -1};
    /* As stubs_start_janitor's: PID 1 ends when the sandbox does, normally or because
     * cordon died (its parent-death signal); then nothing can use the stubs any more. */
    struct pollfd pf = {.fd = pidfd, .events = POLLIN};
    while (poll(&pf, 1, -1) < 0 && errno == EINTR)
        ;
    release_all(&s);
    _exit(0);
}

int stubs_janitor_start(const plan *p, int pidfd, stubs_janitor *j, cordon_error *err)
{
    bool any = false;
    for (size_t i = 0; i < p->n_ops; i++)
        any |= p->ops[i].kind == PLAN_HIDE && p->ops[i].stub;
    if (!any)
        return 0;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot start the stub janitor (socketpair)");
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        return err_set(err, CORDON_STAGE_SUPERVISE, e, "cannot start the stub janitor");
    }
    if (pid == 0)
        janitor_main(p, pidfd, sv[1]);
    close(sv[1]);
    j->pid = pid;
    j->sock = sv[0];
    return 0;
}

int stubs_janitor_hand_over(stubs_janitor *j, stubs *s, cordon_error *err)
{
    if (j->pid < 0)
        return 0;
    handover h;
    memset(&h, 0, sizeof h);
    int fds[2 * STUBS_MAX];
    size_t k = 0;
    h.n = (uint32_t)s->n;
    for (size_t i = 0; i < s->n && i < STUBS_MAX; i++) {
        const stub *x = &s->v[i];
        h.v[i].ours = x->ours;
        h.v[i].held = x->held;
        memcpy(h.v[i].name, x->name, sizeof h.v[i].name);
        if ((h.v[i].has_parent = x->parent_fd >= 0))
            fds[k++] = x->parent_fd;
        if ((h.v[i].has_fd = x->fd >= 0))
            fds[k++] = x->fd;
    }
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * 2 * STUBS_MAX)];
    } c;
    memset(&c, 0, sizeof c);
    struct iovec iov = {.iov_base = &h, .iov_len = sizeof h};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (k > 0) {
        m.msg_control = c.buf;
        m.msg_controllen = CMSG_SPACE(sizeof(int) * k);
        struct cmsghdr *cm = &c.align; /* CMSG_FIRSTHDR(&m): the buffer is large enough */
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int) * k);
        memcpy(CMSG_DATA(cm), fds, sizeof(int) * k);
    }
    ssize_t r;
    while ((r = sendmsg(j->sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    int e = errno;
    close(j->sock);
    j->sock = -1;
    s->janitor = j->pid;
    j->pid = -1;
    if (r != (ssize_t)sizeof h)
        return err_set(err, CORDON_STAGE_SUPERVISE, r < 0 ? e : EIO, "cannot hand the stubs to their janitor");
    return 0;
}

void stubs_janitor_abandon(stubs_janitor *j)
{
    if (j->sock >= 0)
        close(j->sock);
    j->sock = -1;
    if (j->pid > 0)
        while (waitpid(j->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    j->pid = -1;
}
