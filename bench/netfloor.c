// SPDX-License-Identifier: Apache-2.0
/* The floor of a TCP-to-TCP relay, for bench/net.sh: the least a user-space program can do
 * to carry one connection to another on the same host.  One connection at a time, a
 * blocking splice(2) loop per direction (a child for the way back), 1 MiB pipes, no epoll,
 * no policy.  What it reaches is what any relay (cordon's bridge, socat, ...) can reach on
 * this machine: the kernel runs the TCP stack twice per segment.
 *
 *   netfloor LISTEN_PORT TARGET_PORT     (both on 127.0.0.1) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

static void relay(int from, int to)
{
    int p[2];
    if (pipe(p) < 0)
        _exit(1);
    fcntl(p[0], F_SETPIPE_SZ, 1 << 20);
    for (;;) {
        ssize_t n = splice(from, NULL, p[1], NULL, 1 << 20, SPLICE_F_MOVE);
        if (n <= 0)
            break;
        while (n > 0) {
            ssize_t m = splice(p[0], NULL, to, NULL, (size_t)n, SPLICE_F_MOVE);
            if (m <= 0)
                return;
            n -= m;
        }
    }
    shutdown(to, SHUT_WR);
    close(p[0]);
    close(p[1]);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: netfloor LISTEN_PORT TARGET_PORT\n");
        return 2;
    }
    signal(SIGCHLD, SIG_IGN);
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 64) < 0) {
        perror("netfloor: listen");
        return 1;
    }
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        int u = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in d = a;
        d.sin_port = htons((uint16_t)atoi(argv[2]));
        if (connect(u, (struct sockaddr *)&d, sizeof d) < 0) {
            close(c);
            close(u);
            continue;
        }
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(u, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        if (fork() == 0) {
            relay(u, c);
            _exit(0);
        }
        relay(c, u);
        close(c);
        close(u);
    }
}
