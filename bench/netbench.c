// SPDX-License-Identifier: Apache-2.0
/* The network benchmark's two ends (bench/net.sh):
 *
 *   netbench serve PORTFILE          a loopback server: "T" then bytes until EOF is answered
 *                                    with "k" (bulk), "P" with "p" (one connection's round trip)
 *   netbench bulk PORT BYTES [HOST:PORT]     one connection carrying BYTES; prints MB/s
 *   netbench ping PORT N [HOST:PORT]         N connections one after another, each opened,
 *                                    one byte each way, closed; prints the median, p10 and p90
 *                                    in microseconds
 *
 * With HOST:PORT the client first asks the HTTP proxy on PORT for a CONNECT tunnel there
 * (cordon's filtering proxy), and the measurement includes it. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "netbench: %s: %s\n", what, strerror(errno));
    exit(1);
}

static int dial(int port, const char *via)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("socket");
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0)
        die("connect");
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (via) {
        char req[256], resp[512];
        int n = snprintf(req, sizeof req, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", via, via);
        if (write(fd, req, (size_t)n) != n)
            die("write CONNECT");
        /* read the response head byte by byte: nothing of the tunnel may be eaten */
        size_t got = 0;
        while (got < sizeof resp - 1) {
            if (read(fd, resp + got, 1) != 1)
                die("read CONNECT response");
            got++;
            if (got >= 4 && memcmp(resp + got - 4, "\r\n\r\n", 4) == 0)
                break;
        }
        resp[got] = '\0';
        if (strncmp(resp, "HTTP/1.1 200", 12) != 0) {
            fprintf(stderr, "netbench: the proxy said: %s\n", resp);
            exit(1);
        }
    }
    return fd;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int serve(const char *portfile)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    if (bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 1024) < 0 ||
        getsockname(s, (struct sockaddr *)&a, &l) < 0)
        die("listen");
    FILE *f = fopen(portfile, "w");
    if (!f)
        die(portfile);
    fprintf(f, "%d\n", ntohs(a.sin_port));
    fclose(f);
    static char buf[1 << 20];
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0)
            continue;
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        char k;
        if (read(c, &k, 1) == 1) {
            if (k == 'T') {
                while (read(c, buf, sizeof buf) > 0)
                    ;
                (void)!write(c, "k", 1);
            } else if (k == 'P') {
                (void)!write(c, "p", 1);
                while (read(c, buf, sizeof buf) > 0)
                    ;
            }
        }
        close(c);
    }
}

static int bulk(int port, long long bytes, const char *via)
{
    static char buf[1 << 20];
    memset(buf, 'x', sizeof buf);
    double t0 = now();
    int fd = dial(port, via);
    if (write(fd, "T", 1) != 1)
        die("write");
    long long left = bytes;
    while (left > 0) {
        ssize_t n = write(fd, buf, left < (long long)sizeof buf ? (size_t)left : sizeof buf);
        if (n < 0)
            die("write");
        left -= n;
    }
    shutdown(fd, SHUT_WR);
    char k;
    if (read(fd, &k, 1) != 1 || k != 'k')
        die("read ack");
    double t = now() - t0;
    close(fd);
    printf("%.1f\n", (double)bytes / t / 1e6);
    return 0;
}

static int ping(int port, int n, const char *via)
{
    double *lat = calloc((size_t)n, sizeof *lat);
    for (int i = 0; i < n; i++) {
        double t0 = now();
        int fd = dial(port, via);
        char p;
        if (write(fd, "P", 1) != 1 || read(fd, &p, 1) != 1 || p != 'p')
            die("ping");
        lat[i] = (now() - t0) * 1e6;
        /* no TIME_WAIT on our side: thousands of runs must not use up the ports */
        struct linger lg = {1, 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        close(fd);
    }
    qsort(lat, (size_t)n, sizeof *lat, cmp);
    printf("%.1f %.1f %.1f\n", lat[n / 2], lat[n / 10], lat[n * 9 / 10]);
    free(lat);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && strcmp(argv[1], "serve") == 0)
        return serve(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "bulk") == 0)
        return bulk(atoi(argv[2]), atoll(argv[3]), argc > 4 ? argv[4] : NULL);
    if (argc >= 4 && strcmp(argv[1], "ping") == 0)
        return ping(atoi(argv[2]), atoi(argv[3]), argc > 4 ? argv[4] : NULL);
    fprintf(stderr, "usage: netbench serve PORTFILE | bulk PORT BYTES [HOST:PORT] | ping PORT N [HOST:PORT]\n");
    return 2;
}
