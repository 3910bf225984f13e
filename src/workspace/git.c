// SPDX-License-Identifier: Apache-2.0
/* Host git on a workspace's source.  What the command in the workspace wrote must never
 * make this git run code or read configuration it chose: git runs by execve of an
 * argument vector (no shell) with GIT_DIR and GIT_WORK_TREE named explicitly (so no
 * repository is ever discovered in an upper layer or a copy), every GIT_* variable of
 * cordon's own environment dropped, and hooks, fsmonitor and the other ways to start a
 * program switched off on its command line.  The repository's own configuration is the
 * user's: the workspace cannot write it (the source's .git is never integrated). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"
#include "workspace/ws.h"

extern char **environ;

#define GIT_TIMEOUT_MS (10 * 60 * 1000)

/* core.quotePath: the names git prints (the worktree backend's diff) are C-quoted whatever
 * the user set, so a name the command chose never reaches the terminal raw (util/path.h). */
static const char *const safety[] = {
    "-c", "core.hooksPath=/dev/null", "-c",         "core.fsmonitor=false", "-c", "core.untrackedCache=false",
    "-c", "core.splitIndex=false",    "-c",         "commit.gpgSign=false", "-c", "gc.auto=0",
    "-c", "maintenance.auto=false",   "-c",         "core.pager=cat",       "-c", "advice.detachedHead=false",
    "-c", "core.quotePath=true",      "--no-pager",
};

bool ws_git_is_top(const char *dir)
{
    char *dotgit = path_join(dir, ".git");
    struct stat st;
    bool yes = lstat(dotgit, &st) == 0 && (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode));
    free(dotgit);
    return yes;
}

static int run(const ws_git *g, const char *const args[], const void *in, size_t in_len, int in_fd, ws_out *out,
               cordon_error *err)
{
    strv argv = {0}, env = {0};
    strv_push(&argv, xstrdup("git"));
    for (size_t i = 0; i < sizeof safety / sizeof *safety; i++)
        strv_push(&argv, xstrdup(safety[i]));
    for (const char *const *a = args; *a; a++)
        strv_push(&argv, xstrdup(*a));
    for (char **e = environ; *e; e++)
        if (strncmp(*e, "GIT_", 4) != 0 && strncmp(*e, "LC_ALL=", 7) != 0 && strncmp(*e, "LANGUAGE=", 9) != 0)
            strv_push(&env, xstrdup(*e));
    char *dotgit = NULL;
    const char *gd = g->git_dir;
    if (!gd) {
        /* the source's own repository: .git, or the directory a .git file names */
        dotgit = path_join(g->work_tree, ".git");
        gd = dotgit;
    }
    strv_push(&env, xasprintf("GIT_DIR=%s", gd));
    strv_push(&env, xasprintf("GIT_WORK_TREE=%s", g->work_tree));
    if (g->common_dir)
        strv_push(&env, xasprintf("GIT_COMMON_DIR=%s", g->common_dir));
    if (g->index)
        strv_push(&env, xasprintf("GIT_INDEX_FILE=%s", g->index));
    strv_push(&env, xstrdup("GIT_TERMINAL_PROMPT=0"));
    strv_push(&env, xstrdup("GIT_NO_REPLACE_OBJECTS=1"));
    strv_push(&env, xstrdup("LC_ALL=C"));
    ws_cmd c = {
        .argv = (const char *const *)argv.v,
        .envp = env.v,
        .cwd = g->work_tree,
        .in = in,
        .in_len = in_len,
        .in_fd = in_fd,
        .capture = true,
        .timeout_ms = GIT_TIMEOUT_MS,
        .keep = g->hold,
        .n_keep = g->hold ? 2 : 0,
    };
    int r = ws_exec(&c, out, err);
    free(dotgit);
    strv_free(&argv);
    strv_free(&env);
    return r;
}

ws_git ws_source_git(const cordon_workspace *ws)
{
    return (ws_git){.work_tree = ws->st.source, .hold = ws->held};
}

int ws_git_run(const ws_git *g, const char *const args[], const void *in, size_t in_len, ws_out *out, cordon_error *err)
{
    return run(g, args, in, in_len, -1, out, err);
}

int ws_git_run_fd(const ws_git *g, const char *const args[], int in_fd, ws_out *out, cordon_error *err)
{
    return run(g, args, NULL, 0, in_fd, out, err);
}

int ws_git_ok(const ws_git *g, const char *const args[], const void *in, size_t in_len, char **text, cordon_error *err)
{
    ws_out o;
    if (ws_git_run(g, args, in, in_len, &o, err) < 0)
        return err_wrap(err, "git %s", args[0]);
    if (!WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0) {
        char what[1024];
        ws_out_describe(&o, what, sizeof what);
        ws_out_free(&o);
        return err_set(err, CORDON_STAGE_WORKSPACE, 0, "git %s (in %s) %s", args[0], g->work_tree, what);
    }
    if (text) {
        while (o.out_len > 0 && (o.out[o.out_len - 1] == '\n' || o.out[o.out_len - 1] == '\r'))
            o.out[--o.out_len] = '\0';
        *text = o.out ? o.out : xstrdup("");
        o.out = NULL;
    }
    ws_out_free(&o);
    return 0;
}
