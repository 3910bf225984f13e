// SPDX-License-Identifier: Apache-2.0
/* The spare of a session's PID 1 (sess_pid1.h): the next command's shepherd and
 * process, made ahead of it, and PID 1's wait in raw system calls while they share its
 * memory. */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/raw.h"
#include "session/sess_pid1.h"
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif
#include "confine/seccomp.h"
#include "supervise/pathwalk.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/time.h"
#include "util/trace.h"

/* The one call of the command's process that its filter reports while PID 1 waits for
 * its exec, served in raw calls: umask(2) (the creation control remembers each thread's
 * umask), let through and remembered.  It comes before anything else could (child_start
 * makes no other reported call before the exec); anything else is refused. */
static void serve_parked(launch *l, int listener)
{
    _Alignas(8) unsigned char req[512];
    struct seccomp_notif *n = (struct seccomp_notif *)req;
    for (size_t i = 0; i < sizeof req; i++)
        req[i] = 0;
    if (RAW(SYS_ioctl, listener, SECCOMP_IOCTL_NOTIF_RECV, n) < 0)
        return;
    struct seccomp_notif_resp resp = {.id = n->id};
    if (seccomp_notify_op(n->data.arch, n->data.nr) == SC_OP_UMASK) {
        if (l->cc)
            pw_thread_changed(&l->cc->pw, (pid_t)n->pid, (int)(n->data.args[0] & 0777));
        resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    } else {
        resp.error = -EPERM;
    }
    RAW(SYS_ioctl, listener, SECCOMP_IOCTL_NOTIF_SEND, &resp);
}

/* Wait, in raw system calls only, for the spare's command process to be ready (want
 * SESS_SHEP_READY) or for the shepherd of slot `slot` to say its command exec'd (want
 * SESS_SHEP_STARTED, *value: its pid or -errno).  0, or -errno: the shepherd died
 * (-ESRCH; what it had started is swept) or did not answer in time (-ETIMEDOUT, killed).
 * Everything else that comes meanwhile is queued (sess_flush_queue). */
int sess_park_wait(launch *l, sess_mem *m, pid_t shep, int want, int slot, int *value, int listener)
{
    long long until = now_ms() + SESS_SETUP_TIMEOUT_MS;
    bool killed = false, dead = false;
    for (;;) {
        sess_shep_msg msgs[16];
        long n;
        int found = 0, result = 0;
        while (!found && (n = RAW(SYS_read, m->shep_r, msgs, sizeof msgs)) > 0) {
            for (size_t i = 0; i < (size_t)n / sizeof msgs[0]; i++) {
                const sess_shep_msg *r = &msgs[i];
                if (!found && want == SESS_SHEP_READY && r->kind == SESS_SHEP_READY) {
                    found = 1;
                } else if (!found && want == SESS_SHEP_READY && r->kind == SESS_SHEP_STARTED && r->slot == -1) {
                    found = 1; /* the spare's command process died before it was ready */
                    result = r->value < 0 ? r->value : -ECHILD;
                } else if (!found && want == SESS_SHEP_STARTED && r->kind == SESS_SHEP_STARTED && r->slot == slot) {
                    found = 1;
                    *value = r->value;
                } else if (m->n_queue < sizeof m->queue / sizeof m->queue[0]) {
                    m->queue[m->n_queue++] = *r;
                }
            }
        }
        if (found)
            return result;
        if (dead) {
            /* it died before it told: its command process, if there is one, is PID 1's
             * now and may be using the C library in this memory: the sweep kills it */
            sess_sweep(l, m);
            return killed ? -ETIMEDOUT : -ESRCH;
        }
        siginfo_t si;
        si.si_pid = 0;
        if (RAW(SYS_waitid, P_PID, shep, &si, WEXITED | WNOHANG | WNOWAIT, 0) == 0 && si.si_pid == shep) {
            dead = true; /* what it wrote before it exited is in the pipe: read it first */
            continue;
        }
        long long left = until - now_ms();
        if (left <= 0) {
            RAW(SYS_kill, shep, SIGKILL); /* stopped, say: the next round sees it dead */
            killed = true;
            until = now_ms() + 2000;
            continue;
        }
        struct pollfd fds[3] = {
            {.fd = m->shep_r, .events = POLLIN}, {.fd = m->sfd, .events = POLLIN}, {.fd = listener, .events = POLLIN}};
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 100 * 1000000L};
        RAW(SYS_ppoll, fds, 3, &ts, 0, 8);
        if (listener >= 0 && (fds[2].revents & POLLIN)) {
            /* the one call before the exec (its umask); what comes after the exec waits
             * for PID 1's loop */
            serve_parked(l, listener);
            listener = -1;
        }
        if (fds[1].revents & POLLIN) {
            struct signalfd_siginfo ssi[4];
            long r;
            while ((r = RAW(SYS_read, m->sfd, ssi, sizeof ssi)) > 0)
                for (size_t i = 0; i < (size_t)r / sizeof ssi[0]; i++)
                    if (ssi[i].ssi_signo == SIGCHLD)
                        m->reap_pending = true;
        }
    }
}

/* What a spare's command process sent on the listener socket: its creation-control
 * listener (child_confine), or why it could not get ready (a report, kept to tell the
 * command that would have been its).  The last listener, or -1. */
static int take_listener(sess_mem *m)
{
    int got = -1;
    for (;;) {
        report_msg msg;
        _Alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {&msg, sizeof msg};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
        ssize_t n = recvmsg(m->ll_r, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n <= 0)
            return got;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
            if (got >= 0)
                close(got); /* a stale one: only the last is this spare's */
            got = fd;
        } else if (n == (ssize_t)sizeof msg && msg.kind == REPORT_SETUP_ERROR) {
            m->spare.error = msg;
            m->spare.have_error = true;
        }
    }
}

/* A shepherd that failed: killed, and its stack kept until it is reaped. */
static void keep_until_reaped(sess_mem *m, pid_t shep, int stack);
static void retire(sess_mem *m, pid_t shep, int stack)
{
    RAW(SYS_kill, shep, SIGKILL);
    keep_until_reaped(m, shep, stack);
}

static void keep_until_reaped(sess_mem *m, pid_t shep, int stack)
{
    if (m->n_retired < sizeof m->retired / sizeof m->retired[0]) {
        m->retired[m->n_retired].pid = shep;
        m->retired[m->n_retired].stack = stack;
        m->n_retired++;
    }
}

void sess_drop_spare(launch *l, sess_mem *m)
{
    if (m->spare.shep <= 0)
        return;
    sess_spare sp = m->spare;
    m->spare = (sess_spare){.go = -1, .listener = -1, .stack = -1};
    /* Its command process, waiting for a command, ends when go closes, and its shepherd
     * then says so (STARTED, for no slot: its vfork is over) and ends.  That process runs
     * on the one stack of command processes (c_stack), which the next spare's takes: wait
     * until it has left it (or, should the shepherd die or not answer, until the sweep has
     * killed it: sess_park_wait). */
    close(sp.go);
    if (sp.listener >= 0)
        close(sp.listener);
    int ignored = 0;
    (void)sess_park_wait(l, m, sp.shep, SESS_SHEP_STARTED, -1, &ignored, -1);
    keep_until_reaped(m, sp.shep, sp.stack);
    sess_flush_queue(m);
}

void sess_apply_fields(sess_start *st, const sess_cmd_fields *f)
{
    st->bound = true;
    st->slot = f->slot;
    st->flags = f->flags;
    st->umask = f->umask;
    st->mask = f->mask;
    st->cl.argv = f->argv;
    st->cl.envp = f->envp;
    st->cl.cwd = f->cwd;
    st->cl.ctty = f->ctty;
    st->cl.orig_mask = f->mask;
}

/* Make the next command's shepherd and process (shepherd.c), confined and waiting for a
 * command: ahead of it when PID 1 is idle, or when the command comes and there is none.
 * Where the shepherd gets a copy of PID 1's memory instead of sharing it (raw.h), it is
 * made for a known command only, whose fields f it then copies. */
int sess_make_spare(launch *l, sess_mem *m, const sess_cmd_fields *f)
{
    if (m->spare.shep > 0)
        return 0;
    int k = 0;
    while (k < SESS_STACKS && m->stack_used[k])
        k++;
    int go[2];
    if (k == SESS_STACKS)
        return -EAGAIN;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, go) < 0)
        return -errno;
    m->spare.have_error = false;
    sess_start *st = &m->start;
    st->go_c = go[1];
    st->shep_w = m->shep_w;
    st->ll_w = m->ll_w;
    st->c_stack_top = m->c_stack + SESS_C_STACK;
    st->bound = false;
    st->slot = -1;
    st->flags = 0;
    st->cl = *l;
    st->cl.argv = NULL;
    st->cl.envp = NULL;
    st->cl.cwd = NULL;
    st->cl.ctty = false;
    st->tty_lead = f && f->ctty ? f->slave : -1;
    st->cl.report_fd = m->ll_w; /* until it has a command: why it could not get ready */
    st->cl.cc_sock[1] = m->ll_w;
    if (f)
        sess_apply_fields(st, f);
    char *top = m->s_stacks + (size_t)(k + 1) * (SESS_GUARD + SESS_S_STACK);
#ifdef __SANITIZE_ADDRESS__
    /* These stacks are used again and again, by processes whose frames never return
     * (they exec or exit): AddressSanitizer's marks of their last users are still there. */
    ASAN_UNPOISON_MEMORY_REGION(m->c_stack, SESS_C_STACK);
    ASAN_UNPOISON_MEMORY_REGION(top - SESS_S_STACK, SESS_S_STACK);
#endif
    TRACE("session-clone");
    pid_t shep = clone(sess_shepherd_main, top, sess_shepherd_clone_flags(), st);
    if (shep < 0) {
        int e = errno;
        close(go[0]);
        close(go[1]);
        return -e;
    }
    m->stack_used[k] = true;
    m->spare.shep = shep; /* (known to the sweep from now on) */
    int ignored = 0;
    int r = sess_park_wait(l, m, shep, SESS_SHEP_READY, -1, &ignored, -1);
    /* PID 1 alone in its memory again */
    close(go[1]);
    int lfd = take_listener(m);
    if (r == 0 && lfd >= 0 && !m->probed) {
        cordon_error e = {0};
        if (pid1_check_listener(lfd, &e) < 0) {
            snprintf(m->broken_why, sizeof m->broken_why, "%.700s", e.message);
            m->broken = true;
            r = -EINVAL;
        }
        m->probed = true;
    } else if (r == 0 && lfd >= 0) {
        (void)ioctl(lfd, SECCOMP_IOW(4, __u64) /* SECCOMP_IOCTL_NOTIF_SET_FLAGS */,
                    1ULL /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP */);
    }
    if (r < 0) {
        m->spare.shep = 0;
        retire(m, shep, k);
        close(go[0]);
        if (lfd >= 0)
            close(lfd);
        m->spare.retry_ms = now_ms() + 200;
        sess_flush_queue(m);
        return r;
    }
    m->spare.go = go[0];
    m->spare.listener = lfd;
    m->spare.stack = k;
    sess_flush_queue(m);
    TRACE("session-spare");
    return 0;
}
