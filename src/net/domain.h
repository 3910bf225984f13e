// SPDX-License-Identifier: Apache-2.0
/* The filtering proxy's rules: domain patterns (--allow-domain, --deny-domain), the host
 * names requests carry, and the classes of destination addresses that are refused unless
 * named explicitly.  Pure: no system calls, no resolver.
 *
 * Decisions are made in two steps, because a name is known before its addresses are:
 *   1. the host: a --deny-domain that matches refuses it; else an --allow-domain must
 *      match (an exact pattern or a `*.` one);
 *   2. each address it resolves to: a --deny-domain naming that address refuses it; an
 *      address in a special range (loopback, link-local such as 169.254.169.254, private,
 *      shared, multicast, reserved) is refused unless an --allow-domain names the address
 *      itself, or the host was allowed by an exact --allow-domain and the address did not
 *      come from DNS (an --add-host entry, /etc/hosts, localhost): a DNS answer can point
 *      any name anywhere (DNS rebinding), so it never opens these ranges by itself. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "cordon.h"

/* A normalised host: a DNS name (at most 253 bytes) or an IP literal (IPv6 without
 * brackets), plus the NUL. */
#define NET_HOST_MAX 256

/* Normalise a host as a request or a URL names it (len bytes, not NUL-terminated): lower
 * case, one trailing dot dropped, brackets around an IPv6 literal removed.  Returns 0, or
 * -1 with *why set (a static phrase) when it is not a well-formed name or IP literal;
 * numeric forms other than a dotted quad (0x7f.1, 2130706433) are refused, since
 * resolvers read them as addresses that no rule names. */
int net_host_normalize(const char *in, size_t len, char out[NET_HOST_MAX], const char **why);

/* Is this normalised host an IP literal?  Fills *sa (port 0) when it is. */
bool net_host_is_ip(const char *host, struct sockaddr_storage *sa, socklen_t *salen);

/* Check and normalise a domain pattern (allowDomain, denyDomain): a host name, an IP
 * literal, or `*.` followed by a name of at least two labels.  Returns a new string, or
 * NULL with err filled (stage USAGE, err->option = option). */
char *net_pattern_normalize(const char *in, const char *option, cordon_error *err);

typedef enum net_match {
    NET_MATCH_NONE = 0,
    NET_MATCH_EXACT,    /* the pattern is the host itself */
    NET_MATCH_WILDCARD, /* `*.example.com` and a subdomain of example.com */
} net_match;
net_match net_pattern_match(const char *pattern, const char *host);

typedef struct net_rules {
    char *const *allow;
    size_t n_allow;
    char *const *deny;
    size_t n_deny;
} net_rules;

typedef enum net_reason {
    NET_OK = 0,
    NET_DENIED,       /* a --deny-domain matched the host */
    NET_NOT_ALLOWED,  /* no --allow-domain matched the host */
    NET_DENIED_ADDR,  /* a --deny-domain names the address it resolved to */
    NET_SPECIAL_ADDR, /* loopback/private/...: allowed only when named explicitly */
} net_reason;

typedef struct net_verdict {
    net_reason reason;
    bool exact;       /* the host was allowed by an exact pattern */
    const char *rule; /* the pattern that decided (allow or deny), or NULL */
} net_verdict;

/* Step 1: the host (normalised). */
net_verdict net_decide_host(const net_rules *r, const char *host);
/* Step 2: one address of a host that step 1 allowed; `local`: the address is the host's
 * own literal, or comes from --add-host, /etc/hosts or localhost, not from DNS.  Returns
 * NET_OK, NET_DENIED_ADDR (v->rule set to the deny pattern) or NET_SPECIAL_ADDR. */
net_reason net_decide_addr(const net_rules *r, net_verdict *v, const struct sockaddr *sa, bool local);

/* The class of a destination address (IPv4-mapped, NAT64 and 6to4 addresses are
 * classified by the IPv4 address they carry). */
typedef enum net_addr_class {
    NET_ADDR_PUBLIC = 0,
    NET_ADDR_LOOPBACK,
    NET_ADDR_LINK_LOCAL,
    NET_ADDR_PRIVATE,     /* RFC 1918, IPv6 unique local */
    NET_ADDR_SHARED,      /* 100.64.0.0/10, carrier-grade NAT */
    NET_ADDR_MULTICAST,   /* and broadcast */
    NET_ADDR_UNSPECIFIED, /* 0.0.0.0/8, :: */
    NET_ADDR_RESERVED,    /* documentation, benchmarking, 240.0.0.0/4, ... */
} net_addr_class;
net_addr_class net_addr_classify(const struct sockaddr *sa);
const char *net_addr_class_name(net_addr_class c);

/* "1.2.3.4" / "::1" for messages (buf at least 64 bytes). */
const char *net_addr_str(const struct sockaddr *sa, char *buf, size_t n);
