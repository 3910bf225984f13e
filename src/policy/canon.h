// SPDX-License-Identifier: Apache-2.0
/* Resolving a rule's path on the host, the way the kernel would: component by
 * component, following symlinks (at most 40), applying ".." to what a symlink really
 * names.  A missing tail is kept lexically, so a rule may name a path that does not
 * exist yet.
 *
 * A ".." after a missing component (or after a file) has no kernel meaning: the kernel
 * answers ENOENT (ENOTDIR), and once the component is created the path names whatever
 * that component turns out to be (a directory, or a symlink to anywhere).  The result is
 * then only a lexical guess, and dotdot_after_missing says so: a rule must not rest on
 * it (resolve.c refuses such a path). */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "cordon.h"
#include "util/strv.h"

typedef enum ftype { FT_MISSING = 0, FT_DIR, FT_FILE, FT_OTHER } ftype;

typedef struct canon {
    char *path; /* canonical absolute path */
    ftype type; /* of the final component (never a symlink) */
    dev_t dev;
    ino_t ino;
    char *symlink;             /* the first symlink crossed, as a path, or NULL */
    strv crossed;              /* every symlink crossed, in order */
    char *first_missing;       /* FT_MISSING: the path up to the first component that is missing */
    bool missing_under_file;   /* FT_MISSING because a component is a file, not a directory */
    bool dotdot_after_missing; /* a ".." follows first_missing: `path` is a lexical guess */
} canon;

/* `in` must be absolute. */
int canon_resolve(const char *in, canon *out, cordon_error *err);
void canon_free(canon *c);
const char *ftype_name(ftype t);

/* cordon could not look at, list or read `path` (EACCES or EPERM) while building the
 * rules.  0 when the run may go on without it: no process running as the caller with no
 * capability can get at it during the run either (the directory in the way, or the
 * unlistable directory itself, is someone else's and the caller may not search it).
 * Otherwise -1 with err naming the directory or file and the fix (`chmod u+rx DIR`):
 * what the caller owns it can chmod back, and so can a command running as the caller
 * (doc/security.md, "The next run hides what this one hid").  `what` starts the
 * message: what the path was needed for. */
int canon_unreadable(const char *path, const char *what, cordon_error *err);
/* The same, where the caller knows better: matters(blocked, arg) false means that what
 * lies in `blocked` (the directory or file cordon cannot get into) cannot matter. */
int canon_unreadable_if(const char *path, const char *what, bool (*matters)(const char *blocked, void *arg), void *arg,
                        cordon_error *err);
