// SPDX-License-Identifier: Apache-2.0
#include "supervise/sockets.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include "util/cleanup.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

#define ARG_FD(a) ((int)(int32_t)(uint32_t)(a))

#define WHY_HOST_SOCKET                                                                     \
    "a Unix socket the sandbox did not bind: a host service's (it would run what a client " \
    "asks); --allow-socket PATH names one the command may use"

static int sock_id_at(int dirfd, const char *path, int flags, sk_id *id);

void sk_setup(sk_state *sk, const strv *allowed)
{
    sk->n_own = sk->next_own = sk->n_allowed = 0;
    for (size_t i = 0; allowed && i < allowed->n && sk->n_allowed < SK_MAX_ALLOWED; i++) {
        /* the path as the caller named it, in the new root: a symlink to the socket is
         * followed, as connect(2) would; its birth time too, as for the sandbox's own, so
         * that a later socket reusing the inode number is not taken for it */
        if (sock_id_at(AT_FDCWD, allowed->v[i], 0, &sk->allowed[sk->n_allowed]) == 0)
            sk->n_allowed++; /* else not shown, or not a socket: nothing inside reaches it by this rule */
    }
}

/* ---- the command's memory and descriptors ------------------------------------------- */

static void respond(int listener, uint64_t id, long long val, int error)
{
    struct seccomp_notif_resp resp;
    memset(&resp, 0, sizeof resp);
    resp.id = id;
    resp.val = error ? 0 : val;
    resp.error = error ? -error : 0;
    (void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &resp); /* ENOENT: the thread is gone */
}

static bool still_valid(int listener, uint64_t id)
{
    return ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static ssize_t vm_rw(pid_t tid, struct iovec *local, struct iovec *remote, size_t n, bool write)
{
    ssize_t r = write ? process_vm_writev(tid, local, 1, remote, n, 0) : process_vm_readv(tid, local, 1, remote, n, 0);
    if (r < 0 && (errno == EPERM || errno == EACCES)) {
        /* the command may have made itself non-dumpable */
        pw_ptrace_cap(true);
        r = write ? process_vm_writev(tid, local, 1, remote, n, 0) : process_vm_readv(tid, local, 1, remote, n, 0);
        int e = errno;
        pw_ptrace_cap(false);
        errno = e;
    }
    return r;
}

static int read_mem(pid_t tid, uint64_t addr, void *out, size_t len)
{
    if (len == 0)
        return 0;
    struct iovec local = {out, len}, remote = {(void *)(uintptr_t)addr, len};
    return vm_rw(tid, &local, &remote, 1, false) == (ssize_t)len ? 0 : -EFAULT;
}

static int write_mem(pid_t tid, uint64_t addr, const void *in, size_t len)
{
    struct iovec local = {(void *)(uintptr_t)in, len}, remote = {(void *)(uintptr_t)addr, len};
    return vm_rw(tid, &local, &remote, 1, true) == (ssize_t)len ? 0 : -EFAULT;
}

/* The command's descriptor `fd` itself (the same open file), or -errno. */
static int take_fd(const sk_host *h, pid_t tid, int fd)
{
    if (fd < 0)
        return -EBADF;
    int pidfd = h->pw->cur ? h->pw->cur->pidfd : -1;
    _cleanup_fd_ int own = -1;
    if (pidfd < 0) {
        own = (int)syscall(SYS_pidfd_open, tid, O_EXCL /* PIDFD_THREAD */);
        if (own < 0)
            return -errno;
        pidfd = own;
    }
    pw_ptrace_cap(true); /* pidfd_getfd asks for ptrace access to the command */
    int r = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    int e = errno;
    pw_ptrace_cap(false);
    return r < 0 ? -e : r;
}

static void close_fds(sk_state *sk)
{
    for (size_t i = 0; i < sk->n_fds; i++)
        close(sk->fds[i]);
    sk->n_fds = 0;
}

/* ---- which socket files the command may reach --------------------------------------- */

static int sock_id_at(int dirfd, const char *path, int flags, sk_id *id)
{
    struct statx sx;
    if (statx(dirfd, path, flags, STATX_TYPE | STATX_INO | STATX_BTIME, &sx) < 0)
        return -errno;
    if (!S_ISSOCK(sx.stx_mode))
        return -ECONNREFUSED; /* as the kernel answers for a file that is not a socket */
    *id = (sk_id){.dev = makedev(sx.stx_dev_major, sx.stx_dev_minor), .ino = sx.stx_ino};
    if (sx.stx_mask & STATX_BTIME) {
        /* an inode number is reused once the file is gone: the birth time tells a later
         * socket (a host service's) from the one the sandbox made */
        id->btime_sec = sx.stx_btime.tv_sec;
        id->btime_nsec = (long)sx.stx_btime.tv_nsec;
    }
    return 0;
}

static int sock_id(int fd, sk_id *id)
{
    return sock_id_at(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, id);
}

static bool id_in(const sk_id *v, size_t n, const sk_id *id)
{
    for (size_t i = 0; i < n; i++)
        if (v[i].ino == id->ino && v[i].dev == id->dev && v[i].btime_sec == id->btime_sec &&
            v[i].btime_nsec == id->btime_nsec)
            return true;
    return false;
}

static bool own_has(const sk_state *sk, const sk_id *id)
{
    return id_in(sk->own, sk->n_own, id);
}

static void own_add(sk_state *sk, const sk_id *id)
{
    if (own_has(sk, id))
        return;
    if (sk->n_own < SK_MAX_OWN) {
        sk->own[sk->n_own++] = *id;
        return;
    }
    /* full: the oldest is forgotten (connecting to it is refused then, never allowed) */
    sk->own[sk->next_own] = *id;
    sk->next_own = (sk->next_own + 1) % SK_MAX_OWN;
}

static bool allowed_has(const sk_state *sk, const sk_id *id)
{
    return id_in(sk->allowed, sk->n_allowed, id);
}

/* The path of sk->addr when it is a pathname AF_UNIX address (into sk->path), else NULL
 * (another family, an abstract or an unnamed address). */
static const char *unix_path(sk_state *sk)
{
    const size_t off = offsetof(struct sockaddr_un, sun_path);
    if (sk->addr.ss_family != AF_UNIX || sk->addrlen <= off)
        return NULL;
    const struct sockaddr_un *u = (const struct sockaddr_un *)&sk->addr;
    size_t n = sk->addrlen - off;
    if (n > sizeof u->sun_path)
        n = sizeof u->sun_path;
    if (u->sun_path[0] == '\0')
        return NULL;
    n = strnlen(u->sun_path, n);
    memcpy(sk->path, u->sun_path, n);
    sk->path[n] = '\0';
    return sk->path;
}

/* sk->path, a pathname socket the command names: resolve it as the kernel would for the
 * command, open the socket file, and decide.  0 with *tfd (O_PATH, the caller closes it)
 * and sk->addr rewritten to "self/fd/N" (relative to the supervisor's procfs), or an
 * errno: EACCES when refused (reported). */
static int check_target(sk_state *sk, const sk_host *h, const char *what, int *tfd)
{
    pw_result r;
    int e = pw_resolve(h->pw, AT_FDCWD, sk->path, PW_FOLLOW_LAST, &r);
    if (e < 0)
        return -e;
    int fd;
    if (r.obj_fd >= 0) {
        fd = r.obj_fd; /* a magic link of /proc followed at the end */
        r.obj_fd = -1;
    } else if (r.dot || r.slash) {
        pw_result_close(&r);
        return ECONNREFUSED; /* a directory */
    } else {
        fd = openat(r.dir_fd, r.name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        e = errno;
        if (fd < 0) {
            pw_result_close(&r);
            return e == ELOOP ? ECONNREFUSED : e; /* a symlink swapped in after the walk */
        }
    }
    pw_result_close(&r);
    sk_id id = {0};
    if ((e = sock_id(fd, &id)) < 0) {
        close(fd);
        return -e;
    }
    if (!own_has(sk, &id) && !allowed_has(sk, &id)) {
        close(fd);
        h->refused(h->ctx, what, sk->path, WHY_HOST_SOCKET);
        return EACCES;
    }
    struct sockaddr_un *u = (struct sockaddr_un *)&sk->addr;
    memset(u, 0, sizeof *u);
    u->sun_family = AF_UNIX;
    int n = snprintf(u->sun_path, sizeof u->sun_path, "self/fd/%d", fd);
    sk->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + (size_t)n + 1);
    *tfd = fd;
    return 0;
}

/* The supervisor's working directory is its root; a call on a checked socket file runs
 * from its procfs (sk->addr is "self/fd/N"). */
static int enter_proc(const sk_host *h, bool via_proc)
{
    return via_proc && fchdir(h->pw->proc_fd) < 0 ? errno : 0;
}

static void leave_proc(const sk_host *h, bool via_proc)
{
    /* cannot fail but for a closed descriptor; the walks never use the working directory */
    if (via_proc && fchdir(h->pw->root_fd) < 0)
        return; /* nothing of the supervisor's resolves from its working directory */
}

static int sock_info(int s, int *domain, int *type)
{
    socklen_t l = sizeof *domain;
    if (getsockopt(s, SOL_SOCKET, SO_DOMAIN, domain, &l) < 0)
        return errno; /* ENOTSOCK */
    l = sizeof *type;
    if (getsockopt(s, SOL_SOCKET, SO_TYPE, type, &l) < 0)
        return errno;
    return 0;
}

/* ---- connect and bind ------------------------------------------------------------------ */

static int read_addr(sk_state *sk, const sk_call *c, uint64_t addr, uint64_t len)
{
    if ((int32_t)(uint32_t)len < 0 || (uint32_t)len > sizeof sk->addr)
        return EINVAL;
    memset(&sk->addr, 0, sizeof sk->addr);
    sk->addrlen = (socklen_t)(uint32_t)len;
    return read_mem(c->tid, addr, &sk->addr, sk->addrlen) < 0 ? EFAULT : 0;
}

/* connect and bind: the command's socket (args[0], into *s: the caller closes it) and
 * its domain, and the address (args[1], args[2]) read into sk once; 0 or an errno. */
static int take_sock_addr(sk_state *sk, const sk_host *h, const sk_call *c, int *s, int *domain)
{
    int type = -1, e;
    *s = take_fd(h, c->tid, ARG_FD(c->args[0]));
    if (*s < 0)
        return -*s;
    if ((e = sock_info(*s, domain, &type)) != 0 || (e = read_addr(sk, c, c->args[1], c->args[2])) != 0)
        return e;
    return 0;
}

static int do_connect(sk_state *sk, const sk_host *h, const sk_call *c)
{
    _cleanup_fd_ int s = -1;
    int domain = -1, e;
    if ((e = take_sock_addr(sk, h, c, &s, &domain)) != 0)
        return e;
    _cleanup_fd_ int target = -1;
    if (domain == AF_UNIX && unix_path(sk)) {
        if (sk->addrlen > sizeof(struct sockaddr_un))
            return EINVAL;
        if ((e = check_target(sk, h, "connect", &target)) != 0)
            return e;
    }
    if (!still_valid(h->listener, c->id))
        return ENOENT;
    /* Connect without blocking (the flag is the open file's, shared with the command,
     * and put back at once); a connection that has to wait is finished in a worker. */
    int fl = fcntl(s, F_GETFL);
    if (fl < 0)
        return errno;
    bool blocking = !(fl & O_NONBLOCK);
    if (blocking && fcntl(s, F_SETFL, fl | O_NONBLOCK) < 0)
        return errno;
    bool via = target >= 0;
    int r = (e = enter_proc(h, via)) ? -1 : connect(s, (struct sockaddr *)&sk->addr, sk->addrlen);
    if (r < 0 && !e)
        e = errno;
    leave_proc(h, via);
    if (blocking && fcntl(s, F_SETFL, fl) < 0)
        return errno;
    if (r == 0)
        return 0;
    if (!blocking || (e != EINPROGRESS && e != EAGAIN))
        return e;
    if (e == EINPROGRESS) {
        /* over loopback the handshake is often over once connect returns */
        struct pollfd p = {.fd = s, .events = POLLOUT};
        if (poll(&p, 1, 0) == 1) {
            int soerr = 0;
            socklen_t sl = sizeof soerr;
            return getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 ? errno : soerr;
        }
    }
    pid_t w = h->fork_worker(h->ctx, c->id);
    if (w < 0)
        return -w;
    if (w > 0)
        return -1;
    int res;
    if (e == EINPROGRESS) {
        struct pollfd p = {.fd = s, .events = POLLOUT};
        while (poll(&p, 1, -1) < 0 && errno == EINTR)
            ;
        int soerr = 0;
        socklen_t sl = sizeof soerr;
        res = getsockopt(s, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 ? errno : soerr;
    } else {
        /* a Unix stream socket's backlog is full: wait as the command would have */
        res = enter_proc(h, via);
        if (!res && connect(s, (struct sockaddr *)&sk->addr, sk->addrlen) < 0)
            res = errno;
    }
    respond(h->listener, c->id, 0, res);
    _exit(0);
}

static int do_bind(sk_state *sk, const sk_host *h, const sk_call *c)
{
    _cleanup_fd_ int s = -1;
    int domain = -1, e;
    if ((e = take_sock_addr(sk, h, c, &s, &domain)) != 0)
        return e;
    if (domain != AF_UNIX || !unix_path(sk)) {
        if (!still_valid(h->listener, c->id))
            return ENOENT;
        return bind(s, (struct sockaddr *)&sk->addr, sk->addrlen) < 0 ? errno : 0;
    }
    if (sk->addrlen > sizeof(struct sockaddr_un))
        return EINVAL;
    /* a new name in a directory: the creation control's decision, then bind there */
    pw_result r;
    if ((e = pw_resolve(h->pw, AT_FDCWD, sk->path, 0, &r)) < 0)
        return -e;
    if (r.obj_fd >= 0 || r.dot || r.slash) {
        pw_result_close(&r);
        return r.slash ? ENOENT : EADDRINUSE;
    }
    const char *why = h->decide_create(h->ctx, r.dir_fd, &r.dir_st, r.name);
    if (why) {
        pw_result_close(&r);
        h->refused(h->ctx, "bind", sk->path, why);
        return EPERM;
    }
    int mask = pw_umask(h->pw);
    if (mask < 0 || !still_valid(h->listener, c->id)) {
        pw_result_close(&r);
        return mask < 0 ? -mask : ENOENT;
    }
    struct sockaddr_un u = {.sun_family = AF_UNIX};
    size_t n = strlen(r.name);
    if (n >= sizeof u.sun_path) {
        pw_result_close(&r);
        return ENAMETOOLONG;
    }
    memcpy(u.sun_path, r.name, n + 1);
    int rc = -1;
    if (fchdir(r.dir_fd) < 0) {
        e = errno;
    } else {
        mode_t old = umask((mode_t)mask); /* the socket file's mode is 0777 & ~umask */
        rc = bind(s, (struct sockaddr *)&u, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1));
        e = errno;
        umask(old);
        leave_proc(h, true);
    }
    if (rc == 0) {
        /* no name of the command's is made or renamed between the bind and this open:
         * PID 1 serves one call at a time.  (Once the command has made a FUSE mount,
         * calls are served in forked workers, and this record stays in the worker's copy
         * of sk: the socket is refused later, never a host one allowed.) */
        _cleanup_fd_ int f = openat(r.dir_fd, r.name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        sk_id id = {0};
        if (f >= 0 && sock_id(f, &id) == 0)
            own_add(sk, &id);
    }
    pw_result_close(&r);
    return rc < 0 ? e : 0;
}

/* ---- sending ------------------------------------------------------------------------ */

typedef struct sk_msg {
    bool has_name;
    size_t len;       /* bytes in sk->data */
    bool truncated;   /* longer than SK_DATA_MAX: its first part (stream sockets) */
    size_t ctl_len;   /* bytes in sk->ctl_out */
    uint64_t len_out; /* sendmmsg: where the command gets the count sent, or 0 */
} sk_msg;

/* The data of `n` iovecs at `iov` in the command's memory, at most SK_DATA_MAX bytes. */
static int read_iovs(sk_state *sk, const sk_call *c, uint64_t iov, uint64_t n, sk_msg *m)
{
    if (n > SK_MAX_IOV)
        return EMSGSIZE;
    size_t esz = c->compat ? 8 : 16;
    if (n && read_mem(c->tid, iov, sk->raw, (size_t)n * esz) < 0)
        return EFAULT;
    size_t total = 0, nr = 0;
    m->truncated = false;
    for (size_t i = 0; i < n; i++) {
        uint64_t base, len;
        if (c->compat) {
            uint32_t b, l;
            memcpy(&b, sk->raw + i * 8, 4);
            memcpy(&l, sk->raw + i * 8 + 4, 4);
            if ((int32_t)l < 0)
                return EINVAL;
            base = b, len = l;
        } else {
            memcpy(&base, sk->raw + i * 16, 8);
            memcpy(&len, sk->raw + i * 16 + 8, 8);
            if ((int64_t)len < 0)
                return EINVAL;
        }
        if (len == 0 || m->truncated)
            continue;
        if (len > SK_DATA_MAX - total) {
            len = SK_DATA_MAX - total;
            m->truncated = true;
        }
        if (len)
            sk->remote[nr++] = (struct iovec){(void *)(uintptr_t)base, (size_t)len};
        total += (size_t)len;
    }
    if (total) {
        struct iovec local = {sk->data, total};
        if (vm_rw(c->tid, &local, sk->remote, nr, false) != (ssize_t)total)
            return EFAULT;
    }
    m->len = total;
    return 0;
}

/* The control data: copied into the supervisor's layout, the descriptors of SCM_RIGHTS
 * taken from the command (sk->fds) and their numbers replaced by the supervisor's. */
static int read_control(sk_state *sk, const sk_host *h, const sk_call *c, uint64_t ctl, uint64_t len, sk_msg *m)
{
    m->ctl_len = 0;
    if (len == 0)
        return 0;
    if (len > SK_CTL_MAX)
        return ENOBUFS;
    if (read_mem(c->tid, ctl, sk->ctl_in, (size_t)len) < 0)
        return EFAULT;
    size_t hdr = c->compat ? 12 : sizeof(struct cmsghdr), align = c->compat ? 4 : sizeof(size_t);
    size_t off = 0, out = 0;
    while (off + hdr <= len) {
        uint64_t clen;
        int level, type;
        if (c->compat) {
            uint32_t l;
            memcpy(&l, sk->ctl_in + off, 4);
            clen = l;
            memcpy(&level, sk->ctl_in + off + 4, 4);
            memcpy(&type, sk->ctl_in + off + 8, 4);
        } else {
            memcpy(&clen, sk->ctl_in + off, 8);
            memcpy(&level, sk->ctl_in + off + 8, 4);
            memcpy(&type, sk->ctl_in + off + 12, 4);
        }
        if (clen < hdr || clen > len - off)
            return EINVAL;
        size_t plen = (size_t)clen - hdr;
        const unsigned char *payload = sk->ctl_in + off + hdr;
        if (out + CMSG_SPACE(plen) > sizeof sk->ctl_out)
            return ENOBUFS;
        struct cmsghdr *o = (struct cmsghdr *)(void *)(sk->ctl_out + out);
        memset(o, 0, CMSG_SPACE(plen));
        o->cmsg_len = CMSG_LEN(plen);
        o->cmsg_level = level;
        o->cmsg_type = type;
        if (level == SOL_SOCKET && type == SCM_RIGHTS) {
            size_t nfd = plen / sizeof(int);
            if (sk->n_fds + nfd > SK_MAX_FDS)
                return EINVAL;
            for (size_t j = 0; j < nfd; j++) {
                int theirs;
                memcpy(&theirs, payload + j * sizeof(int), sizeof(int));
                int mine = take_fd(h, c->tid, theirs);
                if (mine < 0)
                    return -mine;
                sk->fds[sk->n_fds++] = mine;
                memcpy(CMSG_DATA(o) + j * sizeof(int), &mine, sizeof(int));
            }
        } else {
            memcpy(CMSG_DATA(o), payload, plen);
        }
        out += CMSG_SPACE(plen);
        off += ((size_t)clen + align - 1) & ~(align - 1);
    }
    m->ctl_len = out;
    return 0;
}

/* A struct msghdr (or compat_msghdr) at `at` in the command's memory, read once. */
static int read_msghdr(sk_state *sk, const sk_host *h, const sk_call *c, uint64_t at, sk_msg *m)
{
    uint64_t name, iov, iovlen, ctl, ctllen;
    uint32_t namelen;
    if (c->compat) {
        uint32_t w[7];
        if (read_mem(c->tid, at, w, sizeof w) < 0)
            return EFAULT;
        name = w[0], namelen = w[1], iov = w[2], iovlen = w[3], ctl = w[4], ctllen = w[5];
    } else {
        struct msghdr mh;
        if (read_mem(c->tid, at, &mh, sizeof mh) < 0)
            return EFAULT;
        name = (uintptr_t)mh.msg_name, namelen = mh.msg_namelen, iov = (uintptr_t)mh.msg_iov, iovlen = mh.msg_iovlen,
        ctl = (uintptr_t)mh.msg_control, ctllen = mh.msg_controllen;
    }
    m->has_name = name && namelen;
    int e;
    if (m->has_name && (e = read_addr(sk, c, name, namelen)) != 0)
        return e;
    if ((e = read_iovs(sk, c, iov, iovlen, m)) != 0)
        return e;
    return read_control(sk, h, c, ctl, ctllen, m);
}

static void sigpipe(const sk_host *h)
{
    /* what the kernel does for a send on a broken connection without MSG_NOSIGNAL */
    if (h->pw->cur)
        (void)syscall(SYS_pidfd_send_signal, h->pw->cur->pidfd, SIGPIPE, NULL, 0); /* best effort */
}

/* Send the message read into sk: 0 with *val, an errno, or -1 when a worker answers. */
static int send_now(sk_state *sk, const sk_host *h, const sk_call *c, int s, bool stream, const sk_msg *m, int flags,
                    bool via, bool may_wait, long long *val)
{
    struct iovec io = {sk->data, m->len};
    struct msghdr mh = {.msg_name = m->has_name ? &sk->addr : NULL,
                        .msg_namelen = m->has_name ? sk->addrlen : 0,
                        .msg_iov = &io,
                        .msg_iovlen = 1,
                        .msg_control = m->ctl_len ? sk->ctl_out : NULL,
                        .msg_controllen = m->ctl_len};
    int fl = fcntl(s, F_GETFL);
    if (fl < 0)
        return errno;
    bool blocking = !(fl & O_NONBLOCK) && !(flags & MSG_DONTWAIT);
    int e = enter_proc(h, via);
    ssize_t n = e ? -1 : sendmsg(s, &mh, flags | MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && !e)
        e = errno;
    leave_proc(h, via);
    size_t done = n > 0 ? (size_t)n : 0;
    bool wait = blocking && may_wait && ((n < 0 && e == EAGAIN) || (n >= 0 && stream && done < m->len));
    if (!wait) {
        if (n < 0) {
            if (e == EPIPE && !(flags & MSG_NOSIGNAL))
                sigpipe(h);
            return e;
        }
        if (m->len_out) {
            uint32_t v = (uint32_t)n;
            (void)write_mem(c->tid, m->len_out, &v, sizeof v); /* as the kernel: the count stands */
        }
        *val = n;
        return 0;
    }
    pid_t w = h->fork_worker(h->ctx, c->id);
    if (w < 0)
        return -w;
    if (w > 0)
        return -1;
    /* the worker: the rest, waiting as the command would have */
    io.iov_base = sk->data + done;
    io.iov_len = m->len - done;
    if (done) {
        mh.msg_control = NULL;
        mh.msg_controllen = 0;
    }
    int res = enter_proc(h, via);
    ssize_t k = res ? -1 : sendmsg(s, &mh, flags | MSG_NOSIGNAL);
    if (k < 0 && !res)
        res = errno;
    if (k > 0)
        done += (size_t)k;
    if (done && m->len_out) {
        uint32_t v = (uint32_t)done;
        (void)write_mem(c->tid, m->len_out, &v, sizeof v);
    }
    if (!done && res == EPIPE && !(flags & MSG_NOSIGNAL))
        sigpipe(h);
    respond(h->listener, c->id, (long long)done, done ? 0 : res);
    _exit(0);
}

/* One message read into sk (m): check its address, then send it. */
static int send_one(sk_state *sk, const sk_host *h, const sk_call *c, int s, int domain, int type, const sk_msg *m,
                    int flags, const char *what, bool may_wait, long long *val)
{
    _cleanup_fd_ int target = -1;
    int e;
    if (m->truncated && type != SOCK_STREAM)
        return EMSGSIZE; /* a datagram is sent whole or not at all (at most SK_DATA_MAX here) */
    /* only a datagram socket sends to an address: stream sockets refuse one (EISCONN,
     * EOPNOTSUPP) and sequenced-packet sockets ignore it, as the kernel does below */
    if (m->has_name && domain == AF_UNIX && type == SOCK_DGRAM && unix_path(sk)) {
        if (sk->addrlen > sizeof(struct sockaddr_un))
            return EINVAL;
        if ((e = check_target(sk, h, what, &target)) != 0)
            return e;
    }
    if (!still_valid(h->listener, c->id))
        return ENOENT;
    return send_now(sk, h, c, s, type == SOCK_STREAM, m, flags, target >= 0, may_wait, val);
}

static int do_sendto(sk_state *sk, const sk_host *h, const sk_call *c, long long *val)
{
    _cleanup_fd_ int s = take_fd(h, c->tid, ARG_FD(c->args[0]));
    if (s < 0)
        return -s;
    int domain = -1, type = -1, e;
    if ((e = sock_info(s, &domain, &type)) != 0)
        return e;
    sk_msg m = {.has_name = c->args[4] != 0};
    if (m.has_name && (e = read_addr(sk, c, c->args[4], c->args[5])) != 0)
        return e;
    uint64_t len = c->compat ? (uint32_t)c->args[2] : c->args[2]; /* a size_t */
    if (len) {
        size_t take = len > SK_DATA_MAX ? SK_DATA_MAX : (size_t)len;
        m.truncated = take < len;
        if (read_mem(c->tid, c->args[1], sk->data, take) < 0)
            return EFAULT;
        m.len = take;
    }
    sk->n_fds = 0;
    return send_one(sk, h, c, s, domain, type, &m, (int)c->args[3], "sendto", true, val);
}

static int do_sendmsg(sk_state *sk, const sk_host *h, const sk_call *c, long long *val)
{
    _cleanup_fd_ int s = take_fd(h, c->tid, ARG_FD(c->args[0]));
    if (s < 0)
        return -s;
    int domain = -1, type = -1, e;
    if ((e = sock_info(s, &domain, &type)) != 0)
        return e;
    sk_msg m = {0};
    sk->n_fds = 0;
    if ((e = read_msghdr(sk, h, c, c->args[1], &m)) == 0)
        e = send_one(sk, h, c, s, domain, type, &m, (int)c->args[2], "sendmsg", true, val);
    close_fds(sk);
    return e;
}

static int do_sendmmsg(sk_state *sk, const sk_host *h, const sk_call *c, long long *val)
{
    _cleanup_fd_ int s = take_fd(h, c->tid, ARG_FD(c->args[0]));
    if (s < 0)
        return -s;
    int domain = -1, type = -1, e = 0;
    if ((e = sock_info(s, &domain, &type)) != 0)
        return e;
    unsigned vlen = (unsigned)c->args[2];
    if (vlen > SK_MAX_MMSG)
        vlen = SK_MAX_MMSG; /* fewer than asked: the caller sends the rest again */
    size_t esz = c->compat ? 32 : sizeof(struct mmsghdr);
    size_t len_at = c->compat ? 28 : offsetof(struct mmsghdr, msg_len);
    unsigned sent = 0;
    for (unsigned i = 0; i < vlen; i++) {
        sk_msg m = {0};
        uint64_t at = c->args[1] + (uint64_t)i * esz;
        sk->n_fds = 0;
        long long one = 0;
        e = read_msghdr(sk, h, c, at, &m);
        m.len_out = at + len_at;
        if (!e)
            e = send_one(sk, h, c, s, domain, type, &m, (int)c->args[3], "sendmmsg", i == 0, &one);
        close_fds(sk);
        if (e == -1)
            return -1; /* the first message, finished by a worker */
        if (e)
            break;
        sent++;
    }
    if (sent == 0)
        return e;
    *val = sent;
    return 0;
}

int sk_serve(sk_state *sk, const sk_host *h, int which, const sk_call *c, long long *val)
{
    *val = 0;
    switch (which) {
    case SK_CONNECT: return do_connect(sk, h, c);
    case SK_BIND: return do_bind(sk, h, c);
    case SK_SENDTO: return do_sendto(sk, h, c, val);
    case SK_SENDMSG: return do_sendmsg(sk, h, c, val);
    case SK_SENDMMSG: return do_sendmmsg(sk, h, c, val);
    }
    return ENOSYS;
}
