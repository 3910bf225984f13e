// SPDX-License-Identifier: Apache-2.0
/* `cordon session start | exec | list | stop`: the command line over the library's
 * session calls (include/cordon.h, "sessions"). */
#include <errno.h>
#include <jansson.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

void help_session(FILE *out)
{
    fputs("usage: cordon session start NAME [--idle-timeout DURATION] [RUN OPTIONS]\n"
          "       cordon session exec NAME [--chdir DIR] [--env NAME=VALUE] [--timeout SECONDS]\n"
          "                                [--tty|--no-tty] [--keep [--detach]] [--] COMMAND [ARG...]\n"
          "       cordon session list [--json]\n"
          "       cordon session stop NAME\n"
          "\n"
          "A session is one sandbox, built once by `start` with the options of `cordon run`, that\n"
          "commands are started in, each in a few hundred microseconds. `start` exits 0 once the\n"
          "session is ready; the session is held by a daemon of its own and outlives the process\n"
          "that ran `start` (each command of a harness may run in a fresh shell). It ends on `stop`,\n"
          "when its holder is killed, or with\n"
          "  --idle-timeout DURATION  after DURATION (seconds, or 30m, 2h, 1d) with no command\n"
          "                       running; what --keep left running and --detach commands do not\n"
          "                       count (default: none: a kept server may sit idle for hours while\n"
          "                       you are away; `stop` ends the session)\n"
          "Whichever way it ends, nothing is left: processes, mounts, its socket.\n"
          "\n"
          "`exec` runs COMMAND in the session as `cordon run` would run it (its output, exit status,\n"
          "timeout; what it leaves running is killed when it exits), with cordon's own stdin, stdout\n"
          "and stderr:\n"
          "  --chdir DIR          the working directory inside (default: the current directory)\n"
          "  --env NAME=VALUE     set a variable over the session's environment (repeatable)\n"
          "  --timeout SECONDS    kill the command's whole process tree after SECONDS; exit 124\n"
          "                       (default: the session's --timeout, if any)\n"
          "  --tty, --no-tty      a terminal of the sandbox's own (default: when stdin and stdout\n"
          "                       are terminals); ^Z to the command stops it and this, as under\n"
          "                       cordon run, and fg continues both\n"
          "  --keep               what the command leaves running stays in the session until `stop`\n"
          "                       (a server a later command talks to)\n"
          "  --detach             (with --keep) start COMMAND and return at once, printing its pid\n"
          "                       in the session; its stdin, stdout and stderr are /dev/null\n"
          "                       (redirect inside: -- sh -c 'npm run dev >dev.log 2>&1'); exit\n"
          "                       status 0 once it started, else as for any command (127, 125...)\n"
          "\n"
          "Commands of one session share its view, /tmp, HOME and TMPDIR, and see each other's\n"
          "processes; only your own user, outside any sandbox, can exec into a session. Sessions\n"
          "live in $XDG_RUNTIME_DIR/cordon/sessions (else /run/user/UID/cordon/sessions, for root\n"
          "/run/cordon/sessions, else /tmp/cordon-UID/sessions).\n"
          "\n"
          "With --isolation landlock (or auto where user namespaces are refused) the session has\n"
          "no namespaces: each command runs as `cordon run --isolation landlock` runs it, started\n"
          "by the session's holder; HOME and TMPDIR are the session's directories on the host, and\n"
          "there is no /tmp, PID or network namespace of its own (`start` says so).\n"
          "\n"
          "exit status of exec: as `cordon run`; 125 also when there is no such session, or when\n"
          "its policy cannot be met: for good once the host took away a mount it cannot hold\n"
          "otherwise (its workspace was deleted, say); for as long as a protected or hidden name that\n"
          "was missing at `start`, or that the host replaced, exists on the host (an editor's\n"
          ".vscode: remove it, or restart the session to protect it as it is).\n",
          out);
}

static int usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cordon: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("; see `cordon help session`\n", stderr);
    va_end(ap);
    return CORDON_EXIT_SETUP;
}

/* ------------------------------------------------------------------------------------ */
/* start */

/* A holder's failure before the session is ready: the text goes to `start` (through the
 * ready pipe), which prints it. */
static __attribute__((noreturn)) void holder_fail(int ready, const char *what)
{
    char text[512];
    int n = snprintf(text, sizeof text, "cordon: cannot start the session's holder (%s: %s)", what, strerror(errno));
    if (n > 0)
        (void)!write(ready, text, (size_t)n < sizeof text ? (size_t)n : sizeof text - 1);
    _exit(CORDON_EXIT_SETUP);
}

/* The holder: a daemon that serves the session until `stop`, its idle timeout, or its
 * own death (the contract: a session outlives the process that ran `start`).  Run in the
 * first child of `start`, which makes it and exits, so that it is nobody's child, in a
 * session of its own that it does not lead (it can never get a controlling terminal:
 * no terminal's signals reach it), with /dev/null as its stdin, stdout and stderr,
 * nothing else of the caller's open, the default signal dispositions and an empty
 * signal mask (a caller that ignored SIGTERM does not make it unkillable), and / as its
 * working directory once the session is built (the policy is resolved against the
 * caller's). */
/* A warning of the session's start, for `start` to print (ctx: a buffer of 2048). */
static void collect_warning(const char *message, void *ctx)
{
    char *buf = ctx;
    size_t used = strlen(buf);
    snprintf(buf + used, 2048 - used, "cordon: warning: %s\n", message);
}

static __attribute__((noreturn)) void run_holder(const char *name, cordon_policy *pol, double idle, int ready)
{
    if (setsid() < 0)
        holder_fail(ready, "setsid");
    pid_t holder = fork();
    if (holder < 0)
        holder_fail(ready, "fork");
    if (holder > 0)
        _exit(0);
    /* the ready pipe at 3, nothing else above 2 */
    if (ready != 3) {
        if (dup3(ready, 3, O_CLOEXEC) < 0)
            holder_fail(ready, "dup3");
        ready = 3;
    }
    if (close_range(4, ~0U, 0) < 0)
        holder_fail(ready, "close_range");
    int devnull = open("/dev/null", O_RDWR);
    if (devnull < 0)
        holder_fail(ready, "open /dev/null");
    for (int fd = 0; fd < 3; fd++)
        if (devnull != fd && dup2(devnull, fd) < 0)
            holder_fail(ready, "dup2");
    if (devnull > 2)
        close(devnull);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        if (sig != SIGKILL && sig != SIGSTOP)
            (void)sigaction(sig, &dfl, NULL); /* (EINVAL for the C library's own: they are not ours) */
    sigset_t none;
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
        holder_fail(ready, "sigprocmask");
    cordon_error err = {0};
    cordon_session *s = NULL;
    /* what the session warns about goes to `start`, after the ready byte */
    char warnings[2048] = "";
    (void)cordon_policy_set_warning_handler(pol, collect_warning, warnings, NULL);
    if (cordon_session_new(pol, &s, &err) < 0 || (idle > 0 && cordon_session_set_idle_timeout(s, idle, &err) < 0) ||
        cordon_session_listen(s, name, &err) < 0) {
        char text[2200];
        cli_error_text(&err, text, sizeof text);
        (void)!write(ready, text, strlen(text));
        cordon_session_free(s);
        _exit(CORDON_EXIT_SETUP);
    }
    cordon_policy_free(pol);
    if (chdir("/") < 0) {
        cordon_session_free(s);
        holder_fail(ready, "chdir /");
    }
    /* ready; a `start` that is gone by now (killed) was never told: the session ends */
    ssize_t w;
    do
        w = write(ready, "", 1);
    while (w < 0 && errno == EINTR);
    if (w == 1 && warnings[0])
        (void)!write(ready, warnings, strlen(warnings)); /* (start prints what came; a start gone misses it) */
    if (w != 1) {
        cordon_session_free(s);
        _exit(CORDON_EXIT_SETUP);
    }
    close(ready);
    /* (however serving ends, a stop, the idle timeout, PID 1's end or a failure to wait,
     * the session ends with it, and nobody is left to tell) */
    (void)cordon_session_serve(s, -1, &err);
    cordon_session_free(s);
    _exit(0);
}

/* --idle-timeout DURATION: seconds (decimals allowed), or a number with s, m, h or d. */
static int parse_duration(const char *v, double *out)
{
    char *end;
    errno = 0;
    double t = strtod(v, &end);
    if (!*v || errno || end == v || !(t > 0))
        return -1;
    double unit = 1;
    if (*end == 's')
        end++;
    else if (*end == 'm')
        unit = 60, end++;
    else if (*end == 'h')
        unit = 3600, end++;
    else if (*end == 'd')
        unit = 86400, end++;
    if (*end || t * unit > 1e9)
        return -1;
    *out = t * unit;
    return 0;
}

/* Take --idle-timeout out of the run options (which parse_run_args reads): 0, or -1 after
 * printing why. */
static int take_idle_timeout(int *argc, char **argv, double *idle)
{
    int k = 0;
    for (int i = 0; i < *argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            while (i < *argc)
                argv[k++] = argv[i++];
            break;
        }
        const char *value = NULL;
        if (strcmp(arg, "--idle-timeout") == 0) {
            if (i + 1 >= *argc) {
                usage("%s", "--idle-timeout needs a DURATION (seconds, or with s, m, h or d: 90, 30m, 2h)");
                return -1;
            }
            value = argv[++i];
        } else if (strncmp(arg, "--idle-timeout=", 15) == 0) {
            value = arg + 15;
        } else {
            argv[k++] = argv[i];
            continue;
        }
        if (parse_duration(value, idle) < 0) {
            usage("--idle-timeout: '%s' is not a duration above 0 (seconds, or with s, m, h or d: 90, 30m, 2h)", value);
            return -1;
        }
    }
    *argc = k;
    return 0;
}

static int session_start(int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-') {
        if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
            help_session(stdout);
            return 0;
        }
        if (argc >= 1)
            return usage("cordon session start: the NAME comes first, then the options (got '%s'): cordon session "
                         "start NAME [--idle-timeout DURATION] [RUN OPTIONS]",
                         argv[0]);
        return usage("%s", "cordon session start needs a NAME: cordon session start NAME [RUN OPTIONS]");
    }
    const char *name = argv[0];
    double idle = 0; /* none: see help_session */
    int nopt = argc - 1;
    if (take_idle_timeout(&nopt, argv + 1, &idle) < 0)
        return CORDON_EXIT_SETUP;
    run_args a = {.pol = cordon_policy_new()};
    cordon_error err = {0};
    if (parse_run_args(nopt, argv + 1, &a, false, &err) < 0) {
        cli_print_error(&err);
        cordon_policy_free(a.pol);
        return CORDON_EXIT_SETUP;
    }
    if (a.help) {
        help_session(stdout);
        cordon_policy_free(a.pol);
        return 0;
    }
    if (a.command || a.status_json) {
        cordon_policy_free(a.pol);
        return usage("%s", a.command ? "cordon session start takes no command (start commands with "
                                       "`cordon session exec NAME -- COMMAND`)"
                                     : "--status-json is for a command: cordon session start takes none");
    }
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) < 0) {
        cordon_policy_free(a.pol);
        fprintf(stderr, "cordon: cannot make a pipe: %s\n", strerror(errno));
        return CORDON_EXIT_SETUP;
    }
    fflush(NULL);
    pid_t first = fork();
    if (first < 0) {
        fprintf(stderr, "cordon: cannot start the session's holder (fork): %s\n", strerror(errno));
        cordon_policy_free(a.pol);
        close(ready[0]);
        close(ready[1]);
        return CORDON_EXIT_SETUP;
    }
    if (first == 0) {
        close(ready[0]);
        run_holder(name, a.pol, idle, ready[1]); /* never returns */
    }
    close(ready[1]);
    cordon_policy_free(a.pol);
    /* (the first child only makes the holder and exits: the holder is nobody's child) */
    while (waitpid(first, NULL, 0) < 0 && errno == EINTR)
        ;
    char buf[2300];
    size_t have = 0;
    for (;;) {
        ssize_t n = read(ready[0], buf + have, sizeof buf - 1 - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0 || (have += (size_t)n) >= sizeof buf - 1)
            break;
    }
    close(ready[0]);
    if (have >= 1 && buf[0] == '\0') {
        buf[have] = '\0';
        fputs(buf + 1, stderr); /* the session's warnings */
        return 0;
    }
    buf[have] = '\0';
    if (have)
        fprintf(stderr, "%s\n", buf);
    else
        fprintf(stderr, "cordon: the session's holder died before the session was ready\n");
    return CORDON_EXIT_SETUP;
}

/* ------------------------------------------------------------------------------------ */
/* exec */

static cordon_proc *volatile forward_to;

static void forward_signal(int sig)
{
    int saved = errno;
    cordon_proc *c = forward_to;
    if (c)
        cordon_proc_kill(c, sig, NULL);
    errno = saved;
}

static void free_strings(char ***v)
{
    free(*v);
}

/* What `cordon session exec`'s options say. */
typedef struct exec_opts {
    cordon_session_cmd cmd;
    char **env; /* --env NAME=VALUE, n_env of them */
    size_t n_env;
    int tty;             /* -1: auto */
    const char *timeout; /* --timeout as given, or NULL */
} exec_opts;

/* The options of `cordon session exec NAME`, from argv[1] on, into O; *next gets where
 * the command starts.  -1 with *code when the parse ends here (an error, or --help). */
static int parse_exec_options(int argc, char **argv, exec_opts *o, int *next, int *code)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-')
            break;
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
#define IS(opt) (len == strlen(opt) && strncmp(arg, opt, len) == 0)
        /* the options with a value: told once, so that `value` is set wherever one is read */
        bool o_chdir = IS("--chdir"), o_env = IS("--env"), o_timeout = IS("--timeout");
        const char *value = "";
        if (o_chdir || o_env || o_timeout) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return *code = usage("%s needs a value", arg), -1;
        } else if (eq) {
            return *code = usage("%s takes no value", arg), -1;
        }
        if (o_chdir) {
            if (value[0] != '/')
                return *code = usage("--chdir: '%s' is not an absolute path", value), -1;
            o->cmd.cwd = value;
        } else if (o_env) {
            if (!strchr(value, '=') || value[0] == '=')
                return *code = usage("--env: '%s' is not NAME=VALUE", value), -1;
            o->env[o->n_env++] = (char *)value;
        } else if (o_timeout) {
            char *end;
            errno = 0;
            double t = strtod(value, &end);
            if (!*value || *end || errno || !(t > 0) || t > 1e9)
                return *code = usage("--timeout: '%s' is not a number of seconds above 0", value), -1;
            o->cmd.timeout = t;
            o->timeout = value;
        } else if (IS("--tty")) {
            o->tty = 1;
        } else if (IS("--no-tty")) {
            o->tty = 0;
        } else if (IS("--keep")) {
            o->cmd.keep = true;
        } else if (IS("--detach")) {
            o->cmd.detach = true;
        } else if (IS("--help") || IS("-h")) {
            help_session(stdout);
            return *code = 0, -1;
        } else {
            return *code = usage("unknown option '%s' for cordon session exec", arg), -1;
        }
#undef IS
    }
    *next = i;
    return 0;
}

static int session_exec(int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-') {
        if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
            help_session(stdout);
            return 0;
        }
        return usage("%s", "cordon session exec needs a NAME: cordon session exec NAME [OPTIONS] -- COMMAND");
    }
    const char *name = argv[0];
    cordon_session_cmd cmd = CORDON_SESSION_CMD_INIT;
    __attribute__((cleanup(free_strings))) char **env = calloc((size_t)argc + 1, sizeof *env);
    if (!env)
        return usage("%s", "out of memory");
    exec_opts o = {.cmd = cmd, .env = env, .tty = -1};
    int i, ended;
    if (parse_exec_options(argc, argv, &o, &i, &ended) < 0)
        return ended;
    cmd = o.cmd;
    size_t n_env = o.n_env;
    int tty = o.tty;
    const char *timeout = o.timeout;
    char cwd[4096];
    if (i >= argc)
        return usage("%s", "no command given: cordon session exec NAME [OPTIONS] -- COMMAND [ARG...]");
    char **command = &argv[i];
    if (!cmd.cwd) {
        if (!getcwd(cwd, sizeof cwd)) {
            fprintf(stderr, "cordon: cannot tell the current directory: %s (use --chdir DIR)\n", strerror(errno));
            return CORDON_EXIT_SETUP;
        }
        cmd.cwd = cwd;
    }
    if (n_env)
        cmd.env = env;
    if (cmd.detach && !cmd.keep)
        return usage("%s", "--detach needs --keep: a detached command stays in the session, and only a kept one does");
    if (cmd.detach && tty == 1)
        return usage("%s", "--detach takes no --tty: nobody is there to use the terminal");
    if (tty < 0)
        tty = !cmd.detach && isatty(0) && isatty(1);
    cmd.tty = tty;

    cordon_error err = {0};
    cordon_result res = {.size = sizeof res, .exit_code = CORDON_EXIT_SETUP, .status_code = -1};
    cordon_session *s;
    if (cordon_session_open(name, &s, &err) < 0) {
        cli_print_error(&err);
        return CORDON_EXIT_SETUP;
    }
    if (tty) {
        cli_tty_prepare(); /* the relay's handlers: as cordon run --tty (tty.c) */
    } else {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = forward_signal;
        sa.sa_flags = SA_RESTART;
        sigfillset(&sa.sa_mask);
        static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT};
        for (size_t k = 0; k < sizeof forwarded / sizeof forwarded[0]; k++)
            sigaction(forwarded[k], &sa, NULL);
    }
    cordon_proc *c;
    /* detached: its stdin, stdout and stderr are /dev/null (the library's) */
    unsigned flags = tty || cmd.detach ? 0 : CORDON_SPAWN_STDIN_INHERIT;
    if (cordon_session_spawn_cmd(s, command, flags, &cmd, &c, &err) < 0) {
        cli_print_error(&err);
        cordon_session_free(s);
        return CORDON_EXIT_SETUP;
    }
    forward_to = c;
    /* under a terminal, the relay waits for the end too (and ^Z stops this process with
     * the command: tty.c, follow_stop) */
    int w = tty ? cli_tty_relay(c, &res, &err) : cordon_proc_wait(c, -1, &res, &err);
    int code = CORDON_EXIT_SETUP;
    if (w < 0 || (!res.started && !res.timed_out)) {
        if (err.message[0])
            cli_print_error(&err);
    }
    if (res.timed_out)
        fprintf(stderr, "cordon: timed out after %s seconds; the command's processes were killed\n",
                timeout ? timeout : "the session's");
    cli_print_refusals(&res);
    code = res.exit_code;
    if (cmd.detach && res.pid > 0) {
        printf("%d\n", res.pid); /* its pid in the session: `cordon session exec NAME -- kill PID` */
        if (fflush(stdout) != 0)
            code = CORDON_EXIT_SETUP;
    }
    forward_to = NULL;
    cordon_result_free(&res);
    cordon_proc_free(c); /* the command and all it left are gone already: nothing to wait for */
    cordon_session_free(s);
    return code;
}

/* ------------------------------------------------------------------------------------ */
/* list, stop */

static int session_list(int argc, char **argv)
{
    bool as_json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            as_json = true;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help_session(stdout);
            return 0;
        } else
            return usage("unknown argument '%s' for cordon session list", argv[i]);
    }
    cordon_error err = {0};
    char *json;
    if (cordon_session_list(&json, &err) < 0) {
        cli_print_error(&err);
        return CORDON_EXIT_SETUP;
    }
    if (as_json) {
        printf("%s\n", json);
    } else {
        /* NAME, the holder's pid, since when: one line each */
        json_error_t jerr;
        json_t *doc = json_loads(json, 0, &jerr);
        size_t k;
        json_t *e;
        json_array_foreach(json_object_get(doc, "sessions"), k, e)
        {
            char when[64] = "?";
            time_t t = (time_t)json_integer_value(json_object_get(e, "started"));
            struct tm tm;
            if (localtime_r(&t, &tm))
                strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
            const char *name = json_string_value(json_object_get(e, "name"));
            printf("%-24s pid %-8lld since %s\n", name ? name : "?",
                   (long long)json_integer_value(json_object_get(e, "pid")), when);
        }
        json_decref(doc);
    }
    cordon_free(json);
    return 0;
}

static int session_stop(int argc, char **argv)
{
    if (argc != 1 || argv[0][0] == '-') {
        if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
            help_session(stdout);
            return 0;
        }
        return usage("%s", "cordon session stop takes one NAME");
    }
    cordon_error err = {0};
    if (cordon_session_stop(argv[0], &err) < 0) {
        cli_print_error(&err);
        return CORDON_EXIT_SETUP;
    }
    return 0;
}

int cmd_session(int argc, char **argv)
{
    if (argc < 1)
        return usage("%s", "cordon session needs a subcommand: start, exec, list or stop");
    const char *sub = argv[0];
    if (strcmp(sub, "start") == 0)
        return session_start(argc - 1, argv + 1);
    if (strcmp(sub, "exec") == 0)
        return session_exec(argc - 1, argv + 1);
    if (strcmp(sub, "list") == 0)
        return session_list(argc - 1, argv + 1);
    if (strcmp(sub, "stop") == 0)
        return session_stop(argc - 1, argv + 1);
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        help_session(stdout);
        return 0;
    }
    return usage("unknown session subcommand '%s' (start, exec, list, stop)", sub);
}
