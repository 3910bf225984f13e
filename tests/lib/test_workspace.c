// SPDX-License-Identifier: Apache-2.0
/* Workspaces leave the library's caller alone: the helpers a workspace runs (git, for a
 * worktree and for an integration's commit) are children the caller never hears of -- no
 * SIGCHLD for its handler, nothing for its waitpid(-1) (src/workspace/proc.c clones them
 * without an exit signal and reaps them by pidfd).  A positive control shows the handler
 * does see the caller's own child.  The only exception, said and bounded here: an
 * integration's helper process (src/workspace/integ_helper.c), which must use the C
 * library after its fork and so is made by fork(): one SIGCHLD per integration at most,
 * never one per git run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cordon.h"
#include "libtest.h"

static volatile sig_atomic_t chld_count;

static void on_chld(int sig)
{
    (void)sig;
    chld_count++;
}

/* Run argv (before the handler is installed), expecting exit 0. */
static void run(const char *const argv[])
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null >= 0)
            dup2(null, 1);
        execvp(argv[0], (char *const *)argv);
        _exit(127);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        assert_int_equal(errno, EINTR);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        fail_msg("%s exited with status %#x", argv[0], status);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void test_no_sigchld(void **state)
{
    (void)state;
    if (access("/usr/bin/git", X_OK) != 0 && access("/bin/git", X_OK) != 0)
        skip(); /* (bootstrap.sh installs git) */
    setenv("GIT_AUTHOR_NAME", "t", 1);
    setenv("GIT_AUTHOR_EMAIL", "t@example.invalid", 1);
    setenv("GIT_COMMITTER_NAME", "t", 1);
    setenv("GIT_COMMITTER_EMAIL", "t@example.invalid", 1);
    setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
    char dir[] = "/tmp/cordon-libws-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char src[256], root[256], path[512];
    snprintf(src, sizeof src, "%s/src", dir);
    snprintf(root, sizeof root, "%s/state", dir);
    run((const char *[]){"git", "init", "-q", "-b", "main", src, NULL});
    snprintf(path, sizeof path, "%s/a.txt", src);
    write_file(path, "a\n");
    run((const char *[]){"git", "-C", src, "add", "a.txt", NULL});
    run((const char *[]){"git", "-C", src, "commit", "-q", "-m", "one", NULL});

    struct sigaction sa = {.sa_handler = on_chld}, old;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    assert_int_equal(sigaction(SIGCHLD, &sa, &old), 0);
    chld_count = 0;
    cordon_error e = {0};

    /* a worktree: `git worktree add` and friends, then its removal */
    cordon_workspace *wt = NULL;
    if (cordon_workspace_create(root, "wt", src, CORDON_BACKEND_WORKTREE, &wt, &e) != 0)
        fail_msg("worktree: %s", e.message);
    snprintf(path, sizeof path, "%s/.git", cordon_workspace_view(wt));
    assert_int_equal(access(path, F_OK), 0); /* git did run */
    cordon_workspace_change_list ch = {0};
    assert_int_equal(cordon_workspace_changes(wt, &ch, &e), 0);
    cordon_workspace_change_list_free(&ch);
    cordon_workspace_free(wt);
    if (cordon_workspace_remove(root, "wt", &e) != 0)
        fail_msg("remove: %s", e.message);
    /* a copy with a change: its changes and diff */
    cordon_workspace *ws = NULL;
    if (cordon_workspace_create(root, "cp", src, CORDON_BACKEND_COPY, &ws, &e) != 0)
        fail_msg("copy: %s", e.message);
    snprintf(path, sizeof path, "%s/b.txt", cordon_workspace_view(ws));
    write_file(path, "b\n");
    assert_int_equal(cordon_workspace_changes(ws, &ch, &e), 0);
    assert_int_equal(ch.n, 1);
    cordon_workspace_change_list_free(&ch);
    char *text = NULL;
    assert_int_equal(cordon_workspace_diff(ws, 0, &text, &e), 0);
    assert_non_null(text);
    cordon_free(text);
    usleep(100000);
    assert_int_equal(chld_count, 0);
    errno = 0;
    assert_int_equal(waitpid(-1, NULL, WNOHANG), -1);
    assert_int_equal(errno, ECHILD);

    /* an integration: git's hash-object, fast-import, update-ref, update-index each run;
     * its helper is the one child the caller may hear of */
    cordon_workspace_integration res = CORDON_WORKSPACE_INTEGRATION_INIT;
    if (cordon_workspace_integrate(ws, "two", 0, &res, &e) != 0)
        fail_msg("integrate: %s", e.message);
    assert_true(res.committed);
    usleep(100000);
    assert_true(chld_count <= 1);
    cordon_workspace_integration_free(&res);
    cordon_workspace_free(ws);
    assert_int_equal(cordon_workspace_remove(root, "cp", &e), 0);

    /* positive control: the caller's own child is seen */
    int before = chld_count;
    pid_t own = fork();
    if (own == 0)
        _exit(0);
    while (waitpid(own, NULL, 0) < 0 && errno == EINTR)
        ;
    for (int i = 0; i < 100 && chld_count == before; i++)
        usleep(1000);
    assert_int_equal(chld_count, before + 1);
    sigaction(SIGCHLD, &old, NULL);
    run((const char *[]){"rm", "-rf", dir, NULL});
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_no_sigchld)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
