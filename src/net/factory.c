// SPDX-License-Identifier: Apache-2.0
/* The network helper's socket factory (net/factory.h). */
#include "net/factory.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/fdutil.h"
#include "util/proc.h"

/* In the sandbox's user and network namespaces, outside its PID namespace: make
 * unconnected TCP sockets there, one per byte asked ('4' or '6': the family), and pass
 * them back. */
static __attribute__((noreturn)) void factory_main(int sock, int userns, int netns)
{
    /* dies with the helper, not ptrace-able from the sandbox's user namespace, holding
     * nothing but its socket: or it makes no socket */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        _exit(1);
    int err = 0;
    if (setns(userns, CLONE_NEWUSER) < 0 || setns(netns, CLONE_NEWNET) < 0)
        err = errno;
    close(userns);
    close(netns);
    if (close_fds_except(&sock, 1) < 0)
        _exit(1);
    for (;;) {
        char b;
        ssize_t r = read(sock, &b, 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            _exit(0);
        int32_t e = err;
        int fd = -1;
        if (!e) {
            fd = socket(b == '6' ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (fd < 0)
                e = errno;
        }
        union {
            struct cmsghdr align;
            char buf[CMSG_SPACE(sizeof(int))];
        } cb;
        memset(&cb, 0, sizeof cb);
        struct iovec iov = {.iov_base = &e, .iov_len = sizeof e};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
        if (fd >= 0) {
            m.msg_control = cb.buf;
            m.msg_controllen = sizeof cb.buf;
            struct cmsghdr *cm = &cb.align;
            cm->cmsg_level = SOL_SOCKET;
            cm->cmsg_type = SCM_RIGHTS;
            cm->cmsg_len = CMSG_LEN(sizeof(int));
            memcpy(CMSG_DATA(cm), &fd, sizeof fd);
        }
        while (sendmsg(sock, &m, MSG_NOSIGNAL) < 0 && errno == EINTR)
            ;
        if (fd >= 0)
            close(fd);
    }
}

int net_factory_spawn(int userns, int netns, int *pidfd)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return -1;
    pid_t pid = proc_fork(pidfd);
    if (pid < 0) {
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        close(sv[0]);
        factory_main(sv[1], userns, netns);
    }
    close(sv[1]);
    return sv[0];
}

void net_factory_stop(int *fd, int *pidfd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
    if (*pidfd < 0)
        return;
    struct pollfd pf = {.fd = *pidfd, .events = POLLIN};
    if (poll(&pf, 1, 200) <= 0)
        syscall(SYS_pidfd_send_signal, *pidfd, SIGKILL, NULL, 0);
    siginfo_t si;
    while (waitid(P_PIDFD, (id_t)*pidfd, &si, WEXITED | __WALL) < 0 && errno == EINTR)
        ;
    close(*pidfd);
    *pidfd = -1;
}
