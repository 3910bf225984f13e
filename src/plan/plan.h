// SPDX-License-Identifier: Apache-2.0
/* Stage 3: the resolved policy compiled into an ordered list of mount operations.
 *
 * Pure: no system calls.  The operations are sorted so that a parent is mounted before
 * anything below it; a deeper rule is mounted on top of a shallower one, which is how
 * "the longest matching path wins" becomes true inside.  sandbox/root.c executes the
 * plan; `cordon explain` prints it.  A new kind of mount is one enum value here, one
 * case in root.c and one in explain.c. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "net/netplan.h"
#include "policy/rules.h"

typedef enum plan_kind {
    PLAN_BIND,    /* bind host `src` at `dest`, read-only or writable */
    PLAN_HIDE,    /* an empty, read-only directory or file over `dest` */
    PLAN_TMPFS,   /* a private, empty, writable tmpfs at `dest` */
    PLAN_SYMLINK, /* a symlink at `dest` pointing to `src` */
    PLAN_DEV,     /* the minimal /dev */
    PLAN_PROC,    /* a fresh /proc */
    PLAN_NOTE,    /* nothing to do; `why` says why (shown by explain) */
    PLAN_OVERLAY, /* a kernel overlay at `dest`: lower `src` (host), `upper`, `work`
                   * (a copy-on-write workspace, plan/view.c) */
    PLAN_HOLD,    /* a read-only directory at `dest` that only holds mount points below a
                   * private writable one (HOME, /tmp): an empty tmpfs, read-only once
                   * what it holds is mounted, or (from_view) the directory as the view
                   * shows it there, bound onto itself read-only */
    PLAN_FILE,    /* a file at `dest` holding `src`, written in a private tmpfs of cordon's
                   * (the private HOME's .gitconfig with the host's git identity) */
    PLAN_COW,     /* the host directory `src` at `dest`, read-only underneath, with a
                   * private layer that takes the writes and vanishes (a kernel overlay,
                   * upper and work layers in a tmpfs of the run's own): the home under
                   * --base host.  Where the kernel refuses the overlay, `src` read-only
                   * and HOME at plan.home_fallback instead */
} plan_kind;

typedef struct plan_op {
    plan_kind kind;
    char *dest;     /* absolute path inside the sandbox */
    char *src;      /* BIND: host path; SYMLINK: link target */
    bool read_only; /* BIND */
    bool is_dir;    /* BIND, HIDE: directory or non-directory mount point */
    bool pin;       /* BIND: kept even where it adds no access (see rrule.pin) */
    dev_t dev;      /* BIND: what the source must still be when it is opened */
    ino_t ino;
    unsigned mode;           /* TMPFS */
    unsigned long long size; /* TMPFS: its size in bytes (cordon_policy_add_tmpfs), or 0: none */
    char *why;               /* where it came from, for explain and error messages */
    char *upper;             /* OVERLAY: the upper and work layers (host paths) */
    char *work;
    bool in_view;   /* BIND below an OVERLAY: `dest` bound onto itself from inside the
                     * overlay's view, not from the host */
    bool from_view; /* HOLD: bind what the view shows at `dest` onto itself (below a COW) */
    bool user;      /* from a rule of the caller's (a flag, a settings file): a NOTE then
                     * means the rule changes nothing (plan.warnings) */
} plan_op;

/* A rule of the creation control (supervise/creation.h), which it resolves inside the
 * built root: not a mount, so not a plan_op. */
typedef enum plan_cc_kind {
    PLAN_NOCREATE, /* the last component of `path` does not exist and must not be created;
                    * its parent exists inside.  The creation control refuses it, so
                    * nothing is placed on the host */
    PLAN_GITDIR,   /* a git directory known at start, where a HEAD may be created */
    PLAN_LIFT,     /* a path a rule grants write on exactly, which lifts the creation
                    * control's git rules there */
} plan_cc_kind;

typedef struct plan_cc_rule {
    plan_cc_kind kind;
    char *path; /* absolute, inside the sandbox */
    char *why;  /* where it came from, for explain and error messages */
} plan_cc_rule;

/* --isolation landlock: a winning rule, as confine/llonly.c turns it into Landlock grants
 * on the host's own paths (nothing is mounted then). */
typedef struct plan_rule {
    char *path;
    cordon_access access;
    bool exists;
    bool is_dir;
    char *why; /* the rule's source */
} plan_rule;

typedef struct plan {
    /* The new root: a fresh tmpfs, or (--base host, when no mount point has to be
     * created at its top) the host root bound whole, read-only, as bubblewrap's
     * --ro-bind / / does: one recursive bind instead of one per top-level entry. */
    bool root_is_host;
    dev_t root_dev;
    ino_t root_ino;
    plan_op *ops;
    size_t n_ops, cap_ops;
    plan_cc_rule *cc_rules; /* the creation control's, in path order */
    size_t n_cc_rules, cap_cc_rules;
    char *home;            /* HOME inside */
    char *home_fallback;   /* a PLAN_COW home that the kernel would not overlay: HOME here
                          * instead (a private tmpfs), or NULL */
    char *tmpdir;          /* TMPDIR inside */
    char *cwd;             /* working directory inside */
    bool cwd_is_workspace; /* the workspace, the current directory (not --chdir) not being visible */
    cordon_network network;
    bool proc;
    bool inherit_pid_ns;        /* no PID namespace of its own; PLAN_PROC binds the caller's /proc */
    limit_values limits;        /* --limit-*: applied by supervise/limits.c */
    bool no_nested;             /* --no-nested: confine/ refuses user namespaces and the mount API */
    bool bare;                  /* cordon_policy_set_protections(false): no creation control
                                   (supervise/), no seccomp filter, no Landlock (confine/) */
    uint64_t keep_caps;         /* 1 << CAP_* the command keeps, ambient (supervise/child.c) */
    char *hostname;             /* the UTS namespace's host name (supervise/child.c), or NULL */
    cordon_isolation isolation; /* namespaces, or landlock: no mounts, the ops are then
                                   only explained, and `rules` below is what is enforced */
    plan_rule *rules;           /* landlock: every winning rule (none shadowed), in path order */
    size_t n_rules;
    bool list_root;         /* landlock, --base host with no rule on "/": "/" may be listed */
    net_plan net;           /* bridges, proxy, forwarded ports (lib/api.c, net_plan_build, before
                     * the plan is sealed) */
    strv warnings;          /* rules of the caller's that change nothing (README, "Warnings and
                    * messages": a "cordon: warning:" line each): a path that does not
                    * exist, a rule overridden at equal length, a rule that adds nothing to
                    * what is above it */
    double timeout;         /* seconds (--timeout), 0: none; PID 1 ends the run then */
    strv env;               /* the command's environment, "NAME=VALUE", NULL-terminated (plan/env.c,
                     * then net_plan_build's proxy variables; lib/api.c) */
    strv env_home_fallback; /* with a home_fallback: env with HOME there, the environment
                             * when the kernel would not overlay the PLAN_COW home */
    uint64_t sealed;        /* plan_seal's hash of everything above; 0: not sealed yet */
} plan;

/* The minimal /dev of PLAN_DEV: these character devices of the host's, each bound at its
 * own path, plus a private devpts (/dev/pts, /dev/ptmx), a private /dev/shm and the
 * fd/stdin/stdout/stderr links.  One table: sandbox/dev.c builds /dev from it,
 * confine/landlock.c and confine/llonly.c grant exactly it. */
#define PLAN_DEV_NODES 6
extern const char *const plan_dev_nodes[PLAN_DEV_NODES];

#define PLAN_PRIVATE_HOME "/.cordon/home"
#define PLAN_PRIVATE_TMP  "/.cordon/tmp"

/* Does the operation mount something (as opposed to a NOTE, or a FILE written in a
 * private mount)? */
static inline bool plan_op_mounts(const plan_op *op)
{
    return op->kind != PLAN_NOTE && op->kind != PLAN_FILE;
}

/* Where TMPDIR goes when /tmp holds a mount (the workspace under /tmp, say): TMPDIR is
 * always empty and holds nothing, so that removing everything in it is safe. */
#define PLAN_TMPDIR_IN_TMP "/tmp/.cordon-tmp"
/* The fallback HOME of a PLAN_COW home when the host root is the new root (no place of
 * cordon's own at the top): in the private /tmp. */
#define PLAN_HOME_FALLBACK_IN_TMP "/tmp/.cordon-home"

/* What plan_build needs besides the resolved rules: the run's settings from the policy and
 * the isolation chosen for this host (lib/api.c; never CORDON_ISOLATION_AUTO). */
typedef struct plan_input {
    cordon_isolation isolation;
    cordon_network network;
    bool proc; /* a /proc (not --no-proc) */
    bool no_nested;
    bool inherit_pid_ns;
    bool cwd_given;    /* --chdir named the working directory (for the advice) */
    bool no_workspace; /* --no-workspace: no workspace to fall back on for the working directory */
    limit_values limits;
    const policy_view *view;   /* a workspace run's view, or NULL */
    bool bare;                 /* cordon_policy_set_protections(false) */
    uint64_t keep_caps;        /* policy_set_keep_caps */
    const char *hostname;      /* policy_set_hostname, or NULL */
    const policy_tmpfs *tmpfs; /* cordon_policy_add_tmpfs */
    size_t n_tmpfs;
    double timeout; /* --timeout, 0: none */
} plan_input;

plan_input plan_input_of(const struct cordon_policy *pol, cordon_isolation isolation);
int plan_build(const resolved *r, const plan_input *in, plan *out, cordon_error *err);
void plan_free(plan *p);
/* The plan made final (plan/seal.c), once its environment and network are in: what the
 * later stages read, and nothing changes it after this.  The hash of every field is kept
 * in `sealed`; plan_intact() takes it again (the command's process does, before its exec,
 * and fails the run when it differs).  plan_hash allocates nothing. */
void plan_seal(plan *p);
uint64_t plan_hash(const plan *p);
bool plan_intact(const plan *p);
const char *plan_kind_name(plan_kind k);
const char *plan_cc_kind_name(plan_cc_kind k);
/* Sort the operations into plan order (parents first), and the creation control's rules
 * by path. */
void plan_sort(plan *p);
/* A workspace run (policy.view): show the view at the source's path (plan/view.c); the
 * caller sorts the plan again when a host_dir view renamed operations. */
int plan_apply_view(const policy_view *v, plan *p, cordon_error *err);
/* The last operation (in plan order) whose dest is `path` or above it; NOTEs skipped. */
const plan_op *plan_covering(const plan *p, const char *path);
