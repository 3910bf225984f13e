// SPDX-License-Identifier: Apache-2.0
/* The network helper's entry point and how it is started (net/host.c). */
#pragma once
#include <sys/types.h>

#include "net/helper.h"
#include "net/host.h"

/* The helper and its socket factory are started with proc_fork (util/proc.h): no SIGCHLD,
 * reaped through a pidfd, a copy of a possibly multi-threaded process (only system calls
 * and the helper's own heap there). */

/* Run the helper (never returns): proxy its proxy connections' steps; h is the run's network (its plan, log, published
 * ports' listeners, the host's name servers); sock receives PID 1's listening sockets;
 * ctl_fd says stop (a byte or EOF) and takes the counts back; the helper ends with the
 * sandbox when pid1_pidfd becomes readable. */
__attribute__((noreturn)) void net_helper_main(const net_host *h, const conn_hooks *proxy, int sock, int ctl_fd,
                                               int pid1_pidfd);
/* The filtering proxy's steps (net/proxy.c), for net_helper_main's `proxy`. */
extern const conn_hooks proxy_hooks;
