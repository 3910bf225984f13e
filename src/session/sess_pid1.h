// SPDX-License-Identifier: Apache-2.0
/* The parts of a session's PID 1 (session.h), each in its own file, called by its event
 * loop (pid1.c):
 *   - sess_slot.c   the slots' states and the one function that moves them (its table),
 *                   the reports to clients, the shepherds' messages;
 *   - sess_check.c  the policy check before every command;
 *   - sess_sweep.c  the sweep of PID 1's children that are no command's, and the end;
 *   - sess_spare.c  the next command's shepherd and process, made ahead of it;
 *   - sess_request.c the request, decoded by a pure function (sess_request.h).
 * PID 1 allocates nothing: everything is in sess_mem. */
#pragma once
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "session/session.h"

/* ------------------------------------------------------------------------------------ */
/* events (pid1.c): an epoll tag says what it is about, and for a slot's descriptors the
 * slot and its generation (a slot released and taken again within one batch of events
 * must not get the events of its previous command) */

enum { T_SIG = 1, T_LIFE, T_CTL, T_SHEP, T_CONN, T_LISTENER };

typedef struct sess_tag {
    int kind; /* T_* */
    int slot;
    uint32_t gen;
} sess_tag;

static inline uint64_t sess_tag_pack(int kind, int slot, uint32_t gen)
{
    return ((uint64_t)gen << 32) | ((uint64_t)(uint32_t)slot << 8) | (uint64_t)(kind & 0xff);
}

static inline sess_tag sess_tag_unpack(uint64_t t)
{
    return (sess_tag){.kind = (int)(t & 0xff), .slot = (int)((t >> 8) & 0xffffff), .gen = (uint32_t)(t >> 32)};
}

void sess_ep_add(sess_mem *m, int fd, uint32_t events, uint64_t tag);
void sess_ep_del_close(sess_mem *m, int *fd);

/* ------------------------------------------------------------------------------------ */
/* slots (sess_slot.c) */

/* What happens to a slot.  Each moves it from one state to another by the table of
 * sess_slot.c (sess_slot_step); one that the slot's state has no row for is ignored. */
typedef enum sess_slot_event {
    SLOT_EV_CONNECT, /* FREE -> PENDING: a client connected; its request is awaited */
    SLOT_EV_REFUSE,  /* PENDING -> FREE: the request was refused, or its client left */
    SLOT_EV_START,   /* PENDING -> RUNNING: the command is handed to a shepherd */
    SLOT_EV_KEEP,    /* RUNNING -> KEPT: --keep, the command's own process ended */
    SLOT_EV_REAPED,  /* RUNNING or KEPT -> FREE: its shepherd was reaped */
    SLOT_EV_COUNT
} sess_slot_event;

/* Apply ev to slot s, with the actions of the state it enters (FREE: its descriptors
 * closed and its stack free; PENDING: a new generation, nothing held; RUNNING: no
 * status yet; KEPT: the client told, its connection closed).  false: ev does not apply
 * to s's state, and nothing changed. */
bool sess_slot_step(sess_mem *m, sess_slot *s, sess_slot_event ev);
/* The next state for ev in state, or -1 (the table itself, for the unit test). */
int sess_slot_next(int state, sess_slot_event ev);

/* A report to a client: never blocks (a client that does not read loses it). */
void sess_tell(int fd, report_kind kind, const cordon_error *e, int value, const char *text);
void sess_tell_error(int fd, cordon_stage stage, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void sess_tell_msg(int fd, const report_msg *msg);
/* The command is over (or, under --keep, its own process is): tell the client. */
void sess_report_final(sess_slot *s);
void sess_kill_command(sess_slot *s);
/* The shepherds' messages: read from the pipe, or queued while PID 1 waited in raw
 * system calls (sess_spare.c) and handled now. */
void sess_drain_shep(sess_mem *m);
void sess_flush_queue(sess_mem *m);

/* ------------------------------------------------------------------------------------ */
/* the policy check (sess_check.c) */

/* Once the root is built: what every command checks again before it starts. */
void sess_record_checks(const launch *l, sess_mem *m);
/* Can this command run with the session's policy?  false: m->broken_why (never again)
 * or m->check_why (not now) says why. */
bool sess_policy_holds(launch *l, sess_mem *m);

/* ------------------------------------------------------------------------------------ */
/* the sweep (sess_sweep.c): raw system calls only (raw.h), as it also runs while a
 * command's process may be using the C library in PID 1's memory */

/* Everything dies: the owner is gone, or the session can no longer be run safely. */
__attribute__((noreturn)) void sess_end(launch *l, report_kind why);
/* Kill and reap every child of PID 1 that is neither a live shepherd nor a
 * creation-control worker (or end the session when that cannot be done). */
void sess_sweep(launch *l, sess_mem *m);
/* A process PID 1 reaped: the command's own process of a slot whose shepherd died? */
void sess_note_leader(sess_mem *m, pid_t pid, int status);

/* ------------------------------------------------------------------------------------ */
/* the spare (sess_spare.c) */

/* The command's part of the spare's start (sess_start). */
typedef struct sess_cmd_fields {
    int slot;
    uint32_t flags;
    mode_t umask;
    sigset_t mask;
    char **argv, **envp;
    const char *cwd;
    bool ctty;
    int slave; /* ctty: the terminal's slave, else -1 */
} sess_cmd_fields;

void sess_apply_fields(sess_start *st, const sess_cmd_fields *f);
/* Make the spare (f: for this command, where the shepherd copies PID 1's memory).
 * 0, or -errno. */
int sess_make_spare(launch *l, sess_mem *m, const sess_cmd_fields *f);
/* The spare, made for no command in particular, gone (its command process ended, its
 * shepherd's stack kept until it is reaped): a command with a terminal gets one made for
 * it. */
void sess_drop_spare(launch *l, sess_mem *m);
/* Wait, in raw system calls only, for the spare's command process to be ready (want
 * SESS_SHEP_READY) or for the shepherd of slot `slot` to say its command exec'd (want
 * SESS_SHEP_STARTED, *value: its pid or -errno).  0, or -errno. */
int sess_park_wait(launch *l, sess_mem *m, pid_t shep, int want, int slot, int *value, int listener);
