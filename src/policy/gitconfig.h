// SPDX-License-Identifier: Apache-2.0
/* Reading git configuration files for the paths a host git would run or read from.
 *
 * A host's or a repository's configuration can name files in a writable path: hooks
 * (core.hooksPath = .husky), a file monitor program (core.fsmonitor = ./tools/watch),
 * more configuration (include.path = ../shared.gitconfig, includeIf "...".path).  The
 * command could replace what they name, and a later git on the host would run it.
 * protect.c keeps every such path that lies in a writable path read-only (or, when it is
 * missing, uncreatable).
 *
 * The syntax is git-config(1)'s: sections with optional subsections, case-insensitive
 * section and variable names, quoted values with escapes, comments, continuation lines.
 * Conditional includes are followed whatever their condition (a stricter reading). */
#pragma once
#include "cordon.h"
#include "util/strv.h"

typedef struct gitconfig_ctx {
    const char *home;     /* for "~/" */
    const char *worktree; /* the top of the repository's worktree (relative hooksPath and
                             fsmonitor), or NULL */
    strv *unread;         /* if not NULL: each file that exists but could not be read
                             (EACCES, EPERM) is appended, for the caller to judge
                             (canon_unreadable) */
    strv *too_large;      /* if not NULL: each regular file larger than cordon reads (1 MiB),
                             which git would read whole, is appended */
} gitconfig_ctx;

/* Append to `out` (absolute, lexically normalised) every path `file` (and, recursively,
 * what it includes) names for git to run or read: the include files themselves, the
 * hooks directory, the file monitor program.  A file that cannot be read adds nothing
 * (git skips a missing include too).  Never fails; at most 16 levels of includes. */
void gitconfig_paths(const gitconfig_ctx *ctx, const char *file, strv *out);

/* Parse a configuration document in memory (for tests): `dir` is the directory of the
 * file it came from (relative include paths). */
void gitconfig_paths_buffer(const gitconfig_ctx *ctx, const char *dir, const char *buf, size_t len, int depth,
                            strv *out);

/* The identity git would commit with, from the host's configuration: user.name and
 * user.email of the system's and the caller's global files (and what they include
 * unconditionally), in git's order; "" where none says.  Nothing else is read: no
 * credential helper, no URL rewrite, no token. */
typedef struct gitconfig_identity {
    char name[256];
    char email[256];
} gitconfig_identity;
void gitconfig_read_identity(const gitconfig_ctx *ctx, gitconfig_identity *id);
/* The same on a document in memory (for tests); id is updated, not cleared. */
void gitconfig_identity_buffer(const gitconfig_ctx *ctx, const char *buf, size_t len, gitconfig_identity *id);
