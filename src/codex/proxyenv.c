// SPDX-License-Identifier: Apache-2.0
/* Proxy mode's precondition, checked as the helper checks it before anything runs: the
 * proxy variables it bridges must name loopback endpoints (on the ports --managed-network
 * lists, when it lists any), and at least one must be set.  Pure: the environment is an
 * argument. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "codex/codex.h"
#include "util/err.h"

/* The variables Codex's helper rewrites (PROXY_ENV_KEYS), matched without regard to case
 * (http_proxy and HTTP_PROXY alike). */
static const char *const proxy_vars[] = {
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "FTP_PROXY",
    "YARN_HTTP_PROXY",
    "YARN_HTTPS_PROXY",
    "NPM_CONFIG_HTTP_PROXY",
    "NPM_CONFIG_HTTPS_PROXY",
    "NPM_CONFIG_PROXY",
    "BUNDLE_HTTP_PROXY",
    "BUNDLE_HTTPS_PROXY",
    "PIP_PROXY",
    "DOCKER_HTTP_PROXY",
    "DOCKER_HTTPS_PROXY",
};

static bool is_proxy_var(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof proxy_vars / sizeof *proxy_vars; i++)
        if (strlen(proxy_vars[i]) == len && strncasecmp(proxy_vars[i], name, len) == 0)
            return true;
    return false;
}

static unsigned default_port(const char *scheme, size_t n)
{
    if (n == 5 && strncasecmp(scheme, "https", 5) == 0)
        return 443;
    if (n >= 5 && strncasecmp(scheme, "socks", 5) == 0)
        return 1080;
    return 80;
}

bool cx_proxy_url(const char *url, bool *loopback, unsigned *port)
{
    *loopback = false;
    *port = 0;
    const char *p = strstr(url, "://");
    const char *scheme = url;
    size_t scheme_len = 0;
    if (p) {
        scheme_len = (size_t)(p - url);
        p += 3;
    } else {
        p = url; /* "127.0.0.1:3128": curl takes it as http:// */
    }
    /* authority: up to the first '/', '?' or '#' */
    size_t alen = strcspn(p, "/?#");
    const char *at = memchr(p, '@', alen);
    if (at) {
        alen -= (size_t)(at + 1 - p);
        p = at + 1;
    }
    char host[256];
    const char *colon;
    size_t hlen;
    if (alen > 0 && p[0] == '[') {
        const char *close = memchr(p, ']', alen);
        if (!close)
            return false;
        hlen = (size_t)(close - p - 1);
        if (hlen == 0 || hlen >= sizeof host)
            return false;
        memcpy(host, p + 1, hlen);
        colon = close + 1 < p + alen && close[1] == ':' ? close + 1 : NULL;
        if (close + 1 < p + alen && !colon)
            return false;
    } else {
        colon = memchr(p, ':', alen);
        hlen = colon ? (size_t)(colon - p) : alen;
        if (hlen == 0 || hlen >= sizeof host)
            return false;
        memcpy(host, p, hlen);
    }
    host[hlen] = '\0';
    if (colon) {
        size_t plen = (size_t)(p + alen - colon - 1);
        if (plen == 0 || plen > 5 || strspn(colon + 1, "0123456789") < plen)
            return false;
        char digits[8];
        memcpy(digits, colon + 1, plen);
        digits[plen] = '\0';
        unsigned long v = strtoul(digits, NULL, 10);
        if (v == 0 || v > 65535)
            return false;
        *port = (unsigned)v;
    } else {
        *port = default_port(scheme, scheme_len);
    }
    *loopback = strcasecmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 ||
                (strncmp(host, "127.", 4) == 0 && strspn(host, "0123456789.") == hlen);
    return true;
}

int cx_check_proxy_env(char *const *env, const cx_netctx *ctx, cordon_error *err)
{
    size_t found = 0;
    for (char *const *e = env; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || !is_proxy_var(*e, (size_t)(eq - *e)) || !eq[1])
            continue;
        int nlen = (int)(eq - *e);
        bool loopback;
        unsigned port;
        if (!cx_proxy_url(eq + 1, &loopback, &port) || !loopback)
            return err_set(err, CORDON_STAGE_USAGE, 0,
                           "proxy mode needs loopback proxy endpoints, and %.*s=%s is not one (proxy mode "
                           "reaches only proxies on this host's 127.0.0.1 or ::1): point it at a local proxy "
                           "or unset it",
                           nlen, *e, eq + 1);
        if (ctx && ctx->n_ports > 0) {
            bool listed = false;
            for (size_t i = 0; i < ctx->n_ports; i++)
                listed |= ctx->ports[i] == port;
            if (!listed)
                return err_set(err, CORDON_STAGE_USAGE, 0,
                               "%.*s=%s: port %u is not among the --managed-network loopbackPorts; the proxy "
                               "endpoint is outside the managed sandbox context",
                               nlen, *e, eq + 1, port);
        }
        found++;
    }
    if (found == 0)
        return err_set(err, CORDON_STAGE_USAGE, 0,
                       "proxy mode (--managed-network, --allow-network-for-proxy) needs proxy variables "
                       "(HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, ...) naming loopback proxies, and none is set: "
                       "nothing would be reachable, so cordon will not start the command");
    return 0;
}
