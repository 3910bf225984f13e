// SPDX-License-Identifier: Apache-2.0
#include "net/host.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/helper_main.h"
#include "util/err.h"
#include "util/strv.h"
#include "util/trace.h"
#include "util/proc.h"

/* How long the run waits for the helper to end when stopping it, before it kills it. */
#define STOP_TIMEOUT_MS 2000

bool net_host_needed(const plan *p)
{
    return p->net.active;
}

static int open_log(const char *file, cordon_error *err)
{
    /* O_NOFOLLOW: the file may be in a directory the command could write; O_NONBLOCK: a
     * FIFO without a reader fails instead of hanging, and never blocks the helper later. */
    int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK, 0600);
    if (fd < 0)
        return err_opt(err, CORDON_STAGE_USAGE, errno, "networkLog", "cannot open %s", file);
    struct stat st;
    if (fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
        close(fd);
        return err_opt(err, CORDON_STAGE_USAGE, EISDIR, "networkLog", "cannot open %s", file);
    }
    return fd;
}

static int listen_host(const net_publish *pb, cordon_error *err)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return err_opt(err, CORDON_STAGE_NAMESPACES, errno, "publishPort", "cannot create a socket");
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_port = htons(pb->host), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, SOMAXCONN) < 0) {
        int e = errno;
        close(fd);
        if (e == EADDRINUSE)
            return err_opt(err, CORDON_STAGE_USAGE, e, "publishPort",
                           "%u:%u: port %u of the host's loopback is in use already; publish on another one "
                           "(%u:OTHERPORT)",
                           (unsigned)pb->inside, (unsigned)pb->host, (unsigned)pb->host, (unsigned)pb->inside);
        if (e == EACCES)
            return err_opt(err, CORDON_STAGE_USAGE, e, "publishPort",
                           "%u:%u: port %u of the host is privileged (below 1024); publish on a higher one",
                           (unsigned)pb->inside, (unsigned)pb->host, (unsigned)pb->host);
        return err_opt(err, CORDON_STAGE_NAMESPACES, e, "publishPort", "cannot listen on 127.0.0.1:%u",
                       (unsigned)pb->host);
    }
    return fd;
}

/* What prepare() opened and start() has not handed to the helper. */
static void release(net_host *h)
{
    if (h->log_fd >= 0)
        close(h->log_fd);
    h->log_fd = -1;
    if (h->pub_fds) {
        for (size_t i = 0; i < h->n_pub; i++)
            if (h->pub_fds[i] >= 0)
                close(h->pub_fds[i]);
        free(h->pub_fds);
        h->pub_fds = NULL;
    }
    h->n_pub = 0;
    hostconf_free(&h->hc);
}

int net_host_prepare(net_host *h, const plan *p, cordon_error *err)
{
    *h = (net_host)NET_HOST_INIT;
    if (!net_host_needed(p))
        return 0;
    const net_plan *np = &p->net;
    if (p->isolation == CORDON_ISOLATION_LANDLOCK)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "isolation",
                       "the proxy network and forwarded or published ports need the sandbox's own network "
                       "namespace, which Landlock isolation does not make");
    h->np = np;
    h->pub_fds = xcalloc(np->n_publish + 1, sizeof *h->pub_fds);
    h->n_pub = np->n_publish;
    for (size_t i = 0; i < np->n_publish; i++)
        h->pub_fds[i] = -1;
    void *m = mmap(NULL, sizeof *h->counts, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        err_set(err, CORDON_STAGE_SUPERVISE, errno, "cannot map the network helper's counters");
        goto fail;
    }
    h->counts = m;
    if (np->log && (h->log_fd = open_log(np->log, err)) < 0)
        goto fail;
    for (size_t i = 0; i < np->n_publish; i++)
        if ((h->pub_fds[i] = listen_host(&np->publish[i], err)) < 0)
            goto fail;
    /* The filtering proxy's resolver reads no file itself (net/dnsmsg.h). */
    if (np->allow.n) {
        hostconf_load(&h->hc, "/etc/resolv.conf", "/etc/hosts");
        if (np->dns.n) { /* --dns-server instead of resolv.conf's */
            for (int i = 0; i < np->dns.n; i++) {
                h->hc.ns[i] = np->dns.addr[i];
                h->hc.ns_len[i] = np->dns.len[i];
            }
            h->hc.n_ns = np->dns.n;
        }
    }
    return 0;
fail:
    release(h);
    if (h->counts)
        munmap(h->counts, sizeof *h->counts);
    h->counts = NULL;
    h->np = NULL;
    return -1;
}

int net_host_start(void *ctx, int pid1_pidfd, int sock, cordon_error *err)
{
    net_host *h = ctx;
    if (!h->np || !h->counts) {
        if (sock >= 0)
            close(sock);
        return 0;
    }
    TRACE("net-start");
    int cv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, cv) < 0) {
        int e = errno;
        close(sock);
        return err_set(err, CORDON_STAGE_SUPERVISE, e, "cannot start the network helper (socketpair)");
    }
    pid_t pid = proc_fork(&h->pidfd);
    if (pid < 0) {
        int e = errno;
        close(cv[0]);
        close(cv[1]);
        close(sock);
        return err_set(err, CORDON_STAGE_SUPERVISE, e, "cannot start the network helper (clone)");
    }
    if (pid == 0) {
        close(cv[0]);
        net_helper_main(h, &proxy_hooks, sock, cv[1], pid1_pidfd);
    }
    close(cv[1]);
    close(sock);
    h->pid = pid;
    h->ctl_fd = cv[0];
    /* the helper has its own copies of the log and the listeners */
    release(h);
    TRACE("net-started");
    return 0;
}

void net_host_stop(void *ctx)
{
    net_host *h = ctx;
    if (h->ctl_fd >= 0) {
        (void)send(h->ctl_fd, "x", 1, MSG_NOSIGNAL);
        close(h->ctl_fd);
        h->ctl_fd = -1;
    }
    if (h->pidfd >= 0) {
        /* it ends at once (the sandbox is gone); a helper that does not is killed */
        struct pollfd pf = {.fd = h->pidfd, .events = POLLIN};
        int r;
        while ((r = poll(&pf, 1, STOP_TIMEOUT_MS)) < 0 && errno == EINTR)
            ;
        if (r <= 0)
            syscall(SYS_pidfd_send_signal, h->pidfd, SIGKILL, NULL, 0);
        siginfo_t si;
        while (waitid(P_PIDFD, (id_t)h->pidfd, &si, WEXITED | __WALL) < 0 && errno == EINTR)
            ;
        close(h->pidfd);
        h->pidfd = -1;
        h->pid = -1;
    }
    release(h);
}

void net_host_result(const net_host *h, cordon_result *res)
{
    if (!h || !h->counts)
        return;
    res->network_counted = true;
    res->network_allowed = __atomic_load_n(&h->counts->allowed, __ATOMIC_ACQUIRE);
    res->network_refused = __atomic_load_n(&h->counts->refused, __ATOMIC_ACQUIRE);
    res->network_failed = __atomic_load_n(&h->counts->failed, __ATOMIC_ACQUIRE);
    unsigned n = __atomic_load_n(&h->counts->n_refusals, __ATOMIC_ACQUIRE);
    size_t used = 0;
    char list[2048]; /* the first of them; the rest are counted */
    free(res->network_refusals);
    res->network_refusals = NULL;
    res->n_network_refusals = 0;
    res->network_refusals_more = __atomic_load_n(&h->counts->more_refusals, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n && i < NET_REFUSALS_MAX; i++) {
        const net_refusal *r = &h->counts->refusals[i];
        char line[1024];
        int len = r->fix[0]
                      ? snprintf(line, sizeof line, "%s:%u (%s); to allow it: %s", r->host, r->port, r->why, r->fix)
                      : snprintf(line, sizeof line, "%s:%u (%s)", r->host, r->port, r->why);
        if (len < 0 || used + (size_t)len + 1 > sizeof list) {
            res->network_refusals_more += n - i;
            break;
        }
        memcpy(list + used, line, (size_t)len + 1);
        used += (size_t)len + 1;
        res->n_network_refusals++;
    }
    if (used) {
        res->network_refusals = xmalloc(used);
        memcpy(res->network_refusals, list, used);
    }
}

void net_host_free(net_host *h)
{
    if (!h)
        return;
    net_host_stop(h);
    if (h->counts)
        munmap(h->counts, sizeof *h->counts);
    free(h);
}
