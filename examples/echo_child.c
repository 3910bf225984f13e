// SPDX-License-Identifier: Apache-2.0
/* A long-lived child driven over stdio, as a harness drives a language server or an MCP
 * server: a line echo server started once in a sandbox, then sent requests line by line,
 * each answer read back before the next request; at the end its stdin is closed and it
 * is waited for.
 *
 *   cc echo_child.c $(pkg-config --cflags --libs cordon) -o echo_child
 *   ./echo_child [LINE...]          (default: three lines)
 *
 * Uses include/cordon.h only. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cordon.h>

static void die(const char *what, const cordon_error *err)
{
    char text[2048];
    cordon_error_text(err, text, sizeof text);
    fprintf(stderr, "echo_child: %s: %s\n", what, text);
    exit(1);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    cordon_error err = CORDON_ERROR_INIT;
    cordon_policy *p = cordon_policy_new();
    /* the server needs no files of ours: no workspace */
    if (cordon_policy_set_no_workspace(p, true, &err) < 0 || cordon_policy_set_cwd(p, "/", &err) < 0)
        die("policy", &err);
    /* the server: one answer per request line */
    char *server[] = {(char *)"sh", (char *)"-c", (char *)"while IFS= read -r l; do printf 'echo: %s\\n' \"$l\"; done",
                      NULL};
    cordon_proc *c;
    double t0 = now();
    if (cordon_spawn(p, server, CORDON_SPAWN_STDIN_PIPE | CORDON_SPAWN_STDOUT_PIPE, &c, &err) < 0)
        die("cannot start the server", &err);
    FILE *to = fdopen(dup(cordon_proc_stdin(c)), "w");
    FILE *from = fdopen(dup(cordon_proc_stdout(c)), "r");
    const char *defaults[] = {"hello", "from the harness", "bye"};
    int n = argc > 1 ? argc - 1 : 3;
    char answer[4096];
    for (int i = 0; i < n; i++) {
        const char *req = argc > 1 ? argv[i + 1] : defaults[i];
        double t = now();
        fprintf(to, "%s\n", req);
        fflush(to);
        if (!fgets(answer, sizeof answer, from)) {
            fprintf(stderr, "echo_child: the server went away\n");
            return 1;
        }
        printf("%s -> %s", req, answer);
        printf("   (round trip %.3f ms)\n", (now() - t) * 1000);
    }
    /* done: EOF on its stdin ends it (our dup and the library's descriptor both) */
    fclose(to);
    cordon_proc_close_stdin(c, NULL);
    cordon_result res = CORDON_RESULT_INIT;
    if (cordon_proc_wait(c, 5000, &res, &err) != 0) {
        fprintf(stderr, "echo_child: the server did not end within 5 s\n");
        return 1;
    }
    printf("server exited %d after %.1f ms\n", res.exit_code, (now() - t0) * 1000);
    fclose(from);
    cordon_proc_free(c);
    cordon_policy_free(p);
    return res.exit_code;
}
