// SPDX-License-Identifier: Apache-2.0
#include "net/domain.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"
#include "util/strv.h"

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool label_char(char c)
{
    return (c >= 'a' && c <= 'z') || is_digit(c) || c == '-' || c == '_';
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* An IPv6 literal (no brackets, no zone) in its canonical text form. */
static bool ipv6_canonical(const char *s, char out[NET_HOST_MAX])
{
    struct in6_addr a;
    if (strchr(s, '%') || inet_pton(AF_INET6, s, &a) != 1)
        return false;
    return inet_ntop(AF_INET6, &a, out, NET_HOST_MAX) != NULL;
}

int net_host_normalize(const char *in, size_t len, char out[NET_HOST_MAX], const char **why)
{
    char buf[NET_HOST_MAX];
    if (len == 0)
        return *why = "the host is empty", -1;
    if (len >= sizeof buf)
        return *why = "the host is longer than 253 bytes", -1;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c <= ' ' || c >= 0x7f)
            return *why = "the host holds a space, a control character or a non-ASCII byte", -1;
        buf[i] = lower((char)c);
    }
    buf[len] = '\0';
    if (buf[0] == '[') {
        if (len < 3 || buf[len - 1] != ']')
            return *why = "an IPv6 literal must be closed by ']'", -1;
        buf[len - 1] = '\0';
        if (!ipv6_canonical(buf + 1, out))
            return *why = "not a valid IPv6 address between '[' and ']'", -1;
        return 0;
    }
    if (strchr(buf, ':')) {
        if (!ipv6_canonical(buf, out))
            return *why = "a ':' in a host that is not an IPv6 address", -1;
        return 0;
    }
    if (len > 1 && buf[len - 1] == '.')
        buf[--len] = '\0';
    struct in_addr a4;
    if (inet_pton(AF_INET, buf, &a4) == 1) {
        inet_ntop(AF_INET, &a4, out, NET_HOST_MAX);
        return 0;
    }
    if (len > 253)
        return *why = "the host is longer than 253 bytes", -1;
    /* labels of letters, digits, '-' and '_', 1..63 bytes each */
    size_t label = 0;
    for (size_t i = 0; i <= len; i++) {
        if (i == len || buf[i] == '.') {
            if (label == 0)
                return *why = "the host has an empty label (\"..\", or a leading or trailing dot)", -1;
            label = 0;
            continue;
        }
        if (!label_char(buf[i]))
            return *why = "the host holds a character other than letters, digits, '-', '_' and '.'", -1;
        if (++label > 63)
            return *why = "a label of the host is longer than 63 bytes", -1;
    }
    /* A name ending in a numeric label is read as an address by resolvers and
     * inet_aton(3) (0x7f.1, 127.1, 2130706433): no rule can name what it reaches. */
    const char *last = strrchr(buf, '.');
    last = last ? last + 1 : buf;
    bool numeric = true;
    for (const char *c = last; *c; c++)
        numeric &= is_digit(*c);
    bool hex = last[0] == '0' && last[1] == 'x';
    if (numeric || hex || inet_aton(buf, &a4) != 0)
        return *why = "a numeric address in a form other than a dotted quad (a.b.c.d)", -1;
    memcpy(out, buf, len + 1);
    return 0;
}

bool net_host_is_ip(const char *host, struct sockaddr_storage *sa, socklen_t *salen)
{
    struct sockaddr_storage tmp;
    socklen_t tl;
    if (!sa)
        sa = &tmp;
    if (!salen)
        salen = &tl;
    memset(sa, 0, sizeof *sa);
    struct sockaddr_in *s4 = (struct sockaddr_in *)sa;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)sa;
    if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        *salen = sizeof *s4;
        return true;
    }
    if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        *salen = sizeof *s6;
        return true;
    }
    return false;
}

char *net_pattern_normalize(const char *in, const char *option, cordon_error *err)
{
    if (!in || !*in)
        return err_opt(err, CORDON_STAGE_USAGE, 0, option, "empty domain"), NULL;
    if (strcmp(in, "*") == 0 || strcmp(in, "*.") == 0 || strcmp(in, "*.*") == 0)
        return err_opt(err, CORDON_STAGE_USAGE, 0, option,
                       "'%s' would match every domain: name the domains (example.com, or "
                       "'*.example.com' for its subdomains), or use the host's network",
                       in),
               NULL;
    if (strstr(in, "://") || strchr(in, '/'))
        return err_opt(err, CORDON_STAGE_USAGE, 0, option,
                       "'%s': give the domain alone, without a scheme or a path (e.g. example.com)", in),
               NULL;
    char host[NET_HOST_MAX];
    const char *why;
    if (strncmp(in, "*.", 2) == 0) {
        const char *rest = in + 2;
        if (strchr(rest, '*'))
            return err_opt(err, CORDON_STAGE_USAGE, 0, option, "'%s': only a leading '*.' is supported", in), NULL;
        if (net_host_normalize(rest, strlen(rest), host, &why) < 0)
            return err_opt(err, CORDON_STAGE_USAGE, 0, option, "'%s': %s", in, why), NULL;
        if (net_host_is_ip(host, NULL, NULL))
            return err_opt(err, CORDON_STAGE_USAGE, 0, option, "'%s': '*.' needs a domain name, not an address", in),
                   NULL;
        if (!strchr(host, '.'))
            return err_opt(err, CORDON_STAGE_USAGE, 0, option,
                           "'%s' would match a whole top-level domain: name a domain under it "
                           "(e.g. '*.example.%s')",
                           in, host),
                   NULL;
        return xasprintf("*.%s", host);
    }
    if (strchr(in, '*'))
        return err_opt(err, CORDON_STAGE_USAGE, 0, option,
                       "'%s': '*' is only allowed as a whole leading label ('*.example.com')", in),
               NULL;
    const char *colon = strchr(in, ':');
    if (colon && in[0] != '[' && !strchr(colon + 1, ':'))
        return err_opt(err, CORDON_STAGE_USAGE, 0, option,
                       "'%s': no port, please: a domain is allowed or refused on every port", in),
               NULL;
    if (net_host_normalize(in, strlen(in), host, &why) < 0)
        return err_opt(err, CORDON_STAGE_USAGE, 0, option, "'%s': %s", in, why), NULL;
    return xstrdup(host);
}

net_match net_pattern_match(const char *pattern, const char *host)
{
    if (strncmp(pattern, "*.", 2) == 0) {
        const char *suffix = pattern + 1; /* ".example.com" */
        size_t sl = strlen(suffix), hl = strlen(host);
        if (hl > sl && strcmp(host + hl - sl, suffix) == 0)
            return NET_MATCH_WILDCARD;
        return NET_MATCH_NONE;
    }
    return strcmp(pattern, host) == 0 ? NET_MATCH_EXACT : NET_MATCH_NONE;
}

net_verdict net_decide_host(const net_rules *r, const char *host)
{
    net_verdict v = {.reason = NET_NOT_ALLOWED};
    for (size_t i = 0; i < r->n_deny; i++)
        if (net_pattern_match(r->deny[i], host) != NET_MATCH_NONE)
            return (net_verdict){.reason = NET_DENIED, .rule = r->deny[i]};
    for (size_t i = 0; i < r->n_allow; i++) {
        net_match m = net_pattern_match(r->allow[i], host);
        if (m == NET_MATCH_EXACT)
            return (net_verdict){.reason = NET_OK, .exact = true, .rule = r->allow[i]};
        if (m == NET_MATCH_WILDCARD && v.reason != NET_OK)
            v = (net_verdict){.reason = NET_OK, .rule = r->allow[i]};
    }
    return v;
}

/* An IPv4 address (host byte order) carried by sa: itself, or an IPv6 address that stands
 * for it: IPv4-mapped (::ffff:a.b.c.d, RFC 4291) or IPv4-translated (::ffff:0:a.b.c.d, RFC
 * 2765's SIIT, which a translator on the path delivers to a.b.c.d: counting it as a public
 * IPv6 address would let ::ffff:0:127.0.0.1 through). */
static bool ipv4_of(const struct sockaddr *sa, uint32_t *out)
{
    if (sa->sa_family == AF_INET) {
        *out = ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr);
        return true;
    }
    if (sa->sa_family == AF_INET6) {
        const uint8_t *b = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
        static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        static const uint8_t translated[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
        if (memcmp(b, mapped, 12) == 0 || memcmp(b, translated, 12) == 0) {
            *out = (uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15];
            return true;
        }
    }
    return false;
}

static bool same_addr(const struct sockaddr *a, const struct sockaddr *b)
{
    uint32_t x, y;
    if (ipv4_of(a, &x) && ipv4_of(b, &y))
        return x == y;
    if (a->sa_family == AF_INET6 && b->sa_family == AF_INET6)
        return memcmp(&((const struct sockaddr_in6 *)(const void *)a)->sin6_addr,
                      &((const struct sockaddr_in6 *)(const void *)b)->sin6_addr, 16) == 0;
    return false;
}

static bool in_net(uint32_t a, uint32_t net, int bits)
{
    uint32_t mask = bits == 0 ? 0 : ~UINT32_C(0) << (32 - bits);
    return (a & mask) == (net & mask);
}

#define V4(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

static net_addr_class classify_v4(uint32_t a)
{
    static const struct {
        uint32_t net;
        int bits;
        net_addr_class cls;
    } t[] = {
        {V4(0, 0, 0, 0), 8, NET_ADDR_UNSPECIFIED},        {V4(10, 0, 0, 0), 8, NET_ADDR_PRIVATE},
        {V4(100, 64, 0, 0), 10, NET_ADDR_SHARED},         {V4(127, 0, 0, 0), 8, NET_ADDR_LOOPBACK},
        {V4(169, 254, 0, 0), 16, NET_ADDR_LINK_LOCAL},    {V4(172, 16, 0, 0), 12, NET_ADDR_PRIVATE},
        {V4(192, 0, 0, 0), 24, NET_ADDR_RESERVED},        {V4(192, 0, 2, 0), 24, NET_ADDR_RESERVED},
        {V4(192, 88, 99, 0), 24, NET_ADDR_RESERVED},      {V4(192, 168, 0, 0), 16, NET_ADDR_PRIVATE},
        {V4(198, 18, 0, 0), 15, NET_ADDR_RESERVED},       {V4(198, 51, 100, 0), 24, NET_ADDR_RESERVED},
        {V4(203, 0, 113, 0), 24, NET_ADDR_RESERVED},      {V4(224, 0, 0, 0), 4, NET_ADDR_MULTICAST},
        {V4(255, 255, 255, 255), 32, NET_ADDR_MULTICAST}, {V4(240, 0, 0, 0), 4, NET_ADDR_RESERVED},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (in_net(a, t[i].net, t[i].bits))
            return t[i].cls;
    return NET_ADDR_PUBLIC;
}

static bool prefix6(const uint8_t *b, const uint8_t *p, int bits)
{
    int bytes = bits / 8, rest = bits % 8;
    if (memcmp(b, p, (size_t)bytes) != 0)
        return false;
    if (rest == 0)
        return true;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (b[bytes] & mask) == (p[bytes] & mask);
}

net_addr_class net_addr_classify(const struct sockaddr *sa)
{
    uint32_t v4;
    if (ipv4_of(sa, &v4))
        return classify_v4(v4);
    if (sa->sa_family != AF_INET6)
        return NET_ADDR_RESERVED;
    const uint8_t *b = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
    static const uint8_t zero[16] = {0};
    static const uint8_t one[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    if (memcmp(b, zero, 16) == 0)
        return NET_ADDR_UNSPECIFIED;
    if (memcmp(b, one, 16) == 0)
        return NET_ADDR_LOOPBACK;
    static const uint8_t nat64[12] = {0, 0x64, 0xff, 0x9b};
    if (memcmp(b, nat64, 12) == 0)
        return classify_v4((uint32_t)b[12] << 24 | (uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15]);
    if (b[0] == 0x20 && b[1] == 0x02) /* 6to4: 2002:AABB:CCDD::/48 carries A.B.C.D */
        return classify_v4((uint32_t)b[2] << 24 | (uint32_t)b[3] << 16 | (uint32_t)b[4] << 8 | b[5]);
    static const struct {
        uint8_t p[16];
        int bits;
        net_addr_class cls;
    } t[] = {
        {{0}, 96, NET_ADDR_RESERVED},                        /* ::/96, IPv4-compatible */
        {{0, 0x64, 0xff, 0x9b, 0, 1}, 48, NET_ADDR_PRIVATE}, /* local-use NAT64 */
        {{0x01, 0}, 64, NET_ADDR_RESERVED},                  /* 100::/64 discard */
        {{0x20, 0x01, 0x0d, 0xb8}, 32, NET_ADDR_RESERVED},   /* documentation */
        {{0x20, 0x01, 0x00, 0x00}, 32, NET_ADDR_RESERVED},   /* Teredo: carries another address */
        {{0x20, 0x01, 0x00}, 23, NET_ADDR_RESERVED},         /* IETF protocol assignments */
        {{0xfc}, 7, NET_ADDR_PRIVATE},                       /* unique local */
        {{0xfe, 0x80}, 10, NET_ADDR_LINK_LOCAL},
        {{0xfe, 0xc0}, 10, NET_ADDR_PRIVATE}, /* site-local (deprecated) */
        {{0xff}, 8, NET_ADDR_MULTICAST},
    };
    for (size_t i = 0; i < sizeof t / sizeof *t; i++)
        if (prefix6(b, t[i].p, t[i].bits))
            return t[i].cls;
    return NET_ADDR_PUBLIC;
}

const char *net_addr_class_name(net_addr_class c)
{
    switch (c) {
    case NET_ADDR_PUBLIC: return "public";
    case NET_ADDR_LOOPBACK: return "loopback";
    case NET_ADDR_LINK_LOCAL: return "link-local";
    case NET_ADDR_PRIVATE: return "private";
    case NET_ADDR_SHARED: return "shared (carrier-grade NAT)";
    case NET_ADDR_MULTICAST: return "multicast or broadcast";
    case NET_ADDR_UNSPECIFIED: return "unspecified";
    case NET_ADDR_RESERVED: return "reserved";
    }
    return "?";
}

net_reason net_decide_addr(const net_rules *r, net_verdict *v, const struct sockaddr *sa, bool local)
{
    struct sockaddr_storage rule;
    for (size_t i = 0; i < r->n_deny; i++) {
        if (net_host_is_ip(r->deny[i], &rule, NULL) && same_addr((struct sockaddr *)&rule, sa)) {
            v->rule = r->deny[i];
            return NET_DENIED_ADDR;
        }
    }
    if (net_addr_classify(sa) == NET_ADDR_PUBLIC || (v->exact && local))
        return NET_OK;
    for (size_t i = 0; i < r->n_allow; i++)
        if (net_host_is_ip(r->allow[i], &rule, NULL) && same_addr((struct sockaddr *)&rule, sa))
            return NET_OK;
    return NET_SPECIAL_ADDR;
}

const char *net_addr_str(const struct sockaddr *sa, char *buf, size_t n)
{
    const void *a = sa->sa_family == AF_INET
                        ? (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr
                        : (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
    if ((sa->sa_family != AF_INET && sa->sa_family != AF_INET6) || !inet_ntop(sa->sa_family, a, buf, (socklen_t)n))
        snprintf(buf, n, "?");
    return buf;
}
