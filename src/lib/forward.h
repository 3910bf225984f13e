// SPDX-License-Identifier: Apache-2.0
/* Running a command as a main() does (the Codex helper's and bubblewrap's personalities,
 * src/codex/main.c and src/bwrap/main.c): waiting for it while forwarding the signals a
 * terminal or a supervisor sends to mean the command. */
#pragma once
#include "cordon.h"

/* Wait for the command of `c` (spawned with this process's stdio), forwarding SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH and SIGCONT to it.  They are
 * blocked while it runs and read from a signalfd, so no handler and no global state are
 * needed; one that arrived before `c` existed ended this process, and with it the
 * sandbox.  0 with *res filled when the command started (or timed out), else -1. */
int proc_wait_forwarding(cordon_proc *c, cordon_result *res, cordon_error *err);
