// SPDX-License-Identifier: Apache-2.0
/* The sandbox's PID 1's part of the network (called once from supervise/pid1.c). */
#pragma once
#include "cordon.h"
#include "net/netplan.h"

/* After loopback is up, before anything of the command exists: listen on 127.0.0.1:PORT
 * inside for each of the plan's listeners and hand those sockets to the host-side helper
 * over sock (PID 1's end of the socket pair to it), with, for --publish-port, the
 * sandbox's user and network namespaces (for its socket factory); PID 1 keeps no copy.
 * Allocates nothing (PID 1 is a copy of a possibly multi-threaded caller).  A no-op when
 * the plan has no network part. */
int net_inside_setup(const net_plan *np, int sock, cordon_error *err);
