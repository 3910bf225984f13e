// SPDX-License-Identifier: Apache-2.0
/* Stage 5: Landlock, best effort by ABI, on the command's process after pivot_root.
 *
 * The parent probes the kernel's Landlock ABI and turns the plan into a list of rule
 * paths (landlock_prepare); the command's process, which must not allocate, opens each
 * path inside the new root and restricts itself (landlock_apply).
 *
 * What is restricted:
 *  - from ABI 6, always: abstract Unix sockets and signals are scoped to the sandbox
 *    (with --network host the host's abstract sockets, X11's and D-Bus's, would
 *    otherwise be reachable);
 *  - with --no-nested: the filesystem too.  The writable paths of the plan (writable
 *    binds, the private tmpfs mounts, /dev/shm) read-write, the device nodes of the
 *    minimal /dev and /dev/pts read-write with their ioctls, /proc writable for the
 *    sandbox's own processes, and the rest of the view read/execute.  Not by default:
 *    a Landlock domain that handles any file access may not mount anything, which
 *    would forbid a sandbox inside the sandbox (cordon in cordon, bwrap, podman).
 * Namespaces already confine the filesystem; without Landlock (older kernels, or
 * Landlock disabled at boot) the run goes on without it and `cordon explain` says so. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cordon.h"
#include "plan/plan.h"

typedef enum ll_class {
    LL_READ,   /* read and execute */
    LL_WRITE,  /* read, execute, write, create, remove, rename */
    LL_DEVICE, /* read and write a device node, with its ioctls */
    LL_PROC,   /* write to files of /proc (on top of the read rule of /) */
    LL_LIST,   /* list a directory, nothing below it (--isolation landlock: a directory
                  above a denied or read-only path inside a granted tree) */
} ll_class;

typedef struct ll_rule {
    const char *path; /* inside the sandbox; points into the plan or a literal */
    ll_class cls;
} ll_rule;

typedef struct landlock_prep {
    int ruleset_fd;   /* --isolation landlock: the ruleset the parent built (llonly.c),
                         which landlock_apply() only enforces; -1 otherwise */
    int abi;          /* the kernel's Landlock ABI, or 0 when it has none */
    int abi_errno;    /* why not: ENOSYS (not built in), EOPNOTSUPP (disabled at boot) */
    bool fs;          /* filesystem rules are applied */
    uint64_t handled; /* filesystem rights handled (all this ABI knows) when fs */
    uint64_t scoped;  /* LANDLOCK_SCOPE_* applied */
    bool need_domain; /* set by PID 1 when the sandbox shows the caller's /proc (a container
                         that masks parts of it: sandbox/mount.h, proc_kept): a Landlock
                         domain, whatever it handles, is what keeps the other processes
                         shown there from being traced or read (their memory, environment,
                         descriptors), so the run fails without one */
    ll_rule *rules;
    size_t n_rules;
} landlock_prep;

/* The running kernel's Landlock ABI (>= 1), or 0 with errno set. */
int landlock_abi(void);

/* In the parent: probe and compute what landlock_apply() will do. */
void landlock_prepare(landlock_prep *lp, const plan *p, bool no_nested);
void landlock_prep_free(landlock_prep *lp);

/* In the command's process, after pivot_root and no_new_privs.  Also grants the
 * command's stdin, stdout and stderr, when they are files or terminals outside the
 * view, the access it already has to them, so that `echo x > /dev/stdout` works.
 * Allocates nothing. */
int landlock_apply(const landlock_prep *lp, cordon_error *err);

/* Building blocks for llonly.c. */
#define LL_NET_BIND_TCP    (1ULL << 0) /* ABI 4 */
#define LL_NET_CONNECT_TCP (1ULL << 1) /* ABI 4 */
#define LL_SCOPES_ALL      (3ULL)      /* abstract Unix sockets and signals, ABI 6 */
uint64_t landlock_fs_rights_of_abi(int abi);
/* The rights of a class; only those of a single file when !is_dir. */
uint64_t landlock_class_rights(ll_class c, bool is_dir);
/* A ruleset handling these rights (the attribute sized for `abi`), or -1 with errno. */
int landlock_ruleset_new(int abi, uint64_t fs, uint64_t net, uint64_t scoped);
/* Allow `rights` beneath the file or directory `fd`; -1 with errno. */
int landlock_allow(int ruleset, int fd, uint64_t rights);
/* Grant each of 0, 1, 2 that is a file or a terminal the access its descriptor has. */
void landlock_allow_stdio(int ruleset, uint64_t handled);

/* For `cordon explain` and `cordon check`: one line on what Landlock does here. */
void landlock_describe(const landlock_prep *lp, char *buf, size_t size);
const char *ll_class_name(ll_class c);
