// SPDX-License-Identifier: Apache-2.0
#pragma once
#include <signal.h>
/* The signals cordon forwards to the command: what a terminal or a supervisor sends. */
void signals_forwarded(sigset_t *set);
/* --isolation landlock: the parent-death signal of the supervisor standing in for PID 1
 * (reaper.c), which kills the whole run when cordon dies; not one that is forwarded. */
#define SIGNAL_CORDON_GONE (SIGRTMAX)
