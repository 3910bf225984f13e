#include "supervise/outer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/ns.h"
#include "supervise/launch.h"
#include "supervise/report.h"
#include "supervise/signals.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/strv.h"
#include "util/trace.h"

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

typedef struct outcome {
    bool have_exit;
    int wait_status;
    bool setup_failed;
    bool exec_failed;
    int exec_errnum;
    report_msg setup;
    char exec_what[256];
    unsigned long refused;
    unsigned n_refusals;
    size_t refusals_len;
    char refusals[sizeof ((cordon_result *)0)->refusals];
} outcome;

static void take_message(outcome *o, const report_msg *m)
{
    switch ((report_kind)m->kind) {
    case REPORT_SETUP_ERROR:
        if (!o->setup_failed) {
            o->setup_failed = true;
            o->setup = *m;
            o->setup.text[sizeof o->setup.text - 1] = '\0';
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
    case REPORT_STARTED:
        break;
    }
}

/* Read whole messages until EAGAIN or EOF; returns 1 on EOF. */
static int drain(int fd, outcome *o)
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
            take_message(o, &m);
    }
}

static int pidfd_signal(int pidfd, int sig)
{
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

static void fill_result(const outcome *o, const siginfo_t *pid1, bool timed_out, cordon_result *r,
                        cordon_error *err)
{
    *r = (cordon_result){.status_code = -1};
    r->refused = o->refused > o->n_refusals ? o->refused : o->n_refusals;
    r->n_refusals = o->n_refusals;
    memcpy(r->refusals, o->refusals, o->refusals_len);
    if (timed_out) {
        r->timed_out = true;
        r->started = !o->setup_failed;
        r->exit_code = CORDON_EXIT_TIMEOUT;
        r->signal = SIGKILL;
        return;
    }
    if (o->setup_failed) {
        err->stage = (cordon_stage)o->setup.stage;
        err->errnum = o->setup.errnum;
        snprintf(err->message, sizeof err->message, "%s", o->setup.text);
        r->exit_code = CORDON_EXIT_SETUP;
        return;
    }
    if (o->exec_failed) {
        bool nf = o->exec_errnum == ENOENT || o->exec_errnum == ENOTDIR;
        err_set(err, CORDON_STAGE_EXEC, o->exec_errnum, "%s: %s", o->exec_what,
                nf ? "command not found in the sandbox (is it visible there? see `cordon explain`)"
                   : "cannot execute");
        r->exit_code = nf ? CORDON_EXIT_NOTFOUND : CORDON_EXIT_NOEXEC;
        return;
    }
    r->started = true;
    if (o->have_exit) {
        if (WIFEXITED(o->wait_status)) {
            r->status_code = WEXITSTATUS(o->wait_status);
            r->exit_code = r->status_code;
        } else if (WIFSIGNALED(o->wait_status)) {
            r->signal = WTERMSIG(o->wait_status);
            r->exit_code = 128 + r->signal;
        }
        return;
    }
    /* PID 1 ended without reporting: it was killed (e.g. by the OOM killer). */
    if (pid1->si_code == CLD_KILLED || pid1->si_code == CLD_DUMPED) {
        r->signal = pid1->si_status;
        r->exit_code = 128 + pid1->si_status;
    } else {
        err_set(err, CORDON_STAGE_SUPERVISE, 0, "the sandbox ended without reporting the command's status");
        r->exit_code = CORDON_EXIT_SETUP;
        r->started = false;
    }
}

/* What the limits add to the result: how they were applied, which were hit, and how the
 * command ended when cordon killed the sandbox for its CPU time.  Returns 1 when it
 * changed the outcome. */
static int limits_outcome(limits_run *lim, const outcome *o, bool timed_out, cordon_result *r,
                          cordon_error *err)
{
    r->limits = limits_kind_name(lim->kind);
    if (lim->kind == LIMITS_RLIMIT && lim->want.v[CORDON_LIMIT_CPU] && r->signal == SIGXCPU)
        lim->hit |= 1u << CORDON_LIMIT_CPU;
    r->limits_hit = lim->hit;
    if (timed_out || o->setup_failed || o->exec_failed || o->have_exit)
        return 0;
    if (lim->cpu_exceeded) {
        /* as RLIMIT_CPU ends a process, whichever mechanism counted */
        r->started = true;
        r->signal = SIGXCPU;
        r->exit_code = 128 + SIGXCPU;
        r->status_code = -1;
        err_clear(err);
        return 1;
    }
    if (!r->started && (lim->hit & (1u << CORDON_LIMIT_MEMORY))) {
        char v[64];
        limit_format(CORDON_LIMIT_MEMORY, lim->want.v[CORDON_LIMIT_MEMORY], v, sizeof v);
        err_set(err, CORDON_STAGE_LIMITS, 0,
                "the sandbox ran out of memory before the command started: --limit-memory %s is too small",
                v);
        r->exit_code = CORDON_EXIT_SETUP;
        return 1;
    }
    return 0;
}

int outer_run(const plan *p, char *const argv[], char **envp, double timeout, bool wait_teardown,
              int ll_ruleset_fd, cordon_result *result, cordon_error *err)
{
    *result = (cordon_result){.status_code = -1, .exit_code = CORDON_EXIT_SETUP};
    launch l = {.plan = p, .argv = argv, .envp = envp, .uid = geteuid(), .gid = getegid(), .cordon_pidfd = -1};
    root_scratch_init(&l.scratch, p);
    confine_prepare(&l.confine, p);
    /* --isolation landlock: no namespaces, a supervisor instead of PID 1 (reaper.c) */
    bool ll_only = p->isolation == CORDON_ISOLATION_LANDLOCK;
    if (ll_only)
        l.confine.landlock.ruleset_fd = ll_ruleset_fd;
    l.cmd_stack_size = 256 * 1024;
    l.cmd_stack = xmalloc(l.cmd_stack_size);

    int report[2] = {-1, -1}, life[2] = {-1, -1};
    int ret = -1, pidfd = -1, sfd = -1;
    sigset_t fwd, all;
    signals_forwarded(&fwd);
    all = fwd;
    sigaddset(&all, SIGCHLD);
    sigaddset(&all, SIGPIPE); /* a write to a dead sandbox fails with EPIPE instead */
    /* The run's cgroups (or rlimits), before anything else: PID 1 is cloned into them. */
    if (limits_prepare(&l.limits, &p->limits, err) < 0)
        goto out_fds;
    result->limits = limits_kind_name(l.limits.kind);
    if (pipe2(report, O_CLOEXEC) < 0 || pipe2(life, O_CLOEXEC) < 0) {
        err_set(err, CORDON_STAGE_SUPERVISE, errno, "pipe");
        goto out_fds;
    }
    l.report_fd = report[1];
    l.life_fd = life[0];
    l.life_wfd = life[1];
    /* The creation control (supervise/creation.h): PID 1 fills it in the sandbox. */
#ifndef CORDON_NO_CREATION_CONTROL
    if (!ll_only && l.confine.enabled) {
        l.cc = xcalloc(1, sizeof *l.cc);
        l.scratch.want_proc_fd = true;
    }
#endif
    l.cordon_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0); /* close-on-exec; -1: pipe only */
    /* Block the forwarded signals before the clone so that none is lost between the
     * clone and the signalfd; the command gets the caller's mask back. */
    if (sigprocmask(SIG_BLOCK, &all, &l.orig_mask) < 0) {
        err_set(err, CORDON_STAGE_SUPERVISE, errno, "sigprocmask");
        goto out_fds;
    }
    TRACE("clone");
    pid_t pid = ll_only ? reaper_clone(l.limits.into_fd, &pidfd, err)
                        : ns_clone_into(p->network != CORDON_NETWORK_HOST, l.limits.into_fd, &pidfd, err);
    if (pid < 0 && l.limits.into_fd >= 0) {
        /* The kernel would not start a process in the run's cgroup: rlimits instead. */
        char why[sizeof err->message + sizeof l.limits.where + 64];
        snprintf(why, sizeof why, "cannot start the sandbox in %s (%s)", l.limits.where, err->message);
        err_clear(err);
        if (limits_fallback(&l.limits, why, err) == 0) {
            result->limits = limits_kind_name(l.limits.kind);
            pid = ll_only ? reaper_clone(-1, &pidfd, err) : ns_clone(p->network != CORDON_NETWORK_HOST, &pidfd, err);
        }
    }
    if (pid == 0 && ll_only)
        reaper_main(&l);
    if (pid == 0)
        pid1_main(&l);
    if (pid < 0)
        goto out_mask;
    close(report[1]);
    report[1] = -1;
    close(life[0]);
    life[0] = -1;
    sfd = signalfd(-1, &fwd, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd < 0) {
        err_set(err, CORDON_STAGE_SUPERVISE, errno, "signalfd");
        pidfd_signal(pidfd, SIGKILL);
    }
    fcntl(report[0], F_SETFL, O_NONBLOCK);

    outcome o = {0};
    bool timed_out = false, report_eof = false;
    long long deadline = timeout > 0 ? now_ms() + (long long)(timeout * 1000.0 + 0.999) : -1;
    for (;;) {
        struct pollfd fds[3] = {
            {.fd = pidfd, .events = POLLIN},
            {.fd = report_eof ? -1 : report[0], .events = POLLIN},
            {.fd = sfd, .events = POLLIN},
        };
        int wait_ms = -1;
        if (deadline >= 0) {
            long long left = deadline - now_ms();
            wait_ms = left > 0 ? (int)(left > 1000000 ? 1000000 : left) : 0;
        }
        int cpu_ms = limits_next_check_ms(&l.limits);
        if (cpu_ms >= 0 && (wait_ms < 0 || cpu_ms < wait_ms))
            wait_ms = cpu_ms;
        int n = poll(fds, 3, wait_ms);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            err_set(err, CORDON_STAGE_SUPERVISE, errno, "poll");
            pidfd_signal(pidfd, SIGKILL);
            break;
        }
        if (n == 0 && deadline >= 0 && now_ms() >= deadline) {
            /* Killing PID 1 makes the kernel kill every process in the namespace. */
            timed_out = true;
            pidfd_signal(pidfd, SIGKILL);
            deadline = -1;
            continue;
        }
        if (limits_cpu_used_up(&l.limits))
            pidfd_signal(pidfd, SIGKILL); /* --limit-cpu: the whole sandbox, as a timeout */
        if (fds[1].revents)
            report_eof = drain(report[0], &o);
        if (o.have_exit && !wait_teardown)
            break; /* every process of the sandbox but the exiting PID 1 is gone */
        if (fds[2].revents & POLLIN) {
            struct signalfd_siginfo si;
            while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
                pidfd_signal(pidfd, (int)si.ssi_signo);
        }
        if (fds[0].revents & POLLIN)
            break;
    }
    TRACE("pid1-exited");
    siginfo_t info;
    memset(&info, 0, sizeof info);
    if (o.have_exit && !wait_teardown) {
        /* PID 1 stays our zombie until the caller exits (CORDON_RUN_EXITING). */
        info.si_code = CLD_EXITED;
    } else if (RETRY_EINTR(waitid(P_PIDFD, (id_t)pidfd, &info, WEXITED)) < 0) {
        err_set(err, CORDON_STAGE_SUPERVISE, errno, "waitid");
        goto out_mask;
    }
    if (!report_eof)
        drain(report[0], &o);
    fill_result(&o, &info, timed_out, result, err);
    ret = (o.setup_failed || o.exec_failed || (!result->started && !timed_out)) ? -1 : 0;
    limits_finish(&l.limits, wait_teardown);
    if (limits_outcome(&l.limits, &o, timed_out, result, err) == 1)
        ret = result->started ? 0 : -1;

out_mask:
    if (sfd >= 0) {
        /* Signals that arrived after the last poll still belong to the command, which
         * is gone: drop them rather than deliver them to the caller. */
        struct signalfd_siginfo si;
        while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
            ;
        close(sfd);
    }
    {
        /* The SIGCHLD of our own child was consumed by waitid: do not leave it pending. */
        sigset_t chld;
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        struct timespec zero = {0, 0};
        if (!sigismember(&l.orig_mask, SIGCHLD))
            while (sigtimedwait(&chld, NULL, &zero) == SIGCHLD)
                ;
        sigset_t pipe_set;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        if (!sigismember(&l.orig_mask, SIGPIPE))
            while (sigtimedwait(&pipe_set, NULL, &zero) == SIGPIPE)
                ;
    }
    sigprocmask(SIG_SETMASK, &l.orig_mask, NULL);
out_fds:
    /* Every process of the sandbox is gone by now (the loop above ends only when PID 1
     * has exited or has reported that it killed everything else). */
    for (int i = 0; i < 2; i++) {
        if (report[i] >= 0)
            close(report[i]);
        if (life[i] >= 0)
            close(life[i]);
    }
    if (pidfd >= 0)
        close(pidfd);
    if (l.cordon_pidfd >= 0)
        close(l.cordon_pidfd);
    limits_finish(&l.limits, wait_teardown);
    root_scratch_free(&l.scratch);
    confine_prep_free(&l.confine);
    free(l.cc);
    free(l.cmd_stack);
    return ret;
}
