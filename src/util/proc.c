// SPDX-License-Identifier: Apache-2.0
#include "util/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/fdutil.h"

pid_t proc_fork(int *pidfd)
{
    struct clone_args args;
    memset(&args, 0, sizeof args);
    if (pidfd) {
        args.flags = CLONE_PIDFD;
        args.pidfd = (uint64_t)(uintptr_t)pidfd;
    }
    args.exit_signal = 0; /* no SIGCHLD for the caller */
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0 && errno == ENOSYS) /* clone3 refused by a seccomp filter (cordon's own) */
        pid = syscall(SYS_clone, pidfd ? (unsigned long)CLONE_PIDFD : 0UL, 0UL, pidfd, 0UL, 0UL);
    return (pid_t)pid;
}

int proc_reap(int pidfd, siginfo_t *info)
{
    siginfo_t scratch; /* (a NULL infop is allowed, but valgrind flags it) */
    int r;
    do
        r = waitid(P_PIDFD, (id_t)pidfd, info ? info : &scratch, WEXITED | __WALL);
    while (r < 0 && errno == EINTR);
    return r;
}

int proc_reap_pid(pid_t pid)
{
    pid_t r;
    do
        r = waitpid(pid, NULL, __WALL);
    while (r < 0 && errno == EINTR);
    return r < 0 ? -1 : 0;
}

int proc_signal(int pidfd, int sig)
{
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

ssize_t proc_status_read(const char *path, char *buf, size_t n)
{
    if (n == 0) {
        errno = EINVAL;
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    ssize_t got = read_all(fd, buf, n - 1);
    int e = errno;
    close(fd);
    if (got < 0) {
        errno = e;
        return -1;
    }
    buf[got] = '\0';
    return got;
}

long proc_status_field(const char *text, const char *name, int base)
{
    size_t n = strlen(name);
    for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, name, n) == 0 && l[n] == ':')
            return strtol(l + n + 1, NULL, base);
    return -1;
}
