// SPDX-License-Identifier: Apache-2.0
/* Inside the network helper (net/host.h): one epoll loop, edge-triggered, no thread per
 * connection.  Every connection is a `conn` between two sockets, moved by splice(2)
 * through a pipe per direction: bytes are taken from a socket only while its pipe has
 * room, so a slow reader slows its writer (back-pressure) and memory stays bounded; an
 * EOF is passed on as shutdown(SHUT_WR) once its direction is drained (half-close). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "net/domain.h"
#include "net/heap.h"
#include "net/host.h"
#include "net/hostconf.h"
#include "net/netplan.h"

typedef struct helper helper;
typedef struct conn conn;
typedef struct dns_query dns_query;
typedef struct conn_hooks conn_hooks;

/* What epoll_event.data.ptr points at. */
typedef struct ev_handle {
    void (*fn)(helper *hp, struct ev_handle *h, uint32_t events);
    void *obj;
    int fd;
} ev_handle;

typedef enum conn_kind { CK_BRIDGE, CK_FORWARD, CK_PUBLISH, CK_PROXY } conn_kind;
typedef enum conn_state {
    CS_HEAD,        /* proxy: reading the request (HTTP head, SOCKS5 greeting and request) */
    CS_RESOLVE,     /* proxy: waiting for the resolver */
    CS_WAIT_SOCKET, /* publish: waiting for the socket factory */
    CS_CONNECT,     /* connecting fd[1] */
    CS_RELAY,       /* moving bytes both ways */
    CS_LINGER,      /* a reply of cordon's own sent: reading what the client still sends, then close */
} conn_state;

/* One direction: from fd[i] to fd[1 - i]. */
typedef struct half {
    int pipe[2];
    size_t inpipe; /* bytes in the pipe */
    size_t cap;    /* the pipe's size */
    bool big;      /* grown for a bulk transfer (helper.n_big counts them) */
    bool eof;      /* the source ended */
    bool shut;     /* the destination was shut down for writing */
    char *pre;     /* bytes to send before the pipe's: a rewritten head, a reply */
    size_t pre_len, pre_off;
} half;

#define CONN_MAX_ADDRS 8
/* The most connections at once (each holds two sockets and two pipes); past it a new one
 * is reset at once and logged, so that a command cannot exhaust the helper. */
#define NET_MAX_CONNS 4096
/* A direction whose pipe fills up is a bulk transfer: its pipe grows from the default
 * 64 KiB to this, for fewer system calls per byte (about 20% more throughput), for at most
 * NET_PIPES_BIG directions at a time: pipe pages count against the user's
 * pipe-user-pages-soft (64 MiB), which all of the user's programs share. */
#define NET_PIPE_BIG  (1024 * 1024)
#define NET_PIPES_BIG 16

struct conn {
    helper *hp;
    ev_handle h[2];
    int fd[2]; /* 0: the side that connected to us; 1: the side we connected to */
    bool rd[2], wr[2];
    half dir[2]; /* dir[0]: fd[0] -> fd[1]; dir[1]: fd[1] -> fd[0] */
    conn_kind kind;
    conn_state state;
    bool dead;
    const net_listen *listen; /* BRIDGE, FORWARD, PROXY: the listener it came through */
    uint16_t publish_port;    /* PUBLISH: the command's port inside */
    /* the filtering proxy */
    char *buf; /* what the client sent so far (CS_HEAD) */
    size_t blen;
    size_t early_off;   /* bytes of buf past the request: they go upstream first */
    const char *proto;  /* "http", "connect", "socks5" */
    int socks_stage;    /* 0: greeting, 1: request */
    bool http_absolute; /* an absolute-form request: the head is rewritten */
    char host[NET_HOST_MAX];
    uint16_t port;
    net_verdict verdict;
    struct sockaddr_storage addr[CONN_MAX_ADDRS];
    socklen_t alen[CONN_MAX_ADDRS];
    int naddr, iaddr;
    int last_err;
    int presock; /* PUBLISH: the socket the factory made, for conn_connect_next */
    dns_query *q;
    long long deadline;  /* CLOCK_MONOTONIC ms, or 0 */
    conn *prev, *next;   /* every live conn */
    conn *tprev, *tnext; /* those with a deadline */
    conn *dnext;         /* closed in this loop turn: freed at its end */
    bool again;          /* in helper.again: more to move, its epoll edges consumed */
    conn *anext;
};

struct helper {
    const conn_hooks *proxy; /* the filtering proxy (net/proxy.c), for CK_PROXY conns */
    heap heap;               /* everything the helper allocates (net/heap.h) */
    int epfd;
    const net_plan *np;
    const hostconf *hc; /* the host's name servers and /etc/hosts, read by the run */
    net_rules rules;
    int log_fd;
    int ctl_fd, handover_fd, pidfd;
    ev_handle ctl_h, handover_h, pidfd_h;
    int *listen_fds;
    ev_handle *listen_h;
    size_t n_listen;
    int *pub_fds;
    ev_handle *pub_h;
    int userns_fd, netns_fd;
    int fact_fd; /* the socket factory (publish), or -1 */
    int fact_pidfd;
    ev_handle fact_h;
    conn **fact_wait; /* conns waiting for a socket from it, in order */
    size_t n_fact_wait, cap_fact_wait;
    dns_query *queries, *dead_queries;
    net_counts *counts; /* shared with the run (net/host.h) */
    size_t n_conns;
    bool full_logged; /* "too many connections" said once per episode */
    conn *conns, *timed, *dead, *again;
    int pool[64][2]; /* empty pipes kept for the next connections */
    size_t n_pool;
    size_t n_big;                  /* pipes grown to NET_PIPE_BIG */
    long long accept_paused_until; /* out of descriptors: listeners rest until then */
    bool stop;
    long long now; /* CLOCK_MONOTONIC ms, updated every loop turn */
};

/* Count a decision where the run can read it at any time. */
#define HELPER_COUNT(hp, field) __atomic_fetch_add(&(hp)->counts->field, 1u, __ATOMIC_RELEASE)

/* helper.c */
/* strerror(3) without its translation (which may allocate): the English text. */
const char *net_strerror(int e);
void conn_close(conn *c);
void conn_set_deadline(conn *c, long long ms_from_now);
/* Connect fd[1] to the next address in c->addr; on success the conn relays. */
void conn_connect_next(conn *c);
/* Queue bytes for one direction (copied), before what the pipe carries. */
void conn_queue(conn *c, int dir, const char *data, size_t n);
/* Reply with bytes of cordon's own (copied), then close (after reading what the client
 * still sends, so that the reply is not lost to a reset). */
void conn_reply_close(conn *c, const char *data, size_t n);
void conn_relay(conn *c);
void helper_log(helper *hp, const char *kind, const char *host, unsigned port, const char *decision, const char *reason,
                const char *rule, const struct sockaddr *addr);

/* The filtering proxy's side of a CK_PROXY conn (net/proxy.c's proxy_hooks), which the
 * helper's loop calls through helper.proxy: handed to net_helper_main by its starter
 * (net/host.c), so that the loop never names the proxy, which calls the conn_* above. */
struct conn_hooks {
    void (*start)(conn *c);       /* accepted: read the request (CS_HEAD) */
    void (*on_readable)(conn *c); /* CS_HEAD: more of the request */
    /* CS_RESOLVE: the destination's addresses, or status < 0 and why */
    void (*resolved)(conn *c, int status, const char *error, const struct sockaddr_storage *addrs,
                     const socklen_t *lens, int n, bool local);
    /* The connection to the destination failed (errno e) or timed out (e == ETIMEDOUT). */
    void (*connect_failed)(conn *c, int e);
    /* Connected: reply to the client, forward the request, relay. */
    void (*connected)(conn *c);
};

/* dns.c: the addresses of a name: "localhost" and its subdomains are the loopback
 * addresses; then /etc/hosts; then the host's name servers (A and AAAA at once, each
 * server in turn), on the helper's epoll loop.  The callback may run before dns_lookup()
 * returns (which then returns NULL); status 0 with n addresses (IPv4 first), or -1 with
 * error set (a static phrase); `local`: the answer came from localhost or /etc/hosts, not
 * from DNS. */
typedef void (*dns_cb)(void *arg, int status, const char *error, const struct sockaddr_storage *addrs,
                       const socklen_t *lens, int n, bool local);
dns_query *dns_lookup(helper *hp, const char *name, dns_cb cb, void *arg);
/* The callback will not run; the query is released. */
void dns_cancel(helper *hp, dns_query *q);
/* -1: no query waits; else ms until the next one times out. */
int dns_timeout_ms(helper *hp);
/* Time out what is due; free what was cancelled (at the end of a loop turn). */
void dns_tick(helper *hp);
