// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include "confine/caps.h"
#include "confine/seccomp.h"
#include "supervise/execinfo.h"
#include "supervise/launch.h"
#include "supervise/report.h"
#include "supervise/signals.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/trace.h"

extern char **environ;

void launch_fail(launch *l, cordon_error *err)
{
    report_fail(l->report_fd, err);
}

/* The helper of child_confine: the listener's number from the pipe, the listener to
 * PID 1 (an errno as exit status when it cannot). */
typedef struct hand_over {
    int from, sock;
} hand_over;

static int hand_listener(void *arg)
{
    const hand_over *h = arg;
    int fd;
    if (read(h->from, &fd, sizeof fd) != (ssize_t)sizeof fd)
        _exit(0); /* the filter failed: the command's process says why */
    char byte = 'L';
    _exit(send_fds(h->sock, &byte, 1, &fd, 1, MSG_NOSIGNAL) < 0 ? (errno ? errno : EIO) : 0);
}

static int cmd_main(void *arg)
{
    launch *l = arg;
    child_exec(l, &l->orig_mask);
}

pid_t launch_start_command(launch *l)
{
    /* As posix_spawn does: share the address space until the exec instead of copying
     * it (CLONE_VM|CLONE_VFORK); the command's process only makes system calls.  With
     * share_files, the descriptor table too (launch.h). */
    return clone(cmd_main, (char *)l->cmd_stack + l->cmd_stack_size,
                 CLONE_VM | CLONE_VFORK | (l->share_files ? CLONE_FILES : 0) | SIGCHLD, l);
}

/* Signals back to their defaults: PID 1 (or the stand-in) put every disposition back to
 * the default right after the clone (outer.c) and then installed handlers for the
 * forwarded ones only (and blocked them): those, not all NSIG (a system call each). */
static void default_signals(void)
{
    sigset_t fwd;
    signals_forwarded(&fwd);
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(&fwd, sig) == 1)
            signal(sig, SIG_DFL);
}

/* A new session: no controlling terminal, so no TIOCSTI into the caller's. */
static void new_session(launch *l)
{
    cordon_error err = {0};
    /* a run's terminal: a process group of its own in PID 1's session (pty.h, pty_lead) */
    if (l->pty_group) {
        if (pty_join(&l->pty, &err) < 0)
            launch_fail(l, &err);
        return;
    }
    /* a session command's terminal: a process group of its own in the session its
     * shepherd leads, the terminal's controlling one (src/session/shepherd.c) */
    if (l->ctty) {
        if (setpgid(0, 0) < 0) {
            err_set(&err, CORDON_STAGE_CONFINE, errno, "cannot give the command a process group");
            launch_fail(l, &err);
        }
        return;
    }
    if (setsid() < 0) {
        err_set(&err, CORDON_STAGE_CONFINE, errno, "setsid");
        launch_fail(l, &err);
    }
    /* CORDON_SPAWN_PTY: a terminal of the sandbox's own, as controlling terminal. */
    if (l->pty.on && pty_attach(&l->pty, &err) < 0)
        launch_fail(l, &err);
}

/* A session command's terminal (stdin, the controlling terminal of the session its
 * shepherd leads): the command's process group in its foreground, so that the terminal's
 * ^Z stops the command itself (pty.h, pty_lead, says why it must not lead a session). */
static void take_terminal(launch *l)
{
    cordon_error err = {0};
    if (l->ctty && pty_foreground(0, &err) < 0)
        launch_fail(l, &err);
}

static void enter_cwd(launch *l)
{
    cordon_error err = {0};
    const char *cwd = l->cwd ? l->cwd : l->plan->cwd;
    if (chdir(cwd) < 0) {
        err_set(&err, CORDON_STAGE_EXEC, errno, "cannot enter the working directory %s", cwd);
        launch_fail(l, &err);
    }
}

/* Capabilities, no_new_privs, descriptors, rlimits, Landlock (--isolation landlock) and
 * the command's own filter, whose listener goes to PID 1. */
static void confine_steps(launch *l)
{
    cordon_error err = {0};
    /* the UTS namespace is the sandbox's own; set while the capabilities are there */
    if (l->plan->hostname && sethostname(l->plan->hostname, strlen(l->plan->hostname)) < 0) {
        err_set(&err, CORDON_STAGE_CONFINE, errno, "cannot set the host name %s", l->plan->hostname);
        launch_fail(l, &err);
    }
    uint64_t keep = l->plan->keep_caps;
    if ((keep ? caps_keep_ambient(keep, &err) : caps_drop_all(&err)) < 0 || set_no_new_privs(&err) < 0)
        launch_fail(l, &err);
    /* a kept CAP_SETFCAP writes no file capability (seccomp.h); without cordon's
     * protections it does, as under bubblewrap */
    if (keep && !l->plan->bare && seccomp_refuse_setxattr(&err) < 0)
        launch_fail(l, &err);
    /* Only 0, 1 and 2 reach the command (the report pipe is close-on-exec). */
    if (cloexec_all_fds() < 0) {
        err_set(&err, CORDON_STAGE_CONFINE, errno, "cannot close inherited descriptors");
        launch_fail(l, &err);
    }
    if (limits_apply_rlimits(&l->limits, &err) < 0)
        launch_fail(l, &err);
    /* --isolation landlock: Landlock, the last step before the filters (in a sandbox
     * with namespaces PID 1 applied it to itself, and the command inherited it). */
    if (l->plan->isolation == CORDON_ISOLATION_LANDLOCK && confine_command(&l->confine, &err) < 0)
        launch_fail(l, &err);
    /* The command's own filter, with the creation control's listener, handed to PID 1
     * (the deny filter came from PID 1). */
    if (l->cc && l->confine.enabled) {
        bool listener = !l->cc->nested;
        if (!listener) {
            if (seccomp_install_cmd(seccomp_cmd_program(SC_CMD_NESTED), false, &err) < 0)
                launch_fail(l, &err);
            return;
        }
        if (l->share_files) {
            /* PID 1's table, PID 1's memory: the listener (close-on-exec) is PID 1's
             * already, and PID 1 reads its number once the exec lets it go on */
            int fd = seccomp_install_cmd(seccomp_cmd_program(0), true, &err);
            if (fd < 0)
                launch_fail(l, &err);
            l->cc->listener = fd;
            return;
        }
        /* The filter sends every sendmsg(2) to PID 1 (supervise/sockets.h), which cannot
         * serve this one before it holds the listener: a helper made before the filter
         * (so without it), sharing this process's descriptors, hands it over. */
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0) {
            err_set(&err, CORDON_STAGE_CONFINE, errno, "pipe2");
            launch_fail(l, &err);
        }
        _Alignas(16) char stack[16384];
        hand_over h = {.from = p[0], .sock = l->cc_sock[1]};
        pid_t helper = clone(hand_listener, stack + sizeof stack, CLONE_VM | CLONE_FILES, &h);
        if (helper < 0) {
            /* for a moment, the set-up needs a second process: --limit-pids 1 leaves no room */
            err_set(&err, CORDON_STAGE_CONFINE, errno, "cannot start the helper that hands the listener to PID 1%s",
                    errno == EAGAIN ? " (with --limit-pids, give at least 2)" : "");
            launch_fail(l, &err);
        }
        bool ll = l->plan->isolation == CORDON_ISOLATION_LANDLOCK;
        int fd = seccomp_install_cmd(seccomp_cmd_program(ll ? SC_CMD_LANDLOCK : 0), true, &err);
        bool told = fd >= 0 && write(p[1], &fd, sizeof fd) == (ssize_t)sizeof fd;
        int e = errno;
        close(p[1]); /* without a descriptor, the helper reads nothing and ends */
        int st = 0;
        while (waitpid(helper, &st, __WCLONE) < 0 && errno == EINTR)
            ;
        if (fd < 0)
            launch_fail(l, &err);
        if (!told || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            err_set(&err, CORDON_STAGE_CONFINE, told ? (WIFEXITED(st) ? WEXITSTATUS(st) : EIO) : e,
                    "cannot hand the creation control's listener to PID 1");
            launch_fail(l, &err);
        }
        close(p[0]);
        close(fd);
        close(l->cc_sock[1]);
    }
}

static __attribute__((noreturn)) void run_command(launch *l)
{
    /* The plan is what the run was meant to be, unchanged since it was sealed (plan.h):
     * the last thing checked before the command runs. */
    if (!plan_intact(l->plan)) {
        cordon_error err = {0};
        err_set(&err, CORDON_STAGE_EXEC, 0, "internal error: the run's plan changed after it was sealed");
        launch_fail(l, &err);
    }
    TRACE("exec");
    environ = l->envp;
    execvp(l->argv[0], l->argv);
    int e = errno;
    /* "not found" may mean the command is there and its interpreter or loader is not */
    char why[800] = "";
    if (e == ENOENT || e == ENOTDIR)
        exec_explain(l->argv[0], l->envp, why, sizeof why);
    if (why[0])
        report_send(l->report_fd, REPORT_EXEC_DETAIL, NULL, e, why);
    report_send(l->report_fd, REPORT_EXEC_ERROR, NULL, e, l->argv[0]);
    _exit(!why[0] && (e == ENOENT || e == ENOTDIR) ? CORDON_EXIT_NOTFOUND : CORDON_EXIT_NOEXEC);
}

void child_exec(launch *l, const sigset_t *orig_mask)
{
    cordon_error err = {0};
    default_signals();
    if (sigprocmask(SIG_SETMASK, orig_mask, NULL) < 0) {
        err_set(&err, CORDON_STAGE_EXEC, errno, "cannot give the command the caller's signal mask");
        launch_fail(l, &err);
    }

    /* --isolation landlock, --inherit-pid-namespace: no PID namespace to die with; die
     * with the supervisor. */
    if (l->plan->isolation == CORDON_ISOLATION_LANDLOCK || l->plan->inherit_pid_ns) {
        pid_t parent = getppid();
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0) {
            err_set(&err, CORDON_STAGE_SUPERVISE, errno, "PR_SET_PDEATHSIG");
            launch_fail(l, &err);
        }
        if (getppid() != parent)
            _exit(CORDON_EXIT_SETUP); /* it died before that: so must we */
    }
    new_session(l);
    take_terminal(l);
    enter_cwd(l);
    confine_steps(l);
    run_command(l);
}

void child_confine(launch *l)
{
    default_signals(); /* (every signal stays blocked until child_start) */
    new_session(l);
    confine_steps(l);
}

void child_start(launch *l, const sigset_t *mask)
{
    take_terminal(l);
    if (sigprocmask(SIG_SETMASK, mask, NULL) < 0) {
        cordon_error err = {0};
        err_set(&err, CORDON_STAGE_EXEC, errno, "cannot give the command its signal mask");
        launch_fail(l, &err);
    }
    enter_cwd(l);
    run_command(l);
}
