// SPDX-License-Identifier: Apache-2.0
/* The filtering proxy's resolver, on the helper's epoll loop: no thread, no blocking
 * call, no file read (the run read /etc/resolv.conf and /etc/hosts before the helper
 * started: net/hostconf.h), nothing but system calls and the helper's own heap. */
#include <errno.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/dnsmsg.h"
#include "net/helper.h"
#include "util/time.h"

#define TRY_MS 2000 /* per name server, as glibc's default */
#define ROUNDS 2    /* every name server this many times */

struct dns_query {
    helper *hp;
    dns_cb cb;
    void *arg;
    char name[NET_HOST_MAX];
    ev_handle h;
    int fd;
    int attempt; /* which (server, round) */
    uint16_t id[2];
    bool answered[2]; /* A, AAAA */
    struct sockaddr_storage addr[2][CONN_MAX_ADDRS];
    int n[2];
    const char *error; /* the last failure, for the message */
    long long deadline;
    bool dead;
    dns_query *prev, *next;
};

static void deliver(dns_query *q, int status, const char *error)
{
    struct sockaddr_storage addrs[CONN_MAX_ADDRS];
    socklen_t lens[CONN_MAX_ADDRS];
    int n = 0;
    for (int t = 0; t < 2; t++)
        for (int i = 0; i < q->n[t] && n < CONN_MAX_ADDRS; i++) {
            addrs[n] = q->addr[t][i];
            lens[n++] = t == 0 ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
        }
    if (status == 0 && n == 0) {
        status = -1;
        error = "the name has no IPv4 or IPv6 address";
    }
    q->cb(q->arg, status, error, addrs, lens, n, false);
}

static void unlink_query(dns_query *q)
{
    helper *hp = q->hp;
    if (q->prev)
        q->prev->next = q->next;
    else if (hp->queries == q)
        hp->queries = q->next;
    if (q->next)
        q->next->prev = q->prev;
    q->prev = q->next = NULL;
}

/* Done, delivered or not: out of the epoll set and the list; freed at the turn's end. */
static void retire(dns_query *q)
{
    if (q->dead)
        return;
    q->dead = true;
    if (q->fd >= 0)
        close(q->fd);
    q->fd = -1;
    unlink_query(q);
    q->next = q->hp->dead_queries;
    q->hp->dead_queries = q;
}

static void finish(dns_query *q, int status, const char *error)
{
    retire(q);
    if (q->arg)
        deliver(q, status, error);
}

static void send_queries(dns_query *q);

/* The next server (or round), or the end. */
static void next_attempt(dns_query *q)
{
    const hostconf *hc = q->hp->hc;
    if (q->n[0] + q->n[1] > 0) {
        finish(q, 0, NULL); /* one family answered: enough */
        return;
    }
    if (++q->attempt >= hc->n_ns * ROUNDS) {
        finish(q, -1, q->error ? q->error : "no name server answered");
        return;
    }
    send_queries(q);
}

static void on_readable(helper *hp, ev_handle *h, uint32_t events)
{
    (void)hp;
    (void)events;
    dns_query *q = h->obj;
    if (q->dead)
        return;
    for (;;) {
        uint8_t msg[DNS_UDP_MAX + 512];
        ssize_t len = recv(q->fd, msg, sizeof msg, MSG_DONTWAIT);
        if (len < 0 && errno == EINTR)
            continue;
        if (len < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (len < 0) {
            /* ECONNREFUSED: no name server on that address */
            q->error = "the name server is unreachable";
            next_attempt(q);
            return;
        }
        for (int t = 0; t < 2; t++) {
            if (q->answered[t])
                continue;
            const char *why;
            int n = 0;
            dns_status st = dns_parse_answer(msg, (size_t)len, q->id[t], q->name, t == 0 ? DNS_TYPE_A : DNS_TYPE_AAAA,
                                             q->addr[t], CONN_MAX_ADDRS, &n, &why);
            if (st == DNS_BOGUS)
                continue; /* another query's (or a forged) answer: keep waiting */
            if (st == DNS_NXDOMAIN) {
                finish(q, -1, "the name does not exist (NXDOMAIN)");
                return;
            }
            if (st == DNS_FAILED) {
                q->error = why;
                next_attempt(q);
                return;
            }
            q->answered[t] = true;
            q->n[t] = n;
        }
        if (q->answered[0] && q->answered[1]) {
            finish(q, 0, NULL);
            return;
        }
    }
}

static void send_queries(dns_query *q)
{
    helper *hp = q->hp;
    const hostconf *hc = hp->hc;
    int s = q->attempt % hc->n_ns;
    if (q->fd >= 0)
        close(q->fd);
    q->answered[0] = q->answered[1] = false;
    q->fd = socket(hc->ns[s].ss_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (q->fd < 0 || connect(q->fd, (const struct sockaddr *)&hc->ns[s], hc->ns_len[s]) < 0) {
        q->error = "cannot reach the name server";
        next_attempt(q);
        return;
    }
    q->h = (ev_handle){.fn = on_readable, .obj = q, .fd = q->fd};
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &q->h};
    epoll_ctl(hp->epfd, EPOLL_CTL_ADD, q->fd, &ev);
    /* fresh IDs each time: an answer to an earlier attempt is not taken for this one */
    if (getrandom(q->id, sizeof q->id, GRND_NONBLOCK) != (ssize_t)sizeof q->id) {
        q->id[0] = (uint16_t)(now_ms() * 2654435761u);
        q->id[1] = (uint16_t)(q->id[0] ^ 0x5a5a);
    }
    for (int t = 0; t < 2; t++) {
        uint8_t msg[512];
        int len = dns_build_query(msg, sizeof msg, q->id[t], q->name, t == 0 ? DNS_TYPE_A : DNS_TYPE_AAAA);
        if (len < 0) {
            finish(q, -1, "the name is too long for DNS");
            return;
        }
        (void)send(q->fd, msg, (size_t)len, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    q->deadline = hp->now + TRY_MS;
}

static bool is_localhost(const char *name)
{
    size_t n = strlen(name);
    return strcmp(name, "localhost") == 0 || (n > 10 && strcmp(name + n - 10, ".localhost") == 0);
}

dns_query *dns_lookup(helper *hp, const char *name, dns_cb cb, void *arg)
{
    struct sockaddr_storage addrs[CONN_MAX_ADDRS];
    socklen_t lens[CONN_MAX_ADDRS];
    int n = 0;
    /* RFC 6761: localhost and its subdomains are the loopback, never asked of DNS */
    if (is_localhost(name)) {
        net_host_is_ip("127.0.0.1", &addrs[0], &lens[0]);
        net_host_is_ip("::1", &addrs[1], &lens[1]);
        cb(arg, 0, NULL, addrs, lens, 2, true);
        return NULL;
    }
    for (int fam = 0; fam < 2; fam++) /* IPv4 first */
        for (size_t i = 0; i < hp->hc->n_hosts && n < CONN_MAX_ADDRS; i++) {
            const hostconf_entry *e = &hp->hc->hosts[i];
            if ((e->addr.ss_family == AF_INET) == (fam == 0) && strcmp(e->name, name) == 0) {
                addrs[n] = e->addr;
                lens[n++] = e->len;
            }
        }
    if (n > 0) {
        cb(arg, 0, NULL, addrs, lens, n, true);
        return NULL;
    }
    if (hp->hc->n_ns == 0) {
        cb(arg, -1, "the host has no name server", NULL, NULL, 0, false);
        return NULL;
    }
    dns_query *q = heap_calloc(&hp->heap, 1, sizeof *q);
    *q = (dns_query){.hp = hp, .cb = cb, .arg = arg, .fd = -1};
    memcpy(q->name, name, strlen(name) + 1);
    q->next = hp->queries;
    if (hp->queries)
        hp->queries->prev = q;
    hp->queries = q;
    send_queries(q);
    return q->dead ? NULL : q; /* (dead: already answered, and freed at the turn's end) */
}

void dns_cancel(helper *hp, dns_query *q)
{
    (void)hp;
    if (!q)
        return;
    q->arg = NULL;
    retire(q);
}

int dns_timeout_ms(helper *hp)
{
    long long t = -1;
    for (dns_query *q = hp->queries; q; q = q->next)
        if (t < 0 || q->deadline < t)
            t = q->deadline;
    return t < 0 ? -1 : (int)(t > hp->now ? t - hp->now : 0);
}

void dns_tick(helper *hp)
{
    /* A callback never touches another query (a conn has one at most), and a retry's
     * deadline is in the future: the saved next pointer stays valid. */
    for (dns_query *q = hp->queries, *next; q; q = next) {
        next = q->next;
        if (q->deadline <= hp->now) {
            q->error = "the name servers did not answer in time";
            next_attempt(q);
        }
    }
    while (hp->dead_queries) {
        dns_query *q = hp->dead_queries;
        hp->dead_queries = q->next;
        heap_free(&hp->heap, q);
    }
}
