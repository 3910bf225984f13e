// SPDX-License-Identifier: Apache-2.0
/* A session under --isolation landlock: no namespaces, so no PID 1 to start
 * commands in.  Its holder is the session's supervisor instead: a thread of the owner's
 * process (the process that made the session; for `cordon session start`, its daemon)
 * that speaks PID 1's side of the session protocol (session/wire.h) on the control
 * socket, and starts each command as `cordon run --isolation landlock` starts one: the
 * stand-in (supervise/reaper.c) cloned with the session's plan, its Landlock rulesets,
 * seccomp filter and creation control, prepared once when the session starts.  What the
 * commands share is what a host path can share: the workspace, and the session's private
 * HOME and TMPDIR (made at the start, removed at the end); there is no /tmp, PID
 * namespace or network namespace of the session's own (doc/guide-sessions.md).
 *
 * Why a thread and not a forked process: a fork of a multi-threaded caller may not use
 * the C library, and starting a run does (outer_start).  The thread blocks every signal,
 * changes nothing process-wide (no umask, no subreaper) and ends when the owner's end of
 * the control socket closes (cordon_session_free), or at the idle timeout; every run it
 * started ends with it (each stand-in kills its whole tree when told, or when the thread
 * that cloned it dies: its parent-death signal). */
#pragma once
#include "cordon.h"
#include "lib/prepare.h"

typedef struct llsess llsess;

/* Start the supervisor on `ctl` (its end of the control socket, which it owns from here
 * on, also on failure).  x and ll are the session's, from prepare_run(): moved in (the
 * caller's copies are left empty).  timeout: the policy's, each command's default (0:
 * none).  -1 with err filled: nothing runs. */
int llsess_start(prepared *x, llonly *ll, double timeout, int ctl, llsess **out, cordon_error *err);
/* Readable (POLLHUP) once the supervisor has ended: the session is over. */
int llsess_done_fd(const llsess *s);
/* Wait for the supervisor's end (the caller closed its end of the control socket first,
 * which ends it) and free.  NULL is fine. */
void llsess_free(llsess *s);
