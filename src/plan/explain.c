// SPDX-License-Identifier: Apache-2.0
#include "plan/explain.h"

#include <string.h>

static const char *access_word(const rrule *x)
{
    return x->access == CORDON_ACCESS_NONE ? "deny" : x->access == CORDON_ACCESS_WRITE ? "write" : "read";
}

/* The command's HOME and TMPDIR: private directories mounted inside, or under
 * --isolation landlock (no mounts) directories made on the host at start. */
static void print_home_tmpdir(FILE *out, const plan *p)
{
    if (p->isolation == CORDON_ISOLATION_LANDLOCK) {
        const char *const names[] = {"HOME", "TMPDIR"};
        for (size_t k = 0; k < 2; k++) {
            const char *v = NULL;
            size_t n = strlen(names[k]);
            for (size_t i = 0; i < p->env.n && !v; i++)
                if (strncmp(p->env.v[i], names[k], n) == 0 && p->env.v[i][n] == '=')
                    v = p->env.v[i] + n + 1;
            fprintf(out, "  %-11s %s%s\n", names[k], v ? v : "(unset)",
                    v ? " (private, on the host: made at start, removed at the end)" : "");
        }
        return;
    }
    bool cow = false;
    for (size_t i = 0; p->home && i < p->n_ops; i++)
        cow |= p->ops[i].kind == PLAN_COW && strcmp(p->ops[i].dest, p->home) == 0;
    fprintf(out, "  HOME        %s%s\n", p->home ? p->home : "(the environment's: no private HOME)",
            !p->home ? ""
            : cow    ? " (the real home, read-only underneath; writes go to a private layer)"
                     : " (private)");
    fprintf(out, "  TMPDIR      %s%s\n", p->tmpdir ? p->tmpdir : "(the environment's: no private TMPDIR)",
            p->tmpdir ? " (private)" : "");
}

/* The policy's settings, as the plan has them. */
static void print_policy(FILE *out, const struct cordon_policy *pol, const resolved *r, const plan *p)
{
    fprintf(out, "policy\n");
    fprintf(out, "  base        %s\n", base_name(pol->base));
    fprintf(out, "  network     %s\n", network_name(pol->network));
    fprintf(out, "  workspace   %s%s\n", pol->no_workspace ? "(none)" : r->workspace,
            !pol->no_workspace && r->workspace_git_top
                ? " (the top of the current directory's git work tree; --workspace . for the current directory alone)"
                : "");
    fprintf(out, "  read-only   %s\n", pol->read_only ? "yes" : "no");
    fprintf(out, "  cwd         %s%s\n", p->cwd,
            p->cwd_is_workspace ? " (the workspace: the current directory would not be visible; --chdir to choose)"
                                : "");
    print_home_tmpdir(out, p);
    if (p->timeout > 0)
        fprintf(out, "  timeout     %gs\n", p->timeout);
    else
        fprintf(out, "  timeout     none\n");
    fprintf(out, "  /proc       %s\n", p->proc ? "fresh" : "none (--no-proc)");
}

/* The resolved rules, links and what deny globs matched. */
static void print_rules(FILE *out, const resolved *r)
{
    fprintf(out, "\nrules (the longest matching path wins; at equal length deny > write > read)\n");
    for (size_t i = 0; i < r->n_rules; i++) {
        const rrule *x = &r->rules[i];
        fprintf(out, "  %-6s %-40s %s", access_word(x), x->path, x->source);
        if (x->line > 0)
            fprintf(out, ":%d", x->line);
        if (x->shadowed)
            fprintf(out, "  [overridden at equal length]");
        if (x->type == FT_MISSING)
            fprintf(out, "  [does not exist]");
        if (x->symlink)
            fprintf(out, "  [given as %s; %s is a symlink]", x->given, x->symlink);
        else if (strcmp(x->given, x->path) != 0)
            fprintf(out, "  [given as %s]", x->given);
        fputc('\n', out);
    }
    for (size_t i = 0; i < r->n_links; i++)
        fprintf(out, "  %-6s %-40s %s  [-> %s]\n", "link", r->links[i].path, r->links[i].source, r->links[i].target);
    /* Deny globs: what each matched (its matches are deny rules above, named after it),
     * and matches that needed no rule. */
    for (size_t i = 0; i < r->n_notes; i++)
        fprintf(out, "  %-6s %-40s %s  [%s]\n", r->notes[i].kind, r->notes[i].path, r->notes[i].source,
                r->notes[i].why);
}

/* What an operation's line says beyond its kind, path and reason. */
static void print_op_details(FILE *out, const plan *p, const plan_op *op)
{
    if (op->kind == PLAN_SYMLINK)
        fprintf(out, "  [-> %s]", op->src);
    if (op->kind == PLAN_HIDE)
        fprintf(out, "  [empty read-only %s]", op->is_dir ? "directory" : "file");
    if (op->kind == PLAN_BIND && op->pin)
        fprintf(out, "  [pinned: cannot be renamed away]");
    if (op->kind == PLAN_BIND && op->in_view)
        fprintf(out, "  [from the workspace's view]");
    if (op->kind == PLAN_OVERLAY)
        fprintf(out, "  [%s; lower %s, upper %s]", op->read_only ? "read-only" : "writable", op->src, op->upper);
    if (op->kind == PLAN_HOLD)
        fprintf(out, "  [%s]", op->from_view ? "bound onto itself read-only" : "empty read-only tmpfs");
    if (op->kind == PLAN_COW)
        fprintf(out,
                "  [kernel overlay: lower %s read-only, upper in a private tmpfs; else %s read-only and "
                "HOME=%s]",
                op->src, op->src, p->home_fallback ? p->home_fallback : "?");
    if (op->kind == PLAN_TMPFS && p->limits.v[CORDON_LIMIT_MEMORY]) {
        char sz[64];
        limit_format(CORDON_LIMIT_MEMORY, p->limits.v[CORDON_LIMIT_MEMORY], sz, sizeof sz);
        fprintf(out, "  [mode %o; shares one tmpfs of %s with the other private mounts and /dev/shm: --limit-memory]",
                op->mode, sz);
    } else if (op->kind == PLAN_TMPFS && op->size) {
        fprintf(out, "  [mode %o; %llu bytes]", op->mode, op->size);
    } else if (op->kind == PLAN_TMPFS) {
        fprintf(out, "  [mode %o]", op->mode);
    }
}

/* The mounts, in order. */
static void print_plan(FILE *out, const plan *p)
{
    fprintf(out, "\nplan (in order; then hidden paths, /dev and / become read-only, pivot_root)\n");
    if (p->root_is_host)
        fprintf(out, "  %3d  %-8s %-40s %s\n", 0, "bind-ro", "/", "base host: the host root, whole, as the new root");
    else
        fprintf(out, "  %3d  %-8s %-40s %s\n", 0, "tmpfs", "/", "new root (read-only once built)");
    int k = 1;
    for (size_t i = 0; i < p->n_ops; i++) {
        const plan_op *op = &p->ops[i];
        char kind[16];
        if (op->kind == PLAN_BIND)
            snprintf(kind, sizeof kind, "%s", op->read_only ? "bind-ro" : "bind-rw");
        else
            snprintf(kind, sizeof kind, "%s", plan_kind_name(op->kind));
        if (op->kind == PLAN_NOTE) {
            fprintf(out, "    -  %-8s %-40s %s\n", "skip", op->dest, op->why);
            continue;
        }
        if (!plan_op_mounts(op) && op->kind != PLAN_FILE)
            continue; /* not mounts: listed below */
        fprintf(out, "  %3d  %-8s %-40s %s", k++, kind, op->dest, op->why);
        print_op_details(out, p, op);
        fputc('\n', out);
    }
}

/* The creation control's rules. */
static void print_creation_control(FILE *out, const plan *p)
{
    if (p->bare) {
        fprintf(out, "\ncreation control\n  none: cordon's protections are off (bubblewrap's exact mode)\n");
    } else {
        fprintf(out, "\ncreation control (the supervisor performs the command's creations and writes; "
                     "nothing is placed on the host)\n");
        for (size_t i = 0; i < p->n_cc_rules; i++)
            if (p->cc_rules[i].kind == PLAN_NOCREATE)
                fprintf(out, "  %-8s %-40s %s\n", "nocreate", p->cc_rules[i].path, p->cc_rules[i].why);
        for (size_t i = 0; i < p->n_cc_rules; i++)
            if (p->cc_rules[i].kind == PLAN_LIFT)
                fprintf(out, "  %-8s %-40s %s: the git rules below do not apply there\n", "lift", p->cc_rules[i].path,
                        p->cc_rules[i].why);
        for (size_t i = 0; i < p->n_cc_rules; i++)
            if (p->cc_rules[i].kind == PLAN_GITDIR)
                fprintf(out, "  %-8s %-40s %s\n", "gitdir", p->cc_rules[i].path, p->cc_rules[i].why);
        fprintf(out, "  %-8s %-40s %s\n", "refuse", "**/.git", "on the host's file systems: a new git repository");
        fprintf(out, "  %-8s %-40s %s\n", "refuse", "**/{HEAD,objects,refs,commondir}",
                "on the host's file systems: what would make a directory a new git directory");
        fprintf(out, "  %-8s %-40s %s\n", "refuse", "GITDIR/{config,config.worktree,commondir,gitdir,hooks/**}",
                "of every git directory on the host's file systems: written, created or renamed onto");
        fprintf(out, "  %-8s %-40s %s\n", "refuse", "set-user-ID, set-group-ID",
                "chmod, open and mknod modes (seccomp), hard links to such files");
    }
}

/* The environment and the command. */
static void print_environment(FILE *out, const plan *p, char *const argv[])
{
    fprintf(out, "\nenvironment\n");
    for (size_t i = 0; i < p->env.n; i++)
        fprintf(out, "  %s\n", p->env.v[i]);
    if (argv && argv[0]) {
        fprintf(out, "\ncommand\n ");
        for (char *const *a = argv; *a; a++)
            fprintf(out, " %s", *a);
        fputc('\n', out);
    }
}

void explain_print(FILE *out, const struct cordon_policy *pol, const resolved *r, const plan *p, char *const argv[])
{
    print_policy(out, pol, r, p);
    print_rules(out, r);
    print_plan(out, p);
    print_creation_control(out, p);
    net_plan_explain(out, &p->net, pol->network);
    print_environment(out, p, argv);
}
