// SPDX-License-Identifier: Apache-2.0
#include "net/inside.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/wire.h"
#include "util/err.h"

/* [::1]:PORT, or -1 where the namespace has no IPv6 loopback (not an error). */
static int listen_inside6(uint16_t port)
{
    int fd = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(port), .sin6_addr = IN6ADDR_LOOPBACK_INIT};
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, SOMAXCONN) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static int listen_inside(uint16_t port, cordon_error *err)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return err_set(err, CORDON_STAGE_NAMESPACES, errno, "cannot create a listening socket inside the sandbox");
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, SOMAXCONN) < 0) {
        int e = errno;
        close(fd);
        return err_set(err, CORDON_STAGE_NAMESPACES, e, "cannot listen on 127.0.0.1:%u inside the sandbox",
                       (unsigned)port);
    }
    return fd;
}

static void close_all(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

int net_inside_setup(const net_plan *np, int sock, cordon_error *err)
{
    if (!np->active)
        return 0;
    int fds[2 * NET_MAX_LISTEN + 2];
    size_t n = 0;
    int ret = 0;
    net_wire_handover msg = {.magic = NET_WIRE_MAGIC, .n_listen = (uint32_t)np->n_listen};
    for (size_t i = 0; i < np->n_listen && i < NET_MAX_LISTEN; i++) {
        fds[n] = listen_inside(np->listen[i].port, err);
        if (fds[n++] < 0) {
            ret = -1;
            goto out;
        }
        if (np->listen[i].kind == NET_LISTEN_FORWARD && (fds[n] = listen_inside6(np->listen[i].port)) >= 0) {
            n++;
            msg.v6[i] = 1;
        }
    }
    if (np->n_publish) {
        /* Still the host's /proc (the root is not built yet): our own namespaces. */
        static const char *const ns[] = {"/proc/self/ns/user", "/proc/self/ns/net"};
        for (int i = 0; i < 2; i++) {
            fds[n] = open(ns[i], O_RDONLY | O_CLOEXEC);
            if (fds[n++] < 0) {
                ret = err_opt(err, CORDON_STAGE_NAMESPACES, errno, "publishPort",
                              "cannot open %s to hand the sandbox's network to cordon", ns[i]);
                goto out;
            }
        }
        msg.has_ns = 1;
    }
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int) * (2 * NET_MAX_LISTEN + 2))];
    } c;
    memset(&c, 0, sizeof c);
    struct iovec iov = {.iov_base = &msg, .iov_len = sizeof msg};
    struct msghdr m = {
        .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c.buf, .msg_controllen = CMSG_SPACE(sizeof(int) * n)};
    struct cmsghdr *cm = &c.align;
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
    ssize_t r;
    while ((r = sendmsg(sock, &m, MSG_NOSIGNAL)) < 0 && errno == EINTR)
        ;
    if (r != (ssize_t)sizeof msg)
        ret = err_set(err, CORDON_STAGE_NAMESPACES, r < 0 ? errno : EIO,
                      "cannot hand the sandbox's listening sockets to cordon's network helper");
out:
    close_all(fds, n);
    return ret;
}
