// SPDX-License-Identifier: Apache-2.0
/* One command of a session, seen from the caller: its connection to PID 1. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "session/session.h"
#include "supervise/outer.h"
#include "supervise/signals.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/proc.h"
#include "util/time.h"

struct sess_cmd {
    int conn;
    int tty;    /* the terminal's master, or -1 */
    bool ended; /* the result is final */
    bool eof;
    int pid;                    /* REPORT_STARTED of a detached command: its pid in the session */
    cordon_isolation isolation; /* REPORT_STARTED "landlock": a Landlock session's (wire.h) */
    double started_s;
    outer_outcome o;
    bool refused; /* the holder refused the connection */
    char refused_why[512];
    cordon_result res;
    cordon_error err;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The process's umask, without changing it (umask(2) would, for every thread). */
static unsigned read_umask(void)
{
    char buf[4096];
    long u = proc_status_read("/proc/self/status", buf, sizeof buf) > 0 ? proc_status_field(buf, "Umask", 8) : -1;
    return u >= 0 ? (unsigned)u & 0777 : 022;
}

/* The request: header, cwd, argv, env, each string NUL-terminated. */
static char *build_request(char *const argv[], const cordon_session_cmd *o, size_t *len, cordon_error *err)
{
    size_t argc = 0, envc = 0, total = sizeof(sess_req);
    const char *cwd = o && o->cwd ? o->cwd : "";
    if (cwd[0] && cwd[0] != '/') {
        err_opt(err, CORDON_STAGE_USAGE, EINVAL, "chdir", "the working directory must be an absolute path: %s", cwd);
        return NULL;
    }
    total += strlen(cwd) + 1;
    for (; argv[argc]; argc++)
        total += strlen(argv[argc]) + 1;
    if (o && o->env)
        for (; o->env[envc]; envc++) {
            const char *e = o->env[envc];
            const char *eq = strchr(e, '=');
            if (!eq || eq == e) {
                err_opt(err, CORDON_STAGE_USAGE, EINVAL, "env", "an environment entry must be NAME=VALUE: '%s'", e);
                return NULL;
            }
            total += strlen(e) + 1;
        }
    if (total > SESS_REQ_MAX) {
        err_set(err, CORDON_STAGE_USAGE, E2BIG,
                "the command, its environment and working directory are too large for a session "
                "(%zu bytes, at most %u): run it with cordon_spawn (cordon run) instead",
                total, SESS_REQ_MAX);
        return NULL;
    }
    char *buf = malloc(total);
    if (!buf) {
        err_set(err, CORDON_STAGE_SUPERVISE, ENOMEM, "out of memory");
        return NULL;
    }
    sess_req *rq = (sess_req *)buf;
    memset(rq, 0, sizeof *rq);
    rq->magic = SESS_MAGIC;
    rq->version = SESS_VERSION;
    rq->argc = (uint32_t)argc;
    rq->envc = (uint32_t)envc;
    /* the caller's umask and signal mask, as a spawned process inherits them */
    rq->umask = read_umask();
    sigset_t cur;
    pthread_sigmask(SIG_BLOCK, NULL, &cur);
    for (int sig = 1; sig <= 64 && sig < NSIG; sig++)
        if (sigismember(&cur, sig) == 1)
            rq->sigmask |= 1ULL << (sig - 1);
    if (o) {
        if (o->keep)
            rq->flags |= SESS_REQ_KEEP;
        if (o->detach)
            rq->flags |= SESS_REQ_DETACH;
        if (o->tty) {
            rq->flags |= SESS_REQ_TTY;
            struct winsize ws;
            if (ioctl(1, TIOCGWINSZ, &ws) == 0 || ioctl(0, TIOCGWINSZ, &ws) == 0) {
                rq->ws_row = ws.ws_row;
                rq->ws_col = ws.ws_col;
                rq->ws_xpixel = ws.ws_xpixel;
                rq->ws_ypixel = ws.ws_ypixel;
            }
        }
        /* (in this release's layout: proc_cmd_import) */
        if (o->has_timeout && o->timeout == 0)
            rq->timeout_ms = -1; /* none */
        else if (o->has_timeout)
            rq->timeout_ms = (int64_t)(o->timeout * 1000.0 + 0.999);
    }
    char *p = buf + sizeof *rq;
    size_t l = strlen(cwd) + 1;
    memcpy(p, cwd, l);
    p += l;
    for (size_t i = 0; i < argc; i++) {
        l = strlen(argv[i]) + 1;
        memcpy(p, argv[i], l);
        p += l;
    }
    for (size_t i = 0; i < envc; i++) {
        l = strlen(o->env[i]) + 1;
        memcpy(p, o->env[i], l);
        p += l;
    }
    *len = total;
    return buf;
}

/* Read what PID 1 (or the holder) sent; returns once nothing more is there. */
static void take_reports(sess_cmd *c)
{
    for (;;) {
        union {
            report_msg r;
            sess_reply h;
        } u;
        char ctl[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {&u, sizeof u};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
        ssize_t n = recvmsg(c->conn, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        /* ECONNRESET: the peer closed with something of ours unread; the kernel says so
         * once, before what the peer sent, which is still there to read */
        if (n < 0 && (errno == EINTR || errno == ECONNRESET))
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            c->eof = true;
            return;
        }
        int fd = -1;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
        if (n == (ssize_t)sizeof u.h && u.h.magic == SESS_MAGIC) {
            c->refused = true;
            u.h.text[sizeof u.h.text - 1] = '\0';
            memcpy(c->refused_why, u.h.text, sizeof c->refused_why);
        } else if (n == (ssize_t)sizeof u.r && u.r.kind == REPORT_STARTED) {
            if (fd < 0 && u.r.value > 0)
                c->pid = u.r.value; /* a detached command's */
            if (strncmp(u.r.text, "landlock", sizeof u.r.text) == 0)
                c->isolation = CORDON_ISOLATION_LANDLOCK;
            if (fd >= 0 && c->tty < 0) {
                c->tty = fd;
                fd = -1;
            }
        } else if (n == (ssize_t)sizeof u.r) {
            outer_take_message(&c->o, &u.r);
        }
        if (fd >= 0)
            close(fd);
    }
}

static void conclude(sess_cmd *c)
{
    err_clear(&c->err);
    cordon_result_free(&c->res);
    c->res = (cordon_result){.size = sizeof c->res, .status_code = -1};
    if (c->refused) {
        err_set(&c->err, CORDON_STAGE_SUPERVISE, EPERM, "the session refused the command: %s", c->refused_why);
        c->res.exit_code = CORDON_EXIT_SETUP;
    } else if (outer_final_report(&c->o) || c->o.setup_failed || c->o.exec_failed) {
        outer_fill_result(&c->o, NULL, &c->res, &c->err);
    } else {
        err_set(&c->err, CORDON_STAGE_SUPERVISE, 0,
                "the session ended before the command did (it was stopped, or what held it died)");
        c->res.exit_code = CORDON_EXIT_SETUP;
    }
    c->res.isolation = c->isolation;
    c->res.wall_seconds = now_s() - c->started_s;
    __atomic_store_n(&c->ended, true, __ATOMIC_RELEASE);
}

int sess_cmd_wait(sess_cmd *c, int timeout_ms, cordon_result *res, cordon_error *err)
{
    long long until = timeout_ms >= 0 ? now_ms() + timeout_ms : -1;
    while (!c->ended) {
        take_reports(c);
        if (c->eof || outer_final_report(&c->o)) {
            conclude(c);
            break;
        }
        int wait_ms = -1;
        if (until >= 0) {
            long long left = until - now_ms();
            if (left <= 0)
                return 1;
            wait_ms = left > 1000000 ? 1000000 : (int)left;
        }
        struct pollfd pfd = {.fd = c->conn, .events = POLLIN};
        if (poll(&pfd, 1, wait_ms) < 0 && errno != EINTR)
            return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot wait for the command (poll)");
    }
    result_export(res, &c->res);
    err_export(err, &c->err);
    return 0;
}

int sess_cmd_fd(const sess_cmd *c)
{
    return c->conn;
}

int sess_cmd_tty(const sess_cmd *c)
{
    return c->tty;
}

int sess_cmd_kill(sess_cmd *c, int sig)
{
    if (__atomic_load_n(&c->ended, __ATOMIC_ACQUIRE)) {
        errno = ESRCH;
        return -1;
    }
    if (sig == 0)
        return 0;
    if (sig != SIGKILL) {
        sigset_t fwd;
        signals_forwarded(&fwd);
        if (sig < 1 || sig >= NSIG || !sigismember(&fwd, sig)) {
            errno = EINVAL;
            return -1;
        }
    }
    sess_sig msg = {.magic = SESS_SIG_MAGIC, .sig = sig};
    ssize_t n;
    do
        n = send(c->conn, &msg, sizeof msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN))
        errno = ESRCH;
    return n == (ssize_t)sizeof msg ? 0 : -1;
}

void sess_cmd_free(sess_cmd *c)
{
    if (!c)
        return;
    if (!c->ended) {
        /* kill what still runs, and wait until it is gone (PID 1 says so) */
        sess_cmd_kill(c, SIGKILL);
        cordon_error e = {.size = sizeof e};
        cordon_result r = {.size = sizeof r};
        sess_cmd_wait(c, -1, &r, &e);
        cordon_result_free(&r);
    }
    if (c->conn >= 0)
        close(c->conn);
    if (c->tty >= 0)
        close(c->tty);
    cordon_result_free(&c->res);
    free(c);
}

/* A detached command: wait until it has started (then the result is final: it runs on in
 * the session) or could not (then its end is reported as any command's). */
static void wait_detached(sess_cmd *c)
{
    for (;;) {
        take_reports(c);
        /* started, whether or not it has ended since (a command that exits at once, its
         * leftovers kept): the same answer either way.  An exec that failed said so
         * before PID 1 sent the pid. */
        if (c->pid > 0 && !c->o.exec_failed && !c->refused) {
            cordon_result_free(&c->res);
            c->res = (cordon_result){.size = sizeof c->res,
                                     .exit_code = 0,
                                     .status_code = -1,
                                     .started = true,
                                     .isolation = c->isolation,
                                     .pid = c->pid,
                                     .wall_seconds = now_s() - c->started_s};
            err_clear(&c->err);
            __atomic_store_n(&c->ended, true, __ATOMIC_RELEASE);
            return;
        }
        if (c->eof || c->refused || outer_final_report(&c->o) || c->o.setup_failed)
            return; /* sess_cmd_wait concludes as usual */
        struct pollfd pfd = {.fd = c->conn, .events = POLLIN};
        if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
            return;
    }
}

int sess_cmd_start(int via, const char *path, char *const argv[], const int stdio[3], const cordon_session_cmd *opts,
                   sess_cmd **out, cordon_error *err)
{
    size_t len = 0;
    bool detach = opts && opts->detach;
    if (detach && (!opts->keep || opts->tty))
        return err_opt(err, CORDON_STAGE_USAGE, EINVAL, "detach",
                       "a detached command must be kept (keep) and cannot have a terminal (tty): nobody waits "
                       "for it");
    char *req = build_request(argv, opts, &len, err);
    if (!req)
        return -1;
    int devnull = -1;
    sess_cmd *c = calloc(1, sizeof *c);
    if (!c) {
        free(req);
        return err_set(err, CORDON_STAGE_SUPERVISE, ENOMEM, "out of memory");
    }
    c->conn = c->tty = -1;
    c->isolation = CORDON_ISOLATION_NAMESPACES;
    c->started_s = now_s();
    int peer = -1;
    if (via >= 0) {
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
            err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot make the command's connection to the session");
            goto fail;
        }
        c->conn = sp[0];
        peer = sp[1];
    } else if ((c->conn = sess_connect(path, SESS_HELLO_EXEC, err)) < 0) {
        goto fail;
    }
    int fds[3];
    for (int i = 0; i < 3; i++)
        fds[i] = stdio[i] >= 0 ? stdio[i] : i;
    /* a detached command holds none of the caller's streams (a shell's $(...) would wait
     * for it): what is not piped is /dev/null */
    if (detach && (stdio[1] < 0 || stdio[2] < 0)) {
        if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
            err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot open /dev/null for the detached command");
            goto fail;
        }
        for (int i = 1; i < 3; i++)
            if (stdio[i] < 0)
                fds[i] = devnull;
    }
    if (send_fds(c->conn, req, len, fds, 3, MSG_NOSIGNAL) < 0 &&
        !(via < 0 && (errno == EPIPE || errno == ECONNRESET))) {
        /* (a holder that refused the hello closed the connection already: its answer is
         * there to read, as for a refusal after the request) */
        if (errno == EMSGSIZE || errno == ENOBUFS)
            err_set(err, CORDON_STAGE_USAGE, E2BIG,
                    "the command, its environment and working directory are too large for a session "
                    "(%zu bytes): run it with cordon_spawn (cordon run) instead",
                    len);
        else
            err_set(err, CORDON_STAGE_SUPERVISE, errno == EPIPE || errno == ECONNRESET ? ESRCH : errno,
                    "cannot send the command to the session (has it ended?)");
        goto fail;
    }
    if (devnull >= 0) { /* (sent: the command's process has its own) */
        close(devnull);
        devnull = -1;
    }
    if (via >= 0) {
        sess_ctl msg = {.magic = SESS_MAGIC, .kind = SESS_CTL_CONN};
        if (send_fds(via, &msg, sizeof msg, &peer, 1, MSG_NOSIGNAL) < 0) {
            err_set(err, CORDON_STAGE_SUPERVISE, errno == EPIPE || errno == ECONNRESET ? ESRCH : errno,
                    "the session has ended: it cannot start commands any more");
            goto fail;
        }
        close(peer);
        peer = -1;
    }
    free(req);
    req = NULL;
    if (detach)
        wait_detached(c);
    if (opts && opts->tty) {
        /* the terminal's master comes first, or the reason why not */
        while (c->tty < 0 && !c->eof && !outer_final_report(&c->o) && !c->o.setup_failed && !c->refused) {
            struct pollfd pfd = {.fd = c->conn, .events = POLLIN};
            if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
                break;
            take_reports(c);
        }
    }
    *out = c;
    return 0;
fail:
    free(req);
    if (devnull >= 0)
        close(devnull);
    if (peer >= 0)
        close(peer);
    if (c->conn >= 0)
        close(c->conn);
    free(c);
    return -1;
}
