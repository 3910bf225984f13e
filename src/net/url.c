// SPDX-License-Identifier: Apache-2.0
#include "net/url.h"

#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "util/strv.h"

/* The variables the Codex helper bridges (codex-rs/linux-sandbox, PROXY_ENV_KEYS), compared
 * without regard to case as it does, plus SOCKS_PROXY. */
static const char *const proxy_vars[] = {
    "HTTP_PROXY",       "HTTPS_PROXY",           "ALL_PROXY",
    "FTP_PROXY",        "SOCKS_PROXY",           "YARN_HTTP_PROXY",
    "YARN_HTTPS_PROXY", "NPM_CONFIG_HTTP_PROXY", "NPM_CONFIG_HTTPS_PROXY",
    "NPM_CONFIG_PROXY", "BUNDLE_HTTP_PROXY",     "BUNDLE_HTTPS_PROXY",
    "PIP_PROXY",        "DOCKER_HTTP_PROXY",     "DOCKER_HTTPS_PROXY",
};

bool proxy_var_name(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof proxy_vars / sizeof *proxy_vars; i++)
        if (strlen(proxy_vars[i]) == len && strncasecmp(proxy_vars[i], name, len) == 0)
            return true;
    return false;
}

static const struct {
    const char *name;
    uint16_t port;
} schemes[] = {
    {"http", 80},      {"https", 443},   {"socks", 1080},   {"socks4", 1080},
    {"socks4a", 1080}, {"socks5", 1080}, {"socks5h", 1080},
};

static bool loopback_host(const char *h)
{
    if (strcmp(h, "localhost") == 0)
        return true;
    struct sockaddr_storage sa;
    return net_host_is_ip(h, &sa, NULL) && net_addr_classify((struct sockaddr *)&sa) == NET_ADDR_LOOPBACK;
}

int proxy_url_parse(const char *value, proxy_url *u, const char **why)
{
    memset(u, 0, sizeof *u);
    size_t start = 0, end = strlen(value);
    while (start < end && (value[start] == ' ' || value[start] == '\t'))
        start++;
    while (end > start &&
           (value[end - 1] == ' ' || value[end - 1] == '\t' || value[end - 1] == '\n' || value[end - 1] == '\r'))
        end--;
    for (size_t i = start; i < end; i++)
        if ((unsigned char)value[i] < 0x21 || (unsigned char)value[i] == 0x7f)
            return *why = "it holds a space or a control character", -1;
    if (start == end)
        return *why = "it is empty", -1;
    const char *s = value + start, *e = value + end;
    const char *sep = NULL;
    for (const char *p = s; p + 2 < e; p++)
        if (p[0] == ':' && p[1] == '/' && p[2] == '/') {
            sep = p;
            break;
        }
    const char *auth = s;
    if (sep) {
        size_t sl = (size_t)(sep - s);
        if (sl == 0 || sl >= sizeof u->scheme)
            return *why = "its scheme is empty or too long", -1;
        for (size_t i = 0; i < sl; i++)
            u->scheme[i] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] - 'A' + 'a' : s[i]);
        u->scheme[sl] = '\0';
        bool known = false;
        for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++)
            if (strcmp(schemes[i].name, u->scheme) == 0) {
                known = true;
                u->port = schemes[i].port;
            }
        if (!known)
            return *why = "its scheme is not one of http, https, socks, socks4, socks4a, socks5, socks5h", -1;
        auth = sep + 3;
    } else {
        u->port = 80; /* a bare host:port is an HTTP proxy to curl, pip, npm and git */
    }
    const char *aend = auth;
    while (aend < e && *aend != '/' && *aend != '?' && *aend != '#')
        aend++;
    u->rest_off = (size_t)(aend - value);
    u->end_off = end;
    const char *at = NULL;
    for (const char *p = auth; p < aend; p++)
        if (*p == '@')
            at = p;
    const char *hs = auth;
    if (at) {
        u->userinfo_off = (size_t)(auth - value);
        u->userinfo_len = (size_t)(at - auth);
        hs = at + 1;
    }
    const char *he, *ps = NULL;
    if (hs < aend && *hs == '[') {
        he = memchr(hs, ']', (size_t)(aend - hs));
        if (!he)
            return *why = "an IPv6 address in it is not closed by ']'", -1;
        he++;
        if (he < aend) {
            if (*he != ':')
                return *why = "something other than ':PORT' follows its IPv6 address", -1;
            ps = he + 1;
        }
    } else {
        he = hs;
        while (he < aend && *he != ':')
            he++;
        if (he < aend)
            ps = he + 1;
    }
    if (he == hs)
        return *why = "it names no host", -1;
    if (net_host_normalize(hs, (size_t)(he - hs), u->host, why) < 0)
        return -1;
    if (ps) {
        unsigned long port = 0;
        if (ps == aend)
            return *why = "its port is empty", -1;
        for (const char *p = ps; p < aend; p++) {
            if (*p < '0' || *p > '9')
                return *why = "its port is not a number", -1;
            port = port * 10 + (unsigned long)(*p - '0');
            if (port > 65535)
                return *why = "its port is not between 1 and 65535", -1;
        }
        if (port == 0)
            return *why = "its port is not between 1 and 65535", -1;
        u->port = (uint16_t)port;
    }
    u->loopback = loopback_host(u->host);
    return 0;
}

char *proxy_url_rewrite(const char *value, const proxy_url *u, uint16_t port)
{
    return xasprintf("%s%s%.*s%s127.0.0.1:%u%.*s", u->scheme, u->scheme[0] ? "://" : "", (int)u->userinfo_len,
                     value + u->userinfo_off, u->userinfo_len ? "@" : "", (unsigned)port,
                     (int)(u->end_off - u->rest_off), value + u->rest_off);
}
