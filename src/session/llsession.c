// SPDX-License-Identifier: Apache-2.0
/* A session under --isolation landlock: its supervisor (llsession.h). */
#include "session/llsession.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session/sess_request.h"
#include "session/session.h"
#include "session/wire.h"
#include "supervise/outer.h"
#include "supervise/report.h"
#include "supervise/signals.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/proc.h"
#include "util/time.h"

/* how long a stand-in told to end (SIGNAL_CORDON_GONE) may take to kill its tree
 * before it is killed itself (a loaded machine: generous) */
#define LL_END_MS 30000

typedef enum ll_state {
    LL_FREE = 0,
    LL_PENDING, /* a connection, its request not read yet */
    LL_RUNNING, /* the command runs; its client waits (or left, detached) */
    LL_KEPT,    /* --keep: the command exited and was reported; what it left runs on */
} ll_state;

typedef struct llrun {
    ll_state state;
    int conn; /* the client's connection, or -1 */
    outer_run *run;
    uint32_t flags; /* SESS_REQ_* */
    bool final;     /* the end was reported to the client */
    bool killed;    /* told to end: its end is a SIGKILL */
    bool report_eof;
} llrun;

struct llsess {
    pthread_t thread;
    int ctl;            /* the supervisor's end of the control socket */
    int done_r, done_w; /* done_w closes when the supervisor ends */
    prepared x;
    llonly ll;
    double timeout;
    long long idle_ms; /* -1: never */
    long long idle_since_ms;
    char *req; /* SESS_REQ_MAX + 1 */
    llrun runs[SESS_SLOTS];
};

/* ------------------------------------------------------------------------------------ */
/* telling the client */

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

static void close_conn(llrun *r)
{
    if (r->conn >= 0)
        close(r->conn);
    r->conn = -1;
}

static void release(llrun *r)
{
    close_conn(r);
    outer_free(r->run); /* (an ended stand-in is reaped; a live one is killed first) */
    *r = (llrun){.conn = -1};
}

/* Everything the command started dies: the stand-in kills its tree and exits without a
 * report (its "cordon is gone" signal, reaper.c). */
static void kill_tree(llrun *r)
{
    if (r->run && !r->killed) {
        (void)proc_signal(outer_pidfd(r->run), SIGNAL_CORDON_GONE); /* (ESRCH: it has ended already) */
        r->killed = true;
    }
}

/* ------------------------------------------------------------------------------------ */
/* starting a command */

/* The command's request, decoded by the session's one decoder (sess_request.h, unit-tested
 * and fuzzed): argv and the environment (the request's variables over the session's) in
 * one allocation the caller frees, or NULL with *why the message for the client. */
static char **parse_request(llsess *s, size_t len, sess_cmd_req *req, const char **why)
{
    sess_req rq; /* (the sizes, to allocate for: sess_req_decode checks everything) */
    *why = "malformed request to the session";
    if (len < sizeof rq)
        return NULL;
    memcpy(&rq, s->req, sizeof rq);
    if (rq.argc > SESS_REQ_MAX || rq.envc > SESS_REQ_MAX)
        return NULL;
    size_t n = (size_t)rq.argc + rq.envc + s->x.p.env.n + 2;
    char **v = calloc(n, sizeof *v);
    if (!v)
        return NULL;
    if (sess_req_decode(s->req, len, s->x.p.env.v, v, n, req, why) < 0) {
        free(v);
        return NULL;
    }
    return v;
}

/* Does rule d restrict what its nearest ancestor rule grants (a missing name that the
 * creation control keeps from being created, where the tree around it is granted)? */
static bool hole_if_made(const plan *p, const plan_rule *d)
{
    const plan_rule *a = NULL;
    size_t best = 0;
    for (size_t i = 0; i < p->n_rules; i++) {
        const plan_rule *r = &p->rules[i];
        size_t n = strlen(r->path);
        bool below = n > best && strncmp(d->path, r->path, n) == 0 &&
                     (d->path[n] == '/' || (n == 1 && r->path[0] == '/' && d->path[1]));
        if (r != d && r->exists && below) {
            a = r;
            best = n;
        }
    }
    if (!a)
        return false;
    return a->access == CORDON_ACCESS_WRITE ? d->access != CORDON_ACCESS_WRITE
                                            : a->access == CORDON_ACCESS_READ && d->access == CORDON_ACCESS_NONE;
}

/* Can this command run with the session's rules?  They were made into Landlock rules
 * once, at the start, on the files there then.  A name that was missing then, and that
 * the creation control keeps from being created (.git/hooks, .vscode, a --deny), is
 * covered by the writable (or readable) tree around it once the host makes it: while it
 * is there each command is refused, as a namespace session refuses it (session/pid1.c,
 * policy_holds); once the host removed it the rules hold again.  A restricted file that
 * the host replaced is covered by no rule (the tree was split around it): closed, not
 * open. */
static bool rules_hold(const llsess *s, char *why, size_t n)
{
    const plan *p = &s->x.p;
    for (size_t i = 0; i < p->n_rules; i++) {
        const plan_rule *d = &p->rules[i];
        struct stat st;
        if (d->exists || !hole_if_made(p, d))
            continue;
        if (fstatat(AT_FDCWD, d->path, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
            continue;
        snprintf(why, n,
                 "%s was created on the host after the session started, and the session cannot hold its policy "
                 "there (the name is hidden or protected from being created, and a command could now change or "
                 "read it): remove it on the host and run the command again, or stop the session and start it "
                 "again to protect it as it is now",
                 d->path);
        return false;
    }
    return true;
}

/* One command: a run of the session's plan, as `cordon run --isolation landlock` makes
 * it, with the command's working directory, environment, timeout and terminal. */
static void start_command(llsess *s, llrun *r, size_t len, const int stdio[3])
{
    sess_cmd_req req;
    const char *bad = NULL;
    char **argv = parse_request(s, len, &req, &bad);
    if (!argv) {
        tell_error(r->conn, CORDON_STAGE_USAGE, EINVAL, "%s", bad);
        release(r);
        return;
    }
    size_t envc = 0;
    while (req.envp[envc])
        envc++;
    char why[1024];
    if (!rules_hold(s, why, sizeof why)) {
        free(argv);
        tell_error(r->conn, CORDON_STAGE_ROOT, 0, "%s", why);
        release(r);
        return;
    }
    /* The command's own plan: the session's with this command's working directory,
     * environment and timeout, sealed again (outer_start copies what it reads into the
     * stand-in, which checks the seal before the exec) */
    plan p = s->x.p;
    if (req.cwd)
        p.cwd = (char *)req.cwd;
    p.env = (strv){.v = req.envp, .n = envc, .cap = envc};
    long long tmo =
        req.timeout_ms == 0 ? (s->timeout > 0 ? (long long)(s->timeout * 1000.0 + 0.999) : -1) : req.timeout_ms;
    p.timeout = tmo > 0 ? (double)tmo / 1000.0 : 0;
    plan_seal(&p);
    outer_opts o = {.stdio = {stdio[0], stdio[1], stdio[2]},
                    .ll_ruleset_fd = s->ll.ruleset_fd,
                    .ll = &s->ll,
                    .session_fd = -1,
                    .pty = (req.flags & SESS_REQ_TTY) != 0,
                    .pty_stderr = true,
                    .keep = (req.flags & SESS_REQ_KEEP) != 0};
    /* the client's signal mask is the command's: outer_start gives the command the
     * calling thread's (this thread blocks every signal otherwise) */
    sigset_t mask, all;
    sigemptyset(&mask);
    sigfillset(&all);
    for (int sig = 1; sig <= 64 && sig < NSIG; sig++)
        if ((req.sigmask >> (sig - 1)) & 1)
            sigaddset(&mask, sig);
    cordon_error e = {.size = sizeof e};
    pthread_sigmask(SIG_SETMASK, &mask, NULL);
    int rc = outer_start(&p, argv, &o, &r->run, &e);
    pthread_sigmask(SIG_SETMASK, &all, NULL);
    free(argv);
    if (rc < 0) {
        tell(r->conn, REPORT_SETUP_ERROR, &e, 0, NULL);
        release(r);
        return;
    }
    r->flags = req.flags;
    r->state = LL_RUNNING;
    tell(r->conn, REPORT_STARTED, NULL, 0, "landlock"); /* the result's isolation (wire.h) */
    int master = o.pty ? outer_take_pty(r->run) : -1;
    if (master >= 0) {
        struct winsize ws = {
            .ws_row = req.ws_row, .ws_col = req.ws_col, .ws_xpixel = req.ws_xpixel, .ws_ypixel = req.ws_ypixel};
        if (ws.ws_row && ws.ws_col)
            (void)ioctl(master, TIOCSWINSZ, &ws); /* (the command reads its own size) */
        report_msg m;
        report_fill(&m, REPORT_STARTED, NULL, 0, NULL);
        (void)send_fds(r->conn, &m, sizeof m, &master, 1, MSG_DONTWAIT | MSG_NOSIGNAL);
        close(master);
    }
    /* (no master: the stand-in failed before making it, and its report says why) */
}

static void read_request(llsess *s, llrun *r)
{
    /* four: a fourth descriptor is seen, and refused */
    int fds[4] = {-1, -1, -1, -1}, mflags;
    size_t nfds;
    ssize_t n = recv_fds(r->conn, s->req, SESS_REQ_MAX, fds, 4, &nfds, &mflags, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        for (size_t k = 0; k < nfds; k++)
            close(fds[k]);
        release(r);
        return;
    }
    if ((mflags & (MSG_TRUNC | MSG_CTRUNC)) || nfds != 3) {
        tell_error(r->conn, CORDON_STAGE_USAGE, (mflags & MSG_TRUNC) ? E2BIG : EINVAL,
                   "malformed request to the session (at most %u bytes, with stdin, stdout and stderr)", SESS_REQ_MAX);
        release(r);
    } else {
        start_command(s, r, (size_t)n, fds);
    }
    for (size_t k = 0; k < nfds; k++)
        close(fds[k]);
}

/* ------------------------------------------------------------------------------------ */
/* a running command */

/* The stand-in's reports, to the client: all but its REPORT_STARTED, which only a
 * detached command's client is told (with the command's pid, then it goes). */
static void relay(llrun *r)
{
    if (!r->run || r->report_eof)
        return;
    for (;;) {
        report_msg m;
        ssize_t n = read(outer_report_fd(r->run), &m, sizeof m);
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0) {
            r->report_eof = true;
            return;
        }
        if (n != (ssize_t)sizeof m)
            return; /* EAGAIN (a short read cannot happen: one write each, below PIPE_BUF) */
        if (m.kind == REPORT_STARTED) {
            if ((r->flags & SESS_REQ_DETACH) && m.value > 0)
                tell(r->conn, REPORT_STARTED, NULL, m.value, NULL);
            continue;
        }
        if (!r->final)
            (void)send(r->conn, &m, sizeof m, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (m.kind == REPORT_EXIT || m.kind == REPORT_TIMEOUT || m.kind == REPORT_CPU_LIMIT) {
            r->final = true;
            if (r->state == LL_RUNNING && (r->flags & SESS_REQ_KEEP)) {
                close_conn(r); /* the client has its answer; what the command left runs on */
                r->state = LL_KEPT;
            }
        }
    }
}

/* The stand-in is gone: with it, everything the command started.  A command killed by
 * its client's SIGKILL ends so; one the session's end took says nothing more (its client
 * sees the connection close: the session ended first). */
static void ended(llrun *r, bool session_ends)
{
    relay(r);
    if (!r->final && r->killed && !session_ends)
        tell(r->conn, REPORT_EXIT, NULL, SIGKILL, NULL); /* (a wait status: killed by SIGKILL) */
    release(r);
}

/* The client's later messages: signals for its command; its hang-up. */
static void read_signals(llrun *r)
{
    for (;;) {
        sess_sig msg;
        ssize_t n = recv(r->conn, &msg, sizeof msg, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        if (n == 0) {
            /* the client went away before the end: the command goes too (as when cordon
             * run is killed), unless it was detached */
            if (!(r->flags & SESS_REQ_DETACH) && !r->final)
                kill_tree(r);
            close_conn(r);
            return;
        }
        if (n != (ssize_t)sizeof msg || msg.magic != SESS_SIG_MAGIC || r->final)
            continue;
        if (msg.sig == SIGKILL)
            kill_tree(r);
        else
            (void)outer_kill(r->run, msg.sig); /* (EINVAL: not a forwarded signal; the client checked) */
    }
}

/* ------------------------------------------------------------------------------------ */
/* the loop */

static void new_connection(llsess *s, int fd)
{
    llrun *r = NULL;
    for (size_t i = 0; i < SESS_SLOTS && !r; i++)
        if (s->runs[i].state == LL_FREE)
            r = &s->runs[i];
    if (!r) {
        tell_error(fd, CORDON_STAGE_SUPERVISE, EAGAIN, "too many commands in the session at once (%d)", SESS_SLOTS);
        close(fd);
        return;
    }
    *r = (llrun){.state = LL_PENDING, .conn = fd};
    read_request(s, r); /* most often already there */
}

/* The owner's messages; false once it has closed its end (the session is over). */
static bool read_ctl(llsess *s)
{
    for (;;) {
        sess_ctl_idle msg; /* the largest; a sess_ctl is its beginning */
        char ctl[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {&msg, sizeof msg};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
        ssize_t n = recvmsg(s->ctl, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n <= 0)
            return false;
        int fd = -1;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
        if (fd < 0 && n == (ssize_t)sizeof msg && msg.magic == SESS_MAGIC && msg.kind == SESS_CTL_IDLE) {
            s->idle_ms = msg.ms > 0 ? (long long)msg.ms : -1;
            s->idle_since_ms = now_ms();
            continue;
        }
        if (fd < 0)
            continue;
        if (n != (ssize_t)sizeof(sess_ctl) || msg.magic != SESS_MAGIC || msg.kind != SESS_CTL_CONN) {
            close(fd);
            continue;
        }
        new_connection(s, fd);
    }
}

/* Every command ends, and whatever it left: each stand-in kills its tree when told; one
 * that does not end in time is killed (what it left is then reparented away: said in
 * doc/security.md). */
static void end_all(llsess *s)
{
    for (size_t i = 0; i < SESS_SLOTS; i++)
        kill_tree(&s->runs[i]);
    long long until = now_ms() + LL_END_MS;
    for (size_t i = 0; i < SESS_SLOTS; i++) {
        llrun *r = &s->runs[i];
        if (r->run) {
            struct pollfd pfd = {.fd = outer_pidfd(r->run), .events = POLLIN};
            long long left;
            while ((left = until - now_ms()) > 0 && poll(&pfd, 1, (int)left) < 0 && errno == EINTR)
                ;
        }
        if (r->state != LL_FREE)
            ended(r, true);
    }
}

static bool busy(const llsess *s)
{
    for (size_t i = 0; i < SESS_SLOTS; i++) {
        const llrun *r = &s->runs[i];
        if (r->state == LL_PENDING || (r->state == LL_RUNNING && !(r->flags & SESS_REQ_DETACH)))
            return true;
    }
    return false;
}

enum { EV_CONN, EV_REPORT, EV_END };

static void *ll_main(void *arg)
{
    llsess *s = arg;
    struct pollfd *fds = calloc(1 + 3 * SESS_SLOTS, sizeof *fds);
    int *who = calloc(1 + 3 * SESS_SLOTS, sizeof *who);
    s->idle_since_ms = now_ms();
    while (fds && who) {
        size_t n = 0;
        fds[n++] = (struct pollfd){.fd = s->ctl, .events = POLLIN};
        for (int i = 0; i < SESS_SLOTS; i++) {
            llrun *r = &s->runs[i];
            if (r->state == LL_FREE)
                continue;
            if (r->conn >= 0) {
                who[n] = i * 4 + EV_CONN;
                fds[n++] = (struct pollfd){.fd = r->conn, .events = POLLIN};
            }
            if (r->run && !r->report_eof) {
                who[n] = i * 4 + EV_REPORT;
                fds[n++] = (struct pollfd){.fd = outer_report_fd(r->run), .events = POLLIN};
            }
            if (r->run) {
                who[n] = i * 4 + EV_END;
                fds[n++] = (struct pollfd){.fd = outer_pidfd(r->run), .events = POLLIN};
            }
        }
        long long now = now_ms();
        if (busy(s))
            s->idle_since_ms = now;
        int wait_ms = -1;
        if (s->idle_ms > 0) {
            long long left = s->idle_since_ms + s->idle_ms - now;
            if (left <= 0)
                break; /* idle for long enough: the session ends */
            wait_ms = left > 1000000 ? 1000000 : (int)left;
        }
        if (poll(fds, n, wait_ms) < 0 && errno != EINTR)
            break; /* (cannot wait: end the session rather than leave it unsupervised) */
        if (fds[0].revents && !read_ctl(s))
            break;
        for (size_t k = 1; k < n; k++) {
            if (!fds[k].revents)
                continue;
            llrun *r = &s->runs[who[k] / 4];
            if (r->state == LL_FREE)
                continue;
            switch (who[k] % 4) {
            case EV_CONN:
                if (r->state == LL_PENDING)
                    read_request(s, r);
                else if (r->conn == fds[k].fd)
                    read_signals(r);
                break;
            case EV_REPORT: relay(r); break;
            case EV_END:
                if (r->run && outer_pidfd(r->run) == fds[k].fd)
                    ended(r, false);
                break;
            }
        }
    }
    free(fds);
    free(who);
    end_all(s);
    llonly_free(&s->ll); /* the private HOME and TMPDIR go: nothing runs there any more */
    prepared_free(&s->x);
    close(s->ctl);
    s->ctl = -1;
    close(s->done_w); /* the session is over */
    return NULL;
}

/* ------------------------------------------------------------------------------------ */

int llsess_start(prepared *x, llonly *ll, double timeout, int ctl, llsess **out, cordon_error *err)
{
    *out = NULL;
    llsess *s = calloc(1, sizeof *s);
    int done[2] = {-1, -1};
    if (!s || !(s->req = malloc(SESS_REQ_MAX + 1)) || pipe2(done, O_CLOEXEC) < 0) {
        int e = s && s->req ? errno : ENOMEM;
        if (s)
            free(s->req);
        free(s);
        close(ctl);
        return err_set(err, CORDON_STAGE_SUPERVISE, e, "cannot prepare the session's supervisor");
    }
    s->ctl = ctl;
    s->done_r = done[0];
    s->done_w = done[1];
    s->timeout = timeout;
    s->idle_ms = -1;
    for (size_t i = 0; i < SESS_SLOTS; i++)
        s->runs[i] = (llrun){.conn = -1};
    s->x = *x;
    s->ll = *ll;
    /* every signal blocked in the thread, from its first instruction: the caller's
     * handlers never run there */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&s->thread, NULL, ll_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        s->x = (prepared){0};
        s->ll = (llonly){.ruleset_fd = -1, .sup_ruleset_fd = -1};
        close(ctl);
        close(done[0]);
        close(done[1]);
        free(s->req);
        free(s);
        return err_set(err, CORDON_STAGE_SUPERVISE, rc, "cannot start the session's supervisor (a thread)");
    }
    *x = (prepared){0};
    *ll = (llonly){.ruleset_fd = -1, .sup_ruleset_fd = -1};
    *out = s;
    return 0;
}

int llsess_done_fd(const llsess *s)
{
    return s->done_r;
}

void llsess_free(llsess *s)
{
    if (!s)
        return;
    pthread_join(s->thread, NULL);
    close(s->done_r);
    free(s->req);
    free(s);
}
