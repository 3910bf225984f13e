// SPDX-License-Identifier: Apache-2.0
/* The filtering proxy: one listening port inside the sandbox speaks HTTP (absolute-form
 * requests and CONNECT) and SOCKS5, told apart by the first byte.  A request is checked
 * against --deny-domain and --allow-domain (net/domain.h), its name resolved by cordon
 * (--add-host, localhost, /etc/hosts, then the name servers: net/dns.c), each address
 * checked, and only then connected. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "net/helper.h"
#include "net/helper_main.h"
#include "net/http.h"
#include "net/socks.h"

#define HEAD_TIMEOUT_MS    30000
#define RESOLVE_TIMEOUT_MS 15000

static bool is_socks(const conn *c)
{
    return c->proto && strcmp(c->proto, "socks5") == 0;
}

static void reply_http(conn *c, int status, const char *proxy_error, const char *body)
{
    char buf[2048];
    size_t n = http_response(status, proxy_error, body, buf, sizeof buf);
    conn_reply_close(c, buf, n);
}

static void reply_socks(conn *c, uint8_t code)
{
    uint8_t r[10];
    size_t n = socks5_reply(code, r);
    conn_reply_close(c, (const char *)r, n);
}

/* The host, once, in the table the run prints after the command (net/host.h). */
static void note_refusal(helper *hp, const char *host, unsigned port, const char *why, const char *fix)
{
    net_counts *k = hp->counts;
    if (!host || !*host)
        return;
    unsigned n = __atomic_load_n(&k->n_refusals, __ATOMIC_RELAXED); /* the helper is the only writer */
    for (unsigned i = 0; i < n; i++)
        if (strcmp(k->refusals[i].host, host) == 0)
            return;
    if (n >= NET_REFUSALS_MAX) {
        __atomic_fetch_add(&k->more_refusals, 1u, __ATOMIC_RELEASE); /* (a repeat of one of these counts again) */
        return;
    }
    net_refusal *r = &k->refusals[n];
    snprintf(r->host, sizeof r->host, "%s", host);
    for (char *p = r->host; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f)
            *p = '?'; /* a name must not move the terminal's cursor when it is printed */
    r->port = port;
    snprintf(r->why, sizeof r->why, "%s", why ? why : "refused");
    snprintf(r->fix, sizeof r->fix, "%s", fix ? fix : "");
    __atomic_store_n(&k->n_refusals, n + 1, __ATOMIC_RELEASE);
}

/* A refusal by cordon's rules: 403 (SOCKS5: "not allowed by ruleset") with a body that
 * names the domain and the flag that would allow it (fix, also said after the run). */
static void refuse(conn *c, const char *why_log, const char *rule, const struct sockaddr *addr, const char *body,
                   const char *proxy_error, const char *fix)
{
    helper *hp = c->hp;
    HELPER_COUNT(hp, refused);
    note_refusal(hp, c->host, c->port, why_log, fix);
    helper_log(hp, c->proto, c->host, c->port, "refused", why_log, rule, addr);
    if (is_socks(c))
        reply_socks(c, SOCKS5_NOT_ALLOWED);
    else
        reply_http(c, 403, proxy_error, body);
}

/* A request cordon cannot make sense of: counted and logged as refused too. */
static void bad_request(conn *c, int status, const char *why)
{
    char body[512], reason[300];
    snprintf(body, sizeof body, "cordon: bad request to the sandbox's proxy: %s\n", why);
    snprintf(reason, sizeof reason, "bad request: %s", why);
    HELPER_COUNT(c->hp, refused);
    helper_log(c->hp, c->proto ? c->proto : "http", c->host[0] ? c->host : NULL, c->port, "refused", reason, NULL,
               NULL);
    reply_http(c, status, "http_request_error", body);
}

static void bad_socks(conn *c, uint8_t code, const char *why)
{
    char reason[300];
    snprintf(reason, sizeof reason, "bad SOCKS5 request: %s", why);
    HELPER_COUNT(c->hp, refused);
    helper_log(c->hp, "socks5", c->host[0] ? c->host : NULL, c->port, "refused", reason, NULL, NULL);
    reply_socks(c, code);
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
    if (ss->ss_family == AF_INET)
        ((struct sockaddr_in *)ss)->sin_port = htons(port);
    else
        ((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static void proxy_resolved(conn *c, int status, const char *error, const struct sockaddr_storage *addrs,
                           const socklen_t *lens, int n, bool local);

/* Step 2 of the decision, on each address; then connect to those that pass. */
static void check_addrs(conn *c, const struct sockaddr_storage *addrs, const socklen_t *lens, int n, bool local)
{
    helper *hp = c->hp;
    net_reason first = NET_OK;
    const char *first_rule = NULL;
    struct sockaddr_storage first_addr = {0};
    c->naddr = 0;
    for (int i = 0; i < n && c->naddr < CONN_MAX_ADDRS; i++) {
        net_verdict v = c->verdict;
        net_reason r = net_decide_addr(&hp->rules, &v, (const struct sockaddr *)&addrs[i], local);
        if (r == NET_OK) {
            c->addr[c->naddr] = addrs[i];
            set_port(&c->addr[c->naddr], c->port);
            c->alen[c->naddr++] = lens[i];
        } else if (first == NET_OK) {
            first = r;
            first_rule = v.rule;
            first_addr = addrs[i];
        }
    }
    if (c->naddr > 0) {
        c->iaddr = 0;
        conn_connect_next(c);
        return;
    }
    char a[64], body[1024], why[512], rule[320];
    const struct sockaddr *sa = (const struct sockaddr *)&first_addr;
    net_addr_str(sa, a, sizeof a);
    if (first == NET_DENIED_ADDR) {
        snprintf(rule, sizeof rule, "--deny-domain %s", first_rule);
        snprintf(why, sizeof why, "resolves to %s, which %s refuses", a, rule);
        snprintf(body, sizeof body, "cordon: the sandbox refused %s: it resolves to %s, which %s refuses\n", c->host, a,
                 rule);
        refuse(c, why, rule, sa, body, "destination_ip_prohibited", NULL);
        return;
    }
    char fix[600];
    const char *cls = net_addr_class_name(net_addr_classify(sa));
    if (!local && c->verdict.exact) {
        /* an exact name, but the answer is DNS's: it could point anywhere (rebinding) */
        snprintf(why, sizeof why, "resolves in DNS to %s, a %s address, which no --allow-domain names", a, cls);
        snprintf(body, sizeof body,
                 "cordon: the sandbox refused %s: its DNS answer is %s, a %s address; a DNS answer never "
                 "opens such destinations by itself: --allow-domain %s allows the address, or --add-host %s=%s "
                 "pins the name\n",
                 c->host, a, cls, a, c->host, a);
        snprintf(fix, sizeof fix, "--add-host %s=%s (or --allow-domain %s)", c->host, a, a);
    } else {
        snprintf(why, sizeof why, "resolves to %s, a %s address, and is not named exactly by an --allow-domain", a,
                 cls);
        snprintf(body, sizeof body,
                 "cordon: the sandbox refused %s: it resolves to %s, a %s address; such destinations are "
                 "allowed only when named exactly: --allow-domain %s (or --allow-domain %s)\n",
                 c->host, a, cls, c->host, a);
        snprintf(fix, sizeof fix, "--allow-domain %s (or --allow-domain %s)", c->host, a);
    }
    refuse(c, why, NULL, sa, body, "destination_ip_prohibited", fix);
}

static void resolved_cb(void *arg, int status, const char *error, const struct sockaddr_storage *addrs,
                        const socklen_t *lens, int n, bool local)
{
    conn *c = arg;
    c->q = NULL;
    proxy_resolved(c, status, error, addrs, lens, n, local);
}

static void proxy_resolved(conn *c, int status, const char *error, const struct sockaddr_storage *addrs,
                           const socklen_t *lens, int n, bool local)
{
    if (c->dead)
        return;
    conn_set_deadline(c, 0);
    if (status < 0) {
        char why[512], body[640];
        snprintf(why, sizeof why, "cannot resolve %s: %s", c->host, error ? error : "?");
        HELPER_COUNT(c->hp, failed);
        helper_log(c->hp, c->proto, c->host, c->port, "failed", why, NULL, NULL);
        if (is_socks(c)) {
            reply_socks(c, SOCKS5_HOST_UNREACHABLE);
        } else {
            snprintf(body, sizeof body, "cordon: %s\n", why);
            reply_http(c, 502, "dns_error", body);
        }
        return;
    }
    check_addrs(c, addrs, lens, n, local);
}

/* Step 1: the host; then its addresses (a literal, an --add-host entry, or the resolver). */
static void decide(conn *c)
{
    helper *hp = c->hp;
    c->verdict = net_decide_host(&hp->rules, c->host);
    char body[1024], why[512], rule[320];
    if (c->verdict.reason == NET_DENIED) {
        snprintf(rule, sizeof rule, "--deny-domain %s", c->verdict.rule);
        snprintf(why, sizeof why, "refused by %s", rule);
        snprintf(body, sizeof body, "cordon: the sandbox refused %s: %s\n", c->host, why);
        refuse(c, why, rule, NULL, body, "http_request_denied", NULL);
        return;
    }
    if (c->verdict.reason == NET_NOT_ALLOWED) {
        char fix[300];
        snprintf(fix, sizeof fix, "--allow-domain %s", c->host);
        snprintf(why, sizeof why, "no --allow-domain matches %s", c->host);
        snprintf(body, sizeof body,
                 "cordon: the sandbox refused %s: it is not among the allowed domains; to allow it, run "
                 "cordon with --allow-domain %s\n",
                 c->host, c->host);
        refuse(c, why, NULL, NULL, body, "http_request_denied", fix);
        return;
    }
    struct sockaddr_storage ss[1];
    socklen_t len[1];
    if (net_host_is_ip(c->host, &ss[0], &len[0])) {
        check_addrs(c, ss, len, 1, true);
        return;
    }
    for (size_t i = 0; i < hp->np->n_hosts; i++) {
        if (strcmp(hp->np->hosts[i].name, c->host) == 0) {
            ss[0] = hp->np->hosts[i].addr;
            len[0] = hp->np->hosts[i].len;
            check_addrs(c, ss, len, 1, true); /* --add-host: the user's own word */
            return;
        }
    }
    c->state = CS_RESOLVE;
    conn_set_deadline(c, RESOLVE_TIMEOUT_MS);
    c->q = dns_lookup(hp, c->host, resolved_cb, c);
}

static void http_head(conn *c)
{
    http_request r;
    http_parse st = http_parse_request(c->buf, c->blen, &r);
    if (st == HTTP_NEED_MORE)
        return;
    c->proto = "http";
    if (st == HTTP_ERROR) {
        bad_request(c, r.status, r.why);
        return;
    }
    c->proto = r.connect ? "connect" : "http";
    snprintf(c->host, sizeof c->host, "%s", r.host);
    c->port = r.port;
    c->http_absolute = !r.connect;
    c->early_off = r.head_len;
    if (c->http_absolute) {
        /* the forwarded head replaces the client's; what follows it (a body) goes after */
        size_t cap = r.head_len + 512;
        char *head = heap_alloc(&c->hp->heap, cap);
        ssize_t hl = http_upstream_head(c->buf, &r, head, cap);
        if (hl < 0) {
            heap_free(&c->hp->heap, head);
            bad_request(c, 431, "the request head is too large once rewritten");
            return;
        }
        conn_queue(c, 0, head, (size_t)hl);
        heap_free(&c->hp->heap, head);
    }
    decide(c);
}

static void socks_head(conn *c)
{
    c->proto = "socks5";
    if (c->socks_stage == 0) {
        bool noauth;
        int n = socks5_greeting((const uint8_t *)c->buf, c->blen, &noauth);
        if (n == 0)
            return;
        if (n < 0) {
            bad_socks(c, SOCKS5_FAILURE, "not a SOCKS5 greeting");
            return;
        }
        if (!noauth) {
            static const char no[2] = {5, (char)0xff};
            HELPER_COUNT(c->hp, refused);
            helper_log(c->hp, "socks5", NULL, 0, "refused",
                       "bad SOCKS5 request: the client offers no method cordon accepts (no authentication)", NULL,
                       NULL);
            conn_reply_close(c, no, 2);
            return;
        }
        static const char ok[2] = {5, 0};
        /* The first bytes on a fresh socket: the send buffer has room for two. */
        if (send(c->fd[0], ok, 2, MSG_NOSIGNAL | MSG_DONTWAIT) != 2) {
            conn_close(c);
            return;
        }
        memmove(c->buf, c->buf + n, c->blen - (size_t)n);
        c->blen -= (size_t)n;
        c->socks_stage = 1;
    }
    socks5_request r;
    int n = socks5_parse_request((const uint8_t *)c->buf, c->blen, &r);
    if (n == 0)
        return;
    if (n < 0) {
        bad_socks(c, r.reply, r.why);
        return;
    }
    snprintf(c->host, sizeof c->host, "%s", r.host);
    c->port = r.port;
    c->early_off = (size_t)n;
    decide(c);
}

static void proxy_on_readable(conn *c)
{
    if (!c->buf)
        c->buf = heap_alloc(&c->hp->heap, HTTP_HEAD_MAX + 1);
    for (;;) {
        if (c->blen >= HTTP_HEAD_MAX)
            break;
        ssize_t n = recv(c->fd[0], c->buf + c->blen, HTTP_HEAD_MAX - c->blen, MSG_DONTWAIT);
        if (n > 0) {
            c->blen += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            c->rd[0] = false;
            break;
        }
        /* EOF or an error before a complete request: nothing to answer */
        conn_close(c);
        return;
    }
    if (c->blen == 0)
        return;
    if (c->socks_stage > 0 || c->buf[0] == 5) {
        socks_head(c);
    } else if (c->buf[0] == 4) {
        static const char no4[8] = {0, 0x5b};
        c->proto = "socks4";
        HELPER_COUNT(c->hp, refused);
        helper_log(c->hp, "socks4", NULL, 0, "refused",
                   "SOCKS4 is not supported: use SOCKS5 (socks5h://, names resolved by cordon)", NULL, NULL);
        conn_reply_close(c, no4, sizeof no4);
        return;
    } else {
        http_head(c);
    }
    if (!c->dead && c->state == CS_HEAD && c->blen >= HTTP_HEAD_MAX)
        bad_request(c, 431, "the request is larger than 16 KiB");
}

static void proxy_connect_failed(conn *c, int e)
{
    char a[64], why[512], body[640];
    const struct sockaddr *tried = (const struct sockaddr *)&c->addr[c->iaddr > 0 ? c->iaddr - 1 : 0];
    net_addr_str(tried, a, sizeof a);
    snprintf(why, sizeof why, "cannot connect to %s (%s) port %u: %s", c->host, a, (unsigned)c->port,
             e == ETIMEDOUT ? "timed out" : net_strerror(e));
    HELPER_COUNT(c->hp, failed);
    helper_log(c->hp, c->proto, c->host, c->port, "failed", why, NULL, tried);
    if (is_socks(c)) {
        uint8_t code = e == ECONNREFUSED   ? SOCKS5_REFUSED
                       : e == ENETUNREACH  ? SOCKS5_NET_UNREACHABLE
                       : e == ETIMEDOUT    ? SOCKS5_TTL_EXPIRED
                       : e == EHOSTUNREACH ? SOCKS5_HOST_UNREACHABLE
                                           : SOCKS5_FAILURE;
        reply_socks(c, code);
        return;
    }
    snprintf(body, sizeof body, "cordon: %s\n", why);
    reply_http(c, e == ETIMEDOUT ? 504 : 502, e == ETIMEDOUT ? "connection_timeout" : "connection_refused", body);
}

static void proxy_connected(conn *c)
{
    helper *hp = c->hp;
    char why[400];
    const char *rule = c->verdict.rule;
    char rulebuf[320];
    snprintf(rulebuf, sizeof rulebuf, "--allow-domain %s", rule ? rule : "?");
    snprintf(why, sizeof why, "allowed by %s", rulebuf);
    HELPER_COUNT(hp, allowed);
    helper_log(hp, c->proto, c->host, c->port, "allowed", why, rulebuf,
               (const struct sockaddr *)&c->addr[c->iaddr > 0 ? c->iaddr - 1 : 0]);
    if (strcmp(c->proto, "connect") == 0) {
        static const char ok[] = "HTTP/1.1 200 Connection Established\r\n\r\n";
        conn_queue(c, 1, ok, sizeof ok - 1);
    } else if (is_socks(c)) {
        uint8_t r[10];
        size_t n = socks5_reply(SOCKS5_OK, r);
        conn_queue(c, 1, (const char *)r, n);
    }
    if (c->blen > c->early_off)
        conn_queue(c, 0, c->buf + c->early_off, c->blen - c->early_off);
    heap_free(&hp->heap, c->buf);
    c->buf = NULL;
    c->blen = 0;
    conn_relay(c);
}

static void proxy_start(conn *c)
{
    c->state = CS_HEAD;
    conn_set_deadline(c, HEAD_TIMEOUT_MS);
}

const conn_hooks proxy_hooks = {.start = proxy_start,
                                .on_readable = proxy_on_readable,
                                .resolved = proxy_resolved,
                                .connect_failed = proxy_connect_failed,
                                .connected = proxy_connected};
