// SPDX-License-Identifier: Apache-2.0
/* The sandbox's own network namespace: what cordon sets up in it before the command runs
 * (the bridges and the proxy are src/net/'s). */
#pragma once
#include "cordon.h"

/* Bring up loopback in the new network namespace. */
int net_loopback_up(cordon_error *err);
