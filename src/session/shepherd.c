// SPDX-License-Identifier: Apache-2.0
/* A command's shepherd, and the command's process (session.h).
 *
 * PID 1 clones the shepherd into its own address space (CLONE_VM: no page tables to
 * copy, whatever the size of the process the session was cloned from) on a stack of its
 * own, ahead of the command: a spare.  The shepherd becomes a child subreaper, keeps
 * only its three descriptors, and clones the command's process with CLONE_VM |
 * CLONE_VFORK, so that it resumes only once that process has exec'd (or died).  The
 * command's process does, through child_confine (supervise/child.c), everything that does
 * not depend on the command -- a new session (for a command with a terminal, made for it:
 * a process group of its own in the session the shepherd leads), no capabilities,
 * no_new_privs, the rlimits, the command's own seccomp filter with its listener for the
 * creation control, handed to PID 1 -- says so, and waits in recvmsg for its command: the descriptors come on its
 * `go` socket (the client's connection, stdin, stdout, stderr), the rest (argv, envp,
 * working directory, umask, signal mask) in the shared sess_start.  It then runs
 * child_start (terminal, signal mask, working directory, exec).
 *
 * Whenever one of them uses the C library, PID 1 waits in raw system calls (raw.h), and
 * the other way round: the shepherd, once the command runs, and the command's process
 * while it waits, make raw system calls only.
 *
 * The shepherd reaps whatever is reparented to it.  When the command's own process ends,
 * it tells PID 1 the status and, unless the command keeps what it left (--keep), exits at
 * once, with 0 when nothing is left below it and 1 when something is (PID 1 then sweeps
 * it).  With --keep it reaps on until nothing is left. */
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/raw.h"
#include "session/session.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/trace.h"

int sess_shepherd_clone_flags(void)
{
    return SESS_SHARED_VM ? CLONE_VM | SIGCHLD : SIGCHLD;
}

static void tell(int fd, const sess_shep_msg *m)
{
    long r;
    do
        r = RAW(SYS_write, fd, m, sizeof *m);
    while (r == -EINTR);
}

/* ------------------------------------------------------------------------------------ */
/* the command's process: PID 1 and the shepherd wait while it uses the C library */

static int cmd_main(void *arg)
{
    sess_start *st = arg;
    /* PID 1 keeps CAP_SYS_PTRACE in its permitted set (the creation control): not the
     * command.  Everything else (the bounding set, the securebits, no_new_privs) PID 1
     * already gave up for both. */
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof none);
    if (syscall(SYS_capset, &hdr, none) < 0) {
        cordon_error e = {0};
        err_set(&e, CORDON_STAGE_CONFINE, errno, "cannot drop capabilities");
        report_fail(st->cl.report_fd, &e);
    }
    child_confine(&st->cl);
    int go = st->go_c, shep_w = st->shep_w;

    /* Ready.  From here until the descriptors come, PID 1 runs: raw calls only. */
    sess_shep_msg ready = {.slot = -1, .kind = SESS_SHEP_READY};
    tell(shep_w, &ready);
    int fds[4] = {-1, -1, -1, -1};
    char byte;
    _Alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof fds)];
    struct iovec iov = {&byte, 1};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    long n;
    do
        n = RAW(SYS_recvmsg, go, &mh, MSG_CMSG_CLOEXEC);
    while (n == -EINTR);
    struct cmsghdr *cm = n == 1 ? CMSG_FIRSTHDR(&mh) : NULL;
    if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len != CMSG_LEN(sizeof fds))
        raw_exit(0); /* retired (PID 1 closed its end), or garbled: never a command */
    for (size_t i = 0; i < 4; i++) {
        const unsigned char *p = CMSG_DATA(cm) + i * sizeof(int);
        fds[i] = p[0] | p[1] << 8 | p[2] << 16 | p[3] << 24; /* (no memcpy yet: raw only) */
    }

    /* PID 1 waits now, until the exec */
    st->cl.report_fd = fds[0];
    for (int i = 0; i < 3; i++)
        if (dup2(fds[1 + i], i) < 0) {
            cordon_error e = {0};
            err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot give the command its standard streams");
            report_fail(fds[0], &e);
        }
    for (int i = 1; i < 4; i++)
        if (fds[i] > 2)
            close(fds[i]);
    umask(st->umask);
    TRACE("cmd-process");
    child_start(&st->cl, &st->mask);
}

/* ------------------------------------------------------------------------------------ */
/* the shepherd */

int sess_shepherd_main(void *arg)
{
    sess_start *st = arg;
    int shep_w = st->shep_w;
    sess_shep_msg m = {.slot = -1, .kind = SESS_SHEP_STARTED};

    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    prctl(PR_SET_NAME, "cordon-shepherd", 0, 0, 0);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
        m.value = -errno;
        tell(shep_w, &m);
        raw_exit(SESS_SHEP_FAILED);
    }
    /* A command with a terminal: the shepherd leads its session, the terminal controlling
     * it, and the command's process makes a process group of its own there (child.c,
     * take_terminal); a parent in the same session keeps that group from being orphaned,
     * as the kernel discards the terminal's SIGTSTP to an orphaned group (^Z would do
     * nothing).  The shepherd's signals stay blocked: the terminal's hang-up is nothing
     * to it. */
    if (st->tty_lead >= 0 && (setsid() < 0 || ioctl(st->tty_lead, TIOCSCTTY, 0) < 0)) {
        m.value = -errno;
        tell(shep_w, &m);
        raw_exit(SESS_SHEP_FAILED);
    }
    int keep_fds[] = {st->go_c, st->ll_w, shep_w};
    if (close_fds_except(keep_fds, sizeof keep_fds / sizeof keep_fds[0]) < 0) {
        m.value = -errno;
        tell(shep_w, &m);
        raw_exit(SESS_SHEP_FAILED);
    }
    pid_t c = clone(cmd_main, st->c_stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, st);
    /* The command's process exec'd, or died.  Which command it is, PID 1 wrote before it
     * sent the descriptors (nothing, when it died before: a spare that failed). */
    m.value = c < 0 ? -errno : c;
    m.slot = st->bound ? st->slot : -1;
    bool keep = st->bound && (st->flags & SESS_REQ_KEEP);
    int slot = m.slot;
    /* From here on PID 1 runs again, in the same memory: raw system calls only. */
    tell(shep_w, &m);
    RAW(SYS_close_range, 3, shep_w - 1, 0);
    RAW(SYS_close_range, shep_w + 1, ~0U, 0);
    if (c < 0)
        raw_exit(SESS_SHEP_FAILED);
    for (;;) {
        int status = 0;
        long w = RAW(SYS_wait4, -1, &status, __WALL, 0);
        if (w == -EINTR)
            continue;
        if (w < 0)
            raw_exit(SESS_SHEP_CLEAN); /* nothing is left below */
        if (w != c)
            continue;
        sess_shep_msg e = {.slot = slot, .kind = SESS_SHEP_EXITED, .value = status};
        tell(shep_w, &e);
        if (!keep) {
            int more = 0;
            long r = RAW(SYS_wait4, -1, &more, __WALL | WNOHANG, 0);
            raw_exit(r == -ECHILD ? SESS_SHEP_CLEAN : SESS_SHEP_LEFTOVERS);
        }
    }
}
