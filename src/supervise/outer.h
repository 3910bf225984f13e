// SPDX-License-Identifier: Apache-2.0
/* Stage 6: cordon's side of a run: clone the sandbox, collect what it reports, read the
 * command's output for cordon_run_output, and turn it all into a cordon_result.
 *
 * What this does to the calling process (the library's promise, include/cordon.h):
 *   - one child, the sandbox's PID 1, cloned with no exit signal and a pidfd and reaped
 *     through it: no SIGCHLD, invisible to the caller's waitpid(-1); plus, for a run
 *     with cgroup limits (or stubs), a janitor child reaped the same way;
 *   - the calling thread blocks every signal for the few microseconds of the clone (as
 *     posix_spawn does), so that the child never runs the caller's handlers; nothing
 *     else about signals, handlers or the process's mask is touched;
 *   - descriptors: all close-on-exec; the child closes every inherited descriptor it
 *     does not need right after the clone, so a run never holds another run's pipes.
 * Signals for the command are the caller's to send (outer_kill); the timeout and the
 * cgroup CPU limit are enforced by PID 1 itself, and by outer_wait too while it waits. */
#pragma once
#include <stdbool.h>

#include <signal.h>

#include "plan/plan.h"
#include "supervise/report.h"

/* A host-side helper for one run (the network's proxy and bridges, say): a process or
 * thread of the caller's side that serves the sandbox while it runs.  Started once PID 1
 * exists (before the command can start: PID 1 is still setting up), stopped after the
 * sandbox is gone or when the run fails.  `sock` is cordon's end of a socketpair
 * (SOCK_SEQPACKET, close-on-exec) whose other end PID 1 holds as launch.helper_fd; the
 * helper owns `sock` from start() on.  A helper must leave the caller alone as the rest
 * of the library does (util/proc.h: no SIGCHLD, reaped through a pidfd). */
typedef struct outer_helper {
    const char *name; /* for messages */
    /* -1 with err filled fails the run (the sandbox is killed, nothing ran) */
    int (*start)(void *ctx, int pid1_pidfd, int sock, cordon_error *err);
    /* after the sandbox is gone (or never started): stop, reap, release; called once,
     * also when start() failed.  The command line exits right after cordon_proc_wait
     * without freeing the run (so as not to wait for the namespaces' teardown): a helper
     * must also end by itself once pid1_pidfd is readable or its caller is gone. */
    void (*stop)(void *ctx);
    void *ctx;
} outer_helper;

typedef struct outer_opts {
    int stdio[3];               /* what PID 1 and the command get as 0, 1 and 2; -1: the caller's own */
    int ll_ruleset_fd;          /* --isolation landlock: the ruleset confine/llonly.c built */
    const struct llonly *ll;    /* --isolation landlock: the rest of what it prepared (the
                                   supervisor's ruleset, the private HOME and TMPDIR), or NULL */
    const outer_helper *helper; /* the run's host-side helper, or NULL (one process may
                                   serve several purposes: the proxy and the bridges) */
    struct sess_mem *session;   /* a session (src/session): PID 1 starts no command but
                                 serves session_fd (its end of the control socket) */
    int session_fd;
    bool pty; /* the command's 0 and 1 (and 2, with pty_stderr) are a terminal of the
                         sandbox's own (supervise/pty.h); outer_start returns once its master
                         is here (outer_take_pty) */
    bool pty_stderr;
    bool keep; /* --isolation landlock, a session's --keep: the stand-in reports the command's
                  end (REPORT_EXIT) and its pid when it starts (REPORT_STARTED), and supervises
                  what the command left until that is gone or cordon is (loop.c) */
} outer_opts;

typedef struct outer_run outer_run;

/* Start the sandbox (returns once PID 1 runs; the command starts when PID 1 has built
 * the root).  p is sealed (plan_seal): the mounts, the environment, the network, the
 * limits and the timeout (none for a session's PID 1: its commands have theirs) are all
 * read from it, never changed.  p and argv are copied into PID 1 by the clone and may be
 * freed once this returns.  -1 with err filled: nothing runs, nothing is left. */
int outer_start(const plan *p, char *const argv[], const outer_opts *o, outer_run **out, cordon_error *err);

/* Called for output read from out_fd; non-zero stops the run (SIGKILL to the sandbox). */
typedef int (*outer_output_fn)(const char *data, size_t len, void *ctx);

/* Wait up to timeout_ms (-1: without end) for the run to end, meanwhile reading out_fd
 * (non-blocking; -1: none) into fn.  0: it ended (*res, *err filled: err's stage is NONE
 * when the command ran), 1: still running, -1: waiting failed (err filled).  Ended means
 * the command and every process it left are dead; PID 1 itself may still be tearing
 * the namespaces down (outer_free reaps it).  Once ended, returns 0 and the same
 * result every time. */
int outer_wait(outer_run *r, int timeout_ms, int out_fd, outer_output_fn fn, void *ctx, cordon_result *res,
               cordon_error *err);
/* A session's PID 1 (outer_opts.session) reports when it is ready to start commands:
 * wait up to timeout_ms for that.  0: ready; -1: it failed (err, with the stage) or
 * ended.  */
int outer_wait_ready(outer_run *r, int timeout_ms, cordon_error *err);
/* The master of the command's terminal (outer_opts.pty), handed over once: the caller
 * owns it from then on.  -1 when there is none, or PID 1 failed before making it (its
 * result says why). */
int outer_take_pty(outer_run *r);
/* The pidfd of PID 1: readable once the whole sandbox is gone. */
int outer_pidfd(const outer_run *r);
/* The pipe PID 1 reports on, while it is open (else -1): readable when a report came,
 * the final one included, which ends the run before PID 1 itself has gone (outer_wait).
 * A caller that relays PID 1's reports itself instead of outer_wait reads it (a session
 * under --isolation landlock, session/llsession.c). */
int outer_report_fd(const outer_run *r);
/* Signal the run: SIGKILL ends the whole sandbox at once; the signals PID 1 forwards
 * (supervise/signals.h) go to the command; 0 tests that PID 1 is alive.  -1 with errno
 * (EINVAL for any other signal, ESRCH when the sandbox is gone).  Async-signal-safe. */
int outer_kill(const outer_run *r, int sig);
/* Kill what still runs, reap PID 1, remove the run's cgroups and stubs, stop the
 * helpers, close and free.  NULL is fine. */
void outer_free(outer_run *r);

/* What the sandbox reported (for a session: what PID 1 reported on one command). */
typedef struct outer_outcome {
    bool have_exit;
    int wait_status;
    bool setup_failed;
    bool exec_failed;
    int exec_errnum;
    bool timed_out; /* PID 1 (or we) ended the run at the deadline */
    bool cpu_limit; /* PID 1 ended the run: the cgroup's CPU time was used up */
    report_msg setup;
    char exec_what[256];
    char exec_detail[800]; /* REPORT_EXEC_DETAIL: what is missing though the command is there */
    unsigned limits_hit;   /* REPORT_LIMITS_HIT: what PID 1 saw reached */
    int proc_kept;         /* REPORT_PROC_KEPT: 1 for the supervisor only (--no-proc), 2 shown */
    unsigned long refused; /* the creation control's refusals (REPORT_REFUSAL) */
    unsigned n_refusals;
    size_t refusals_len;
    char refusals[4096]; /* the first of them, each "OPERATION PATH: WHY" and a NUL */
} outer_outcome;
/* One report into the outcome; whether it is the last (after which PID 1 only exits);
 * the result the outcome makes (pid1: how PID 1 ended, or NULL), for a session's command,
 * which has no limits of its own (a run's result is made by the same code, outer.c
 * result_from, with its limits). */
void outer_take_message(outer_outcome *o, const report_msg *m);
bool outer_final_report(const outer_outcome *o);
/* What a REPORT_PROC_KEPT says, for cordon_result.proc_kept (NULL when none came). */
const char *outer_proc_kept(const outer_outcome *o);
void outer_fill_result(const outer_outcome *o, const siginfo_t *pid1, cordon_result *r, cordon_error *err);
