// SPDX-License-Identifier: Apache-2.0
/* The floor of a creation served through a seccomp user notification (bench/creation.sh,
 * README "The creation control"): a child creates N files with openat(O_CREAT|O_EXCL)
 * in DIR, under a filter that sends openat to its parent, which
 *   none      (no filter: the bare cost)
 *   continue  answers SECCOMP_USER_NOTIF_FLAG_CONTINUE (the round trip alone; cordon
 *             never does this after reading the command's memory)
 *   addfd     reads the path, opens the file itself and hands it back with
 *             SECCOMP_IOCTL_NOTIF_ADDFD | SECCOMP_ADDFD_FLAG_SEND (what cordon's PID 1
 *             does, less the path walk and the decision)
 *   pin       as addfd, with both held on the parent's CPU for the hand-back (as
 *             cordon's respond_fd does: 2 sched_getaffinity, 4 sched_setaffinity)
 * and prints the microseconds per creation.
 *
 *   cc -O2 -o notiffloor bench/notiffloor.c && ./notiffloor MODE DIR [N]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum mode { NONE, CONTINUE, ADDFD, PIN };

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void die(const char *what)
{
    perror(what);
    exit(2);
}

static void child(enum mode m, int n, int report)
{
    int lfd = -1;
    if (m != NONE) {
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog p = {sizeof f / sizeof f[0], f};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            die("PR_SET_NO_NEW_PRIVS");
        lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &p);
        if (lfd < 0)
            die("seccomp");
    }
    if (write(report, &lfd, sizeof lfd) != sizeof lfd)
        die("write");
    char go;
    if (read(report, &go, 1) != 1) /* the parent has the listener */
        die("read");
    double t0 = now_us();
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%06d", i);
        int fd = openat(AT_FDCWD, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0)
            die("openat");
        close(fd);
    }
    double t1 = now_us();
    printf("%s: %d creations, %.2f us each\n",
           m == NONE       ? "none"
           : m == CONTINUE ? "continue"
           : m == ADDFD    ? "addfd"
                           : "pin",
           n, (t1 - t0) / n);
    fflush(stdout);
    _exit(0);
}

static void serve(enum mode m, int l, int pidfd, int dir)
{
    for (;;) {
        struct pollfd p[2] = {{.fd = l, .events = POLLIN}, {.fd = pidfd, .events = POLLIN}};
        if (poll(p, 2, -1) < 0 && errno != EINTR)
            die("poll");
        if (p[1].revents)
            return;
        struct seccomp_notif req;
        memset(&req, 0, sizeof req);
        if (ioctl(l, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
            continue;
        struct seccomp_notif_resp resp = {.id = req.id};
        if (m == CONTINUE) {
            resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
            (void)ioctl(l, SECCOMP_IOCTL_NOTIF_SEND, &resp);
            continue;
        }
        char path[64] = "";
        struct iovec lo = {path, sizeof path - 1}, ro = {(void *)(uintptr_t)req.data.args[1], sizeof path - 1};
        int fd = -1;
        if (process_vm_readv(req.pid, &lo, 1, &ro, 1, 0) > 0)
            fd = openat(dir, path, (int)req.data.args[2] | O_CLOEXEC, (mode_t)req.data.args[3]);
        if (fd < 0) {
            resp.error = -(errno ? errno : EFAULT);
            (void)ioctl(l, SECCOMP_IOCTL_NOTIF_SEND, &resp);
            continue;
        }
        struct seccomp_notif_addfd a = {
            .id = req.id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (unsigned)fd, .newfd_flags = O_CLOEXEC};
        cpu_set_t one, mine, theirs;
        int cpu = sched_getcpu();
        bool pinned = false;
        if (m == PIN && cpu >= 0 && sched_getaffinity(0, sizeof mine, &mine) == 0 &&
            sched_getaffinity((pid_t)req.pid, sizeof theirs, &theirs) == 0) {
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            if (sched_setaffinity((pid_t)req.pid, sizeof one, &one) == 0) {
                pinned = true;
                (void)sched_setaffinity(0, sizeof one, &one);
            }
        }
        (void)ioctl(l, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
        if (pinned) {
            (void)sched_setaffinity((pid_t)req.pid, sizeof theirs, &theirs);
            (void)sched_setaffinity(0, sizeof mine, &mine);
        }
        close(fd);
    }
}

int main(int argc, char **argv)
{
    static const char *const names[] = {"none", "continue", "addfd", "pin"};
    if (argc < 3) {
        fprintf(stderr, "usage: %s none|continue|addfd|pin DIR [N]\n", argv[0]);
        return 2;
    }
    int m = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(argv[1], names[i]) == 0)
            m = i;
    int n = argc > 3 ? atoi(argv[3]) : 10000;
    if (m < 0 || n <= 0) {
        fprintf(stderr, "%s: unknown mode %s, or N not a positive number\n", argv[0], argv[1]);
        return 2;
    }
    if (chdir(argv[2]) < 0)
        die(argv[2]);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        die("socketpair");
    pid_t c = fork();
    if (c < 0)
        die("fork");
    if (c == 0) {
        close(sv[0]);
        child((enum mode)m, n, sv[1]);
    }
    close(sv[1]);
    int lfd;
    if (read(sv[0], &lfd, sizeof lfd) != sizeof lfd)
        die("read");
    int pidfd = (int)syscall(SYS_pidfd_open, c, 0);
    if (pidfd < 0)
        die("pidfd_open");
    int l = m == NONE ? -1 : (int)syscall(SYS_pidfd_getfd, pidfd, lfd, 0);
    if (m != NONE && l < 0)
        die("pidfd_getfd");
    int dir = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        die(".");
    if (write(sv[0], "g", 1) != 1)
        die("write");
    if (m != NONE)
        serve((enum mode)m, l, pidfd, dir);
    int st;
    if (waitpid(c, &st, 0) < 0)
        die("waitpid");
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
