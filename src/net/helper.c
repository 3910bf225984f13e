// SPDX-License-Identifier: Apache-2.0
/* The network helper's process (net/host.h): its event loop, the relays, the listeners,
 * what it asks of the socket factory for --publish-port (net/factory.h). */
#include "net/helper.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/close_range.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/factory.h"
#include "net/helper_main.h"
#include "net/http.h"
#include "net/netlog.h"
#include "net/wire.h"
#include "util/fdutil.h"
#include "util/time.h"

#if defined(__SANITIZE_ADDRESS__)
#define CORDON_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORDON_SANITIZED 1
#endif
#endif
#ifndef CORDON_SANITIZED
#define CORDON_SANITIZED 0
#endif

#define CONNECT_TIMEOUT_MS 10000
#define LINGER_MS          2000
#define EV_RELAY           (EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET)

const char *net_strerror(int e)
{
    const char *s = strerrordesc_np(e);
    return s ? s : "unknown error";
}

static const char *kind_name(conn_kind k)
{
    switch (k) {
    case CK_BRIDGE: return "bridge";
    case CK_FORWARD: return "forward";
    case CK_PUBLISH: return "publish";
    case CK_PROXY: return "proxy";
    }
    return "?";
}

void helper_log(helper *hp, const char *kind, const char *host, unsigned port, const char *decision, const char *reason,
                const char *rule, const struct sockaddr *addr)
{
    if (hp->log_fd < 0)
        return;
    char a[64];
    netlog_entry e = {.kind = kind,
                      .host = host,
                      .port = port,
                      .decision = decision,
                      .reason = reason,
                      .rule = rule,
                      .address = addr ? net_addr_str(addr, a, sizeof a) : NULL};
    netlog_write(hp->log_fd, &e);
}

/* ---- pipes ---------------------------------------------------------------------------- */

static int pipe_get(helper *hp, int p[2])
{
    if (hp->n_pool > 0) {
        hp->n_pool--;
        p[0] = hp->pool[hp->n_pool][0];
        p[1] = hp->pool[hp->n_pool][1];
        return 0;
    }
    return pipe2(p, O_NONBLOCK | O_CLOEXEC);
}

static size_t pipe_cap(int fd)
{
    int n = fcntl(fd, F_GETPIPE_SZ);
    return n > 0 ? (size_t)n : 65536;
}

static void pipe_put(helper *hp, half *h)
{
    int *p = h->pipe;
    if (p[0] < 0)
        return;
    bool keep = h->inpipe == 0;
    if (h->big) {
        hp->n_big--;
        h->big = false;
        /* back to the default size before it is used again (an empty pipe can shrink) */
        keep = keep && fcntl(p[0], F_SETPIPE_SZ, 65536) >= 0;
    }
    if (keep && hp->n_pool < sizeof hp->pool / sizeof hp->pool[0]) {
        hp->pool[hp->n_pool][0] = p[0];
        hp->pool[hp->n_pool][1] = p[1];
        hp->n_pool++;
    } else {
        close(p[0]);
        close(p[1]);
    }
    p[0] = p[1] = -1;
}

/* ---- conns ---------------------------------------------------------------------------- */

static void conn_event(helper *hp, ev_handle *h, uint32_t events);
static void reset_fd(int fd);
static void ask_factory(conn *c);

static int ep_add(helper *hp, ev_handle *h, uint32_t events)
{
    struct epoll_event ev = {.events = events, .data.ptr = h};
    return epoll_ctl(hp->epfd, EPOLL_CTL_ADD, h->fd, &ev);
}

static conn *conn_new(helper *hp, conn_kind kind, int fd0)
{
    if (hp->n_conns >= NET_MAX_CONNS) {
        HELPER_COUNT(hp, refused);
        if (!hp->full_logged)
            helper_log(hp, kind_name(kind), NULL, 0, "refused",
                       "more than 4096 connections at once through cordon; new ones are reset", NULL, NULL);
        hp->full_logged = true;
        reset_fd(fd0);
        close(fd0);
        return NULL;
    }
    hp->full_logged = false;
    hp->n_conns++;
    conn *c = heap_calloc(&hp->heap, 1, sizeof *c);
    c->hp = hp;
    c->kind = kind;
    c->fd[0] = fd0;
    c->fd[1] = -1;
    c->presock = -1;
    for (int i = 0; i < 2; i++) {
        c->h[i] = (ev_handle){.fn = conn_event, .obj = c, .fd = -1};
        c->dir[i].pipe[0] = c->dir[i].pipe[1] = -1;
    }
    c->h[0].fd = fd0;
    c->next = hp->conns;
    if (hp->conns)
        hp->conns->prev = c;
    hp->conns = c;
    if (ep_add(hp, &c->h[0], EV_RELAY) < 0) {
        conn_close(c);
        return NULL;
    }
    return c;
}

void conn_set_deadline(conn *c, long long ms)
{
    helper *hp = c->hp;
    bool linked = c->deadline != 0;
    if (ms == 0) {
        if (linked) {
            if (c->tprev)
                c->tprev->tnext = c->tnext;
            else
                hp->timed = c->tnext;
            if (c->tnext)
                c->tnext->tprev = c->tprev;
            c->tprev = c->tnext = NULL;
        }
        c->deadline = 0;
        return;
    }
    c->deadline = hp->now + ms;
    if (!linked) {
        c->tnext = hp->timed;
        if (hp->timed)
            hp->timed->tprev = c;
        hp->timed = c;
    }
}

/* Close with a reset, so that the client sees an error rather than an empty answer. */
static void reset_fd(int fd)
{
    struct linger l = {.l_onoff = 1, .l_linger = 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
}

void conn_close(conn *c)
{
    if (c->dead)
        return;
    helper *hp = c->hp;
    c->dead = true;
    conn_set_deadline(c, 0);
    dns_cancel(hp, c->q);
    c->q = NULL;
    for (int i = 0; i < 2; i++) {
        if (c->fd[i] >= 0)
            close(c->fd[i]);
        c->fd[i] = -1;
        pipe_put(hp, &c->dir[i]);
        heap_free(&hp->heap, c->dir[i].pre);
        c->dir[i].pre = NULL;
    }
    if (c->presock >= 0)
        close(c->presock);
    c->presock = -1;
    heap_free(&hp->heap, c->buf);
    c->buf = NULL;
    for (size_t i = 0; i < hp->n_fact_wait; i++)
        if (hp->fact_wait[i] == c)
            hp->fact_wait[i] = NULL;
    if (c->again)
        for (conn **p = &hp->again; *p; p = &(*p)->anext)
            if (*p == c) {
                *p = c->anext;
                break;
            }
    c->again = false;
    hp->n_conns--;
    if (c->prev)
        c->prev->next = c->next;
    else
        hp->conns = c->next;
    if (c->next)
        c->next->prev = c->prev;
    c->dnext = hp->dead;
    hp->dead = c;
}

void conn_queue(conn *c, int dir, const char *data, size_t n)
{
    half *h = &c->dir[dir];
    h->pre = heap_realloc(&c->hp->heap, h->pre, h->pre_len + n);
    memcpy(h->pre + h->pre_len, data, n);
    h->pre_len += n;
}

static void linger_pump(conn *c)
{
    half *h = &c->dir[1];
    while (h->pre_off < h->pre_len) {
        ssize_t n = send(c->fd[0], h->pre + h->pre_off, h->pre_len - h->pre_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            h->pre_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        conn_close(c);
        return;
    }
    if (!h->shut) {
        shutdown(c->fd[0], SHUT_WR);
        h->shut = true;
    }
    /* What the client still sends is read and dropped until it closes (or the linger
     * time ends): closing with unread data would reset the connection, and the client
     * could lose the reply. */
    char scratch[4096];
    for (int i = 0; i < 16; i++) {
        ssize_t n = recv(c->fd[0], scratch, sizeof scratch, MSG_DONTWAIT);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        conn_close(c);
        return;
    }
}

void conn_reply_close(conn *c, const char *data, size_t n)
{
    if (c->fd[1] >= 0)
        close(c->fd[1]);
    c->fd[1] = -1;
    dns_cancel(c->hp, c->q);
    c->q = NULL;
    heap_free(&c->hp->heap, c->dir[1].pre);
    c->dir[1].pre = NULL;
    c->dir[1].pre_len = c->dir[1].pre_off = 0;
    conn_queue(c, 1, data, n);
    c->state = CS_LINGER;
    conn_set_deadline(c, LINGER_MS);
    linger_pump(c);
}

static void nodelay(int fd)
{
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* One direction; true when it made progress. */
static bool pump_dir(conn *c, int i)
{
    half *h = &c->dir[i];
    int from = c->fd[i], to = c->fd[1 - i];
    bool progress = false;
    if (h->pre_off < h->pre_len && c->wr[1 - i]) {
        ssize_t n = send(to, h->pre + h->pre_off, h->pre_len - h->pre_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            h->pre_off += (size_t)n;
            progress = true;
            if (h->pre_off == h->pre_len) {
                heap_free(&c->hp->heap, h->pre);
                h->pre = NULL;
                h->pre_len = h->pre_off = 0;
            }
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            c->wr[1 - i] = false;
        } else if (n < 0 && errno != EINTR) {
            conn_close(c);
            return false;
        }
    }
    if (!h->eof && c->rd[i] && h->inpipe < h->cap) {
        ssize_t n = splice(from, NULL, h->pipe[1], NULL, h->cap - h->inpipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0) {
            h->inpipe += (size_t)n;
            progress = true;
            /* half full is full: a slot of the pipe holds part of a page at times */
            if (h->inpipe >= h->cap / 2 && !h->big && c->hp->n_big < NET_PIPES_BIG) {
                int sz = fcntl(h->pipe[0], F_SETPIPE_SZ, NET_PIPE_BIG);
                if (sz > 0) {
                    h->cap = (size_t)sz;
                    h->big = true;
                    c->hp->n_big++;
                }
            }
        } else if (n == 0) {
            h->eof = true;
            progress = true;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            /* The socket is empty, or the pipe's slots are full though its bytes are not
             * (a slot holds part of a page): only the first clears readiness. */
            if (h->inpipe == 0)
                c->rd[i] = false;
        } else if (errno != EINTR) {
            conn_close(c);
            return false;
        }
    }
    if (h->inpipe > 0 && h->pre_len == 0 && c->wr[1 - i]) {
        ssize_t n = splice(h->pipe[0], NULL, to, NULL, h->inpipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n > 0) {
            h->inpipe -= (size_t)n;
            progress = true;
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            c->wr[1 - i] = false;
        } else if (n < 0 && errno != EINTR) {
            conn_close(c);
            return false;
        }
    }
    /* Half-close: the source ended and everything it sent is through. */
    if (h->eof && h->inpipe == 0 && h->pre_len == 0 && !h->shut) {
        shutdown(to, SHUT_WR);
        h->shut = true;
        progress = true;
    }
    return progress;
}

static void pump(conn *c)
{
    for (int turns = 0; turns < 64; turns++) {
        bool p0 = pump_dir(c, 0);
        if (c->dead)
            return;
        bool p1 = pump_dir(c, 1);
        if (c->dead)
            return;
        if (c->dir[0].shut && c->dir[1].shut) {
            conn_close(c);
            return;
        }
        if (!p0 && !p1)
            return;
    }
    /* A fast pair could keep the loop busy for ever: let the others have their turn and
     * come back to this one right after (its edges were consumed: epoll will not). */
    if (!c->again) {
        c->again = true;
        c->anext = c->hp->again;
        c->hp->again = c;
    }
}

void conn_relay(conn *c)
{
    helper *hp = c->hp;
    conn_set_deadline(c, 0);
    for (int i = 0; i < 2; i++) {
        if (pipe_get(hp, c->dir[i].pipe) < 0) {
            conn_close(c);
            return;
        }
        c->dir[i].cap = pipe_cap(c->dir[i].pipe[0]);
    }
    nodelay(c->fd[0]);
    nodelay(c->fd[1]);
    c->state = CS_RELAY;
    c->rd[0] = c->rd[1] = c->wr[0] = c->wr[1] = true;
    pump(c);
}

static void endpoint_desc(const conn *c, char *buf, size_t n)
{
    if (c->kind == CK_PUBLISH)
        snprintf(buf, n, "--publish-port to 127.0.0.1:%u inside", (unsigned)c->publish_port);
    else if (c->listen)
        snprintf(buf, n, "%s (127.0.0.1:%u inside)", c->listen->what, (unsigned)c->listen->port);
    else
        snprintf(buf, n, "?");
}

static const conn_hooks *hp_proxy(const conn *c)
{
    return c->hp->proxy;
}

static void connected(conn *c)
{
    conn_set_deadline(c, 0);
    if (c->kind == CK_PROXY) {
        hp_proxy(c)->connected(c);
        return;
    }
    char why[512];
    endpoint_desc(c, why, sizeof why);
    HELPER_COUNT(c->hp, allowed);
    helper_log(c->hp, kind_name(c->kind), NULL, 0, "allowed", why, NULL,
               (const struct sockaddr *)&c->addr[c->iaddr > 0 ? c->iaddr - 1 : 0]);
    conn_relay(c);
}

static void connect_failed(conn *c, int e)
{
    if (c->kind == CK_PROXY) {
        hp_proxy(c)->connect_failed(c, e);
        return;
    }
    char why[700], d[512], a[64];
    const struct sockaddr *sa = (const struct sockaddr *)&c->addr[c->iaddr > 0 ? c->iaddr - 1 : 0];
    endpoint_desc(c, d, sizeof d);
    snprintf(why, sizeof why, "cannot connect to %s for %s: %s", net_addr_str(sa, a, sizeof a), d,
             e == ETIMEDOUT ? "timed out" : net_strerror(e));
    HELPER_COUNT(c->hp, failed);
    helper_log(c->hp, kind_name(c->kind), NULL, 0, "failed", why, NULL, sa);
    reset_fd(c->fd[0]);
    conn_close(c);
}

void conn_connect_next(conn *c)
{
    helper *hp = c->hp;
    while (c->iaddr < c->naddr) {
        if (c->kind == CK_PUBLISH && c->presock < 0) {
            /* a socket in the sandbox's namespace, from the factory, for each attempt */
            if (c->fd[1] >= 0)
                close(c->fd[1]);
            c->fd[1] = -1;
            ask_factory(c);
            return;
        }
        const struct sockaddr *sa = (const struct sockaddr *)&c->addr[c->iaddr];
        socklen_t len = c->alen[c->iaddr];
        c->iaddr++;
        if (c->fd[1] >= 0)
            close(c->fd[1]); /* the previous attempt (its epoll registration goes with it) */
        c->fd[1] = -1;
        int fd = c->presock;
        c->presock = -1;
        if (fd < 0)
            fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            c->last_err = errno;
            continue;
        }
        int r = connect(fd, sa, len);
        if (r < 0 && errno != EINPROGRESS) {
            c->last_err = errno;
            close(fd);
            continue;
        }
        c->fd[1] = fd;
        c->h[1].fd = fd;
        if (ep_add(hp, &c->h[1], EV_RELAY) < 0) {
            c->last_err = errno;
            continue;
        }
        c->state = CS_CONNECT;
        c->wr[1] = c->rd[1] = false;
        if (r == 0) {
            connected(c);
            return;
        }
        conn_set_deadline(c, CONNECT_TIMEOUT_MS);
        return;
    }
    connect_failed(c, c->last_err ? c->last_err : ECONNREFUSED);
}

static void check_connect(conn *c)
{
    int e = 0;
    socklen_t l = sizeof e;
    if (getsockopt(c->fd[1], SOL_SOCKET, SO_ERROR, &e, &l) < 0)
        e = errno;
    if (e == 0) {
        connected(c);
        return;
    }
    if (e == EINPROGRESS || e == EALREADY)
        return;
    c->last_err = e;
    conn_connect_next(c);
}

static void conn_timeout(conn *c)
{
    switch (c->state) {
    case CS_HEAD:
        if (c->blen == 0 || c->buf[0] == 5) {
            conn_close(c);
        } else {
            static const char body[] = "cordon: the request was not complete within 30 s\n";
            char buf[512];
            size_t n = http_response(408, "http_request_error", body, buf, sizeof buf);
            HELPER_COUNT(c->hp, refused);
            helper_log(c->hp, "http", NULL, 0, "refused", "bad request: not complete within 30 s", NULL, NULL);
            conn_reply_close(c, buf, n);
        }
        break;
    case CS_RESOLVE:
        dns_cancel(c->hp, c->q);
        c->q = NULL;
        hp_proxy(c)->resolved(c, -1, "timed out", NULL, NULL, 0, false);
        break;
    case CS_CONNECT:
        c->last_err = ETIMEDOUT;
        conn_connect_next(c);
        break;
    case CS_WAIT_SOCKET:
        c->last_err = ETIMEDOUT;
        connect_failed(c, ETIMEDOUT);
        break;
    case CS_LINGER:
    case CS_RELAY: conn_close(c); break;
    }
}

static void conn_event(helper *hp, ev_handle *h, uint32_t events)
{
    (void)hp;
    conn *c = h->obj;
    if (c->dead)
        return;
    int side = h == &c->h[0] ? 0 : 1;
    if (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
        c->rd[side] = true;
    if (events & (EPOLLOUT | EPOLLHUP | EPOLLERR))
        c->wr[side] = true;
    switch (c->state) {
    case CS_HEAD:
        if (side == 0 && c->rd[0])
            hp_proxy(c)->on_readable(c);
        break;
    case CS_CONNECT:
        if (side == 1 && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
            check_connect(c);
        break;
    case CS_RELAY: pump(c); break;
    case CS_LINGER:
        if (side == 0)
            linger_pump(c);
        break;
    case CS_RESOLVE:
    case CS_WAIT_SOCKET: break;
    }
}

/* ---- the socket factory (--publish-port; net/factory.h) -------------------------------- */

static void factory_event(helper *hp, ev_handle *h, uint32_t events)
{
    (void)h;
    for (;;) {
        int32_t e = 0;
        union {
            struct cmsghdr align;
            char buf[CMSG_SPACE(sizeof(int) * 4)];
        } cb;
        struct iovec iov = {.iov_base = &e, .iov_len = sizeof e};
        struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb.buf, .msg_controllen = sizeof cb.buf};
        ssize_t r = recvmsg(hp->fact_fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        int fd = -1;
        struct cmsghdr *cm = r > 0 ? CMSG_FIRSTHDR(&m) : NULL;
        if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len >= CMSG_LEN(sizeof(int)))
            memcpy(&fd, CMSG_DATA(cm), sizeof fd);
        if (r <= 0) {
            /* The factory is gone: whoever waits for it will not get a socket. */
            epoll_ctl(hp->epfd, EPOLL_CTL_DEL, hp->fact_fd, NULL);
            close(hp->fact_fd);
            hp->fact_fd = -1;
            e = (events & EPOLLERR) ? EIO : ECHILD;
        }
        /* The oldest waiting conn gets it (conns closed meanwhile left a NULL). */
        conn *c = NULL;
        while (hp->n_fact_wait > 0 && !c) {
            c = hp->fact_wait[0];
            memmove(hp->fact_wait, hp->fact_wait + 1, (hp->n_fact_wait - 1) * sizeof *hp->fact_wait);
            hp->n_fact_wait--;
        }
        if (!c) {
            if (fd >= 0)
                close(fd);
        } else if (fd < 0) {
            c->last_err = e ? e : EIO;
            connect_failed(c, c->last_err);
        } else {
            c->presock = fd;
            conn_connect_next(c);
        }
        if (r <= 0) {
            /* fail everyone still waiting */
            while (hp->n_fact_wait > 0) {
                conn *w = hp->fact_wait[--hp->n_fact_wait];
                if (w)
                    connect_failed(w, ECHILD);
            }
            return;
        }
    }
}

static void factory_start(helper *hp)
{
    int sock = net_factory_spawn(hp->userns_fd, hp->netns_fd, &hp->fact_pidfd);
    if (sock < 0)
        return;
    hp->fact_fd = sock;
    hp->fact_h = (ev_handle){.fn = factory_event, .obj = hp, .fd = sock};
    ep_add(hp, &hp->fact_h, EPOLLIN);
}

/* ---- listeners -------------------------------------------------------------------------- */

static bool accept_one(helper *hp, int lfd, int *out)
{
    int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
        *out = fd;
        return true;
    }
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        /* Out of descriptors: leave the backlog where it is for a while. */
        hp->accept_paused_until = hp->now + 100;
        for (size_t i = 0; i < hp->n_listen; i++)
            epoll_ctl(hp->epfd, EPOLL_CTL_DEL, hp->listen_fds[i], NULL);
        for (size_t i = 0; i < hp->np->n_publish && hp->pub_fds; i++)
            epoll_ctl(hp->epfd, EPOLL_CTL_DEL, hp->pub_fds[i], NULL);
    }
    return false;
}

static void listen_event(helper *hp, ev_handle *h, uint32_t events)
{
    (void)events;
    const net_listen *l = h->obj;
    int fd = -1;
    for (int n = 0; n < 64 && accept_one(hp, h->fd, &fd); n++) {
        conn *c = conn_new(hp,
                           l->kind == NET_LISTEN_PROXY    ? CK_PROXY
                           : l->kind == NET_LISTEN_BRIDGE ? CK_BRIDGE
                                                          : CK_FORWARD,
                           fd);
        if (!c)
            continue;
        c->listen = l;
        if (c->kind == CK_PROXY) {
            hp_proxy(c)->start(c);
            continue;
        }
        for (int i = 0; i < l->to.n; i++) {
            c->addr[i] = l->to.addr[i];
            c->alen[i] = l->to.len[i];
        }
        c->naddr = l->to.n;
        conn_connect_next(c);
    }
}

/* Ask the factory for a socket of the family of the conn's next address. */
static void ask_factory(conn *c)
{
    helper *hp = c->hp;
    c->state = CS_WAIT_SOCKET;
    conn_set_deadline(c, CONNECT_TIMEOUT_MS);
    if (hp->fact_fd < 0) {
        connect_failed(c, ECHILD);
        return;
    }
    if (hp->n_fact_wait == hp->cap_fact_wait) {
        hp->cap_fact_wait = hp->cap_fact_wait ? 2 * hp->cap_fact_wait : 16;
        hp->fact_wait = heap_realloc(&hp->heap, hp->fact_wait, hp->cap_fact_wait * sizeof *hp->fact_wait);
    }
    hp->fact_wait[hp->n_fact_wait++] = c;
    char fam = c->addr[c->iaddr].ss_family == AF_INET6 ? '6' : '4';
    if (write(hp->fact_fd, &fam, 1) != 1) {
        hp->n_fact_wait--;
        connect_failed(c, errno ? errno : EIO);
    }
}

static void publish_event(helper *hp, ev_handle *h, uint32_t events)
{
    (void)events;
    const net_publish *pb = h->obj;
    int fd = -1;
    for (int n = 0; n < 64 && accept_one(hp, h->fd, &fd); n++) {
        conn *c = conn_new(hp, CK_PUBLISH, fd);
        if (!c)
            continue;
        c->publish_port = pb->inside;
        /* what the command listens on: 127.0.0.1, else ::1 (a server bound to
         * "localhost" may have taken the IPv6 one only) */
        struct sockaddr_in *a = (struct sockaddr_in *)&c->addr[0];
        *a = (struct sockaddr_in){
            .sin_family = AF_INET, .sin_port = htons(pb->inside), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        c->alen[0] = sizeof *a;
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&c->addr[1];
        *a6 = (struct sockaddr_in6){
            .sin6_family = AF_INET6, .sin6_port = htons(pb->inside), .sin6_addr = IN6ADDR_LOOPBACK_INIT};
        c->alen[1] = sizeof *a6;
        c->naddr = 2;
        ask_factory(c);
    }
}

static void listeners_arm(helper *hp)
{
    for (size_t i = 0; i < hp->n_listen; i++)
        ep_add(hp, &hp->listen_h[i], EPOLLIN);
    if (hp->pub_fds)
        for (size_t i = 0; i < hp->np->n_publish; i++)
            ep_add(hp, &hp->pub_h[i], EPOLLIN);
}

/* ---- control ---------------------------------------------------------------------------- */

static void handover_event(helper *hp, ev_handle *h, uint32_t events)
{
    (void)events;
    net_wire_handover msg;
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * (2 * NET_MAX_LISTEN + 2))];
    } cb;
    struct iovec iov = {.iov_base = &msg, .iov_len = sizeof msg};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cb.buf, .msg_controllen = sizeof cb.buf};
    ssize_t r = recvmsg(h->fd, &m, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (r < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    epoll_ctl(hp->epfd, EPOLL_CTL_DEL, h->fd, NULL);
    close(h->fd);
    hp->handover_fd = -1;
    int fds[2 * NET_MAX_LISTEN + 2];
    size_t nfds = 0;
    struct cmsghdr *cm = r > 0 ? CMSG_FIRSTHDR(&m) : NULL;
    if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
        nfds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        if (nfds > 2 * NET_MAX_LISTEN + 2)
            nfds = 2 * NET_MAX_LISTEN + 2;
        memcpy(fds, CMSG_DATA(cm), nfds * sizeof(int));
    }
    size_t want = hp->np->n_listen + (hp->np->n_publish ? 2 : 0);
    for (size_t i = 0; r == (ssize_t)sizeof msg && i < hp->np->n_listen && i < NET_MAX_LISTEN; i++)
        want += msg.v6[i] != 0;
    if (r != (ssize_t)sizeof msg || msg.magic != NET_WIRE_MAGIC || msg.n_listen != hp->np->n_listen || nfds != want) {
        /* PID 1 failed before it could hand its sockets over: it reports why itself. */
        for (size_t i = 0; i < nfds; i++)
            close(fds[i]);
        return;
    }
    size_t k = 0;
    hp->listen_fds = heap_calloc(&hp->heap, 2 * hp->np->n_listen + 1, sizeof *hp->listen_fds);
    hp->listen_h = heap_calloc(&hp->heap, 2 * hp->np->n_listen + 1, sizeof *hp->listen_h);
    hp->n_listen = 0;
    for (size_t i = 0; i < hp->np->n_listen; i++) {
        /* 127.0.0.1:PORT, and for a forwarded port [::1]:PORT beside it */
        for (int twin = 0; twin <= (msg.v6[i] ? 1 : 0); twin++) {
            size_t j = hp->n_listen++;
            hp->listen_fds[j] = fds[k++];
            hp->listen_h[j] =
                (ev_handle){.fn = listen_event, .obj = (void *)(uintptr_t)&hp->np->listen[i], .fd = hp->listen_fds[j]};
        }
    }
    if (hp->np->n_publish) {
        hp->userns_fd = fds[k++];
        hp->netns_fd = fds[k++];
        factory_start(hp);
        close(hp->userns_fd);
        close(hp->netns_fd);
        hp->userns_fd = hp->netns_fd = -1;
    }
    listeners_arm(hp);
}

static void ctl_event(helper *hp, ev_handle *h, uint32_t events)
{
    (void)h;
    (void)events;
    hp->stop = true; /* a byte, EOF or an error: the run is over */
}

/* ---- the loop ----------------------------------------------------------------------------- */

static int loop_timeout(helper *hp)
{
    long long t = -1;
    for (conn *c = hp->timed; c; c = c->tnext)
        if (t < 0 || c->deadline < t)
            t = c->deadline;
    if (hp->accept_paused_until && (t < 0 || hp->accept_paused_until < t))
        t = hp->accept_paused_until;
    int ms = t < 0 ? -1 : (int)(t > hp->now ? t - hp->now : 0);
    int d = dns_timeout_ms(hp);
    if (d >= 0 && (ms < 0 || d < ms))
        ms = d;
    return hp->again ? 0 : ms;
}

static void loop(helper *hp)
{
    struct epoll_event evs[256];
    while (!hp->stop) {
        hp->now = now_ms();
        int n = epoll_wait(hp->epfd, evs, 256, loop_timeout(hp));
        if (n < 0 && errno != EINTR)
            break;
        hp->now = now_ms();
        for (int i = 0; i < n; i++) {
            ev_handle *h = evs[i].data.ptr;
            if (h == &hp->pidfd_h) {
                hp->stop = true; /* the sandbox is over */
                continue;
            }
            h->fn(hp, h, evs[i].events);
        }
        for (conn *c = hp->again; c; c = hp->again) {
            hp->again = c->anext;
            c->again = false;
            if (!c->dead)
                pump(c);
            if (hp->again == c) /* pumped and queued itself again: next turn */
                break;
        }
        for (conn *c = hp->timed, *next; c; c = next) {
            next = c->tnext;
            if (c->deadline <= hp->now)
                conn_timeout(c);
        }
        if (hp->accept_paused_until && hp->accept_paused_until <= hp->now) {
            hp->accept_paused_until = 0;
            listeners_arm(hp);
        }
        dns_tick(hp);
        while (hp->dead) {
            conn *c = hp->dead;
            hp->dead = c->dnext;
            heap_free(&hp->heap, c);
        }
    }
}

/* Close every descriptor >= 3 but those in keep (any number of them). */
void net_helper_main(const net_host *h, const conn_hooks *proxy, int sock, int ctl_fd, int pid1_pidfd)
{
    const net_plan *np = h->np;
    /* Never take the terminal's signals meant for the command; default dispositions and
     * an empty mask (the caller's handlers are not ours to run). */
    if (setsid() < 0)
        _exit(1);
    sigset_t none;
    sigemptyset(&none);
    struct sigaction dfl = {.sa_handler = SIG_DFL}, ign = {.sa_handler = SIG_IGN};
    for (int sig = 1; sig < NSIG; sig++)
        (void)sigaction(sig, &dfl, NULL); /* fails harmlessly for SIGKILL, SIGSTOP, glibc's own */
    /* splice(2) to a closed socket: EPIPE, not death */
    if (sigaction(SIGPIPE, &ign, NULL) < 0 || sigprocmask(SIG_SETMASK, &none, NULL) < 0)
        _exit(1);

    int keep[NET_MAX_LISTEN + 8];
    size_t nkeep = 0;
    keep[nkeep++] = sock;
    keep[nkeep++] = ctl_fd;
    keep[nkeep++] = pid1_pidfd;
    if (h->log_fd >= 0)
        keep[nkeep++] = h->log_fd;
    for (size_t i = 0; i < np->n_publish; i++)
        keep[nkeep++] = h->pub_fds[i];
    /* The helper holds nothing of the caller's: or it does not serve. */
    if (close_fds_except(keep, nkeep) < 0)
        _exit(1);
    /* Nothing of the caller's stdio: a harness waiting for EOF on the command's output
     * must not wait for the helper.  (A sanitizer build keeps stderr for its reports; the
     * helper never outlives PID 1, which holds it too.) */
    int null = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0)
        _exit(1);
#if !CORDON_SANITIZED
    if (dup2(null, 2) < 0)
        _exit(1);
#endif
    if (null > 2)
        close(null);
    /* more connections at once where the hard limit allows it (best effort) */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }

    helper hp = {.np = np,
                 .proxy = proxy,
                 .hc = &h->hc,
                 .counts = h->counts,
                 .log_fd = h->log_fd,
                 .ctl_fd = ctl_fd,
                 .handover_fd = sock,
                 .pidfd = pid1_pidfd,
                 .userns_fd = -1,
                 .netns_fd = -1,
                 .fact_fd = -1,
                 .fact_pidfd = -1,
                 .pub_fds = np->n_publish ? h->pub_fds : NULL};
    hp.rules = (net_rules){.allow = np->allow.v, .n_allow = np->allow.n, .deny = np->deny.v, .n_deny = np->deny.n};
    hp.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (hp.epfd < 0)
        _exit(1);
    hp.now = now_ms();
    hp.ctl_h = (ev_handle){.fn = ctl_event, .obj = &hp, .fd = ctl_fd};
    hp.handover_h = (ev_handle){.fn = handover_event, .obj = &hp, .fd = sock};
    /* PID 1's pidfd is readable once the sandbox is over: then so is the helper */
    hp.pidfd_h = (ev_handle){.fn = NULL, .obj = &hp, .fd = pid1_pidfd};
    ep_add(&hp, &hp.ctl_h, EPOLLIN);
    ep_add(&hp, &hp.handover_h, EPOLLIN);
    if (pid1_pidfd >= 0)
        ep_add(&hp, &hp.pidfd_h, EPOLLIN);
    if (np->n_publish) {
        hp.pub_h = heap_calloc(&hp.heap, np->n_publish, sizeof *hp.pub_h);
        for (size_t i = 0; i < np->n_publish; i++)
            hp.pub_h[i] =
                (ev_handle){.fn = publish_event, .obj = (void *)(uintptr_t)&np->publish[i], .fd = h->pub_fds[i]};
    }
    loop(&hp);
    net_factory_stop(&hp.fact_fd, &hp.fact_pidfd);

    /* the counts are in the run's memory already */
    _exit(0);
}
