// SPDX-License-Identifier: Apache-2.0
/* --isolation landlock: the supervisor that stands in for PID 1 when there are no
 * namespaces.  It is a child subreaper, so that whatever the command leaves behind
 * (daemons, double forks) is reparented to it and killed when the command exits; it dies
 * with cordon, and the command dies with it (its parent-death signal). */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "confine/caps.h"
#include "confine/landlock.h"
#include "supervise/launch.h"
#include "supervise/report.h"
#include "supervise/signals.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/trace.h"

pid_t reaper_clone(int cgroup_fd, int *pidfd, cordon_error *err)
{
    struct clone_args args = {0};
    args.flags = CLONE_PIDFD;
    args.pidfd = (uint64_t)(uintptr_t)pidfd;
    args.exit_signal = 0; /* reaped through the pidfd: no SIGCHLD for the caller */
    if (cgroup_fd >= 0) {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = (uint64_t)cgroup_fd;
    }
    long pid = syscall(SYS_clone3, &args, sizeof args);
    if (pid < 0 && errno == ENOSYS && cgroup_fd < 0) /* clone3 refused by a seccomp filter */
        pid = syscall(SYS_clone, (unsigned long)CLONE_PIDFD, 0UL, pidfd, 0UL, 0UL);
    if (pid < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot start the supervisor (clone)");
    return (pid_t)pid;
}

/* Our children's pids, from /proc/self/task/TID/children (CONFIG_PROC_CHILDREN), or
 * else by scanning /proc for processes whose parent we are; -1 when neither works.
 * Allocates nothing (this is a copy of a possibly multi-threaded caller). */
static int children(pid_t *out, int max)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)syscall(SYS_gettid));
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n >= 0) {
            buf[n] = '\0';
            int k = 0;
            for (char *p = buf; *p && k < max;) {
                char *end;
                long v = strtol(p, &end, 10);
                if (end == p)
                    break;
                out[k++] = (pid_t)v;
                p = end;
            }
            return k;
        }
    }
    int dfd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    pid_t self = getpid();
    int k = 0;
    uint64_t dents[1024]; /* aligned for the records */
    long nread;
    while (k < max && (nread = syscall(SYS_getdents64, dfd, dents, sizeof dents)) > 0) {
        for (long off = 0; off < nread && k < max;) {
            struct raw_dirent {
                uint64_t d_ino;
                int64_t d_off;
                unsigned short d_reclen;
                unsigned char d_type;
                char d_name[];
            } *d = (struct raw_dirent *)((char *)dents + off);
            off += d->d_reclen;
            if (d->d_name[0] < '1' || d->d_name[0] > '9')
                continue;
            snprintf(path, sizeof path, "/proc/%s/stat", d->d_name);
            int sf = open(path, O_RDONLY | O_CLOEXEC);
            if (sf < 0)
                continue;
            ssize_t n = read(sf, buf, sizeof buf - 1);
            close(sf);
            if (n <= 0)
                continue;
            buf[n] = '\0';
            char *rp = strrchr(buf, ')'); /* "pid (comm) S ppid ...": comm may hold anything */
            if (!rp || rp[1] != ' ' || !rp[2] || rp[3] != ' ')
                continue;
            if ((pid_t)strtol(rp + 4, NULL, 10) == self)
                out[k++] = (pid_t)strtol(buf, NULL, 10);
        }
    }
    close(dfd);
    return k;
}

/* Kill everything below us: our children, and whatever is reparented to us (we are a
 * subreaper) as they die, until nothing is left. */
void reaper_kill_descendants(void)
{
    for (;;) {
        pid_t kids[512];
        int n = children(kids, 512);
        for (int i = 0; i < n; i++)
            kill(kids[i], SIGKILL);
        /* Wait for one to die (its own children are ours by then), then list again. */
        pid_t w = waitpid(-1, NULL, 0);
        if (w < 0 && errno == ECHILD)
            return;
        while (waitpid(-1, NULL, WNOHANG) > 0)
            ;
    }
}

/* The command's process installed its filter before the exec and passed the listener
 * (creation.h); nothing came when it failed first (its report says why). */
static int take_listener(launch *l, cordon_error *err)
{
    close(l->cc_sock[1]);
    char byte;
    char ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {&byte, 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    if (recvmsg(l->cc_sock[0], &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) == 1) {
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(&l->cc->listener, CMSG_DATA(cm), sizeof(int));
    }
    close(l->cc_sock[0]);
    return l->cc->listener >= 0 ? pid1_check_listener(l->cc->listener, err) : 0;
}

/* The supervisor dies with cordon, but not at once: with no PID namespace, what the
 * command started (a double fork, a daemon) would outlive a SIGKILL of the supervisor,
 * reparented to the host's init.  So cordon's death is a signal it reads, kills every
 * descendant on, and then exits (report_supervise).  SIGKILL until it is armed. */
static void tie_to_cordon(launch *l)
{
    cordon_error err = {0};
    if (launch_tie_to_cordon(l, CORDON_STAGE_SUPERVISE, &err) < 0)
        launch_fail(l, &err);
    sigset_t gone;
    sigemptyset(&gone);
    sigaddset(&gone, SIGNAL_CORDON_GONE);
    if (sigprocmask(SIG_BLOCK, &gone, NULL) < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "sigprocmask");
        launch_fail(l, &err);
    }
    if (prctl(PR_SET_PDEATHSIG, SIGNAL_CORDON_GONE, 0, 0, 0) < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "PR_SET_PDEATHSIG");
        launch_fail(l, &err);
    }
    /* cordon gone between the two: the pipe only it holds says so (nothing started yet) */
    struct pollfd lp = {.fd = l->life_fd, .events = POLLIN};
    if (poll(&lp, 1, 0) != 0 && (lp.revents & POLLHUP))
        _exit(CORDON_EXIT_SETUP);
}

/* The creation control (creation.h): this process serves it, on the host's paths, with
 * the host's /proc (whatever the plan shows the command), before the filter, which
 * refuses the socket pair it takes the listener through. */
static void prepare_creation_control(launch *l)
{
    cordon_error err = {0};
    if (!l->cc)
        return;
    if (l->scratch.proc_fd < 0 &&
        (l->scratch.proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        err_set(&err, CORDON_STAGE_CONFINE, errno, "cannot open /proc for the creation control");
        launch_fail(l, &err);
    }
    if (cc_setup(l->cc, l->plan, &l->scratch, &err) < 0)
        launch_fail(l, &err);
    if (!l->cc->nested && socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, l->cc_sock) < 0) {
        err_set(&err, CORDON_STAGE_CONFINE, errno, "socketpair");
        launch_fail(l, &err);
    }
}

/* The seccomp filter, for the supervisor and (inherited) the command, and the
 * supervisor's own Landlock domain. */
static void confine_reaper(launch *l)
{
    cordon_error err = {0};
    /* Without a user namespace there is no CAP_SYS_ADMIN to stand in for no_new_privs. */
    if (set_no_new_privs(&err) < 0 || confine_filter(&l->confine, &err) < 0)
        launch_fail(l, &err);
    /* confine/llonly.h: the command's process adds its own domain below it, and the
     * supervisor acts for it by the plan's rules. */
    if (l->ll_sup_fd >= 0) {
        landlock_prep sup = {.ruleset_fd = l->ll_sup_fd};
        if (landlock_apply(&sup, &err) < 0)
            launch_fail(l, &err);
    }
}

/* Once the command CMD runs: not dumpable (not ptrace-able by the command, /proc/PID
 * not readable), no capabilities, no descriptor but its own (SFD, the creation
 * control's), and the standard ones onto NULL_FD when there is one: or no run. */
static void lock_down(launch *l, pid_t cmd, int null_fd, int sfd)
{
    cordon_error err = {0};
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        err_set(&err, CORDON_STAGE_CONFINE, errno, "PR_SET_DUMPABLE");
        kill(cmd, SIGKILL);
        launch_fail(l, &err);
    }
    pty_close_slave(&l->pty);
    for (int fd = 0; null_fd >= 0 && fd < 3; fd++)
        if (dup2(null_fd, fd) < 0) {
            err_set(&err, CORDON_STAGE_SUPERVISE, errno, "cannot let go of the command's standard descriptors");
            kill(cmd, SIGKILL);
            launch_fail(l, &err);
        }
    if (l->cc && !l->cc->nested && take_listener(l, &err) < 0) {
        kill(cmd, SIGKILL);
        launch_fail(l, &err);
    }
    if (caps_drop_all(&err) < 0) {
        kill(cmd, SIGKILL);
        launch_fail(l, &err);
    }
    int keep[12];
    size_t nk = launch_supervise_fds(l, keep);
    keep[nk++] = sfd;
    if (l->cc) {
        keep[nk++] = l->cc->listener;
        keep[nk++] = l->cc->pw.proc_fd;
        keep[nk++] = l->cc->pw.root_fd;
    }
    if (close_fds_except(keep, nk) < 0) {
        err_set(&err, CORDON_STAGE_CONFINE, errno, "cannot close the supervisor's descriptors");
        kill(cmd, SIGKILL);
        launch_fail(l, &err);
    }
}

void reaper_main(launch *l)
{
    cordon_error err = {0};
    sigset_t fwd;
    signals_forwarded(&fwd);
    sigaddset(&fwd, SIGCHLD);
    sigaddset(&fwd, SIGNAL_CORDON_GONE);
    tie_to_cordon(l);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "cannot become the command's reaper");
        launch_fail(l, &err);
    }
    if (limits_enter(&l->limits, &err) < 0)
        launch_fail(l, &err);
    if (l->pty.on && pty_open_sandbox(&l->pty, "/dev/ptmx", &err) < 0)
        launch_fail(l, &err);
    if (l->pty.on) { /* job control reaches the command (pty.h, pty_lead) */
        if (pty_lead(&l->pty, &err) < 0)
            launch_fail(l, &err);
        l->pty_group = true;
    }
    prepare_creation_control(l);
    /* A session's --keep: the stand-in outlives the command, so it must not hold the
     * command's stdin, stdout and stderr (a client reading them to the end would wait for
     * what the command left); /dev/null instead, opened before Landlock. */
    int null_fd = -1;
    if (l->keep && (null_fd = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "cannot open /dev/null");
        launch_fail(l, &err);
    }
    int sfd = signalfd(-1, &fwd, SFD_CLOEXEC);
    if (sfd < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "signalfd");
        launch_fail(l, &err);
    }
    confine_reaper(l);

    pid_t cmd = launch_start_command(l);
    if (cmd < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "cannot start the command (clone)");
        launch_fail(l, &err);
    }
    lock_down(l, cmd, null_fd, sfd);
    report_supervise(l, sfd, cmd, reaper_kill_descendants);
}
