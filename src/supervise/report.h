// SPDX-License-Identifier: Apache-2.0
/* The report pipe from the sandbox to cordon: fixed-size messages, each written in
 * one write() (smaller than PIPE_BUF, so atomic). */
#pragma once
#include <stdint.h>
#include <sys/types.h>

#include "cordon.h"

struct cc_state;

typedef enum report_kind {
    REPORT_SETUP_ERROR = 1, /* setup failed: stage, errnum, text */
    REPORT_EXEC_ERROR,      /* execvp failed: errnum, text = the command */
    REPORT_STARTED,         /* the command is about to be executed */
    REPORT_EXIT,            /* the command ended: value = its wait status */
    REPORT_REFUSAL,         /* the creation control refused a call: text = "OP PATH: WHY";
                               value = the number refused in all, on the last one */
    REPORT_TIMEOUT,         /* the deadline passed: PID 1 killed everything */
    REPORT_CPU_LIMIT,       /* --limit-cpu used up (a cgroup's count): PID 1 killed everything */
    REPORT_EXEC_DETAIL,     /* before REPORT_EXEC_ERROR: what is missing although the command is
                               there (its interpreter, its ELF loader), text = a description */
    REPORT_LIMITS_HIT,      /* as soon as PID 1 sees one reached: value = 1u << cordon_limit of
                               the limits reached so far (under rlimits: the process count) */
    REPORT_PROC_KEPT,       /* a fresh procfs was refused (a container that masks parts of
                               /proc): the caller's is used; value = the command sees it */
} report_kind;

typedef struct report_msg {
    int32_t kind;
    int32_t stage;
    int32_t errnum;
    int32_t value;
    char option[32]; /* REPORT_SETUP_ERROR: cordon_error.option */
    char text[1008];
} report_msg;

void report_send(int fd, report_kind kind, const cordon_error *e, int value, const char *text);
/* The message report_send writes (for a writer that must not block: a session's PID 1). */
void report_fill(report_msg *m, report_kind kind, const cordon_error *e, int value, const char *text);
/* Report a setup failure and end the calling (sandbox-side) process with exit 125. */
__attribute__((noreturn)) void report_fail(int fd, const cordon_error *e);

struct launch;
/* loop.c: the supervising loop of PID 1 (and of --isolation landlock's stand-in): forward the
 * signals read from sfd to the command, reap orphans, serve the creation control's
 * notifications (l->cc, when it has a listener), and when the command ends call finish()
 * (kill and reap whatever it left), report the refusals and the status, and exit.  It
 * ends the run the same way, reporting why, when l's deadline passes or the run's cgroup
 * has used up its CPU time, and without a report when cordon is gone (EOF on
 * l->life_fd): the sandbox watches itself, so that a library caller that never waits
 * still gets its timeout, its limits and no orphaned sandbox. */
__attribute__((noreturn)) void report_supervise(struct launch *l, int sfd, pid_t cmd, void (*finish)(void));
