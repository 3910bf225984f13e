// SPDX-License-Identifier: Apache-2.0
#include "net/dnsmsg.h"

#include <netinet/in.h>
#include <string.h>

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

int dns_build_query(uint8_t *out, size_t cap, uint16_t id, const char *name, uint16_t qtype)
{
    size_t nl = strlen(name);
    /* header + name (one length byte per label, a final 0) + type/class + OPT record */
    size_t need = 12 + nl + 2 + 4 + 11;
    if (nl == 0 || nl > 253 || cap < need)
        return -1;
    memset(out, 0, 12);
    put16(out, id);
    put16(out + 2, 0x0100); /* a standard query, recursion desired */
    put16(out + 4, 1);      /* one question */
    put16(out + 10, 1);     /* one additional record: EDNS0 */
    size_t o = 12;
    for (const char *l = name; *l;) {
        const char *dot = strchr(l, '.');
        size_t ll = dot ? (size_t)(dot - l) : strlen(l);
        if (ll == 0 || ll > 63)
            return -1;
        out[o++] = (uint8_t)ll;
        memcpy(out + o, l, ll);
        o += ll;
        l += ll + (dot ? 1 : 0);
        if (dot && !*l)
            return -1; /* a trailing dot: names are normalised without one */
    }
    out[o++] = 0;
    put16(out + o, qtype);
    put16(out + o + 2, 1); /* IN */
    o += 4;
    /* OPT: root name, type 41, class = our UDP payload size, no extended flags */
    out[o++] = 0;
    put16(out + o, 41);
    put16(out + o + 2, DNS_UDP_MAX);
    memset(out + o + 4, 0, 6);
    o += 10;
    return (int)o;
}

/* Read the (possibly compressed) name at *off into out (lower case, dotted, no final
 * dot); *off moves past it.  A label holding a dot or a byte outside printable ASCII
 * makes the name unmatchable (out is "" then), never a different name.  -1 when the
 * message is malformed (out of bounds, a pointer loop, a name over 255 bytes). */
static int read_name(const uint8_t *m, size_t len, size_t *off, char out[256])
{
    size_t o = *off, w = 0;
    bool jumped = false, odd = false;
    int jumps = 0;
    for (;;) {
        if (o >= len)
            return -1;
        uint8_t l = m[o];
        if ((l & 0xc0) == 0xc0) {
            if (o + 1 >= len || ++jumps > 64)
                return -1;
            size_t target = (size_t)(l & 0x3f) << 8 | m[o + 1];
            if (!jumped)
                *off = o + 2;
            jumped = true;
            if (target >= len)
                return -1;
            o = target;
            continue;
        }
        if (l & 0xc0)
            return -1; /* the reserved label types */
        o++;
        if (l == 0)
            break;
        if (o + l > len || w + l + 1 > 255)
            return -1;
        if (w)
            out[w++] = '.';
        for (size_t i = 0; i < l; i++) {
            uint8_t c = m[o + i];
            if (c <= 0x20 || c >= 0x7f || c == '.')
                odd = true;
            out[w++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
        }
        o += l;
    }
    out[w] = '\0';
    if (!jumped)
        *off = o;
    if (odd)
        out[0] = '\0';
    return 0;
}

#define CHAIN_MAX 8

static bool in_chain(char chain[][256], int n, const char *name)
{
    if (!name[0])
        return false;
    for (int i = 0; i < n; i++)
        if (strcmp(chain[i], name) == 0)
            return true;
    return false;
}

dns_status dns_parse_answer(const uint8_t *msg, size_t len, uint16_t id, const char *name, uint16_t qtype,
                            struct sockaddr_storage *out, int max, int *n, const char **why)
{
    *n = 0;
    *why = "a malformed answer";
    if (len < 12)
        return DNS_BOGUS;
    uint16_t flags = get16(msg + 2);
    if (get16(msg) != id || !(flags & 0x8000) || ((flags >> 11) & 0xf) != 0 || get16(msg + 4) != 1) {
        *why = "not the answer to this query";
        return DNS_BOGUS;
    }
    size_t off = 12;
    char qname[256];
    if (read_name(msg, len, &off, qname) < 0 || off + 4 > len)
        return DNS_BOGUS;
    if (strcmp(qname, name) != 0 || get16(msg + off) != qtype || get16(msg + off + 2) != 1) {
        *why = "an answer to another question";
        return DNS_BOGUS;
    }
    off += 4;
    switch (flags & 0xf) {
    case 0: break;
    case 3: return DNS_NXDOMAIN;
    case 2: *why = "the name server failed (SERVFAIL)"; return DNS_FAILED;
    case 5: *why = "the name server refused the query (REFUSED)"; return DNS_FAILED;
    default: *why = "the name server answered with an error"; return DNS_FAILED;
    }
    uint16_t ancount = get16(msg + 6);
    size_t answers = off;
    char chain[CHAIN_MAX][256];
    int nchain = 1;
    memcpy(chain[0], qname, sizeof chain[0]);
    /* CNAMEs first, however they are ordered: each pass may add a name to the chain */
    for (int pass = 0; pass < CHAIN_MAX; pass++) {
        int before = nchain;
        off = answers;
        for (uint16_t i = 0; i < ancount; i++) {
            char owner[256], target[256];
            if (read_name(msg, len, &off, owner) < 0 || off + 10 > len)
                return DNS_BOGUS;
            uint16_t type = get16(msg + off), class = get16(msg + off + 2), rdlen = get16(msg + off + 8);
            off += 10;
            if (off + rdlen > len)
                return DNS_BOGUS;
            if (type == DNS_TYPE_CNAME && class == 1 && in_chain(chain, nchain, owner) && nchain < CHAIN_MAX) {
                size_t t = off;
                if (read_name(msg, len, &t, target) < 0)
                    return DNS_BOGUS;
                if (target[0] && !in_chain(chain, nchain, target))
                    memcpy(chain[nchain++], target, sizeof chain[0]);
            }
            off += rdlen;
        }
        if (nchain == before)
            break;
    }
    off = answers;
    for (uint16_t i = 0; i < ancount; i++) {
        char owner[256];
        if (read_name(msg, len, &off, owner) < 0 || off + 10 > len)
            return DNS_BOGUS;
        uint16_t type = get16(msg + off), class = get16(msg + off + 2), rdlen = get16(msg + off + 8);
        off += 10;
        if (off + rdlen > len)
            return DNS_BOGUS;
        if (type == qtype && class == 1 && in_chain(chain, nchain, owner) && *n < max) {
            struct sockaddr_storage *ss = &out[*n];
            memset(ss, 0, sizeof *ss);
            if (type == DNS_TYPE_A && rdlen == 4) {
                struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
                s4->sin_family = AF_INET;
                memcpy(&s4->sin_addr, msg + off, 4);
                (*n)++;
            } else if (type == DNS_TYPE_AAAA && rdlen == 16) {
                struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
                s6->sin6_family = AF_INET6;
                memcpy(&s6->sin6_addr, msg + off, 16);
                (*n)++;
            }
        }
        off += rdlen;
    }
    return DNS_ANSWER;
}
