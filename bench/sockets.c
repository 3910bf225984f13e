/* What a round trip to the supervisor costs a socket call (bench/sockets.sh): N loopback
 * TCP connections (connect + accept + close), then N UDP datagrams (sendto + recv), each
 * timed as a whole; prints the microseconds per iteration of each.
 *
 *   sockets [N]        (default 5000) */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
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
    printf("tcp connect+accept: %.1f us each; udp sendto+recv: %.1f us each\n", (t1 - t0) / n * 1e6,
           (t2 - t1) / n * 1e6);
    return 0;
}
