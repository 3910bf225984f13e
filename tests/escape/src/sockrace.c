// SPDX-License-Identifier: Apache-2.0
/* An attack on the supervisor's socket calls (supervise/sockets.c): what it checked must
 * be what it connects to.
 *
 *   sockrace OWN HOST SECONDS   OWN and HOST are paths of the same length, OWN a socket
 *                               this program binds and listens on, HOST a host server's;
 *                               one thread keeps rewriting the address in memory between
 *                               the two while the other connects with it again and again.
 *                               Reports "race_host ok" when a connection reached HOST (an
 *                               escape: the supervisor checked OWN and connected to HOST)
 *                               and "race_host EACCES" when none did, and "race_control ok
 *                               N" with the connections made to OWN (the calls did run)
 */
#include "esc.h"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>

static struct sockaddr_un addr;
static char own[108], host[108];
static volatile int stop;

static void *flipper(void *arg)
{
    (void)arg;
    unsigned n = 0;
    while (!stop) {
        /* the address the supervisor may check, then the one it must never reach */
        memcpy(addr.sun_path, (n++ & 1) ? host : own, strlen(own) + 1);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        for (volatile int i = rand() % 2000; i > 0; i--)
            ;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 4 || strlen(argv[1]) != strlen(argv[2]) || strlen(argv[1]) >= sizeof own) {
        fprintf(stderr, "usage: sockrace OWN HOST SECONDS (paths of the same length)\n");
        return 2;
    }
    snprintf(own, sizeof own, "%s", argv[1]);
    snprintf(host, sizeof host, "%s", argv[2]);
    double seconds = atof(argv[3]);
    addr.sun_family = AF_UNIX;
    memcpy(addr.sun_path, own, strlen(own) + 1);
    int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (l < 0 || bind(l, (struct sockaddr *)&addr, sizeof addr) < 0 || listen(l, 64) < 0) {
        report("race_setup", -1);
        return 0;
    }
    pthread_t t;
    if (pthread_create(&t, NULL, flipper, NULL) != 0)
        return 1;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long to_own = 0, to_host = 0, calls = 0;
    do {
        int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0); /* a full backlog: EAGAIN */
        if (c < 0)
            break;
        if (connect(c, (struct sockaddr *)&addr, sizeof addr) == 0) {
            int a = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (a >= 0) {
                to_own++;
                close(a);
            } else {
                to_host++;
            }
        }
        close(c);
        calls++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
    stop = 1;
    pthread_join(t, NULL);
    errno = EACCES;
    report("race_host", to_host ? 0 : -1);
    printf("race_control %s %ld\n", to_own ? "ok" : "ENOENT", to_own);
    printf("race_calls ok %ld\n", calls);
    return 0;
}
