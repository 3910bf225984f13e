// SPDX-License-Identifier: Apache-2.0
/* A session's PID 1: the starter (session.h), its event loop.  A clone of a possibly
 * multi-threaded caller: system calls only, no allocation; everything lives in sess_mem,
 * which the owner mapped before the clone.  Its parts are in files of their own
 * (sess_pid1.h): the slots and their table, the policy check, the sweep, the spare and
 * the request's decoder. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "session/raw.h"
#include "session/sess_pid1.h"
#include "session/sess_request.h"
#include "supervise/limits.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/time.h"
#include "util/trace.h"

static void shep_reaped(launch *l, sess_mem *m, sess_slot *s, int status)
{
    s->shep = 0;
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == SESS_SHEP_CLEAN))
        sess_sweep(l, m);
    if (s->state == SLOT_RUNNING && !s->abandoned)
        sess_report_final(s);
    sess_slot_step(m, s, SLOT_EV_REAPED);
}

static void reap(launch *l, sess_mem *m)
{
    m->reap_pending = false;
    sess_drain_shep(m);
    for (;;) {
        int status;
        pid_t w = waitpid(-1, &status, WNOHANG | __WALL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        /* what a shepherd said before it exited is in the pipe now (it writes first) */
        sess_drain_shep(m);
        if (m->spare.shep > 0 && w == m->spare.shep) {
            /* the spare died (a command of the session may kill it): a new one later;
             * its command process, if it is still there, is PID 1's now */
            sess_ep_del_close(m, &m->spare.go);
            sess_ep_del_close(m, &m->spare.listener);
            m->stack_used[m->spare.stack] = false;
            m->spare.shep = 0;
            sess_sweep(l, m);
            continue;
        }
        bool retired = false;
        for (size_t i = 0; i < m->n_retired && !retired; i++)
            if (m->retired[i].pid == w) {
                m->stack_used[m->retired[i].stack] = false;
                m->retired[i] = m->retired[--m->n_retired];
                retired = true;
            }
        if (retired)
            continue;
        sess_slot *s = NULL;
        for (int i = 0; i < SESS_SLOTS && !s; i++)
            if (m->slots[i].state != SLOT_FREE && m->slots[i].shep == w)
                s = &m->slots[i];
        if (s) {
            shep_reaped(l, m, s, status);
            continue;
        }
        sess_note_leader(m, w, status);
        if (l->cc)
            cc_reaped(l->cc, w, status);
    }
}

static void drain_signals(sess_mem *m)
{
    struct signalfd_siginfo si[8];
    for (;;) {
        ssize_t n = read(m->sfd, si, sizeof si);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        for (size_t i = 0; i < (size_t)n / sizeof si[0]; i++)
            if (si[i].ssi_signo == SIGCHLD)
                m->reap_pending = true;
        /* anything else (a command may signal PID 1) is ignored */
    }
}
/* A pseudo-terminal of the sandbox's own: master to the client, slave for the command. */
static int open_tty(const sess_cmd_req *rq, int *slave)
{
    int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0)
        return -errno;
    int unlock = 0;
    if (ioctl(master, TIOCSPTLCK, &unlock) < 0) {
        int e = errno;
        close(master);
        return -e;
    }
    *slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (*slave < 0) {
        int e = errno;
        close(master);
        return -e;
    }
    struct winsize ws = {
        .ws_row = rq->ws_row, .ws_col = rq->ws_col, .ws_xpixel = rq->ws_xpixel, .ws_ypixel = rq->ws_ypixel};
    if (ws.ws_row && ws.ws_col)
        (void)ioctl(master, TIOCSWINSZ, &ws);
    return master;
}

static void send_master(int conn, int master)
{
    report_msg msg;
    report_fill(&msg, REPORT_STARTED, NULL, 0, NULL);
    (void)send_fds(conn, &msg, sizeof msg, &master, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
}
/* The command's fields for its process, from the decoded request. */
static sess_cmd_fields cmd_fields_of(int i, const sess_cmd_req *rq, int slave)
{
    sess_cmd_fields f = {.slot = i,
                         .flags = rq->flags,
                         .umask = rq->umask,
                         .argv = rq->argv,
                         .envp = rq->envp,
                         .cwd = rq->cwd,
                         .ctty = slave >= 0,
                         .slave = slave};
    sigemptyset(&f.mask);
    for (int sig = 1; sig <= 64 && sig < NSIG; sig++)
        if ((rq->sigmask >> (sig - 1)) & 1)
            sigaddset(&f.mask, sig);
    return f;
}

/* Why no spare could take the command, to its client. */
static void tell_no_spare(const sess_mem *m, int conn)
{
    if (m->broken)
        sess_tell_error(conn, CORDON_STAGE_CONFINE, 0, "%s", m->broken_why);
    else if (m->spare.have_error)
        sess_tell_msg(conn, &m->spare.error);
    else
        sess_tell_error(conn, CORDON_STAGE_SUPERVISE, EAGAIN, "cannot prepare a process for the command");
}

/* Hand the command to the spare sp (slot i, now running): its descriptors (the
 * connection, for its own errors, then stdin, stdout, stderr) on the spare's socket, and
 * wait in raw system calls for its exec.  0 with *leader, or -errno. */
static int hand_to_spare(launch *l, sess_mem *m, int i, const sess_spare *sp, const int fds[4], int *leader)
{
    char byte = 'C';
    _Alignas(struct cmsghdr) char ctl[FD_MSG_CTL];
    struct iovec iov;
    struct msghdr mh;
    fd_msg_init(&mh, &iov, &byte, 1, ctl, fds, 4);
    TRACE("session-bind");
    /* From the moment it has them the command's process uses the C library in PID 1's
     * memory: raw calls only until it has exec'd (sess_park_wait). */
    long sent = RAW(SYS_sendmsg, sp->go, &mh, MSG_NOSIGNAL);
    *leader = -EPIPE;
    int r = sent == 1 ? sess_park_wait(l, m, sp->shep, SESS_SHEP_STARTED, i, leader, sp->listener) : (int)sent;
    TRACE("session-started");
    return r;
}

/* Start the command of slot i, whose request (len bytes) is in m->req, with stdio. */
static void start_command(launch *l, sess_mem *m, int i, size_t len, int stdio[3])
{
    sess_slot *s = &m->slots[i];
    int conn = s->conn;
    sess_cmd_req rq;
    const char *why = NULL;
    int r = sess_req_decode(m->req, len, l->envp, m->ptrs, m->n_ptrs, &rq, &why);
    if (r < 0) {
        sess_tell_error(conn, CORDON_STAGE_USAGE, -r, "%s", why);
        sess_slot_step(m, s, SLOT_EV_REFUSE);
        return;
    }
    if (l->cc)
        for (int k = 0; k < 3; k++)
            cc_handed(l->cc, stdio[k]);
    if (!sess_policy_holds(l, m)) {
        sess_tell_error(conn, CORDON_STAGE_ROOT, 0, "%s", m->broken ? m->broken_why : m->check_why);
        sess_slot_step(m, s, SLOT_EV_REFUSE);
        return;
    }
    int master = -1, slave = -1;
    if ((rq.flags & SESS_REQ_TTY) && (master = open_tty(&rq, &slave)) < 0) {
        sess_tell_error(conn, CORDON_STAGE_SUPERVISE, -master, "cannot make a terminal in the session (/dev/ptmx)");
        sess_slot_step(m, s, SLOT_EV_REFUSE);
        return;
    }
    sess_cmd_fields f = cmd_fields_of(i, &rq, slave);
    /* the spare (made now if there is none) takes the command; one with a terminal gets
     * a spare of its own, whose shepherd leads the terminal's session (shepherd.c) */
    if (slave >= 0)
        sess_drop_spare(l, m);
    int made = m->spare.shep <= 0 ? sess_make_spare(l, m, &f) : 0;
    if (made < 0) {
        if (slave >= 0 && !m->broken && !m->spare.have_error)
            sess_tell_error(conn, CORDON_STAGE_SUPERVISE, -made,
                            "cannot prepare the process of a command with a terminal");
        else
            tell_no_spare(m, conn);
        if (master >= 0)
            close(master), close(slave);
        sess_slot_step(m, s, SLOT_EV_REFUSE);
        return;
    }
    sess_spare sp = m->spare;
    m->spare = (sess_spare){.go = -1, .listener = -1, .stack = -1};

    long long tmo = rq.timeout_ms == 0 ? m->default_timeout_ms : rq.timeout_ms;
    sess_slot_step(m, s, SLOT_EV_START);
    s->flags = rq.flags;
    s->deadline_ms = tmo > 0 ? now_ms() + tmo : -1;
    s->shep = sp.shep;
    s->stack = sp.stack;

    sess_apply_fields(&m->start, &f); /* (made just now, without shared memory: it has them) */
    int fds[4] = {conn, slave >= 0 ? slave : stdio[0], slave >= 0 ? slave : stdio[1], slave >= 0 ? slave : stdio[2]};
    int leader;
    r = hand_to_spare(l, m, i, &sp, fds, &leader);
    /* a detached command's pid, before what came meanwhile (its end, say: the queue
     * reports it and closes the connection) */
    if (r == 0 && leader > 0 && (s->flags & SESS_REQ_DETACH))
        sess_tell(conn, REPORT_STARTED, NULL, leader, NULL); /* the client goes: the command stays */
    close(sp.go);
    sess_flush_queue(m);
    if (slave >= 0)
        close(slave);
    if (r < 0 || leader < 0) {
        sess_tell_error(conn, CORDON_STAGE_SUPERVISE, r < 0 ? -r : -leader,
                        "the command's process could not be started");
        s->abandoned = true; /* reaped later: no other report */
        sess_kill_command(s);
        if (master >= 0)
            close(master);
        if (sp.listener >= 0)
            close(sp.listener);
        return;
    }
    s->leader = leader;
    if (master >= 0) {
        send_master(conn, master);
        close(master);
    }
    if (sp.listener >= 0) {
        s->listener = sp.listener;
        sess_ep_add(m, sp.listener, EPOLLIN, sess_tag_pack(T_LISTENER, i, s->gen));
    }
}

/* ------------------------------------------------------------------------------------ */
/* connections */

static void slot_hangup(sess_mem *m, sess_slot *s)
{
    if (s->state == SLOT_PENDING) {
        sess_slot_step(m, s, SLOT_EV_REFUSE);
        return;
    }
    /* the client went away before the end: the command goes too (as when cordon run is
     * killed), and nobody is told; a detached one stays (it was told the pid) */
    s->abandoned = true;
    if (!(s->flags & SESS_REQ_DETACH))
        sess_kill_command(s);
    sess_ep_del_close(m, &s->conn);
}

static void read_request(launch *l, sess_mem *m, int i)
{
    sess_slot *s = &m->slots[i];
    /* four: a fourth descriptor is seen, and refused */
    int fds[4] = {-1, -1, -1, -1}, mflags;
    size_t nfds;
    ssize_t n = recv_fds(s->conn, m->req, SESS_REQ_MAX, fds, 4, &nfds, &mflags, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        for (size_t k = 0; k < nfds; k++)
            close(fds[k]);
        sess_slot_step(m, s, SLOT_EV_REFUSE);
        return;
    }
    if ((mflags & (MSG_TRUNC | MSG_CTRUNC)) || nfds != 3) {
        sess_tell_error(s->conn, CORDON_STAGE_USAGE, (mflags & MSG_TRUNC) ? E2BIG : EINVAL,
                        (mflags & MSG_TRUNC) ? "the command, its environment and working directory are "
                                               "too large for a session (at most %u bytes)"
                                             : "malformed request to the session (%u)",
                        SESS_REQ_MAX);
        sess_slot_step(m, s, SLOT_EV_REFUSE);
    } else {
        start_command(l, m, i, (size_t)n, fds);
    }
    for (size_t k = 0; k < nfds; k++)
        close(fds[k]);
}

/* A client's later messages: signals for its command. */
static void read_signals(sess_mem *m, sess_slot *s)
{
    for (;;) {
        sess_sig msg;
        ssize_t n = recv(s->conn, &msg, sizeof msg, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        if (n == 0) {
            slot_hangup(m, s);
            return;
        }
        if (n != (ssize_t)sizeof msg || msg.magic != SESS_SIG_MAGIC || s->state != SLOT_RUNNING)
            continue;
        if (msg.sig == SIGKILL)
            sess_kill_command(s);
        else if (msg.sig > 0 && msg.sig < NSIG && s->leader > 0 && !s->have_status) {
            /* SIGCONT continues the command's process group (its own), as fg continues a
             * job that ^Z stopped whole (src/supervise/loop.c says the same for a run) */
            if (msg.sig == SIGCONT)
                kill(-s->leader, SIGCONT);
            kill(s->leader, msg.sig); /* the client checked it is one that is forwarded */
        }
    }
}

static void new_connection(sess_mem *m, int fd, launch *l)
{
    int i = 0;
    while (i < SESS_SLOTS && m->slots[i].state != SLOT_FREE)
        i++;
    if (i == SESS_SLOTS) {
        sess_tell_error(fd, CORDON_STAGE_SUPERVISE, EAGAIN, "too many commands in the session at once (%d)",
                        SESS_SLOTS);
        close(fd);
        return;
    }
    sess_slot *s = &m->slots[i];
    sess_slot_step(m, s, SLOT_EV_CONNECT);
    s->conn = fd;
    sess_ep_add(m, fd, EPOLLIN, sess_tag_pack(T_CONN, i, s->gen));
    read_request(l, m, i); /* most often already there */
}

static void read_ctl(launch *l, sess_mem *m)
{
    for (;;) {
        sess_ctl_idle msg; /* the largest; a sess_ctl is its beginning */
        char ctl[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {&msg, sizeof msg};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
        ssize_t n = recvmsg(m->ctl_fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0)
            sess_end(l, 0); /* the owner closed it: the session is over */
        int fd = -1;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
        if (fd < 0 && n == (ssize_t)sizeof msg && msg.magic == SESS_MAGIC && msg.kind == SESS_CTL_IDLE) {
            m->idle_ms = msg.ms > 0 ? (long long)msg.ms : -1;
            m->idle_since_ms = now_ms();
            continue;
        }
        if (fd < 0)
            continue;
        if (n != (ssize_t)sizeof(sess_ctl) || msg.magic != SESS_MAGIC || msg.kind != SESS_CTL_CONN) {
            close(fd);
            continue;
        }
        new_connection(m, fd, l);
    }
}

/* The listener of slot i is readable: serve one call, and keep its refusals. */
static void serve(launch *l, sess_mem *m, sess_slot *s)
{
    cc_state *cc = l->cc;
    cc->listener = s->listener;
    cc->n_refusals = 0;
    cc->refused = 0;
    cc_serve_one(cc);
    if (cc->refused) {
        for (size_t k = 0; k < cc->n_refusals && s->n_refusals < SESS_REFUSALS; k++)
            s->refusals[s->n_refusals++] = cc->refusals[k];
        s->refused += cc->refused;
    }
    cc->n_refusals = 0;
    cc->refused = 0;
    cc->listener = -1;
    (void)m;
}

/* ------------------------------------------------------------------------------------ */

/* PID 1's descriptors, its memory's initial state, and its lock-down (on failure, the
 * report ends it). */
static void setup(launch *l, sess_mem *m, int sfd)
{
    cordon_error err = {0};
    m->sfd = sfd;
    m->ctl_fd = l->session_fd;
    if (fcntl(sfd, F_SETFL, O_NONBLOCK) < 0) { /* the loop reads it dry: it must not block */
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "cannot make the signalfd non-blocking");
        report_fail(l->report_fd, &err);
    }
    m->proc_fd = l->scratch.proc_fd >= 0 ? fcntl(l->scratch.proc_fd, F_DUPFD_CLOEXEC, 3)
                                         : open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (m->proc_fd < 0) {
        err_set(&err, CORDON_STAGE_ROOT, errno, "a session needs a procfs of its own, to tell its processes apart");
        report_fail(l->report_fd, &err);
    }
    sess_record_checks(l, m);
    int shep[2], ll[2];
    if (pipe2(shep, O_CLOEXEC | O_NONBLOCK) < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ll) < 0 ||
        (m->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "cannot set up the session's PID 1");
        report_fail(l->report_fd, &err);
    }
    /* the shepherds write a record at a time (atomic: less than PIPE_BUF) and may wait:
     * a blocking write end, a non-blocking read end */
    if (fcntl(shep[1], F_SETFL, 0) < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "cannot set up the session's PID 1");
        report_fail(l->report_fd, &err);
    }
    m->shep_r = shep[0];
    m->shep_w = shep[1];
    m->ll_r = ll[0];
    m->ll_w = ll[1];
    for (int i = 0; i < SESS_SLOTS; i++)
        m->slots[i] = (sess_slot){.state = SLOT_FREE, .conn = -1, .listener = -1, .stack = -1, .gen = 0};
    m->spare = (sess_spare){.go = -1, .listener = -1, .stack = -1};
    int keep[] = {sfd,
                  m->epfd,
                  m->proc_fd,
                  m->shep_r,
                  m->shep_w,
                  m->ll_r,
                  m->ll_w,
                  l->cc ? l->cc->pw.proc_fd : -1,
                  l->cc ? l->cc->pw.root_fd : -1};
    if (pid1_lock_down(l, keep, sizeof keep / sizeof keep[0], &err) < 0)
        report_fail(l->report_fd, &err);
    sess_ep_add(m, sfd, EPOLLIN, sess_tag_pack(T_SIG, 0, 0));
    sess_ep_add(m, l->life_fd, EPOLLIN, sess_tag_pack(T_LIFE, 0, 0));
    sess_ep_add(m, m->ctl_fd, EPOLLIN, sess_tag_pack(T_CTL, 0, 0));
    sess_ep_add(m, m->shep_r, EPOLLIN, sess_tag_pack(T_SHEP, 0, 0));
}

/* How long the loop may wait: until the idle timeout, the next command's deadline or
 * the next CPU check (-1: no limit).  Commands past their deadline are killed, and an
 * idle session past its timeout ends. */
static int next_wait_ms(launch *l, sess_mem *m)
{
    long long now = now_ms();
    int wait_ms = -1;
    /* idle: no command running or waiting to start (detached and kept ones do not
     * count); since the last one ended, or since the start */
    bool busy = false;
    for (int i = 0; i < SESS_SLOTS && !busy; i++) {
        const sess_slot *s = &m->slots[i];
        busy = s->state == SLOT_PENDING || (s->state == SLOT_RUNNING && !(s->flags & SESS_REQ_DETACH));
    }
    if (busy || m->was_busy)
        m->idle_since_ms = now;
    m->was_busy = busy;
    if (!busy && m->idle_ms > 0) {
        long long left = m->idle_since_ms + m->idle_ms - now;
        if (left <= 0)
            sess_end(l, 0); /* the holder sees PID 1 end, and ends too */
        wait_ms = (int)(left > 1000000 ? 1000000 : left);
    }
    for (int i = 0; i < SESS_SLOTS; i++) {
        sess_slot *s = &m->slots[i];
        if (s->state != SLOT_RUNNING || s->deadline_ms < 0 || s->killed)
            continue;
        if (s->deadline_ms <= now) {
            s->timed_out = true;
            sess_kill_command(s);
            continue;
        }
        long long left = s->deadline_ms - now;
        if (wait_ms < 0 || left < wait_ms)
            wait_ms = (int)left;
    }
    int cpu_ms = limits_next_check_ms(&l->limits);
    if (cpu_ms >= 0 && (wait_ms < 0 || cpu_ms < wait_ms))
        wait_ms = cpu_ms;
    return wait_ms;
}

/* One event of the loop. */
static void dispatch(launch *l, sess_mem *m, uint64_t tag, uint32_t ev)
{
    sess_tag t = sess_tag_unpack(tag);
    if ((t.kind == T_CONN || t.kind == T_LISTENER) && (t.slot >= SESS_SLOTS || m->slots[t.slot].gen != t.gen))
        return; /* about a command that is gone */
    sess_slot *s = t.kind == T_CONN || t.kind == T_LISTENER ? &m->slots[t.slot] : NULL;
    switch (t.kind) {
    case T_SIG: drain_signals(m); break;
    case T_LIFE: sess_end(l, 0); /* the owner is gone */
    case T_CTL: read_ctl(l, m); break;
    case T_SHEP: sess_drain_shep(m); break;
    case T_CONN:
        if (s->conn < 0)
            break;
        if (s->state == SLOT_PENDING)
            read_request(l, m, t.slot);
        else if (ev & EPOLLIN)
            read_signals(m, s);
        else if (ev & (EPOLLHUP | EPOLLERR))
            slot_hangup(m, s);
        break;
    case T_LISTENER:
        if (s->listener < 0)
            break;
        if (ev & EPOLLIN)
            serve(l, m, s);
        else if (ev & (EPOLLHUP | EPOLLERR))
            sess_ep_del_close(m, &s->listener); /* no process is left under its filter */
        break;
    }
}

void sess_pid1_main(launch *l, int sfd)
{
    sess_mem *m = l->session;
    setup(l, m, sfd);
    if (SESS_SHARED_VM)
        (void)sess_make_spare(l, m, NULL); /* the first command's, ahead of it (a failure is tried again) */
    report_send(l->report_fd, REPORT_STARTED, NULL, 0, NULL);
    TRACE("session-ready");

    struct epoll_event evs[64];
    m->idle_since_ms = now_ms();
    for (;;) {
        int wait_ms = next_wait_ms(l, m);
        /* the next command's process is made when nothing else is to be done */
        bool want_spare = SESS_SHARED_VM && m->spare.shep <= 0 && !m->broken && now_ms() >= m->spare.retry_ms;
        int n = epoll_wait(m->epfd, evs, 64, want_spare ? 0 : wait_ms);
        if (n < 0 && errno != EINTR)
            sess_end(l, 0);
        if (n == 0 && want_spare && sess_make_spare(l, m, NULL) < 0)
            m->spare.retry_ms = now_ms() + 200;
        if (limits_cpu_used_up(&l->limits))
            sess_end(l, REPORT_CPU_LIMIT);
        for (int k = 0; k < n; k++)
            dispatch(l, m, evs[k].data.u64, evs[k].events);
        if (m->reap_pending)
            reap(l, m);
    }
}
