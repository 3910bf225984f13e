/* Running the helpers a workspace needs (git, fuse-overlayfs, fusermount3): posix_spawn
 * of an argument vector (never a shell), with nothing of the caller but stdin from a
 * pipe or /dev/null, stdout and stderr to pipes: every other descriptor closed, signal
 * mask empty and dispositions default, so that a library caller's state reaches no
 * helper.  Every command is bounded in time and killed (its whole session, for a daemon)
 * when it is over. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
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
        if (p[i] >= 0) {
            close(p[i]);
            p[i] = -1;
        }
}

int ws_exec(const ws_cmd *c, ws_out *out, cordon_error *err)
{
    *out = (ws_out){.status = -1};
    int in[2] = {-1, -1}, so[2] = {-1, -1}, se[2] = {-1, -1};
    int ret = -1, pidfd = -1;
    _cleanup_pid_ pid_t pid = -1; /* killed and reaped on any early way out */
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    bool fa_ok = false, at_ok = false;
    size_t cap = 0;
    int keep[WS_KEEP_MAX] = {-1, -1};
    if (c->n_keep > WS_KEEP_MAX)
        return err_set(err, CORDON_STAGE_WORKSPACE, EINVAL, "%s: %zu descriptors to pass, at most %d", c->argv[0],
                       c->n_keep, WS_KEEP_MAX);

    bool in_pipe = c->in && c->in_fd <= 0;
    /* our end of the input pipe non-blocking (written between polls), the program's not */
    if ((in_pipe && (pipe2(in, O_CLOEXEC) < 0 || fcntl(in[1], F_SETFL, O_NONBLOCK) < 0)) ||
        (c->capture && pipe2(so, O_CLOEXEC) < 0) || pipe2(se, O_CLOEXEC) < 0) {
        err_set(err, CORDON_STAGE_WORKSPACE, errno, "%s: pipe", c->argv[0]);
        goto out;
    }
    if (posix_spawn_file_actions_init(&fa) != 0 || posix_spawnattr_init(&at) != 0) {
        err_set(err, CORDON_STAGE_WORKSPACE, ENOMEM, "%s: posix_spawn", c->argv[0]);
        goto out;
    }
    fa_ok = at_ok = true;
    if (c->in_fd > 0)
        posix_spawn_file_actions_adddup2(&fa, c->in_fd, 0);
    else if (in_pipe)
        posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    else
        posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    if (c->capture)
        posix_spawn_file_actions_adddup2(&fa, so[1], 1);
    else
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, se[1], 2);
    /* the kept descriptors as 3, 4, ...: by way of copies above those numbers, so that
     * placing one never overwrites another not placed yet */
    int next = 3;
    for (size_t i = 0; i < c->n_keep; i++) {
        if (c->keep[i] < 0)
            continue;
        keep[i] = fcntl(c->keep[i], F_DUPFD_CLOEXEC, 3 + WS_KEEP_MAX);
        if (keep[i] < 0) {
            err_set(err, CORDON_STAGE_WORKSPACE, errno, "%s: cannot pass it the workspace's lock", c->argv[0]);
            goto out;
        }
        posix_spawn_file_actions_adddup2(&fa, keep[i], next++);
    }
    posix_spawn_file_actions_addclosefrom_np(&fa, next);
    if (c->cwd)
        posix_spawn_file_actions_addchdir_np(&fa, c->cwd);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&at, &none);
    posix_spawnattr_setsigdefault(&at, &all);
    posix_spawnattr_setflags(&at,
                             POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | (c->setsid ? POSIX_SPAWN_SETSID : 0));
    char prog[4096];
    if (!ws_which(c->argv[0], prog, sizeof prog)) {
        err_set(err, CORDON_STAGE_WORKSPACE, ENOENT, "%s not found in PATH", c->argv[0]);
        goto out;
    }
    int r = posix_spawn(&pid, prog, &fa, &at, (char *const *)c->argv, c->envp ? c->envp : environ);
    if (r != 0) {
        pid = -1;
        err_set(err, CORDON_STAGE_WORKSPACE, r, "cannot run %s", prog);
        goto out;
    }
    out->pid = pid;
    pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (in[0] >= 0) {
        close(in[0]);
        in[0] = -1;
    }
    if (so[1] >= 0) {
        close(so[1]);
        so[1] = -1;
    }
    close(se[1]);
    se[1] = -1;

    long long deadline = c->timeout_ms >= 0 ? ws_now_ns() + (long long)c->timeout_ms * 1000000LL : -1;
    size_t in_off = 0, err_len = 0;
    bool exited = false, lost = false;
    int status = 0;
    for (;;) {
        if (!exited) {
            pid_t w = waitpid(pid, &status, WNOHANG);
            if (w == pid) {
                exited = true;
            } else if (w < 0 && errno == ECHILD) {
                /* reaped by someone else (a caller that ignores SIGCHLD): no status */
                exited = lost = true;
            }
        }
        if (exited && so[0] < 0 && se[0] < 0)
            break;
        struct pollfd fds[4];
        int nf = 0, ix_in = -1, ix_out = -1, ix_err = -1;
        if (in[1] >= 0) {
            fds[nf] = (struct pollfd){.fd = in[1], .events = POLLOUT};
            ix_in = nf++;
        }
        if (so[0] >= 0) {
            fds[nf] = (struct pollfd){.fd = so[0], .events = POLLIN};
            ix_out = nf++;
        }
        if (se[0] >= 0) {
            fds[nf] = (struct pollfd){.fd = se[0], .events = POLLIN};
            ix_err = nf++;
        }
        if (!exited && pidfd >= 0)
            fds[nf++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
        int wait_ms = exited ? 0 : (pidfd >= 0 ? 1000 : 10);
        if (deadline >= 0) {
            long long left = (deadline - ws_now_ns()) / 1000000LL;
            if (left <= 0) {
                out->timed_out = true;
                kill(c->setsid ? -pid : pid, SIGKILL);
                kill(pid, SIGKILL);
                break;
            }
            if (left < wait_ms || wait_ms < 0)
                wait_ms = (int)left;
        }
        int n = poll(fds, (nfds_t)nf, wait_ms);
        if (n < 0 && errno != EINTR) {
            err_set(err, CORDON_STAGE_WORKSPACE, errno, "poll");
            kill(pid, SIGKILL);
            break;
        }
        if (n <= 0) {
            if (exited) {
                /* exited, but a descendant (a daemon) holds the pipes: what is there is all */
                close_pair(so);
                close_pair(se);
            }
            continue;
        }
        if (ix_in >= 0 && fds[ix_in].revents) {
            ssize_t w = write(in[1], (const char *)c->in + in_off, c->in_len - in_off);
            if (w > 0)
                in_off += (size_t)w;
            if ((w < 0 && errno != EAGAIN && errno != EINTR) || in_off >= c->in_len) {
                close(in[1]);
                in[1] = -1;
            }
        }
        if (ix_out >= 0 && fds[ix_out].revents) {
            grow(&out->out, &cap, out->out_len + 65536, 1);
            ssize_t rd = read(so[0], out->out + out->out_len, 65536);
            if (rd > 0)
                out->out_len += (size_t)rd;
            else if (rd == 0 || (errno != EINTR && errno != EAGAIN))
                close_pair(so);
        }
        if (ix_err >= 0 && fds[ix_err].revents) {
            char buf[4096];
            ssize_t rd = read(se[0], buf, sizeof buf);
            if (rd > 0) {
                size_t room = sizeof out->err - 1 - err_len;
                size_t k = (size_t)rd < room ? (size_t)rd : room;
                memcpy(out->err + err_len, buf, k);
                err_len += k;
                out->err[err_len] = '\0';
            } else if (rd == 0 || (errno != EINTR && errno != EAGAIN)) {
                close_pair(se);
            }
        }
    }
    if (!exited) {
        pid_t w;
        while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
            ;
        lost = w < 0;
    }
    pid = -1;
    out->status = status;
    if (lost) {
        err_set(err, CORDON_STAGE_WORKSPACE, ECHILD,
                "%s: cannot learn how it ended (is SIGCHLD ignored in this process?)", c->argv[0]);
        goto out;
    }
    if (out->out || c->capture) {
        grow(&out->out, &cap, out->out_len + 1, 1);
        out->out[out->out_len] = '\0';
    }
    if (out->timed_out) {
        char what[256];
        ws_out_describe(out, what, sizeof what);
        err_set(err, CORDON_STAGE_WORKSPACE, ETIMEDOUT, "%s %s (after %d ms)", c->argv[0], what, c->timeout_ms);
        goto out;
    }
    ret = 0;
out:
    for (size_t i = 0; i < WS_KEEP_MAX; i++)
        if (keep[i] >= 0)
            close(keep[i]);
    if (pidfd >= 0)
        close(pidfd);
    close_pair(in);
    close_pair(so);
    close_pair(se);
    if (fa_ok)
        posix_spawn_file_actions_destroy(&fa);
    if (at_ok)
        posix_spawnattr_destroy(&at);
    if (ret < 0)
        ws_out_free(out);
    return ret;
}
