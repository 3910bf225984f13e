// SPDX-License-Identifier: Apache-2.0
/* Probe for tests/e2e/test_confine.sh: make system calls and print, one line each,
 * "NAME RESULT" where RESULT is "ok" or the errno's name.  Arguments are chosen so
 * that an allowed call fails harmlessly (EBADF, EFAULT, EINVAL, ...) or succeeds
 * without effect, and a call refused by seccomp fails with EPERM (or ENOSYS).
 *
 *   confine_probe NAME...      (no NAME: every probe)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup    425
#define SYS_io_uring_enter    426
#define SYS_io_uring_register 427
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif

static long sys_result(long r)
{
    return r < 0 ? -errno : r;
}

/* A call made in a child process (so that a successful unshare or clone does not
 * change the probe); returns 0 or -errno. */
static long in_child(long (*fn)(void))
{
    int p[2];
    if (pipe(p) < 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) {
        long r = fn();
        if (write(p[1], &r, sizeof r) != (ssize_t)sizeof r)
            _exit(1);
        _exit(0);
    }
    close(p[1]);
    long r = -EIO;
    if (read(p[0], &r, sizeof r) != (ssize_t)sizeof r)
        r = -EIO;
    close(p[0]);
    waitpid(pid, NULL, 0);
    return r;
}

static long do_unshare_user(void)
{
    return unshare(CLONE_NEWUSER) < 0 ? -errno : 0;
}

static long do_clone_user(void)
{
    long r = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (r == 0)
        _exit(0);
    if (r > 0) {
        waitpid((pid_t)r, NULL, 0);
        return 0;
    }
    return -errno;
}

static long do_unshare_cgroup(void)
{
    return unshare(CLONE_NEWUSER | CLONE_NEWCGROUP) < 0 ? -errno : 0;
}

static long do_clone3(void)
{
    /* size 0 is invalid: EINVAL when the call is allowed */
    return sys_result(syscall(SYS_clone3, NULL, 0));
}

static int devnull(void)
{
    return open("/dev/null", O_RDWR | O_CLOEXEC);
}

static long unix_traffic(void)
{
    /* socketpair, send, sendto, setsockopt, getsockname, recv on Unix sockets */
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    int one = 1;
    if (setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0)
        return -errno;
    int buf = 1 << 16;
    if (setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf) < 0)
        return -errno;
    if (send(sv[0], "a", 1, 0) != 1 || sendto(sv[0], "b", 1, 0, NULL, 0) != 1)
        return -errno;
    char c[2];
    if (recv(sv[1], c, 1, 0) != 1 || recv(sv[1], c + 1, 1, 0) != 1 || c[0] != 'a' || c[1] != 'b')
        return -EIO;
    struct sockaddr_un a;
    socklen_t al = sizeof a;
    if (getsockname(sv[0], (struct sockaddr *)&a, &al) < 0)
        return -errno;
    /* a bound (abstract) datagram socket: sendto with an address */
    int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    snprintf(a.sun_path + 1, sizeof a.sun_path - 1, "cordon-probe-%d", (int)getpid());
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
    if (bind(s, (struct sockaddr *)&a, len) < 0)
        return -errno;
    if (sendto(sv[0], "c", 1, 0, (struct sockaddr *)&a, len) != 1 || recv(s, c, 1, 0) != 1 || c[0] != 'c')
        return -errno ? -errno : -EIO;
    al = sizeof a;
    if (getsockname(s, (struct sockaddr *)&a, &al) < 0)
        return -errno;
    close(s);
    close(sv[0]);
    close(sv[1]);
    return 0;
}

static long sock(long family)
{
    long r = syscall(SYS_socket, family, (long)SOCK_STREAM | SOCK_CLOEXEC, 0L);
    if (r >= 0) {
        close((int)r);
        return 0;
    }
    return -errno;
}

static long sock_dgram(int family)
{
    int r = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (r >= 0) {
        close(r);
        return 0;
    }
    return -errno;
}

static long ioctl64(unsigned long req)
{
    int fd = devnull();
    char c = 'x';
    long r = syscall(SYS_ioctl, fd, req, &c);
    int e = errno;
    close(fd);
    return r < 0 ? -e : r;
}

static long pers(unsigned long v)
{
    long old = syscall(SYS_personality, 0xffffffffUL);
    long r = syscall(SYS_personality, v);
    if (r < 0)
        return -errno;
    if (old >= 0)
        syscall(SYS_personality, (unsigned long)old);
    return 0;
}

static long probe(const char *n)
{
    if (!strcmp(n, "io_uring_setup"))
        return sys_result(syscall(SYS_io_uring_setup, 0, NULL));
    if (!strcmp(n, "io_uring_enter"))
        return sys_result(syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0));
    if (!strcmp(n, "io_uring_register"))
        return sys_result(syscall(SYS_io_uring_register, -1, 0, NULL, 0));
    if (!strcmp(n, "socket_vsock"))
        return sock(AF_VSOCK);
    if (!strcmp(n, "socket_vsock_hi"))
        return sock((long)((1UL << 32) | AF_VSOCK));
    if (!strcmp(n, "socket_packet"))
        return sock_dgram(AF_PACKET);
    if (!strcmp(n, "socket_alg"))
        return sock(AF_ALG);
    if (!strcmp(n, "socket_bluetooth"))
        return sock(AF_BLUETOOTH);
    if (!strcmp(n, "socket_unix"))
        return sock(AF_UNIX);
    if (!strcmp(n, "socket_inet"))
        return sock(AF_INET);
    if (!strcmp(n, "socket_inet6"))
        return sock(AF_INET6);
    if (!strcmp(n, "socket_netlink"))
        return sock_dgram(AF_NETLINK);
    if (!strcmp(n, "unix_traffic"))
        return unix_traffic();
    if (!strcmp(n, "tiocsti"))
        return ioctl64(TIOCSTI);
    if (!strcmp(n, "tiocsti_hi"))
        return ioctl64((1UL << 32) | TIOCSTI);
    if (!strcmp(n, "tioclinux"))
        return ioctl64(TIOCLINUX);
    if (!strcmp(n, "tcgets"))
        return ioctl64(TCGETS); /* /dev/null is no terminal: ENOTTY */
    if (!strcmp(n, "keyctl"))
        return sys_result(syscall(SYS_keyctl, 9999L, 0L, 0L, 0L, 0L));
    if (!strcmp(n, "add_key"))
        return sys_result(syscall(SYS_add_key, NULL, NULL, NULL, 0L, 0L));
    if (!strcmp(n, "request_key"))
        return sys_result(syscall(SYS_request_key, NULL, NULL, NULL, 0L));
    if (!strcmp(n, "userfaultfd"))
        return sys_result(syscall(SYS_userfaultfd, ~0L));
    if (!strcmp(n, "perf_event_open"))
        return sys_result(syscall(SYS_perf_event_open, NULL, 0L, -1L, -1L, 0L));
    if (!strcmp(n, "kexec_load"))
        return sys_result(syscall(SYS_kexec_load, 0L, 0L, NULL, 0L));
    if (!strcmp(n, "kexec_file_load"))
        return sys_result(syscall(SYS_kexec_file_load, -1L, -1L, 0L, NULL, 0L));
    if (!strcmp(n, "bpf"))
        return sys_result(syscall(SYS_bpf, -1L, NULL, 0L));
    if (!strcmp(n, "syslog"))
        return sys_result(syscall(SYS_syslog, 10L, NULL, 0L));
    if (!strcmp(n, "uselib"))
        return sys_result(syscall(SYS_uselib, NULL));
    if (!strcmp(n, "acct"))
        return sys_result(syscall(SYS_acct, NULL));
    if (!strcmp(n, "modify_ldt"))
        return sys_result(syscall(SYS_modify_ldt, 0L, NULL, 0L));
    if (!strcmp(n, "quotactl"))
        return sys_result(syscall(SYS_quotactl, 0L, NULL, 0L, NULL));
    if (!strcmp(n, "move_pages"))
        return sys_result(syscall(SYS_move_pages, 0L, 0L, NULL, NULL, NULL, 0L));
    if (!strcmp(n, "migrate_pages"))
        return sys_result(syscall(SYS_migrate_pages, 0L, 0L, NULL, NULL));
    if (!strcmp(n, "mbind"))
        return sys_result(syscall(SYS_mbind, NULL, 0L, 0L, NULL, 0L, 0L));
    if (!strcmp(n, "get_mempolicy"))
        return sys_result(syscall(SYS_get_mempolicy, NULL, NULL, 0L, NULL, 0L));
    if (!strcmp(n, "set_mempolicy"))
        return sys_result(syscall(SYS_set_mempolicy, 0L, NULL, 0L));
    if (!strcmp(n, "open_by_handle_at"))
        return sys_result(syscall(SYS_open_by_handle_at, -1L, NULL, 0L));
    if (!strcmp(n, "init_module"))
        return sys_result(syscall(SYS_init_module, NULL, 0L, NULL));
    if (!strcmp(n, "personality_query"))
        return syscall(SYS_personality, 0xffffffffUL) < 0 ? -errno : 0;
    if (!strcmp(n, "personality_linux32"))
        return pers(PER_LINUX32);
    if (!strcmp(n, "personality_norandom"))
        return pers(ADDR_NO_RANDOMIZE);
    if (!strcmp(n, "personality_exec"))
        return pers(READ_IMPLIES_EXEC);
    if (!strcmp(n, "personality_bsd"))
        return pers(PER_BSD);
    if (!strcmp(n, "unshare_user"))
        return in_child(do_unshare_user);
    if (!strcmp(n, "clone_user"))
        return in_child(do_clone_user);
    if (!strcmp(n, "clone3"))
        return in_child(do_clone3);
    if (!strcmp(n, "unshare_cgroup"))
        return in_child(do_unshare_cgroup);
    if (!strcmp(n, "fsopen"))
        return sys_result(syscall(SYS_fsopen, "tmpfs", 0L));
    if (!strcmp(n, "open_tree"))
        return sys_result(syscall(SYS_open_tree, -1L, "", 0L));
    if (!strcmp(n, "create_in_fd0")) {
        /* stdin is a host directory the view does not show */
        int fd = openat(0, "created-by-probe", O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0)
            return -errno;
        close(fd);
        return 0;
    }
    return LONG_MIN;
}

static const char *const all[] = {
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "socket_vsock",
    "socket_vsock_hi",
    "socket_packet",
    "socket_alg",
    "socket_bluetooth",
    "socket_unix",
    "socket_inet",
    "socket_inet6",
    "socket_netlink",
    "unix_traffic",
    "tiocsti",
    "tiocsti_hi",
    "tioclinux",
    "tcgets",
    "keyctl",
    "add_key",
    "request_key",
    "userfaultfd",
    "perf_event_open",
    "kexec_load",
    "kexec_file_load",
    "bpf",
    "syslog",
    "uselib",
    "acct",
    "modify_ldt",
    "quotactl",
    "move_pages",
    "migrate_pages",
    "mbind",
    "get_mempolicy",
    "set_mempolicy",
    "open_by_handle_at",
    "init_module",
    "personality_query",
    "personality_linux32",
    "personality_norandom",
    "personality_exec",
    "personality_bsd",
    "unshare_user",
    "clone_user",
    "clone3",
    "unshare_cgroup",
    "fsopen",
    "open_tree",
};

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? (size_t)(argc - 1) : sizeof all / sizeof *all;
    for (size_t i = 0; i < n; i++) {
        const char *name = argc > 1 ? argv[i + 1] : all[i];
        long r = probe(name);
        if (r == LONG_MIN) {
            fprintf(stderr, "confine_probe: unknown probe %s\n", name);
            return 2;
        }
        const char *e = r >= 0 ? "ok" : strerrorname_np((int)-r);
        printf("%s %s\n", name, e ? e : "?");
    }
    return 0;
}
