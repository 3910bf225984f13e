// SPDX-License-Identifier: Apache-2.0
/* Everything the sandboxed side needs, prepared by the parent before clone3: the
 * child reads it and allocates nothing (it is a copy of a possibly multi-threaded
 * process, where malloc may be unusable).
 *
 * A descriptor the parent opens for the child goes in a field here AND in
 * launch_child_fds() (outer.c): right after the clone the child closes every other
 * descriptor it inherited, so that a run never holds another run's pipes. */
#pragma once
#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "confine/confine.h"
#include "plan/plan.h"
#include "sandbox/root.h"
#include "supervise/creation.h"
#include "supervise/limits.h"
#include "supervise/pty.h"

typedef struct launch {
    const plan *plan;
    char *const *argv;
    char **envp;
    uid_t uid;
    gid_t gid;
    int report_fd;         /* write end: setup errors, exec errors, the command's status */
    int life_fd;           /* read end of a pipe whose write end only the parent holds: EOF means
                    * cordon is gone */
    int life_wfd;          /* its write end, which PID 1 must close at once */
    cc_state *cc;          /* the creation control (creation.h), or NULL (a build without
                    * confinement, bubblewrap's exact mode, a session under --isolation
                    * landlock) */
    int ll_sup_fd;         /* --isolation landlock: the supervisor's Landlock ruleset
                            * (confine/llonly.h), which the stand-in applies to itself
                            * before it starts the command; -1: none */
    int cc_sock[2];        /* PID 1 <- command's process: the listener, before the exec */
    bool share_files;      /* the command's process shares PID 1's descriptor table until the
                            * exec (CLONE_FILES; a run's PID 1 without a terminal to set up):
                            * the listener it makes is PID 1's at once, no hand-over through
                            * cc_sock.  The exec gives the command a copy of the table with
                            * every descriptor but 0, 1 and 2 closed, as without it */
    bool pdeathsig;        /* cordon was started from its process's main thread: PID 1 also gets
                     * a parent-death signal (which follows that one thread, so a run
                     * spawned from any other thread relies on life_fd alone) */
    long long deadline_ms; /* CLOCK_MONOTONIC, in ms: PID 1 ends the run then (the timeout,
                            * enforced inside so that a caller that never waits is held to
                            * it too); -1: none */
    int helper_fd;         /* PID 1's end of the socket to the run's host-side helpers (outer.h), or -1 */
    int cordon_pidfd;      /* a pidfd of cordon's own process, or -1: the pipe alone cannot say
                       * that cordon is gone while a process forked after the clone still
                       * holds a copy of its write end */
    sigset_t orig_mask;    /* the caller's signal mask, restored for the command */
    void *cmd_stack;       /* stack for the command's process until it execs */
    size_t cmd_stack_size;
    root_scratch scratch;
    limits_run limits;    /* the run's cgroups, or the rlimits for the command */
    confine_prep confine; /* Landlock and seccomp, ready to apply */
    /* Sessions (src/session): PID 1 starts commands on request instead of one command. */
    struct sess_mem *session; /* PID 1's memory for them, or NULL for a run */
    int session_fd;           /* PID 1's end of the session's control socket, or -1 */
    const char *cwd;          /* the command's working directory; NULL: the plan's */
    bool ctty;                /* a session's --tty: stdin is a pseudo-terminal of the sandbox's
                               * own, the controlling terminal of the session the command's
                               * shepherd leads; the command takes its foreground in a process
                               * group of its own (child.c, take_terminal) */
    launch_pty pty;           /* CORDON_SPAWN_PTY: the command's terminal (pty.h), .on false: none */
    bool keep;                /* --isolation landlock, a session's --keep (outer.h) */
    bool pty_group;           /* PID 1 leads the session of pty, and the command gets a process group
                               * of its own in it (pty.h, pty_lead) */
} launch;

/* First steps of the process cordon cloned (PID 1, or --isolation landlock's stand-in):
 * keep the forwarded signals and SIGCHLD blocked, die with cordon (PDEATHSIG), and stop
 * at once if cordon is already gone.  -1 with err filled (stage as given) on failure. */
int launch_tie_to_cordon(launch *l, cordon_stage stage, cordon_error *err);

/* The descriptors PID 1 (or the stand-in) keeps while it supervises, besides sfd: the
 * report pipe, the life socket, the CPU-time file.  Returns how many (at most 8). */
size_t launch_supervise_fds(const launch *l, int *keep);

/* The one way the helper programs (PID 1, the stand-in, the command's process) fail a
 * step: report err to cordon and exit (child.c).  Never returns. */
__attribute__((noreturn)) void launch_fail(launch *l, cordon_error *err);
/* Start the command's process (child_exec on l->cmd_stack, sharing the address space
 * until the exec): its pid, or -1 with errno. */
pid_t launch_start_command(launch *l);

/* The sandbox's PID 1: build the root, start the command, reap, report.  Never returns. */
__attribute__((noreturn)) void pid1_main(launch *l);
/* lockdown.c, for a run's PID 1 and a session's: PID 1's last steps before it
 * supervises: non-dumpable, no capabilities (but CAP_SYS_PTRACE in the permitted set for
 * the creation control), no_new_privs, no descriptor but launch_supervise_fds() and
 * keep[], umask 077. */
int pid1_lock_down(launch *l, const int *keep, size_t n, cordon_error *err);
/* A command's creation-control listener, as PID 1 gets it: fail closed on a kernel that
 * cannot hand descriptors back (SECCOMP_ADDFD_FLAG_SEND), ask for synchronous wake-ups. */
int pid1_check_listener(int listener, cordon_error *err);
/* --isolation landlock (reaper.c): no namespaces; a child subreaper supervises the
 * command instead of PID 1.  Never returns. */
__attribute__((noreturn)) void reaper_main(launch *l);
pid_t reaper_clone(int cgroup_fd, int *pidfd, cordon_error *err);
/* Kill every descendant of a child subreaper, as they are reparented to it (reaper.c):
 * what PID 1's kill(-1) does where there is no PID namespace of the sandbox's own. */
void reaper_kill_descendants(void);
/* The command's process (PID 2): confine and exec.  Never returns. */
__attribute__((noreturn)) void child_exec(launch *l, const sigset_t *orig_mask);
/* The same in two halves, for a session's command process made before its command is
 * known (src/session): what does not depend on the command (signals, a new session, the
 * confinement and the command's own filter), then what does (its terminal, signal mask,
 * working directory and exec; never returns).  The working directory is entered with no
 * capability left, where child_exec enters it just before dropping them. */
void child_confine(launch *l);
__attribute__((noreturn)) void child_start(launch *l, const sigset_t *mask);
