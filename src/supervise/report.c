#include "supervise/report.h"

#include <stdio.h>
#include <errno.h>
#include <signal.h>
#include <poll.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise/creation.h"
#include "supervise/signals.h"
#include "util/fdutil.h"
#include "util/trace.h"

void report_send(int fd, report_kind kind, const cordon_error *e, int value, const char *text)
{
    report_msg m;
    memset(&m, 0, sizeof m);
    m.kind = kind;
    m.value = value;
    if (e) {
        m.stage = (int32_t)e->stage;
        m.errnum = e->errnum;
        snprintf(m.text, sizeof m.text, "%.*s", (int)sizeof m.text - 1, e->message);
    } else if (text) {
        snprintf(m.text, sizeof m.text, "%.*s", (int)sizeof m.text - 1, text);
    }
    /* Nothing useful can be done if cordon is gone; the exit status still tells. */
    (void)write_all(fd, &m, sizeof m);
}

void report_fail(int fd, const cordon_error *e)
{
    report_send(fd, REPORT_SETUP_ERROR, e, 0, NULL);
    _exit(CORDON_EXIT_SETUP);
}

void report_supervise(int report_fd, int sfd, pid_t cmd, void (*finish)(void), cc_state *cc)
{
    int listener = cc ? cc->listener : -1;
    for (;;) {
        if (listener >= 0) {
            struct pollfd fds[2] = {{.fd = sfd, .events = POLLIN}, {.fd = listener, .events = POLLIN}};
            if (poll(fds, 2, -1) < 0) {
                if (errno == EINTR)
                    continue;
                _exit(CORDON_EXIT_SETUP);
            }
            if (fds[1].revents & POLLIN)
                cc_serve_one(cc);
            else if (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL))
                listener = -1; /* no process is left under the filter */
            if (!(fds[0].revents & POLLIN))
                continue;
        }
        struct signalfd_siginfo si;
        ssize_t n = read(sfd, &si, sizeof si);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof si)
            _exit(CORDON_EXIT_SETUP);
        if (si.ssi_signo == (uint32_t)SIGNAL_CORDON_GONE) {
            /* --isolation landlock: cordon is gone, and no PID namespace takes the rest
             * down with us: kill everything first (its parent-death signal). */
            kill(cmd, SIGKILL);
            finish();
            _exit(CORDON_EXIT_SETUP);
        }
        if (si.ssi_signo != SIGCHLD) {
            kill(cmd, (int)si.ssi_signo);
            continue;
        }
        for (;;) {
            int status;
            pid_t w = waitpid(-1, &status, WNOHANG);
            if (w <= 0)
                break;
            if (cc && w != cmd)
                cc_reaped(cc, w, status);
            if (w == cmd) {
                TRACE("command-exited");
                /* Whatever the command left behind dies now, before cordon is told:
                 * when cordon returns, nothing of the sandbox runs any more. */
                finish();
                if (cc)
                    cc_report(cc, report_fd);
                report_send(report_fd, REPORT_EXIT, NULL, status, NULL);
                _exit(0);
            }
        }
    }
}
