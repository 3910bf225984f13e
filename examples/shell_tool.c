// SPDX-License-Identifier: Apache-2.0
/* A tiny shell tool, as an agent harness has one: each line read from stdin is a command
 * (run with sh -c) executed in a sandbox whose workspace is the current directory, its
 * output (stdout and stderr merged) streamed as it arrives, under a timeout.  Ctrl-C stops
 * the command that runs (the whole sandbox), not the tool.
 *
 *   cc shell_tool.c $(pkg-config --cflags --libs cordon) -o shell_tool
 *   ./shell_tool [--timeout SECONDS]        (default 30)
 *
 * Uses include/cordon.h only. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cordon.h>

/* What Ctrl-C stops.  The one global: a signal handler has no other way to reach it, and
 * cordon_proc_kill is async-signal-safe for exactly this. */
static cordon_proc *volatile running;

static void on_sigint(int sig)
{
    (void)sig;
    int saved = errno;
    cordon_proc *c = running;
    if (c)
        cordon_proc_kill(c, SIGKILL, NULL);
    errno = saved;
}

static void die(const char *what, const cordon_error *err)
{
    char text[2048];
    cordon_error_text(err, text, sizeof text);
    fprintf(stderr, "shell_tool: %s: %s\n", what, text);
    exit(1);
}

/* Copy the command's output to ours as it comes; EOF once the sandbox is gone. */
static void stream(int from)
{
    char buf[65536];
    for (;;) {
        ssize_t n = read(from, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        for (ssize_t off = 0; off < n;) {
            ssize_t w = write(STDOUT_FILENO, buf + off, (size_t)(n - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return;
            off += w;
        }
    }
}

int main(int argc, char **argv)
{
    double timeout = 30;
    if (argc == 3 && strcmp(argv[1], "--timeout") == 0)
        timeout = atof(argv[2]);
    else if (argc != 1) {
        fprintf(stderr, "usage: shell_tool [--timeout SECONDS]\n");
        return 2;
    }
    cordon_error err = CORDON_ERROR_INIT;
    cordon_policy *p = cordon_policy_new();
    if (cordon_policy_set_timeout(p, timeout, &err) < 0) /* workspace: the current directory */
        die("--timeout", &err);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);

    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        if (line[len - 1] == '\n')
            line[--len] = '\0';
        if (len == 0)
            continue;
        char *cmd[] = {(char *)"sh", (char *)"-c", line, NULL};
        cordon_proc *c;
        if (cordon_spawn(p, cmd, CORDON_SPAWN_STDOUT_PIPE | CORDON_SPAWN_MERGE_STDERR, &c, &err) < 0)
            die("cannot start the command", &err);
        running = c;
        stream(cordon_proc_stdout(c));
        cordon_result res = CORDON_RESULT_INIT;
        if (cordon_proc_wait(c, -1, &res, &err) < 0)
            die("wait", &err);
        running = NULL;
        if (res.timed_out)
            printf("[timed out after %g s]\n", timeout);
        else if (!res.started) {
            char text[2048];
            cordon_error_text(&err, text, sizeof text);
            printf("[could not run: %s]\n", text);
        } else if (res.signal == SIGKILL)
            printf("[stopped]\n");
        else if (res.signal)
            printf("[killed by signal %d]\n", res.signal);
        else
            printf("[exit %d]\n", res.exit_code);
        fflush(stdout);
        cordon_proc_free(c);
    }
    free(line);
    cordon_policy_free(p);
    return 0;
}
