// SPDX-License-Identifier: Apache-2.0
/* bubblewrap compatibility: cordon speaking bwrap's command line (doc/bwrap.md), mapped
 * onto cordon's own policy through the public setters of cordon.h.
 *
 * Three stages, as src/codex/ has:
 *   1. args.c  bwrap's command line, in order      -> bw_args (every option of bubblewrap
 *              0.8-0.11's manual is known: implemented, or refused naming it)
 *   2. map.c   the mount operations, in bwrap's order, and what the host says (which
 *              sources exist, which are /dev/null or an empty directory) -> bw_plan: a
 *              base and cordon rules, one per path (pure: the host comes through bw_host)
 *   3. main.c  the plan applied to a cordon_policy, the command run (cordon_bwrap_main)
 *
 * Exit statuses follow bwrap: 1 for a malformed or refused command line and for a set-up
 * failure (the command not found included), otherwise the command's own (128+N for a
 * signal). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cordon.h"
#include "util/strv.h"

#define BW_EXIT_FAIL 1 /* what bwrap exits with when it fails itself */

/* `msg` (of `n` bytes) from fmt, and -1: how args.c and map.c say what they refuse. */
__attribute__((format(printf, 3, 4))) int bw_fail(char *msg, size_t n, const char *fmt, ...);

/* ---- 1. the command line ------------------------------------------------------------- */

typedef enum bw_op_kind {
    BW_BIND,       /* --bind, --ro-bind (read_only), and their -try forms (try_) */
    BW_TMPFS,      /* --tmpfs (mode from --perms, else 0755) */
    BW_DEV,        /* --dev */
    BW_PROC,       /* --proc */
    BW_REMOUNT_RO, /* --remount-ro */
    BW_SYMLINK,    /* --symlink SRC DEST: `src` is the link's target */
    BW_DIR,        /* --dir (mode from --perms, else 0755) */
    BW_FILE,       /* --file, --bind-data (writable), --ro-bind-data (read_only): `src` is the
                    * data read from the FD */
    BW_CHMOD,      /* --chmod OCTAL PATH: `perms` */
} bw_op_kind;

typedef struct bw_op {
    bw_op_kind kind;
    const char *option; /* as given, for messages ("--ro-bind-try") */
    const char *src;    /* BIND; points into argv */
    const char *dest;
    bool read_only;
    bool writable; /* FILE: --bind-data */
    bool try_;
    int perms;               /* --perms before it, or -1 */
    unsigned long long size; /* TMPFS: --size before it, or 0 */
} bw_op;

typedef enum bw_env_kind { BW_ENV_SET, BW_ENV_UNSET, BW_ENV_CLEAR } bw_env_kind;
typedef struct bw_env {
    bw_env_kind kind;
    const char *name, *value;
} bw_env;

typedef struct bw_args {
    bw_op *ops; /* the mount operations, in the order given */
    size_t n_ops, cap_ops;
    bw_env *env; /* --setenv, --unsetenv, --clearenv, in the order given */
    size_t n_env, cap_env;
    bool unshare_net, unshare_all, share_net;
    bool die_with_parent;
    bool unshare_uts, disable_userns, level_prefix;
    const char *hostname;    /* --hostname, or NULL */
    int sync_fd, block_fd;   /* or -1 */
    const char **lock_files; /* --lock-file, in order */
    size_t n_lock_files;
    uint64_t caps;      /* --cap-add, less --cap-drop, in order (1 << CAP_*): 0 or CAP_SETFCAP */
    const char *chdir;  /* --chdir, or NULL */
    int info_fd;        /* --info-fd, or -1 */
    int json_status_fd; /* --json-status-fd, or -1 */
    bool help, version;
    bool explain;         /* --cordon-explain (cordon's own): print cordon's plan, run nothing */
    char *const *command; /* NULL-terminated, points into vec; NULL when none */
    char **vec;           /* argv with --args spliced in (its strings: argv's or bufs') */
    strv bufs;            /* what --args read */
} bw_args;

/* Parse argv[1..argc-1].  Returns 0, or -1 with `msg` (without the "bwrap: " prefix)
 * naming the option: an unknown one, a missing argument, or one of bubblewrap's options
 * that cordon refuses. */
int bw_parse_args(int argc, char *const argv[], bw_args *out, char *msg, size_t n);
void bw_args_free(bw_args *a);
/* `bwrap --help`: the options this personality implements, in bwrap's format (its
 * usage line names argv0, as bwrap's does). */
void bw_help(FILE *out, const char *argv0);

/* ---- 2. the mapping ------------------------------------------------------------------ */

typedef enum bw_src_type { BW_SRC_MISSING, BW_SRC_DEVNULL, BW_SRC_EMPTY_DIR, BW_SRC_OTHER } bw_src_type;
typedef struct bw_host {
    bw_src_type (*src_type)(const char *path, void *ctx); /* following symlinks, as bwrap */
    /* Is there anything at path (following symlinks)?  NULL: src_type is asked (which
     * lists a directory to tell an empty one: more than a source at its own path needs) */
    bool (*exists)(const char *path, void *ctx);
    void *ctx;
} bw_host;

typedef struct bw_rule {
    char *path; /* normalized, owned */
    bool tmpfs; /* a writable tmpfs (cordon_policy_add_tmpfs) of `mode` and `size`, not a rule */
    unsigned long long size;
    bool file;          /* a hide from /dev/null: a file at `path` (bubblewrap's mount point) */
    const char *target; /* a symlink (cordon_policy_add_symlink) to this, not a rule */
    const char *data;   /* a file (policy_add_file) holding this, of `mode`, not a rule */
    bool host_mkdir;    /* --dir missing in a writable bind: a directory bwrap makes on the
                         * host (main.c: only with CORDON_BWRAP_EXACT=1), not a rule */
    unsigned mode;
    cordon_access access;
    const char *why; /* the option, static or into argv */
} bw_rule;

typedef struct bw_plan {
    cordon_base base; /* EMPTY (a tmpfs root: bwrap's own default) or HOST (--ro-bind / /) */
    bw_rule *rules;
    size_t n_rules;
    bool proc; /* --proc /proc */
    cordon_network network;
} bw_plan;

/* The operations, applied in order: a mount at a path covers what earlier ones put at it
 * or below it, so only the last one at each path that nothing later covers remains, and
 * "the longest path wins" of cordon's rules then shows the same view.  Returns 0, or -1
 * with `msg` (a refused or impossible operation, named). */
int bw_map(const bw_args *a, const bw_host *host, bw_plan *out, char *msg, size_t n);
void bw_plan_free(bw_plan *p);
