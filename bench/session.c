// SPDX-License-Identifier: Apache-2.0
/* session: per-command latency in a session, against the references, in one run.
 *
 * Not part of the meson build: bench/session.sh compiles it against libcordon.so (the
 * public header only). Usage:
 *
 *   session -n RUNS -w WARMUP --name NAME --cordon PATH [--bwrap PATH]
 *
 * Each round runs, in a rotating order, once each:
 *   lib    cordon_session_spawn(true) + cordon_proc_wait + cordon_proc_free, in a session
 *          this process made (cordon_session_new, the policy of `--base host`)
 *   cli    fork + execve of `cordon session exec NAME -- true` (NAME: a session that
 *          session.sh started with `cordon session start NAME --base host`)
 *   run    fork + execve of `cordon run --base host -- true`
 *   bwrap  fork + execve of `bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all
 *          --die-with-parent --new-session true`
 *   true   fork + execve of /bin/true: a bare fork+exec of `true`
 * timed with CLOCK_MONOTONIC from just before the spawn to just after the wait (and the
 * free), stdin and stdout on /dev/null. Prints median, p10, p90 and the ratios the
 * targets are stated in. Exit status: 0 when every run exited 0 (timings never fail it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cordon.h"

extern char **environ;

enum { LIB, CLI, RUN, BWRAP, TRUE_, N_KINDS };
static const char *names[N_KINDS] = {"lib", "cli", "run", "bwrap", "true"};
static const char *what[N_KINDS] = {
    "cordon_session_spawn + wait of true", "cordon session exec NAME -- true",
    "cordon run --base host -- true",      "bwrap --ro-bind / / --dev /dev --proc /proc --unshare-all ... true",
    "bare fork+exec of /bin/true",
};

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* fork + execve, stdin and stdout on /dev/null; 0 when it exited 0 */
static int spawn_wait(char *const argv[])
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int dn = open("/dev/null", O_RDWR);
        dup2(dn, 0);
        dup2(dn, 1);
        execve(argv[0], argv, environ);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int lib_once(cordon_session *s)
{
    static char *const argv[] = {(char *)"true", NULL};
    cordon_error e = CORDON_ERROR_INIT;
    cordon_result r = CORDON_RESULT_INIT;
    cordon_proc *c;
    if (cordon_session_spawn(s, argv, 0, &c, &e) < 0) {
        fprintf(stderr, "session: cordon_session_spawn: %s\n", e.message);
        return -1;
    }
    int rc = cordon_proc_wait(c, -1, &r, &e) == 0 && r.exit_code == 0 ? 0 : -1;
    if (rc < 0)
        fprintf(stderr, "session: the command ended with %d: %s\n", r.exit_code, e.message);
    cordon_proc_free(c);
    return rc;
}

int main(int argc, char **argv)
{
    int runs = 200, warmup = 10;
    const char *name = NULL, *cordon = NULL, *bwrap = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-w") && i + 1 < argc)
            warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--name") && i + 1 < argc)
            name = argv[++i];
        else if (!strcmp(argv[i], "--cordon") && i + 1 < argc)
            cordon = argv[++i];
        else if (!strcmp(argv[i], "--bwrap") && i + 1 < argc)
            bwrap = argv[++i];
        else {
            fprintf(stderr, "usage: session -n RUNS -w WARMUP --name NAME --cordon PATH [--bwrap PATH]\n");
            return 2;
        }
    }
    if (!name || !cordon || runs < 1) {
        fprintf(stderr, "session: --name and --cordon are needed\n");
        return 2;
    }
    cordon_error e = CORDON_ERROR_INIT;
    cordon_policy *p = cordon_policy_new();
    cordon_session *s;
    if (cordon_policy_set_base(p, CORDON_BASE_HOST, &e) < 0 || cordon_session_new(p, &s, &e) < 0) {
        fprintf(stderr, "session: cordon_session_new: %s\n", e.message);
        return 1;
    }
    char *cli[] = {(char *)cordon, (char *)"session", (char *)"exec", (char *)name, (char *)"--", (char *)"true", NULL};
    char *run[] = {(char *)cordon, (char *)"run", (char *)"--base", (char *)"host", (char *)"--", (char *)"true", NULL};
    char *bw[] = {(char *)bwrap,
                  (char *)"--ro-bind",
                  (char *)"/",
                  (char *)"/",
                  (char *)"--dev",
                  (char *)"/dev",
                  (char *)"--proc",
                  (char *)"/proc",
                  (char *)"--unshare-all",
                  (char *)"--die-with-parent",
                  (char *)"--new-session",
                  (char *)"true",
                  NULL};
    char *tru[] = {(char *)"/bin/true", NULL};
    double *ms[N_KINDS];
    int n[N_KINDS] = {0}, failed[N_KINDS] = {0};
    for (int k = 0; k < N_KINDS; k++)
        ms[k] = calloc((size_t)runs, sizeof(double));
    bool have[N_KINDS] = {true, true, true, bwrap != NULL, true};
    for (int round = 0; round < warmup + runs; round++) {
        for (int j = 0; j < N_KINDS; j++) {
            int k = (round + j) % N_KINDS;
            if (!have[k])
                continue;
            double t0 = now_us();
            int rc = k == LIB ? lib_once(s) : spawn_wait(k == CLI ? cli : k == RUN ? run : k == BWRAP ? bw : tru);
            double dt = now_us() - t0;
            if (rc < 0) {
                failed[k]++;
                continue;
            }
            if (round >= warmup)
                ms[k][n[k]++] = dt / 1000.0;
        }
    }
    cordon_session_free(s);
    cordon_policy_free(p);
    double med[N_KINDS] = {0};
    printf("%-6s %-70s %9s %9s %9s %8s\n", "", "", "median ms", "p10 ms", "p90 ms", "÷ bwrap");
    for (int k = 0; k < N_KINDS; k++) {
        if (!have[k] || !n[k])
            continue;
        qsort(ms[k], (size_t)n[k], sizeof(double), cmp);
        med[k] = ms[k][n[k] / 2];
    }
    for (int k = 0; k < N_KINDS; k++) {
        if (!have[k] || !n[k])
            continue;
        char ratio[16] = "";
        if (have[BWRAP] && med[BWRAP] > 0)
            snprintf(ratio, sizeof ratio, "%.2f", med[k] / med[BWRAP]);
        printf("%-6s %-70s %9.3f %9.3f %9.3f %8s%s\n", names[k], what[k], med[k], ms[k][n[k] / 10],
               ms[k][(n[k] * 9) / 10], ratio, failed[k] ? "  (some runs failed)" : "");
    }
    printf("\n(%d runs each after %d warm-up rounds, alternating)\n", runs, warmup);
    printf("targets (never failing the run):\n");
    if (have[BWRAP])
        printf("  library form <= 0.25 x bubblewrap:       %.2f  %s\n", med[LIB] / med[BWRAP],
               med[LIB] <= 0.25 * med[BWRAP] ? "met" : "MISSED");
    printf("  library form <= 2 x bare fork+exec:      %.2f  %s\n", med[LIB] / med[TRUE_],
           med[LIB] <= 2 * med[TRUE_] ? "met" : "MISSED");
    if (have[BWRAP])
        printf("  CLI form <= 0.5 x bubblewrap:            %.2f  %s\n", med[CLI] / med[BWRAP],
               med[CLI] <= 0.5 * med[BWRAP] ? "met" : "MISSED");
    printf("  (and against cordon run: library %.2f, CLI %.2f)\n", med[LIB] / med[RUN], med[CLI] / med[RUN]);
    int bad = 0;
    for (int k = 0; k < N_KINDS; k++)
        bad += failed[k];
    return bad ? 1 : 0;
}
