// SPDX-License-Identifier: Apache-2.0
/* The plan made final (plan.h, plan_seal) and the proof that it stays so: a hash over
 * every field a later stage reads, taken when the plan is sealed and taken again by the
 * command's process just before the exec (supervise/child.c).  The hash walks the plan
 * field by field (never a whole struct: no padding bytes) and allocates nothing, so that
 * a process cloned from a multi-threaded caller can take it. */
#include <stdint.h>
#include <string.h>

#include "plan/plan.h"

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME  0x100000001b3ULL

static void mix(uint64_t *h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= FNV_PRIME;
    }
}

#define MIX(h, v) mix((h), &(v), sizeof(v))

/* A string with its length, so that NULL, "" and two strings run together all differ. */
static void mix_str(uint64_t *h, const char *s)
{
    uint64_t n = s ? strlen(s) + 1 : 0;
    MIX(h, n);
    if (s)
        mix(h, s, n);
}

static void mix_strv(uint64_t *h, const strv *s)
{
    uint64_t n = s->n;
    MIX(h, n);
    for (size_t i = 0; i < s->n; i++)
        mix_str(h, s->v[i]);
}

static void mix_bool(uint64_t *h, bool b)
{
    unsigned char c = b;
    MIX(h, c);
}

static void mix_op(uint64_t *h, const plan_op *op)
{
    MIX(h, op->kind);
    mix_str(h, op->dest);
    mix_str(h, op->src);
    mix_bool(h, op->read_only);
    mix_bool(h, op->is_dir);
    mix_bool(h, op->pin);
    MIX(h, op->dev);
    MIX(h, op->ino);
    MIX(h, op->mode);
    MIX(h, op->size);
    mix_str(h, op->why);
    mix_str(h, op->upper);
    mix_str(h, op->work);
    mix_bool(h, op->in_view);
    mix_bool(h, op->from_view);
    mix_bool(h, op->user);
}

static void mix_endpoint(uint64_t *h, const net_endpoint *e)
{
    MIX(h, e->n);
    for (int i = 0; i < e->n && i < NET_DNS_MAX; i++) {
        MIX(h, e->len[i]);
        mix(h, &e->addr[i], e->len[i] <= sizeof e->addr[i] ? e->len[i] : sizeof e->addr[i]);
    }
}

static void mix_net(uint64_t *h, const net_plan *n)
{
    mix_bool(h, n->active);
    mix_bool(h, n->proxy);
    mix_bool(h, n->allow_unix);
    MIX(h, n->n_listen);
    for (size_t i = 0; i < n->n_listen; i++) {
        MIX(h, n->listen[i].kind);
        MIX(h, n->listen[i].port);
        mix_endpoint(h, &n->listen[i].to);
        mix_str(h, n->listen[i].what);
    }
    MIX(h, n->n_publish);
    for (size_t i = 0; i < n->n_publish; i++) {
        MIX(h, n->publish[i].inside);
        MIX(h, n->publish[i].host);
    }
    mix_strv(h, &n->allow);
    mix_strv(h, &n->deny);
    MIX(h, n->n_hosts);
    for (size_t i = 0; i < n->n_hosts; i++) {
        mix_str(h, n->hosts[i].name);
        MIX(h, n->hosts[i].len);
        mix(h, &n->hosts[i].addr,
            n->hosts[i].len <= sizeof n->hosts[i].addr ? n->hosts[i].len : sizeof n->hosts[i].addr);
    }
    mix_endpoint(h, &n->dns);
    mix_str(h, n->log);
    mix_strv(h, &n->sockets);
}

uint64_t plan_hash(const plan *p)
{
    uint64_t h = FNV_OFFSET;
    mix_bool(&h, p->root_is_host);
    MIX(&h, p->root_dev);
    MIX(&h, p->root_ino);
    MIX(&h, p->n_ops);
    for (size_t i = 0; i < p->n_ops; i++)
        mix_op(&h, &p->ops[i]);
    MIX(&h, p->n_cc_rules);
    for (size_t i = 0; i < p->n_cc_rules; i++) {
        MIX(&h, p->cc_rules[i].kind);
        mix_str(&h, p->cc_rules[i].path);
        mix_str(&h, p->cc_rules[i].why);
    }
    mix_str(&h, p->home);
    mix_str(&h, p->home_fallback);
    mix_str(&h, p->tmpdir);
    mix_str(&h, p->cwd);
    mix_bool(&h, p->cwd_is_workspace);
    MIX(&h, p->network);
    mix_bool(&h, p->proc);
    mix_bool(&h, p->inherit_pid_ns);
    for (size_t i = 0; i < sizeof p->limits.v / sizeof *p->limits.v; i++)
        MIX(&h, p->limits.v[i]);
    mix_bool(&h, p->no_nested);
    mix_bool(&h, p->bare);
    MIX(&h, p->isolation);
    MIX(&h, p->n_rules);
    for (size_t i = 0; i < p->n_rules; i++) {
        mix_str(&h, p->rules[i].path);
        MIX(&h, p->rules[i].access);
        mix_bool(&h, p->rules[i].exists);
        mix_bool(&h, p->rules[i].is_dir);
        mix_str(&h, p->rules[i].why);
    }
    mix_bool(&h, p->list_root);
    mix_net(&h, &p->net);
    mix_strv(&h, &p->warnings);
    MIX(&h, p->timeout);
    mix_strv(&h, &p->env);
    mix_strv(&h, &p->env_home_fallback);
    return h | 1; /* never 0, which means "not sealed" */
}

void plan_seal(plan *p)
{
    /* The environment for a PLAN_COW home the kernel would not overlay (known only inside,
     * sandbox/root.c): the same, with HOME at the fallback. */
    strv_free(&p->env_home_fallback);
    if (p->home_fallback) {
        strv e = {0};
        strv_push(&e, NULL);
        e.n = 0; /* an empty vector is still NULL-terminated */
        for (size_t i = 0; i < p->env.n; i++)
            strv_push(&e, strncmp(p->env.v[i], "HOME=", 5) == 0 ? xasprintf("HOME=%s", p->home_fallback)
                                                                : xstrdup(p->env.v[i]));
        p->env_home_fallback = e;
    }
    p->sealed = plan_hash(p);
}

bool plan_intact(const plan *p)
{
    return p->sealed != 0 && plan_hash(p) == p->sealed;
}
