// SPDX-License-Identifier: Apache-2.0
/* The cordon_proc of a session's command (src/session/owner.c): the same object as
 * cordon_spawn's, behind a connection to the session's PID 1 instead of a run. */
#pragma once
#include "cordon.h"
#include "net/host.h"
#include "supervise/outer.h"

/* outer_report_fd of c's run, or -1 (a session's command, a run that has ended). */
int proc_report_fd(const cordon_proc *c);

/* The host-side helper a plan needs (src/net: --network proxy, --forward-port,
 * --publish-port), ready for outer_start (h->start NULL and *net NULL: none); *net is
 * released with net_host_free once the sandbox is gone. */
int proc_run_helper(const plan *p, outer_helper *h, net_host **net, cordon_error *err);

/* As cordon_spawn, in the session reached through `via` (its control socket) or, when
 * via is -1, through its published socket `path`. */
/* A caller's cordon_cmd (NULL: none) in this release's layout, into c. */
void proc_cmd_import(const cordon_cmd *cmd, cordon_cmd *c);
int proc_spawn_session(int via, const char *path, char *const argv[], unsigned flags, const cordon_session_cmd *cmd,
                       cordon_proc **out, cordon_error *err);
