// SPDX-License-Identifier: Apache-2.0
/* The public run calls: cordon_spawn and the cordon_proc_* calls on top of
 * supervise/outer.h, and cordon_run / cordon_run_output on top of those. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine/llonly.h"
#include "lib/hint.h"
#include "lib/prepare.h"
#include "lib/proc.h"
#include "net/host.h"
#include "policy/policy.h"
#include "session/session.h"
#include "supervise/outer.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/trace.h"

/* Tells a cordon_proc from another kind of pointer; a freed one is the caller's bug, not
 * detected (that would read freed memory). */
#define PROC_MAGIC 0x636f72646f6e5052ULL /* "cordonPR" */

#define SPAWN_PIPES (CORDON_SPAWN_STDIN_PIPE | CORDON_SPAWN_STDOUT_PIPE | CORDON_SPAWN_STDERR_PIPE)
#define SPAWN_KNOWN (SPAWN_PIPES | CORDON_SPAWN_MERGE_STDERR | CORDON_SPAWN_STDIN_INHERIT | CORDON_SPAWN_PTY)

struct cordon_proc {
    uint64_t magic;
    outer_run *run;
    sess_cmd *sc;  /* a session's command (src/session) instead of a run of its own */
    int fd[3];     /* the caller's ends: stdin's write end, stdout's and stderr's read ends */
    int pty;       /* CORDON_SPAWN_PTY: the terminal's master, or -1 */
    llonly ll;     /* --isolation landlock: the private HOME and TMPDIR, removed at free */
    net_host *net; /* the network helper's side (src/net), or NULL */
    cordon_isolation isolation;
    const char *isolation_why;
    char *not_found; /* what the host has by the command's name (lib/hint.h), for a 127 */
};

static bool valid(const cordon_proc *c)
{
    return c && c->magic == PROC_MAGIC;
}

static void close_pair(int p[2])
{
    for (int i = 0; i < 2; i++)
        if (p[i] >= 0)
            close(p[i]);
    p[0] = p[1] = -1;
}

static int check_flags(unsigned flags, cordon_error *err)
{
    if (flags & ~SPAWN_KNOWN)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "cordon_spawn: unknown flags %#x (known: %#x)",
                       flags & ~SPAWN_KNOWN, SPAWN_KNOWN);
    if ((flags & CORDON_SPAWN_MERGE_STDERR) && !(flags & CORDON_SPAWN_STDOUT_PIPE))
        return err_set(err, CORDON_STAGE_USAGE, EINVAL,
                       "cordon_spawn: CORDON_SPAWN_MERGE_STDERR needs CORDON_SPAWN_STDOUT_PIPE (stderr goes "
                       "into the stdout pipe)");
    if ((flags & CORDON_SPAWN_MERGE_STDERR) && (flags & CORDON_SPAWN_STDERR_PIPE))
        return err_set(err, CORDON_STAGE_USAGE, EINVAL,
                       "cordon_spawn: CORDON_SPAWN_MERGE_STDERR and CORDON_SPAWN_STDERR_PIPE exclude each other");
    if ((flags & CORDON_SPAWN_STDIN_PIPE) && (flags & CORDON_SPAWN_STDIN_INHERIT))
        return err_set(err, CORDON_STAGE_USAGE, EINVAL,
                       "cordon_spawn: CORDON_SPAWN_STDIN_PIPE and CORDON_SPAWN_STDIN_INHERIT exclude each other");
    unsigned not_pty =
        CORDON_SPAWN_STDIN_PIPE | CORDON_SPAWN_STDIN_INHERIT | CORDON_SPAWN_STDOUT_PIPE | CORDON_SPAWN_MERGE_STDERR;
    if ((flags & CORDON_SPAWN_PTY) && (flags & not_pty))
        return err_set(err, CORDON_STAGE_USAGE, EINVAL,
                       "cordon_spawn: CORDON_SPAWN_PTY makes the terminal the command's stdin and stdout: it "
                       "excludes CORDON_SPAWN_STDIN_PIPE, _STDIN_INHERIT, _STDOUT_PIPE and _MERGE_STDERR "
                       "(CORDON_SPAWN_STDERR_PIPE still pipes stderr)");
    return 0;
}

static int check_argv(char *const argv[], cordon_error *err)
{
    if (!argv)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "no command given (argv is NULL)");
    if (!argv[0] || !argv[0][0])
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "no command given (argv[0] is %s)", argv[0] ? "empty" : "NULL");
    return 0;
}

/* The run's host-side helper, when its plan needs one: the network helper (src/net) for
 * --network proxy, --forward-port and --publish-port; h->start NULL means none.  What
 * h->ctx holds (descriptors, the helper process) is released by h->stop, which
 * outer_start/outer_free call exactly once; the net_host itself (*net) is the proc's,
 * freed with it, as its counts outlive the helper. */
int proc_run_helper(const plan *p, outer_helper *h, net_host **net, cordon_error *err)
{
    *h = (outer_helper){0};
    *net = NULL;
    if (!net_host_needed(p))
        return 0;
    net_host *n = malloc(sizeof *n);
    if (!n)
        return err_set(err, CORDON_STAGE_SUPERVISE, ENOMEM, "out of memory");
    if (net_host_prepare(n, p, err) < 0) {
        free(n);
        return -1;
    }
    *h = (outer_helper){.name = "the network helper", .start = net_host_start, .stop = net_host_stop, .ctx = n};
    *net = n;
    return 0;
}

/* Start a run whose standard streams are `stdio` (-1: the caller's own). */
static int spawn_with(const cordon_policy *pol, char *const argv[], const int stdio[3], unsigned flags,
                      cordon_proc **out, cordon_error *err)
{
    cordon_proc *c = calloc(1, sizeof *c);
    if (!c)
        return err_set(err, CORDON_STAGE_SUPERVISE, ENOMEM, "out of memory");
    c->fd[0] = c->fd[1] = c->fd[2] = c->pty = -1;
    prepared x;
    if (prepare_run(pol, &x, &c->ll, err) < 0) {
        free(c);
        return -1;
    }
    c->isolation = x.p.isolation;
    c->isolation_why = x.isolation_why;
    cmd_hint hint;
    cmd_hint_make(&x.r, &x.p, x.p.env.v, argv ? argv[0] : NULL, &hint);
    if (hint.warning && pol->warn_fn)
        pol->warn_fn(hint.warning, pol->warn_ctx);
    c->not_found = steal_pointer(&hint.missing);
    cmd_hint_free(&hint);
    outer_opts o = {.ll_ruleset_fd = c->ll.ruleset_fd,
                    .ll = &c->ll,
                    .pty = flags & CORDON_SPAWN_PTY,
                    .pty_stderr = !(flags & CORDON_SPAWN_STDERR_PIPE)};
    memcpy(o.stdio, stdio, sizeof o.stdio);
    outer_helper helper;
    if (proc_run_helper(&x.p, &helper, &c->net, err) < 0) {
        prepared_free(&x);
        llonly_free(&c->ll);
        free(c);
        return -1;
    }
    o.helper = helper.start ? &helper : NULL;
    int r = prepared_dump(pol, &x, argv, err);
    if (r < 0 && helper.stop)
        helper.stop(helper.ctx);
    if (r == 0)
        r = outer_start(&x.p, argv, &o, &c->run, err);
    prepared_free(&x);
    if (r < 0) {
        net_host_free(c->net); /* (outer_start has stopped it) */
        llonly_free(&c->ll);
        free(c);
        return -1;
    }
    if (o.pty)
        c->pty = outer_take_pty(c->run);
    c->magic = PROC_MAGIC;
    *out = c;
    return 0;
}

/* What starts the process behind a cordon_proc with the given standard streams. */
typedef int (*start_fn)(void *ctx, const int stdio[3], cordon_proc **c, cordon_error *err);

static int spawn_common(const char *call, unsigned flags, start_fn start, void *ctx, cordon_proc **out,
                        cordon_error *err);

typedef struct policy_start {
    const cordon_policy *pol;
    char *const *argv;
    unsigned flags;
} policy_start;

static int start_policy(void *ctx, const int stdio[3], cordon_proc **c, cordon_error *err)
{
    policy_start *ps = ctx;
    if (!ps->pol)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "cordon_spawn: no policy given (NULL)");
    return spawn_with(ps->pol, ps->argv, stdio, ps->flags, c, err);
}

int cordon_spawn(const cordon_policy *pol, char *const argv[], unsigned flags, cordon_proc **out, cordon_error *err)
{
    return cordon_spawn_cmd(pol, argv, flags, NULL, out, err);
}

/* A caller's cordon_cmd in this release's layout (fields its size does not cover: zero);
 * 0.1's layout (no has_timeout) keeps 0.1's meaning of timeout: 0 the policy's, < 0 none. */
void proc_cmd_import(const cordon_cmd *cmd, cordon_cmd *c)
{
    *c = (cordon_cmd)CORDON_CMD_INIT;
    if (!cmd)
        return;
    size_t n = cmd->size && cmd->size < sizeof *c ? cmd->size : sizeof *c;
    memcpy(c, cmd, n);
    c->size = sizeof *c;
    if (cmd->size && cmd->size < offsetof(cordon_cmd, has_timeout) + sizeof c->has_timeout) {
        c->has_timeout = cmd->timeout != 0;
        c->timeout = cmd->timeout < 0 ? 0 : cmd->timeout;
    }
}

static int check_cmd(const char *call, const cordon_cmd *c, cordon_error *err)
{
    if (c->has_timeout && (!isfinite(c->timeout) || c->timeout < 0 || c->timeout > 31536000.0))
        return err_opt(err, CORDON_STAGE_USAGE, EINVAL, "timeout",
                       "%s: %g is not a number of seconds between 0 (none) and 31536000", call, c->timeout);
    if (c->cwd && c->cwd[0] != '/')
        return err_opt(err, CORDON_STAGE_USAGE, EINVAL, "chdir", "%s: the working directory '%s' is not absolute", call,
                       c->cwd);
    for (size_t i = 0; c->env && c->env[i]; i++) {
        const char *eq = strchr(c->env[i], '=');
        bool ok = eq && eq != c->env[i];
        for (const char *q = c->env[i]; ok && q < eq; q++)
            ok = (unsigned char)*q > ' ' && *q != 0x7f;
        if (!ok)
            return err_opt(err, CORDON_STAGE_USAGE, EINVAL, "env", "%s: '%s' is not NAME=VALUE", call, c->env[i]);
    }
    return 0;
}

int cordon_spawn_cmd(const cordon_policy *pol, char *const argv[], unsigned flags, const cordon_cmd *cmd,
                     cordon_proc **out, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    if (out)
        *out = NULL;
    if (out && check_argv(argv, &e) < 0) {
        err_export(err, &e);
        return -1;
    }
    cordon_cmd c;
    proc_cmd_import(cmd, &c);
    if (check_cmd("cordon_spawn_cmd", &c, &e) < 0 ||
        ((c.keep || c.detach) &&
         err_opt(&e, CORDON_STAGE_USAGE, EINVAL, c.keep ? "keep" : "detach",
                 "cordon_spawn_cmd: keep and detach are a session's (cordon_session_spawn_cmd)") < 0)) {
        err_export(err, &e);
        return -1;
    }
    if (c.tty)
        flags |= CORDON_SPAWN_PTY;
    if (!pol || (!c.cwd && !c.env && !c.has_timeout)) {
        policy_start ps = {pol, argv, flags};
        return spawn_common("cordon_spawn", flags, start_policy, &ps, out, err);
    }
    /* the caller's policy copied (shallow: it shares the policy's data, which outlives the
     * spawn) with the command's own settings over it; nothing of it is kept after */
    struct cordon_policy copy = *pol;
    size_t extra = 0;
    while (c.env && c.env[extra])
        extra++;
    env_op *env = calloc(pol->n_env + extra + 1, sizeof *env);
    if (!env) {
        err_set(&e, CORDON_STAGE_SUPERVISE, ENOMEM, "out of memory");
        err_export(err, &e);
        return -1;
    }
    memcpy(env, pol->env, pol->n_env * sizeof *env);
    char *names = NULL;
    size_t names_len = 0;
    for (size_t i = 0; i < extra; i++)
        names_len += strlen(c.env[i]) + 1;
    if (extra && !(names = malloc(names_len))) {
        free(env);
        err_set(&e, CORDON_STAGE_SUPERVISE, ENOMEM, "out of memory");
        err_export(err, &e);
        return -1;
    }
    char *at = names;
    for (size_t i = 0; i < extra; i++) { /* "NAME\0VALUE\0": the '=' becomes the NUL */
        size_t l = strlen(c.env[i]) + 1;
        memcpy(at, c.env[i], l);
        char *eq = strchr(at, '=');
        *eq = '\0';
        env[pol->n_env + i] = (env_op){.kind = ENV_SET, .name = at, .value = eq + 1};
        at += l;
    }
    copy.env = env;
    copy.n_env = pol->n_env + extra;
    copy.cap_env = pol->n_env + extra + 1;
    if (c.cwd)
        copy.cwd = (char *)c.cwd;
    if (c.has_timeout)
        copy.timeout = c.timeout;
    policy_start ps = {&copy, argv, flags};
    int r = spawn_common("cordon_spawn_cmd", flags, start_policy, &ps, out, err);
    free(env);
    free(names);
    return r;
}

typedef struct session_start {
    int via;
    const char *path;
    char *const *argv;
    const cordon_session_cmd *cmd;
} session_start;

static int start_session(void *ctx, const int stdio[3], cordon_proc **out, cordon_error *err)
{
    session_start *ss = ctx;
    cordon_proc *c = calloc(1, sizeof *c);
    if (!c)
        return err_set(err, CORDON_STAGE_SUPERVISE, ENOMEM, "out of memory");
    c->fd[0] = c->fd[1] = c->fd[2] = c->pty = -1;
    c->ll.ruleset_fd = -1;
    c->isolation = CORDON_ISOLATION_NAMESPACES;
    if (sess_cmd_start(ss->via, ss->path, ss->argv, stdio, ss->cmd, &c->sc, err) < 0) {
        free(c);
        return -1;
    }
    c->magic = PROC_MAGIC;
    *out = c;
    return 0;
}

int proc_spawn_session(int via, const char *path, char *const argv[], unsigned flags, const cordon_session_cmd *cmd,
                       cordon_proc **out, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    if (out)
        *out = NULL;
    if (out && check_argv(argv, &e) < 0) {
        err_export(err, &e);
        return -1;
    }
    /* one terminal mechanism: CORDON_SPAWN_PTY, or cmd->tty, which means the same */
    cordon_cmd with_tty;
    if (flags & CORDON_SPAWN_PTY) {
        with_tty = cmd ? *cmd : (cordon_cmd)CORDON_CMD_INIT;
        with_tty.tty = true;
        cmd = &with_tty;
        flags &= ~CORDON_SPAWN_PTY;
    }
    bool tty = cmd && cmd->tty;
    if (tty && flags) {
        err_set(&e, CORDON_STAGE_USAGE, EINVAL,
                "cordon_session_spawn: a command with a terminal takes no other spawn flags (the terminal's "
                "master is its stdin, stdout and stderr)");
        err_export(err, &e);
        return -1;
    }
    if (cmd && check_cmd("cordon_session_spawn_cmd", cmd, &e) < 0) {
        err_export(err, &e);
        return -1;
    }
    session_start ss = {via, path, argv, cmd};
    /* with a terminal, the command's 0, 1 and 2 are the terminal's: nothing of ours */
    int r =
        spawn_common("cordon_session_spawn", tty ? CORDON_SPAWN_STDIN_INHERIT : flags, start_session, &ss, out, err);
    if (r == 0 && tty && out && *out) { /* (spawn_common refuses a NULL out) */
        cordon_proc *c = *out;
        int master = sess_cmd_tty(c->sc);
        if (master >= 0) {
            c->fd[1] = master;
            c->fd[0] = fcntl(master, F_DUPFD_CLOEXEC, 3);
            c->pty = fcntl(master, F_DUPFD_CLOEXEC, 3); /* cordon_proc_pty, as for cordon_spawn */
        }
    }
    return r;
}

static int spawn_common(const char *call, unsigned flags, start_fn start, void *ctx, cordon_proc **out,
                        cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
    int devnull = -1;
    int ret = -1;
    if (!out) {
        err_set(&e, CORDON_STAGE_USAGE, EINVAL, "%s: nowhere to put the process (out is NULL)", call);
        goto done;
    }
    *out = NULL;
    if (check_flags(flags, &e) < 0)
        goto done;
    int stdio[3] = {-1, -1, -1};
    if (flags & CORDON_SPAWN_STDIN_PIPE) {
        if (pipe2(pipes[0], O_CLOEXEC) < 0)
            goto pipe_failed;
        stdio[0] = pipes[0][0];
    } else if (!(flags & CORDON_SPAWN_STDIN_INHERIT)) {
        /* (with a terminal: PID 1's own stdio; the command gets the terminal) */
        if ((devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
            err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot open /dev/null for the command's stdin");
            goto done;
        }
        stdio[0] = devnull;
    }
    if (flags & CORDON_SPAWN_STDOUT_PIPE) {
        if (pipe2(pipes[1], O_CLOEXEC) < 0)
            goto pipe_failed;
        stdio[1] = pipes[1][1];
        if (flags & CORDON_SPAWN_MERGE_STDERR)
            stdio[2] = pipes[1][1];
    }
    if (flags & CORDON_SPAWN_STDERR_PIPE) {
        if (pipe2(pipes[2], O_CLOEXEC) < 0)
            goto pipe_failed;
        stdio[2] = pipes[2][1];
    }
    if (flags & CORDON_SPAWN_PTY) {
        /* The sandbox holds nothing of the caller's terminal: PID 1's own stdout and
         * stderr are /dev/null as its stdin is, the command's are the new terminal. */
        stdio[1] = devnull;
        if (stdio[2] < 0)
            stdio[2] = devnull;
    }
    cordon_proc *c = NULL;
    if (start(ctx, stdio, &c, &e) < 0 || !c)
        goto done;
    /* The command's ends are the sandbox's now; the caller keeps the others. */
    c->fd[0] = pipes[0][1];
    c->fd[1] = pipes[1][0];
    c->fd[2] = pipes[2][0];
    pipes[0][1] = pipes[1][0] = pipes[2][0] = -1;
    *out = c;
    ret = 0;
    goto done;
pipe_failed:
    err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot make a pipe for the command");
done:
    for (int i = 0; i < 3; i++)
        close_pair(pipes[i]);
    if (devnull >= 0)
        close(devnull);
    if (ret < 0)
        err_export(err, &e);
    else if (err)
        err_clear(err);
    return ret;
}

static int bad_proc(const cordon_proc *c, const char *call, cordon_error *err)
{
    return err_set(err, CORDON_STAGE_USAGE, EINVAL, "%s: %s", call,
                   !c ? "no process given (NULL)" : "not a process from cordon_spawn");
}

int cordon_proc_stdin(const cordon_proc *c)
{
    return valid(c) ? c->fd[0] : -1;
}

int cordon_proc_stdout(const cordon_proc *c)
{
    return valid(c) ? c->fd[1] : -1;
}

int cordon_proc_stderr(const cordon_proc *c)
{
    return valid(c) ? c->fd[2] : -1;
}

int cordon_proc_pty(const cordon_proc *c)
{
    return valid(c) ? c->pty : -1;
}

int cordon_proc_close_stdin(cordon_proc *c, cordon_error *err)
{
    if (!valid(c))
        return bad_proc(c, "cordon_proc_close_stdin", err);
    if (c->fd[0] < 0) /* never piped, or already closed */
        return err_set(err, CORDON_STAGE_USAGE, EBADF,
                       "cordon_proc_close_stdin: the command's stdin is not a pipe "
                       "(any more): spawn with CORDON_SPAWN_STDIN_PIPE, close it once");
    int fd = c->fd[0];
    c->fd[0] = -1;
    /* close() is not retried on EINTR: on Linux the descriptor is gone either way */
    if (close(fd) < 0 && errno != EINTR)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "cordon_proc_close_stdin: cannot close the pipe");
    err_clear(err);
    return 0;
}

int proc_report_fd(const cordon_proc *c)
{
    return valid(c) && !c->sc && c->run ? outer_report_fd(c->run) : -1;
}

int cordon_proc_exit_fd(const cordon_proc *c)
{
    if (!valid(c))
        return -1;
    return c->sc ? sess_cmd_fd(c->sc) : outer_pidfd(c->run);
}

/* err filled without formatting or allocating: cordon_proc_kill is async-signal-safe. */
static int kill_failed(cordon_error *err, int errnum, const char *message)
{
    errno = errnum; /* (as in 0.1, too) */
    if (!err)
        return -1;
    err->stage = errnum == ESRCH ? CORDON_STAGE_SUPERVISE : CORDON_STAGE_USAGE;
    err->errnum = errnum;
    err->truncated = false;
    err->option[0] = '\0';
    size_t i = 0;
    for (; message[i] && i + 1 < sizeof err->message; i++)
        err->message[i] = message[i];
    err->message[i] = '\0';
    return -1;
}

int cordon_proc_kill(cordon_proc *c, int sig, cordon_error *err)
{
    if (!valid(c))
        return kill_failed(err, EINVAL,
                           c ? "cordon_proc_kill: not a process from cordon_spawn"
                             : "cordon_proc_kill: no process given (NULL)");
    int r = c->sc ? sess_cmd_kill(c->sc, sig) : outer_kill(c->run, sig);
    if (r < 0) {
        int e = errno;
        return kill_failed(err, e,
                           e == ESRCH ? "cordon_proc_kill: the sandbox has ended"
                           : e == EINVAL
                               ? "cordon_proc_kill: a signal cordon does not deliver (SIGKILL, SIGINT, SIGTERM, "
                                 "SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT or 0)"
                               : "cordon_proc_kill: the signal could not be sent");
    }
    if (err) {
        err->stage = CORDON_STAGE_NONE;
        err->errnum = 0;
        err->truncated = false;
        err->option[0] = err->message[0] = '\0';
    }
    return 0;
}

/* The run has ended: add what this layer knows (the isolation chosen), and remove the
 * private directories of --isolation landlock at once (the supervisor has killed every
 * process that could use them), so that a caller that exits right after the wait, as
 * the command line does, leaves nothing behind. */
static void ended(cordon_proc *c, cordon_result *res, cordon_error *e)
{
    if (c->not_found && !res->started && res->exit_code == CORDON_EXIT_NOTFOUND && e->stage == CORDON_STAGE_EXEC) {
        char msg[sizeof e->message];
        snprintf(msg, sizeof msg, "%s", e->message);
        err_set(e, CORDON_STAGE_EXEC, e->errnum, "%s; %s", msg, c->not_found);
    }
    if (!c->sc) { /* (a session's command: its session said which, session/client.c) */
        res->isolation = c->isolation;
        res->isolation_why = c->isolation_why;
    }
    if (c->net)
        net_host_result(c->net, res); /* what the network helper let through and refused */
    llonly_free(&c->ll);
}

int cordon_proc_wait(cordon_proc *c, int timeout_ms, cordon_result *res, cordon_error *err)
{
    if (!valid(c)) {
        cordon_error e = {.size = sizeof e};
        bad_proc(c, "cordon_proc_wait", &e);
        err_export(err, &e);
        return -1;
    }
    if (timeout_ms < -1) {
        cordon_error e = {.size = sizeof e};
        err_set(&e, CORDON_STAGE_USAGE, EINVAL, "cordon_proc_wait: timeout_ms is %d (-1: no timeout, else >= 0)",
                timeout_ms);
        err_export(err, &e);
        return -1;
    }
    cordon_result r = {.size = sizeof r};
    cordon_error e = {.size = sizeof e};
    int w = c->sc ? sess_cmd_wait(c->sc, timeout_ms, &r, &e) : outer_wait(c->run, timeout_ms, -1, NULL, NULL, &r, &e);
    if (w == 0) {
        ended(c, &r, &e);
        result_export(res, &r);
        err_export(err, &e);
    } else if (w < 0) {
        err_export(err, &e);
    }
    cordon_result_free(&r);
    return w;
}

void cordon_proc_free(cordon_proc *c)
{
    if (!valid(c))
        return;
    if (c->sc)
        sess_cmd_free(c->sc); /* kills what still runs, waits until PID 1 says it is gone */
    else
        outer_free(c->run); /* kills what still runs and reaps it (and stops the network helper) */
    net_host_free(c->net);
    for (int i = 0; i < 3; i++)
        if (c->fd[i] >= 0)
            close(c->fd[i]);
    if (c->pty >= 0)
        close(c->pty);
    llonly_free(&c->ll); /* every process of the run is gone: the private directory goes too */
    free(c->not_found);
    free(c);
}

/* ------------------------------------------------------------------------------------ */
/* to completion */

/* Wait for c to end (reading out_fd into fn), free it, fill res; 0 when the command ran. */
static int run_to_end(cordon_proc *c, int out_fd, cordon_output_fn fn, void *ctx, cordon_result *res, cordon_error *e)
{
    int w = outer_wait(c->run, -1, out_fd, fn, ctx, res, e);
    if (w == 0)
        ended(c, res, e);
    cordon_proc_free(c);
    if (w < 0)
        return -1;
    return res->started || res->timed_out ? 0 : -1;
}

int cordon_run(const cordon_policy *pol, char *const argv[], cordon_result *result, cordon_error *err)
{
    /* until the run says otherwise: it failed before it started */
    cordon_result r = {.size = sizeof r, .exit_code = CORDON_EXIT_SETUP, .status_code = -1};
    cordon_error e = {.size = sizeof e};
    int ret = -1;
    cordon_proc *c = NULL;
    static const int inherit[3] = {-1, -1, -1};
    if (check_argv(argv, &e) == 0 && spawn_with(pol, argv, inherit, 0, &c, &e) == 0)
        ret = run_to_end(c, -1, NULL, NULL, &r, &e);
    result_export(result, &r);
    cordon_result_free(&r);
    err_export(err, &e);
    return ret;
}

int cordon_run_output(const cordon_policy *pol, char *const argv[], cordon_output_fn fn, void *ctx,
                      cordon_result *result, cordon_error *err)
{
    /* until the run says otherwise: it failed before it started */
    cordon_result r = {.size = sizeof r, .exit_code = CORDON_EXIT_SETUP, .status_code = -1};
    cordon_error e = {.size = sizeof e};
    int ret = -1, out[2] = {-1, -1}, devnull = -1;
    cordon_proc *c = NULL;
    if (check_argv(argv, &e) < 0)
        goto done;
    if (!fn) {
        err_set(&e, CORDON_STAGE_USAGE, EINVAL, "cordon_run_output: no output callback (fn is NULL)");
        goto done;
    }
    /* cordon's end non-blocking (outer_wait reads it dry between polls), the command's not */
    if (pipe2(out, O_CLOEXEC) < 0 || fcntl(out[0], F_SETFL, O_NONBLOCK) < 0) {
        err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot make the output pipe");
        goto done;
    }
    if ((devnull = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot open /dev/null for the command's stdin");
        goto done;
    }
    /* A larger pipe means fewer wake-ups per megabyte (best effort: the per-user pipe
     * budget may say no, and the default then stays). */
    (void)fcntl(out[1], F_SETPIPE_SZ, 1 << 20);
    int stdio[3] = {devnull, out[1], out[1]};
    if (spawn_with(pol, argv, stdio, 0, &c, &e) < 0)
        goto done;
    close(out[1]);
    out[1] = -1;
    ret = run_to_end(c, out[0], fn, ctx, &r, &e);
done:
    close_pair(out);
    if (devnull >= 0)
        close(devnull);
    result_export(result, &r);
    cordon_result_free(&r);
    err_export(err, &e);
    return ret;
}
