// SPDX-License-Identifier: Apache-2.0
#include "supervise/outer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "confine/llonly.h"
#include "sandbox/ns.h"
#include "supervise/launch.h"
#include "supervise/report.h"
#include "supervise/signals.h"
#include "supervise/pty.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/proc.h"
#include "util/strv.h"
#include "util/trace.h"
#include "util/time.h"

#define OUT_BUF_SIZE (1 << 20)

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct outer_run {
    launch l; /* as the child got it; the parent keeps the limits and frees the rest */
    int pidfd;
    int report_fd; /* read end, non-blocking */
    int life_fd;   /* our end of the life socket: PID 1 ends the run when it closes */
    bool report_eof;
    bool ended; /* the result is final */
    bool reaped;
    bool killed;      /* outer_wait() sent SIGKILL (a timeout, the output callback) */
    bool stop_output; /* the output callback asked to stop: read, but do not deliver */
    long long deadline_ms;
    double started_s;
    cordon_isolation isolation;
    outer_outcome o;
    outer_helper helper; /* .stop NULL: none */
    int pty_sock;        /* our end of the socket the terminal's master comes through */
    int pty_master;      /* outer_opts.pty: until outer_take_pty() */
    char *out_buf;       /* outer_wait's output buffer (OUT_BUF_SIZE), once needed */
    cordon_result res;
    cordon_error err;
};

/* ------------------------------------------------------------------------------------ */
/* the report pipe */

void outer_take_message(outer_outcome *o, const report_msg *m)
{
    switch ((report_kind)m->kind) {
    case REPORT_SETUP_ERROR:
        if (!o->setup_failed) {
            o->setup_failed = true;
            o->setup = *m;
            o->setup.text[sizeof o->setup.text - 1] = '\0';
            o->setup.option[sizeof o->setup.option - 1] = '\0';
        }
        break;
    case REPORT_EXEC_ERROR:
        o->exec_failed = true;
        o->exec_errnum = m->value;
        snprintf(o->exec_what, sizeof o->exec_what, "%.*s", (int)sizeof o->exec_what - 1, m->text);
        break;
    case REPORT_EXIT:
        o->have_exit = true;
        o->wait_status = m->value;
        break;
    case REPORT_LIMITS_HIT: o->limits_hit |= (unsigned)m->value; break;
    case REPORT_EXEC_DETAIL:
        memcpy(o->exec_detail, m->text, sizeof o->exec_detail - 1); /* cut: it leads with what is missing */
        o->exec_detail[sizeof o->exec_detail - 1] = '\0';
        break;
    case REPORT_TIMEOUT: o->timed_out = true; break;
    case REPORT_CPU_LIMIT: o->cpu_limit = true; break;
    case REPORT_REFUSAL: {
        size_t n = strnlen(m->text, sizeof m->text);
        if (o->refusals_len + n + 1 <= sizeof o->refusals) {
            memcpy(o->refusals + o->refusals_len, m->text, n);
            o->refusals[o->refusals_len + n] = '\0';
            o->refusals_len += n + 1;
            o->n_refusals++;
        }
        if (m->value > 0)
            o->refused = (unsigned long)m->value;
        break;
    }
    case REPORT_STARTED: break;
    case REPORT_PROC_KEPT: o->proc_kept = m->value ? 2 : 1; break;
    }
}

const char *outer_proc_kept(const outer_outcome *o)
{
    if (o->proc_kept == 2)
        return "a fresh /proc is refused here (the container masks parts of it): the sandbox shows the "
               "container's /proc, read-only with its masks, in a PID namespace of its own; the command "
               "sees the container's other processes and their command lines, not their environment, "
               "memory or descriptors (Landlock), and cannot signal them";
    if (o->proc_kept == 1)
        return "a fresh /proc is refused here (the container masks parts of it): the sandbox has no /proc "
               "(--no-proc); cordon's supervisor uses the container's";
    return NULL;
}

/* Every report after which PID 1 only exits. */
bool outer_final_report(const outer_outcome *o)
{
    return o->have_exit || o->timed_out || o->cpu_limit;
}

/* Read whole messages until EAGAIN or EOF; returns 1 on EOF. */
static int drain_reports(int fd, outer_outcome *o)
{
    for (;;) {
        report_msg m;
        ssize_t n = read(fd, &m, sizeof m);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return 0;
        if (n == 0)
            return 1;
        if (n == (ssize_t)sizeof m)
            outer_take_message(o, &m);
    }
}

/* ------------------------------------------------------------------------------------ */
/* the result */

/* The run's result, decided once: from what the sandbox reported, how PID 1 ended (pid1,
 * or NULL: it is not reaped yet, or this is a session's command) and what the limits saw
 * (lim, or NULL: a session's command, whose limits are the session's). */
static void result_from(const outer_outcome *o, limits_run *lim, const siginfo_t *pid1, cordon_result *r,
                        cordon_error *err)
{
    unsigned size = r->size;
    cordon_result_free(r); /* filled before (a wait that looked again) */
    *r = (cordon_result){.size = size, .status_code = -1};
    r->refused = o->refused > o->n_refusals ? o->refused : o->n_refusals;
    r->n_refusals = o->n_refusals;
    r->proc_kept = outer_proc_kept(o);
    if (o->refusals_len) {
        r->refusals = xmalloc(o->refusals_len);
        memcpy(r->refusals, o->refusals, o->refusals_len);
    }
    /* the limits: how they were applied, which were reached (as far as the mechanism
     * tells: a cgroup reports refused forks and OOM kills) */
    if (lim) {
        if (o->cpu_limit) {
            lim->cpu_exceeded = true;
            lim->hit |= 1u << CORDON_LIMIT_CPU;
        }
        lim->hit |= o->limits_hit;
        limits_collect(lim);
        r->limits = limits_kind_name(lim->kind);
        r->limits_hit = lim->hit;
    }
    if (o->timed_out) {
        r->timed_out = true;
        r->started = !o->setup_failed;
        r->exit_code = CORDON_EXIT_TIMEOUT;
        r->signal = SIGKILL;
    } else if (o->setup_failed) {
        err_opt(err, (cordon_stage)o->setup.stage, o->setup.errnum, o->setup.option, "%s", o->setup.text);
        r->exit_code = CORDON_EXIT_SETUP;
    } else if (o->exec_failed && o->exec_detail[0]) {
        err_set(err, CORDON_STAGE_EXEC, 0,
                "%s: cannot execute: %s; show it there (a rule on its directory), see `cordon explain`", o->exec_what,
                o->exec_detail);
        r->exit_code = CORDON_EXIT_NOEXEC;
    } else if (o->exec_failed) {
        bool nf = o->exec_errnum == ENOENT || o->exec_errnum == ENOTDIR;
        err_set(err, CORDON_STAGE_EXEC, o->exec_errnum, "%s: %s", o->exec_what,
                nf ? "command not found in the sandbox (is it visible there? see `cordon explain`)" : "cannot execute");
        r->exit_code = nf ? CORDON_EXIT_NOTFOUND : CORDON_EXIT_NOEXEC;
    } else if (o->have_exit) {
        r->started = true;
        if (WIFEXITED(o->wait_status)) {
            r->status_code = WEXITSTATUS(o->wait_status);
            r->exit_code = r->status_code;
        } else if (WIFSIGNALED(o->wait_status)) {
            r->signal = WTERMSIG(o->wait_status);
            r->exit_code = 128 + r->signal;
        }
    } else if (lim && lim->cpu_exceeded) {
        /* cordon killed the sandbox for its CPU time: as RLIMIT_CPU ends a process,
         * whichever mechanism counted */
        r->started = true;
        r->signal = SIGXCPU;
        r->exit_code = 128 + SIGXCPU;
    } else if (pid1 && (pid1->si_code == CLD_KILLED || pid1->si_code == CLD_DUMPED)) {
        /* PID 1 ended without reporting: it was killed (by cordon_proc_kill, the OOM
         * killer, or anyone on the host allowed to). */
        r->started = true;
        r->signal = pid1->si_status;
        r->exit_code = 128 + pid1->si_status;
    } else if (lim && (lim->hit & (1u << CORDON_LIMIT_MEMORY))) {
        char v[64];
        limit_format(CORDON_LIMIT_MEMORY, lim->want.v[CORDON_LIMIT_MEMORY], v, sizeof v);
        err_opt(err, CORDON_STAGE_LIMITS, 0, "limitMemory",
                "the sandbox ran out of memory before the command started: a memory limit of %s is too small", v);
        r->exit_code = CORDON_EXIT_SETUP;
    } else {
        err_set(err, CORDON_STAGE_SUPERVISE, 0, "the sandbox ended without reporting the command's status");
        r->exit_code = CORDON_EXIT_SETUP;
    }
    /* rlimits: the kernel's SIGXCPU is the only sign that RLIMIT_CPU was reached */
    if (lim && lim->kind == LIMITS_RLIMIT && lim->want.v[CORDON_LIMIT_CPU] && r->signal == SIGXCPU) {
        lim->hit |= 1u << CORDON_LIMIT_CPU;
        r->limits_hit = lim->hit;
    }
}

void outer_fill_result(const outer_outcome *o, const siginfo_t *pid1, cordon_result *r, cordon_error *err)
{
    result_from(o, NULL, pid1, r, err);
}

/* ------------------------------------------------------------------------------------ */
/* the child's first steps */

/* Every descriptor the parent opened for the child (launch.h): all others are closed. */
static size_t launch_child_fds(const launch *l, int *keep)
{
    size_t k = 0;
    keep[k++] = l->report_fd;
    keep[k++] = l->life_fd;
    keep[k++] = l->life_wfd;
    for (int i = 0; i < LIMITS_N; i++)
        if (l->limits.join_fd[i] >= 0)
            keep[k++] = l->limits.join_fd[i];
    if (l->limits.dir_fd[CORDON_LIMIT_CPU] >= 0)
        keep[k++] = l->limits.dir_fd[CORDON_LIMIT_CPU];
    if (l->confine.landlock.ruleset_fd >= 0)
        keep[k++] = l->confine.landlock.ruleset_fd;
    if (l->ll_sup_fd >= 0)
        keep[k++] = l->ll_sup_fd;
    if (l->helper_fd >= 0)
        keep[k++] = l->helper_fd;
    if (l->cordon_pidfd >= 0)
        keep[k++] = l->cordon_pidfd;
    if (l->session_fd >= 0)
        keep[k++] = l->session_fd;
    if (l->pty.sock >= 0)
        keep[k++] = l->pty.sock;
    return k;
}

/* Right after the clone, in the child (a copy of a possibly multi-threaded caller: system
 * calls only).  Every signal is blocked (outer_start blocked them in the calling thread):
 * put every disposition back to the default (the caller's handlers are not ours, and a
 * SIGCHLD ignored by the caller would make PID 1's children vanish unreaped), give the
 * stdio descriptors their places, and drop every descriptor that is not ours. */
static void child_prepare(launch *l, const int stdio[3])
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        sigaction(sig, &dfl, NULL); /* fails harmlessly for SIGKILL, SIGSTOP, glibc's own */
    int high[3] = {-1, -1, -1};
    for (int i = 0; i < 3; i++)
        if (stdio[i] >= 0 && (high[i] = fcntl(stdio[i], F_DUPFD_CLOEXEC, 3)) < 0) {
            cordon_error e = {0};
            err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot give the command its standard streams");
            report_fail(l->report_fd, &e);
        }
    for (int i = 0; i < 3; i++)
        if (high[i] >= 0 && dup2(high[i], i) < 0) {
            cordon_error e = {0};
            err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot give the command its standard streams");
            report_fail(l->report_fd, &e);
        }
    /* A run must never hold another run's pipes (outer.h): or no run. */
    int keep[16];
    size_t k = launch_child_fds(l, keep);
    if (close_fds_except(keep, k) < 0) {
        cordon_error e = {0};
        err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot close the descriptors the sandbox inherited");
        report_fail(l->report_fd, &e);
    }
    /* PID 1 keeps what it forwards and SIGCHLD blocked (read from a signalfd), and
     * SIGPIPE (a write to a cordon that is gone fails with EPIPE instead). */
    sigset_t mask;
    signals_forwarded(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGPIPE);
    if (sigprocmask(SIG_SETMASK, &mask, NULL) < 0) {
        cordon_error e = {0};
        err_set(&e, CORDON_STAGE_SUPERVISE, errno, "sigprocmask");
        report_fail(l->report_fd, &e);
    }
}

/* ------------------------------------------------------------------------------------ */
/* starting */

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static pid_t clone_sandbox(outer_run *r, int cgroup_fd, cordon_error *err)
{
    const plan *p = r->l.plan;
    if (p->isolation == CORDON_ISOLATION_LANDLOCK)
        return reaper_clone(cgroup_fd, &r->pidfd, err);
    if (cgroup_fd >= 0)
        return ns_clone_into(p->network != CORDON_NETWORK_HOST, !p->inherit_pid_ns, cgroup_fd, &r->pidfd, err);
    return ns_clone(p->network != CORDON_NETWORK_HOST, !p->inherit_pid_ns, &r->pidfd, err);
}

/* The parent's copy of what only the child uses (it has its own since the clone). */
static void free_child_parts(launch *l)
{
    root_scratch_free(&l->scratch);
    confine_prep_free(&l->confine);
    free(l->cc);
    l->cc = NULL;
    free(l->cmd_stack);
    l->cmd_stack = NULL;
    l->plan = NULL; /* the caller's, which may be freed once outer_start returns */
    l->argv = NULL;
    l->envp = NULL;
}

/* Everything but the process: descriptors, cgroups, the helper. */
static void release_run(outer_run *r)
{
    if (r->helper.stop)
        r->helper.stop(r->helper.ctx);
    r->helper.stop = NULL;
    limits_finish(&r->l.limits, true);
    close_fd(&r->report_fd);
    close_fd(&r->life_fd);
    close_fd(&r->l.report_fd);
    close_fd(&r->l.life_fd);
    close_fd(&r->l.helper_fd);
    close_fd(&r->l.cordon_pidfd);
    close_fd(&r->l.pty.sock);
    close_fd(&r->pty_sock);
    close_fd(&r->pty_master);
    close_fd(&r->pidfd);
    free_child_parts(&r->l);
}

/* Kill and reap PID 1 of a run that failed to start. */
static void abandon(outer_run *r)
{
    if (r->pidfd >= 0) {
        proc_signal(r->pidfd, SIGKILL);
        proc_reap(r->pidfd, NULL);
    }
    release_run(r);
    cordon_result_free(&r->res);
    free(r->out_buf);
    free(r);
}

/* The launch PID 1 is cloned with: what the plan and the options say, nothing open yet. */
static void launch_init(outer_run *r, const plan *p, char *const argv[], const outer_opts *o)
{
    launch *l = &r->l;
    *l = (launch){.plan = p,
                  .argv = argv,
                  .envp = p->env.v,
                  .uid = geteuid(),
                  .gid = getegid(),
                  .report_fd = -1,
                  .life_fd = -1,
                  .life_wfd = -1,
                  .helper_fd = -1,
                  .ll_sup_fd = -1,
                  .deadline_ms = -1,
                  .keep = o->keep,
                  .session = o->session,
                  .session_fd = o->session ? o->session_fd : -1};
    /* PID 1 also watches cordon's own process through a pidfd: the life pipe alone cannot
     * say that cordon is gone while a process forked after the clone still holds a copy of
     * its write end (close-on-exec; -1: the pipe only) */
    l->cordon_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    root_scratch_init(&l->scratch, p);
    confine_prepare(&l->confine, p);
    if (p->isolation == CORDON_ISOLATION_LANDLOCK)
        l->confine.landlock.ruleset_fd = o->ll_ruleset_fd;
    l->cmd_stack_size = 256 * 1024;
    l->cmd_stack = xmalloc(l->cmd_stack_size);
    for (int i = 0; i < LIMITS_N; i++)
        l->limits.join_fd[i] = l->limits.dir_fd[i] = -1;
    l->limits.into_fd = l->limits.janitor_wfd = l->limits.cpu_fd = -1;
    l->limits.janitor = -1;
    l->pty = (launch_pty){.sock = -1, .slave = -1};
}

/* The report pipe, the life socket, and the helpers' and the terminal's sockets when asked
 * for: one end for cordon, one for PID 1.  HELPER gets the helpers' pair. */
static int open_channels(outer_run *r, const outer_opts *o, int helper[2], cordon_error *err)
{
    launch *l = &r->l;
    int report[2], life[2];
    if (pipe2(report, O_CLOEXEC) < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot make the report pipe");
    r->report_fd = report[0];
    l->report_fd = report[1];
    /* Only PID 1 and cordon hold it, and nothing is written: PID 1 sees the hang-up
     * when cordon goes. */
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, life) < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot make the life socket");
    l->life_fd = life[1];
    r->life_fd = life[0];
    l->life_wfd = life[0];
    if (o->helper) {
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, helper) < 0)
            return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot make the helpers' socket");
        l->helper_fd = helper[1];
    }
    if (o->pty) {
        pty_prepare(&l->pty, o->pty_stderr);
        int t[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, t) < 0)
            return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot make the terminal's socket");
        r->pty_sock = t[0];
        l->pty.sock = t[1];
    }
    return 0;
}

/* The creation control (supervise/creation.h): PID 1 fills it in the sandbox.  Under
 * --isolation landlock the stand-in supervises, in a Landlock domain of its own
 * (llonly.h); a session there has none (its commands start from its holder). */
static int prepare_creation_control(launch *l, const plan *p, const outer_opts *o, cordon_error *err)
{
#ifndef CORDON_NO_CREATION_CONTROL
    bool ll_only = p->isolation == CORDON_ISOLATION_LANDLOCK;
    if (!ll_only && l->confine.enabled && !p->bare) {
        l->cc = xcalloc(1, sizeof *l->cc);
        l->scratch.want_proc_fd = true;
    }
    if (!ll_only || !l->confine.enabled || p->bare || o->session || !o->ll || o->ll->sup_ruleset_fd < 0)
        return 0;
    l->cc = xcalloc(1, sizeof *l->cc);
    for (size_t i = 0; i < o->ll->n_grants; i++) {
        const ll_grant *g = &o->ll->grants[i];
        if (g->cls == LL_DEVICE && l->cc->n_ll_devices < sizeof l->cc->ll_devices / sizeof *l->cc->ll_devices)
            l->cc->ll_devices[l->cc->n_ll_devices++] = g->path;
        if (g->cls != LL_LIST || !g->is_dir || g->sup_only)
            continue;
        if (l->cc->n_ll_list_only == CC_MAX_RULES)
            return err_set(err, CORDON_STAGE_CONFINE, ENOSPC,
                           "--isolation landlock: too many directories split around hidden paths (at most %d)",
                           CC_MAX_RULES);
        l->cc->ll_list_only[l->cc->n_ll_list_only++] = g->path;
    }
    l->cc->ll_home = o->ll->home;
    l->cc->ll_tmpdir = o->ll->tmpdir;
    l->ll_sup_fd = o->ll->sup_ruleset_fd;
#else
    (void)l, (void)p, (void)o, (void)err;
#endif
    return 0;
}

/* PID 1 cloned into the run's cgroups, or with rlimits when the kernel will not start it
 * there.  The child never returns from here. */
static pid_t start_pid1(outer_run *r, const outer_opts *o, cordon_error *err)
{
    launch *l = &r->l;
    /* Every signal blocked in this thread for the clone, as posix_spawn does: the child
     * must not run the caller's handlers before it has put them back to the defaults,
     * and what PID 1 forwards must stay queued until its signalfd reads it.  Only this
     * thread's mask, and only until the clone returns: nothing is lost or consumed. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    l->orig_mask = old;
    TRACE("clone");
    r->started_s = now_s();
    pid_t pid = clone_sandbox(r, l->limits.into_fd, err);
    if (pid < 0 && l->limits.into_fd >= 0) {
        /* The kernel would not start a process in the run's cgroup: rlimits instead. */
        cordon_error why = *err;
        err_wrap(&why, "cannot start the sandbox in %s", l->limits.where);
        err_clear(err);
        if (limits_fallback(&l->limits, &why, err) == 0) {
            r->res.limits = limits_kind_name(l->limits.kind);
            pid = clone_sandbox(r, -1, err);
        }
    }
    if (pid == 0) {
        child_prepare(l, o->stdio);
        if (r->isolation == CORDON_ISOLATION_LANDLOCK)
            reaper_main(l);
        pid1_main(l);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return pid;
}

/* Inside a cordon sandbox user namespaces are refused only when it was made to refuse
 * sandboxes inside it: say that, not what a container would mean. */
static void explain_no_nesting(const outer_run *r, cordon_error *err)
{
    if (err->stage == CORDON_STAGE_NAMESPACES && err->errnum == EPERM && r->isolation != CORDON_ISOLATION_LANDLOCK &&
        prctl((int)CORDON_PRCTL, CC_PRCTL_HELLO, 0, 0, 0) == (long)CC_PRCTL_HELLO_OK)
        err_opt(err, CORDON_STAGE_NAMESPACES, EPERM, "outerNoNested",
                "cannot create namespaces: this runs inside a cordon sandbox that refuses sandboxes inside "
                "it (no nesting: its seccomp filter refuses new user namespaces and the mount API); start "
                "that sandbox without it to nest one%s",
                NS_ISOLATION_HINT);
}

/* Once PID 1 runs: its ends closed here, the helper started on the other end of its
 * socket, the report pipe made non-blocking and the terminal's master received. */
static int after_clone(outer_run *r, const outer_opts *o, int helper[2], cordon_error *err)
{
    launch *l = &r->l;
    /* PID 1's ends are PID 1's. */
    close_fd(&l->report_fd);
    close_fd(&l->life_fd);
    close_fd(&l->helper_fd);
    close_fd(&l->pty.sock);
    l->life_wfd = -1; /* r->life_fd */

    if (o->helper) {
        /* from here on, stop() is called whatever happens */
        r->helper = *o->helper;
        int sock = steal_fd(&helper[0]);
        if (o->helper->start(o->helper->ctx, r->pidfd, sock, err) < 0) {
            if (err->stage == CORDON_STAGE_NONE)
                err_set(err, CORDON_STAGE_SUPERVISE, 0, "cannot start %s", o->helper->name);
            return -1;
        }
    }
    free_child_parts(l);
    /* outer_wait polls the report pipe: a blocking read there would hang the caller */
    if (fcntl(r->report_fd, F_SETFL, O_NONBLOCK) < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot make the report pipe non-blocking");
    if (r->pty_sock >= 0) {
        /* PID 1 makes the terminal once the root is built; until then there is no
         * master to hand out.  A PID 1 that fails first says why in its report. */
        r->pty_master = pty_receive(r->pty_sock, r->pidfd, r->deadline_ms);
        close_fd(&r->pty_sock);
    }
    return 0;
}

int outer_start(const plan *p, char *const argv[], const outer_opts *o, outer_run **out, cordon_error *err)
{
    *out = NULL;
    if (!plan_intact(p))
        return err_set(err, CORDON_STAGE_SUPERVISE, 0, "internal error: the run's plan was not sealed, or changed");
    outer_run *r = calloc(1, sizeof *r);
    if (!r)
        return err_set(err, CORDON_STAGE_SUPERVISE, ENOMEM, "out of memory");
    r->pidfd = r->report_fd = r->life_fd = r->pty_sock = r->pty_master = -1;
    r->isolation = p->isolation;
    launch_init(r, p, argv, o);
    launch *l = &r->l;

    /* The run's cgroups (or rlimits), before anything else: PID 1 is cloned into them. */
    if (limits_prepare(&l->limits, &p->limits, err) < 0) {
        abandon(r);
        return -1;
    }
    r->res.limits = limits_kind_name(l->limits.kind);
    int helper[2] = {-1, -1};
    if (open_channels(r, o, helper, err) < 0 || prepare_creation_control(l, p, o, err) < 0) {
        abandon(r);
        return -1;
    }
    if (o->session)
        l->scratch.want_proc_fd = true; /* the session's PID 1 reads its children there */
    l->pdeathsig = syscall(SYS_gettid) == getpid();
    if (p->timeout > 0 && !o->session)
        l->deadline_ms = now_ms() + (long long)(p->timeout * 1000.0 + 0.999);
    r->deadline_ms = l->deadline_ms;

    if (start_pid1(r, o, err) < 0) {
        explain_no_nesting(r, err);
        close_fd(&helper[0]);
        close_fd(&helper[1]);
        l->helper_fd = -1;
        abandon(r);
        return -1;
    }
    if (after_clone(r, o, helper, err) < 0) {
        abandon(r);
        return -1;
    }
    *out = r;
    return 0;
}

int outer_take_pty(outer_run *r)
{
    return steal_fd(&r->pty_master);
}

/* ------------------------------------------------------------------------------------ */
/* running */

int outer_pidfd(const outer_run *r)
{
    return r->pidfd;
}

int outer_report_fd(const outer_run *r)
{
    return r->report_eof || r->ended ? -1 : r->report_fd;
}

int outer_kill(const outer_run *r, int sig)
{
    /* ended: PID 1 may still be exiting, but there is nothing left to signal */
    if (__atomic_load_n(&r->ended, __ATOMIC_ACQUIRE)) {
        errno = ESRCH;
        return -1;
    }
    if (sig != 0 && sig != SIGKILL) {
        sigset_t fwd;
        signals_forwarded(&fwd);
        if (sig < 1 || sig >= NSIG || !sigismember(&fwd, sig)) {
            errno = EINVAL;
            return -1;
        }
    }
    return proc_signal(r->pidfd, sig);
}

/* Deliver what out_fd holds: one poll's worth, or (drain) everything until EAGAIN; 1 at EOF. */
static int read_output(outer_run *r, int fd, outer_output_fn fn, void *ctx, bool drain)
{
    if (!r->out_buf) {
        /* as large as the pipe (cordon_run_output asks for 1 MiB): one read empties it */
        r->out_buf = malloc(OUT_BUF_SIZE);
        if (!r->out_buf)
            return 0; /* poll will say readable again */
    }
    char *buf = r->out_buf;
    for (;;) {
        ssize_t n = read(fd, buf, OUT_BUF_SIZE);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno == EAGAIN ? 0 : 1;
        if (n == 0)
            return 1;
        if (!r->stop_output && fn(buf, (size_t)n, ctx) != 0) {
            /* the caller asked to stop: the whole sandbox goes, the rest is dropped */
            r->stop_output = true;
            r->killed = true;
            proc_signal(r->pidfd, SIGKILL);
        }
        if ((size_t)n < OUT_BUF_SIZE && !drain)
            return 0; /* most likely empty now: back to poll rather than an EAGAIN read */
    }
}

/* The run is over: compute the result once. */
static void conclude(outer_run *r, const siginfo_t *pid1)
{
    if (!r->report_eof)
        drain_reports(r->report_fd, &r->o);
    err_clear(&r->err);
    r->res.size = sizeof r->res;
    result_from(&r->o, &r->l.limits, pid1, &r->res, &r->err);
    r->res.wall_seconds = now_s() - r->started_s;
    r->res.isolation = r->isolation;
    __atomic_store_n(&r->ended, true, __ATOMIC_RELEASE); /* outer_kill reads it from anywhere */
}

int outer_wait(outer_run *r, int timeout_ms, int out_fd, outer_output_fn fn, void *ctx, cordon_result *res,
               cordon_error *err)
{
    long long until = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
    bool out_eof = out_fd < 0;
    while (!r->ended) {
        long long now = now_ms();
        int wait_ms = -1;
        if (until >= 0)
            wait_ms = until > now ? (int)(until - now) : 0;
        if (r->deadline_ms >= 0) {
            /* PID 1 keeps the deadline itself; this is the backstop for a PID 1 that is
             * stuck in setup (a hung mount, say) */
            long long left = r->deadline_ms - now;
            if (left <= 0) {
                r->o.timed_out = true;
                r->killed = true;
                r->deadline_ms = -1;
                proc_signal(r->pidfd, SIGKILL);
                continue;
            }
            if (wait_ms < 0 || left < wait_ms)
                wait_ms = left > 1000000 ? 1000000 : (int)left;
        }
        struct pollfd fds[3] = {
            {.fd = r->pidfd, .events = POLLIN},
            {.fd = r->report_eof ? -1 : r->report_fd, .events = POLLIN},
            {.fd = out_eof ? -1 : out_fd, .events = POLLIN},
        };
        int n = poll(fds, 3, wait_ms);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot wait for the sandbox (poll)");
        if (fds[2].revents)
            out_eof = read_output(r, out_fd, fn, ctx, false);
        if (fds[1].revents)
            r->report_eof = drain_reports(r->report_fd, &r->o);
        if (fds[0].revents & POLLIN) {
            /* PID 1 is gone, and with it the whole sandbox */
            siginfo_t info;
            memset(&info, 0, sizeof info);
            if (proc_reap(r->pidfd, &info) < 0)
                return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot reap the sandbox (waitid)");
            r->reaped = true;
            TRACE("pid1-exited");
            if (!out_eof)
                read_output(r, out_fd, fn, ctx, true);
            conclude(r, &info);
            break;
        }
        if (outer_final_report(&r->o)) {
            /* Everything but PID 1 is dead (it kills and reaps the rest before it
             * reports): what is in the output pipe is all there will be, PID 1 writes
             * nothing there.  PID 1 itself is reaped by outer_free, so that the caller
             * does not wait for the kernel to tear the namespaces down (~0.25 ms). */
            if (!out_eof)
                read_output(r, out_fd, fn, ctx, true);
            conclude(r, NULL);
            break;
        }
        /* (a setup or exec failure: PID 1 exits right after, which the pidfd tells) */
        if (until >= 0 && now_ms() >= until)
            return 1;
    }
    result_export(res, &r->res);
    err_export(err, &r->err);
    return 0;
}

int outer_wait_ready(outer_run *r, int timeout_ms, cordon_error *err)
{
    long long until = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
    for (;;) {
        for (;;) {
            report_msg m;
            ssize_t n = read(r->report_fd, &m, sizeof m);
            if (n < 0 && errno == EINTR)
                continue;
            if (n == (ssize_t)sizeof m && m.kind == REPORT_STARTED)
                return 0;
            if (n == (ssize_t)sizeof m) {
                outer_take_message(&r->o, &m);
                continue;
            }
            if (n == 0)
                r->report_eof = true;
            break;
        }
        if (r->report_eof || r->o.setup_failed) {
            /* PID 1 said why it stopped, or ended without a word (killed) */
            siginfo_t info;
            memset(&info, 0, sizeof info);
            if (!r->reaped && proc_reap(r->pidfd, &info) == 0)
                r->reaped = true;
            conclude(r, r->reaped ? &info : NULL);
            if (r->err.stage == CORDON_STAGE_NONE)
                err_set(&r->err, CORDON_STAGE_SUPERVISE, 0, "the sandbox ended before it was ready");
            err_export(err, &r->err);
            return -1;
        }
        int wait_ms = -1;
        if (until >= 0) {
            long long left = until - now_ms();
            if (left <= 0)
                return err_set(err, CORDON_STAGE_SUPERVISE, ETIMEDOUT, "the sandbox was not ready in time");
            wait_ms = (int)left;
        }
        struct pollfd fds[2] = {{.fd = r->report_fd, .events = POLLIN}, {.fd = r->pidfd, .events = POLLIN}};
        if (poll(fds, 2, wait_ms) < 0 && errno != EINTR)
            return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot wait for the sandbox (poll)");
        if ((fds[1].revents & POLLIN) && !(fds[0].revents & POLLIN))
            r->report_eof = true; /* PID 1 is gone: read what it said, then conclude */
    }
}

void outer_free(outer_run *r)
{
    if (!r)
        return;
    if (!r->reaped && r->pidfd >= 0) {
        if (!r->ended)
            proc_signal(r->pidfd, SIGKILL);
        proc_reap(r->pidfd, NULL);
        r->reaped = true;
    }
    release_run(r);
    cordon_result_free(&r->res);
    free(r->out_buf);
    free(r);
}
