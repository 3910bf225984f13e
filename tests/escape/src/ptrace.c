// SPDX-License-Identifier: Apache-2.0
/* ptrace: reach into PID 1 (cordon's reaper) and into host processes.
 *
 *   ptrace [HOSTPID...]
 *
 * PTRACE_ATTACH and PTRACE_SEIZE of PID 1, process_vm_readv of it, /proc/1/mem,
 * /proc/1/environ, pidfd_getfd of its descriptors; for each HOSTPID (a pid on the host),
 * kill(pid, 0) and PTRACE_ATTACH. Positive control: the same PTRACE_ATTACH, /proc/PID/mem
 * and pidfd_getfd work on a child of our own. */
#include "esc.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>

static long pidfd_getfd_of(pid_t pid, int fd)
{
    int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0)
        return -1;
    long r = syscall(SYS_pidfd_getfd, pfd, fd, 0);
    int e = errno;
    close(pfd);
    if (r >= 0)
        close((int)r);
    errno = e;
    return r;
}

static void against(pid_t pid, const char *who)
{
    char label[64], p[64], buf[256];
    snprintf(label, sizeof label, "%s_attach", who);
    if (report(label, ptrace(PTRACE_ATTACH, pid, 0, 0)) == 0) {
        waitpid(pid, NULL, __WALL);
        ptrace(PTRACE_DETACH, pid, 0, 0);
    }
    snprintf(label, sizeof label, "%s_seize", who);
    if (report(label, ptrace(PTRACE_SEIZE, pid, 0, 0)) == 0)
        ptrace(PTRACE_DETACH, pid, 0, 0);
    struct iovec local = {.iov_base = buf, .iov_len = 8};
    struct iovec remote = {.iov_base = (void *)0x400000, .iov_len = 8};
    snprintf(label, sizeof label, "%s_vm_readv", who);
    long r = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    /* EFAULT means the permission check passed and only the address was wrong */
    report(label, r < 0 && errno == EFAULT ? 0 : r);
    snprintf(p, sizeof p, "/proc/%d/mem", (int)pid);
    snprintf(label, sizeof label, "%s_mem", who);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    report(label, fd);
    if (fd >= 0)
        close(fd);
    snprintf(label, sizeof label, "%s_getfd", who);
    /* any descriptor at all: 0, 1, 2 or cordon's own */
    long g = -1;
    int last = 0;
    for (int i = 0; i < 16 && g < 0; i++) {
        g = pidfd_getfd_of(pid, i);
        if (g < 0 && errno != EBADF)
            last = errno;
    }
    if (g < 0 && last)
        errno = last;
    report(label, g);
}

int main(int argc, char **argv)
{
    /* PID 1 first: the earliest moment after the command started */
    against(1, "pid1");
    int fd = open("/proc/1/environ", O_RDONLY | O_CLOEXEC);
    char buf[64];
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
    if (n == 0)
        printf("pid1_environ EMPTY\n");
    else
        report("pid1_environ", n);
    if (fd >= 0)
        close(fd);

    /* positive control: a child of our own can be traced */
    pid_t child = fork();
    if (child == 0) {
        for (;;)
            pause();
    }
    against(child, "control_child");
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);

    for (int i = 1; i < argc; i++) {
        pid_t pid = (pid_t)atoi(argv[i]);
        char label[64];
        snprintf(label, sizeof label, "host_%s_kill0", argv[i]);
        report(label, kill(pid, 0));
        snprintf(label, sizeof label, "host_%s_attach", argv[i]);
        report(label, ptrace(PTRACE_ATTACH, pid, 0, 0));
    }
    return 0;
}
