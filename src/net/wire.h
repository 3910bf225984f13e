// SPDX-License-Identifier: Apache-2.0
/* Messages between the sandbox's PID 1, the run and the network helper (all processes of
 * one build of cordon: plain structs, no versioning). */
#pragma once
#include <stdint.h>

#include "net/netplan.h"

#define NET_WIRE_MAGIC 0x636f6e6eu /* "conn" */

/* PID 1 -> helper, once, over the hand-over socket.  Descriptors (SCM_RIGHTS), in order:
 * per plan listener its socket on 127.0.0.1 and, when v6[i], its twin on [::1] (forwarded
 * ports: a client of "localhost" may try ::1 only); then (has_ns) the sandbox's user and
 * network namespaces. */
typedef struct net_wire_handover {
    uint32_t magic;
    uint32_t n_listen;
    uint32_t has_ns;
    uint8_t v6[NET_MAX_LISTEN];
} net_wire_handover;
