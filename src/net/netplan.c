// SPDX-License-Identifier: Apache-2.0
#include "net/netplan.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/domain.h"
#include "net/url.h"
#include "policy/policy.h"
#include "util/err.h"
#include "util/strv.h"

void net_plan_free(net_plan *np)
{
    for (size_t i = 0; i < np->n_listen; i++)
        free(np->listen[i].what);
    free(np->listen);
    free(np->publish);
    strv_free(&np->allow);
    strv_free(&np->deny);
    for (size_t i = 0; i < np->n_hosts; i++)
        free(np->hosts[i].name);
    free(np->hosts);
    free(np->log);
    strv_free(&np->sockets);
    *np = (net_plan){0};
}

static void copy_strv(strv *to, const strv *from)
{
    for (size_t i = 0; i < from->n; i++)
        strv_push(to, xstrdup(from->v[i]));
    if (!to->v)
        strv_push(to, NULL), to->n = 0; /* NULL-terminated even when empty */
}

static bool port_used(const net_plan *np, const struct cordon_policy *pol, unsigned port)
{
    for (size_t i = 0; i < np->n_listen; i++)
        if (np->listen[i].port == port)
            return true;
    for (size_t i = 0; i < pol->net.n_forward; i++)
        if (pol->net.forward[i] == port)
            return true;
    for (size_t i = 0; i < pol->net.n_publish; i++)
        if (pol->net.publish[i].inside == port)
            return true;
    return false;
}

/* The port wanted, or (taken by a forwarded or published port, or another listener) the
 * first free one from 30000 on: the namespace is new, nothing else listens there. */
static uint16_t pick_port(const net_plan *np, const struct cordon_policy *pol, unsigned want)
{
    if (!port_used(np, pol, want))
        return (uint16_t)want;
    for (unsigned p = 30000; p < 65535; p++)
        if (!port_used(np, pol, p))
            return (uint16_t)p;
    return 0; /* unreachable: at most a few hundred ports are in use */
}

static net_listen *add_listen(net_plan *np, net_listen_kind kind, uint16_t port, char *what)
{
    size_t cap = np->n_listen;
    grow(&np->listen, &cap, np->n_listen, sizeof *np->listen);
    net_listen *l = &np->listen[np->n_listen++];
    *l = (net_listen){.kind = kind, .port = port, .what = what};
    return l;
}

static void endpoint_add(net_endpoint *e, const char *ip, uint16_t port)
{
    if (e->n >= NET_DNS_MAX)
        return;
    struct sockaddr_storage *ss = &e->addr[e->n];
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons(port);
        e->len[e->n++] = sizeof *s4;
    } else if (inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons(port);
        e->len[e->n++] = sizeof *s6;
    }
}

/* One bridge per proxy: "localhost:P" (127.0.0.1, then ::1) and "127.0.0.1:P" are one. */
static bool same_endpoint(const net_endpoint *a, const net_endpoint *b)
{
    return a->n && b->n && a->len[0] == b->len[0] && memcmp(&a->addr[0], &b->addr[0], a->len[0]) == 0;
}

static void set_env(strv *env, const char *name, const char *value)
{
    size_t n = strlen(name);
    char *entry = xasprintf("%s=%s", name, value);
    for (size_t i = 0; i < env->n; i++) {
        if (strncmp(env->v[i], name, n) == 0 && env->v[i][n] == '=') {
            free(env->v[i]);
            env->v[i] = entry;
            return;
        }
    }
    strv_push(env, entry);
}

static bool socks_var(const char *name, size_t n)
{
    return (n == 9 && strncasecmp(name, "ALL_PROXY", 9) == 0) || (n == 11 && strncasecmp(name, "SOCKS_PROXY", 11) == 0);
}

/* --allow-domain: every proxy variable names cordon's proxy; the standard ones and those
 * of npm, yarn and pip are set (git, curl and Python read http_proxy/https_proxy). */
static void proxy_env(strv *env, uint16_t port)
{
    char *http = xasprintf("http://127.0.0.1:%u", (unsigned)port);
    char *socks = xasprintf("socks5h://127.0.0.1:%u", (unsigned)port);
    for (size_t i = 0; i < env->n; i++) {
        const char *eq = strchr(env->v[i], '=');
        size_t n = eq ? (size_t)(eq - env->v[i]) : 0;
        if (eq && proxy_var_name(env->v[i], n)) {
            char *entry = xasprintf("%.*s=%s", (int)n, env->v[i], socks_var(env->v[i], n) ? socks : http);
            free(env->v[i]);
            env->v[i] = entry;
        }
    }
    static const char *const http_vars[] = {"HTTP_PROXY",      "http_proxy",       "HTTPS_PROXY",
                                            "https_proxy",     "npm_config_proxy", "npm_config_https_proxy",
                                            "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "PIP_PROXY"};
    for (size_t i = 0; i < sizeof http_vars / sizeof *http_vars; i++)
        set_env(env, http_vars[i], http);
    set_env(env, "ALL_PROXY", socks);
    set_env(env, "all_proxy", socks);
    set_env(env, "NO_PROXY", "localhost,127.0.0.1,::1");
    set_env(env, "no_proxy", "localhost,127.0.0.1,::1");
    free(http);
    free(socks);
}

/* --network proxy without --allow-domain: bridge every loopback proxy the variables name. */
static int bridge_env(const struct cordon_policy *pol, strv *env, net_plan *np, cordon_error *err)
{
    bool any_proxy_var = false;
    for (size_t i = 0; i < env->n; i++) {
        const char *eq = strchr(env->v[i], '=');
        size_t n = eq ? (size_t)(eq - env->v[i]) : 0;
        if (!eq || !proxy_var_name(env->v[i], n))
            continue;
        const char *value = eq + 1;
        if (strspn(value, " \t") == strlen(value))
            continue; /* an empty variable names no proxy */
        any_proxy_var = true;
        proxy_url u;
        const char *why;
        if (proxy_url_parse(value, &u, &why) < 0)
            return err_opt(err, CORDON_STAGE_USAGE, 0, "network", "the proxy network: %.*s='%s' cannot be bridged: %s",
                           (int)n, env->v[i], value, why);
        if (!u.loopback)
            return err_opt(err, CORDON_STAGE_USAGE, 0, "network",
                           "the proxy network: %.*s='%s' names a proxy that is not on this host's loopback; only "
                           "loopback proxies (127.0.0.1, ::1, localhost) are bridged into the sandbox: run a local "
                           "proxy, set %.*s empty for the command, or allow domains through cordon's own proxy",
                           (int)n, env->v[i], value, (int)n, env->v[i]);
        net_endpoint to = {0};
        if (strcmp(u.host, "localhost") == 0) {
            endpoint_add(&to, "127.0.0.1", u.port);
            endpoint_add(&to, "::1", u.port);
        } else {
            endpoint_add(&to, u.host, u.port);
        }
        net_listen *l = NULL;
        for (size_t k = 0; k < np->n_listen; k++)
            if (np->listen[k].kind == NET_LISTEN_BRIDGE && same_endpoint(&np->listen[k].to, &to))
                l = &np->listen[k];
        if (l) {
            if (to.n > l->to.n)
                l->to = to; /* localhost's fallback to ::1 */
            char *what = xasprintf("%s %.*s", l->what, (int)n, env->v[i]);
            free(l->what);
            l->what = what;
        } else {
            l = add_listen(np, NET_LISTEN_BRIDGE, pick_port(np, pol, u.port), xasprintf("%.*s", (int)n, env->v[i]));
            l->to = to;
        }
        char *nv = proxy_url_rewrite(value, &u, l->port);
        char *entry = xasprintf("%.*s=%s", (int)n, env->v[i], nv);
        free(nv);
        free(env->v[i]);
        env->v[i] = entry;
    }
    if (np->n_listen == 0)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "network",
                       "the proxy network: %s, and no domain is allowed through cordon's own proxy, so nothing "
                       "could get out; pass the proxy variables to the command (keep HTTPS_PROXY from the "
                       "caller's environment, or set it to http://127.0.0.1:PORT), or allow some domains "
                       "(example.com)",
                       any_proxy_var ? "no proxy variable names a loopback proxy"
                                     : "the command gets no proxy variable (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, ...)");
    return 0;
}

static bool loopback_name(const char *h)
{
    size_t n = strlen(h);
    return strcmp(h, "localhost") == 0 || (n > 10 && strcmp(h + n - 10, ".localhost") == 0) ||
           strncmp(h, "127.", 4) == 0 || strcmp(h, "::1") == 0 || strcmp(h, "[::1]") == 0;
}

static void no_proxy_entry(const struct cordon_policy *pol, const net_plan *np, const char *var, const char *entry,
                           strv *warnings)
{
    char host[NET_HOST_MAX];
    snprintf(host, sizeof host, "%s", entry);
    /* ".example.com" and "*.example.com" are example.com's subdomains to curl and Python;
     * ":PORT" narrows the entry to a port */
    char *h = host;
    if (h[0] == '*' && h[1] == '.')
        h += 2;
    else if (h[0] == '.')
        h++;
    char *colon = strrchr(h, ':');
    if (colon && h[0] != '[' && strchr(h, ':') == colon)
        *colon = '\0';
    if (!*h)
        return;
    if (np->proxy && pol->net.allow.n) {
        for (size_t i = 0; i < pol->net.allow.n; i++) {
            const char *pat = pol->net.allow.v[i];
            if (strcmp(h, "*") != 0 && net_pattern_match(pat, h) == NET_MATCH_NONE && strcmp(pat, h) != 0)
                continue;
            if (loopback_name(h))
                strv_push(warnings,
                          xasprintf("%s names %s, so the command's HTTP clients connect to it directly, to the "
                                    "sandbox's own loopback, and never through cordon's proxy that --allow-domain %s "
                                    "opens: the host's %s is not reached that way; --forward-port PORT makes a port of "
                                    "the host's loopback reachable inside",
                                    var, entry, pat, h));
            else
                strv_push(warnings, xasprintf("%s names %s, which --allow-domain %s allows: the command's HTTP clients "
                                              "connect to it directly, not through cordon's proxy, and the sandbox's "
                                              "network has no other way out",
                                              var, entry, pat));
            return;
        }
        return;
    }
    if (np->proxy && !loopback_name(h))
        strv_push(warnings, xasprintf("%s names %s: the command's clients connect to it directly instead of through "
                                      "the proxy, and the sandbox's network has no other way out (the connection "
                                      "fails); remove it from %s",
                                      var, strcmp(h, "*") == 0 ? "* (every host)" : entry, var));
}

void net_plan_no_proxy_warnings(const struct cordon_policy *pol, const strv *env, const net_plan *np, strv *warnings)
{
    if (!np->proxy)
        return;
    strv seen = {0};
    for (size_t i = 0; i < env->n; i++) {
        const char *v = env->v[i];
        const char *var = strncmp(v, "NO_PROXY=", 9) == 0   ? "NO_PROXY"
                          : strncmp(v, "no_proxy=", 9) == 0 ? "no_proxy"
                                                            : NULL;
        if (!var)
            continue;
        char *list = xstrdup(v + 9), *save = NULL;
        for (char *e = strtok_r(list, ", \t", &save); e; e = strtok_r(NULL, ", \t", &save)) {
            if (strv_contains(&seen, e))
                continue; /* NO_PROXY and no_proxy name it both: said once */
            strv_push(&seen, xstrdup(e));
            no_proxy_entry(pol, np, var, e, warnings);
        }
        free(list);
    }
    strv_free(&seen);
}

int net_plan_build(const struct cordon_policy *pol, strv *env, net_plan *out, cordon_error *err)
{
    *out = (net_plan){0};
    const policy_net *n = &pol->net;
    cordon_network net = pol->network;
    const char *mode = net == CORDON_NETWORK_HOST ? "host" : "none";
    if (n->allow.n && net != CORDON_NETWORK_PROXY)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "allowDomain",
                       "allowed domains need the proxy network (which they imply), not the network '%s'", mode);
    if (n->deny.n && !n->allow.n)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "denyDomain",
                       "denied domains only narrow the allowed ones: name the domains to allow");
    if ((n->hosts.n || n->dns.n) && !n->allow.n)
        return err_opt(err, CORDON_STAGE_USAGE, 0, n->hosts.n ? "addHost" : "dnsServer",
                       "%s tells cordon's filtering proxy where a name is; it needs allowed domains",
                       n->hosts.n ? "a host entry" : "a name server");
    if ((n->n_forward || n->n_publish) && net == CORDON_NETWORK_HOST)
        return err_opt(err, CORDON_STAGE_USAGE, 0, n->n_forward ? "forwardPort" : "publishPort",
                       "%s ports need the sandbox's own network (none or proxy): with the host's network the "
                       "command shares the host's ports already",
                       n->n_forward ? "forwarded" : "published");
    if (n->log && net != CORDON_NETWORK_PROXY && !n->n_forward && !n->n_publish)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "networkLog",
                       "the network log records what passes cordon's proxy, bridges and forwarded ports; with "
                       "the network '%s' and no forwarded or published port there is nothing to record",
                       mode);

    out->proxy = net == CORDON_NETWORK_PROXY;
    out->allow_unix = n->allow_unix;
    copy_strv(&out->sockets, &n->sockets);
    if (out->proxy && n->allow.n) {
        uint16_t port = pick_port(out, pol, NET_PROXY_PORT);
        add_listen(out, NET_LISTEN_PROXY, port, xstrdup("--allow-domain"));
        copy_strv(&out->allow, &n->allow);
        copy_strv(&out->deny, &n->deny);
        for (size_t i = 0; i < n->hosts.n; i++) {
            const char *eq = strchr(n->hosts.v[i], '=');
            size_t cap = out->n_hosts;
            grow(&out->hosts, &cap, out->n_hosts, sizeof *out->hosts);
            net_hostent *h = &out->hosts[out->n_hosts++];
            *h = (net_hostent){.name = xstrndup(n->hosts.v[i], (size_t)(eq - n->hosts.v[i]))};
            net_host_is_ip(eq + 1, &h->addr, &h->len);
        }
        for (size_t i = 0; i < n->dns.n; i++) {
            char ip[NET_HOST_MAX];
            unsigned port_ = 53;
            if (sscanf(n->dns.v[i], "%255s %u", ip, &port_) == 2)
                endpoint_add(&out->dns, ip, (uint16_t)port_);
        }
        proxy_env(env, port);
    } else if (out->proxy && bridge_env(pol, env, out, err) < 0) {
        net_plan_free(out);
        return -1;
    }
    for (size_t i = 0; i < n->n_forward; i++) {
        net_listen *l =
            add_listen(out, NET_LISTEN_FORWARD, n->forward[i], xasprintf("--forward-port %u", n->forward[i]));
        endpoint_add(&l->to, "127.0.0.1", n->forward[i]);
    }
    if (n->n_publish) {
        out->publish = xcalloc(n->n_publish, sizeof *out->publish);
        for (size_t i = 0; i < n->n_publish; i++)
            out->publish[i] = (net_publish){n->publish[i].inside, n->publish[i].host};
        out->n_publish = n->n_publish;
    }
    if (out->n_listen > NET_MAX_LISTEN || out->n_publish > NET_MAX_LISTEN) {
        net_plan_free(out);
        return err_opt(err, CORDON_STAGE_USAGE, 0, out->n_publish > NET_MAX_LISTEN ? "publishPort" : "forwardPort",
                       "more than %d forwarded or published ports", NET_MAX_LISTEN);
    }
    out->log = n->log ? xstrdup(n->log) : NULL;
    out->active = out->n_listen || out->n_publish;
    return 0;
}

static const char *endpoint_str(const net_endpoint *e, int i, char *buf, size_t n)
{
    char a[64];
    const struct sockaddr *sa = (const struct sockaddr *)&e->addr[i];
    unsigned port = ntohs(sa->sa_family == AF_INET ? ((const struct sockaddr_in *)(const void *)sa)->sin_port
                                                   : ((const struct sockaddr_in6 *)(const void *)sa)->sin6_port);
    net_addr_str(sa, a, sizeof a);
    snprintf(buf, n, sa->sa_family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, port);
    return buf;
}

void net_plan_explain(FILE *out, const net_plan *np, cordon_network network)
{
    if (!np->active && network != CORDON_NETWORK_PROXY && !np->sockets.n)
        return;
    fprintf(out, "\nnetwork\n");
    /* the pathname sockets the sandbox did not bind are refused but these (supervise/sockets.c) */
    for (size_t i = 0; i < np->sockets.n; i++)
        fprintf(out, "  socket   %s  (--allow-socket: a host Unix socket the command may connect to)\n",
                np->sockets.v[i]);
    if (!np->active && network != CORDON_NETWORK_PROXY)
        return;
    for (size_t i = 0; i < np->n_listen; i++) {
        const net_listen *l = &np->listen[i];
        char inside[48];
        snprintf(inside, sizeof inside, l->kind == NET_LISTEN_FORWARD ? "127.0.0.1:%u [::1]" : "127.0.0.1:%u",
                 (unsigned)l->port);
        if (l->kind == NET_LISTEN_PROXY) {
            fprintf(out, "  proxy    %-21s cordon's filtering proxy: HTTP, CONNECT and SOCKS5 (the proxy variables)\n",
                    inside);
            continue;
        }
        char to[80], to2[80] = "";
        endpoint_str(&l->to, 0, to, sizeof to);
        if (l->to.n > 1) {
            char b[72];
            snprintf(to2, sizeof to2, " (or %s)", endpoint_str(&l->to, 1, b, sizeof b));
        }
        fprintf(out, "  %-8s %-21s -> host %s%s  [%s]\n", l->kind == NET_LISTEN_BRIDGE ? "bridge" : "forward", inside,
                to, to2, l->what);
    }
    for (size_t i = 0; i < np->n_publish; i++)
        fprintf(out, "  publish  host 127.0.0.1:%-11u -> 127.0.0.1:%u inside  [--publish-port]\n",
                (unsigned)np->publish[i].host, (unsigned)np->publish[i].inside);
    for (size_t i = 0; i < np->allow.n; i++)
        fprintf(out, "  allow    %s\n", np->allow.v[i]);
    for (size_t i = 0; i < np->deny.n; i++)
        fprintf(out, "  deny     %s  (checked first)\n", np->deny.v[i]);
    for (size_t i = 0; i < np->n_hosts; i++) {
        char a[64];
        fprintf(out, "  host     %s = %s  (--add-host)\n", np->hosts[i].name,
                net_addr_str((const struct sockaddr *)&np->hosts[i].addr, a, sizeof a));
    }
    for (int i = 0; i < np->dns.n; i++) {
        char b[80];
        fprintf(out, "  dns      %s  (--dns-server)\n", endpoint_str(&np->dns, i, b, sizeof b));
    }
    if (np->allow.n)
        fprintf(out, "  refused  loopback, link-local, private, shared, multicast and reserved addresses, unless "
                     "named exactly\n");
    if (network == CORDON_NETWORK_PROXY)
        fprintf(out, "  sockets  %s\n",
                np->allow_unix
                    ? "AF_INET, AF_INET6 and AF_UNIX (--allow-unix-sockets)"
                    : "AF_INET and AF_INET6 only, and AF_UNIX socket pairs (--allow-unix-sockets: AF_UNIX too)");
    if (np->log)
        fprintf(out, "  log      %s (JSON lines, appended)\n", np->log);
}
