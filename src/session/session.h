// SPDX-License-Identifier: Apache-2.0
/* Sessions: one sandbox, built once, that commands are started in.
 *
 * The sandbox is a cordon run without a command: outer_start() clones PID 1 with the
 * session's memory (sess_mem, below), PID 1 builds the root, loads the deny filter and
 * Landlock, hardens itself as for a run, reports ready, and then serves (sess_pid1_main):
 *
 *   - commands: each arrives as a connection (a SOCK_SEQPACKET socket) carrying one
 *     request and the command's stdin, stdout and stderr (session/wire.h).  PID 1 is the
 *     starter: it cannot be signalled or traced from inside (it is the init of the PID
 *     namespace, non-dumpable, without capabilities) and allocates nothing;
 *   - a shepherd per command (shepherd.c): a child subreaper cloned by PID 1 into its own
 *     address space (CLONE_VM, its own stack), which starts the command's process and
 *     reaps everything below it.  What the command leaves behind, daemons and double
 *     forks included, is reparented to its shepherd, never to PID 1: its whole tree is
 *     the shepherd's subtree.  The next command's shepherd and process are made ahead of
 *     it, when PID 1 has nothing else to do (the spare): the process has done what does
 *     not depend on the command (child_confine: a new session, capabilities,
 *     no_new_privs, rlimits, the command's own seccomp filter, whose listener it handed
 *     to PID 1) and waits; a command then only hands it its descriptors and arguments
 *     (child_start: terminal, signal mask, working directory, exec).  Processes sharing
 *     PID 1's memory take turns: while one uses the C library, the others make raw
 *     system calls only (raw.h);
 *   - the kill: PID 1 SIGKILLs the shepherd, whose subtree is then reparented to PID 1;
 *     PID 1 kills every child of its own that is neither a shepherd nor a creation-control
 *     worker (the sweep), generation by generation, until none is left.  A command that
 *     kills its own shepherd (it can: same uid) gets exactly that;
 *   - the creation control: one listener per command (a filter allows one), all served
 *     by PID 1 with one cc_state;
 *   - the session's policy is checked before every command (sess_check.c, sess_policy_holds): every
 *     mount still where the root put it, no bind source deleted, no protected or denied
 *     name created on the host meanwhile; else the command fails with 125 -- every later
 *     one too where the policy can never be met again, only while the host's name is
 *     there where it can (a read-only or hiding mount whose file the host removed is held
 *     as a missing name from then on).
 *
 * The owner's side (owner.c: cordon_session_new/_spawn/_free, and publishing for the
 * command line: _listen/_serve) and the clients' (client.c: the commands' connections,
 * cordon_session_open) are ordinary library code. */
#pragma once
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon.h"
#include "session/wire.h"
#include "supervise/creation.h"
#include "supervise/launch.h"
#include "supervise/report.h"

#define SESS_SLOTS            256 /* commands at once (running or kept) */
#define SESS_REFUSALS         8   /* creation-control refusals kept per command */
#define SESS_S_STACK          (64u * 1024u)
#define SESS_C_STACK          (2u * 1024u * 1024u) /* until exec: execvp may need much */
#define SESS_GUARD            4096u
#define SESS_STACKS           (SESS_SLOTS + 1) /* every slot's shepherd, and the spare's */
#define SESS_SETUP_TIMEOUT_MS 10000            /* a shepherd that does not start its command */

typedef enum sess_slot_state {
    SLOT_FREE = 0,
    SLOT_PENDING, /* a connection, its request not read yet */
    SLOT_RUNNING, /* the command runs; its client waits */
    SLOT_KEPT,    /* --keep: the command exited and was reported; what it left runs on */
} sess_slot_state;

typedef struct sess_slot {
    int state;
    uint32_t gen;          /* taken this many times: events carry it (pid1.c) */
    int stack;             /* the shepherd's stack (sess_mem.stack_used), or -1 */
    int conn;              /* the client's connection, or -1 */
    int listener;          /* the creation control's listener of this command, or -1 */
    pid_t shep;            /* the shepherd while it lives, else 0 */
    pid_t leader;          /* the command's own process */
    uint32_t flags;        /* SESS_REQ_* */
    long long deadline_ms; /* CLOCK_MONOTONIC; -1: none */
    bool timed_out, killed, have_status, abandoned;
    int status; /* the leader's wait status */
    unsigned long refused;
    unsigned n_refusals;
    cc_refusal refusals[SESS_REFUSALS];
} sess_slot;

/* shepherd -> PID 1, on the shepherd pipe (one write each, atomic) */
typedef struct sess_shep_msg {
    int32_t slot;
    int32_t kind;  /* SESS_SHEP_* */
    int32_t value; /* STARTED: the command's pid or -errno; EXITED: its wait status */
    int32_t pad;
} sess_shep_msg;
#define SESS_SHEP_STARTED 1 /* the shepherd: its command's process exec'd (or died) */
#define SESS_SHEP_EXITED  2 /* the shepherd: its command's own process ended */
#define SESS_SHEP_READY   3 /* a spare's command process: confined, waiting for a command */
/* the shepherd's exit codes */
#define SESS_SHEP_CLEAN     0 /* nothing was left below it */
#define SESS_SHEP_LEFTOVERS 1 /* something was: sweep */
#define SESS_SHEP_FAILED    2 /* it could not start the command */

/* What the policy check compares (sess_pid1_main records it once the root is built). */
typedef struct sess_check {
    const char *dest;
    const char *why; /* the plan operation's */
    dev_t dev;
    ino_t ino;
    uint8_t kind;  /* SESS_CHECK_* */
    bool holdable; /* a read-only or hiding mount: should the host remove its file, the
                      name can be held as a missing one (the creation control refuses it) */
} sess_check;
#define SESS_CHECK_MOUNT  1u /* the same file at dest */
#define SESS_CHECK_BIND   2u /* and its source not deleted on the host */
#define SESS_CHECK_ABSENT 3u /* nothing at dest */

/* The spare's start, shared by PID 1, the shepherd and the command's process (which run
 * in PID 1's memory until the exec): set up when the spare is made, and the command's
 * part (bound, slot, flags, umask, mask, cl's argv, envp, cwd and ctty) written by PID 1
 * before it sends the command's descriptors on `go`. */
typedef struct sess_start {
    int go_c; /* the command's process's end of the spare's socket */
    int shep_w, ll_w;
    int tty_lead; /* a command with a terminal: its slave (in PID 1's descriptors, which the
                   * shepherd's are a copy of), the controlling terminal of a session the
                   * shepherd leads, so that ^Z stops the command (pid1.c, start_command);
                   * else -1 */
    void *c_stack_top;
    bool bound; /* a command was handed to it */
    int slot;
    uint32_t flags;
    mode_t umask;
    sigset_t mask;
    launch cl; /* PID 1's, with the command's argv, envp, cwd, report_fd, ctty */
} sess_start;

/* The next command's shepherd and process, made ahead of it (shepherd.c). */
typedef struct sess_spare {
    pid_t shep;   /* 0: none */
    int go;       /* PID 1's end of its socket */
    int listener; /* its creation-control listener, or -1 */
    int stack;
    long long retry_ms; /* after a failure: not again before then */
    bool have_error;
    report_msg error; /* why the last one could not be made */
} sess_spare;

/* PID 1's memory, mapped by the owner before the clone (PID 1 allocates nothing). */
typedef struct sess_mem {
    size_t map_size;
    long long default_timeout_ms; /* the policy's timeout, for each command; -1: none */
    sess_slot slots[SESS_SLOTS];
    size_t n_checks;
    sess_check *checks;
    size_t n_ptrs;
    char **ptrs;    /* argv and envp of the command being started */
    char *req;      /* SESS_REQ_MAX + 1 */
    char *c_stack;  /* SESS_C_STACK */
    char *s_stacks; /* SESS_STACKS * (SESS_GUARD + SESS_S_STACK) */
    bool stack_used[SESS_STACKS];
    sess_start start;
    sess_spare spare;
    sess_shep_msg queue[4 * SESS_SLOTS]; /* what came while PID 1 waited for a spare */
    size_t n_queue;
    struct {
        pid_t pid;
        int stack;
    } retired[16]; /* failed spares, until reaped */
    size_t n_retired;
    /* PID 1's state */
    int epfd, proc_fd, shep_r, shep_w, ll_r, ll_w, ctl_fd, sfd;
    bool probed; /* the first listener was checked (SECCOMP_ADDFD_FLAG_SEND) */
    bool reap_pending;
    bool broken; /* the policy can no longer be met: every command fails */
    char broken_why[768];
    char check_why[768]; /* why the policy check refused the command now (sess_policy_holds) */
    /* --idle-timeout (SESS_CTL_IDLE): the session ends once no command has run (running,
     * or its request pending; a detached or kept one does not count) for idle_ms */
    long long idle_ms; /* -1: never */
    long long idle_since_ms;
    bool was_busy;
    pid_t kids[1024]; /* the sweep's scratch */
    char scratch[16384];
} sess_mem;

/* The owner, before outer_start: map PID 1's memory for a plan of n_ops operations and
 * creation-control rules with an environment of envc entries.  NULL (errno) on failure. */
sess_mem *sess_mem_new(size_t n_ops, size_t envc, double timeout);
void sess_mem_free(sess_mem *m);

/* PID 1 of a session, once the root is built and confined (supervise/pid1.c): serve
 * commands until the owner is gone.  Never returns. */
__attribute__((noreturn)) void sess_pid1_main(launch *l, int sfd);

/* shepherd.c: the shepherd's entry (clone(2)'s fn), and the flags to clone it with. */
int sess_shepherd_main(void *arg);
int sess_shepherd_clone_flags(void);

/* ------------------------------------------------------------------------------------ */
/* the caller's side (client.c): one command in a session, behind a cordon_proc */

typedef struct sess_cmd sess_cmd;

/* Open a command's connection and send the request; `via` is the session's control
 * socket (an owned session: the connection's other end is handed to PID 1 there) or -1,
 * then `path` is the published socket to connect to.  stdio: the command's 0, 1, 2. */
int sess_cmd_start(int via, const char *path, char *const argv[], const int stdio[3], const cordon_session_cmd *opts,
                   sess_cmd **out, cordon_error *err);
int sess_cmd_fd(const sess_cmd *c);      /* readable when reports arrive (the end) */
int sess_cmd_tty(const sess_cmd *c);     /* the terminal's master, or -1 */
int sess_cmd_kill(sess_cmd *c, int sig); /* async-signal-safe */
/* As cordon_proc_wait: 0 ended (res, err), 1 still running, -1 error. */
int sess_cmd_wait(sess_cmd *c, int timeout_ms, cordon_result *res, cordon_error *err);
/* Kill what still runs, wait for the end, close, free. */
void sess_cmd_free(sess_cmd *c);

/* state.c */
/* The directory of this user's published sessions (created 0700 when `create`), or the
 * socket of session `name` in it; a name with a '/' is a path already. */
int sess_state_dir(char *buf, size_t n, bool create, cordon_error *err);
int sess_socket_path(const char *name, char *buf, size_t n, bool create, cordon_error *err);
int sess_check_name(const char *name, cordon_error *err);
/* Connect to a published session and say hello (kind SESS_HELLO_*), with the proofs
 * (session.h): the connected socket, or -1 with err (ENOENT/ECONNREFUSED: not running,
 * the stale socket removed). */
int sess_connect(const char *path, uint32_t kind, cordon_error *err);
