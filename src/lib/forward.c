// SPDX-License-Identifier: Apache-2.0
#include "lib/forward.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "lib/proc.h"

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

int proc_wait_forwarding(cordon_proc *c, cordon_result *res, cordon_error *err)
{
    sigset_t fwd, old;
    sigemptyset(&fwd);
    for (size_t i = 0; i < sizeof forwarded / sizeof *forwarded; i++)
        sigaddset(&fwd, forwarded[i]);
    int sfd = -1;
    if (sigprocmask(SIG_BLOCK, &fwd, &old) == 0)
        sfd = signalfd(-1, &fwd, SFD_CLOEXEC | SFD_NONBLOCK);
    /* PID 1's reports too: its final one (once it has killed and reaped the rest) ends
     * the wait without waiting for the kernel to tear its namespaces down (outer_wait) */
    struct pollfd pfd[3] = {{.fd = cordon_proc_exit_fd(c), .events = POLLIN},
                            {.fd = sfd, .events = POLLIN},
                            {.fd = proc_report_fd(c), .events = POLLIN}};
    int w = 1;
    for (;;) {
        pfd[2].fd = proc_report_fd(c);
        int n = poll(pfd, 3, -1);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
            break;
        if (n > 0 && pfd[2].revents && (w = cordon_proc_wait(c, 0, res, err)) != 1)
            break; /* ended (0), or a failure (-1) */
        struct signalfd_siginfo si;
        while (sfd >= 0 && read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
            (void)cordon_proc_kill(c, (int)si.ssi_signo, NULL); /* (a command already gone: nothing to forward to) */
    }
    if (w == 1)
        w = cordon_proc_wait(c, -1, res, err);
    if (sfd >= 0)
        (void)close(sfd);                       /* (a signalfd: nothing to flush) */
    (void)sigprocmask(SIG_SETMASK, &old, NULL); /* (a mask that was valid: cannot fail) */
    /* the caller exits next: the kernel reaps PID 1 then, without waiting here for the
     * namespaces' teardown (cordon_proc_free would, ~0.25 ms); a sanitizer build frees
     * it, so that its leak check sees nothing left */
#if defined(__SANITIZE_ADDRESS__)
    cordon_proc_free(c);
#endif
    if (w < 0)
        return -1;
    return res->started || res->timed_out ? 0 : -1;
}
