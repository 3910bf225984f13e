// SPDX-License-Identifier: Apache-2.0
/* Proxy URLs as the proxy variables hold them (HTTPS_PROXY=http://127.0.0.1:3128 ...),
 * for --network proxy's bridges.  Pure. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/domain.h"

typedef struct proxy_url {
    char scheme[16];                   /* lower case; "" when the value had none (read as http) */
    char host[NET_HOST_MAX];           /* normalised (net_host_normalize) */
    uint16_t port;                     /* given, or the scheme's default (http 80, https 443, socks 1080) */
    size_t userinfo_off, userinfo_len; /* "user:pass" in the value, without the '@' */
    size_t rest_off, end_off;          /* the path, query or fragment (maybe empty), blanks trimmed */
    bool loopback;                     /* localhost, 127.0.0.0/8 or ::1 */
} proxy_url;

/* Parse a proxy variable's value (surrounding blanks ignored).  Returns 0, or -1 with
 * *why set (a static phrase) for a value that is not a URL cordon can bridge: an
 * unknown scheme, no host, a bad port. */
int proxy_url_parse(const char *value, proxy_url *u, const char **why);

/* The same value pointing at 127.0.0.1:port instead (scheme, user information, path and
 * query kept).  Returns a new string. */
char *proxy_url_rewrite(const char *value, const proxy_url *u, uint16_t port);

/* Is NAME (any case) one of the variables that name a proxy (HTTP_PROXY, npm_config_proxy,
 * ...)?  NO_PROXY is not. */
bool proxy_var_name(const char *name, size_t len);
