// SPDX-License-Identifier: Apache-2.0
/* The host side of a run's network: a helper process outside the sandbox, in the host's
 * network namespace, that accepts on the listening sockets the sandbox's PID 1 created
 * inside (net/inside.c) and bridges, proxies and forwards from there; and the published
 * ports' listeners on the host's loopback.
 *
 * The run calls, in order:
 *   net_host_prepare()  before the sandbox is cloned: opens --network-log, binds the
 *                       --publish-port listeners (a port in use fails here, before anything
 *                       runs), reads the host's name servers and /etc/hosts;
 *   net_host_start()    once PID 1 exists, with its pidfd and cordon's end of a socket pair
 *                       (SOCK_SEQPACKET) whose other end PID 1 gets: starts the helper;
 *   net_host_result()   whenever the run has ended: the counts into a cordon_result (the
 *                       helper keeps them in memory shared with the run, so they need no
 *                       stop: the command line exits without one);
 *   net_host_stop()     once every process of the sandbox is gone (or it never started):
 *                       stops the helper, reaps it, releases its descriptors;
 *   net_host_free()     releases the rest (also what prepare() opened when start() never ran).
 * start and stop are the supervisor's host-side helper hook (supervise/outer.h:
 * outer_helper's start(ctx, pid1_pidfd, sock, err) and stop(ctx)).
 *
 * The helper is cloned without an exit signal (no SIGCHLD for the caller; reaped through
 * a pidfd) and, being a copy of a possibly multi-threaded caller, uses nothing but system
 * calls and its own heap.  It is not in the sandbox's PID namespace, so the command cannot
 * signal, ptrace or even name it, and it holds none of the command's stdio.  It ends when
 * PID 1 does (the pidfd), when told to, or when the run's end of its control socket closes
 * (the caller died).  For --publish-port it clones a small "socket factory" that joins the
 * sandbox's user and network namespaces (never its PID namespace) and only creates
 * unconnected TCP sockets there for the helper to connect. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "cordon.h"
#include "net/hostconf.h"
#include "plan/plan.h"

/* What the helper counts, in memory it shares with the run (MAP_SHARED): written by the
 * helper only, read by the run at any time. */
#define NET_REFUSALS_MAX 16
typedef struct net_refusal {
    char host[256]; /* as the request named it, control bytes as '?' */
    unsigned port;
    char why[320]; /* the reason, as --network-log says it */
    char fix[320]; /* the flag(s) that would allow it, or "" (refused by --deny-domain) */
} net_refusal;
typedef struct net_counts {
    unsigned allowed, refused, failed;
    /* The distinct hosts refused by cordon's rules, once each, for the run to say after it
     * (the command only saw a 403): an entry is written whole before n_refusals counts it;
     * more_refusals counts the distinct hosts past the table's end. */
    unsigned n_refusals, more_refusals;
    net_refusal refusals[NET_REFUSALS_MAX];
} net_counts;

typedef struct net_host {
    const net_plan *np; /* NULL: no network part, nothing to do */
    int log_fd;         /* --network-log, or -1 */
    int *pub_fds;       /* the --publish-port listeners, n_pub of them */
    size_t n_pub;
    hostconf hc;        /* the host's name servers, /etc/hosts */
    net_counts *counts; /* shared with the helper, or NULL */
    pid_t pid;          /* the helper, or -1 */
    int pidfd;
    int ctl_fd; /* ours: a byte or EOF says stop */
} net_host;
/* clang-format off: an initializer on one line */
#define NET_HOST_INIT                                      \
    {                                                      \
        .log_fd = -1, .pid = -1, .pidfd = -1, .ctl_fd = -1 \
    }
/* clang-format on */

/* Does this plan need a helper (and PID 1 a socket pair to it)? */
bool net_host_needed(const plan *p);

/* h is the caller's; p must outlive the helper's start (the helper has its own copy then). */
int net_host_prepare(net_host *h, const plan *p, cordon_error *err);
/* ctx is the net_host; sock is owned by the helper from here on (closed on failure). */
int net_host_start(void *ctx, int pid1_pidfd, int sock, cordon_error *err);
void net_host_stop(void *ctx);
/* network_counted and the counts, when the run had a network part. */
void net_host_result(const net_host *h, cordon_result *res);
/* Stop what still runs and release everything, the struct included (h came from
 * malloc).  NULL is fine. */
void net_host_free(net_host *h);
