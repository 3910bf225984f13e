// SPDX-License-Identifier: Apache-2.0
/* `cordon explain --json`: what explain_print() says, as data (one JSON object). */
#include "plan/explain.h"

#include <string.h>

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

static const char *access_word(cordon_access a)
{
    return a == CORDON_ACCESS_NONE ? "deny" : a == CORDON_ACCESS_WRITE ? "write" : "read";
}

static json_t *policy_json(const struct cordon_policy *pol, const resolved *r, const plan *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "base", json_string(base_name(pol->base)));
    json_object_set_new(o, "network", json_string(network_name(pol->network)));
    json_object_set_new(o, "workspace", pol->no_workspace ? json_null() : str_or_null(r->workspace));
    json_object_set_new(o, "read_only", json_boolean(pol->read_only));
    json_object_set_new(o, "workspace_git_top", json_boolean(!pol->no_workspace && r->workspace_git_top));
    json_object_set_new(o, "cwd", str_or_null(p->cwd));
    json_object_set_new(o, "cwd_is_workspace", json_boolean(p->cwd_is_workspace));
    const char *home_kind = "private";
    for (size_t i = 0; p->home && i < p->n_ops; i++)
        if (p->ops[i].kind == PLAN_COW && strcmp(p->ops[i].dest, p->home) == 0)
            home_kind = "real-home-private-writes";
    json_object_set_new(o, "home", str_or_null(p->home));
    json_object_set_new(o, "home_kind", json_string(p->home ? home_kind : "environment"));
    json_object_set_new(o, "home_fallback", str_or_null(p->home_fallback));
    json_object_set_new(o, "tmpdir", str_or_null(p->tmpdir));
    json_object_set_new(o, "timeout", p->timeout > 0 ? json_real(p->timeout) : json_null());
    json_object_set_new(o, "proc", json_boolean(p->proc));
    json_object_set_new(o, "no_nested", json_boolean(pol->no_nested));
    json_object_set_new(o, "isolation", json_string(cordon_isolation_name(p->isolation)));
    json_t *lim = json_object();
    for (int i = 0; i < LIMITS_N; i++)
        json_object_set_new(lim, limit_name((cordon_limit)i),
                            p->limits.v[i] ? json_integer((json_int_t)p->limits.v[i]) : json_null());
    json_object_set_new(o, "limits", lim);
    /* --allow-socket: the host pathname sockets the command may reach (every other one
     * the sandbox did not bind is refused, doc/security.md) */
    json_t *socks = json_array();
    for (size_t i = 0; i < p->net.sockets.n; i++)
        json_array_append_new(socks, json_string(p->net.sockets.v[i]));
    json_object_set_new(o, "allowed_sockets", socks);
    return o;
}

static json_t *rules_json(const resolved *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_rules; i++) {
        const rrule *x = &r->rules[i];
        json_t *o = json_object();
        json_object_set_new(o, "access", json_string(access_word(x->access)));
        json_object_set_new(o, "path", json_string(x->path));
        json_object_set_new(o, "given", str_or_null(x->given));
        json_object_set_new(o, "source", str_or_null(x->source));
        json_object_set_new(o, "line", x->line > 0 ? json_integer(x->line) : json_null());
        json_object_set_new(o, "origin", json_string(origin_name(x->origin)));
        json_object_set_new(o, "type", json_string(ftype_name(x->type)));
        json_object_set_new(o, "overridden", json_boolean(x->shadowed));
        json_object_set_new(o, "symlink", str_or_null(x->symlink));
        json_array_append_new(a, o);
    }
    for (size_t i = 0; i < r->n_links; i++) {
        json_t *o = json_object();
        json_object_set_new(o, "access", json_string("link"));
        json_object_set_new(o, "path", json_string(r->links[i].path));
        json_object_set_new(o, "target", json_string(r->links[i].target));
        json_object_set_new(o, "source", json_string(r->links[i].source));
        json_array_append_new(a, o);
    }
    return a;
}

static json_t *plan_json(const plan *p)
{
    json_t *a = json_array();
    json_t *root = json_object();
    json_object_set_new(root, "kind", json_string(p->root_is_host ? "bind" : "tmpfs"));
    json_object_set_new(root, "dest", json_string("/"));
    json_object_set_new(root, "read_only", json_true());
    json_object_set_new(root, "why",
                        json_string(p->root_is_host ? "base host: the host root, whole, as the new root"
                                                    : "new root (read-only once built)"));
    json_array_append_new(a, root);
    for (size_t i = 0; i < p->n_ops; i++) {
        const plan_op *op = &p->ops[i];
        json_t *o = json_object();
        json_object_set_new(o, "kind", json_string(plan_kind_name(op->kind)));
        json_object_set_new(o, "dest", json_string(op->dest));
        if (op->src)
            json_object_set_new(o,
                                op->kind == PLAN_SYMLINK ? "target"
                                : op->kind == PLAN_FILE  ? "content"
                                                         : "src",
                                json_string(op->src));
        if (op->kind == PLAN_BIND || op->kind == PLAN_HOLD || op->kind == PLAN_HIDE)
            json_object_set_new(o, "read_only", json_boolean(op->kind != PLAN_BIND || op->read_only));
        if (op->kind == PLAN_BIND || op->kind == PLAN_HIDE)
            json_object_set_new(o, "is_dir", json_boolean(op->is_dir));
        if (op->kind == PLAN_BIND && op->pin)
            json_object_set_new(o, "pinned", json_true());
        if (op->kind == PLAN_HOLD)
            json_object_set_new(o, "from_view", json_boolean(op->from_view));
        if (op->kind == PLAN_TMPFS) {
            char mode[16];
            snprintf(mode, sizeof mode, "%04o", op->mode);
            json_object_set_new(o, "mode", json_string(mode));
        }
        json_object_set_new(o, "mounts", json_boolean(plan_op_mounts(op)));
        json_object_set_new(o, "why", str_or_null(op->why));
        json_array_append_new(a, o);
    }
    return a;
}

json_t *explain_json(const struct cordon_policy *pol, const resolved *r, const plan *p, char *const argv[])
{
    json_t *o = json_object();
    json_object_set_new(o, "policy", policy_json(pol, r, p));
    json_object_set_new(o, "rules", rules_json(r));
    json_t *notes = json_array();
    for (size_t i = 0; i < r->n_notes; i++) {
        json_t *n = json_object();
        json_object_set_new(n, "kind", json_string(r->notes[i].kind));
        json_object_set_new(n, "path", json_string(r->notes[i].path));
        json_object_set_new(n, "source", str_or_null(r->notes[i].source));
        json_object_set_new(n, "why", str_or_null(r->notes[i].why));
        json_array_append_new(notes, n);
    }
    json_object_set_new(o, "globs", notes);
    json_object_set_new(o, "plan", plan_json(p));
    /* the creation control's rules (supervise/creation.h): not mounts */
    json_t *cc = json_array();
    for (size_t i = 0; i < p->n_cc_rules; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "kind", json_string(plan_cc_kind_name(p->cc_rules[i].kind)));
        json_object_set_new(x, "path", json_string(p->cc_rules[i].path));
        json_object_set_new(x, "why", str_or_null(p->cc_rules[i].why));
        json_array_append_new(cc, x);
    }
    json_object_set_new(o, "creation_rules", cc);
    json_t *w = json_array();
    for (size_t i = 0; i < p->warnings.n; i++)
        json_array_append_new(w, json_string(p->warnings.v[i]));
    json_object_set_new(o, "warnings", w);
    json_t *e = json_array();
    for (size_t i = 0; i < p->env.n; i++)
        json_array_append_new(e, json_string(p->env.v[i]));
    json_object_set_new(o, "environment", e);
    json_t *c = json_array();
    for (char *const *a = argv; a && *a; a++)
        json_array_append_new(c, json_string(*a));
    if (!argv || !argv[0]) {
        json_decref(c);
        c = json_null();
    }
    json_object_set_new(o, "command", c);
    return o;
}
