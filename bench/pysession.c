// SPDX-License-Identifier: Apache-2.0
/* pysession: the C side of bench/python.sh.  Not part of the meson build: python.sh
 * compiles it against libcordon.so (the public header only).  Usage:
 *
 *   pysession RUNS
 *
 * Makes one session (no workspace, / as the working directory: the policy the Python
 * side uses), then RUNS times: cordon_session_spawn_cmd(true) with stdout piped and
 * stderr merged into it (what cordon.Session.run does), read to EOF, cordon_proc_wait,
 * cordon_proc_free; prints each command's time in microseconds, one per line
 * (CLOCK_MONOTONIC, from before the spawn to after the free).  Exit status 1 when a
 * command failed. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cordon.h"

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    int runs = argc > 1 ? atoi(argv[1]) : 100;
    cordon_error err = CORDON_ERROR_INIT;
    cordon_policy *p = cordon_policy_new();
    cordon_session *s = NULL;
    if (cordon_policy_set_workspace(p, NULL, &err) < 0 || cordon_policy_set_cwd(p, "/", &err) < 0 ||
        cordon_session_new(p, &s, &err) < 0) {
        fprintf(stderr, "pysession: %s\n", err.message);
        return 1;
    }
    char *const argv_true[] = {(char *)"true", NULL};
    char buf[65536];
    for (int i = 0; i < runs; i++) {
        double t0 = now_us();
        cordon_proc *c = NULL;
        cordon_result r = CORDON_RESULT_INIT;
        if (cordon_session_spawn_cmd(s, argv_true, CORDON_SPAWN_STDOUT_PIPE | CORDON_SPAWN_MERGE_STDERR, NULL, &c,
                                     &err) < 0) {
            fprintf(stderr, "pysession: %s\n", err.message);
            return 1;
        }
        while (read(cordon_proc_stdout(c), buf, sizeof buf) > 0)
            ;
        if (cordon_proc_wait(c, -1, &r, &err) < 0 || r.exit_code != 0) {
            fprintf(stderr, "pysession: exit %d: %s\n", r.exit_code, err.message);
            return 1;
        }
        cordon_result_free(&r);
        cordon_proc_free(c);
        printf("%.1f\n", now_us() - t0);
    }
    cordon_session_free(s);
    cordon_policy_free(p);
    return 0;
}
