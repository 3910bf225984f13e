// SPDX-License-Identifier: Apache-2.0
/* A library that leaves its caller alone, under load (issue 10): 1,000 sequential and 64
 * concurrent runs from one process with no descriptor, child or zombie left (memory: the
 * ASan pass runs this under LeakSanitizer); the caller's SIGCHLD handler, waitpid(-1),
 * signal mask and handlers untouched; one run's pipes never held by another's sandbox;
 * a run outlives the thread that spawned it but not the process; and how long an abort
 * takes, from another thread and from a signal handler (printed as TAP comments). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cordon.h"
#include "libtest.h"

#define SH(script) ((char *[]){(char *)"sh", (char *)"-c", (char *)(script), NULL})

static int run_echo(cordon_policy *p, const char *word, collected *c)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "echo %s", word);
    cordon_result r = {0};
    cordon_error e = {0};
    if (cordon_run_output(p, SH(cmd), collect, c, &r, &e) < 0 || r.exit_code != 0)
        return -1;
    char want[128];
    snprintf(want, sizeof want, "%s\n", word);
    return strcmp(output(c), want) == 0 ? 0 : -1;
}

static void test_sequential_1000(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(30);
    int fds = count_fds(), children = count_children();
    long long t0 = mono_ms();
    int failed = 0;
    for (int i = 0; i < 1000; i++) {
        collected c = {0};
        char word[32];
        snprintf(word, sizeof word, "run%d", i);
        if (run_echo(p, word, &c) < 0)
            failed++;
        collected_free(&c);
    }
    printf("# 1000 sequential cordon_run_output runs in %lld ms, %d failed\n", mono_ms() - t0, failed);
    assert_int_equal(failed, 0);
    assert_int_equal(count_fds(), fds);
    assert_int_equal(count_children(), children);
    cordon_policy_free(p);
}

typedef struct job {
    cordon_policy *p; /* shared: a const policy may be used from many threads */
    int index;
    int ok;
} job;

static void *concurrent_one(void *arg)
{
    job *j = arg;
    collected c = {0};
    char word[32];
    snprintf(word, sizeof word, "thread%d", j->index);
    j->ok = run_echo(j->p, word, &c) == 0;
    collected_free(&c);
    return NULL;
}

static void test_concurrent_64(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(60);
    int fds = count_fds(), children = count_children();
    pthread_t t[64];
    job jobs[64];
    long long t0 = mono_ms();
    for (int i = 0; i < 64; i++) {
        jobs[i] = (job){.p = p, .index = i};
        assert_int_equal(pthread_create(&t[i], NULL, concurrent_one, &jobs[i]), 0);
    }
    int ok = 0;
    for (int i = 0; i < 64; i++) {
        pthread_join(t[i], NULL);
        ok += jobs[i].ok;
    }
    printf("# 64 concurrent runs from 64 threads in %lld ms, %d succeeded\n", mono_ms() - t0, ok);
    assert_int_equal(ok, 64);
    assert_int_equal(count_fds(), fds);
    assert_int_equal(count_children(), children);
    cordon_policy_free(p);
}

/* ---- the caller's signals ------------------------------------------------------------- */

static volatile sig_atomic_t chld_count;
static volatile pid_t chld_last;

static void on_chld(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    chld_count++;
    chld_last = si->si_pid;
}

/* A SIGCHLD handler of the caller sees its own children and only those; waitpid(-1)
 * reaps them and nothing of cordon's. */
static void test_sigchld_handler(void **state)
{
    (void)state;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_chld;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGCHLD, &sa, &old), 0);
    chld_count = 0;
    cordon_policy *p = test_policy(30);
    cordon_result r = {0};
    cordon_error e = {0};
    /* cordon's runs and a spawned child, waited for and not */
    for (int i = 0; i < 5; i++)
        assert_int_equal(cordon_run(p, (char *[]){(char *)"true", NULL}, &r, &e), 0);
    cordon_proc *c;
    assert_int_equal(cordon_spawn(p, (char *[]){(char *)"true", NULL}, 0, &c, &e), 0);
    usleep(200000);
    assert_int_equal(chld_count, 0);
    /* nothing of cordon's is there for waitpid(-1) to take */
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);
    /* our own child: the handler sees it, waitpid(-1) reaps it */
    pid_t own = fork();
    if (own == 0)
        _exit(3);
    int status;
    pid_t w;
    while ((w = waitpid(-1, &status, 0)) < 0 && errno == EINTR)
        ;
    assert_int_equal(w, own);
    assert_int_equal(WEXITSTATUS(status), 3);
    for (int i = 0; i < 100 && chld_count == 0; i++)
        usleep(1000);
    assert_int_equal(chld_count, 1);
    assert_int_equal(chld_last, own);
    /* cordon's own child is still cordon's: its result is intact */
    assert_int_equal(cordon_proc_wait(c, -1, &r, &e), 0);
    assert_int_equal(r.exit_code, 0);
    cordon_proc_free(c);
    assert_int_equal(chld_count, 1);
    sigaction(SIGCHLD, &old, NULL);
    cordon_policy_free(p);
}

/* SIGCHLD ignored by the caller (children reaped automatically) does not take cordon's
 * PID 1 away: the result is still the command's. */
static void test_sigchld_ignored(void **state)
{
    (void)state;
    struct sigaction ign, old;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    assert_int_equal(sigaction(SIGCHLD, &ign, &old), 0);
    cordon_policy *p = test_policy(30);
    cordon_result r = {0};
    cordon_error e = {0};
    assert_int_equal(cordon_run(p, SH("sh -c 'exit 5' & wait $!; exit $?"), &r, &e), 0);
    assert_int_equal(r.exit_code, 5);
    sigaction(SIGCHLD, &old, NULL);
    cordon_policy_free(p);
}

static void on_usr1(int sig)
{
    (void)sig;
}

static volatile sig_atomic_t usr2_count;

static void on_usr2(int sig)
{
    (void)sig;
    usr2_count++;
}

/* The calling thread's mask, every handler and the pending set are as they were. */
static void test_signals_untouched(void **state)
{
    (void)state;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_usr2; /* so that a failed assertion (its longjmp restores the mask) is not fatal */
    sigaction(SIGUSR2, &sa, NULL);
    usr2_count = 0;
    sigset_t mask, before_mask, after_mask, pending;
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR2);
    sigaddset(&mask, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &mask, &before_mask);
    pthread_sigmask(SIG_BLOCK, NULL, &before_mask);
    struct sigaction before[NSIG];
    bool known[NSIG]; /* glibc keeps a few (SIGCANCEL, SIGSETXID) to itself: EINVAL */
    for (int s = 1; s < NSIG; s++)
        known[s] = sigaction(s, NULL, &before[s]) == 0;
    /* a pending signal of the caller's must still be pending afterwards */
    raise(SIGUSR2);
    cordon_policy *p = test_policy(30);
    cordon_result r = {0};
    cordon_error e = {0};
    collected c = {0};
    assert_int_equal(cordon_run(p, (char *[]){(char *)"true", NULL}, &r, &e), 0);
    assert_int_equal(cordon_run_output(p, SH("echo x"), collect, &c, &r, &e), 0);
    cordon_proc *pr;
    assert_int_equal(cordon_spawn(p, (char *[]){(char *)"true", NULL}, CORDON_SPAWN_STDOUT_PIPE, &pr, &e), 0);
    assert_int_equal(cordon_proc_wait(pr, -1, &r, &e), 0);
    cordon_proc_free(pr);
    collected_free(&c);
    pthread_sigmask(SIG_BLOCK, NULL, &after_mask);
    for (int s = 1; s < NSIG; s++) {
        if (sigismember(&before_mask, s) != sigismember(&after_mask, s))
            fail_msg("signal %d: blocked %d before, %d after", s, sigismember(&before_mask, s),
                     sigismember(&after_mask, s));
        struct sigaction now;
        if (!known[s] || sigaction(s, NULL, &now) < 0)
            continue;
        if (now.sa_handler != before[s].sa_handler || now.sa_flags != before[s].sa_flags)
            fail_msg("signal %d: the handler or its flags changed (%#x -> %#x)", s, (unsigned)before[s].sa_flags,
                     (unsigned)now.sa_flags);
    }
    sigpending(&pending);
    assert_true(sigismember(&pending, SIGUSR2));
    assert_int_equal(usr2_count, 0);
    /* still there to be delivered once the caller unblocks it */
    pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
    assert_int_equal(usr2_count, 1);
    signal(SIGUSR1, SIG_DFL);
    signal(SIGUSR2, SIG_DFL);
    cordon_policy_free(p);
}

/* ---- descriptors ---------------------------------------------------------------------- */

typedef struct churn {
    cordon_policy *p;
    volatile int stop;
    int runs;
} churn;

static void *churn_main(void *arg)
{
    churn *ch = arg;
    while (!ch->stop) {
        cordon_proc *c;
        cordon_error e = {0};
        /* sandboxes that live long, started while the other thread makes its pipes */
        if (cordon_spawn(ch->p, (char *[]){(char *)"sleep", (char *)"3", NULL}, CORDON_SPAWN_STDOUT_PIPE, &c, &e) ==
            0) {
            ch->runs++;
            usleep(20000);
            /* left running: freed at the end */
            cordon_proc_free(c);
        }
    }
    return NULL;
}

/* One child's pipes are never held by a sibling spawned from another thread: with other
 * threads starting long-lived sandboxes all the while, a `cat` sees its stdin's EOF, and
 * the caller its stdout's, as soon as they are closed. */
static void test_pipes_not_inherited(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(30);
    churn ch = {.p = p};
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, churn_main, &ch);
    long long worst = 0;
    for (int i = 0; i < 20; i++) {
        cordon_proc *c;
        cordon_error e = {0};
        assert_int_equal(cordon_spawn(p, (char *[]){(char *)"cat", NULL},
                                      CORDON_SPAWN_STDIN_PIPE | CORDON_SPAWN_STDOUT_PIPE, &c, &e),
                         0);
        assert_true(write_str(cordon_proc_stdin(c), "x\n"));
        long long t0 = mono_ms();
        cordon_proc_close_stdin(c, NULL);
        char *out = read_all_fd(cordon_proc_stdout(c));
        long long took = mono_ms() - t0;
        assert_string_equal(out, "x\n");
        free(out);
        if (took > worst)
            worst = took;
        cordon_proc_free(c);
    }
    ch.stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("# stdin EOF to stdout EOF with other threads spawning: worst %lld ms (%d sandboxes alongside)\n", worst,
           ch.runs);
    /* the siblings live 3 s: a held pipe would show as seconds */
    assert_true(worst < 1500);
    assert_true(ch.runs > 0);
    cordon_policy_free(p);
}

/* ---- lifetimes ------------------------------------------------------------------------ */

static void *spawn_and_exit(void *arg)
{
    cordon_proc **out = arg;
    cordon_policy *p = test_policy(30);
    cordon_error e = {0};
    if (cordon_spawn(p, (char *[]){(char *)"sleep", (char *)"0.5", NULL}, 0, out, &e) < 0)
        *out = NULL;
    cordon_policy_free(p);
    return NULL; /* the thread ends; the sandbox must not */
}

static void test_outlives_spawning_thread(void **state)
{
    (void)state;
    cordon_proc *c = NULL;
    pthread_t t;
    pthread_create(&t, NULL, spawn_and_exit, &c);
    pthread_join(t, NULL);
    assert_non_null(c);
    cordon_result r = {0};
    cordon_error e = {0};
    assert_int_equal(cordon_proc_wait(c, 10000, &r, &e), 0);
    assert_int_equal(r.signal, 0);
    assert_int_equal(r.exit_code, 0);
    cordon_proc_free(c);
}

static void *spawn_marker(void *arg)
{
    const char *marker = arg;
    cordon_policy *p = test_policy(0);
    cordon_proc *c;
    cordon_error e = {0};
    if (cordon_spawn(p, SH(marker), 0, &c, &e) < 0)
        _exit(2);
    return c;
}

/* The sandbox dies with the caller's process, whichever thread spawned it. */
static void test_dies_with_process(void **state)
{
    (void)state;
    for (int from_thread = 0; from_thread < 2; from_thread++) {
        char marker[64];
        snprintf(marker, sizeof marker, "sleep 100.%d%d7", (int)getpid(), from_thread);
        pid_t pid = fork();
        if (pid == 0) {
            if (from_thread) {
                pthread_t t;
                pthread_create(&t, NULL, spawn_marker, marker);
                void *c;
                pthread_join(t, &c);
            } else {
                spawn_marker(marker);
            }
            for (int i = 0; i < 200 && count_marked(marker) < 1; i++)
                usleep(10000);
            _exit(count_marked(marker) >= 1 ? 0 : 3);
        }
        int st;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        assert_int_equal(WEXITSTATUS(st), 0);
        int left = 1;
        for (int i = 0; i < 300 && (left = count_marked(marker)) > 0; i++)
            usleep(10000);
        assert_int_equal(left, 0);
    }
}

/* ---- abort latency -------------------------------------------------------------------- */

typedef struct aborter {
    cordon_proc *c;
    double sent;
} aborter;

static void *abort_later(void *arg)
{
    aborter *a = arg;
    usleep(100000);
    a->sent = mono_s();
    cordon_proc_kill(a->c, SIGKILL, NULL);
    return NULL;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* From kill to the wait's return; what is left (children) checked too. */
static void test_abort_latency_thread(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    double lat[20];
    for (int i = 0; i < 20; i++) {
        cordon_proc *c;
        cordon_error e = {0};
        assert_int_equal(cordon_spawn(p, SH("sleep 100 & sleep 100"), 0, &c, &e), 0);
        aborter a = {.c = c};
        pthread_t t;
        pthread_create(&t, NULL, abort_later, &a);
        cordon_result r = {0};
        assert_int_equal(cordon_proc_wait(c, 10000, &r, &e), 0);
        double ended = mono_s();
        pthread_join(t, NULL);
        assert_int_equal(r.signal, SIGKILL);
        lat[i] = (ended - a.sent) * 1000;
        cordon_proc_free(c);
    }
    qsort(lat, 20, sizeof *lat, cmp_double);
    printf("# abort latency from another thread (cordon_proc_kill SIGKILL -> cordon_proc_wait returns), 20 runs: "
           "median %.3f ms, max %.3f ms\n",
           lat[10], lat[19]);
    assert_true(lat[19] < 1000);
    cordon_policy_free(p);
}

static cordon_proc *volatile alarm_target;
static volatile double alarm_sent;

static void on_alarm(int sig)
{
    (void)sig;
    alarm_sent = mono_s();
    cordon_proc_kill(alarm_target, SIGKILL, NULL); /* async-signal-safe */
}

static void test_abort_latency_signal_handler(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, &old);
    double lat[20];
    for (int i = 0; i < 20; i++) {
        cordon_proc *c;
        cordon_error e = {0};
        assert_int_equal(cordon_spawn(p, SH("sleep 100 & sleep 100"), 0, &c, &e), 0);
        alarm_target = c;
        struct itimerval it = {.it_value = {.tv_usec = 100000}};
        setitimer(ITIMER_REAL, &it, NULL);
        cordon_result r = {0};
        /* the wait is interrupted by the handler and goes on by itself (EINTR retried) */
        assert_int_equal(cordon_proc_wait(c, 10000, &r, &e), 0);
        double ended = mono_s();
        assert_int_equal(r.signal, SIGKILL);
        lat[i] = (ended - alarm_sent) * 1000;
        alarm_target = NULL;
        cordon_proc_free(c);
    }
    sigaction(SIGALRM, &old, NULL);
    qsort(lat, 20, sizeof *lat, cmp_double);
    printf("# abort latency from a signal handler (SIGALRM -> cordon_proc_kill -> cordon_proc_wait returns), 20 "
           "runs: median %.3f ms, max %.3f ms\n",
           lat[10], lat[19]);
    assert_true(lat[19] < 1000);
    cordon_policy_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signals_untouched),
        cmocka_unit_test(test_sigchld_handler),
        cmocka_unit_test(test_sigchld_ignored),
        cmocka_unit_test(test_outlives_spawning_thread),
        cmocka_unit_test(test_dies_with_process),
        cmocka_unit_test(test_abort_latency_thread),
        cmocka_unit_test(test_abort_latency_signal_handler),
        cmocka_unit_test(test_pipes_not_inherited),
        cmocka_unit_test(test_concurrent_64),
        cmocka_unit_test(test_sequential_1000),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
