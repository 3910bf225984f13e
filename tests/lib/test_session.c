// SPDX-License-Identifier: Apache-2.0
/* The session calls (issue 14) through include/cordon.h alone, for real (as root and as
 * uid 65534, meson test --suite lib): cordon_session_new, _spawn, _spawn_cmd
 * and _free with the same flags and cordon_proc calls as cordon_spawn; bad input; one
 * command's kill and timeout taking its tree only; --keep; 64 threads spawning into one
 * session at once; nothing left (descriptors, children, processes) once freed; the same
 * under --isolation landlock, where a thread of the caller supervises. */
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
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cordon.h"
#include "libtest.h"

#define assert_contains(hay, needle)                                     \
    do {                                                                 \
        if (!strstr((hay), (needle)))                                    \
            fail_msg("\"%s\" does not contain \"%s\"", (hay), (needle)); \
    } while (0)

#define SH(script) ((char *[]){(char *)"sh", (char *)"-c", (char *)(script), NULL})

/* What a test must leave as it found: the process's descriptors and children. */
typedef struct baseline {
    int fds, children;
} baseline;

static baseline take_baseline(void)
{
    return (baseline){.fds = count_fds(), .children = count_children()};
}

static void assert_baseline(baseline b)
{
    assert_int_equal(count_fds(), b.fds);
    assert_int_equal(count_children(), b.children);
}

static cordon_session *new_session(cordon_policy *p)
{
    cordon_session *s = NULL;
    cordon_error e = CORDON_ERROR_INIT;
    if (cordon_session_new(p, &s, &e) < 0)
        fail_msg("cordon_session_new: %s (stage %s)", e.message, cordon_stage_name(e.stage));
    return s;
}

/* Run argv in s with stdout piped; its output in *out (freed by the caller). */
static cordon_result run_in(cordon_session *s, char *const argv[], const cordon_session_cmd *cmd, char **out)
{
    cordon_error e = CORDON_ERROR_INIT;
    cordon_result r = CORDON_RESULT_INIT;
    cordon_proc *c = NULL;
    if (cordon_session_spawn_cmd(s, argv, CORDON_SPAWN_STDOUT_PIPE, cmd, &c, &e) < 0)
        fail_msg("cordon_session_spawn_cmd: %s", e.message);
    char *o = read_all_fd(cordon_proc_stdout(c));
    assert_int_equal(cordon_proc_wait(c, -1, &r, &e), 0);
    cordon_proc_free(c);
    if (out)
        *out = o;
    else
        free(o);
    return r;
}

/* ---- bad input ------------------------------------------------------------------------ */

static void test_bad_input(void **state)
{
    (void)state;
    cordon_error e = CORDON_ERROR_INIT;
    cordon_session *s = (cordon_session *)0x1;
    assert_int_equal(cordon_session_new(NULL, &s, &e), -1);
    assert_null(s);
    assert_int_equal(e.stage, CORDON_STAGE_USAGE);
    assert_contains(e.message, "no policy");
    cordon_policy *p = test_policy(30);
    assert_int_equal(cordon_session_new(p, NULL, &e), -1);
    assert_contains(e.message, "out is NULL");

    const baseline base = take_baseline();
    cordon_proc *c = (cordon_proc *)0x1;
    assert_int_equal(cordon_session_spawn(NULL, (char *[]){(char *)"true", NULL}, 0, &c, &e), -1);
    assert_null(c);
    assert_contains(e.message, "no session");
    s = new_session(p);
    assert_int_equal(cordon_session_spawn(s, NULL, 0, &c, &e), -1);
    assert_contains(e.message, "no command");
    assert_int_equal(cordon_session_spawn(s, (char *[]){(char *)"", NULL}, 0, &c, &e), -1);
    assert_int_equal(cordon_session_spawn(s, (char *[]){(char *)"true", NULL}, 0x100, &c, &e), -1);
    assert_contains(e.message, "unknown flags");
    assert_int_equal(cordon_session_spawn(s, (char *[]){(char *)"true", NULL}, CORDON_SPAWN_MERGE_STDERR, &c, &e), -1);
    assert_int_equal(cordon_session_spawn(s, (char *[]){(char *)"true", NULL}, 0, NULL, &e), -1);
    cordon_session_cmd cmd = CORDON_SESSION_CMD_INIT;
    cmd.tty = true;
    assert_int_equal(
        cordon_session_spawn_cmd(s, (char *[]){(char *)"true", NULL}, CORDON_SPAWN_STDOUT_PIPE, &cmd, &c, &e), -1);
    assert_contains(e.message, "terminal");
    cmd = (cordon_session_cmd)CORDON_SESSION_CMD_INIT;
    cmd.cwd = "relative";
    assert_int_equal(cordon_session_spawn_cmd(s, (char *[]){(char *)"true", NULL}, 0, &cmd, &c, &e), -1);
    assert_string_equal(e.option, "chdir");
    cmd.cwd = NULL;
    cmd.env = (char *[]){(char *)"NOEQUALS", NULL};
    assert_int_equal(cordon_session_spawn_cmd(s, (char *[]){(char *)"true", NULL}, 0, &cmd, &c, &e), -1);
    assert_string_equal(e.option, "env");
    /* a name that is not one; a session that is not published; a session that is not */
    assert_int_equal(cordon_session_listen(s, "../x", &e), -1);
    assert_contains(e.message, "bad session name");
    assert_int_equal(cordon_session_serve(s, -1, &e), -1);
    assert_contains(e.message, "not published");
    assert_int_equal(cordon_session_listen((cordon_session *)p, "x", &e), -1);
    cordon_session *other = (cordon_session *)0x1;
    assert_int_equal(cordon_session_open("no-such-session-here", &other, &e), -1);
    assert_null(other);
    assert_contains(e.message, "no session");
    /* still usable after all that */
    cordon_result r = run_in(s, (char *[]){(char *)"true", NULL}, NULL, NULL);
    assert_int_equal(r.exit_code, 0);
    cordon_session_free(s);
    cordon_session_free(NULL);
    assert_baseline(base);
    cordon_policy_free(p);
}

/* ---- commands ------------------------------------------------------------------------- */

static void test_spawn_like_cordon_spawn(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(30);
    const baseline base = take_baseline();
    cordon_session *s = new_session(p);
    cordon_error e = CORDON_ERROR_INIT;
    cordon_result r = CORDON_RESULT_INIT;
    char *out;

    r = run_in(s, SH("echo out; echo err >&2; exit 3"), NULL, &out);
    assert_string_equal(out, "out\n");
    assert_int_equal(r.exit_code, 3);
    assert_int_equal(r.status_code, 3);
    assert_true(r.started);
    free(out);

    /* stdin pipe and EOF, merged stderr */
    cordon_proc *c;
    assert_int_equal(
        cordon_session_spawn(s, SH("cat; echo to-stderr >&2"),
                             CORDON_SPAWN_STDIN_PIPE | CORDON_SPAWN_STDOUT_PIPE | CORDON_SPAWN_MERGE_STDERR, &c, &e),
        0);
    assert_true(write_str(cordon_proc_stdin(c), "through the pipe\n"));
    assert_int_equal(cordon_proc_close_stdin(c, NULL), 0);
    out = read_all_fd(cordon_proc_stdout(c));
    assert_string_equal(out, "through the pipe\nto-stderr\n");
    free(out);
    assert_int_equal(cordon_proc_wait(c, -1, &r, &e), 0);
    assert_int_equal(r.exit_code, 0);
    /* once ended, the exit descriptor is readable and the same result comes back */
    struct pollfd pfd = {.fd = cordon_proc_exit_fd(c), .events = POLLIN};
    assert_int_equal(poll(&pfd, 1, 1000), 1);
    assert_int_equal(cordon_proc_wait(c, 0, &r, &e), 0);
    assert_int_equal(cordon_proc_kill(c, SIGKILL, NULL), -1);
    assert_int_equal(errno, ESRCH);
    cordon_proc_free(c);

    /* its own working directory and variables; the session's environment under them */
    cordon_session_cmd cmd = CORDON_SESSION_CMD_INIT;
    cmd.cwd = "/usr";
    cmd.env = (char *[]){(char *)"ONE=1", (char *)"PATH=/usr/bin:/bin", NULL};
    r = run_in(s, SH("echo \"$(pwd) $ONE $PATH\"; test -n \"$HOME\""), &cmd, &out);
    assert_string_equal(out, "/usr 1 /usr/bin:/bin\n");
    assert_int_equal(r.exit_code, 0);
    free(out);

    /* signals, not found, not executable */
    r = run_in(s, SH("kill -TERM $$"), NULL, NULL);
    assert_int_equal(r.exit_code, 143);
    assert_int_equal(r.signal, SIGTERM);
    r = run_in(s, (char *[]){(char *)"no-such-command-anywhere", NULL}, NULL, NULL);
    assert_int_equal(r.exit_code, 127);
    assert_false(r.started);
    r = run_in(s, (char *[]){(char *)"/usr", NULL}, NULL, NULL);
    assert_int_equal(r.exit_code, 126);
    /* a missing working directory fails the command (125) and only it */
    cmd = (cordon_session_cmd)CORDON_SESSION_CMD_INIT;
    cmd.cwd = "/no/such/directory";
    assert_int_equal(cordon_session_spawn_cmd(s, (char *[]){(char *)"true", NULL}, 0, &cmd, &c, &e), 0);
    assert_int_equal(cordon_proc_wait(c, -1, &r, &e), 0);
    assert_int_equal(r.exit_code, 125);
    assert_int_equal(e.stage, CORDON_STAGE_EXEC);
    assert_contains(e.message, "/no/such/directory");
    cordon_proc_free(c);
    r = run_in(s, (char *[]){(char *)"true", NULL}, NULL, NULL);
    assert_int_equal(r.exit_code, 0);

    /* a wait with a timeout: still running */
    assert_int_equal(cordon_session_spawn(s, (char *[]){(char *)"sleep", (char *)"5", NULL}, 0, &c, &e), 0);
    long long t0 = mono_ms();
    assert_int_equal(cordon_proc_wait(c, 50, &r, &e), 1);
    assert_true(mono_ms() - t0 >= 45);
    assert_int_equal(cordon_proc_kill(c, 0, NULL), 0);
    assert_int_equal(cordon_proc_kill(c, SIGSEGV, NULL), -1);
    assert_int_equal(errno, EINVAL);
    cordon_proc_free(c); /* kills it, and waits until it is gone */

    cordon_session_free(s);
    assert_baseline(base);
    cordon_policy_free(p);
}

/* The policy's timeout is each command's; a command's own timeout wins; both take its
 * tree only. */
static void test_timeout(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(0.4);
    cordon_session *s = new_session(p);
    char mark[64], cmdline[160];
    snprintf(mark, sizeof mark, "sleep 100.%d31", (int)getpid());
    snprintf(cmdline, sizeof cmdline, "%s & %s", mark, mark);
    long long t0 = mono_ms();
    cordon_result r = run_in(s, SH(cmdline), NULL, NULL);
    assert_true(r.timed_out);
    assert_int_equal(r.exit_code, 124);
    assert_true(mono_ms() - t0 < 5000);
    assert_int_equal(count_marked(mark), 0);
    cordon_cmd cmd = CORDON_CMD_INIT;
    cmd.has_timeout = true;
    cmd.timeout = 0; /* none, as a limit of 0 is everywhere */
    r = run_in(s, SH("sleep 0.6; echo done"), &cmd, NULL);
    assert_false(r.timed_out);
    assert_int_equal(r.exit_code, 0);
    cmd.timeout = 0.1;
    r = run_in(s, SH("sleep 5"), &cmd, NULL);
    assert_true(r.timed_out);
    /* 0.1's layout (CORDON_SESSION_CMD_INIT) keeps 0.1's meaning: < 0 none */
    cordon_session_cmd old = CORDON_SESSION_CMD_INIT;
    old.timeout = -1;
    r = run_in(s, SH("sleep 0.6; echo done"), &old, NULL);
    assert_false(r.timed_out);
    assert_int_equal(r.exit_code, 0);
    old.timeout = 0.1;
    r = run_in(s, SH("sleep 5"), &old, NULL);
    assert_true(r.timed_out);
    cordon_session_free(s);
    cordon_policy_free(p);
}

/* cordon_proc_kill(SIGKILL) takes the command's whole tree (daemons too), nothing kept by
 * another; keep leaves what the command left; free ends it all. */
static void test_kill_and_keep(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(60);
    const baseline base = take_baseline();
    cordon_session *s = new_session(p);
    cordon_error e = CORDON_ERROR_INIT;
    cordon_result r = CORDON_RESULT_INIT;
    char kept[64], killed[64], script[400];
    snprintf(kept, sizeof kept, "sleep 100.%d41", (int)getpid());
    snprintf(killed, sizeof killed, "sleep 100.%d42", (int)getpid());

    cordon_session_cmd keep = CORDON_SESSION_CMD_INIT;
    keep.keep = true;
    /* (what is kept must not hold the stdout pipe: run_in reads it to the end) */
    /* (the marks are built in the shell, so that only the sleeps' command lines hold them) */
    snprintf(script, sizeof script, "exec >/dev/null; m=100.%d; m=${m}41; sleep $m & (setsid sleep $m &)",
             (int)getpid());
    r = run_in(s, SH(script), &keep, NULL);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(await_marked(kept, 2, 10000), 2);

    cordon_proc *c;
    snprintf(script, sizeof script, "m=100.%d; m=${m}42; sleep $m & (setsid sleep $m &); sleep $m", (int)getpid());
    assert_int_equal(cordon_session_spawn(s, SH(script), 0, &c, &e), 0);
    assert_int_equal(await_marked(killed, 3, 10000), 3);
    long long t0 = mono_ms();
    assert_int_equal(cordon_proc_kill(c, SIGKILL, NULL), 0);
    assert_int_equal(cordon_proc_wait(c, 5000, &r, &e), 0);
    printf("# a session command's kill (SIGKILL, its tree of 4) to the wait's return: %lld ms\n", mono_ms() - t0);
    assert_int_equal(r.signal, SIGKILL);
    assert_int_equal(r.exit_code, 137);
    assert_int_equal(count_marked(killed), 0); /* all of it, when the wait returns */
    assert_int_equal(count_marked(kept), 2);   /* and nothing else */
    cordon_proc_free(c);

    /* SIGTERM goes to the command's own process */
    assert_int_equal(cordon_session_spawn(s, SH("trap 'echo got-term; exit 9' TERM; sleep 5 & wait"),
                                          CORDON_SPAWN_STDOUT_PIPE, &c, &e),
                     0);
    usleep(200000);
    assert_int_equal(cordon_proc_kill(c, SIGTERM, NULL), 0);
    char *out = read_all_fd(cordon_proc_stdout(c));
    assert_int_equal(cordon_proc_wait(c, 5000, &r, &e), 0);
    assert_string_equal(out, "got-term\n");
    assert_int_equal(r.exit_code, 9);
    free(out);
    cordon_proc_free(c);

    /* free of a running one: killed, gone when free returns */
    assert_int_equal(cordon_session_spawn(s, SH(script), 0, &c, &e), 0);
    for (int i = 0; i < 200 && count_marked(killed) < 3; i++)
        usleep(10000);
    cordon_proc_free(c);
    assert_int_equal(count_marked(killed), 0);

    /* a command still running when its session ends: its wait says so */
    assert_int_equal(cordon_session_spawn(s, (char *[]){(char *)"sleep", (char *)"30", NULL}, 0, &c, &e), 0);
    usleep(100000);
    cordon_session_free(s);
    assert_int_equal(count_marked(kept), 0); /* the session's end takes everything */
    assert_int_equal(cordon_proc_wait(c, 5000, &r, &e), 0);
    assert_int_equal(r.exit_code, 125);
    assert_contains(e.message, "session ended");
    /* and a spawn into an ended session: a clear error */
    cordon_proc_free(c);
    assert_baseline(base);
    cordon_policy_free(p);
}

/* ---- many at once --------------------------------------------------------------------- */

typedef struct job {
    cordon_session *s; /* shared: one session, many threads */
    int index;
    int ok;
} job;

static void *spawn_one(void *arg)
{
    job *j = arg;
    char script[64], want[32];
    snprintf(script, sizeof script, "echo thread%d", j->index);
    snprintf(want, sizeof want, "thread%d\n", j->index);
    cordon_error e = CORDON_ERROR_INIT;
    cordon_result r = CORDON_RESULT_INIT;
    cordon_proc *c;
    if (cordon_session_spawn(j->s, SH(script), CORDON_SPAWN_STDOUT_PIPE, &c, &e) < 0)
        return NULL;
    char *out = read_all_fd(cordon_proc_stdout(c));
    j->ok = cordon_proc_wait(c, 30000, &r, &e) == 0 && r.exit_code == 0 && out && strcmp(out, want) == 0;
    if (!j->ok)
        printf("# thread %d: exit %d, output '%s': %s (errno %d)\n", j->index, r.exit_code, out ? out : "(none)",
               e.message, e.errnum);
    free(out);
    cordon_proc_free(c);
    return NULL;
}

static void test_concurrent_64(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(60);
    const baseline base = take_baseline();
    cordon_session *s = new_session(p);
    pthread_t t[64];
    job jobs[64];
    long long t0 = mono_ms();
    for (int i = 0; i < 64; i++) {
        jobs[i] = (job){.s = s, .index = i};
        assert_int_equal(pthread_create(&t[i], NULL, spawn_one, &jobs[i]), 0);
    }
    int ok = 0;
    for (int i = 0; i < 64; i++) {
        pthread_join(t[i], NULL);
        ok += jobs[i].ok;
    }
    printf("# 64 concurrent commands in one session from 64 threads in %lld ms, %d succeeded\n", mono_ms() - t0, ok);
    assert_int_equal(ok, 64);
    cordon_session_free(s);
    assert_baseline(base);
    cordon_policy_free(p);
}

static int cmp_ll(const void *x, const void *y)
{
    long long a = *(const long long *)x, b = *(const long long *)y;
    return (a > b) - (a < b);
}

/* 500 in a row: nothing leaks, and how long one takes. */
static void test_sequential_500(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(30);
    cordon_session *s = new_session(p);
    const baseline base = take_baseline();
    static long long us[500];
    int failed = 0;
    for (int i = 0; i < 500; i++) {
        double t0 = mono_s();
        cordon_error e = CORDON_ERROR_INIT;
        cordon_result r = CORDON_RESULT_INIT;
        cordon_proc *c;
        if (cordon_session_spawn(s, (char *[]){(char *)"true", NULL}, 0, &c, &e) < 0 ||
            cordon_proc_wait(c, -1, &r, &e) < 0 || r.exit_code != 0)
            failed++;
        else
            cordon_proc_free(c);
        us[i] = (long long)((mono_s() - t0) * 1e6);
    }
    qsort(us, 500, sizeof us[0], cmp_ll);
    printf("# 500 sequential cordon_session_spawn+wait of true: median %lld us, p90 %lld us, %d failed\n", us[250],
           us[450], failed);
    assert_int_equal(failed, 0);
    assert_baseline(base);
    cordon_session_free(s);
    cordon_policy_free(p);
}

/* The session dies with the caller's process: nothing of it is left. */
static void test_dies_with_process(void **state)
{
    (void)state;
    char mark[64], script[160];
    snprintf(mark, sizeof mark, "sleep 100.%d51", (int)getpid());
    snprintf(script, sizeof script, "%s & (setsid %s &)", mark, mark);
    pid_t pid = fork();
    if (pid == 0) {
        cordon_policy *p = test_policy(60);
        cordon_session *s = NULL;
        cordon_error e = CORDON_ERROR_INIT;
        if (cordon_session_new(p, &s, &e) < 0)
            _exit(2);
        cordon_session_cmd keep = CORDON_SESSION_CMD_INIT;
        keep.keep = true;
        cordon_proc *c;
        cordon_result r = CORDON_RESULT_INIT;
        if (cordon_session_spawn_cmd(s, SH(script), 0, &keep, &c, &e) < 0 || cordon_proc_wait(c, -1, &r, &e) < 0)
            _exit(3);
        _exit(await_marked(mark, 2, 10000) == 2 ? 0 : 4); /* without freeing anything */
    }
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    int left = 1;
    for (int i = 0; i < 300 && (left = count_marked(mark)) > 0; i++)
        usleep(10000);
    assert_int_equal(left, 0);
}

/* keep + detach: the wait returns once the command started, with its pid in the session;
 * freeing it does not kill it; it holds none of the caller's streams; it stays until the
 * session ends.  Beside the controls: detach without keep, or with a tty, is refused, and
 * a command that cannot start is reported as usual (127). */
static void test_detach(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(60);
    const baseline base = take_baseline();
    cordon_session *s = new_session(p);
    cordon_error e = CORDON_ERROR_INIT;
    cordon_result r = CORDON_RESULT_INIT;
    char mark[64], script[200];
    snprintf(mark, sizeof mark, "sleep 100.%d61", (int)getpid());
    snprintf(script, sizeof script, "m=100.%d; m=${m}61; exec sleep $m", (int)getpid());
    cordon_session_cmd cmd = CORDON_SESSION_CMD_INIT;
    cmd.keep = true;
    cmd.detach = true;
    cordon_proc *c = NULL;
    long long t0 = mono_ms();
    assert_int_equal(cordon_session_spawn_cmd(s, SH(script), 0, &cmd, &c, &e), 0);
    assert_int_equal(cordon_proc_wait(c, 10000, &r, &e), 0);
    assert_true(mono_ms() - t0 < 5000);
    assert_int_equal(r.exit_code, 0);
    assert_true(r.started);
    assert_true(r.pid > 1);
    int pid = r.pid;
    cordon_proc_free(c); /* does not kill it */
    assert_int_equal(await_marked(mark, 1, 10000), 1);
    /* a later command finds it at that pid */
    char probe[200], *out = NULL;
    snprintf(probe, sizeof probe, "tr '\\0' ' ' </proc/%d/cmdline", pid);
    r = run_in(s, SH(probe), NULL, &out);
    assert_int_equal(r.exit_code, 0);
    assert_contains(out, "sleep 100.");
    free(out);
    /* the controls: not without keep, not with a terminal */
    cordon_session_cmd bad = CORDON_SESSION_CMD_INIT;
    bad.detach = true;
    assert_int_equal(cordon_session_spawn_cmd(s, SH("true"), 0, &bad, &c, &e), -1);
    assert_contains(e.message, "keep");
    bad.keep = bad.tty = true;
    assert_int_equal(cordon_session_spawn_cmd(s, SH("true"), 0, &bad, &c, &e), -1);
    /* a command that cannot start: 127, as any */
    assert_int_equal(cordon_session_spawn_cmd(s, (char *[]){(char *)"no-such-command-61", NULL}, 0, &cmd, &c, &e), 0);
    assert_int_equal(cordon_proc_wait(c, 10000, &r, &e), 0);
    assert_int_equal(r.exit_code, 127);
    assert_int_equal(r.pid, 0);
    cordon_proc_free(c);
    assert_int_equal(count_marked(mark), 1);
    cordon_session_free(s); /* and the session's end takes it */
    assert_int_equal(count_marked(mark), 0);
    assert_baseline(base);
    cordon_policy_free(p);
}

/* cordon_session_set_idle_timeout: a running command keeps the session however long it
 * runs; once none runs for that long, the session ends, kept processes with it. */
static void test_idle_timeout(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(60);
    cordon_session *s = new_session(p);
    cordon_error e = CORDON_ERROR_INIT;
    cordon_result r = CORDON_RESULT_INIT;
    char mark[64], script[200];
    snprintf(mark, sizeof mark, "sleep 100.%d71", (int)getpid());
    snprintf(script, sizeof script, "exec >/dev/null; m=100.%d; m=${m}71; sleep $m &", (int)getpid());
    assert_int_equal(cordon_session_set_idle_timeout(s, 2e9, &e), -1); /* more than 1e9 s: refused */
    assert_contains(e.message, "idle timeout");
    assert_int_equal(cordon_session_set_idle_timeout(s, 0.8, &e), 0);
    cordon_session_cmd keep = CORDON_SESSION_CMD_INIT;
    keep.keep = true;
    r = run_in(s, SH(script), &keep, NULL);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(await_marked(mark, 1, 10000), 1);
    /* a command longer than the idle timeout: the session lives through it */
    r = run_in(s, SH("sleep 1.6; echo done"), NULL, NULL);
    assert_int_equal(r.exit_code, 0);
    /* then idle: it ends, and its kept process with it */
    int left = 1;
    for (int i = 0; i < 1000 && (left = count_marked(mark)) > 0; i++)
        usleep(10000);
    assert_int_equal(left, 0);
    cordon_proc *c = NULL;
    if (cordon_session_spawn(s, SH("true"), 0, &c, &e) == 0) {
        assert_int_equal(cordon_proc_wait(c, 10000, &r, &e), 0);
        assert_int_equal(r.exit_code, 125);
        cordon_proc_free(c);
    }
    cordon_session_free(s);
    cordon_policy_free(p);
}

/* ---- --isolation landlock ---------------------------------------------------------------- */

static int landlock_abi(void)
{
    long r = syscall(444 /* landlock_create_ruleset */, NULL, (size_t)0, 1u /* VERSION */);
    return r > 0 ? (int)r : 0;
}

/* Without namespaces a thread of this process supervises: the commands run as
 * cordon_spawn under Landlock runs them, share HOME, report their isolation, and
 * everything (the thread's runs, the private directory's janitor, descriptors) is gone
 * once the session is freed. */
static void test_landlock(void **state)
{
    (void)state;
    if (landlock_abi() < 4) {
        printf("# SKIP: Landlock ABI %d on this kernel; --isolation landlock with no network needs ABI 4\n",
               landlock_abi());
        skip();
    }
    cordon_policy *p = test_policy(30);
    cordon_error e = CORDON_ERROR_INIT;
    assert_int_equal(cordon_policy_set_isolation(p, CORDON_ISOLATION_LANDLOCK, &e), 0);
    const baseline base = take_baseline();
    cordon_session *s = new_session(p);
    cordon_result r = CORDON_RESULT_INIT;
    char *out;

    r = run_in(s, SH("echo kept >\"$HOME/note\"; echo out; exit 3"), NULL, &out);
    assert_string_equal(out, "out\n");
    assert_int_equal(r.exit_code, 3);
    assert_int_equal(r.isolation, CORDON_ISOLATION_LANDLOCK);
    free(out);
    /* the session's HOME is the next command's */
    r = run_in(s, SH("cat \"$HOME/note\"; echo \"$HOME\" | grep -q cordon-ll && echo private"), NULL, &out);
    assert_string_equal(out, "kept\nprivate\n");
    free(out);
    /* Landlock holds: / is read-only (the control: $HOME is writable, above) */
    r = run_in(s, SH("echo x 2>/dev/null >/etc/cordon-lib-test || echo refused"), NULL, &out);
    assert_string_equal(out, "refused\n");
    free(out);
    cordon_result_free(&r); /* (the refusal's report) */

    /* a command's kill takes its tree, and only it; --keep keeps what it left */
    char kept[64], killed[64], script[400];
    snprintf(kept, sizeof kept, "sleep 100.%d51", (int)getpid());
    snprintf(killed, sizeof killed, "sleep 100.%d52", (int)getpid());
    cordon_session_cmd keep = CORDON_SESSION_CMD_INIT;
    keep.keep = true;
    snprintf(script, sizeof script, "exec >/dev/null; m=100.%d; m=${m}51; sleep $m & (setsid sleep $m &)",
             (int)getpid());
    r = run_in(s, SH(script), &keep, NULL);
    assert_int_equal(r.exit_code, 0);
    assert_int_equal(await_marked(kept, 2, 10000), 2);
    cordon_proc *c;
    snprintf(script, sizeof script, "m=100.%d; m=${m}52; sleep $m & (setsid sleep $m &); sleep $m", (int)getpid());
    assert_int_equal(cordon_session_spawn(s, SH(script), 0, &c, &e), 0);
    assert_int_equal(await_marked(killed, 3, 10000), 3);
    assert_int_equal(cordon_proc_kill(c, SIGKILL, NULL), 0);
    assert_int_equal(cordon_proc_wait(c, 30000, &r, &e), 0);
    assert_int_equal(r.signal, SIGKILL);
    assert_int_equal(count_marked(killed), 0); /* all of it, when the wait returns */
    assert_int_equal(count_marked(kept), 2);   /* and nothing else */
    cordon_proc_free(c);

    /* many in a row */
    for (int i = 0; i < 20; i++) {
        r = run_in(s, (char *[]){(char *)"true", NULL}, NULL, NULL);
        assert_int_equal(r.exit_code, 0);
    }

    /* a command still running when its session ends: its wait says so */
    assert_int_equal(cordon_session_spawn(s, (char *[]){(char *)"sleep", (char *)"30", NULL}, 0, &c, &e), 0);
    cordon_session_free(s);
    assert_int_equal(count_marked(kept), 0); /* the session's end takes everything */
    assert_int_equal(cordon_proc_wait(c, 30000, &r, &e), 0);
    assert_int_equal(r.exit_code, CORDON_EXIT_SETUP);
    cordon_proc_free(c);
    assert_baseline(base);
    cordon_policy_free(p);
}

/* ---- a terminal: ^Z stops the command itself --------------------------------------- */

/* Read the master until `want` appears in what came (up to 30 s); what came, in buf. */
static bool read_until(int master, const char *want, char *buf, size_t size)
{
    size_t have = 0;
    buf[0] = '\0';
    long long until = mono_ms() + 30000;
    while (!strstr(buf, want) && mono_ms() < until && have + 1 < size) {
        struct pollfd pfd = {.fd = master, .events = POLLIN};
        if (poll(&pfd, 1, 200) <= 0)
            continue;
        ssize_t n = read(master, buf + have, size - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
        buf[have] = '\0';
    }
    return strstr(buf, want) != NULL;
}

/* The state letter of the terminal's foreground process group's leader, as this
 * process sees it ('?' when there is none). */
static char foreground_state(int master)
{
    pid_t pg;
    char path[64], buf[512];
    if (ioctl(master, TIOCGPGRP, &pg) < 0 || pg <= 0)
        return '?';
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pg);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return '?';
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return '?';
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

/* Wait (up to 30 s) until the foreground's state is (or, want_stopped false, is no
 * longer) 'T'. */
static bool await_stopped(int master, bool want_stopped)
{
    long long until = mono_ms() + 30000;
    while (mono_ms() < until) {
        if ((foreground_state(master) == 'T') == want_stopped)
            return true;
        usleep(20000);
    }
    return false;
}

/* CORDON_SPAWN_PTY in a session (issue 23): ^Z typed into the terminal stops the command
 * itself, a pipeline whole ("ready" once both of its processes exist; its process group is not an orphaned one: its shepherd leads
 * the terminal's session), the session serves another command meanwhile, and
 * cordon_proc_kill SIGCONT continues all of it. */
static void test_pty_ctrl_z(void **state)
{
    (void)state;
    cordon_policy *p = test_policy(60);
    cordon_session *s = new_session(p);
    cordon_error e = CORDON_ERROR_INIT;
    cordon_result r = CORDON_RESULT_INIT;
    cordon_proc *c;
    char buf[4096];
    assert_int_equal(
        cordon_session_spawn(s, SH("cat | { echo re\"\"ady; exec tr a-z A-Z; }; exit 4"), CORDON_SPAWN_PTY, &c, &e), 0);
    int master = cordon_proc_pty(c);
    assert_true(master >= 0);
    assert_true(read_until(master, "ready", buf, sizeof buf));
    assert_int_equal(foreground_state(master) == 'T', 0); /* the control: it runs */
    assert_true(write_str(master, "\x1a"));
    if (!await_stopped(master, true))
        fail_msg("^Z did not stop the command (its state: %c)", foreground_state(master));
    char *out;
    r = run_in(s, SH("echo other"), NULL, &out);
    assert_string_equal(out, "other\n");
    free(out);
    assert_int_equal(cordon_proc_wait(c, 0, &r, &e), 1); /* stopped, not ended */
    assert_int_equal(cordon_proc_kill(c, SIGCONT, &e), 0);
    assert_true(await_stopped(master, false));
    /* the pipeline's other processes too: tr answers */
    assert_true(write_str(master, "two\n"));
    if (!read_until(master, "TWO", buf, sizeof buf))
        fail_msg("the pipeline did not continue; the terminal showed: %s", buf);
    assert_true(write_str(master, "\x04")); /* the end of cat's input */
    assert_int_equal(cordon_proc_wait(c, -1, &r, &e), 0);
    assert_int_equal(r.exit_code, 4);
    cordon_proc_free(c);
    cordon_session_free(s);
    cordon_policy_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_input),         cmocka_unit_test(test_spawn_like_cordon_spawn),
        cmocka_unit_test(test_timeout),           cmocka_unit_test(test_kill_and_keep),
        cmocka_unit_test(test_concurrent_64),     cmocka_unit_test(test_sequential_500),
        cmocka_unit_test(test_dies_with_process), cmocka_unit_test(test_detach),
        cmocka_unit_test(test_idle_timeout),      cmocka_unit_test(test_landlock),
        cmocka_unit_test(test_pty_ctrl_z),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
