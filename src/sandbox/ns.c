// SPDX-License-Identifier: Apache-2.0
#include "sandbox/ns.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/proc.h"

/* Read a small integer sysctl; -1 when absent. */
static long read_sysctl(const char *path)
{
    _cleanup_fd_ int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
}

const char *ns_userns_hint(void)
{
    if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == 0)
        return "unprivileged user namespaces are disabled: run `sudo sysctl -w "
               "kernel.unprivileged_userns_clone=1` (and persist it in /etc/sysctl.d)";
    if (read_sysctl("/proc/sys/user/max_user_namespaces") == 0)
        return "user namespaces are disabled (user.max_user_namespaces=0): run `sudo sysctl -w "
               "user.max_user_namespaces=15000`";
    if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == 1)
        return "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10 and later): install "
               "cordon with `meson install` or its Debian package, which install and load the "
               "profile /etc/apparmor.d/cordon that allows `userns` for it (or write it by hand: "
               "README, \"Where the kernel refuses\"), or run `sudo sysctl -w "
               "kernel.apparmor_restrict_unprivileged_userns=0`";
    return "the kernel refused to create user namespaces; inside a container this is usually "
           "its seccomp profile (Docker: --security-opt seccomp=unconfined, or a profile that "
           "allows clone/unshare with CLONE_NEWUSER); `cordon check` says more";
}

pid_t ns_clone(bool new_net, bool new_pid, int *pidfd, cordon_error *err)
{
    return ns_clone_into(new_net, new_pid, -1, pidfd, err);
}

pid_t ns_clone_into(bool new_net, bool new_pid, int cgroup_fd, int *pidfd, cordon_error *err)
{
    struct clone_args args = {0};
    args.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | CLONE_PIDFD |
                 (new_pid ? CLONE_NEWPID : 0) | (new_net ? CLONE_NEWNET : 0);
    args.pidfd = (uint64_t)(uintptr_t)pidfd;
    args.exit_signal = 0; /* reaped through the pidfd: no SIGCHLD for the caller (util/proc.h) */
    if (cgroup_fd >= 0) {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)cgroup_fd;
    }
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0 && errno == ENOSYS && cgroup_fd < 0) {
        /* Inside a cordon sandbox (or Docker) clone3 is refused with ENOSYS so that
         * seccomp can check clone(2)'s flags instead; a new cgroup namespace is refused
         * there, and the nested sandbox shares the outer one's. Fork-like: no stack. */
        unsigned long flags = (unsigned long)args.flags; /* exit signal 0 */
        pid = syscall(SYS_clone, flags, 0UL, pidfd, 0UL, 0UL);
        if (pid < 0 && errno == EPERM)
            pid = syscall(SYS_clone, flags & ~(unsigned long)CLONE_NEWCGROUP, 0UL, pidfd, 0UL, 0UL);
    }
    if (pid < 0) {
        int e = errno;
        if (e == EPERM || e == ENOSPC || e == EUSERS || e == EACCES)
            return err_opt(err, CORDON_STAGE_NAMESPACES, e, "isolation", "cannot create namespaces (%s)%s",
                           ns_userns_hint(), NS_ISOLATION_HINT);
        if (e == ENOSYS)
            return err_set(err, CORDON_STAGE_NAMESPACES, e,
                           "cannot create namespaces: this kernel has no clone3 (Linux 5.3 or "
                           "later is needed), or a seccomp filter refuses it (inside a cordon sandbox "
                           "that refuses nesting, or a container)");
        return err_set(err, CORDON_STAGE_NAMESPACES, e, "cannot create namespaces");
    }
    return (pid_t)pid;
}

static int write_file(const char *path, const char *data, cordon_error *err)
{
    _cleanup_fd_ int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, CORDON_STAGE_NAMESPACES, errno, "cannot open %s", path);
    if (write_all(fd, data, strlen(data)) < 0) {
        int e = errno; /* before ns_userns_hint() reads files */
        /* Mapping uid 0 needs a creator that held CAP_SETFCAP (Linux 5.12): root inside
         * a sandbox without capabilities, such as cordon's own, cannot nest one. */
        if (e == EPERM && strncmp(data, "0 ", 2) == 0 && strstr(path, "uid_map"))
            return err_set(err, CORDON_STAGE_NAMESPACES, e,
                           "cannot map uid 0 into a new user namespace: the kernel allows that only "
                           "to a process that holds CAP_SETFCAP, which root inside another sandbox "
                           "(such as a cordon sandbox run as root) does not; run the outer sandbox as "
                           "an unprivileged user to nest sandboxes");
        return err_opt(err, CORDON_STAGE_NAMESPACES, e, "isolation", "cannot write '%.*s' to %s (%s)%s",
                       (int)strcspn(data, "\n"), data, path, ns_userns_hint(), NS_ISOLATION_HINT);
    }
    return 0;
}

int ns_write_id_maps(uid_t uid, gid_t gid, cordon_error *err)
{
    char map[64];
    /* setgroups must be denied before an unprivileged gid_map write (user_namespaces(7));
     * it also keeps the command from dropping supplementary groups used as denials. */
    if (write_file("/proc/self/setgroups", "deny", err) < 0 && errno != ENOENT)
        return -1;
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if (write_file("/proc/self/uid_map", map, err) < 0)
        return -1;
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    return write_file("/proc/self/gid_map", map, err);
}

/* In the probe's child: what the sandbox needs of user namespaces, step by step. */
static void probe_child(uid_t uid, gid_t gid, int wfd)
{
    ns_probe r = {.step = NS_STEP_CREATE};
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
        r.errnum = errno;
    } else {
        cordon_error e;
        r.step = NS_STEP_MAP;
        if (ns_write_id_maps(uid, gid, &e) < 0) {
            r.errnum = e.errnum ? e.errnum : EPERM;
        } else {
            /* Ubuntu's AppArmor restriction lets the namespace be made but not used: mount. */
            r.step = NS_STEP_MOUNT;
            int fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
            if (fs < 0 || syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                r.errnum = errno;
            else
                r.step = NS_STEP_OK;
        }
    }
    (void)write_all(wfd, &r, sizeof r);
    _exit(0);
}

int ns_probe_userns(int timeout_ms, ns_probe *out)
{
    *out = (ns_probe){.step = NS_STEP_CREATE, .errnum = EAGAIN};
    uid_t uid = geteuid();
    gid_t gid = getegid();
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    int pidfd = -1;
    pid_t pid = proc_fork(&pidfd);
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        errno = e;
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        probe_child(uid, gid, p[1]);
    }
    close(p[1]);
    struct pollfd pf = {.fd = p[0], .events = POLLIN};
    int n;
    do
        n = poll(&pf, 1, timeout_ms);
    while (n < 0 && errno == EINTR);
    ns_probe r;
    bool got = n > 0 && read_all(p[0], &r, sizeof r) == (ssize_t)sizeof r;
    close(p[0]);
    if (!got)
        proc_signal(pidfd, SIGKILL); /* it hangs (or died): the kernel did not answer */
    proc_reap(pidfd, NULL);
    close(pidfd);
    if (!got) {
        out->errnum = ETIMEDOUT;
        return 0;
    }
    *out = r;
    return 0;
}

const char *ns_step_name(ns_step s)
{
    switch (s) {
    case NS_STEP_CREATE: return "creating one";
    case NS_STEP_MAP: return "writing its id maps";
    case NS_STEP_MOUNT: return "mounting inside one";
    case NS_STEP_OK: return "none";
    }
    return "?";
}

const char *ns_userns_unusable(void)
{
    ns_probe r;
    if (ns_probe_userns(2000, &r) < 0)
        return ns_userns_hint();
    return r.step == NS_STEP_OK ? NULL : ns_userns_hint();
}
