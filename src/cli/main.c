// SPDX-License-Identifier: Apache-2.0
/* cordon: the command line, a thin layer over libcordon. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static void print_error(const cordon_error *err)
{
    cli_print_error(err);
}

/* Signals to cordon go to the command, as a terminal or a supervisor means them: the
 * library leaves signals to its caller, and this is the caller.  The handler's target is
 * the one piece of mutable global state in cordon, because a signal handler has no
 * other way to reach it. */
static cordon_proc *volatile forward_to;
static volatile sig_atomic_t forward_pending;

static void forward_signal(int sig)
{
    int saved = errno;
    cordon_proc *c = forward_to;
    if (c)
        cordon_proc_kill(c, sig, NULL);
    else
        forward_pending = sig; /* before the sandbox exists: sent once it does */
    errno = saved;
}

static const int forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};

static void forward_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = forward_signal;
    sa.sa_flags = SA_RESTART;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof forwarded / sizeof forwarded[0]; i++)
        sigaction(forwarded[i], &sa, NULL);
}

/* Run the command with cordon's own stdin, stdout and stderr, forwarding signals. */
static int run_forwarding(const cordon_policy *pol, char **command, cordon_result *res, cordon_error *err)
{
    cordon_proc *c;
    forward_signals();
    if (cordon_spawn(pol, command, CORDON_SPAWN_STDIN_INHERIT, &c, err) < 0)
        return -1;
    forward_to = c;
    if (forward_pending)
        cordon_proc_kill(c, forward_pending, NULL);
    int w = cordon_proc_wait(c, -1, res, err);
    /* cordon exits right after: the kernel reaps PID 1 then, and the janitors remove
     * what is left, without cordon waiting for the namespaces' teardown (cordon_proc_free
     * would, ~0.25 ms) */
    if (w < 0)
        return -1;
    return res->started || res->timed_out ? 0 : -1;
}

/* A closed 0, 1 or 2 would be reused by the next open() and leak into the sandbox as
 * a stdio stream: fill the gaps with /dev/null first. */
static int ensure_stdio(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        int n = open("/dev/null", O_RDWR);
        if (n < 0 || (n != fd && dup2(n, fd) < 0))
            return -1;
        if (n != fd)
            close(n);
    }
    return 0;
}

/* --status-json when the command line itself was wrong: at once. */
static void write_status(const char *file, const cordon_result *res, const cordon_error *setup_err)
{
    if (!file)
        return;
    cordon_error err = {0};
    if (cordon_write_status_json(file, res, setup_err, &err) < 0) {
        cli_wrap(&err, "--status-json");
        print_error(&err);
    }
}

/* Say which --limit-* the sandbox ran into, as far as cordon can tell. */
static void print_limits_hit(const cordon_result *res)
{
    if (res->limits && strcmp(res->limits, "rlimit") == 0)
        fputs("cordon: note: --limit-* were enforced with rlimits here, per process and weaker than a cgroup "
              "(no cgroup could be used: `cordon check` says why and how to get one)\n",
              stderr);
    if (res->limits_hit & (1u << CORDON_LIMIT_CPU))
        fputs("cordon: the command used up its CPU time (--limit-cpu) and was killed\n", stderr);
    if (res->limits_hit & (1u << CORDON_LIMIT_MEMORY))
        fputs("cordon: the sandbox reached its memory limit (--limit-memory); the kernel killed a process in it\n",
              stderr);
    if (res->limits_hit & (1u << CORDON_LIMIT_PIDS))
        fputs("cordon: the sandbox reached its process limit (--limit-pids); forks were refused\n", stderr);
}

/* Rules that change nothing: said, and the run goes on (README, "Warnings and messages"). */
static void print_warning(const char *message, void *ctx)
{
    (void)ctx;
    fprintf(stderr, "cordon: warning: %s\n", message);
}

static int cmd_run(int argc, char **argv, bool explain)
{
    run_args a = {.pol = cordon_policy_new(), .tty = -1, .explain = explain};
    cordon_error err = {0};
    cordon_result res = {.size = sizeof res, .exit_code = CORDON_EXIT_SETUP, .status_code = -1}; /* all of it */
    cordon_status_file *status = NULL;
    int code;
    cordon_policy_set_warning_handler(a.pol, print_warning, NULL, NULL);
    if (parse_run_args(argc, argv, &a, !explain, &err) < 0) {
        print_error(&err);
        write_status(a.status_json ? a.status_json : cordon_policy_settings_status_json(a.pol), &res, &err);
        code = CORDON_EXIT_SETUP;
    } else if (a.help) {
        help_run(stdout, explain ? "explain" : "run");
        code = 0;
    } else if (explain) {
        unsigned flags = (a.json ? CORDON_EXPLAIN_JSON : 0) | (a.verbose ? CORDON_EXPLAIN_VERBOSE : 0);
        char *text = NULL;
        if (cordon_explain(a.pol, a.command, flags, &text, &err) < 0) {
            print_error(&err);
            code = CORDON_EXIT_SETUP;
        } else {
            fputs(text, stdout);
            cordon_free(text);
            code = 0;
        }
    } else if ((a.status_json || (a.status_json = cordon_policy_settings_status_json(a.pol))) &&
               cordon_status_file_open(a.status_json, &status, &err) < 0) {
        /* checked before anything runs: a result that cannot be written is a setup failure */
        cli_wrap(&err, "--status-json");
        print_error(&err);
        code = CORDON_EXIT_SETUP;
    } else {
        int tty = a.tty >= 0 ? a.tty : cordon_policy_settings_tty(a.pol);
        int r = cli_tty_wanted(tty) ? cli_run_tty(a.pol, a.command, &res, &err)
                                    : run_forwarding(a.pol, a.command, &res, &err);
        if (r < 0)
            print_error(&err);
        if (res.isolation_why)
            fprintf(stderr,
                    "cordon: --isolation auto: user namespaces cannot be used here (%s); the command "
                    "ran under Landlock and seccomp only, without namespaces (see doc/security.md)\n",
                    res.isolation_why);
        else if (res.timed_out)
            fprintf(stderr, "cordon: timed out after %s seconds (--timeout); the sandbox was killed\n",
                    a.timeout ? a.timeout : "?");
        print_limits_hit(&res);
        cli_print_refusals(&res);
        code = res.exit_code;
        cordon_error serr = {0};
        if (status && cordon_status_file_write(status, &res, &err, &serr) < 0) {
            /* the command ran: cordon still exits with its status */
            cli_wrap(&serr, "warning: --status-json");
            print_error(&serr);
        }
        cordon_status_file_free(status);
    }
    cordon_result_free(&res);
    cordon_policy_free(a.pol);
    return code;
}

int main(int argc, char **argv)
{
    if (ensure_stdio() < 0) {
        /* (stderr itself may be what is missing: then nothing says it) */
        fprintf(stderr, "cordon: cannot open /dev/null for a closed standard stream: %s\n", strerror(errno));
        return CORDON_EXIT_SETUP;
    }
    /* Through a link named codex-linux-sandbox: Codex's sandbox helper (doc/codex.md). */
    if (cordon_codex_is_helper(argv[0]))
        return cordon_codex_main(argc, argv);
    /* Through a link named bwrap: bubblewrap's command line (doc/bwrap.md). */
    if (cordon_bwrap_is_name(argv[0]))
        return cordon_bwrap_main(argc, argv);
    if (argc < 2) {
        help_main(stderr);
        return CORDON_EXIT_SETUP;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2, false);
    if (strcmp(cmd, "explain") == 0)
        return cmd_run(argc - 2, argv + 2, true);
    if (strcmp(cmd, "bwrap") == 0)
        return cordon_bwrap_main(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 2, argv + 2);
    if (strcmp(cmd, "install-bwrap") == 0)
        return cmd_install_bwrap(argc - 2, argv + 2);
    if (strcmp(cmd, "workspace") == 0)
        return cmd_workspace(argc - 2, argv + 2);
    if (strcmp(cmd, "session") == 0)
        return cmd_session(argc - 2, argv + 2);
    if (strcmp(cmd, "help") == 0)
        return help_command(argc > 2 ? argv[2] : NULL, stdout);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        help_main(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("cordon %s\n", cordon_version());
        return 0;
    }
    fprintf(stderr,
            "cordon: unknown command '%s'; commands are run, explain, check, workspace, session, bwrap, install-bwrap, "
            "help\n",
            cmd);
    return CORDON_EXIT_SETUP;
}
