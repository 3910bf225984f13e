// SPDX-License-Identifier: Apache-2.0
/* A copy-on-write workspace's view in the plan (cordon_workspace_run, src/workspace/).
 *
 * The view is shown at the source's own path.  Two shapes:
 *
 * - a host directory (fuse-overlayfs's merged mount, a copy, a git worktree): the
 *   policy's workspace names that directory, so resolution and every protection are
 *   computed on what the command will really see; here every operation at or below it
 *   moves to the source's path (the sources stay the host directory);
 * - the kernel overlay: the policy's workspace is the source itself; its bind becomes
 *   a PLAN_OVERLAY (lower: the source; upper and work: the workspace's layers), mounted
 *   by sandbox/root.c inside the sandbox's mount namespace, and every bind below it is
 *   taken from inside the view (what the view holds there, never the host's source).
 *
 * The creation control's rules (plan.cc_rules) below the view move with it:
 * the supervisor enforces them inside the built root, where the view is a directory
 * mounted at the source's path. */
#include <stdlib.h>
#include <string.h>

#include "plan/plan.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

/* `path` with the prefix `from` replaced by `to` (path_has_prefix(path, from)). */
static char *move_prefix(const char *path, const char *from, const char *to)
{
    const char *rest = path + strlen(from);
    if (strcmp(from, "/") == 0)
        rest = path;
    if (!*rest)
        return xstrdup(to);
    return strcmp(to, "/") == 0 ? xstrdup(rest) : xasprintf("%s%s", to, rest);
}

static int view_host_dir(const policy_view *v, plan *p, cordon_error *err)
{
    bool found = false;
    for (size_t i = 0; i < p->n_ops; i++) {
        plan_op *op = &p->ops[i];
        if (!path_has_prefix(op->dest, v->host_dir))
            continue;
        found |= strcmp(op->dest, v->host_dir) == 0 && op->kind == PLAN_BIND;
        char *d = move_prefix(op->dest, v->host_dir, v->source);
        free(op->dest);
        op->dest = d;
    }
    if (!found)
        return err_set(err, CORDON_STAGE_PLAN, 0,
                       "workspace %s: a rule hides or replaces its view %s, so it cannot be shown at %s", v->name,
                       v->host_dir, v->source);
    for (size_t i = 0; i < p->n_cc_rules; i++) {
        plan_cc_rule *c = &p->cc_rules[i];
        if (!path_has_prefix(c->path, v->host_dir))
            continue;
        char *d = move_prefix(c->path, v->host_dir, v->source);
        free(c->path);
        c->path = d;
    }
    if (path_has_prefix(p->cwd, v->host_dir)) {
        char *c = move_prefix(p->cwd, v->host_dir, v->source);
        free(p->cwd);
        p->cwd = c;
    }
    return 0; /* the destinations moved: plan_build sorts the plan again */
}

static int view_kernel(const policy_view *v, plan *p, cordon_error *err)
{
    plan_op *top = NULL;
    for (size_t i = 0; i < p->n_ops; i++)
        if (p->ops[i].kind == PLAN_BIND && strcmp(p->ops[i].dest, v->source) == 0)
            top = &p->ops[i];
    if (!top)
        return err_set(err, CORDON_STAGE_PLAN, 0,
                       "workspace %s: a rule hides or replaces its source %s, where its view is shown", v->name,
                       v->source);
    top->kind = PLAN_OVERLAY;
    top->upper = xstrdup(v->upper);
    top->work = xstrdup(v->work);
    char *why = xasprintf("workspace %s (kernel overlay)", v->name);
    free(top->why);
    top->why = why;
    for (size_t i = 0; i < p->n_ops; i++) {
        plan_op *op = &p->ops[i];
        if (op == top || !path_has_prefix(op->dest, v->source))
            continue;
        if (op->kind == PLAN_BIND)
            op->in_view = true;
    }
    return 0;
}

int plan_apply_view(const policy_view *v, plan *p, cordon_error *err)
{
    return v->host_dir ? view_host_dir(v, p, err) : view_kernel(v, p, err);
}
