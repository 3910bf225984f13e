// SPDX-License-Identifier: Apache-2.0
// Deny globs (`--deny-glob`, glob entries in a settings file's deniedPaths): a pure
// matcher for absolute-path patterns, and the walker that expands them on the host at
// launch.  (Line comments here, because the examples hold the two characters that end a
// block comment.)
//
// Syntax, per component (components are separated by '/'):
//   *      any run of characters, possibly empty, never '/'
//   ?      one character (a whole UTF-8 sequence when a valid one starts there, else one byte)
//   [...]  one byte from the set: ranges "a-z", named classes "[:alpha:]" (alnum alpha
//          blank cntrl digit graph lower print punct space upper xdigit); "!" or "^" first
//          negates; "]" first (after the negation) is literal, and so is "-" first or
//          last; "\" escapes; it never matches '/'
//   **     as a whole component: any number of whole components, zero included, so
//          "/r/**" matches /r itself and everything below it, and "/r/**/x" matches /r/x,
//          /r/a/x and /r/a/b/x.  "**" inside a longer component ("a**b", "**.env") is
//          just two "*".
//   \c     the character c itself
// A trailing '/' restricts the last component to directories (and symlinks to them).
//
// Dot files are not special: "*" matches ".env" and "**" walks into ".git".  Deny globs
// exist to hide things like ".env", so hiding dot files must be the easy case.  Matching
// is byte-wise (but for "?") and case-sensitive.  "." and ".." components are refused.
//
// The static prefix is the run of leading components without glob characters.  A pattern
// whose first component already has one ("/*.env", "/**/x") is refused: it would scan the
// whole file system.  Expansion walks only below the prefix (see glob_expand).
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cordon.h"
#include "policy/canon.h"

/* More matches than this for one pattern fail the run closed (exit 125): each match is
 * one mount in the sandbox, and a pattern that matches this much is almost certainly
 * wrong (hide the directory with --deny instead). */
#define GLOB_MAX_MATCHES 10000
/* Components in one pattern, prefix included (the matcher's state is a 64-bit set). */
#define GLOB_MAX_COMPONENTS 63
/* --glob-depth accepts 1 .. GLOB_MAX_DEPTH (the public header's limit). */
#define GLOB_MAX_DEPTH CORDON_GLOB_MAX_DEPTH

typedef struct glob_pat glob_pat;

/* Compile an absolute pattern.  Errors (stage USAGE) say what is wrong with it,
 * including a pattern with no static prefix. */
int glob_compile(const char *pattern, glob_pat **out, cordon_error *err);
void glob_pat_free(glob_pat *g);
const char *glob_pat_text(const glob_pat *g);
// The static prefix, unescaped: "/r" for "/r/**/*.env"; the whole path when the pattern
// has no glob character at all.
const char *glob_pat_prefix(const glob_pat *g);
/* The directory the walker starts in: the static prefix, or its parent when the pattern
 * has no glob character at all. */
const char *glob_pat_walk_from(const glob_pat *g);
/* True when the pattern has no glob character at all (it names one path). */
bool glob_pat_literal(const glob_pat *g);
/* Does `path` (absolute; a trailing '/' marks a directory) match?  Pure. */
bool glob_pat_match(const glob_pat *g, const char *path);

/* Compile and match in one call; false also when the pattern is invalid. */
bool glob_match(const char *pattern, const char *path);
/* Does s hold an unescaped '*', '?' or '['? */
bool glob_has_magic(const char *s);
/* Check the syntax of a pattern that may still be relative or use settings syntax
 * ("~/", "<workspace>/"): brackets, escapes, "." and "..".  The static prefix is checked
 * by glob_compile once the pattern is absolute. */
int glob_check_syntax(const char *s, cordon_error *err);

/* One match found on the host. */
typedef struct glob_hit {
    char *path;     /* the match, under the walk root given to glob_expand */
    size_t pattern; /* index of the (first) pattern that matched */
    ftype type;     /* of the entry itself (a symlink is FT_OTHER here, see is_link) */
    dev_t dev;
    ino_t ino;
    bool is_link;
    /* Symlinks only: the target, resolved as the kernel would (canon_resolve), or NULL
     * when it cannot be followed (loop, permission); `target_type` FT_MISSING when it
     * does not exist. */
    char *target;
    ftype target_type;
    dev_t target_dev;
    ino_t target_ino;
    const char *unfollowable; /* why target is NULL, or NULL */
} glob_hit;

typedef struct glob_hits {
    glob_hit *v; /* sorted by path (path_cmp) */
    size_t n, cap;
} glob_hits;
void glob_hits_free(glob_hits *h);

typedef struct glob_walk_opts {
    int max_depth;        /* levels below a pattern's static prefix; < 0: unlimited */
    size_t max_matches;   /* per pattern; 0: GLOB_MAX_MATCHES */
    bool descend_matches; /* also look inside matched directories (else a matched
                             directory is one match: hiding it hides all below) */
    /* ...but do look inside a matched directory when one of these paths (rules that show
     * something again below a hidden directory) lies strictly below it. */
    const char *const *keep_below;
    size_t n_keep;
} glob_walk_opts;

/* Expand n patterns.  roots[i] is the host directory that stands for pattern i's
 * glob_pat_walk_from() (its canonical form; NULL: nothing to walk).  Patterns with the
 * same root are expanded in one walk.
 *
 * The walk lists directories with getdents64 on descriptors opened relative to their
 * parent (O_NOFOLLOW), asks the file system for an entry's type only when getdents
 * reports DT_UNKNOWN or the entry matched, never follows a symlink to a directory (a
 * symlink that matches is a match: its target is resolved and reported), and only
 * enters a directory when some pattern can still match below it; a directory whose
 * remaining components are all literal is probed by name without being listed.
 *
 * Failing closed (-1, err names the pattern, *failed its index):
 *   - more than max_matches matches for one pattern;
 *   - a directory the pattern must list that the caller may search but not read (a
 *     command running as the caller could still open a file in it by a guessed name);
 *   - any other error than the ones below (EIO, EMFILE, a path longer than PATH_MAX...).
 * Skipped, safely:
 *   - a directory the caller can neither read nor search, and the entries of one it may
 *     read but not search: the command runs as the same user with no capabilities, so it
 *     cannot open anything there either;
 *   - an entry that vanished, or became a symlink, between listing and opening.
 *
 * On a large tree (more than a few dozen directories waiting) helper threads share the
 * walk, up to the number of CPUs cordon may run on (at most 4); they are joined before
 * this returns.  Hits are sorted by path (path_cmp), duplicates removed. */
int glob_expand(glob_pat *const *pats, const char *const *roots, size_t n, const glob_walk_opts *opts, glob_hits *out,
                size_t *failed, cordon_error *err);
