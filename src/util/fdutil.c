// SPDX-License-Identifier: Apache-2.0
#include "util/fdutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/path.h"

int write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

ssize_t read_all(int fd, void *buf, size_t n)
{
    char *p = buf;
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, p + got, n - got);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

static int close_range_or_loop(unsigned lo, unsigned hi, unsigned flags)
{
    if (lo > hi)
        return 0;
    if (syscall(SYS_close_range, lo, hi, flags) == 0)
        return 0;
    if (errno != ENOSYS)
        return -1;
    long max = sysconf(_SC_OPEN_MAX);
    if (max < 0)
        max = 65536;
    for (unsigned fd = lo; fd <= hi && fd < (unsigned)max; fd++) {
        if (flags & CLOSE_RANGE_CLOEXEC) {
            int f = fcntl((int)fd, F_GETFD);
            if (f >= 0)
                fcntl((int)fd, F_SETFD, f | FD_CLOEXEC);
        } else {
            close((int)fd);
        }
    }
    return 0;
}

int close_fds_except(const int *keep, size_t n)
{
    /* sorted by insertion, on the stack: usable in a forked copy of a threaded process */
    int sorted[CLOSE_FDS_MAX];
    if (n > CLOSE_FDS_MAX) {
        errno = EINVAL;
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        for (; j > 0 && sorted[j - 1] > keep[i]; j--)
            sorted[j] = sorted[j - 1];
        sorted[j] = keep[i];
    }
    unsigned lo = 3;
    for (size_t i = 0; i < n; i++) {
        if (sorted[i] < 3 || (unsigned)sorted[i] < lo)
            continue;
        if ((unsigned)sorted[i] > lo && close_range_or_loop(lo, (unsigned)sorted[i] - 1, 0) < 0)
            return -1;
        lo = (unsigned)sorted[i] + 1;
    }
    return close_range_or_loop(lo, UINT_MAX, 0);
}

int cloexec_all_fds(void)
{
    return close_range_or_loop(3, UINT_MAX, CLOSE_RANGE_CLOEXEC);
}

void detach_janitor(const int *keep, size_t n)
{
    /* A janitor that cannot let go of the run's descriptors (a copy of the life pipe
     * would keep the sandbox from seeing cordon die) does no cleaning: the next run
     * reaps what it leaves (limits.c, llonly.c). */
    if (setsid() < 0 || close_fds_except(keep, n) < 0)
        _exit(1);
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(devnull, 2) < 0)
        _exit(1);
    if (devnull > 2)
        close(devnull);
}

int open_no_symlinks(const char *path, int flags)
{
    struct open_how how = {.flags = (uint64_t)(flags | O_NOFOLLOW),
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
    if (fd >= 0 || errno != ENOSYS)
        return fd;
    if (path[0] != '/') {
        errno = EINVAL;
        return -1;
    }
    if (path[strspn(path, "/")] == '\0')
        return open("/", flags);
    fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    const char *p = path;
    char name[NAME_MAX + 1];
    int got = 0;
    while (fd >= 0 && (got = path_next_name(&p, name)) > 0) {
        /* O_PATH | O_NOFOLLOW opens a symlink itself, so that it can be told apart */
        int next = openat(fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        int e2 = errno;
        struct stat st;
        if (next >= 0 && fstat(next, &st) < 0) {
            e2 = errno;
            close(next);
            next = -1;
        } else if (next >= 0 && (S_ISLNK(st.st_mode) || (*p && !S_ISDIR(st.st_mode)))) {
            e2 = S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR;
            close(next);
            next = -1;
        }
        if (next >= 0 && !*p && !(flags & O_PATH)) {
            int last = openat(fd, name, flags | O_NOFOLLOW);
            e2 = errno;
            close(next);
            next = last;
        } else if (next >= 0 && !*p && (flags & O_DIRECTORY) && !S_ISDIR(st.st_mode)) {
            close(next);
            next = -1;
            e2 = ENOTDIR;
        }
        close(fd);
        fd = next;
        errno = e2;
    }
    if (got < 0) { /* a component longer than NAME_MAX: nothing is opened */
        close(fd);
        errno = ENAMETOOLONG;
        return -1;
    }
    return fd;
}

/* A directory that cannot be listed (the command may chmod 000 its own): make it
 * listable, without following a symlink that may stand there instead. */
static int make_listable(int at, const char *name)
{
    int fd = openat(at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    int r = chmod(self, 0700);
    close(fd);
    return r;
}

static int remove_level(int at, const char *name, int depth)
{
    if (unlinkat(at, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return -1;
    if (depth > 96) { /* ~1 KiB of stack per level: fine on a thread's stack */
        errno = ELOOP;
        return -1;
    }
    int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES && make_listable(at, name) == 0)
        fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    /* Read again from the start until a pass finds nothing: removing entries while
     * reading may make getdents skip some. */
    for (int pass = 0; pass < 64; pass++) {
        bool any = false;
        uint64_t buf[112]; /* aligned for the records */
        long n;
        lseek(fd, 0, SEEK_SET);
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                struct raw_dirent {
                    uint64_t d_ino;
                    int64_t d_off;
                    unsigned short d_reclen;
                    unsigned char d_type;
                    char d_name[];
                } *d = (struct raw_dirent *)((char *)buf + off);
                off += d->d_reclen;
                if (d->d_name[0] == '.' && (d->d_name[1] == '\0' || (d->d_name[1] == '.' && d->d_name[2] == '\0')))
                    continue;
                any = true;
                (void)remove_level(fd, d->d_name, depth + 1);
            }
        }
        if (!any)
            break;
    }
    close(fd);
    if (unlinkat(at, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
        return 0;
    return -1;
}

int remove_tree_at(int at, const char *name)
{
    return remove_level(at, name, 0);
}

void fd_msg_init(struct msghdr *mh, struct iovec *iov, const void *buf, size_t len, char *ctl, const int *fds, size_t n)
{
    iov->iov_base = (void *)buf;
    iov->iov_len = len;
    memset(mh, 0, sizeof *mh);
    mh->msg_iov = iov;
    mh->msg_iovlen = 1;
    if (n == 0)
        return;
    memset(ctl, 0, CMSG_SPACE(n * sizeof(int)));
    mh->msg_control = ctl;
    mh->msg_controllen = CMSG_SPACE(n * sizeof(int));
    struct cmsghdr *cm = CMSG_FIRSTHDR(mh);
    if (!cm)
        return; /* (cannot be: the control buffer holds one) */
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(n * sizeof(int));
    memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
}

int send_fds(int sock, const void *buf, size_t len, const int *fds, size_t n, int flags)
{
    if (n > FD_MSG_MAX) {
        errno = EINVAL;
        return -1;
    }
    _Alignas(struct cmsghdr) char ctl[FD_MSG_CTL];
    struct iovec iov;
    struct msghdr mh;
    fd_msg_init(&mh, &iov, buf, len, ctl, fds, n);
    ssize_t r;
    do
        r = sendmsg(sock, &mh, flags);
    while (r < 0 && errno == EINTR);
    if (r >= 0 && (size_t)r != len) {
        errno = EMSGSIZE;
        return -1;
    }
    return r < 0 ? -1 : 0;
}

ssize_t recv_fds(int sock, void *buf, size_t len, int *fds, size_t max, size_t *nfds, int *msg_flags, int flags)
{
    *nfds = 0;
    *msg_flags = 0;
    if (max > FD_MSG_MAX) {
        errno = EINVAL;
        return -1;
    }
    _Alignas(struct cmsghdr) char ctl[FD_MSG_CTL];
    struct iovec iov = {buf, len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    ssize_t n;
    do
        n = recvmsg(sock, &mh, flags);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t j = 0; j < k; j++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + j * sizeof(int), sizeof fd);
            if (*nfds < max)
                fds[(*nfds)++] = fd;
            else
                close(fd);
        }
    }
    *msg_flags = mh.msg_flags;
    return n;
}

DIR *opendir_dup(int fd)
{
    int dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (dup < 0)
        return NULL;
    DIR *d = fdopendir(dup);
    if (!d) {
        int e = errno;
        close(dup);
        errno = e;
        return NULL;
    }
    rewinddir(d);
    return d;
}
