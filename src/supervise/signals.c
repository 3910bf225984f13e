// SPDX-License-Identifier: Apache-2.0
#include "supervise/signals.h"

#include <errno.h>
#include <poll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "supervise/launch.h"
#include "util/err.h"

void signals_forwarded(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGHUP);
    sigaddset(set, SIGQUIT);
    sigaddset(set, SIGUSR1);
    sigaddset(set, SIGUSR2);
    sigaddset(set, SIGWINCH);
    sigaddset(set, SIGCONT);
}

int launch_tie_to_cordon(launch *l, cordon_stage stage, cordon_error *err)
{
    sigset_t fwd;
    signals_forwarded(&fwd);
    sigaddset(&fwd, SIGCHLD);
    /* cordon blocked these before cloning us (so none is lost); keep them blocked. */
    if (sigprocmask(SIG_BLOCK, &fwd, NULL) < 0)
        return err_set(err, stage, errno, "sigprocmask");
    if (l->pdeathsig && prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        return err_set(err, stage, errno, "PR_SET_PDEATHSIG");
    /* The parent-death signal is only armed from now on: if cordon is already gone,
     * the pipe only cordon holds the write end of says so. */
    close(l->life_wfd);
    struct pollfd lp = {.fd = l->life_fd, .events = POLLIN};
    if (poll(&lp, 1, 0) != 0 && (lp.revents & POLLHUP))
        _exit(CORDON_EXIT_SETUP);
    /* ... but a process forked after the clone (a janitor of cordon's, or a child the
     * library's caller forked meanwhile, not yet scheduled on a busy machine) may still
     * hold a copy of that write end: ask cordon's process itself (its pidfd is readable
     * once it has exited).  Without this, a cordon killed in its first milliseconds left
     * the whole sandbox running (seen with the stubs' janitor). */
    struct pollfd cp = {.fd = l->cordon_pidfd, .events = POLLIN};
    if (l->cordon_pidfd >= 0 && poll(&cp, 1, 0) > 0)
        _exit(CORDON_EXIT_SETUP);
    return 0;
}

size_t launch_supervise_fds(const launch *l, int *keep)
{
    size_t k = 0;
    keep[k++] = l->report_fd;
    if (l->life_fd >= 0)
        keep[k++] = l->life_fd;
    if (l->limits.cpu_fd >= 0)
        keep[k++] = l->limits.cpu_fd;
    if (l->helper_fd >= 0)
        keep[k++] = l->helper_fd;
    if (l->session_fd >= 0)
        keep[k++] = l->session_fd;
    return k;
}
