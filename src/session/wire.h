// SPDX-License-Identifier: Apache-2.0
/* The session protocol: fixed-layout messages on SOCK_SEQPACKET sockets (one message,
 * one record; descriptors travel with SCM_RIGHTS).
 *
 *   the owner  -> PID 1   control socket (a socketpair): SESS_CTL_CONN + one descriptor,
 *                         a command's connection (the other end is the caller's)
 *   a client   -> holder  the published socket (cordon_session_listen): a sess_hello
 *                         first, with the client's user namespace and the session
 *                         directory as descriptors (proofs that it runs outside every
 *                         sandbox, see session.h); an exec's connection is then handed
 *                         to PID 1 as above
 *   a client   -> PID 1   a command's connection: one sess_req (+ the command's stdin,
 *                         stdout and stderr), then sess_sig messages
 *   PID 1      -> client  report_msg records (supervise/report.h): REPORT_STARTED (with
 *                         the terminal's master under a tty; with SESS_REQ_DETACH, the
 *                         command's pid in the session as its value; with the text
 *                         "landlock" from a session under --isolation landlock,
 *                         session/llsession.h, whose holder stands in for PID 1), REPORT_SETUP_ERROR,
 *                         REPORT_EXEC_ERROR, REPORT_REFUSAL, and one final REPORT_EXIT or
 *                         REPORT_TIMEOUT
 *   holder     -> client  a sess_reply to a hello that is not an exec (INFO, STOP) or
 *                         that was refused
 *
 * Everything is read by a process that trusts nothing it reads: lengths are checked,
 * strings are NUL-terminated by the reader. */
#pragma once
#include <stdint.h>

#define SESS_MAGIC   0x636f7353u /* "Ssoc" */
#define SESS_VERSION 1u

/* owner -> PID 1 */
#define SESS_CTL_CONN 1u
#define SESS_CTL_IDLE 2u /* a sess_ctl_idle: end after this long without a command */

typedef struct sess_ctl {
    uint32_t magic;
    uint32_t kind;
} sess_ctl;

typedef struct sess_ctl_idle {
    uint32_t magic;
    uint32_t kind; /* SESS_CTL_IDLE */
    int64_t ms;    /* <= 0: never */
} sess_ctl_idle;

/* client -> holder */
#define SESS_HELLO_EXEC 1u
#define SESS_HELLO_INFO 2u
#define SESS_HELLO_STOP 3u

typedef struct sess_hello {
    uint32_t magic;
    uint32_t version;
    uint32_t kind;
    uint32_t pad;
} sess_hello;

/* holder -> client */
#define SESS_REPLY_OK      0u
#define SESS_REPLY_REFUSED 1u

typedef struct sess_reply {
    uint32_t magic;
    uint32_t status; /* SESS_REPLY_* */
    int32_t holder_pid;
    uint32_t pad;
    int64_t started; /* wall-clock seconds since the epoch */
    char name[72];
    char text[512]; /* REFUSED: why */
} sess_reply;

/* client -> PID 1: a command */
#define SESS_REQ_KEEP 0x1u /* what the command leaves running stays in the session */
#define SESS_REQ_TTY  0x2u /* a terminal of the sandbox's own */
/* with KEEP: PID 1 reports REPORT_STARTED with the command's pid, and the client's going
 * away does not kill the command (`exec --keep --detach`) */
#define SESS_REQ_DETACH 0x4u
#define SESS_REQ_FLAGS  (SESS_REQ_KEEP | SESS_REQ_TTY | SESS_REQ_DETACH)

typedef struct sess_req {
    uint32_t magic;
    uint32_t version;
    uint32_t flags;
    uint32_t argc; /* then: cwd ("" for the session's), argv[argc], env[envc], each NUL-ended */
    uint32_t envc;
    uint32_t umask;
    int64_t timeout_ms;                            /* 0: the session's; < 0: none */
    uint64_t sigmask;                              /* the signals blocked for the command (1 << (N - 1)) */
    uint16_t ws_row, ws_col, ws_xpixel, ws_ypixel; /* SESS_REQ_TTY: the window */
} sess_req;

/* client -> PID 1, later: a signal for the command (SIGKILL: its whole tree) */
#define SESS_SIG_MAGIC 0x53696753u
typedef struct sess_sig {
    uint32_t magic;
    int32_t sig;
} sess_sig;

/* The largest request (the command line, environment and working directory): one
 * message, which the sender's socket buffer must hold at once. */
#define SESS_REQ_MAX (192u * 1024u)
