// SPDX-License-Identifier: Apache-2.0
/* A run in a workspace: cordon_run() on a private copy of the caller's policy
 * whose workspace is the view (policy.view, plan/view.c), shown at the source's path.
 *
 * The copy is the caller's policy struct copied whole (every option, whatever is added to
 * it later) with a few fields pointing at data of this run: the workspace, the working
 * directory, rules, hidden paths and globs that name the source moved onto the view (fuse, copy,
 * worktree: the view is a host directory), a deny of the workspace's state directory (the
 * raw layers are not the command's to touch), and namespaces isolation (without a mount
 * namespace there is no view: the command would write the source). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/policy.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"
#include "workspace/ws.h"

static char *moved(const char *path, const char *from, const char *to)
{
    if (!path || path[0] != '/' || !path_has_prefix(path, from))
        return NULL;
    const char *rest = path + strlen(from);
    return *rest ? xasprintf("%s%s", to, rest) : xstrdup(to);
}

int ws_run(cordon_workspace *ws, const cordon_policy *p, char *const argv[], cordon_result *res, cordon_error *err)
{
    /* res is the library's own, whole cordon_result (cordon_workspace_run exports it to the
     * caller's layout): its size stays ours, or cordon_run would fill only the first one */
    *res = (cordon_result){.size = sizeof *res, .exit_code = CORDON_EXIT_SETUP, .status_code = -1};
    if (p->workspace || p->no_workspace)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "workspace",
                       "a workspace run: its workspace is the view of %s, shown at %s; the policy cannot set another "
                       "(or none)",
                       ws->st.name, ws->st.source);
    if (p->isolation == CORDON_ISOLATION_LANDLOCK)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "isolation",
                       "Landlock isolation cannot show a workspace's view (it has no mount namespace): a workspace "
                       "run needs namespaces");
    struct cordon_policy c = *p; /* shares p's data, which outlives the run; never freed */
    policy_view view = {.name = ws->st.name, .source = ws->st.source};
    char *host = ws->st.backend == CORDON_WS_KERNEL ? NULL : ws_view_path(ws);
    char *upper = NULL, *work = NULL, *cwd_alloc = NULL;
    policy_rule *rules = NULL;
    policy_glob *globs = NULL;
    policy_rule *hides = NULL;
    strv owned = {0};
    int ret = -1;

    if (ws->st.backend == CORDON_WS_KERNEL) {
        upper = ws_path(ws, "upper");
        work = ws_path(ws, "work");
        view.upper = upper;
        view.work = work;
    } else if (ws->st.backend != CORDON_WS_NONE) {
        view.host_dir = host;
    }
    const char *shown = host && ws->st.backend != CORDON_WS_NONE ? host : ws->st.source;

    /* the working directory: as asked, else the current one when it lies in the source,
     * else the source; inside the source it means the same place in the view */
    char here[PATH_MAX];
    const char *cwd = p->cwd;
    if (!cwd && getcwd(here, sizeof here) && path_has_prefix(here, ws->st.source))
        cwd = here;
    if (!cwd)
        cwd = ws->st.source;
    cwd_alloc = moved(cwd, ws->st.source, shown);
    c.cwd = cwd_alloc ? cwd_alloc : (char *)cwd;
    c.workspace = (char *)shown;

    if (view.host_dir) {
        rules = xcalloc(p->n_rules + 2, sizeof *rules);
        for (size_t i = 0; i < p->n_rules; i++) {
            rules[i] = p->rules[i];
            char *m = moved(p->rules[i].path, ws->st.source, shown);
            if (m) {
                strv_push(&owned, m);
                rules[i].path = m;
            }
        }
        globs = xcalloc(p->n_globs + 1, sizeof *globs);
        for (size_t i = 0; i < p->n_globs; i++) {
            globs[i] = p->globs[i];
            char *m = moved(p->globs[i].pattern, ws->st.source, shown);
            if (m) {
                strv_push(&owned, m);
                globs[i].pattern = m;
            }
        }
        c.globs = globs;
        c.cap_globs = p->n_globs + 1;
        hides = xcalloc(p->n_hides + 1, sizeof *hides);
        for (size_t i = 0; i < p->n_hides; i++) {
            hides[i] = p->hides[i];
            char *m = moved(p->hides[i].path, ws->st.source, shown);
            if (m) {
                strv_push(&owned, m);
                hides[i].path = m;
            }
        }
        c.hides = hides;
        c.cap_hides = p->n_hides + 1;
    } else {
        rules = xcalloc(p->n_rules + 2, sizeof *rules);
        for (size_t i = 0; i < p->n_rules; i++)
            rules[i] = p->rules[i];
    }
    /* the raw layers and the state stay out of the command's reach */
    rules[p->n_rules] = (policy_rule){.path = ws->dir,
                                      .access = CORDON_ACCESS_NONE,
                                      .origin = ORIGIN_FLAG,
                                      .source = (char *)"the workspace's state directory"};
    c.rules = rules;
    c.n_rules = p->n_rules + 1;
    c.cap_rules = p->n_rules + 2;
    if (ws->st.backend == CORDON_WS_WORKTREE) {
        /* the worktree's link to the source's repository: git inside could only reach it
         * through the source, which the view covers; hidden rather than left dangling */
        char *dotgit = path_join(host, ".git");
        strv_push(&owned, dotgit);
        rules[c.n_rules++] = (policy_rule){.path = dotgit,
                                           .access = CORDON_ACCESS_NONE,
                                           .origin = ORIGIN_FLAG,
                                           .source = (char *)"the worktree's .git link"};
    }
    c.isolation = CORDON_ISOLATION_NAMESPACES;
    c.isolation_set = true;
    c.view = ws->st.backend == CORDON_WS_NONE ? NULL : &view;

    ret = cordon_run(&c, argv, res, err);
    if (ret < 0 && err && err->stage == CORDON_STAGE_NONE)
        err_set(err, CORDON_STAGE_WORKSPACE, 0, "the run failed");
    free(rules);
    free(globs);
    free(hides);
    strv_free(&owned);
    free(cwd_alloc);
    free(upper);
    free(work);
    free(host);
    return ret;
}
