// SPDX-License-Identifier: Apache-2.0
/* The public session calls: the owner's side (the sandbox, its control socket, and the
 * published socket with its holder's loop) and the opened sessions of clients. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <dirent.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/prepare.h"
#include "lib/proc.h"
#include "policy/policy.h"
#include "session/llsession.h"
#include "session/session.h"
#include "supervise/outer.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/proc.h"

#define SESSION_MAGIC 0x636f72646f6e5353ULL /* "cordonSS" */
#define SESS_PENDING  64                    /* clients whose hello has not arrived yet */

struct cordon_session {
    uint64_t magic;
    bool owned;                                           /* made here (else opened: a client of a published one) */
    outer_run *run;                                       /* owned: the sandbox */
    llsess *ll;                                           /* owned, --isolation landlock: its supervisor, instead */
    int ctl;                                              /* owned: our end of PID 1's control socket */
    char path[sizeof((struct sockaddr_un *)0)->sun_path]; /* published or opened socket */
    char name[72];
    int listen_fd; /* published: the listening socket, else -1 */
    dev_t sock_dev, dir_dev, ns_dev;
    ino_t sock_ino, dir_ino, ns_ino;
    int jan_w, jan_pidfd; /* published: the janitor (closing jan_w lets it go) */
    net_host *net;        /* owned: the network helper's side (src/net), or NULL */
    int stop_conn;        /* a stop request, answered once everything is gone */
    time_t started;
};

static bool valid(const cordon_session *s)
{
    return s && s->magic == SESSION_MAGIC;
}

static int bad_session(const cordon_session *s, const char *call, cordon_error *err)
{
    return err_set(err, CORDON_STAGE_USAGE, EINVAL, "%s: %s", call,
                   !s ? "no session given (NULL)" : "not a session from cordon_session_new or cordon_session_open");
}

/* ------------------------------------------------------------------------------------ */
/* PID 1's memory */

static size_t page_up(size_t n)
{
    return (n + 4095) & ~(size_t)4095;
}

/* A guard page below each stack. */
static int guard_stacks(sess_mem *m)
{
    if (mprotect(m->c_stack - SESS_GUARD, SESS_GUARD, PROT_NONE) < 0)
        return -1;
    for (size_t i = 0; i < SESS_STACKS; i++)
        if (mprotect(m->s_stacks + i * (SESS_GUARD + SESS_S_STACK), SESS_GUARD, PROT_NONE) < 0)
            return -1;
    return 0;
}

sess_mem *sess_mem_new(size_t n_ops, size_t envc, double timeout)
{
    size_t head = page_up(sizeof(sess_mem));
    size_t checks = page_up((n_ops + 1) * sizeof(sess_check));
    size_t n_ptrs = SESS_REQ_MAX / 2 + envc + 8;
    size_t ptrs = page_up(n_ptrs * sizeof(char *));
    size_t req = page_up(SESS_REQ_MAX + 16);
    size_t cstack = SESS_GUARD + SESS_C_STACK;
    size_t sstacks = (size_t)SESS_STACKS * (SESS_GUARD + SESS_S_STACK);
    size_t total = head + checks + ptrs + req + cstack + sstacks;
    char *base = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    sess_mem *m = (sess_mem *)base;
    m->map_size = total;
    m->default_timeout_ms = timeout > 0 ? (long long)(timeout * 1000.0 + 0.999) : -1;
    size_t off = head;
    m->checks = (sess_check *)(base + off);
    off += checks;
    m->ptrs = (char **)(base + off);
    m->n_ptrs = n_ptrs;
    off += ptrs;
    m->req = base + off;
    off += req;
    m->c_stack = base + off + SESS_GUARD;
    off += cstack;
    m->s_stacks = base + off;
    if (guard_stacks(m) < 0) {
        int e = errno;
        munmap(base, total);
        errno = e;
        return NULL;
    }
    m->epfd = m->proc_fd = m->shep_r = m->shep_w = m->ll_r = m->ll_w = m->ctl_fd = m->sfd = -1;
    m->idle_ms = -1;
    return m;
}

void sess_mem_free(sess_mem *m)
{
    if (m)
        munmap(m, m->map_size);
}

/* ------------------------------------------------------------------------------------ */
/* making one */

/* A session being made, until it is the caller's: its PID 1 ended, its network helper
 * stopped, its control socket closed. */
static void free_partial(cordon_session **sp)
{
    cordon_session *s = *sp;
    if (!s)
        return;
    if (s->run)
        outer_free(s->run);
    close_and_invalidate(&s->ctl); /* under landlock, its end: the supervisor ends */
    llsess_free(s->ll);
    net_host_free(s->net); /* (outer_start or outer_free stopped it) */
    free(s);
}

static void free_memp(sess_mem **m)
{
    sess_mem_free(*m);
}

/* Start the session's sandbox for the prepared run x: its PID 1 with the session's memory
 * (a copy of its own: this one goes on return), the control socket, the network helper. */
static int start_sandbox(const prepared *x, cordon_session *s, cordon_error *e)
{
    if (x->p.inherit_pid_ns)
        return err_set(e, CORDON_STAGE_USAGE, 0,
                       "a session needs a PID namespace of its own (its PID 1 is what keeps its commands apart): "
                       "the caller's cannot be shared");
    __attribute__((cleanup(free_memp))) sess_mem *m =
        sess_mem_new(x->p.n_ops + x->p.n_cc_rules, x->p.env.n, x->p.timeout) /* a check each */;
    if (!m)
        return err_set(e, CORDON_STAGE_SUPERVISE, ENOMEM, "cannot map the session's memory");
    _cleanup_close_pair_ int ctl[2] = {-1, -1};
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0)
        return err_set(e, CORDON_STAGE_SUPERVISE, errno, "cannot make the session's control socket");
    _cleanup_fd_ int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0)
        return err_set(e, CORDON_STAGE_SUPERVISE, errno, "cannot open /dev/null");
    static char *const no_argv[] = {NULL};
    outer_opts o = {.stdio = {devnull, devnull, devnull}, .ll_ruleset_fd = -1, .session = m, .session_fd = ctl[1]};
    /* the session's network, as a run's: the helper lives as long as the session */
    outer_helper helper;
    if (proc_run_helper(&x->p, &helper, &s->net, e) < 0)
        return -1;
    o.helper = helper.start ? &helper : NULL;
    if (outer_start(&x->p, no_argv, &o, &s->run, e) < 0)
        return -1;
    s->ctl = steal_fd(&ctl[0]);
    return 0;
}

/* Under --isolation landlock there are no namespaces: the holder supervises, each command
 * a Landlock run (llsession.h).  On success x and ll are the supervisor's. */
static int start_landlock(const cordon_policy *pol, prepared *x, llonly *ll, cordon_session *s, cordon_error *e)
{
    if (pol->warn_fn) {
        char w[1200];
        snprintf(w, sizeof w,
                 "this session runs under --isolation landlock%s%s%s: each command is started as `cordon run "
                 "--isolation landlock` starts one, and what differs from a session with namespaces is that "
                 "there is no /tmp of the session's own (HOME and TMPDIR are the session's directories on the "
                 "host, removed when it ends), the host's processes are visible, the network is the host's "
                 "(--network none refuses it), and a command's umask is the session's "
                 "(doc/guide-sessions.md)",
                 x->isolation_why ? " (" : "", x->isolation_why ? x->isolation_why : "", x->isolation_why ? ")" : "");
        pol->warn_fn(w, pol->warn_ctx);
    }
    _cleanup_close_pair_ int ctl[2] = {-1, -1};
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ctl) < 0)
        return err_set(e, CORDON_STAGE_SUPERVISE, errno, "cannot make the session's control socket");
    int theirs = steal_fd(&ctl[1]); /* (llsess_start's, also when it fails) */
    if (llsess_start(x, ll, pol->timeout, theirs, &s->ll, e) < 0)
        return -1;
    s->ctl = steal_fd(&ctl[0]);
    return 0;
}

static int session_new(const cordon_policy *pol, cordon_session **out, cordon_error *e)
{
    if (!out)
        return err_set(e, CORDON_STAGE_USAGE, EINVAL, "cordon_session_new: nowhere to put the session (out is NULL)");
    *out = NULL;
    if (!pol)
        return err_set(e, CORDON_STAGE_USAGE, EINVAL, "cordon_session_new: no policy given (NULL)");
    prepared x;
    llonly ll = {.ruleset_fd = -1};
    if (prepare_run(pol, &x, &ll, e) < 0) {
        llonly_free(&ll);
        return -1;
    }
    cordon_session *s = calloc(1, sizeof *s);
    if (s)
        s->ctl = s->listen_fd = s->jan_w = s->jan_pidfd = s->stop_conn = -1;
    if (s && x.p.isolation == CORDON_ISOLATION_LANDLOCK) {
        if (start_landlock(pol, &x, &ll, s, e) < 0) {
            prepared_free(&x);
            llonly_free(&ll);
            free_partial(&s);
            return -1;
        }
    } else {
        int r =
            s ? start_sandbox(&x, s, e) : err_set(e, CORDON_STAGE_SUPERVISE, ENOMEM, "cannot map the session's memory");
        prepared_free(&x);
        llonly_free(&ll);
        if (r < 0 || outer_wait_ready(s->run, 60000, e) < 0) {
            free_partial(&s);
            return -1;
        }
    }
    s->owned = true;
    s->started = time(NULL);
    s->magic = SESSION_MAGIC;
    *out = s;
    return 0;
}

int cordon_session_new(const cordon_policy *pol, cordon_session **out, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    if (session_new(pol, out, &e) < 0) {
        err_export(err, &e);
        return -1;
    }
    if (err)
        err_clear(err);
    return 0;
}

int cordon_session_spawn_cmd(cordon_session *s, char *const argv[], unsigned flags, const cordon_session_cmd *cmd,
                             cordon_proc **out, cordon_error *err)
{
    if (!valid(s)) {
        cordon_error e = {.size = sizeof e};
        bad_session(s, "cordon_session_spawn", &e);
        err_export(err, &e);
        if (out)
            *out = NULL;
        return -1;
    }
    /* a caller compiled against an older, smaller cordon_cmd */
    cordon_cmd c;
    proc_cmd_import(cmd, &c);
    return proc_spawn_session(s->owned ? s->ctl : -1, s->path, argv, flags, cmd ? &c : NULL, out, err);
}

int cordon_session_spawn(cordon_session *s, char *const argv[], unsigned flags, cordon_proc **out, cordon_error *err)
{
    return cordon_session_spawn_cmd(s, argv, flags, NULL, out, err);
}

int cordon_session_set_idle_timeout(cordon_session *s, double seconds, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    if (!valid(s) || !s->owned) {
        if (valid(s))
            err_set(&e, CORDON_STAGE_USAGE, EINVAL,
                    "cordon_session_set_idle_timeout: only the session's owner can set it (this one was opened)");
        else
            bad_session(s, "cordon_session_set_idle_timeout", &e);
        err_export(err, &e);
        return -1;
    }
    if (!(seconds <= 1e9) || seconds != seconds) {
        err_opt(&e, CORDON_STAGE_USAGE, EINVAL, "idle-timeout",
                "the idle timeout must be a number of seconds (at most 1e9)");
        err_export(err, &e);
        return -1;
    }
    sess_ctl_idle msg = {
        .magic = SESS_MAGIC, .kind = SESS_CTL_IDLE, .ms = seconds > 0 ? (int64_t)(seconds * 1000.0 + 0.999) : 0};
    ssize_t n;
    do
        n = send(s->ctl, &msg, sizeof msg, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof msg) {
        err_set(&e, CORDON_STAGE_SUPERVISE, n < 0 && errno != EPIPE && errno != ECONNRESET ? errno : ESRCH,
                "cannot set the session's idle timeout: the session has ended");
        err_export(err, &e);
        return -1;
    }
    err_export(err, &e);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* publishing */

int cordon_session_dir(char *buf, size_t n, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    int r = sess_state_dir(buf, n, true, &e);
    err_export(err, &e);
    return r;
}

/* The janitor: removes the socket once the session's holder is gone, however it went
 * (its parent may be killed with SIGKILL); a process of the host's, out of the sandbox's
 * reach. */
static int start_janitor(cordon_session *s, int dir_fd, const char *name, cordon_error *err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot make the session's janitor pipe");
    pid_t pid = proc_fork(&s->jan_pidfd);
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return err_set(err, CORDON_STAGE_SUPERVISE, e, "cannot start the session's janitor");
    }
    if (pid == 0) {
        int keep[2] = {p[0], dir_fd};
        detach_janitor(keep, 2);
        char b;
        while (read(p[0], &b, 1) != 0 && errno == EINTR)
            ;
        struct stat st;
        if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode) && st.st_dev == s->sock_dev &&
            st.st_ino == s->sock_ino)
            unlinkat(dir_fd, name, 0);
        _exit(0);
    }
    close(p[0]);
    s->jan_w = p[1];
    return 0;
}

static int session_listen(cordon_session *s, const char *name, cordon_error *e)
{
    char path[sizeof s->path], dir[sizeof s->path];
    _cleanup_fd_ int dir_fd = -1;
    _cleanup_fd_ int fd = -1;
    struct stat st;
    if (!valid(s) || !s->owned || s->listen_fd >= 0) {
        if (valid(s))
            err_set(e, CORDON_STAGE_USAGE, EINVAL, "cordon_session_listen: %s",
                    s->owned ? "the session is published already" : "only the session's owner can publish it");
        else
            bad_session(s, "cordon_session_listen", e);
        return -1;
    }
    if (!name) {
        err_set(e, CORDON_STAGE_USAGE, EINVAL, "cordon_session_listen: no name given (NULL)");
        return -1;
    }
    if (sess_check_name(name, e) < 0 || sess_state_dir(dir, sizeof dir, true, e) < 0 ||
        sess_socket_path(name, path, sizeof path, true, e) < 0)
        return -1;
    if ((dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)) < 0 || fstat(dir_fd, &st) < 0) {
        err_set(e, CORDON_STAGE_SUPERVISE, errno, "cannot open the sessions directory %s", dir);
        return -1;
    }
    s->dir_dev = st.st_dev;
    s->dir_ino = st.st_ino;
    if (stat("/proc/self/ns/user", &st) < 0) {
        err_set(e, CORDON_STAGE_SUPERVISE, errno, "cannot look at /proc/self/ns/user");
        return -1;
    }
    s->ns_dev = st.st_dev;
    s->ns_ino = st.st_ino;
    /* a live session of that name keeps it; a stale socket goes */
    if (lstat(path, &st) == 0) {
        cordon_error probe = {.size = sizeof probe};
        int c = sess_connect(path, SESS_HELLO_INFO, &probe);
        if (c >= 0 || probe.errnum != ECONNREFUSED) {
            if (c >= 0)
                close(c);
            err_set(e, CORDON_STAGE_USAGE, EEXIST,
                    "a session named '%s' is running already (stop it first: "
                    "cordon_session_stop)",
                    name);
            return -1;
        }
    }
    if ((fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) < 0) {
        err_set(e, CORDON_STAGE_SUPERVISE, errno, "cannot make the session's socket");
        return -1;
    }
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        err_set(e, CORDON_STAGE_USAGE, errno,
                errno == EADDRINUSE ? "a session named '%s' is running already" : "cannot publish session '%s'", name);
        return -1;
    }
    if (fchmodat(dir_fd, name, 0600, 0) < 0 || fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        listen(fd, 128) < 0) {
        err_set(e, CORDON_STAGE_SUPERVISE, errno, "cannot publish session '%s'", name);
        unlinkat(dir_fd, name, 0);
        return -1;
    }
    s->sock_dev = st.st_dev;
    s->sock_ino = st.st_ino;
    if (start_janitor(s, dir_fd, name, e) < 0) {
        unlinkat(dir_fd, name, 0);
        return -1;
    }
    snprintf(s->path, sizeof s->path, "%s", path);
    snprintf(s->name, sizeof s->name, "%s", name);
    s->listen_fd = steal_fd(&fd);
    return 0;
}

int cordon_session_listen(cordon_session *s, const char *name, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    int r = session_listen(s, name, &e);
    err_export(err, &e);
    return r;
}

/* ------------------------------------------------------------------------------------ */
/* the holder's loop */

typedef struct pending {
    int fd;
    long long since_ms;
} pending;

static long long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void reply(int fd, const cordon_session *s, uint32_t status, const char *text)
{
    sess_reply r;
    memset(&r, 0, sizeof r);
    r.magic = SESS_MAGIC;
    r.status = status;
    r.holder_pid = (int32_t)getpid();
    r.started = (int64_t)s->started;
    snprintf(r.name, sizeof r.name, "%s", s->name);
    if (text)
        snprintf(r.text, sizeof r.text, "%s", text);
    (void)send(fd, &r, sizeof r, MSG_NOSIGNAL | MSG_DONTWAIT);
}

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5 */
#endif

/* How confined a process is, from its /proc/PID/status: its seccomp mode, how many
 * seccomp filters it holds (-1: the kernel does not say, before Linux 5.9) and
 * no_new_privs.  Both only ever grow: no process can drop a filter or clear the bit. */
typedef struct confinement {
    int mode;
    long filters;
    int nnp;
} confinement;

static int read_confinement(const char *path, confinement *c)
{
    char buf[8192];
    if (proc_status_read(path, buf, sizeof buf) <= 0)
        return -1;
    *c = (confinement){.mode = (int)proc_status_field(buf, "Seccomp", 10),
                       .filters = proc_status_field(buf, "Seccomp_filters", 10),
                       .nnp = (int)proc_status_field(buf, "NoNewPrivs", 10)};
    return c->mode < 0 || c->nnp < 0 ? -1 : 0;
}

/* NULL when the client behind the connected socket fd is no more confined than the
 * holder itself; else why it is refused.  Every cordon sandbox, in every mode (Landlock
 * only, a session's command, Codex mode), gives its command a seccomp filter of its own
 * and no_new_privs, which nothing can undo: a process with more filters than the holder,
 * or no_new_privs where the holder has none, is inside a sandbox (or some other
 * confinement) and may not drive a session of its user, whatever files and sockets its
 * view shows.  The client is named by the pidfd the kernel took when it connected
 * (SO_PEERPIDFD), never by a pid alone: its /proc/PID/status is read, then the pidfd
 * must still be alive, so the pid was not reused in between (a pid stays the process's
 * until it is reaped). */
static const char *peer_confined(int fd)
{
    static const char *const inside =
        "it runs inside a sandbox (a seccomp filter or no_new_privs the session's holder does not have): a "
        "sandboxed process cannot use a session";
    _cleanup_fd_ int pidfd = -1;
    socklen_t len = sizeof pidfd;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0 || pidfd < 0)
        return errno == ENOPROTOOPT ? "the kernel cannot name the client process (SO_PEERPIDFD needs Linux 6.5), "
                                      "so the session cannot tell whether it runs inside a sandbox"
                                    : "the session cannot identify the client process";
    /* the pid behind the pidfd, in the holder's PID namespace (0: in none it sees; -1: gone) */
    char info[64], buf[1024];
    snprintf(info, sizeof info, "/proc/self/fdinfo/%d", pidfd);
    if (proc_status_read(info, buf, sizeof buf) <= 0)
        return "the session cannot identify the client process";
    long pid = proc_status_field(buf, "Pid", 10);
    if (pid <= 0)
        return pid == 0 ? inside : "the client process is gone";
    confinement own, peer;
    char status[64];
    snprintf(status, sizeof status, "/proc/%ld/status", pid);
    if (read_confinement("/proc/self/status", &own) < 0 || read_confinement(status, &peer) < 0 ||
        proc_signal(pidfd, 0) < 0)
        return "the session cannot look at the client process (gone, or /proc unreadable)";
    /* (Seccomp_filters is there since Linux 5.9, before SO_PEERPIDFD: a status without it
     * cannot be compared, and is refused) */
    if (own.filters < 0 || peer.filters < 0)
        return "the session cannot count the client process's seccomp filters (no Seccomp_filters in /proc)";
    if (peer.filters > own.filters || (peer.nnp && !own.nnp))
        return inside;
    return NULL;
}

/* A client's hello: 1 when fd was handed on or answered (and is no longer ours), 0 when
 * nothing came yet, 2 for a stop request (fd kept in s->stop_conn). */
static int take_hello(cordon_session *s, int fd)
{
    sess_hello h;
    char ctl[CMSG_SPACE(4 * sizeof(int))];
    struct iovec iov = {&h, sizeof h};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    ssize_t n;
    do
        n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return 0;
    int fds[4] = {-1, -1, -1, -1}, nfds = 0;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
        if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
            int k = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            for (int j = 0; j < k; j++) {
                int f;
                memcpy(&f, CMSG_DATA(cm) + (size_t)j * sizeof(int), sizeof f);
                if (nfds < 4)
                    fds[nfds++] = f;
                else
                    close(f);
            }
        }
    const char *why = NULL;
    struct stat st;
    if (n != (ssize_t)sizeof h || h.magic != SESS_MAGIC || h.version != SESS_VERSION || nfds != 2)
        why = "it does not speak this version of the session protocol";
    else if (fstat(fds[0], &st) < 0 || st.st_dev != s->ns_dev || st.st_ino != s->ns_ino)
        why = "it runs in another user namespace (inside a sandbox): a sandboxed process cannot use a session";
    else if ((fcntl(fds[1], F_GETFL) & O_PATH) || fstat(fds[1], &st) < 0 || st.st_dev != s->dir_dev ||
             st.st_ino != s->dir_ino)
        why = "it cannot open the sessions directory (inside a sandbox): a sandboxed process cannot use a session";
    else
        why = peer_confined(fd); /* the invariant the two proofs above only approximate */
    for (int k = 0; k < nfds; k++)
        close(fds[k]);
    if (why) {
        reply(fd, s, SESS_REPLY_REFUSED, why);
        close(fd);
        return 1;
    }
    switch (h.kind) {
    case SESS_HELLO_EXEC: {
        /* PID 1 reads the request from it */
        sess_ctl msg = {.magic = SESS_MAGIC, .kind = SESS_CTL_CONN};
        (void)send_fds(s->ctl, &msg, sizeof msg, &fd, 1, MSG_NOSIGNAL);
        close(fd);
        return 1;
    }
    case SESS_HELLO_INFO:
        reply(fd, s, SESS_REPLY_OK, NULL);
        close(fd);
        return 1;
    case SESS_HELLO_STOP:
        if (s->stop_conn < 0) {
            s->stop_conn = fd;
            return 2;
        }
        reply(fd, s, SESS_REPLY_OK, NULL);
        close(fd);
        return 1;
    default:
        reply(fd, s, SESS_REPLY_REFUSED, "unknown request");
        close(fd);
        return 1;
    }
}

static bool peer_is_us(int fd)
{
    struct ucred cred;
    socklen_t cl = sizeof cred;
    return getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) == 0 && cred.uid == geteuid();
}

int cordon_session_serve(cordon_session *s, int watch_fd, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    if (!valid(s) || !s->owned || s->listen_fd < 0) {
        if (valid(s))
            err_set(&e, CORDON_STAGE_USAGE, EINVAL,
                    "cordon_session_serve: the session is not published "
                    "(cordon_session_listen)");
        else
            bad_session(s, "cordon_session_serve", &e);
        err_export(err, &e);
        return -1;
    }
    pending pend[SESS_PENDING];
    size_t np = 0;
    int ret;
    for (;;) {
        struct pollfd fds[3 + SESS_PENDING];
        fds[0] = (struct pollfd){.fd = s->listen_fd, .events = POLLIN};
        fds[1] = (struct pollfd){.fd = s->ll ? llsess_done_fd(s->ll) : outer_pidfd(s->run), .events = POLLIN};
        fds[2] = (struct pollfd){.fd = watch_fd, .events = POLLIN};
        for (size_t i = 0; i < np; i++)
            fds[3 + i] = (struct pollfd){.fd = pend[i].fd, .events = POLLIN};
        int wait_ms = np ? 1000 : -1;
        if (poll(fds, 3 + np, wait_ms) < 0 && errno != EINTR) {
            err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot wait for the session's clients (poll)");
            ret = -1;
            break;
        }
        if (fds[1].revents) {
            ret = 2;
            break;
        }
        if (watch_fd >= 0 && fds[2].revents) {
            ret = 1;
            break;
        }
        bool stop = false;
        long long now = mono_ms();
        for (size_t i = np; i-- > 0;) {
            int r = fds[3 + i].revents ? take_hello(s, pend[i].fd) : 0;
            if (r == 0 && now - pend[i].since_ms > 5000) {
                close(pend[i].fd); /* a client that says nothing */
                r = 1;
            }
            if (r) {
                pend[i] = pend[--np];
                stop |= r == 2;
            }
        }
        if (stop) {
            ret = 0;
            break;
        }
        if (fds[0].revents & POLLIN) {
            for (;;) {
                int c = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (c < 0)
                    break;
                if (!peer_is_us(c)) {
                    reply(c, s, SESS_REPLY_REFUSED, "the session belongs to another user");
                    close(c);
                    continue;
                }
                int r = take_hello(s, c);
                if (r == 2) {
                    stop = true;
                    break;
                }
                if (r == 0 && np < SESS_PENDING)
                    pend[np++] = (pending){.fd = c, .since_ms = now};
                else if (r == 0)
                    close(c);
            }
            if (stop) {
                ret = 0;
                break;
            }
        }
    }
    for (size_t i = 0; i < np; i++)
        close(pend[i].fd);
    err_export(err, &e);
    return ret;
}

/* ------------------------------------------------------------------------------------ */
/* ending */

void cordon_session_free(cordon_session *s)
{
    if (!valid(s))
        return;
    if (s->owned) {
        if (s->listen_fd >= 0) {
            /* no new client finds it */
            struct stat st;
            if (lstat(s->path, &st) == 0 && st.st_dev == s->sock_dev && st.st_ino == s->sock_ino)
                unlink(s->path);
            close_and_invalidate(&s->listen_fd);
        }
        close_and_invalidate(&s->ctl);
        outer_free(s->run); /* PID 1 killed and reaped: every process of the session with it */
        llsess_free(s->ll); /* (landlock: its end of ctl closed, it ended every command) */
        net_host_free(s->net);
        if (s->jan_w >= 0) {
            close_and_invalidate(&s->jan_w);
            proc_reap(s->jan_pidfd, NULL);
            close_and_invalidate(&s->jan_pidfd);
        }
        if (s->stop_conn >= 0) {
            reply(s->stop_conn, s, SESS_REPLY_OK, NULL);
            close_and_invalidate(&s->stop_conn);
        }
    }
    free(s);
}

/* ------------------------------------------------------------------------------------ */
/* clients of published sessions */

/* Ask a published session something (INFO, STOP) and read the answer. */
static int ask(const char *path, uint32_t kind, int timeout_ms, sess_reply *r, cordon_error *err)
{
    int fd = sess_connect(path, kind, err);
    if (fd < 0)
        return -1;
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    int p;
    do
        p = poll(&pfd, 1, timeout_ms);
    while (p < 0 && errno == EINTR);
    ssize_t n = p > 0 ? recv(fd, r, sizeof *r, 0) : -1;
    close(fd);
    if (p == 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, ETIMEDOUT, "the session did not answer");
    if (n == 0 && kind == SESS_HELLO_STOP) {
        /* it closed without a word: the holder ended anyway */
        memset(r, 0, sizeof *r);
        return 0;
    }
    if (n != (ssize_t)sizeof *r || r->magic != SESS_MAGIC)
        return err_set(err, CORDON_STAGE_SUPERVISE, EPROTO, "the session gave no answer");
    r->text[sizeof r->text - 1] = '\0';
    r->name[sizeof r->name - 1] = '\0';
    if (r->status != SESS_REPLY_OK)
        return err_set(err, CORDON_STAGE_USAGE, EPERM, "the session refused: %s", r->text);
    return 0;
}

/* The socket path of an existing session NAME; no sessions directory yet means that no
 * session was ever started here, which is what the caller is told. */
static int existing_path(const char *name, char *path, size_t n, cordon_error *e)
{
    if (sess_socket_path(name, path, n, false, e) == 0)
        return 0;
    if (e->errnum == ENOENT && e->stage == CORDON_STAGE_SETTINGS)
        err_set(e, CORDON_STAGE_USAGE, ENOENT,
                "there is no session '%s' (no session has been started here: `cordon session start`)", name);
    return -1;
}

static int session_open(const char *name, cordon_session **out, cordon_error *e)
{
    char path[sizeof((struct sockaddr_un *)0)->sun_path];
    if (!out) {
        err_set(e, CORDON_STAGE_USAGE, EINVAL, "cordon_session_open: nowhere to put the session (out is NULL)");
        return -1;
    }
    *out = NULL;
    struct stat st;
    if (existing_path(name, path, sizeof path, e) < 0)
        return -1;
    /* no round trip: a stale socket is found out (and removed) by the first spawn */
    errno = 0;
    if (lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode)) {
        const char *base = strrchr(path, '/');
        int e2 = errno ? errno : ENOENT;
        if (e2 == EACCES || e2 == EPERM)
            err_set(e, CORDON_STAGE_USAGE, e2, "session '%s' is not yours: only its own user can use it",
                    base ? base + 1 : path);
        else
            err_set(e, CORDON_STAGE_USAGE, e2, "there is no session '%s' (see `cordon session list`)",
                    base ? base + 1 : path);
        return -1;
    }
    cordon_session *s = calloc(1, sizeof *s);
    if (!s) {
        err_set(e, CORDON_STAGE_SUPERVISE, ENOMEM, "out of memory");
        return -1;
    }
    s->ctl = s->listen_fd = s->jan_w = s->jan_pidfd = s->stop_conn = -1;
    snprintf(s->path, sizeof s->path, "%s", path);
    const char *base = strrchr(path, '/');
    snprintf(s->name, sizeof s->name, "%.71s", base ? base + 1 : path);
    s->magic = SESSION_MAGIC;
    *out = s;
    return 0;
}

int cordon_session_open(const char *name, cordon_session **out, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    int r = session_open(name, out, &e);
    err_export(err, &e);
    return r;
}

int cordon_session_stop(const char *name, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    char path[sizeof((struct sockaddr_un *)0)->sun_path];
    sess_reply r;
    int ret = -1;
    if (existing_path(name, path, sizeof path, &e) == 0 && ask(path, SESS_HELLO_STOP, 60000, &r, &e) == 0)
        ret = 0;
    err_export(err, &e);
    return ret;
}

int cordon_session_list(char **json, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    char dir[4096];
    if (!json) {
        err_set(&e, CORDON_STAGE_USAGE, EINVAL, "cordon_session_list: nowhere to put the list (json is NULL)");
        err_export(err, &e);
        return -1;
    }
    *json = NULL;
    if (sess_state_dir(dir, sizeof dir, true, &e) < 0) {
        err_export(err, &e);
        return -1;
    }
    json_t *arr = json_array();
    DIR *d = opendir(dir);
    if (!d) {
        err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot read the sessions directory %s", dir);
        json_decref(arr);
        err_export(err, &e);
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        char path[sizeof((struct sockaddr_un *)0)->sun_path];
        struct stat st;
        if (de->d_name[0] == '.' || snprintf(path, sizeof path, "%s/%s", dir, de->d_name) >= (int)sizeof path ||
            lstat(path, &st) < 0 || !S_ISSOCK(st.st_mode))
            continue;
        sess_reply r;
        cordon_error ignored = {.size = sizeof ignored};
        if (ask(path, SESS_HELLO_INFO, 2000, &r, &ignored) < 0)
            continue; /* stale (and removed now), or not answering */
        json_array_append_new(arr, json_pack("{s:s, s:i, s:I}", "name", de->d_name, "pid", (int)r.holder_pid, "started",
                                             (json_int_t)r.started));
    }
    closedir(d);
    json_t *doc = json_pack("{s:s, s:o}", "dir", dir, "sessions", arr);
    char *text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
    json_decref(doc);
    if (!text) {
        err_set(&e, CORDON_STAGE_SUPERVISE, ENOMEM, "out of memory");
        err_export(err, &e);
        return -1;
    }
    *json = text;
    err_export(err, &e);
    return 0;
}
