/* Stage 4: building the new root from the plan, inside the new namespaces.
 *
 * Every bind source is opened by file descriptor (openat2 with RESOLVE_NO_SYMLINKS)
 * and checked to be the file the resolver saw; every destination is reached from the
 * new root's descriptor one component at a time with O_NOFOLLOW, and a missing mount
 * point is only ever created inside a tmpfs that cordon itself mounted.  So no
 * symlink, wherever the command may have planted it, can redirect a setup step onto
 * the host (bubblewrap before 0.12.0 followed them through /oldroot).
 *
 * Runs in the cloned child, which must not allocate: the scratch space is prepared by
 * the parent with root_scratch_init(). */
#pragma once
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "plan/plan.h"

typedef struct root_scratch {
    int *tree_fds;      /* per plan op: the cloned source tree, or -1 */
    int *later_ro;      /* mounts to make read-only once everything is in place */
    size_t n_later_ro;
    uint64_t *ours;     /* ids of the mounts cordon created (where creating is allowed) */
    size_t n_ours;
    size_t cap;         /* capacity of later_ro and ours */
    bool want_proc_fd;  /* make proc_fd (the creation control needs one) */
    int proc_fd;        /* --no-proc: a procfs attached nowhere, for PID 1's own use (the
                         * creation control), made while the host's /proc is still in view
                         * (the kernel mounts a procfs only where one is fully visible) */
    int private_fd;     /* --limit-memory: the one size-capped tmpfs that /tmp, HOME, TMPDIR
                         * and /dev/shm are directories of (root_private_tmpfs), or -1 */
    unsigned n_private; /* directories made in it so far */
    bool cow_fallback;  /* a PLAN_COW home was shown read-only instead (the kernel refused
                         * the overlay): HOME is plan.home_fallback, home_env says so */
    char *home_env;     /* "HOME=<plan.home_fallback>", for the command's environment */
    char cow_why[160];  /* why the overlay was refused */
    bool under_cordon;  /* set by PID 1: the sandbox runs inside another cordon's, whose
                         * supervisor refuses kernel overlays (a PLAN_COW falls back) */
} root_scratch;

void root_scratch_init(root_scratch *s, const plan *p);
void root_scratch_free(root_scratch *s);
/* Build the root and pivot into it.  On return the process's root and cwd are "/". */
int root_build(const plan *p, root_scratch *s, cordon_error *err);
/* Can a PLAN_COW be a kernel overlay here (in a user namespace, upper and work layers on a
 * tmpfs; not inside another cordon)?  Tried in a short-lived child: 1 yes, 0 no (why says
 * what failed). */
int root_cow_probe(bool under_cordon, char *why, size_t n);

/* Helpers shared by the pieces of the root (dev.c). */
typedef enum dest_create { DEST_EXISTING, DEST_DIR, DEST_FILE } dest_create;
int root_open_dest(int root_fd, const root_scratch *s, const char *path, dest_create create,
                   cordon_error *err);
int root_new_tmpfs(const char *mode, unsigned attrs, cordon_error *err);
/* A private, empty, writable tmpfs mount of `mode` for /tmp, HOME, TMPDIR or /dev/shm,
 * detached, ready to attach.  Under --limit-memory a directory of the one shared tmpfs
 * whose size is the limit (so that files there cannot outgrow it together, whatever
 * enforces the limit on processes); else a tmpfs of its own. */
int root_private_tmpfs(root_scratch *s, unsigned mode, unsigned attrs, cordon_error *err);
int root_set_attr(int tree_fd, const char *path, unsigned set, bool recursive, cordon_error *err);
int root_attach(int tree_fd, int dest_fd, const char *dest, cordon_error *err);
int root_mark_ours(root_scratch *s, int mnt_fd, cordon_error *err);
int root_ro_later(root_scratch *s, int mnt_fd, cordon_error *err);
