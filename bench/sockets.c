// SPDX-License-Identifier: Apache-2.0
/* What a round trip to the supervisor costs a socket call (bench/sockets.sh): N loopback
 * TCP connections (connect + accept + close), then N UDP datagrams (sendto + recv), then
 * the same two over pathname Unix sockets bound in the working directory (the check of
 * the socket file: resolve, open, compare with the sockets the sandbox bound), each timed
 * as a whole; prints the microseconds per iteration of each.
 *
 *   sockets [N]        (default 5000) */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5000;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(l, (void *)&a, sizeof a) || listen(l, 128)) {
        perror("listen");
        return 1;
    }
    socklen_t al = sizeof a;
    getsockname(l, (void *)&a, &al);
    double t0 = now();
    for (int i = 0; i < n; i++) {
        int c = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(c, (void *)&a, sizeof a)) {
            perror("connect");
            return 1;
        }
        int s = accept(l, 0, 0);
        close(c);
        close(s);
    }
    double t1 = now();
    int u = socket(AF_INET, SOCK_DGRAM, 0), r = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in b = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(r, (void *)&b, sizeof b);
    al = sizeof b;
    getsockname(r, (void *)&b, &al);
    char buf[64];
    for (int i = 0; i < n; i++) {
        if (sendto(u, "x", 1, 0, (void *)&b, sizeof b) != 1) {
            perror("sendto");
            return 1;
        }
        recv(r, buf, sizeof buf, 0);
    }
    double t2 = now();
    struct sockaddr_un us = {.sun_family = AF_UNIX, .sun_path = "bench-stream.sock"},
                       ud = {.sun_family = AF_UNIX, .sun_path = "bench-dgram.sock"};
    unlink(us.sun_path);
    unlink(ud.sun_path);
    int ul = socket(AF_UNIX, SOCK_STREAM, 0);
    if (bind(ul, (void *)&us, sizeof us) || listen(ul, 128)) {
        perror("unix listen");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        int c = socket(AF_UNIX, SOCK_STREAM, 0);
        if (connect(c, (void *)&us, sizeof us)) {
            perror("unix connect");
            return 1;
        }
        int s = accept(ul, 0, 0);
        close(c);
        close(s);
    }
    double t3 = now();
    int uu = socket(AF_UNIX, SOCK_DGRAM, 0), ur = socket(AF_UNIX, SOCK_DGRAM, 0);
    if (bind(ur, (void *)&ud, sizeof ud)) {
        perror("unix bind");
        return 1;
    }
    for (int i = 0; i < n; i++) {
        if (sendto(uu, "x", 1, 0, (void *)&ud, sizeof ud) != 1) {
            perror("unix sendto");
            return 1;
        }
        recv(ur, buf, sizeof buf, 0);
    }
    double t4 = now();
    unlink(us.sun_path);
    unlink(ud.sun_path);
    printf("tcp connect+accept: %.1f us each; udp sendto+recv: %.1f us each; "
           "unix connect+accept: %.1f us each; unix sendto+recv: %.1f us each\n",
           (t1 - t0) / n * 1e6, (t2 - t1) / n * 1e6, (t3 - t2) / n * 1e6, (t4 - t3) / n * 1e6);
    return 0;
}
