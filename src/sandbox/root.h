// SPDX-License-Identifier: Apache-2.0
/* Stage 4: building the new root from the plan, inside the new namespaces.
 *
 * Every bind source is opened by file descriptor (openat2 with RESOLVE_NO_SYMLINKS)
 * and checked to be the file the resolver saw; every destination is reached from the
 * new root's descriptor one component at a time with O_NOFOLLOW, and a missing mount
 * point is only ever created inside a tmpfs that cordon itself mounted (the primitives
 * of sandbox/mount.h, which dev.c builds /dev with too).  So no
 * symlink, wherever the command may have planted it, can redirect a setup step onto
 * the host (bubblewrap before 0.12.0 followed them through /oldroot).
 *
 * Runs in the cloned child, which must not allocate: the scratch space (root_scratch,
 * sandbox/mount.h) is prepared by the parent with root_scratch_init(). */
#pragma once
#include <stddef.h>
#include <stdbool.h>

#include "plan/plan.h"
#include "sandbox/mount.h"

void root_scratch_init(root_scratch *s, const plan *p);
void root_scratch_free(root_scratch *s);
/* Build the root and pivot into it.  On return the process's root and cwd are "/". */
int root_build(const plan *p, root_scratch *s, cordon_error *err);
/* Can a PLAN_COW be a kernel overlay here (in a user namespace, upper and work layers on a
 * tmpfs; not inside another cordon)?  Tried in a short-lived child: 1 yes, 0 no (why says
 * what failed). */
int root_cow_probe(bool under_cordon, char *why, size_t n);
/* Does the kernel give a sandbox a fresh /proc here (a procfs mounted in a new user and
 * PID namespace)?  Tried in a short-lived child: 1 yes; 0 no, because the caller's /proc
 * is masked (a container's: the sandbox then shows the caller's, root_build); -1 cannot
 * tell (no user namespace).  why says what failed. */
int root_proc_probe(char *why, size_t n);
/* How to give the sandbox a /proc of its own where root_proc_probe says 0. */
#define ROOT_PROC_FIX                                                                              \
    "unmask /proc for the container: Podman --security-opt unmask=/proc/*, Docker --security-opt " \
    "systempaths=unconfined, a Kubernetes pod's securityContext procMount: Unmasked (with "        \
    "hostUsers: false); see doc/kubernetes.md"
/* What the sandbox shows where root_proc_probe says 0 (`cordon explain`, `cordon check`). */
#define ROOT_PROC_KEPT                                                                               \
    "the sandbox shows the container's /proc instead, read-only with its masks, in a PID namespace " \
    "of its own: the command sees the container's other processes and their command lines, not "     \
    "their environment, memory or descriptors (Landlock), and cannot signal them"
