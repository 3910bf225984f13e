// SPDX-License-Identifier: Apache-2.0
/* The supervising loop of PID 1 and of --isolation landlock's stand-in (report.h,
 * report_supervise): signals forwarded, orphans reaped, the creation control served, the
 * deadline and the limits watched, and the end reported through the report pipe. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise/creation.h"
#include "supervise/launch.h"
#include "supervise/report.h"
#include "supervise/signals.h"
#include "util/time.h"
#include "util/trace.h"

/* The deadline passed or the CPU time is used up: everything dies, cordon is told why. */
static __attribute__((noreturn)) void end_run(launch *l, void (*finish)(void), report_kind why)
{
    finish();
    if (l->cc)
        cc_report(l->cc, l->report_fd);
    report_send(l->report_fd, why, NULL, 0, NULL);
    _exit(0);
}

void report_supervise(launch *l, int sfd, pid_t cmd, void (*finish)(void))
{
    cc_state *cc = l->cc;
    int listener = cc ? cc->listener : -1;
    /* A session's --keep under --isolation landlock (outer.h): the command's pid now; its
     * end is reported when it comes, and what it left is supervised until it is gone.
     * cmd is 0 from then on: nothing is forwarded (kill(0) would reach our own group). */
    if (l->keep)
        report_send(l->report_fd, REPORT_STARTED, NULL, (int)cmd, NULL);
    for (;;) {
        int wait_ms = -1;
        if (l->deadline_ms >= 0) {
            long long left = l->deadline_ms - now_ms();
            if (left <= 0)
                end_run(l, finish, REPORT_TIMEOUT);
            wait_ms = left > 1000000 ? 1000000 : (int)left;
        }
        int cpu_ms = limits_next_check_ms(&l->limits);
        if (cpu_ms >= 0 && (wait_ms < 0 || cpu_ms < wait_ms))
            wait_ms = cpu_ms;
        struct pollfd fds[3] = {
            {.fd = sfd, .events = POLLIN},
            {.fd = listener, .events = POLLIN},
            {.fd = l->life_fd, .events = POLLIN},
        };
        int n = poll(fds, 3, wait_ms);
        if (n < 0 && errno != EINTR)
            _exit(CORDON_EXIT_SETUP);
        unsigned hit = l->limits.hit;
        limits_sample_pids(&l->limits,
                           cc && !cc->pw.proc_foreign ? cc->pw.proc_fd : -1); /* the container's counts others */
        if (l->limits.hit != hit) /* at once: the run may end by a kill, with no report after */
            report_send(l->report_fd, REPORT_LIMITS_HIT, NULL, (int)l->limits.hit, NULL);
        if (limits_cpu_used_up(&l->limits))
            end_run(l, finish, REPORT_CPU_LIMIT);
        if (n <= 0)
            continue;
        if (fds[2].revents & (POLLHUP | POLLERR | POLLIN)) {
            /* cordon is gone (nothing is ever written here): so is the sandbox, with no
             * one to report to */
            finish();
            _exit(CORDON_EXIT_SETUP);
        }
        if (fds[1].revents & POLLIN)
            cc_serve_one(cc);
        else if (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL))
            listener = -1; /* no process is left under the filter */
        if (!(fds[0].revents & POLLIN))
            continue;
        struct signalfd_siginfo si;
        ssize_t r = read(sfd, &si, sizeof si);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r != (ssize_t)sizeof si)
            _exit(CORDON_EXIT_SETUP);
        if (si.ssi_signo == (uint32_t)SIGNAL_CORDON_GONE) {
            /* --isolation landlock: cordon is gone, and no PID namespace takes the rest
             * down with us: kill everything first (its parent-death signal). */
            if (cmd > 0)
                kill(cmd, SIGKILL);
            finish();
            _exit(CORDON_EXIT_SETUP);
        }
        if (si.ssi_signo != SIGCHLD) {
            if (cmd > 0) {
                /* SIGCONT continues the command's process group (its own: setsid, or
                 * pty_join), as a shell's fg continues a job: the terminal's ^Z stopped all
                 * of it, a pipeline's every process (the kernel's TIOCSIG sends no SIGCONT) */
                if (si.ssi_signo == SIGCONT)
                    kill(-cmd, SIGCONT);
                kill(cmd, (int)si.ssi_signo);
            }
            continue;
        }
        for (;;) {
            int status;
            pid_t w = waitpid(-1, &status, WNOHANG);
            if (w < 0 && errno == ECHILD && cmd == 0)
                _exit(0); /* --keep: what the command left is all gone */
            if (w <= 0)
                break;
            if (cc && w != cmd)
                cc_reaped(cc, w, status);
            if (w == cmd && l->keep) {
                if (cc)
                    cc_report(cc, l->report_fd);
                report_send(l->report_fd, REPORT_EXIT, NULL, status, NULL);
                cmd = 0;
                l->deadline_ms = -1; /* (the command's timeout, not its leftovers') */
                continue;
            }
            if (w == cmd) {
                TRACE("command-exited");
                /* Whatever the command left behind dies now, before cordon is told:
                 * when cordon returns, nothing of the sandbox runs any more. */
                finish();
                if (cc)
                    cc_report(cc, l->report_fd);
                report_send(l->report_fd, REPORT_EXIT, NULL, status, NULL);
                _exit(0);
            }
        }
    }
}
