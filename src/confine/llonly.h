// SPDX-License-Identifier: Apache-2.0
/* --isolation landlock: no namespaces; the view is enforced by Landlock on the host's own
 * paths, with cordon's supervisor keeping the creation control (supervise/creation.h), and
 * --network none by Landlock's TCP rules plus the seccomp filter's TCP-only mode.  For
 * hosts where user namespaces cannot be created (Ubuntu's AppArmor restriction, container
 * seccomp profiles); weaker than the namespaces, see doc/security.md.
 *
 * Landlock only ever adds rights along a path, so a deny (or a read-only path) inside a
 * granted tree is emulated: the tree is split down to it, and every other entry of the
 * directories on the way gets the tree's rights.  Around a read-only path those
 * directories may be read (what is made there later too), and names are made, written
 * and removed there by the supervisor, whose own ruleset may write there and which
 * decides by the plan's rules itself; around a hidden path they may only be listed, and
 * take no new name (the command could not read it), and the denied path's own name stays
 * visible in its parent's listing.  Missing denied paths are the creation control's to
 * refuse (its PLAN_NOCREATE); without it, they split the tree the same way.
 *
 * The parent builds both rulesets (llonly_prepare); the command's process and the
 * supervisor only call landlock_restrict_self on theirs. */
#pragma once
#include <stdbool.h>
#include <stdio.h>

#include "confine/landlock.h"
#include "plan/plan.h"

typedef struct ll_grant {
    char *path;
    ll_class cls;
    bool is_dir;
    const char *why; /* static: where the grant comes from */
    bool sup_only;   /* the supervisor's ruleset only: it creates, writes and renames there on
                        the command's behalf, deciding by the plan's rules itself
                        (supervise/creation.h, ll_rules) */
} ll_grant;

typedef struct llonly {
    int abi;
    int ruleset_fd;     /* -1 until built */
    int sup_ruleset_fd; /* the supervisor's (the creation control, which performs the
                           command's creations): write rights only, also on the split
                           directories; -1 when there is none */
    bool supervised;    /* the creation control runs: missing protected names are its to
                           refuse, and split directories stay readable and get the
                           supervisor's write grant */
    bool net_none;      /* TCP connect and bind refused (ABI 4), listen by seccomp */
    bool scoped;        /* abstract Unix sockets and signals scoped (ABI 6) */
    ll_grant *grants;
    size_t n_grants, cap_grants;
    char *dir;       /* the private directory, removed by llonly_free(), or NULL */
    char *home;      /* dir/home: HOME inside */
    char *tmpdir;    /* dir/tmp: TMPDIR inside */
    bool prepared;   /* llonly_prepare() set the three below (a caller may zero-fill
                         the struct, with ruleset_fd = -1: then they mean nothing) */
    int parent_fd;   /* the directory dir was made in, or -1 */
    pid_t janitor;   /* removes dir when cordon is gone (also killed), or -1 */
    int janitor_wfd; /* cordon's end of its pipe: EOF means "go", or -1 */
} llonly;

/* The grants for a plan's rules (plan.rules: lists the directories it must split). */
int llonly_grants(const plan *p, llonly *out, cordon_error *err);
/* Check what the kernel offers, make the private HOME and TMPDIR, compute the grants
 * and build the ruleset. */
int llonly_prepare(const plan *p, llonly *out, cordon_error *err);
/* The private directory as `cordon explain` shows it before it is made: its parent, then
 * "cordon-ll-PID-RANDOM" (LL_DIR_SHOWN), where a run names its PID and random part. */
#define LL_DIR_SHOWN "cordon-ll-PID-RANDOM"
char *llonly_dir_shown(void);
/* Does the creation control supervise the command in this plan's Landlock mode? */
bool llonly_supervised(const plan *p);
/* Close the ruleset and remove the private directory (never following a symlink); its
 * janitor, started before the directory was made, removes it when cordon is killed. */
void llonly_free(llonly *l);
/* What differs from the namespaced sandbox, one sentence each (explain, its JSON). */
const char *const *llonly_differences(size_t *n);
/* `cordon explain --isolation landlock`. */
void llonly_explain(FILE *out, const llonly *l);
