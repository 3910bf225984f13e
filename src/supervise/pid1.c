// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/inside.h"
#include "sandbox/net.h"
#include "sandbox/ns.h"
#include "sandbox/root.h"
#include "session/session.h"
#include "supervise/launch.h"
#include "supervise/report.h"
#include "supervise/signals.h"
#include "util/err.h"
#include "util/trace.h"

/* PID 1's kill(-1) reaches every other process of the PID namespace. */
static void kill_the_rest(void)
{
    kill(-1, SIGKILL);
    while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
        ;
}

/* PID 1 of a PID namespace only receives the signals it has a handler for; the
 * forwarded ones are blocked and read from a signalfd, but need a handler to arrive. */
static void ignore_handler(int sig)
{
    (void)sig;
}

/* Into the sandbox's life: tied to cordon, the reaper of what the command leaves, in the
 * run's cgroups, with its id maps, loopback and the network helper's listeners. */
static void join_run(launch *l, bool own_pid_ns)
{
    cordon_error err = {0};
    /* The sandbox dies with cordon. */
    if (launch_tie_to_cordon(l, CORDON_STAGE_NAMESPACES, &err) < 0)
        launch_fail(l, &err);
    if (!own_pid_ns && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "cannot become the command's reaper");
        launch_fail(l, &err);
    }

    TRACE("pid1");
    /* Into the run's cgroups before anything else, so all it starts is counted. */
    if (limits_enter(&l->limits, &err) < 0)
        launch_fail(l, &err);
    if (ns_write_id_maps(l->uid, l->gid, &err) < 0)
        launch_fail(l, &err);
    if (l->plan->network != CORDON_NETWORK_HOST && net_loopback_up(&err) < 0)
        launch_fail(l, &err);
    if (net_inside_setup(&l->plan->net, l->helper_fd, &err) < 0) /* src/net: listeners for the helper */
        launch_fail(l, &err);
    TRACE("maps+lo");
}

/* The new root, and what comes of it: the kept /proc, the terminal, HOME's fallback. */
static void build_root(launch *l)
{
    cordon_error err = {0};
    l->scratch.under_cordon = prctl((int)CORDON_PRCTL, CC_PRCTL_HELLO, 0, 0, 0) == (long)CC_PRCTL_HELLO_OK;
    if (root_build(l->plan, &l->scratch, &err) < 0)
        launch_fail(l, &err);
    if (l->scratch.proc_kept) {
        /* the container's /proc: the command must not read its other processes */
        if (l->plan->proc) {
            l->confine.landlock.need_domain = true;
            if (l->confine.landlock.abi == 0 && l->confine.landlock.ruleset_fd < 0) {
                l->confine.landlock.abi = landlock_abi();
                l->confine.landlock.abi_errno = errno;
            }
        }
        report_send(l->report_fd, REPORT_PROC_KEPT, NULL, l->plan->proc, NULL);
    }
    if (l->pty.on && pty_open_sandbox(&l->pty, "/dev/pts/ptmx", &err) < 0)
        launch_fail(l, &err);
    if (l->pty.on && !l->session) {
        if (pty_lead(&l->pty, &err) < 0)
            launch_fail(l, &err);
        l->pty_group = true;
    }
    /* The kernel would not overlay the home: it is read-only, HOME is elsewhere (the
     * plan's other environment for this case). */
    if (l->scratch.cow_fallback && l->plan->env_home_fallback.v)
        l->envp = l->plan->env_home_fallback.v;
    TRACE("root-built");
}

/* The creation control's rules, resolved inside the new root (creation.h), and how its
 * listener comes back from the command's process. */
static void prepare_creation_control(launch *l)
{
    cordon_error err = {0};
    if (l->cc && cc_setup(l->cc, l->plan, &l->scratch, &err) < 0)
        launch_fail(l, &err);
    /* Without a terminal to set up, the command's process changes no descriptor of
     * PID 1's before its exec: it shares the table and makes the listener in it. */
    l->share_files = l->cc && !l->cc->nested && !l->session && !l->pty.on;
    if (l->cc && !l->cc->nested && !l->session && !l->share_files &&
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, l->cc_sock) < 0) {
        err_set(&err, CORDON_STAGE_CONFINE, errno, "socketpair");
        launch_fail(l, &err);
    }
    TRACE("creation-control");
}

/* The forwarded signals (FWD) taken and read from the signalfd returned. */
static int take_signals(launch *l, const sigset_t *fwd)
{
    cordon_error err = {0};
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = ignore_handler;
    for (int sig = 1; sig < NSIG; sig++)
        if (sigismember(fwd, sig) && sig != SIGCHLD && sigaction(sig, &sa, NULL) < 0) {
            err_set(&err, CORDON_STAGE_SUPERVISE, errno, "cannot take signal %d for the command", sig);
            launch_fail(l, &err);
        }
    int sfd = signalfd(-1, fwd, SFD_CLOEXEC);
    if (sfd < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "signalfd");
        launch_fail(l, &err);
    }
    return sfd;
}

/* The seccomp filter and Landlock, for PID 1 and (inherited) the command. */
static void confine_pid1(launch *l)
{
    cordon_error err = {0};
    /* One filter object, so the kernel compiles it once per run.  PID 1 still holds
     * CAP_SYS_ADMIN in its user namespace, which is what seccomp(2) asks of a process
     * without no_new_privs; the root is built, and nothing PID 1 or the command's set-up
     * does is refused. */
    if (confine_filter(&l->confine, &err) < 0)
        launch_fail(l, &err);
    TRACE("seccomp");
    /* Landlock: PID 1 performs the command's creations, and must do so within the same
     * domain. */
    if (confine_command(&l->confine, &err) < 0)
        launch_fail(l, &err);
}

/* The command's process installed its filter before the exec and made the listener
 * in the table it shares with PID 1, or passed it (creation.h); there is none when
 * it failed first (its report says why). */
static void take_listener(launch *l, pid_t cmd)
{
    cordon_error err = {0};
    if (l->share_files) {
        if (l->cc->listener >= 0 && pid1_check_listener(l->cc->listener, &err) < 0) {
            kill(cmd, SIGKILL);
            launch_fail(l, &err);
        }
    } else if (l->cc && !l->cc->nested) {
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
        if (l->cc->listener >= 0 && pid1_check_listener(l->cc->listener, &err) < 0) {
            kill(cmd, SIGKILL);
            launch_fail(l, &err);
        }
        close(l->cc_sock[0]);
    }
}

void pid1_main(launch *l)
{
    cordon_error err = {0};
    sigset_t fwd;
    signals_forwarded(&fwd);
    sigaddset(&fwd, SIGCHLD);
    /* In the caller's PID namespace (--inherit-pid-namespace) this is not PID 1: kill(-1)
     * would reach every process of the caller's; what the command leaves behind is
     * reparented here instead, and killed one by one. */
    bool own_pid_ns = !l->plan->inherit_pid_ns;
    join_run(l, own_pid_ns);
    build_root(l);
    prepare_creation_control(l);
    int sfd = take_signals(l, &fwd);
    confine_pid1(l);
    /* A session: no command yet; PID 1 starts each on request (src/session). */
    if (l->session)
        sess_pid1_main(l, sfd);

    pid_t cmd = launch_start_command(l);
    if (cmd < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "cannot start the command (clone)");
        launch_fail(l, &err);
    }
    pty_close_slave(&l->pty);
    take_listener(l, cmd);

    int keep[4] = {sfd, l->cc ? l->cc->listener : -1, l->cc ? l->cc->pw.proc_fd : -1, l->cc ? l->cc->pw.root_fd : -1};
    if (pid1_lock_down(l, keep, 4, &err) < 0) {
        kill(cmd, SIGKILL);
        launch_fail(l, &err);
    }

    report_supervise(l, sfd, cmd, own_pid_ns ? kill_the_rest : reaper_kill_descendants);
}
