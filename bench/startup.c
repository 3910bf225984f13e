// SPDX-License-Identifier: Apache-2.0
/* startup: time how long commands take to start, run and exit.
 *
 * Not part of the meson build: bench/startup.sh compiles it with `cc -O2` into a
 * temporary directory. Usage:
 *
 *   startup [-n RUNS] [-w WARMUP] [--ref NAME] [--out FILE] [--timeout SECONDS]
 *           [--target-ratio NAME=MAX]... [--target-rss NAME=KIB]...
 *           --cmd NAME PROGRAM [ARG...] [--cmd NAME PROGRAM [ARG...]]...
 *
 * A command's words run up to the next `--cmd` or the end of the line (so a command
 * cannot itself contain the word `--cmd`). Every round runs each command once, the
 * starting command rotating from round to round, so that slow drift of the machine and
 * work a command leaves behind (namespace teardown is asynchronous in the kernel) fall
 * on all commands alike rather than on whichever comes next. Each run is fork + execve
 * of an absolute path (no shell, no PATH search in the timed window), timed with
 * CLOCK_MONOTONIC from just before fork to just after wait4, with stdin and stdout on
 * /dev/null and stderr kept in a memfd that is shown only when the run fails.
 *
 * Peak RSS is ru_maxrss from wait4: the largest resident set of the command or any
 * descendant it reaped. The kernel also counts what the child held as a fork of the
 * harness (execve records the old mm's high-water mark), so startup.sh links the harness
 * statically to keep that small, and the harness prints it as the floor under every RSS
 * figure.
 *
 * Exit status: 0 when every run of every command exited 0, whatever the timings;
 * 1 when a command failed (it is then dropped and the others go on); 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAX_CMDS    16
#define MAX_TARGETS 16

struct cmd {
    const char *name;
    char **argv; /* points into main's argv; argv[argc] is set to NULL */
    char *path;  /* argv[0] resolved against PATH once, before timing */
    int err_fd;  /* memfd that receives the command's stderr */
    double *ms;  /* wall time of each measured run */
    long *rss;   /* ru_maxrss (KiB) of each measured run */
    int done;    /* measured runs so far */
    int failed;
    double med, p10, p90;
    long rss_med, rss_max;
};

struct target {
    const char *name;
    double limit;
};

static volatile sig_atomic_t alarm_fired;

static void on_alarm(int sig)
{
    (void)sig;
    alarm_fired = 1;
}

static void usage(void)
{
    fprintf(stderr, "usage: startup [-n RUNS] [-w WARMUP] [--ref NAME] [--out FILE] [--timeout SECONDS]\n"
                    "               [--target-ratio NAME=MAX]... [--target-rss NAME=KIB]...\n"
                    "               --cmd NAME PROGRAM [ARG...] [--cmd NAME PROGRAM [ARG...]]...\n");
    exit(2);
}

static long parse_long(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0) {
        fprintf(stderr, "startup: %s: not a non-negative integer: %s\n", what, s);
        exit(2);
    }
    return v;
}

static void parse_target(const char *s, struct target *t, const char *what)
{
    const char *eq = strchr(s, '=');
    char *end;
    if (!eq || eq == s) {
        fprintf(stderr, "startup: %s wants NAME=VALUE, got %s\n", what, s);
        exit(2);
    }
    t->name = strndup(s, (size_t)(eq - s));
    t->limit = strtod(eq + 1, &end);
    if (end == eq + 1 || *end) {
        fprintf(stderr, "startup: %s: not a number: %s\n", what, eq + 1);
        exit(2);
    }
}

/* Names end up as JSON keys and in messages: keep them plain. */
static int valid_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '-' || *s == '.'))
            return 0;
    return 1;
}

static char *resolve(const char *prog)
{
    if (strchr(prog, '/'))
        return access(prog, X_OK) == 0 ? strdup(prog) : NULL;
    const char *p = getenv("PATH");
    if (!p)
        p = "/usr/bin:/bin";
    while (*p) {
        size_t n = strcspn(p, ":");
        char buf[4096];
        if (n > 0 && n + strlen(prog) + 2 <= sizeof buf) {
            snprintf(buf, sizeof buf, "%.*s/%s", (int)n, p, prog);
            struct stat st;
            if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
                return strdup(buf);
        }
        p += n;
        if (*p == ':')
            p++;
    }
    return NULL;
}

static void show_stderr(struct cmd *c)
{
    char buf[2048];
    ssize_t n = pread(c->err_fd, buf, sizeof buf - 1, 0);
    if (n <= 0) {
        fprintf(stderr, "startup: %s: (it wrote nothing to stderr)\n", c->name);
        return;
    }
    buf[n] = 0;
    fprintf(stderr, "startup: %s: its stderr:\n%s%s", c->name, buf, buf[n - 1] == '\n' ? "" : "\n");
}

/* One run of c. Returns 0 and fills *ms and *rss, or -1 after saying why it failed. */
static int run_once(struct cmd *c, int devnull, double timeout_s, double *ms, long *rss)
{
    struct timespec t0, t1;
    struct rusage ru;
    int status;

    if (ftruncate(c->err_fd, 0) < 0) {
        perror("startup: ftruncate");
        return -1;
    }
    alarm_fired = 0;
    alarm((unsigned)timeout_s);

    clock_gettime(CLOCK_MONOTONIC, &t0);
    pid_t pid = fork();
    if (pid < 0) {
        alarm(0);
        perror("startup: fork");
        return -1;
    }
    if (pid == 0) {
        /* The memfd is O_APPEND, so the shared offset never matters. */
        if (dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(c->err_fd, 2) < 0)
            _exit(126);
        execve(c->path, c->argv, environ);
        dprintf(2, "execve %s: %s\n", c->path, strerror(errno));
        _exit(127);
    }
    pid_t r;
    int timed_out = 0;
    while ((r = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR) {
        if (alarm_fired) {
            kill(pid, SIGKILL);
            alarm_fired = 0;
            timed_out = 1;
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    alarm(0);
    if (r < 0) {
        perror("startup: wait4");
        return -1;
    }

    *ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    *rss = ru.ru_maxrss;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;

    fprintf(stderr, "startup: %s failed: ", c->name);
    if (WIFEXITED(status))
        fprintf(stderr, "exit status %d", WEXITSTATUS(status));
    else if (timed_out)
        fprintf(stderr, "killed after the %.0f s timeout", timeout_s);
    else
        fprintf(stderr, "killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    fprintf(stderr, "\nstartup: %s: command was:", c->name);
    for (char **a = c->argv; *a; a++)
        fprintf(stderr, " %s", *a);
    fputc('\n', stderr);
    show_stderr(c);
    return -1;
}

/* What a forked child of the harness counts before it runs anything: fork copies the page
 * tables of the harness's touched anonymous memory, and execve records that high-water
 * mark. (Not the harness's VmHWM: file-backed pages are not copied at fork.) */
static long fork_floor_kib(void)
{
    struct rusage ru;
    int status;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0)
        _exit(0);
    if (wait4(pid, &status, 0, &ru) < 0)
        return -1;
    return ru.ru_maxrss;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Percentile q (0..1) of sorted v[0..n-1], linear between closest ranks. */
static double pct(const double *v, int n, double q)
{
    double pos = q * (n - 1);
    int i = (int)pos;
    if (i + 1 >= n)
        return v[n - 1];
    return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

static void summarise(struct cmd *c)
{
    int n = c->done;
    if (n == 0)
        return;
    qsort(c->ms, (size_t)n, sizeof *c->ms, cmp_double);
    qsort(c->rss, (size_t)n, sizeof *c->rss, cmp_long);
    c->med = pct(c->ms, n, 0.5);
    c->p10 = pct(c->ms, n, 0.1);
    c->p90 = pct(c->ms, n, 0.9);
    c->rss_med = n % 2 ? c->rss[n / 2] : (c->rss[n / 2 - 1] + c->rss[n / 2]) / 2;
    c->rss_max = c->rss[n - 1];
}

static struct cmd *find(struct cmd *cmds, int ncmds, const char *name)
{
    for (int i = 0; i < ncmds; i++)
        if (strcmp(cmds[i].name, name) == 0)
            return &cmds[i];
    return NULL;
}

int main(int argc, char **argv)
{
    static struct cmd cmds[MAX_CMDS];
    static struct target ratio_t[MAX_TARGETS], rss_t[MAX_TARGETS];
    int ncmds = 0, nratio = 0, nrss = 0;
    long runs = 60, warmup = 3;
    double timeout_s = 30;
    const char *ref = NULL, *out = NULL;

    int i = 1;
    for (; i < argc && strcmp(argv[i], "--cmd") != 0; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v)
            usage();
        if (!strcmp(a, "-n") || !strcmp(a, "--runs"))
            runs = parse_long(v, a);
        else if (!strcmp(a, "-w") || !strcmp(a, "--warmup"))
            warmup = parse_long(v, a);
        else if (!strcmp(a, "--timeout"))
            timeout_s = (double)parse_long(v, a);
        else if (!strcmp(a, "--ref"))
            ref = v;
        else if (!strcmp(a, "--out"))
            out = v;
        else if (!strcmp(a, "--target-ratio") && nratio < MAX_TARGETS)
            parse_target(v, &ratio_t[nratio++], a);
        else if (!strcmp(a, "--target-rss") && nrss < MAX_TARGETS)
            parse_target(v, &rss_t[nrss++], a);
        else
            usage();
        i++;
    }
    /* Find where every command starts before cutting argv into pieces: each "--cmd"
   * after the first becomes the NULL that ends the command before it. */
    int starts[MAX_CMDS];
    for (int j = i; j < argc; j++) {
        if (strcmp(argv[j], "--cmd") != 0)
            continue;
        if (ncmds == MAX_CMDS) {
            fprintf(stderr, "startup: at most %d commands\n", MAX_CMDS);
            return 2;
        }
        starts[ncmds++] = j;
    }
    for (int k = 0; k < ncmds; k++) {
        int s = starts[k], e = k + 1 < ncmds ? starts[k + 1] : argc;
        if (e - s < 3)
            usage(); /* --cmd NAME PROGRAM at least */
        struct cmd *c = &cmds[k];
        c->name = argv[s + 1];
        c->argv = &argv[s + 2];
        if (!valid_name(c->name)) {
            fprintf(stderr, "startup: command name must be [A-Za-z0-9_.-]+: %s\n", c->name);
            return 2;
        }
        if (find(cmds, k, c->name)) {
            fprintf(stderr, "startup: two commands named %s\n", c->name);
            return 2;
        }
    }
    for (int k = 1; k < ncmds; k++)
        argv[starts[k]] = NULL; /* argv[argc] is NULL already */
    for (int k = 0; k < ncmds; k++) {
        struct cmd *c = &cmds[k];
        c->path = resolve(c->argv[0]);
        if (!c->path) {
            fprintf(stderr, "startup: %s: cannot find an executable %s\n", c->name, c->argv[0]);
            return 1;
        }
    }
    if (ncmds == 0 || runs < 1)
        usage();
    if (ref && !find(cmds, ncmds, ref)) {
        fprintf(stderr, "startup: --ref %s names no command\n", ref);
        return 2;
    }
    for (int t = 0; t < nratio; t++)
        if (!find(cmds, ncmds, ratio_t[t].name)) {
            fprintf(stderr, "startup: --target-ratio %s names no command\n", ratio_t[t].name);
            return 2;
        }
    for (int t = 0; t < nrss; t++)
        if (!find(cmds, ncmds, rss_t[t].name)) {
            fprintf(stderr, "startup: --target-rss %s names no command\n", rss_t[t].name);
            return 2;
        }

    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull < 0) {
        perror("startup: /dev/null");
        return 1;
    }
    for (int k = 0; k < ncmds; k++) {
        struct cmd *c = &cmds[k];
        int fd = memfd_create("stderr", MFD_CLOEXEC);
        if (fd < 0) {
            perror("startup: memfd_create");
            return 1;
        }
        /* O_APPEND: the child's writes land after whatever is there, and the parent's
     * ftruncate to 0 between runs starts it afresh, whatever the shared offset. */
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl | O_APPEND) < 0) {
            perror("startup: fcntl");
            return 1;
        }
        c->err_fd = fd;
        c->ms = calloc((size_t)runs, sizeof *c->ms);
        c->rss = calloc((size_t)runs, sizeof *c->rss);
        if (!c->ms || !c->rss) {
            perror("startup: calloc");
            return 1;
        }
    }

    struct sigaction sa = {.sa_handler = on_alarm};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL); /* no SA_RESTART: wait4 must return EINTR */

    fprintf(stderr, "startup: %ld warm-up + %ld measured runs of each of %d commands, alternating\n", warmup, runs,
            ncmds);
    for (long round = 0; round < warmup + runs; round++) {
        for (int k = 0; k < ncmds; k++) {
            struct cmd *c = &cmds[(k + round) % ncmds];
            if (c->failed)
                continue;
            double ms;
            long rss;
            if (run_once(c, devnull, timeout_s, &ms, &rss) < 0) {
                c->failed = 1;
                fprintf(stderr, "startup: %s: dropped from the benchmark\n", c->name);
                continue;
            }
            if (round >= warmup) {
                c->ms[c->done] = ms;
                c->rss[c->done] = rss;
                c->done++;
            }
        }
    }

    long harness_kib = fork_floor_kib();

    struct cmd *rc = ref ? find(cmds, ncmds, ref) : NULL;
    if (rc && (rc->failed || rc->done == 0))
        rc = NULL;
    int any_failed = 0;
    for (int k = 0; k < ncmds; k++) {
        summarise(&cmds[k]);
        any_failed |= cmds[k].failed;
    }

    printf("%-12s %5s %10s %10s %10s %12s %10s\n", "command", "runs", "median ms", "p10 ms", "p90 ms", "max RSS KiB",
           rc ? "ratio" : "");
    for (int k = 0; k < ncmds; k++) {
        struct cmd *c = &cmds[k];
        if (c->failed) {
            printf("%-12s FAILED (see above)\n", c->name);
            continue;
        }
        printf("%-12s %5d %10.3f %10.3f %10.3f %12ld", c->name, c->done, c->med, c->p10, c->p90, c->rss_med);
        if (rc)
            printf(" %10.2f", c->med / rc->med);
        putchar('\n');
    }
    putchar('\n');
    if (rc)
        printf("ratio = median / median of %s; ", rc->name);
    printf("max RSS = median over runs of ru_maxrss\n"
           "(the command and every descendant it reaped; never below the %ld KiB a child of\n"
           " this harness holds right after fork)\n",
           harness_kib);
    if (nratio || nrss)
        putchar('\n');
    for (int t = 0; t < nratio; t++) {
        struct cmd *c = find(cmds, ncmds, ratio_t[t].name);
        if (c->failed || !rc)
            printf("%s/%s median ratio: n/a (target <= %.2f)\n", c->name, ref ? ref : "?", ratio_t[t].limit);
        else
            printf("%s/%s median ratio: %.2f (target <= %.2f)\n", c->name, rc->name, c->med / rc->med,
                   ratio_t[t].limit);
    }
    for (int t = 0; t < nrss; t++) {
        struct cmd *c = find(cmds, ncmds, rss_t[t].name);
        if (c->failed)
            printf("%s peak RSS: n/a (target <= %.0f KiB)\n", c->name, rss_t[t].limit);
        else
            printf("%s peak RSS: %ld KiB (target <= %.0f KiB)\n", c->name, c->rss_med, rss_t[t].limit);
    }
    fflush(stdout);

    if (out) {
        FILE *f = fopen(out, "w");
        if (!f) {
            fprintf(stderr, "startup: %s: %s\n", out, strerror(errno));
            return 1;
        }
        fprintf(f, "{\n  \"runs\": %ld,\n  \"warmup\": %ld,\n  \"reference\": ", runs, warmup);
        if (rc)
            fprintf(f, "\"%s\",\n", rc->name);
        else
            fprintf(f, "null,\n");
        fprintf(f, "  \"harness_rss_kib\": %ld,\n  \"commands\": {\n", harness_kib);
        for (int k = 0; k < ncmds; k++) {
            struct cmd *c = &cmds[k];
            fprintf(f, "    \"%s\": {\"ok\": %s, \"runs\": %d", c->name, c->failed ? "false" : "true", c->done);
            if (!c->failed)
                fprintf(f,
                        ", \"median_ms\": %.4f, \"p10_ms\": %.4f, \"p90_ms\": %.4f, "
                        "\"rss_median_kib\": %ld, \"rss_max_kib\": %ld",
                        c->med, c->p10, c->p90, c->rss_med, c->rss_max);
            if (!c->failed && rc)
                fprintf(f, ", \"ratio\": %.4f", c->med / rc->med);
            fprintf(f, "}%s\n", k + 1 < ncmds ? "," : "");
        }
        fprintf(f, "  },\n  \"targets\": [");
        int first = 1;
        for (int t = 0; t < nratio; t++) {
            struct cmd *c = find(cmds, ncmds, ratio_t[t].name);
            int ok = !c->failed && rc;
            fprintf(f,
                    "%s\n    {\"what\": \"ratio\", \"command\": \"%s\", \"limit\": %.4f, \"value\": ", first ? "" : ",",
                    c->name, ratio_t[t].limit);
            if (ok)
                fprintf(f, "%.4f, \"met\": %s}", c->med / rc->med,
                        c->med / rc->med <= ratio_t[t].limit ? "true" : "false");
            else
                fprintf(f, "null, \"met\": false}");
            first = 0;
        }
        for (int t = 0; t < nrss; t++) {
            struct cmd *c = find(cmds, ncmds, rss_t[t].name);
            fprintf(f, "%s\n    {\"what\": \"rss_kib\", \"command\": \"%s\", \"limit\": %.0f, \"value\": ",
                    first ? "" : ",", c->name, rss_t[t].limit);
            if (!c->failed)
                fprintf(f, "%ld, \"met\": %s}", c->rss_med, c->rss_med <= rss_t[t].limit ? "true" : "false");
            else
                fprintf(f, "null, \"met\": false}");
            first = 0;
        }
        fprintf(f, "%s]\n}\n", first ? "" : "\n  ");
        if (fclose(f) != 0) {
            fprintf(stderr, "startup: %s: %s\n", out, strerror(errno));
            return 1;
        }
    }
    return any_failed ? 1 : 0;
}
