// SPDX-License-Identifier: Apache-2.0
/* Running the helpers a workspace needs (git, fuse-overlayfs, fusermount3): an argument
 * vector exec'd (never a shell) in a child cloned without an exit signal (util/proc.h:
 * the caller sees no SIGCHLD, its waitpid never reaps it), with nothing of the caller but stdin from a
 * pipe or /dev/null, stdout and stderr to pipes: every other descriptor closed, signal
 * mask empty and dispositions default, so that a library caller's state reaches no
 * helper.  Every command is bounded in time and killed (its whole session, for a daemon)
 * when it is over. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/proc.h"
#include "util/strv.h"
#include "workspace/ws.h"

extern char **environ;

long long ws_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

long long ws_realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void ws_baseline_settle(long long t)
{
    /* A file's ctime is the coarse clock (the last tick) unless the file system stamps
     * it finer: once the coarse clock has reached t, every later change is stamped >= t.
     * One tick at most (4 ms at HZ=250); bounded all the same. */
    for (int i = 0; i < 200; i++) {
        struct timespec ts;
        if (clock_gettime(CLOCK_REALTIME_COARSE, &ts) < 0)
            return; /* no coarse clock: file times are then the fine one's */
        if ((long long)ts.tv_sec * 1000000000LL + ts.tv_nsec >= t)
            return;
        struct timespec nap = {0, 500000};
        (void)nanosleep(&nap, NULL); /* an interrupted nap only looks again sooner */
    }
}

bool ws_which(const char *prog, char *buf, size_t n)
{
    if (!prog || !*prog)
        return false;
    if (strchr(prog, '/')) {
        snprintf(buf, n, "%s", prog);
        return access(prog, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin";
    const char *p = path;
    while (*p) {
        const char *e = strchr(p, ':');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l > 0 && (size_t)snprintf(buf, n, "%.*s/%s", (int)l, p, prog) < n) {
            struct stat st;
            if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
                return true;
        }
        p += l;
        if (*p == ':')
            p++;
    }
    return false;
}

void ws_out_free(ws_out *o)
{
    free(o->out);
    o->out = NULL;
    o->out_len = 0;
}

void ws_out_describe(const ws_out *o, char *buf, size_t n)
{
    char what[64];
    if (o->timed_out)
        snprintf(what, sizeof what, "did not finish in time and was killed");
    else if (WIFEXITED(o->status))
        snprintf(what, sizeof what, "exited with status %d", WEXITSTATUS(o->status));
    else if (WIFSIGNALED(o->status))
        snprintf(what, sizeof what, "was killed by signal %d", WTERMSIG(o->status));
    else
        snprintf(what, sizeof what, "ended with wait status %#x", o->status);
    /* the first line or two of stderr, on one line */
    char e[512];
    size_t k = 0;
    for (const char *s = o->err; *s && k + 1 < sizeof e; s++)
        e[k++] = (*s == '\n' || *s == '\t') ? ' ' : *s;
    while (k > 0 && e[k - 1] == ' ')
        k--;
    e[k] = '\0';
    snprintf(buf, n, "%s%s%s", what, e[0] ? ": " : "", e);
}

static void close_pair(int p[2])
{
    for (int i = 0; i < 2; i++)
        close_and_invalidate(&p[i]);
}

/* The pipes of one command: stdin (when it is given bytes), stdout (captured), stderr. */
typedef struct exec_pipes {
    int in[2], so[2], se[2];
} exec_pipes;

static void exec_pipes_close(exec_pipes *p)
{
    close_pair(p->in);
    close_pair(p->so);
    close_pair(p->se);
}

/* The child's descriptor `from` as `to`, inherited across exec. */
static int move_fd(int from, int to)
{
    if (from == to)
        return fcntl(to, F_SETFD, 0);
    return dup2(from, to) < 0 ? -1 : 0;
}

/* In the helper's process, a copy of a possibly multi-threaded caller (proc_fork): system
 * calls only.  Every signal's default action, a session of its own when asked, stdio
 * (-1: /dev/null), the kept descriptors as 3, 4, ..., nothing else open but err_fd, the
 * working directory, an empty signal mask.  -1 with errno. */
static int child_setup(const ws_cmd *c, const int stdio[3], const int *keep, int err_fd)
{
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (int sig = 1; sig < NSIG; sig++)
        (void)sigaction(sig, &dfl, NULL); /* (SIGKILL, SIGSTOP and the C library's own refuse: nothing to reset) */
    if (c->setsid && setsid() < 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        int fd = stdio[i] >= 0 ? stdio[i] : open("/dev/null", (i == 0 ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
        if (fd < 0 || move_fd(fd, i) < 0)
            return -1;
    }
    int kept[WS_KEEP_MAX + 1], next = 3;
    for (size_t i = 0; i < c->n_keep; i++) {
        if (keep[i] < 0)
            continue;
        if (move_fd(keep[i], next) < 0)
            return -1;
        kept[next - 3] = next;
        next++;
    }
    kept[next - 3] = err_fd;
    if (close_fds_except(kept, (size_t)(next - 3 + 1)) < 0 || (c->cwd && chdir(c->cwd) < 0))
        return -1;
    sigset_t none;
    sigemptyset(&none);
    return sigprocmask(SIG_SETMASK, &none, NULL);
}

/* What the helper's starter tells ws_exec on the status pipe, one record per write
 * (atomic: less than PIPE_BUF). */
typedef struct exec_note {
    int kind; /* NOTE_* */
    int value;
} exec_note;
enum { NOTE_PID = 1, NOTE_EXEC_ERRNO, NOTE_STATUS };

static void note(int fd, int kind, int value)
{
    exec_note n = {kind, value};
    if (write(fd, &n, sizeof n) != (ssize_t)sizeof n)
        return; /* (a parent that is gone reads nothing) */
}

/* The helper's process: set up and exec, or its errno on the status pipe.  It dies with
 * its starter (a timeout kills the starter). */
static __attribute__((noreturn)) void exec_child(const ws_cmd *c, const char *prog, const int stdio[3], const int *keep,
                                                 int note_fd, pid_t starter_pid)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) == 0 && getppid() == starter_pid && child_setup(c, stdio, keep, note_fd) == 0)
        execve(prog, (char *const *)c->argv, c->envp ? c->envp : environ);
    note(note_fd, NOTE_EXEC_ERRNO, errno);
    _exit(127);
}

/* The starter: ws_exec's child, cloned without an exit signal, which starts the helper
 * as its own child and waits for it.  A process that execs sends its parent SIGCHLD
 * whatever it was cloned with (the kernel resets the exit signal at exec): the helper
 * must not be the caller's child.  System calls only (a copy of a possibly
 * multi-threaded caller).  It says the helper's pid, then its wait status. */
static __attribute__((noreturn)) void starter(const ws_cmd *c, const char *prog, const int stdio[3], const int *keep,
                                              int note_fd)
{
    pid_t self = (pid_t)syscall(SYS_getpid);
    long pid = syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, 0UL, 0UL, 0UL);
    if (pid == 0)
        exec_child(c, prog, stdio, keep, note_fd, self);
    if (pid < 0) {
        note(note_fd, NOTE_EXEC_ERRNO, errno);
        _exit(127);
    }
    note(note_fd, NOTE_PID, (int)pid);
    /* nothing of the helper's held open here: its pipes end when it (and what it
     * started) closes them */
    int only[1] = {note_fd};
    (void)close_fds_except(only, 1);
    for (int fd = 0; fd < 3; fd++)
        close(fd);
    int status = 0;
    long w;
    while ((w = syscall(SYS_wait4, pid, &status, __WALL, NULL)) < 0 && errno == EINTR)
        ;
    if (w == pid)
        note(note_fd, NOTE_STATUS, status);
    _exit(0);
}

static void close_keeps(int (*keep)[WS_KEEP_MAX])
{
    for (size_t i = 0; i < WS_KEEP_MAX; i++)
        close_and_invalidate(&(*keep)[i]);
}

/* Start c's program (prog, found in PATH) with the pipes, by way of the starter: the
 * starter's pidfd (*pid its pid, *helper the helper's), or -1 with err; *note_fd the
 * status pipe's read end.  Neither process sends the caller SIGCHLD (util/proc.h), nor
 * is there for its waitpid(-1).  All signals are blocked in this thread across the clone
 * (and restored), so that none of the caller's handlers runs in the copy. */
static int spawn(const ws_cmd *c, const char *prog, const exec_pipes *p, pid_t *pid, pid_t *helper, int *note_fd,
                 cordon_error *err)
{
    __attribute__((cleanup(close_keeps))) int keep[WS_KEEP_MAX] = {-1, -1};
    for (size_t i = 0; i < c->n_keep; i++)
        if (c->keep[i] >= 0 && (keep[i] = fcntl(c->keep[i], F_DUPFD_CLOEXEC, 3 + WS_KEEP_MAX)) < 0)
            return err_set(err, CORDON_STAGE_WORKSPACE, errno, "%s: cannot pass it the workspace's lock", c->argv[0]);
    /* the status pipe, on a descriptor above those the helper places */
    _cleanup_close_pair_ int np[2] = {-1, -1};
    _cleanup_fd_ int wfd = -1;
    if (pipe2(np, O_CLOEXEC) < 0 || (wfd = fcntl(np[1], F_DUPFD_CLOEXEC, 3 + WS_KEEP_MAX)) < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "%s: pipe", c->argv[0]);
    close_and_invalidate(&np[1]);
    int stdio[3] = {c->in_fd > 0 ? c->in_fd : p->in[0], c->capture ? p->so[1] : -1, p->se[1]};
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    _cleanup_fd_ int pidfd = -1;
    *pid = proc_fork(&pidfd);
    if (*pid == 0)
        starter(c, prog, stdio, keep, wfd);
    int fork_errno = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (*pid < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, fork_errno, "cannot run %s", prog);
    close_and_invalidate(&wfd);
    exec_note n = {0};
    if (read_all(np[0], &n, sizeof n) != (ssize_t)sizeof n || n.kind != NOTE_PID) {
        int e = n.kind == NOTE_EXEC_ERRNO ? n.value : EPIPE;
        (void)proc_reap(pidfd, NULL); /* (it exits at once) */
        *pid = -1;
        return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot run %s", prog);
    }
    *helper = n.value;
    *note_fd = steal_fd(&np[0]);
    return steal_fd(&pidfd);
}

/* What one command is doing, for pump(). */
typedef struct exec_run {
    const ws_cmd *c;
    ws_out *out;
    exec_pipes *p;
    int pidfd; /* the starter's */
    pid_t helper;
    size_t in_off, err_len, cap;
    bool exited; /* the starter was reaped */
} exec_run;

/* The starter ended?  (waitid on its pidfd: only this child, never the caller's others.) */
static void check_exited(exec_run *x)
{
    siginfo_t si = {0};
    if (!x->exited && waitid(P_PIDFD, (id_t)x->pidfd, &si, WEXITED | WNOHANG | __WALL) == 0 && si.si_pid != 0)
        x->exited = true;
}

/* The ready pipes served: stdin written, stdout and stderr read. */
static void serve_pipes(exec_run *x, const struct pollfd *fds, int ix_in, int ix_out, int ix_err)
{
    exec_pipes *p = x->p;
    if (ix_in >= 0 && fds[ix_in].revents) {
        ssize_t w = write(p->in[1], (const char *)x->c->in + x->in_off, x->c->in_len - x->in_off);
        if (w > 0)
            x->in_off += (size_t)w;
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || x->in_off >= x->c->in_len)
            close_and_invalidate(&p->in[1]);
    }
    if (ix_out >= 0 && fds[ix_out].revents) {
        grow(&x->out->out, &x->cap, x->out->out_len + 65536, 1);
        ssize_t rd = read(p->so[0], x->out->out + x->out->out_len, 65536);
        if (rd > 0)
            x->out->out_len += (size_t)rd;
        else if (rd == 0 || (errno != EINTR && errno != EAGAIN))
            close_pair(p->so);
    }
    if (ix_err >= 0 && fds[ix_err].revents) {
        char buf[4096];
        ssize_t rd = read(p->se[0], buf, sizeof buf);
        if (rd > 0) {
            size_t room = sizeof x->out->err - 1 - x->err_len;
            size_t k = (size_t)rd < room ? (size_t)rd : room;
            memcpy(x->out->err + x->err_len, buf, k);
            x->err_len += k;
            x->out->err[x->err_len] = '\0';
        } else if (rd == 0 || (errno != EINTR && errno != EAGAIN)) {
            close_pair(p->se);
        }
    }
}

/* The helper killed (its session too, under setsid), and its starter. */
static void kill_helper(const exec_run *x)
{
    if (x->c->setsid)
        kill(-x->helper, SIGKILL);
    kill(x->helper, SIGKILL);
    proc_signal(x->pidfd, SIGKILL);
}

/* Feed stdin and read stdout and stderr until the helper has ended and the pipes are
 * closed, or its time is over (killed).  -1: poll failed (err). */
static int pump(exec_run *x, cordon_error *err)
{
    const ws_cmd *c = x->c;
    exec_pipes *p = x->p;
    long long deadline = c->timeout_ms >= 0 ? ws_now_ns() + (long long)c->timeout_ms * 1000000LL : -1;
    for (;;) {
        check_exited(x);
        if (x->exited && p->so[0] < 0 && p->se[0] < 0)
            return 0;
        struct pollfd fds[4];
        int nf = 0, ix_in = -1, ix_out = -1, ix_err = -1;
        if (p->in[1] >= 0) {
            fds[nf] = (struct pollfd){.fd = p->in[1], .events = POLLOUT};
            ix_in = nf++;
        }
        if (p->so[0] >= 0) {
            fds[nf] = (struct pollfd){.fd = p->so[0], .events = POLLIN};
            ix_out = nf++;
        }
        if (p->se[0] >= 0) {
            fds[nf] = (struct pollfd){.fd = p->se[0], .events = POLLIN};
            ix_err = nf++;
        }
        if (!x->exited)
            fds[nf++] = (struct pollfd){.fd = x->pidfd, .events = POLLIN};
        int wait_ms = x->exited ? 0 : 1000;
        if (deadline >= 0) {
            long long left = (deadline - ws_now_ns()) / 1000000LL;
            if (left <= 0) {
                x->out->timed_out = true;
                kill_helper(x);
                return 0;
            }
            if (left < wait_ms)
                wait_ms = (int)left;
        }
        int n = poll(fds, (nfds_t)nf, wait_ms);
        if (n < 0 && errno != EINTR) {
            err_set(err, CORDON_STAGE_WORKSPACE, errno, "poll");
            kill_helper(x);
            return -1;
        }
        if (n <= 0 && x->exited) {
            /* ended, but a descendant (a daemon) holds the pipes: what is there is all */
            close_pair(p->so);
            close_pair(p->se);
        }
        if (n > 0)
            serve_pipes(x, fds, ix_in, ix_out, ix_err);
    }
}

/* The starter's notes once it has ended: the helper's wait status (0), its exec's
 * failure (-1, *exec_errno), or nothing (-1, 0: killed before it could say). */
static int read_notes(int fd, int *status, int *exec_errno)
{
    exec_note n;
    int r = -1;
    *exec_errno = 0;
    while (read_all(fd, &n, sizeof n) == (ssize_t)sizeof n) {
        if (n.kind == NOTE_EXEC_ERRNO)
            *exec_errno = n.value;
        else if (n.kind == NOTE_STATUS && (r = 0) == 0)
            *status = n.value;
    }
    return *exec_errno ? -1 : r;
}

int ws_exec(const ws_cmd *c, ws_out *out, cordon_error *err)
{
    *out = (ws_out){.status = -1};
    if (c->n_keep > WS_KEEP_MAX)
        return err_set(err, CORDON_STAGE_WORKSPACE, EINVAL, "%s: %zu descriptors to pass, at most %d", c->argv[0],
                       c->n_keep, WS_KEEP_MAX);
    char prog[4096];
    if (!ws_which(c->argv[0], prog, sizeof prog))
        return err_set(err, CORDON_STAGE_WORKSPACE, ENOENT, "%s not found in PATH", c->argv[0]);
    __attribute__((cleanup(exec_pipes_close))) exec_pipes p = {{-1, -1}, {-1, -1}, {-1, -1}};
    bool in_pipe = c->in && c->in_fd <= 0;
    /* our end of the input pipe non-blocking (written between polls), the program's not */
    if ((in_pipe && (pipe2(p.in, O_CLOEXEC) < 0 || fcntl(p.in[1], F_SETFL, O_NONBLOCK) < 0)) ||
        (c->capture && pipe2(p.so, O_CLOEXEC) < 0) || pipe2(p.se, O_CLOEXEC) < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "%s: pipe", c->argv[0]);
    _cleanup_pid_ pid_t pid = -1; /* the starter, killed and reaped on any early way out */
    pid_t helper = -1;
    _cleanup_fd_ int note_fd = -1;
    _cleanup_fd_ int pidfd = spawn(c, prog, &p, &pid, &helper, &note_fd, err);
    if (pidfd < 0)
        return -1;
    out->pid = helper;
    close_and_invalidate(&p.in[0]);
    close_and_invalidate(&p.so[1]);
    close_and_invalidate(&p.se[1]);
    exec_run x = {.c = c, .out = out, .p = &p, .pidfd = pidfd, .helper = helper};
    int r = pump(&x, err);
    if (!x.exited && proc_reap(pidfd, NULL) == 0)
        x.exited = true;
    pid = -1;                             /* reaped */
    int exec_errno = 0, status = SIGKILL; /* (killed before its starter could say) */
    bool said = read_notes(note_fd, &status, &exec_errno) == 0;
    if (r < 0 || !x.exited || exec_errno || (!said && !out->timed_out)) {
        ws_out_free(out);
        if (r < 0)
            return -1;
        if (exec_errno)
            return err_set(err, CORDON_STAGE_WORKSPACE, exec_errno, "cannot run %s", prog);
        return err_set(err, CORDON_STAGE_WORKSPACE, ECHILD, "%s: cannot learn how it ended", c->argv[0]);
    }
    out->status = status;
    if (out->out || c->capture) {
        grow(&out->out, &x.cap, out->out_len + 1, 1);
        out->out[out->out_len] = '\0';
    }
    if (out->timed_out) {
        char what[256];
        ws_out_describe(out, what, sizeof what);
        ws_out_free(out);
        return err_set(err, CORDON_STAGE_WORKSPACE, ETIMEDOUT, "%s %s (after %d ms)", c->argv[0], what, c->timeout_ms);
    }
    return 0;
}
