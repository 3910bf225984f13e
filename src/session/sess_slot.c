// SPDX-License-Identifier: Apache-2.0
/* The slots of a session's PID 1 (sess_pid1.h): one per command, moved from state to
 * state by one function and its table; the reports to the commands' clients. */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "session/sess_pid1.h"
#include "util/err.h"

/* The slots' states and what moves them: the next state, or -1 (0 is SLOT_FREE, so the
 * rows name every cell).  A client that leaves a running command does not move its slot:
 * the command is killed (or, detached, stays), and its shepherd's reaping frees it. */
static const signed char slot_table[][SLOT_EV_COUNT] = {
    [SLOT_FREE] = {[SLOT_EV_CONNECT] = SLOT_PENDING,
                   [SLOT_EV_REFUSE] = -1,
                   [SLOT_EV_START] = -1,
                   [SLOT_EV_KEEP] = -1,
                   [SLOT_EV_REAPED] = -1},
    [SLOT_PENDING] = {[SLOT_EV_CONNECT] = -1,
                      [SLOT_EV_REFUSE] = SLOT_FREE,
                      [SLOT_EV_START] = SLOT_RUNNING,
                      [SLOT_EV_KEEP] = -1,
                      [SLOT_EV_REAPED] = -1},
    [SLOT_RUNNING] = {[SLOT_EV_CONNECT] = -1,
                      [SLOT_EV_REFUSE] = -1,
                      [SLOT_EV_START] = -1,
                      [SLOT_EV_KEEP] = SLOT_KEPT,
                      [SLOT_EV_REAPED] = SLOT_FREE},
    [SLOT_KEPT] = {[SLOT_EV_CONNECT] = -1,
                   [SLOT_EV_REFUSE] = -1,
                   [SLOT_EV_START] = -1,
                   [SLOT_EV_KEEP] = -1,
                   [SLOT_EV_REAPED] = SLOT_FREE},
};

int sess_slot_next(int state, sess_slot_event ev)
{
    if (state < 0 || state >= (int)(sizeof slot_table / sizeof slot_table[0]) || ev < 0 || ev >= SLOT_EV_COUNT)
        return -1;
    return slot_table[state][ev];
}

bool sess_slot_step(sess_mem *m, sess_slot *s, sess_slot_event ev)
{
    int next = sess_slot_next(s->state, ev);
    if (next < 0)
        return false;
    switch (next) {
    case SLOT_FREE:
        sess_ep_del_close(m, &s->conn);
        sess_ep_del_close(m, &s->listener);
        if (s->stack >= 0)
            m->stack_used[s->stack] = false; /* (its shepherd is reaped: nothing runs on it) */
        s->stack = -1;
        break;
    case SLOT_PENDING: {
        uint32_t gen = s->gen + 1;
        memset(s, 0, sizeof *s);
        s->gen = gen;
        s->conn = s->listener = s->stack = -1;
        s->deadline_ms = -1;
        break;
    }
    case SLOT_RUNNING:
        s->timed_out = s->killed = s->have_status = s->abandoned = false;
        s->status = 0;
        s->refused = 0;
        s->n_refusals = 0;
        s->leader = 0;
        s->listener = -1;
        break;
    case SLOT_KEPT:
        /* what it left runs on; the client has its answer */
        sess_report_final(s);
        sess_ep_del_close(m, &s->conn);
        break;
    }
    s->state = next;
    return true;
}

void sess_ep_add(sess_mem *m, int fd, uint32_t events, uint64_t tag)
{
    struct epoll_event ev = {.events = events, .data.u64 = tag};
    (void)epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev);
}

void sess_ep_del_close(sess_mem *m, int *fd)
{
    if (*fd < 0)
        return;
    (void)epoll_ctl(m->epfd, EPOLL_CTL_DEL, *fd, NULL);
    close(*fd);
    *fd = -1;
}

void sess_tell(int fd, report_kind kind, const cordon_error *e, int value, const char *text)
{
    if (fd < 0)
        return;
    report_msg m;
    report_fill(&m, kind, e, value, text);
    while (send(fd, &m, sizeof m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

void sess_tell_error(int fd, cordon_stage stage, int errnum, const char *fmt, ...)
{
    cordon_error e = {0};
    va_list ap;
    va_start(ap, fmt);
    err_setv(&e, stage, errnum, fmt, ap);
    va_end(ap);
    sess_tell(fd, REPORT_SETUP_ERROR, &e, 0, NULL);
}

void sess_tell_msg(int fd, const report_msg *msg)
{
    while (send(fd, msg, sizeof *msg, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

void sess_report_final(sess_slot *s)
{
    for (unsigned i = 0; i < s->n_refusals; i++) {
        char text[900];
        snprintf(text, sizeof text, "%s %s: %s", s->refusals[i].what, s->refusals[i].path, s->refusals[i].why);
        sess_tell(s->conn, REPORT_REFUSAL, NULL, (int)(i + 1 == s->n_refusals ? s->refused : 0), text);
    }
    if (s->timed_out)
        sess_tell(s->conn, REPORT_TIMEOUT, NULL, 0, NULL);
    else
        sess_tell(s->conn, REPORT_EXIT, NULL, s->have_status ? s->status : SIGKILL, NULL);
}

void sess_kill_command(sess_slot *s)
{
    if (s->shep > 0 && !s->killed) {
        kill(s->shep, SIGKILL); /* its subtree is then PID 1's: the sweep takes it */
        s->killed = true;
    }
}

static void shep_msg(sess_mem *m, const sess_shep_msg *msg)
{
    if (msg->slot < 0 || msg->slot >= SESS_SLOTS)
        return;
    sess_slot *s = &m->slots[msg->slot];
    if (msg->kind != SESS_SHEP_EXITED || s->state != SLOT_RUNNING)
        return;
    s->status = msg->value;
    s->have_status = true;
    if (s->flags & SESS_REQ_KEEP)
        sess_slot_step(m, s, SLOT_EV_KEEP);
}

/* What came while PID 1 waited in raw system calls (sess_park_wait). */
void sess_flush_queue(sess_mem *m)
{
    for (size_t i = 0; i < m->n_queue; i++)
        shep_msg(m, &m->queue[i]);
    m->n_queue = 0;
}

void sess_drain_shep(sess_mem *m)
{
    sess_shep_msg msgs[32];
    for (;;) {
        ssize_t n = read(m->shep_r, msgs, sizeof msgs);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        for (size_t i = 0; i < (size_t)n / sizeof msgs[0]; i++)
            shep_msg(m, &msgs[i]);
    }
}
