// SPDX-License-Identifier: Apache-2.0
/* A session command's request (session/wire.h), decoded by a pure function: PID 1
 * reads it from another process, so it is checked here field by field before anything
 * acts on it, and unit-tested (tests/unit/test_sess_request.c) and fuzzed
 * (fuzz/fuzz_sess_request.c) apart from PID 1.  No allocation, no system call: the
 * strings stay in the request's buffer, the pointers go into an array the caller gives. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct sess_cmd_req {
    uint32_t flags;       /* SESS_REQ_* */
    mode_t umask;         /* 0777 at most */
    uint64_t sigmask;     /* the signals blocked for the command (1 << (N - 1)) */
    long long timeout_ms; /* as sent: 0 the session's, < 0 none */
    uint16_t ws_row, ws_col, ws_xpixel, ws_ypixel;
    const char *cwd; /* NULL: the session's; else absolute */
    char **argv;     /* argc >= 1, argv[0] not empty, NULL-ended */
    char **envp;     /* the session's variables, those the request names replaced, then the request's */
} sess_cmd_req;

/* Decode the request buf[0..len) for a session whose environment is session_env
 * (NULL-ended).  argv and envp are laid out in ptrs[0..n_ptrs).  0, or -EINVAL / -E2BIG
 * with *why the message for the client ("malformed ..."). */
int sess_req_decode(const char *buf, size_t len, char *const *session_env, char **ptrs, size_t n_ptrs,
                    sess_cmd_req *out, const char **why);
