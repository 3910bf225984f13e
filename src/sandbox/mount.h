// SPDX-License-Identifier: Apache-2.0
/* The mount primitives the pieces of the new root are built with (root.c, dev.c; the
 * creation control's lookups in src/supervise/creation.c): detached mounts made, given
 * their attributes and attached by descriptor; a destination reached from the new root's
 * descriptor one component at a time with O_NOFOLLOW, a missing mount point created only
 * inside a mount cordon itself made (whose ids root_scratch keeps); and the mounts to make
 * read-only once everything is in place.
 *
 * Runs in the cloned child, which must not allocate: root_scratch is sized by the parent
 * with root_scratch_init() (sandbox/root.h). */
#pragma once
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

#include "cordon.h"

typedef struct root_scratch {
    int *tree_fds; /* per plan op: the cloned source tree, or -1 */
    int *later_ro; /* mounts to make read-only once everything is in place */
    size_t n_later_ro;
    uint64_t *ours; /* ids of the mounts cordon created (where creating is allowed) */
    size_t n_ours;
    size_t cap;         /* capacity of later_ro and ours */
    bool want_proc_fd;  /* make proc_fd (the creation control needs one) */
    int proc_fd;        /* --no-proc: a procfs attached nowhere, for PID 1's own use (the
                         * creation control), made while the host's /proc is still in view
                         * (the kernel mounts a procfs only where one is fully visible) */
    int private_fd;     /* --limit-memory: the one size-capped tmpfs that /tmp, HOME, TMPDIR
                         * and /dev/shm are directories of (mnt_private_tmpfs), or -1 */
    unsigned n_private; /* directories made in it so far */
    bool cow_fallback;  /* a PLAN_COW home was shown read-only instead (the kernel refused
                         * the overlay): HOME is plan.home_fallback (the command gets
                         * plan.env_home_fallback) */
    char cow_why[160];  /* why the overlay was refused */
    bool under_cordon;  /* set by PID 1: the sandbox runs inside another cordon's, whose
                         * supervisor refuses kernel overlays (a PLAN_COW falls back) */
    bool proc_kept;     /* the kernel refused a fresh procfs (a container that masks parts
                         * of /proc): the sandbox's /proc, or proc_fd, is the caller's,
                         * read-only with its masks, whose PID namespace is the caller's */
} root_scratch;

typedef enum dest_create { DEST_EXISTING, DEST_DIR, DEST_FILE } dest_create;
/* Open `path` (absolute, inside the new root) from root_fd without following any
 * symlink, creating what is missing only inside mounts cordon made.  Returns an
 * O_PATH descriptor. */
int mnt_open_dest(int root_fd, const root_scratch *s, const char *path, dest_create create, cordon_error *err);
/* Does dir_fd lie on a mount cordon made (mnt_mark_ours)?  No when its mount id cannot
 * be read. */
bool mnt_is_ours(const root_scratch *s, int dir_fd);
int mnt_new_tmpfs(const char *mode, unsigned attrs, cordon_error *err);
/* A private, empty, writable tmpfs mount of `mode` for /tmp, HOME, TMPDIR or /dev/shm,
 * detached, ready to attach.  Under --limit-memory a directory of the one shared tmpfs
 * whose size is the limit (so that files there cannot outgrow it together, whatever
 * enforces the limit on processes); else a tmpfs of its own. */
int mnt_private_tmpfs(root_scratch *s, unsigned mode, unsigned attrs, cordon_error *err);
int mnt_set_attr(int tree_fd, const char *path, unsigned set, bool recursive, cordon_error *err);
int mnt_attach(int tree_fd, int dest_fd, const char *dest, cordon_error *err);
int mnt_mark_ours(root_scratch *s, int mnt_fd, cordon_error *err);
int mnt_ro_later(root_scratch *s, int mnt_fd, cordon_error *err);
