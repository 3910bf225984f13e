/* A session's PID 1: the starter (session.h).  A clone of a possibly multi-threaded
 * caller: system calls only, no allocation; everything lives in sess_mem, which the
 * owner mapped before the clone. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "session/raw.h"
#include "session/session.h"
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif
#include "confine/seccomp.h"
#include "supervise/limits.h"
#include "supervise/pathwalk.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/trace.h"
#include "util/time.h"

enum { T_SIG = 1, T_LIFE, T_CTL, T_SHEP, T_CONN, T_LISTENER };
/* An event's tag: what it is about, and for a slot's descriptors the slot and its
 * generation (a slot released and taken again within one batch of events must not get
 * the events of its previous command). */
#define TAG(kind, slot, gen) (((uint64_t)(gen) << 32) | ((uint64_t)(uint32_t)(slot) << 8) | (uint64_t)(kind))
#define TAG_KIND(t)          ((int)((t)&0xff))
#define TAG_SLOT(t)          ((int)(((t) >> 8) & 0xffffff))
#define TAG_GEN(t)           ((uint32_t)((t) >> 32))

/* A report to a client: never blocks (a client that does not read loses it). */
static void tell(int fd, report_kind kind, const cordon_error *e, int value, const char *text)
{
    if (fd < 0)
        return;
    report_msg m;
    report_fill(&m, kind, e, value, text);
    while (send(fd, &m, sizeof m, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

static void tell_error(int fd, cordon_stage stage, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void tell_error(int fd, cordon_stage stage, int errnum, const char *fmt, ...)
{
    cordon_error e = {0};
    va_list ap;
    va_start(ap, fmt);
    err_setv(&e, stage, errnum, fmt, ap);
    va_end(ap);
    tell(fd, REPORT_SETUP_ERROR, &e, 0, NULL);
}

static void ep_add(sess_mem *m, int fd, uint32_t events, uint64_t tag)
{
    struct epoll_event ev = {.events = events, .data.u64 = tag};
    (void)epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void ep_del_close(sess_mem *m, int *fd)
{
    if (*fd < 0)
        return;
    (void)epoll_ctl(m->epfd, EPOLL_CTL_DEL, *fd, NULL);
    close(*fd);
    *fd = -1;
}

/* Everything dies (kill(-1) from PID 1 reaches every other process of the namespace):
 * the owner is gone, or the session can no longer be run safely. */
static __attribute__((noreturn)) void end_session(launch *l, report_kind why)
{
    /* raw first: this may be called while a command's process uses the C library in
     * PID 1's memory (the sweep gave up); once everything is dead, nothing is shared */
    RAW(SYS_kill, -1, SIGKILL);
    long w;
    while ((w = RAW(SYS_wait4, -1, 0, __WALL, 0)) > 0 || w == -EINTR)
        ;
    if (why)
        report_send(l->report_fd, why, NULL, 0, NULL);
    _exit(why ? 0 : CORDON_EXIT_SETUP);
}

/* ------------------------------------------------------------------------------------ */
/* the policy check */

/* Once the root is built: what every command checks again before it starts. */
static void record_checks(const launch *l, sess_mem *m)
{
    const plan *p = l->plan;
    m->n_checks = 0;
    for (size_t i = 0; i < p->n_cc_rules; i++) {
        struct stat st;
        const char *dest = p->cc_rules[i].path;
        if (p->cc_rules[i].kind == PLAN_NOCREATE && fstatat(AT_FDCWD, dest, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
            errno == ENOENT)
            m->checks[m->n_checks++] = (sess_check){.dest = dest, .kind = SESS_CHECK_ABSENT};
    }
    for (size_t i = 0; i < p->n_ops; i++) {
        const plan_op *op = &p->ops[i];
        struct stat st;
        int r = fstatat(AT_FDCWD, op->dest, &st, AT_SYMLINK_NOFOLLOW);
        sess_check *c = &m->checks[m->n_checks];
        if (plan_op_mounts(op) && r == 0) {
            *c = (sess_check){.dest = op->dest,
                              .why = op->why ? op->why : "protected",
                              .dev = st.st_dev,
                              .ino = st.st_ino,
                              .kind = op->kind == PLAN_BIND ? SESS_CHECK_BIND : SESS_CHECK_MOUNT,
                              .holdable = op->kind == PLAN_HIDE || (op->kind == PLAN_BIND && op->read_only)};
        } else {
            continue; /* shadowed by a later mount, or nothing to hold */
        }
        m->n_checks++;
    }
}

/* A read-only or hiding mount whose file the host removed: the mount went with it (the
 * kernel detaches a mount whose mount point is removed in another namespace), and the
 * name is missing inside now.  Held as a missing name from then on: the creation control
 * refuses it in its directory, and the check becomes SESS_CHECK_ABSENT.  false when it
 * cannot be (no creation control, the directory gone, no room for the rule). */
static bool hold_as_missing(launch *l, sess_mem *m, sess_check *c)
{
    const char *slash = strrchr(c->dest, '/');
    size_t n = slash ? (size_t)(slash - c->dest) : 0;
    struct stat st;
    if (!l->cc || !slash || !slash[1] || n >= sizeof m->scratch)
        return false;
    memcpy(m->scratch, c->dest, n);
    m->scratch[n ? n : 1] = '\0';
    if (n == 0)
        m->scratch[0] = '/';
    /* the directory the name was in, with no symlink on the way (dest was canonical at the
     * start: a component the host has made a symlink since is not followed, and the
     * check fails closed) */
    int dfd = open_no_symlinks(m->scratch, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int r = dfd < 0 ? -1 : fstat(dfd, &st);
    if (dfd >= 0)
        close(dfd);
    if (r < 0 || cc_add_name(l->cc, st.st_dev, st.st_ino, slash + 1, c->why) < 0)
        return false;
    c->kind = SESS_CHECK_ABSENT;
    return true;
}

/* Can this command run with the session's policy?  Every mount must still be on the file
 * the root put there, and every protected or hidden name that was missing must still be
 * missing.
 *  - A name missing at the start that the host has made since (an editor's .vscode) has
 *    no mount: the session only kept it from being created, and a command could change
 *    or read it now.  Each command is refused while it is there (m->check_why); once the
 *    host removed it, the policy holds again.
 *  - A read-only or hiding mount whose file the host removed (the mount went with it):
 *    held as a missing name from then on (hold_as_missing), as above; one whose file the
 *    host replaced is refused while the new one is there, and held once it is gone.
 *  - Any other mount the host took away (a writable one, a bind source deleted) never
 *    comes back: every command is refused from then on (m->broken). */
static bool policy_holds(launch *l, sess_mem *m)
{
    if (m->broken)
        return false;
    for (size_t i = 0; i < m->n_checks; i++) {
        sess_check *c = &m->checks[i];
        struct stat st;
        int r = fstatat(AT_FDCWD, c->dest, &st, AT_SYMLINK_NOFOLLOW);
        int e = errno;
        const char *why = NULL;
        if (c->kind != SESS_CHECK_ABSENT && c->holdable && r < 0 && e == ENOENT && hold_as_missing(l, m, c))
            continue; /* (missing: holds) */
        if (c->kind == SESS_CHECK_ABSENT) {
            if (r == 0 || e != ENOENT) {
                snprintf(m->check_why, sizeof m->check_why,
                         "%s was created on the host after the session started, and the session cannot hold its "
                         "policy there (the name is hidden or protected from being created, and a command could "
                         "now change or read it): remove it on the host and run the command again, or stop the "
                         "session and start it again to protect it as it is now",
                         c->dest);
                return false;
            }
        } else if (r < 0) {
            why = "is gone: the host removed what the session's mount there stood on";
        } else if (st.st_dev != c->dev || st.st_ino != c->ino) {
            if (c->holdable && l->cc) {
                snprintf(m->check_why, sizeof m->check_why,
                         "%s was replaced on the host after the session started: the session's mount on it went "
                         "with the old one, and a command could change or read the new one: remove it on the host "
                         "and run the command again (the name is then kept from being created), or stop the "
                         "session and start it again to protect it as it is now",
                         c->dest);
                return false;
            }
            why = "was removed or replaced on the host: the session's mount there is gone";
        } else if (c->kind == SESS_CHECK_BIND && st.st_nlink == 0) {
            why = "was deleted on the host";
        }
        if (why) {
            snprintf(m->broken_why, sizeof m->broken_why,
                     "the session can no longer be held to its policy: %s %s; stop the session and start it again",
                     c->dest, why);
            m->broken = true;
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------------------------ */
/* the sweep: PID 1's children that are not its own.  Raw system calls only (raw.h): it
 * also runs while a command's process may be using the C library in PID 1's memory. */

/* The decimal numbers in buf[0..len). */
static int parse_pids(const char *buf, size_t len, pid_t *out, int max)
{
    int k = 0;
    long v = -1;
    for (size_t i = 0; i <= len && k < max; i++) {
        char c = i < len ? buf[i] : ' ';
        if (c >= '0' && c <= '9') {
            v = (v < 0 ? 0 : v * 10) + (c - '0');
        } else if (v >= 0) {
            out[k++] = (pid_t)v;
            v = -1;
        }
    }
    return k;
}

static long read_file_raw(int dir, const char *name, char *buf, size_t size)
{
    long fd = RAW(SYS_openat, dir, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fd;
    size_t have = 0;
    long n;
    while (have < size && ((n = RAW(SYS_read, fd, buf + have, size - have)) > 0 || n == -EINTR))
        if (n > 0)
            have += (size_t)n;
    RAW(SYS_close, fd);
    return (long)have;
}

static int read_children(sess_mem *m)
{
    int max = (int)(sizeof m->kids / sizeof m->kids[0]);
    long n = read_file_raw(m->proc_fd, "1/task/1/children", m->scratch, sizeof m->scratch);
    if (n >= 0)
        return parse_pids(m->scratch, (size_t)n, m->kids, max);
    /* without CONFIG_PROC_CHILDREN: every process whose parent is 1 */
    long dfd = RAW(SYS_openat, m->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    int k = 0;
    _Alignas(8) char dents[4096];
    long nread;
    while (k < max && (nread = RAW(SYS_getdents64, dfd, dents, sizeof dents)) > 0) {
        for (long off = 0; off < nread && k < max;) {
            struct raw_dirent {
                uint64_t d_ino;
                int64_t d_off;
                unsigned short d_reclen;
                unsigned char d_type;
                char d_name[];
            } *d = (struct raw_dirent *)(dents + off);
            off += d->d_reclen;
            if (d->d_name[0] < '1' || d->d_name[0] > '9')
                continue;
            char path[32];
            size_t l = 0;
            for (; l < 20 && d->d_name[l]; l++)
                path[l] = d->d_name[l];
            for (const char *t = "/stat"; *t; t++)
                path[l++] = *t;
            path[l] = '\0';
            long r = read_file_raw(m->proc_fd, path, m->scratch, sizeof m->scratch);
            if (r <= 0)
                continue;
            /* "pid (comm) S ppid ...": comm may hold anything, the last ')' ends it */
            long rp = -1;
            for (long i = 0; i < r; i++)
                if (m->scratch[i] == ')')
                    rp = i;
            pid_t v[2];
            if (rp < 0 || rp + 4 >= r || parse_pids(m->scratch + rp + 4, (size_t)(r - rp - 4), &v[1], 1) != 1 ||
                v[1] != 1 || parse_pids(m->scratch, (size_t)rp, &v[0], 1) != 1)
                continue;
            m->kids[k++] = v[0];
        }
    }
    RAW(SYS_close, dfd);
    return k;
}

static bool known_child(const launch *l, const sess_mem *m, pid_t pid)
{
    if (m->spare.shep > 0 && m->spare.shep == pid)
        return true;
    for (int i = 0; i < SESS_SLOTS; i++)
        if (m->slots[i].state != SLOT_FREE && m->slots[i].shep == pid)
            return true;
    if (l->cc)
        for (size_t i = 0; i < l->cc->n_workers; i++)
            if (l->cc->workers[i].pid == pid)
                return true;
    return false;
}

/* A process PID 1 reaped: the command's own process of a slot whose shepherd died? */
static void note_leader(sess_mem *m, pid_t pid, int status)
{
    for (int i = 0; i < SESS_SLOTS; i++) {
        sess_slot *s = &m->slots[i];
        if (s->state != SLOT_FREE && s->leader == pid && !s->have_status) {
            s->status = status;
            s->have_status = true;
        }
    }
}

/* Kill every child of PID 1 that is neither a live shepherd nor a creation-control
 * worker: the trees of shepherds that died (killed by PID 1 for a kill or a timeout, or
 * by someone else), generation by generation.  What cannot be killed this way (a
 * process tree that forks faster than it dies) ends the whole session. */
static void sweep(launch *l, sess_mem *m)
{
    for (int round = 0; round < 1000; round++) {
        int n = read_children(m);
        if (n < 0)
            end_session(l, 0); /* cannot tell who is whose: fail closed */
        int k = 0;
        for (int i = 0; i < n; i++) {
            if (known_child(l, m, m->kids[i]))
                continue;
            RAW(SYS_kill, m->kids[i], SIGKILL);
            m->kids[k++] = m->kids[i];
        }
        if (k == 0)
            return;
        for (int i = 0; i < k; i++) {
            int status = 0;
            long w;
            do
                w = RAW(SYS_wait4, m->kids[i], &status, __WALL, 0);
            while (w == -EINTR);
            if (w > 0)
                note_leader(m, (pid_t)w, status);
        }
    }
    end_session(l, 0);
}
/* ------------------------------------------------------------------------------------ */
/* slots */

static void release_slot(sess_mem *m, sess_slot *s)
{
    ep_del_close(m, &s->conn);
    ep_del_close(m, &s->listener);
    if (s->stack >= 0)
        m->stack_used[s->stack] = false; /* (its shepherd is reaped: nothing runs on it) */
    s->stack = -1;
    s->state = SLOT_FREE;
}

/* The command is over (or, under --keep, its own process is): tell the client. */
static void report_final(sess_slot *s)
{
    for (unsigned i = 0; i < s->n_refusals; i++) {
        char text[900];
        snprintf(text, sizeof text, "%s %s: %s", s->refusals[i].what, s->refusals[i].path, s->refusals[i].why);
        tell(s->conn, REPORT_REFUSAL, NULL, (int)(i + 1 == s->n_refusals ? s->refused : 0), text);
    }
    if (s->timed_out)
        tell(s->conn, REPORT_TIMEOUT, NULL, 0, NULL);
    else
        tell(s->conn, REPORT_EXIT, NULL, s->have_status ? s->status : SIGKILL, NULL);
}

static void kill_command(sess_slot *s)
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
    if (s->flags & SESS_REQ_KEEP) {
        /* what it left runs on; the client has its answer */
        report_final(s);
        ep_del_close(m, &s->conn);
        s->state = SLOT_KEPT;
    }
}

/* What came while PID 1 waited in raw system calls (park_wait). */
static void flush_queue(sess_mem *m)
{
    for (size_t i = 0; i < m->n_queue; i++)
        shep_msg(m, &m->queue[i]);
    m->n_queue = 0;
}

static void drain_shep(sess_mem *m)
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

static void shep_reaped(launch *l, sess_mem *m, sess_slot *s, int status)
{
    s->shep = 0;
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == SESS_SHEP_CLEAN))
        sweep(l, m);
    if (s->state == SLOT_RUNNING && !s->abandoned)
        report_final(s);
    release_slot(m, s);
}

static void reap(launch *l, sess_mem *m)
{
    m->reap_pending = false;
    drain_shep(m);
    for (;;) {
        int status;
        pid_t w = waitpid(-1, &status, WNOHANG | __WALL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return;
        /* what a shepherd said before it exited is in the pipe now (it writes first) */
        drain_shep(m);
        if (m->spare.shep > 0 && w == m->spare.shep) {
            /* the spare died (a command of the session may kill it): a new one later;
             * its command process, if it is still there, is PID 1's now */
            ep_del_close(m, &m->spare.go);
            ep_del_close(m, &m->spare.listener);
            m->stack_used[m->spare.stack] = false;
            m->spare.shep = 0;
            sweep(l, m);
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
        note_leader(m, w, status);
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

/* ------------------------------------------------------------------------------------ */
/* starting a command */

/* Wait, in raw system calls only, for the spare's command process to be ready (want
 * SESS_SHEP_READY) or for the shepherd of slot `slot` to say its command exec'd (want
 * SESS_SHEP_STARTED, *value: its pid or -errno).  0, or -errno: the shepherd died
 * (-ESRCH; what it had started is swept) or did not answer in time (-ETIMEDOUT, killed).
 * Everything else that comes meanwhile is queued (flush_queue). */
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

static int park_wait(launch *l, sess_mem *m, pid_t shep, int want, int slot, int *value, int listener)
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
            sweep(l, m);
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
/* The next NUL-terminated string of the request, or NULL. */
static const char *next_str(const char **p, const char *end)
{
    const char *s = *p;
    const char *nul = s < end ? memchr(s, '\0', (size_t)(end - s)) : NULL;
    if (!nul)
        return NULL;
    *p = nul + 1;
    return s;
}

/* Does env entry e (NAME=...) name the same variable as one of v[0..n)? */
static bool env_overridden(const char *e, char *const *v, size_t n)
{
    const char *eq = strchr(e, '=');
    size_t len = eq ? (size_t)(eq - e) : strlen(e);
    for (size_t i = 0; i < n; i++)
        if (strncmp(v[i], e, len) == 0 && v[i][len] == '=')
            return true;
    return false;
}

/* A pseudo-terminal of the sandbox's own: master to the client, slave for the command. */
static int open_tty(const sess_req *rq, int *slave)
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

static void tell_msg(int fd, const report_msg *msg)
{
    while (send(fd, msg, sizeof *msg, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

/* A shepherd that failed: killed, and its stack kept until it is reaped. */
static void retire(sess_mem *m, pid_t shep, int stack)
{
    RAW(SYS_kill, shep, SIGKILL);
    if (m->n_retired < sizeof m->retired / sizeof m->retired[0]) {
        m->retired[m->n_retired].pid = shep;
        m->retired[m->n_retired].stack = stack;
        m->n_retired++;
    }
}

/* The command's part of the spare's start (sess_start). */
typedef struct cmd_fields {
    int slot;
    uint32_t flags;
    mode_t umask;
    sigset_t mask;
    char **argv, **envp;
    const char *cwd;
    bool ctty;
} cmd_fields;

static void apply_fields(sess_start *st, const cmd_fields *f)
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
static int make_spare(launch *l, sess_mem *m, const cmd_fields *f)
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
    st->cl.report_fd = m->ll_w; /* until it has a command: why it could not get ready */
    st->cl.cc_sock[1] = m->ll_w;
    if (f)
        apply_fields(st, f);
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
    int r = park_wait(l, m, shep, SESS_SHEP_READY, -1, &ignored, -1);
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
        flush_queue(m);
        return r;
    }
    m->spare.go = go[0];
    m->spare.listener = lfd;
    m->spare.stack = k;
    flush_queue(m);
    TRACE("session-spare");
    return 0;
}

/* Start the command of slot i, whose request (len bytes) is in m->req, with stdio. */
static void start_command(launch *l, sess_mem *m, int i, size_t len, int stdio[3])
{
    sess_slot *s = &m->slots[i];
    const sess_req *rq = (const sess_req *)m->req;
    int conn = s->conn;
    if (len < sizeof *rq || rq->magic != SESS_MAGIC || rq->version != SESS_VERSION || (rq->flags & ~SESS_REQ_FLAGS) ||
        rq->argc < 1 ||
        ((rq->flags & SESS_REQ_DETACH) && (rq->flags & (SESS_REQ_KEEP | SESS_REQ_TTY)) != SESS_REQ_KEEP)) {
        tell_error(conn, CORDON_STAGE_USAGE, EINVAL, "malformed request to the session");
        release_slot(m, s);
        return;
    }
    if (l->cc)
        for (int k = 0; k < 3; k++)
            cc_handed(l->cc, stdio[k]);
    const char *p = m->req + sizeof *rq, *end = m->req + len;
    const char *cwd = next_str(&p, end);
    size_t envc0 = 0;
    while (l->envp[envc0])
        envc0++;
    if (!cwd || (size_t)rq->argc + rq->envc + envc0 + 2 > m->n_ptrs) {
        tell_error(conn, CORDON_STAGE_USAGE, E2BIG, "malformed request to the session");
        release_slot(m, s);
        return;
    }
    char **argv = m->ptrs, **envp = m->ptrs + rq->argc + 1;
    for (uint32_t k = 0; k < rq->argc; k++)
        if (!(argv[k] = (char *)next_str(&p, end))) {
            tell_error(conn, CORDON_STAGE_USAGE, EINVAL, "malformed request to the session");
            release_slot(m, s);
            return;
        }
    argv[rq->argc] = NULL;
    /* the request's variables over the session's */
    char **req_env = envp + envc0;
    for (uint32_t k = 0; k < rq->envc; k++) {
        const char *e = next_str(&p, end);
        if (!e || !strchr(e, '=') || e[0] == '=') {
            tell_error(conn, CORDON_STAGE_USAGE, EINVAL, "malformed environment in the request to the session");
            release_slot(m, s);
            return;
        }
        req_env[k] = (char *)e;
    }
    size_t ne = 0;
    for (size_t k = 0; k < envc0; k++)
        if (!env_overridden(l->envp[k], req_env, rq->envc))
            envp[ne++] = l->envp[k];
    memmove(envp + ne, req_env, rq->envc * sizeof *envp);
    ne += rq->envc;
    envp[ne] = NULL;
    if (!argv[0][0] || (cwd[0] && cwd[0] != '/')) {
        tell_error(conn, CORDON_STAGE_USAGE, EINVAL, "malformed request to the session");
        release_slot(m, s);
        return;
    }

    if (!policy_holds(l, m)) {
        tell_error(conn, CORDON_STAGE_ROOT, 0, "%s", m->broken ? m->broken_why : m->check_why);
        release_slot(m, s);
        return;
    }

    int master = -1, slave = -1;
    if (rq->flags & SESS_REQ_TTY) {
        master = open_tty(rq, &slave);
        if (master < 0) {
            tell_error(conn, CORDON_STAGE_SUPERVISE, -master, "cannot make a terminal in the session (/dev/ptmx)");
            release_slot(m, s);
            return;
        }
    }

    cmd_fields f = {.slot = i,
                    .flags = rq->flags,
                    .umask = (mode_t)(rq->umask & 0777),
                    .argv = argv,
                    .envp = envp,
                    .cwd = cwd[0] ? cwd : NULL,
                    .ctty = slave >= 0};
    sigemptyset(&f.mask);
    for (int sig = 1; sig <= 64 && sig < NSIG; sig++)
        if ((rq->sigmask >> (sig - 1)) & 1)
            sigaddset(&f.mask, sig);
    /* the spare (made now if there is none) takes the command */
    if (m->spare.shep <= 0 && make_spare(l, m, &f) < 0) {
        if (m->broken)
            tell_error(conn, CORDON_STAGE_CONFINE, 0, "%s", m->broken_why);
        else if (m->spare.have_error)
            tell_msg(conn, &m->spare.error);
        else
            tell_error(conn, CORDON_STAGE_SUPERVISE, EAGAIN, "cannot prepare a process for the command");
        if (master >= 0)
            close(master), close(slave);
        release_slot(m, s);
        return;
    }
    sess_spare sp = m->spare;
    m->spare = (sess_spare){.go = -1, .listener = -1, .stack = -1};

    long long tmo = rq->timeout_ms == 0 ? m->default_timeout_ms : rq->timeout_ms;
    s->flags = rq->flags;
    s->deadline_ms = tmo > 0 ? now_ms() + tmo : -1;
    s->timed_out = s->killed = s->have_status = s->abandoned = false;
    s->status = 0;
    s->refused = 0;
    s->n_refusals = 0;
    s->leader = 0;
    s->listener = -1;
    s->shep = sp.shep;
    s->stack = sp.stack;
    s->state = SLOT_RUNNING;

    apply_fields(&m->start, &f); /* (made just now, without shared memory: it has them) */
    /* its descriptors: the connection (for its own errors), stdin, stdout, stderr */
    int fds[4] = {conn, slave >= 0 ? slave : stdio[0], slave >= 0 ? slave : stdio[1], slave >= 0 ? slave : stdio[2]};
    char byte = 'C';
    _Alignas(struct cmsghdr) char ctl[FD_MSG_CTL];
    struct iovec iov;
    struct msghdr mh;
    fd_msg_init(&mh, &iov, &byte, 1, ctl, fds, 4);
    TRACE("session-bind");
    /* From the moment it has them the command's process uses the C library in PID 1's
     * memory: raw calls only until it has exec'd (park_wait). */
    long sent = RAW(SYS_sendmsg, sp.go, &mh, MSG_NOSIGNAL);
    int leader = -EPIPE;
    int r = sent == 1 ? park_wait(l, m, sp.shep, SESS_SHEP_STARTED, i, &leader, sp.listener) : (int)sent;
    TRACE("session-started");
    /* a detached command's pid, before what came meanwhile (its end, say: flush_queue
     * reports it and closes the connection) */
    if (r == 0 && leader > 0 && (s->flags & SESS_REQ_DETACH))
        tell(conn, REPORT_STARTED, NULL, leader, NULL); /* the client goes: the command stays */
    close(sp.go);
    flush_queue(m);
    if (slave >= 0)
        close(slave);
    if (r < 0 || leader < 0) {
        tell_error(conn, CORDON_STAGE_SUPERVISE, r < 0 ? -r : -leader, "the command's process could not be started");
        s->abandoned = true; /* reaped later: no other report */
        kill_command(s);
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
        ep_add(m, sp.listener, EPOLLIN, TAG(T_LISTENER, i, s->gen));
    }
}

/* ------------------------------------------------------------------------------------ */
/* connections */

static void slot_hangup(sess_mem *m, sess_slot *s)
{
    if (s->state == SLOT_PENDING) {
        release_slot(m, s);
        return;
    }
    /* the client went away before the end: the command goes too (as when cordon run is
     * killed), and nobody is told; a detached one stays (it was told the pid) */
    s->abandoned = true;
    if (!(s->flags & SESS_REQ_DETACH))
        kill_command(s);
    ep_del_close(m, &s->conn);
}

static void read_request(launch *l, sess_mem *m, int i)
{
    sess_slot *s = &m->slots[i];
    char ctl[CMSG_SPACE(4 * sizeof(int))];
    struct iovec iov = {m->req, SESS_REQ_MAX};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    ssize_t n;
    do
        n = recvmsg(s->conn, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        release_slot(m, s);
        return;
    }
    int fds[4] = {-1, -1, -1, -1}, nfds = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int j = 0; j < k; j++) {
                int fd;
                memcpy(&fd, CMSG_DATA(cm) + (size_t)j * sizeof(int), sizeof fd);
                if (nfds < 4)
                    fds[nfds++] = fd;
                else
                    close(fd);
            }
        }
    if ((mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || nfds != 3) {
        tell_error(s->conn, CORDON_STAGE_USAGE, (mh.msg_flags & MSG_TRUNC) ? E2BIG : EINVAL,
                   (mh.msg_flags & MSG_TRUNC) ? "the command, its environment and working directory are "
                                                "too large for a session (at most %u bytes)"
                                              : "malformed request to the session (%u)",
                   SESS_REQ_MAX);
        release_slot(m, s);
    } else {
        start_command(l, m, i, (size_t)n, fds);
    }
    for (int k = 0; k < nfds; k++)
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
            kill_command(s);
        else if (msg.sig > 0 && msg.sig < NSIG && s->leader > 0 && !s->have_status)
            kill(s->leader, msg.sig); /* the client checked it is one that is forwarded */
    }
}

static void new_connection(sess_mem *m, int fd, launch *l)
{
    int i = 0;
    while (i < SESS_SLOTS && m->slots[i].state != SLOT_FREE)
        i++;
    if (i == SESS_SLOTS) {
        tell_error(fd, CORDON_STAGE_SUPERVISE, EAGAIN, "too many commands in the session at once (%d)", SESS_SLOTS);
        close(fd);
        return;
    }
    sess_slot *s = &m->slots[i];
    uint32_t gen = s->gen + 1;
    memset(s, 0, sizeof *s);
    s->gen = gen;
    s->state = SLOT_PENDING;
    s->conn = fd;
    s->listener = -1;
    s->stack = -1;
    s->deadline_ms = -1;
    ep_add(m, fd, EPOLLIN, TAG(T_CONN, i, gen));
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
            end_session(l, 0); /* the owner closed it: the session is over */
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

void sess_pid1_main(launch *l, int sfd)
{
    sess_mem *m = l->session;
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
    record_checks(l, m);
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
    ep_add(m, sfd, EPOLLIN, TAG(T_SIG, 0, 0));
    ep_add(m, l->life_fd, EPOLLIN, TAG(T_LIFE, 0, 0));
    ep_add(m, m->ctl_fd, EPOLLIN, TAG(T_CTL, 0, 0));
    ep_add(m, m->shep_r, EPOLLIN, TAG(T_SHEP, 0, 0));
    if (SESS_SHARED_VM)
        (void)make_spare(l, m, NULL); /* the first command's, ahead of it (a failure is tried again) */
    report_send(l->report_fd, REPORT_STARTED, NULL, 0, NULL);
    TRACE("session-ready");

    struct epoll_event evs[64];
    m->idle_since_ms = now_ms();
    for (;;) {
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
                end_session(l, 0); /* the holder sees PID 1 end, and ends too */
            wait_ms = (int)(left > 1000000 ? 1000000 : left);
        }
        for (int i = 0; i < SESS_SLOTS; i++) {
            sess_slot *s = &m->slots[i];
            if (s->state != SLOT_RUNNING || s->deadline_ms < 0 || s->killed)
                continue;
            if (s->deadline_ms <= now) {
                s->timed_out = true;
                kill_command(s);
                continue;
            }
            long long left = s->deadline_ms - now;
            if (wait_ms < 0 || left < wait_ms)
                wait_ms = (int)left;
        }
        int cpu_ms = limits_next_check_ms(&l->limits);
        if (cpu_ms >= 0 && (wait_ms < 0 || cpu_ms < wait_ms))
            wait_ms = cpu_ms;
        /* the next command's process is made when nothing else is to be done */
        bool want_spare = SESS_SHARED_VM && m->spare.shep <= 0 && !m->broken && now >= m->spare.retry_ms;
        int n = epoll_wait(m->epfd, evs, 64, want_spare ? 0 : wait_ms);
        if (n < 0 && errno != EINTR)
            end_session(l, 0);
        if (n == 0 && want_spare && make_spare(l, m, NULL) < 0)
            m->spare.retry_ms = now_ms() + 200;
        if (limits_cpu_used_up(&l->limits))
            end_session(l, REPORT_CPU_LIMIT);
        for (int k = 0; k < n; k++) {
            uint64_t tag = evs[k].data.u64;
            uint32_t ev = evs[k].events;
            int i = TAG_SLOT(tag);
            if ((TAG_KIND(tag) == T_CONN || TAG_KIND(tag) == T_LISTENER) &&
                (i >= SESS_SLOTS || m->slots[i].gen != TAG_GEN(tag)))
                continue; /* about a command that is gone */
            switch (TAG_KIND(tag)) {
            case T_SIG: drain_signals(m); break;
            case T_LIFE: end_session(l, 0); /* the owner is gone */
            case T_CTL: read_ctl(l, m); break;
            case T_SHEP: drain_shep(m); break;
            case T_CONN: {
                sess_slot *s = &m->slots[i];
                if (s->conn < 0)
                    break;
                if (s->state == SLOT_PENDING)
                    read_request(l, m, i);
                else if (ev & EPOLLIN)
                    read_signals(m, s);
                else if (ev & (EPOLLHUP | EPOLLERR))
                    slot_hangup(m, s);
                break;
            }
            case T_LISTENER: {
                sess_slot *s = &m->slots[i];
                if (s->listener < 0)
                    break;
                if (ev & EPOLLIN)
                    serve(l, m, s);
                else if (ev & (EPOLLHUP | EPOLLERR))
                    ep_del_close(m, &s->listener); /* no process is left under its filter */
                break;
            }
            }
        }
        if (m->reap_pending)
            reap(l, m);
    }
}
