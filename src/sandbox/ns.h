// SPDX-License-Identifier: Apache-2.0
/* Namespaces: clone3 into new user, mount, PID, IPC, UTS, cgroup and (optionally)
 * network namespaces, and the caller's uid/gid mapped inside. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "cordon.h"

/* Like fork(): returns the child's pid in the parent (with *pidfd set), 0 in the
 * child, -1 with err filled (naming the likely cause and fix) on failure. */
pid_t ns_clone(bool new_net, bool new_pid, int *pidfd, cordon_error *err);
/* The same, started in the cgroup v2 directory cgroup_fd (CLONE_INTO_CGROUP) unless -1. */
pid_t ns_clone_into(bool new_net, bool new_pid, int cgroup_fd, int *pidfd, cordon_error *err);
/* In the child: map uid and gid to themselves (setgroups denied first). */
int ns_write_id_maps(uid_t uid, gid_t gid, cordon_error *err);
/* Appended to the messages of a host that refuses user namespaces, which name the
 * option "isolation" (cordon_error.option: the command line adds its flag). */
#define NS_ISOLATION_HINT                                                          \
    "; where that cannot be changed, Landlock isolation runs the command without " \
    "namespaces, under Landlock and seccomp only (weaker: see doc/security.md)"
/* A sentence on why the kernel may refuse user namespaces here, and the fix. */
const char *ns_userns_hint(void);
/* Can this process make a user and mount namespace, map itself and mount in it (what
 * the sandbox needs)?  Tried in a short-lived child (util/proc.h), killed after
 * timeout_ms: the step that failed and its errno (ETIMEDOUT: no answer), or NS_STEP_OK.
 * -1 with errno when the child could not be started. */
typedef enum ns_step { NS_STEP_CREATE, NS_STEP_MAP, NS_STEP_MOUNT, NS_STEP_OK } ns_step;
typedef struct ns_probe {
    ns_step step;
    int errnum;
} ns_probe;
int ns_probe_userns(int timeout_ms, ns_probe *out);
const char *ns_step_name(ns_step s); /* "creating one", "writing its id maps", ... */
/* NULL when ns_probe_userns() says the sandbox can be built, else ns_userns_hint(). */
const char *ns_userns_unusable(void);
