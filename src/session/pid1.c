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

#include "session/session.h"
#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif
#include "supervise/limits.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/trace.h"

enum { T_SIG = 1, T_LIFE, T_CTL, T_SHEP, T_CONN, T_LISTENER };
/* An event's tag: what it is about, and for a slot's descriptors the slot and its
 * generation (a slot released and taken again within one batch of events must not get
 * the events of its previous command). */
#define TAG(kind, slot, gen) (((uint64_t)(gen) << 32) | ((uint64_t)(uint32_t)(slot) << 8) | (uint64_t)(kind))
#define TAG_KIND(t) ((int)((t)&0xff))
#define TAG_SLOT(t) ((int)(((t) >> 8) & 0xffffff))
#define TAG_GEN(t) ((uint32_t)((t) >> 32))

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

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
    kill(-1, SIGKILL);
    while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
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
    for (size_t i = 0; i < p->n_ops; i++) {
        const plan_op *op = &p->ops[i];
        struct stat st;
        int r = fstatat(AT_FDCWD, op->dest, &st, AT_SYMLINK_NOFOLLOW);
        sess_check *c = &m->checks[m->n_checks];
        if (op->kind == PLAN_NOCREATE) {
            if (r < 0 && errno == ENOENT)
                *c = (sess_check){.dest = op->dest, .kind = SESS_CHECK_ABSENT};
            else
                continue;
        } else if (plan_op_mounts(op) && r == 0) {
            *c = (sess_check){.dest = op->dest, .dev = st.st_dev, .ino = st.st_ino,
                              .kind = op->kind == PLAN_BIND ? SESS_CHECK_BIND : SESS_CHECK_MOUNT};
        } else {
            continue; /* shadowed by a later mount, or nothing to hold */
        }
        m->n_checks++;
    }
}

/* Is the session still what its policy asked for?  Once it is not, it never is again. */
static bool policy_holds(sess_mem *m)
{
    if (m->broken)
        return false;
    for (size_t i = 0; i < m->n_checks; i++) {
        const sess_check *c = &m->checks[i];
        struct stat st;
        int r = fstatat(AT_FDCWD, c->dest, &st, AT_SYMLINK_NOFOLLOW);
        const char *why = NULL;
        if (c->kind == SESS_CHECK_ABSENT) {
            if (r == 0 || errno != ENOENT)
                why = "was created on the host after the session started (the policy hides it, or "
                      "protects it from being created)";
        } else if (r < 0) {
            why = "is gone: the host removed what the session's mount there stood on";
        } else if (st.st_dev != c->dev || st.st_ino != c->ino) {
            why = "was removed or replaced on the host: the session's mount there is gone";
        } else if (c->kind == SESS_CHECK_BIND && st.st_nlink == 0) {
            why = "was deleted on the host";
        }
        if (why) {
            snprintf(m->broken_why, sizeof m->broken_why, "%s %s", c->dest, why);
            m->broken = true;
            return false;
        }
    }
    return true;
}

/* ------------------------------------------------------------------------------------ */
/* the sweep: PID 1's children that are not its own */

static int read_children(sess_mem *m)
{
    int fd = openat(m->proc_fd, "1/task/1/children", O_RDONLY | O_CLOEXEC);
    int k = 0, max = (int)(sizeof m->kids / sizeof m->kids[0]);
    if (fd >= 0) {
        ssize_t n = read(fd, m->scratch, sizeof m->scratch - 1);
        close(fd);
        if (n >= 0) {
            m->scratch[n] = '\0';
            for (char *p = m->scratch; *p && k < max;) {
                char *end;
                long v = strtol(p, &end, 10);
                if (end == p)
                    break;
                m->kids[k++] = (pid_t)v;
                p = end;
            }
            return k;
        }
    }
    /* without CONFIG_PROC_CHILDREN: every process whose parent is 1 */
    int dfd = openat(m->proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -1;
    _Alignas(8) char dents[8192];
    long nread;
    while (k < max && (nread = syscall(SYS_getdents64, dfd, dents, sizeof dents)) > 0) {
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
            char path[64];
            snprintf(path, sizeof path, "%s/stat", d->d_name);
            int sf = openat(m->proc_fd, path, O_RDONLY | O_CLOEXEC);
            if (sf < 0)
                continue;
            ssize_t n = read(sf, m->scratch, sizeof m->scratch - 1);
            close(sf);
            if (n <= 0)
                continue;
            m->scratch[n] = '\0';
            char *rp = strrchr(m->scratch, ')'); /* "pid (comm) S ppid ...": comm may hold anything */
            if (!rp || rp[1] != ' ' || !rp[2] || rp[3] != ' ')
                continue;
            if (strtol(rp + 4, NULL, 10) == 1)
                m->kids[k++] = (pid_t)strtol(m->scratch, NULL, 10);
        }
    }
    close(dfd);
    return k;
}

static bool known_child(const launch *l, const sess_mem *m, pid_t pid)
{
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
            kill(m->kids[i], SIGKILL);
            m->kids[k++] = m->kids[i];
        }
        if (k == 0)
            return;
        for (int i = 0; i < k; i++) {
            int status;
            pid_t w;
            do
                w = waitpid(m->kids[i], &status, __WALL);
            while (w < 0 && errno == EINTR);
            if (w > 0) {
                note_leader(m, w, status);
                if (l->cc)
                    cc_reaped(l->cc, w, status);
            }
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

/* Wait (PID 1 shares its memory with the shepherd and the command's process until the
 * exec) for the shepherd to say it started the command: its pid, or -errno. */
static int wait_started(launch *l, sess_mem *m, int slot)
{
    sess_slot *s = &m->slots[slot];
    long long until = now_ms() + SESS_SETUP_TIMEOUT_MS;
    for (;;) {
        sess_shep_msg msg;
        ssize_t n;
        while ((n = read(m->shep_r, &msg, sizeof msg)) == (ssize_t)sizeof msg) {
            if (msg.kind == SESS_SHEP_STARTED && msg.slot == slot)
                return msg.value;
            shep_msg(m, &msg);
        }
        siginfo_t si;
        memset(&si, 0, sizeof si);
        if (waitid(P_PID, (id_t)s->shep, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == s->shep) {
            /* the shepherd died before it told (a command of the session killed it);
             * the command's process, if it exists, is PID 1's now: the sweep takes it
             * before PID 1 goes on in memory it may still be using */
            sweep(l, m);
            return -ESRCH;
        }
        long long left = until - now_ms();
        if (left <= 0) {
            kill(s->shep, SIGKILL); /* stopped, say: the next round sees it dead */
            until = now_ms() + 1000;
            continue;
        }
        struct pollfd fds[2] = {{.fd = m->shep_r, .events = POLLIN}, {.fd = m->sfd, .events = POLLIN}};
        (void)poll(fds, 2, left > 100 ? 100 : (int)left);
        if (fds[1].revents & POLLIN)
            drain_signals(m);
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
    struct winsize ws = {.ws_row = rq->ws_row, .ws_col = rq->ws_col, .ws_xpixel = rq->ws_xpixel,
                         .ws_ypixel = rq->ws_ypixel};
    if (ws.ws_row && ws.ws_col)
        (void)ioctl(master, TIOCSWINSZ, &ws);
    return master;
}

static void send_master(int conn, int master)
{
    report_msg msg;
    report_fill(&msg, REPORT_STARTED, NULL, 0, NULL);
    char ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = {&msg, sizeof msg};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &master, sizeof(int));
    while (sendmsg(conn, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EINTR)
        ;
}

/* The listener the command's process sent (child_exec), if any. */
static int take_listener(sess_mem *m)
{
    int got = -1;
    for (;;) {
        char byte;
        char ctl[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {&byte, 1};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
        if (recvmsg(m->ll_r, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) != 1)
            return got;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            if (got >= 0)
                close(got); /* a stale one: only the last is this command's */
            memcpy(&got, CMSG_DATA(cm), sizeof(int));
        }
    }
}

/* Start the command of slot i, whose request (len bytes) is in m->req, with stdio. */
static void start_command(launch *l, sess_mem *m, int i, size_t len, int stdio[3])
{
    sess_slot *s = &m->slots[i];
    const sess_req *rq = (const sess_req *)m->req;
    int conn = s->conn;
    if (len < sizeof *rq || rq->magic != SESS_MAGIC || rq->version != SESS_VERSION ||
        (rq->flags & ~SESS_REQ_FLAGS) || rq->argc < 1) {
        tell_error(conn, CORDON_STAGE_USAGE, EINVAL, "malformed request to the session");
        release_slot(m, s);
        return;
    }
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

    if (!policy_holds(m)) {
        tell_error(conn, CORDON_STAGE_ROOT, 0,
                   "the session can no longer be held to its policy: %s; stop the session and start it again",
                   m->broken_why);
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

    sess_start *st = &m->start;
    st->slot = i;
    st->conn = conn;
    for (int k = 0; k < 3; k++)
        st->stdio[k] = slave >= 0 ? slave : stdio[k];
    st->flags = rq->flags;
    st->umask = (mode_t)(rq->umask & 0777);
    sigemptyset(&st->mask);
    for (int sig = 1; sig <= 64 && sig < NSIG; sig++)
        if ((rq->sigmask >> (sig - 1)) & 1)
            sigaddset(&st->mask, sig);
    st->shep_w = m->shep_w;
    st->ll_w = m->ll_w;
    st->c_stack_top = m->c_stack + SESS_C_STACK;
    st->c_pid = 0;
    st->cl = *l;
    st->cl.argv = argv;
    st->cl.envp = envp;
    st->cl.cwd = cwd[0] ? cwd : NULL;
    st->cl.report_fd = conn;
    st->cl.cc_sock[1] = m->ll_w;
    st->cl.ctty = slave >= 0;
    st->cl.orig_mask = st->mask;

    long long tmo = rq->timeout_ms == 0 ? m->default_timeout_ms : rq->timeout_ms;
    s->flags = rq->flags;
    s->deadline_ms = tmo > 0 ? now_ms() + tmo : -1;
    s->timed_out = s->killed = s->have_status = s->abandoned = false;
    s->status = 0;
    s->refused = 0;
    s->n_refusals = 0;
    s->leader = 0;
    s->listener = -1;

    char *stack_top = m->s_stacks + (size_t)(i + 1) * (SESS_GUARD + SESS_S_STACK);
#ifdef __SANITIZE_ADDRESS__
    /* These stacks are used again and again, by processes whose frames never return
     * (they exec or exit): AddressSanitizer's marks of their last users are still there. */
    ASAN_UNPOISON_MEMORY_REGION(m->c_stack, SESS_C_STACK);
    ASAN_UNPOISON_MEMORY_REGION(stack_top - SESS_S_STACK, SESS_S_STACK);
#endif
    TRACE("session-clone");
    pid_t shep = clone(sess_shepherd_main, stack_top, sess_shepherd_clone_flags(), st);
    if (shep < 0) {
        int e = errno;
        if (master >= 0)
            close(master), close(slave);
        tell_error(conn, CORDON_STAGE_SUPERVISE, e, "cannot start the command's shepherd (clone)");
        release_slot(m, s);
        return;
    }
    s->shep = shep;
    s->state = SLOT_RUNNING;
    int leader = wait_started(l, m, i);
    TRACE("session-started");
    if (slave >= 0)
        close(slave);
    if (leader < 0) {
        tell_error(conn, CORDON_STAGE_SUPERVISE, -leader, "the command's shepherd could not start it");
        s->abandoned = true; /* reaped later: no other report */
        kill_command(s);
        if (master >= 0)
            close(master);
        return;
    }
    s->leader = leader;
    if (master >= 0) {
        send_master(conn, master);
        close(master);
    }
    int lfd = l->cc && !l->cc->nested ? take_listener(m) : -1;
    if (lfd >= 0 && !m->probed) {
        cordon_error e = {0};
        if (pid1_check_listener(lfd, &e) < 0) {
            tell(conn, REPORT_SETUP_ERROR, &e, 0, NULL);
            snprintf(m->broken_why, sizeof m->broken_why, "%.700s", e.message);
            m->broken = true;
            s->abandoned = true;
            kill_command(s);
            close(lfd);
            return;
        }
        m->probed = true;
    } else if (lfd >= 0) {
        (void)ioctl(lfd, SECCOMP_IOW(4, __u64) /* SECCOMP_IOCTL_NOTIF_SET_FLAGS */,
                    1ULL /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP */);
    }
    if (lfd >= 0) {
        s->listener = lfd;
        ep_add(m, lfd, EPOLLIN, TAG(T_LISTENER, i, s->gen));
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
     * killed), and nobody is told */
    s->abandoned = true;
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
    s->deadline_ms = -1;
    ep_add(m, fd, EPOLLIN, TAG(T_CONN, i, gen));
    read_request(l, m, i); /* most often already there */
}

static void read_ctl(launch *l, sess_mem *m)
{
    for (;;) {
        sess_ctl msg;
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
        if (fd < 0)
            continue;
        if (n != (ssize_t)sizeof msg || msg.magic != SESS_MAGIC || msg.kind != SESS_CTL_CONN) {
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
    fcntl(sfd, F_SETFL, O_NONBLOCK);
    m->proc_fd = l->scratch.proc_fd >= 0 ? fcntl(l->scratch.proc_fd, F_DUPFD_CLOEXEC, 3)
                                         : open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (m->proc_fd < 0) {
        err_set(&err, CORDON_STAGE_ROOT, errno, "a session needs a procfs of its own, to tell its processes apart");
        report_fail(l->report_fd, &err);
    }
    record_checks(l, m);
    int shep[2], ll[2];
    if (pipe2(shep, O_CLOEXEC | O_NONBLOCK) < 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ll) < 0 || (m->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        err_set(&err, CORDON_STAGE_SUPERVISE, errno, "cannot set up the session's PID 1");
        report_fail(l->report_fd, &err);
    }
    /* the shepherds write a record at a time (atomic: less than PIPE_BUF) and may wait:
     * a blocking write end, a non-blocking read end */
    fcntl(shep[1], F_SETFL, 0);
    m->shep_r = shep[0];
    m->shep_w = shep[1];
    m->ll_r = ll[0];
    m->ll_w = ll[1];
    for (int i = 0; i < SESS_SLOTS; i++)
        m->slots[i] = (sess_slot){.state = SLOT_FREE, .conn = -1, .listener = -1, .gen = 0};
    int keep[] = {sfd, m->epfd, m->proc_fd, m->shep_r, m->shep_w, m->ll_r, m->ll_w,
                  l->cc ? l->cc->pw.proc_fd : -1, l->cc ? l->cc->pw.root_fd : -1};
    if (pid1_lock_down(l, keep, sizeof keep / sizeof keep[0], &err) < 0)
        report_fail(l->report_fd, &err);
    ep_add(m, sfd, EPOLLIN, TAG(T_SIG, 0, 0));
    ep_add(m, l->life_fd, EPOLLIN, TAG(T_LIFE, 0, 0));
    ep_add(m, m->ctl_fd, EPOLLIN, TAG(T_CTL, 0, 0));
    ep_add(m, m->shep_r, EPOLLIN, TAG(T_SHEP, 0, 0));
    report_send(l->report_fd, REPORT_STARTED, NULL, 0, NULL);
    TRACE("session-ready");

    struct epoll_event evs[64];
    for (;;) {
        long long now = now_ms();
        int wait_ms = -1;
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
        int n = epoll_wait(m->epfd, evs, 64, wait_ms);
        if (n < 0 && errno != EINTR)
            end_session(l, 0);
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
            case T_SIG:
                drain_signals(m);
                break;
            case T_LIFE:
                end_session(l, 0); /* the owner is gone */
            case T_CTL:
                read_ctl(l, m);
                break;
            case T_SHEP:
                drain_shep(m);
                break;
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
