/* Stage 2: the policy's rule paths resolved on the host.
 *
 * Expands settings syntax (~, <workspace>, <data-root>, relative paths), the base and
 * rules on "/" into concrete rules; resolves every path to its canonical form (canon.c)
 * and records what it is (type, device, inode) so that setup can check it opens the
 * same thing; then decides, per path, the winning rule: at equal path deny > write >
 * read (longest path wins happens naturally: deeper rules are mounted on top). */
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
    char *symlink;  /* first symlink crossed while resolving, or NULL */
    strv crossed;   /* every symlink crossed */
    char *first_missing;     /* FT_MISSING: up to the first missing component */
    bool missing_under_file; /* FT_MISSING because a component is a file */
    bool shadowed;  /* another rule on the same path won */
    bool pin;       /* a directory bound onto itself only so that it cannot be renamed
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

/* What the resolver needs to know about the caller; tests fill it by hand. */
typedef struct host_info {
    const char *home; /* $HOME, or NULL */
    const char *cwd;  /* the current directory (absolute) */
    const char *root; /* the host root to list for --base host; "/" except in tests */
    const char *runtime_dir; /* $XDG_RUNTIME_DIR, or NULL: hidden under --base host */
} host_info;

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
    char *home;      /* canonical home, or NULL */
    ftype home_type;
    dev_t home_dev;  /* what the home directory is (home_cow's lower layer) */
    ino_t home_ino;
    gitconfig_identity git_identity; /* the host's user.name and user.email, for a private HOME
                                        (plan.c writes them into its .gitconfig) */
    bool home_cow;   /* --base host: the private HOME at the home's path is the real home,
                      * read-only underneath, with a private layer that takes the writes
                      * (a kernel overlay; plan.c), so what the base shows there is shown */
    char *workspace; /* canonical workspace (the value of <workspace>, even with --no-workspace) */
    char *cwd;       /* canonical working directory */
    ftype cwd_type;
    const struct cordon_policy *policy;
    strv gitdirs; /* git directories found at the top of writable paths (protect.c) */
    rnote *notes; /* deny globs: one "glob" line each, then "skip" lines */
    size_t n_notes, cap_notes;
    rhide *hides; /* --hide, hiddenPaths */
    size_t n_hides;
    char *runtime_dir; /* canonical $XDG_RUNTIME_DIR, or NULL */
} resolved;

int resolve_policy(const struct cordon_policy *p, const host_info *host, resolved *out,
                   cordon_error *err);
void resolved_free(resolved *r);
/* The winning rule with the longest path that is `path` or above it, or NULL. */
const rrule *resolved_lookup(const resolved *r, const char *path);
/* The rule with the longest path at or above `path` that is not shadowed (and, unless
 * `with_missing`, whose path exists): each ancestor looked up by bisection, so that
 * thousands of rules (a deny glob's matches) cost n log n, not n squared. */
const rrule *resolved_at_or_above(const resolved *r, const char *path, bool with_missing);
/* Resolve `given` on the host and append it as a rule (used by protect.c). */
int resolve_add_rule(resolved *r, const char *given, cordon_access access, rule_origin origin,
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
