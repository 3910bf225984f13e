// SPDX-License-Identifier: Apache-2.0
/* The public setters of the network beyond none and host (policy.h, policy_net). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net/domain.h"
#include "policy/policy.h"
#include "util/err.h"
#include "util/strv.h"

/* Every setter: a NULL policy is an error, not a crash. */
#define NEED_POLICY(p, err)                                                            \
    do {                                                                               \
        if (!(p))                                                                      \
            return err_set(err, CORDON_STAGE_USAGE, EINVAL, "no policy given (NULL)"); \
    } while (0)

void policy_net_free(policy_net *n)
{
    strv_free(&n->allow);
    strv_free(&n->deny);
    strv_free(&n->hosts);
    strv_free(&n->dns);
    strv_free(&n->sockets);
    free(n->forward);
    free(n->publish);
    free(n->log);
    *n = (policy_net){0};
}

static bool in_strv(const strv *v, const char *s)
{
    for (size_t i = 0; i < v->n; i++)
        if (strcmp(v->v[i], s) == 0)
            return true;
    return false;
}

static int add_pattern(strv *v, const char *domain, const char *option, cordon_error *err)
{
    char *pat = net_pattern_normalize(domain, option, err);
    if (!pat)
        return -1;
    if (in_strv(v, pat))
        free(pat); /* given twice: once is enough */
    else
        strv_push(v, pat);
    return 0;
}

int cordon_policy_add_allowed_domain(cordon_policy *p, const char *domain, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (add_pattern(&p->net.allow, domain, "allowDomain", err) < 0)
        return -1;
    if (!p->network_set)
        p->network = CORDON_NETWORK_PROXY; /* a conflicting --network is reported by the plan */
    return 0;
}

int cordon_policy_add_denied_domain(cordon_policy *p, const char *domain, cordon_error *err)
{
    NEED_POLICY(p, err);
    return add_pattern(&p->net.deny, domain, "denyDomain", err);
}

int cordon_policy_add_host(cordon_policy *p, const char *spec, cordon_error *err)
{
    NEED_POLICY(p, err);
    const char *eq = spec ? strchr(spec, '=') : NULL;
    if (!eq || eq == spec || !eq[1])
        return err_opt(err, CORDON_STAGE_USAGE, 0, "addHost", "'%s' is not NAME=ADDRESS (e.g. db.internal=10.0.0.5)",
                       spec ? spec : "");
    char name[NET_HOST_MAX], addr[NET_HOST_MAX];
    const char *why;
    if (net_host_normalize(spec, (size_t)(eq - spec), name, &why) < 0)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "addHost", "'%s': the name: %s", spec, why);
    if (net_host_is_ip(name, NULL, NULL))
        return err_opt(err, CORDON_STAGE_USAGE, 0, "addHost", "'%s': the name is an address already", spec);
    if (net_host_normalize(eq + 1, strlen(eq + 1), addr, &why) < 0 || !net_host_is_ip(addr, NULL, NULL))
        return err_opt(err, CORDON_STAGE_USAGE, 0, "addHost", "'%s': '%s' is not an IPv4 or IPv6 address", spec,
                       eq + 1);
    size_t nl = strlen(name);
    for (size_t i = 0; i < p->net.hosts.n; i++)
        if (strncmp(p->net.hosts.v[i], name, nl) == 0 && p->net.hosts.v[i][nl] == '=')
            return err_opt(err, CORDON_STAGE_USAGE, 0, "addHost", "%s is given twice (%s and %s)", name,
                           p->net.hosts.v[i] + nl + 1, addr);
    strv_push(&p->net.hosts, xasprintf("%s=%s", name, addr));
    return 0;
}

int cordon_policy_add_dns_server(cordon_policy *p, const char *address, cordon_error *err)
{
    NEED_POLICY(p, err);
    const char *a = address ? address : "", *end = a + strlen(a), *port = NULL;
    char host[NET_HOST_MAX];
    const char *why = "not an IPv4 or IPv6 address";
    size_t hl;
    if (a[0] == '[') {
        const char *rb = strchr(a, ']');
        if (!rb || (rb[1] && rb[1] != ':'))
            goto bad;
        hl = (size_t)(rb + 1 - a);
        port = rb[1] ? rb + 2 : NULL;
    } else {
        const char *colon = strchr(a, ':');
        bool v6 = colon && strchr(colon + 1, ':');
        hl = colon && !v6 ? (size_t)(colon - a) : strlen(a);
        port = colon && !v6 ? colon + 1 : NULL;
    }
    if (net_host_normalize(a, hl, host, &why) < 0 || !net_host_is_ip(host, NULL, NULL))
        goto bad;
    unsigned long pn = 53;
    if (port) {
        char *e;
        errno = 0;
        pn = strtoul(port, &e, 10);
        if (port == end || *e || errno || pn < 1 || pn > 65535 || *port < '0' || *port > '9') {
            why = "its port is not between 1 and 65535";
            goto bad;
        }
    }
    if (p->net.dns.n >= 3)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "dnsServer", "at most three name servers");
    strv_push(&p->net.dns, xasprintf("%s %lu", host, pn));
    return 0;
bad:
    return err_opt(err, CORDON_STAGE_USAGE, 0, "dnsServer", "'%s': %s (give ADDRESS, ADDRESS:PORT or [IPv6]:PORT)", a,
                   why);
}

int cordon_policy_set_allow_unix_sockets(cordon_policy *p, bool allow, cordon_error *err)
{
    NEED_POLICY(p, err);
    p->net.allow_unix = allow;
    p->net.allow_unix_set = true;
    return 0;
}

int cordon_policy_add_allowed_socket(cordon_policy *p, const char *path, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (!path || path[0] != '/')
        return err_opt(err, CORDON_STAGE_USAGE, 0, "allowSocket", "'%s': give the socket's absolute path",
                       path ? path : "(null)");
    if (strlen(path) >= 4096)
        return err_opt(err, CORDON_STAGE_USAGE, ENAMETOOLONG, "allowSocket", "the path is too long");
    for (size_t i = 0; i < p->net.sockets.n; i++)
        if (strcmp(p->net.sockets.v[i], path) == 0)
            return 0;
    if (p->net.sockets.n >= 64)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "allowSocket", "at most 64 sockets");
    strv_push(&p->net.sockets, xstrdup(path));
    return 0;
}

static int check_port(unsigned port, const char *option, cordon_error *err)
{
    if (port < 1 || port > 65535)
        return err_opt(err, CORDON_STAGE_USAGE, 0, option, "port %u is not between 1 and 65535", port);
    return 0;
}

int cordon_policy_add_forwarded_port(cordon_policy *p, unsigned port, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (check_port(port, "forwardPort", err) < 0)
        return -1;
    for (size_t i = 0; i < p->net.n_forward; i++)
        if (p->net.forward[i] == port)
            return err_opt(err, CORDON_STAGE_USAGE, 0, "forwardPort", "port %u is forwarded twice", port);
    for (size_t i = 0; i < p->net.n_publish; i++)
        if (p->net.publish[i].inside == port)
            return err_opt(err, CORDON_STAGE_USAGE, 0, "forwardPort",
                           "port %u inside is published already; one port cannot carry both", port);
    size_t cap = p->net.n_forward;
    grow(&p->net.forward, &cap, p->net.n_forward, sizeof *p->net.forward);
    p->net.forward[p->net.n_forward++] = (unsigned short)port;
    return 0;
}

int cordon_policy_add_published_port(cordon_policy *p, unsigned port, unsigned host_port, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (host_port == 0)
        host_port = port;
    if (check_port(port, "publishPort", err) < 0 || check_port(host_port, "publishPort", err) < 0)
        return -1;
    for (size_t i = 0; i < p->net.n_publish; i++) {
        if (p->net.publish[i].inside == port)
            return err_opt(err, CORDON_STAGE_USAGE, 0, "publishPort", "port %u inside is published twice", port);
        if (p->net.publish[i].host == host_port)
            return err_opt(err, CORDON_STAGE_USAGE, 0, "publishPort", "host port %u is used twice", host_port);
    }
    for (size_t i = 0; i < p->net.n_forward; i++)
        if (p->net.forward[i] == port)
            return err_opt(err, CORDON_STAGE_USAGE, 0, "publishPort",
                           "port %u inside is forwarded in already; one port cannot carry both", port);
    size_t cap = p->net.n_publish;
    grow(&p->net.publish, &cap, p->net.n_publish, sizeof *p->net.publish);
    p->net.publish[p->net.n_publish++] = (policy_port){(unsigned short)port, (unsigned short)host_port};
    return 0;
}

/* A port number as written: digits only, 1..65535. */
static int parse_port(const char *s, size_t n, const char *option, const char *spec, unsigned *out, cordon_error *err)
{
    unsigned long v = 0;
    if (n == 0 || n > 5)
        goto bad;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            goto bad;
        v = v * 10 + (unsigned long)(s[i] - '0');
    }
    if (v < 1 || v > 65535)
        goto bad;
    *out = (unsigned)v;
    return 0;
bad:
    if (s == spec && n == strlen(spec))
        return err_opt(err, CORDON_STAGE_USAGE, 0, option, "'%s' is not a port between 1 and 65535", spec);
    return err_opt(err, CORDON_STAGE_USAGE, 0, option, "'%s': '%.*s' is not a port between 1 and 65535", spec, (int)n,
                   s);
}

int cordon_policy_add_forwarded_port_string(cordon_policy *p, const char *spec, cordon_error *err)
{
    NEED_POLICY(p, err);
    unsigned port = 0;
    if (!spec)
        spec = "";
    if (parse_port(spec, strlen(spec), "forwardPort", spec, &port, err) < 0)
        return -1;
    return cordon_policy_add_forwarded_port(p, port, err);
}

int cordon_policy_add_published_port_string(cordon_policy *p, const char *spec, cordon_error *err)
{
    NEED_POLICY(p, err);
    unsigned port = 0, host = 0;
    if (!spec)
        spec = "";
    const char *c1 = strchr(spec, ':');
    const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c1) /* PORT: the same port on both sides, as --forward-port PORT */
        return parse_port(spec, strlen(spec), "publishPort", spec, &port, err) < 0
                   ? -1
                   : cordon_policy_add_published_port(p, port, 0, err);
    if (!c2) {
        /* A:B reads HOST:CONTAINER to a Docker user (-p 8080:3000) and read PORT:HOSTPORT
         * to cordon before: the same numbers would publish the other way round.  Only the
         * form that means one thing either way is taken; the other is refused with both
         * readings spelt out (README, "Network"). */
        unsigned a = 0, b = 0;
        if (parse_port(spec, (size_t)(c1 - spec), "publishPort", spec, &a, err) < 0 ||
            parse_port(c1 + 1, strlen(c1 + 1), "publishPort", spec, &b, err) < 0)
            return -1;
        if (a == b)
            return cordon_policy_add_published_port(p, a, 0, err);
        return err_opt(err, CORDON_STAGE_USAGE, 0, "publishPort",
                       "'%s' is ambiguous: Docker's order (HOST:CONTAINER) publishes the command's port %u on the "
                       "host's %u, cordon's former PORT:HOSTPORT the reverse; name the host's address first, as "
                       "Docker does: '127.0.0.1:%u:%u' (the host's %u to the command's %u) or '127.0.0.1:%u:%u' (the "
                       "host's %u to the command's %u)",
                       spec, b, a, a, b, a, b, b, a, b, a);
    }
    /* ADDRESS:HOSTPORT:PORT, Docker's full form; cordon publishes on the loopback only */
    size_t alen = (size_t)(c1 - spec);
    if (!((alen == 9 && strncmp(spec, "127.0.0.1", 9) == 0) || (alen == 9 && strncmp(spec, "localhost", 9) == 0)))
        return err_opt(err, CORDON_STAGE_USAGE, 0, "publishPort",
                       "'%s': '%.*s' is not the host's loopback; cordon publishes on 127.0.0.1 only "
                       "(127.0.0.1:HOSTPORT:PORT)",
                       spec, (int)alen, spec);
    if (parse_port(c1 + 1, (size_t)(c2 - c1 - 1), "publishPort", spec, &host, err) < 0 ||
        parse_port(c2 + 1, strlen(c2 + 1), "publishPort", spec, &port, err) < 0)
        return -1;
    return cordon_policy_add_published_port(p, port, host == port ? 0 : host, err);
}

int cordon_policy_set_network_log(cordon_policy *p, const char *file, cordon_error *err)
{
    NEED_POLICY(p, err);
    if (!file || !*file)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "networkLog", "empty file name");
    free(p->net.log);
    p->net.log = xstrdup(file);
    return 0;
}
