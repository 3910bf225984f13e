// SPDX-License-Identifier: Apache-2.0
/* DNS messages for the filtering proxy's resolver (net/dns.c): an A or AAAA query, and the
 * addresses of its answer.  Pure, and fuzzed (fuzz/fuzz_dns.c): an answer is whatever
 * arrives on the resolver's socket.
 *
 * Why not a resolver library: the network helper is cloned from a possibly
 * multi-threaded library caller without fork(3)'s atfork handling (the library's children
 * send no SIGCHLD), so it may not use malloc or stdio, which c-ares does for its state and
 * to read resolv.conf; and glibc's getaddrinfo blocks.  What the proxy needs is small: the
 * addresses of one fully qualified name, asked of the host's name servers, which the run
 * reads from /etc/resolv.conf (and /etc/hosts: net/hostconf.h) before the helper starts. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define DNS_TYPE_A     1
#define DNS_TYPE_AAAA  28
#define DNS_TYPE_CNAME 5
/* What the query offers (EDNS0): answers this large need no TCP. */
#define DNS_UDP_MAX 1232

/* Write a query for `name` (a normalised host, no trailing dot) into out; returns its
 * length, or -1 when the name does not fit in a DNS name (labels of 1..63 bytes, 255 in
 * all) or cap is too small (512 always suffices). */
int dns_build_query(uint8_t *out, size_t cap, uint16_t id, const char *name, uint16_t qtype);

typedef enum dns_status {
    DNS_ANSWER = 0,    /* addresses (maybe none: the name has no record of the type) */
    DNS_NXDOMAIN = -1, /* the name does not exist */
    DNS_FAILED = -2,   /* the server answered with an error (SERVFAIL, REFUSED, ...) */
    DNS_BOGUS = -3,    /* not the answer to this query, or malformed: ignore it */
} dns_status;

/* Read the answer to the query (id, name, qtype): the addresses of `name` or of the names
 * its CNAME records lead to, at most max of them, into out (port 0).  *n gets how many.
 * *why (static) says what was wrong for DNS_FAILED and DNS_BOGUS. */
dns_status dns_parse_answer(const uint8_t *msg, size_t len, uint16_t id, const char *name, uint16_t qtype,
                            struct sockaddr_storage *out, int max, int *n, const char **why);
