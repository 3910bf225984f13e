// SPDX-License-Identifier: Apache-2.0
/* The resolved rule set (what stage 2, resolve.c, produces and protect.c adds to) and
 * the queries on it (rules.c), which protect.c and plan/ use.  No pointer back to the
 * policy: the few settings the queries need are copied in. */
#pragma once
#include <stdbool.h>
#include <sys/types.h>

#include "policy/canon.h"
#include "policy/gitconfig.h"
#include "policy/policy.h"

typedef struct rrule {
    char *path;  /* canonical */
    char *given; /* after expansion, before resolution */
    cordon_access access;
    rule_origin origin;
    char *source; /* "--allow", a settings file, "base system", ... */
    int line;
    ftype type;
    dev_t dev;
    ino_t ino;
    char *symlink;           /* first symlink crossed while resolving, or NULL */
    strv crossed;            /* every symlink crossed */
    char *first_missing;     /* FT_MISSING: up to the first missing component */
    bool missing_under_file; /* FT_MISSING because a component is a file */
    bool shadowed;           /* another rule on the same path won */
    bool pin;                /* a directory bound onto itself only so that it cannot be renamed
                     * away from under a protected path (protect.c) */
} rrule;

/* A symlink the base recreates inside (e.g. /bin -> usr/bin on merged-/usr systems). */
typedef struct rlink {
    char *path;
    char *target;
    char *source;
} rlink;

/* A line for `cordon explain` about a deny glob: how many paths it matched ("glob"), or
 * a match that hides nothing ("skip": not visible inside, already hidden, a symlink to
 * nothing). */
typedef struct rnote {
    const char *kind; /* "glob" or "skip" */
    char *path;       /* the pattern (glob), or the match (skip) */
    char *source;     /* the rule: "--deny-glob PATTERN", or "FILE:LINE (deniedPaths ...)" */
    char *why;
} rnote;

/* A --hide path (or hiddenPaths entry), expanded; protect.c hides it where it is shown. */
typedef struct rhide {
    char *path;   /* absolute, as expanded (resolved by protect.c) */
    char *source; /* "--hide PATH", or "FILE:LINE (hiddenPaths \"...\")" */
} rhide;

typedef struct resolved {
    rrule *rules; /* sorted by path (path_cmp), winner first among equals */
    size_t n_rules, cap_rules;
    size_t n_sorted; /* rules[0..n_sorted) are in that order; those added since follow */
    rlink *links;
    size_t n_links, cap_links;
    char *home; /* canonical home, or NULL */
    ftype home_type;
    dev_t home_dev; /* what the home directory is (home_cow's lower layer) */
    ino_t home_ino;
    gitconfig_identity git_identity; /* the host's user.name and user.email, for a private HOME
                                        (plan.c writes them into its .gitconfig) */
    bool home_cow;                   /* --base host: the private HOME at the home's path is the real home,
                      * read-only underneath, with a private layer that takes the writes
                      * (a kernel overlay; plan.c), so what the base shows there is shown */
    char *workspace;                 /* canonical workspace (the value of <workspace>, even with --no-workspace) */
    bool workspace_git_top;          /* it is the top of the git work tree around the current directory */
    char *cwd;                       /* canonical working directory */
    ftype cwd_type;
    strv gitdirs; /* git directories found at the top of writable paths (protect.c) */
    rnote *notes; /* deny globs: one "glob" line each, then "skip" lines */
    size_t n_notes, cap_notes;
    rhide *hides; /* --hide, hiddenPaths */
    size_t n_hides;
    char *runtime_dir; /* canonical $XDG_RUNTIME_DIR, or NULL */
    /* what the queries below need of the policy (resolved holds no pointer to it) */
    cordon_base base;
    bool no_private_dirs; /* --no-private-dirs: HOME and TMPDIR are the view's */
} resolved;

void resolved_free(resolved *r);
/* Free what one rule holds (its strings). */
void rrule_clear(rrule *r);
/* The winning rule with the longest path that is `path` or above it, or NULL. */
const rrule *resolved_lookup(const resolved *r, const char *path);
/* The rule with the longest path at or above `path` that is not shadowed (and, unless
 * `with_missing`, whose path exists): each ancestor looked up by bisection, so that
 * thousands of rules (a deny glob's matches) cost n log n, not n squared. */
const rrule *resolved_at_or_above(const resolved *r, const char *path, bool with_missing);
/* Resolve `given` on the host and append it as a rule (ownership of nothing is taken). */
int resolve_add_rule(resolved *r, const char *given, cordon_access access, rule_origin origin, const char *source,
                     int line, cordon_error *err);
/* The same for a `given` the caller has just resolved into *c (canon.h): its strings go
 * into the rule (*c is left empty), and the host is not asked again. */
int resolve_add_canon(resolved *r, const char *given, canon *c, cordon_access access, rule_origin origin,
                      const char *source, int line, cordon_error *err);
/* Does a rule other than the base name `path` or a directory above it? */
bool resolved_rule_covers(const resolved *r, const char *path);
/* Would the sandbox show `path` (canonical): is its winning rule a read or write one, and
 * is it not covered by the private /tmp or HOME mounted over that rule? */
bool resolved_shows(const resolved *r, const char *path);
/* Is the private HOME mounted at the caller's home path (else at /.cordon/home)? */
bool private_home_at(const resolved *r);
/* Precedence at equal path: deny 3 > write 2 > read 1. */
int access_rank(cordon_access a);
/* Sort the rules by path (winner first among equals) and mark the losers shadowed. */
void resolved_sort(resolved *r);
/* A path with ".." after a component that does not exist: refused (freeing `c`), with
 * `what` naming the input; 0 when there is none. */
int resolve_refuse_dotdot(canon *c, const char *what, cordon_error *err);
