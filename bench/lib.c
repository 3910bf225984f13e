// SPDX-License-Identifier: Apache-2.0
/* lib: libcordon against posix_spawn, in the same run (issue 10's benchmark).
 *
 *   throughput  cordon_run_output of `head -c SIZE /dev/zero` (stdout and stderr merged,
 *               delivered to a callback that counts them) against posix_spawn of the same
 *               command with stdout on a plain pipe read in 64 KiB blocks; MiB/s per run,
 *               medians, and the ratio (target: at least 0.9)
 *   latency     spawn-to-first-byte: from the call that starts `echo x` to the first byte
 *               read from its stdout pipe, cordon_spawn against posix_spawn
 * Rounds alternate the two (the one that goes first alternating too), so that drift of a
 * busy machine falls on both alike.  Built by bench/lib.sh; not part of the meson build.
 *
 *   lib [--size BYTES] [--rounds N] [--latency-rounds N] [--out FILE]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cordon.h>

extern char **environ;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    int i = (int)(p * (n - 1) + 0.5);
    return v[i];
}

static void die_err(const char *what, const cordon_error *e)
{
    char text[2048];
    cordon_error_text(e, text, sizeof text);
    fprintf(stderr, "lib: %s: %s\n", what, text);
    exit(1);
}

static int count(const char *data, size_t len, void *ctx)
{
    (void)data;
    *(unsigned long long *)ctx += len;
    return 0;
}

/* posix_spawn argv with stdout on a new pipe (of pipe_size bytes, 0: the default);
 * returns the read end. */
static int spawn_piped(char *const argv[], pid_t *pid, int pipe_size)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -1;
    if (pipe_size)
        (void)fcntl(p[1], F_SETPIPE_SZ, pipe_size);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    int r = posix_spawnp(pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    if (r != 0) {
        close(p[0]);
        errno = r;
        return -1;
    }
    return p[0];
}

static double run_cordon_throughput(cordon_policy *p, char *const argv[], unsigned long long size)
{
    unsigned long long got = 0;
    cordon_result res = CORDON_RESULT_INIT;
    cordon_error err = CORDON_ERROR_INIT;
    double t0 = now();
    if (cordon_run_output(p, argv, count, &got, &res, &err) < 0)
        die_err("cordon_run_output", &err);
    double t = now() - t0;
    if (got != size || res.exit_code != 0) {
        fprintf(stderr, "lib: cordon_run_output got %llu bytes of %llu, exit %d\n", got, size, res.exit_code);
        exit(1);
    }
    return (double)size / (1 << 20) / t;
}

static double run_spawn_throughput(char *const argv[], unsigned long long size, int pipe_size)
{
    static char buf[65536];
    double t0 = now();
    pid_t pid;
    int fd = spawn_piped(argv, &pid, pipe_size);
    if (fd < 0) {
        perror("lib: posix_spawn");
        exit(1);
    }
    unsigned long long got = 0;
    for (;;) {
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (unsigned long long)n;
    }
    close(fd);
    int st;
    waitpid(pid, &st, 0);
    double t = now() - t0;
    if (got != size || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "lib: posix_spawn got %llu bytes of %llu\n", got, size);
        exit(1);
    }
    return (double)size / (1 << 20) / t;
}

static double cordon_first_byte(cordon_policy *p, char *const argv[])
{
    cordon_proc *c;
    cordon_error err = CORDON_ERROR_INIT;
    char b;
    double t0 = now();
    if (cordon_spawn(p, argv, CORDON_SPAWN_STDOUT_PIPE, &c, &err) < 0)
        die_err("cordon_spawn", &err);
    ssize_t n;
    while ((n = read(cordon_proc_stdout(c), &b, 1)) < 0 && errno == EINTR)
        ;
    double t = now() - t0;
    if (n != 1) {
        fprintf(stderr, "lib: no first byte from the sandbox\n");
        exit(1);
    }
    cordon_proc_wait(c, -1, NULL, NULL);
    cordon_proc_free(c);
    return t * 1000;
}

static double spawn_first_byte(char *const argv[])
{
    char b;
    double t0 = now();
    pid_t pid;
    int fd = spawn_piped(argv, &pid, 0);
    if (fd < 0) {
        perror("lib: posix_spawn");
        exit(1);
    }
    ssize_t n;
    while ((n = read(fd, &b, 1)) < 0 && errno == EINTR)
        ;
    double t = now() - t0;
    close(fd);
    waitpid(pid, NULL, 0);
    if (n != 1) {
        fprintf(stderr, "lib: no first byte from posix_spawn\n");
        exit(1);
    }
    return t * 1000;
}

int main(int argc, char **argv)
{
    unsigned long long size = 1ULL << 30;
    int rounds = 5, lat_rounds = 100;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc)
            size = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--latency-rounds") == 0 && i + 1 < argc)
            lat_rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else {
            fprintf(stderr, "usage: lib [--size BYTES] [--rounds N] [--latency-rounds N] [--out FILE]\n");
            return 2;
        }
    }
    if (rounds < 1 || lat_rounds < 1 || size == 0)
        return 2;
    cordon_error err = CORDON_ERROR_INIT;
    cordon_policy *p = cordon_policy_new();
    if (cordon_policy_set_no_workspace(p, true, &err) < 0 || cordon_policy_set_cwd(p, "/", &err) < 0)
        die_err("policy", &err);
    char sz[32];
    snprintf(sz, sizeof sz, "%llu", size);
    char *head[] = {(char *)"head", (char *)"-c", sz, (char *)"/dev/zero", NULL};
    char *echo[] = {(char *)"echo", (char *)"x", NULL};

    double *tc = calloc((size_t)rounds, sizeof *tc), *ts = calloc((size_t)rounds, sizeof *ts);
    double *tb = calloc((size_t)rounds, sizeof *tb);
    /* a warm-up of each, not counted */
    run_cordon_throughput(p, head, size);
    run_spawn_throughput(head, size, 0);
    for (int i = 0; i < rounds; i++) {
        /* the order rotates from round to round */
        for (int k = 0; k < 3; k++) {
            switch ((i + k) % 3) {
            case 0: tc[i] = run_cordon_throughput(p, head, size); break;
            case 1: ts[i] = run_spawn_throughput(head, size, 0); break;
            case 2: tb[i] = run_spawn_throughput(head, size, 1 << 20); break;
            }
        }
    }
    double mc = pct(tc, rounds, 0.5), ms = pct(ts, rounds, 0.5), mb = pct(tb, rounds, 0.5);
    printf("throughput of `head -c %llu /dev/zero`, %d rounds (MiB/s):\n", size, rounds);
    printf("  %-44s median %8.1f  min %8.1f  max %8.1f\n", "cordon_run_output (merged, to a callback)", mc, tc[0],
           tc[rounds - 1]);
    printf("  %-44s median %8.1f  min %8.1f  max %8.1f\n", "posix_spawn, stdout on a plain pipe", ms, ts[0],
           ts[rounds - 1]);
    printf("  %-44s median %8.1f  min %8.1f  max %8.1f\n", "posix_spawn, a 1 MiB pipe (as cordon's)", mb, tb[0],
           tb[rounds - 1]);
    printf("  ratio %.2f against the plain pipe (target: at least 0.90), %.2f against the 1 MiB one\n\n", mc / ms,
           mc / mb);

    double *lc = calloc((size_t)lat_rounds, sizeof *lc), *ls = calloc((size_t)lat_rounds, sizeof *ls);
    cordon_first_byte(p, echo);
    spawn_first_byte(echo);
    for (int i = 0; i < lat_rounds; i++) {
        if (i % 2 == 0) {
            lc[i] = cordon_first_byte(p, echo);
            ls[i] = spawn_first_byte(echo);
        } else {
            ls[i] = spawn_first_byte(echo);
            lc[i] = cordon_first_byte(p, echo);
        }
    }
    double lc50 = pct(lc, lat_rounds, 0.5), lc10 = pct(lc, lat_rounds, 0.1), lc90 = pct(lc, lat_rounds, 0.9);
    double ls50 = pct(ls, lat_rounds, 0.5), ls10 = pct(ls, lat_rounds, 0.1), ls90 = pct(ls, lat_rounds, 0.9);
    printf("spawn to first byte of `echo x`, %d rounds (ms):\n", lat_rounds);
    printf("  %-44s median %7.3f  p10 %7.3f  p90 %7.3f\n", "cordon_spawn", lc50, lc10, lc90);
    printf("  %-44s median %7.3f  p10 %7.3f  p90 %7.3f\n", "posix_spawn", ls50, ls10, ls90);
    printf("  ratio %.1f (cordon / posix_spawn)\n", lc50 / ls50);
    if (out) {
        FILE *f = fopen(out, "w");
        if (f) {
            fprintf(f,
                    "{\"size\": %llu, \"throughput_mib_s\": {\"cordon_run_output\": %.1f, \"posix_spawn\": %.1f, "
                    "\"posix_spawn_1mib_pipe\": %.1f, \"ratio\": %.3f}, \"first_byte_ms\": {\"cordon_spawn\": %.3f, "
                    "\"posix_spawn\": %.3f, \"ratio\": %.2f}}\n",
                    size, mc, ms, mb, mc / ms, lc50, ls50, lc50 / ls50);
            fclose(f);
        }
    }
    cordon_policy_free(p);
    free(tc);
    free(ts);
    free(tb);
    free(lc);
    free(ls);
    return 0;
}
