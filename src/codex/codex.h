// SPDX-License-Identifier: Apache-2.0
/* Codex compatibility: cordon speaking the command line of Codex's Linux sandbox helper
 * (`codex-linux-sandbox`), mapped onto cordon's own policy (doc/codex.md).
 *
 * Three pure stages, then the run:
 *   1. args.c     the helper's command line             -> cx_args
 *   2. profile.c  the permission profile JSON, the legacy
 *                 SandboxPolicy JSON, --managed-network  -> cx_profile, cx_netctx
 *   3. map.c      a profile and what the host says (cwd,
 *                 TMPDIR, HOME, which paths exist)       -> cx_plan: cordon rules
 * and main.c, which applies a cx_plan through the public setters of cordon.h and runs
 * the command (cordon_codex_main).
 *
 * Exit statuses follow the helper: 2 for what its argument parser rejects (an unknown
 * flag, malformed profile JSON, an unknown type, kind or access, a relative path), 1
 * for a set-up failure (where 0.169 panics with 101), otherwise the command's own. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "cordon.h"
#include "util/strv.h"

#define CX_EXIT_USAGE 2 /* the helper's argument parser (clap) rejects the command line */
#define CX_EXIT_SETUP 1 /* a set-up failure */

/* ---- 1. the command line ------------------------------------------------------------- */

typedef struct cx_args {
    const char *policy_cwd;         /* --sandbox-policy-cwd (required) */
    const char *command_cwd;        /* --command-cwd: accepted; 0.169 runs in its own cwd */
    const char *permission_profile; /* --permission-profile JSON */
    const char *sandbox_policy;     /* --sandbox-policy JSON (legacy; a cordon extension) */
    const char *managed_network;    /* --managed-network JSON */
    bool allow_network_for_proxy;   /* --allow-network-for-proxy (older spelling of proxy mode) */
    bool no_proc;                   /* --no-proc */
    bool use_legacy_landlock;       /* --use-legacy-landlock */
    bool inherit_pid_namespace;     /* --inherit-pid-namespace */
    bool explain;                   /* --cordon-explain: print cordon's plan, run nothing */
    bool help;                      /* -h, --help */
    char *const *command;           /* NULL-terminated, points into argv; NULL when none */
} cx_args;

/* Parse argv[1..argc-1] (argv[0] is the helper's name).  Returns 0, or -1 with err filled
 * (stage CORDON_STAGE_USAGE: exit 2). */
int cx_parse_args(int argc, char *const argv[], cx_args *out, cordon_error *err);
void cx_help(FILE *out);

/* ---- 2. the profile ------------------------------------------------------------------ */

typedef enum cx_path_kind { CX_PATH, CX_GLOB, CX_SPECIAL } cx_path_kind;
typedef enum cx_special {
    CX_SP_ROOT,
    CX_SP_MINIMAL,
    CX_SP_PROJECT_ROOTS, /* also "current_working_directory", an alias of it */
    CX_SP_TMPDIR,
    CX_SP_SLASH_TMP,
} cx_special;
/* Conflict precedence at one path, as Codex compares them: deny > write > read. */
typedef enum cx_access { CX_READ = 0, CX_WRITE = 1, CX_DENY = 2 } cx_access;

typedef struct cx_entry {
    cx_path_kind kind;
    char *path; /* CX_PATH: absolute; CX_GLOB: the pattern as given */
    cx_special special;
    char *subpath; /* CX_SP_PROJECT_ROOTS: "subpath", or NULL */
    cx_access access;
    bool skip_missing; /* "missing_path_behavior": "skip" */
} cx_entry;

typedef enum cx_profile_kind {
    CX_MANAGED,  /* cordon builds the sandbox */
    CX_DISABLED, /* no sandbox at all */
    CX_EXTERNAL, /* the file system is someone else's business; the network is ours */
} cx_profile_kind;

typedef struct cx_profile {
    cx_profile_kind kind;
    bool fs_restricted; /* CX_MANAGED: "restricted" (entries apply) or "unrestricted" */
    cx_entry *entries;
    size_t n_entries, cap_entries;
    int glob_depth; /* glob_scan_max_depth, or 0 when not given */
    bool network_enabled;
} cx_profile;

/* --permission-profile: {"type":"managed"|"disabled"|"external",...}, or the older
 * untagged {"network":{"enabled":b},"file_system":{"entries":[...]|"read":[...],"write":[...]}}.
 * Errors name the JSON position and the key (stage USAGE: exit 2). */
int cx_profile_parse(const char *json, cx_profile *out, cordon_error *err);
/* --sandbox-policy: {"type":"read-only"|"workspace-write"|"danger-full-access"|"external-sandbox",...},
 * translated into the profile Codex derives from it. */
int cx_legacy_policy_parse(const char *json, cx_profile *out, cordon_error *err);
void cx_profile_free(cx_profile *p);

/* --managed-network: {"loopbackPorts":[...],"allowLocalBinding":b,"allowUnixSockets":[...],
 * "dangerouslyAllowAllUnixSockets":b}; every field optional, unknown fields ignored. */
typedef struct cx_netctx {
    unsigned *ports;
    size_t n_ports;
    bool allow_local_binding;
    bool allow_all_unix_sockets;
    strv unix_sockets;
} cx_netctx;
int cx_netctx_parse(const char *json, cx_netctx *out, cordon_error *err);
void cx_netctx_free(cx_netctx *n);

/* The proxy variables (HTTP_PROXY, https_proxy, ALL_PROXY, ...) of `env` that proxy mode
 * bridges: every one that is set must name a loopback endpoint, on one of `ports` when
 * there are any; at least one must be set.  0, or -1 with err (a set-up failure: exit 1)
 * saying which variable is wrong and how to fix it. */
int cx_check_proxy_env(char *const *env, const cx_netctx *ctx, cordon_error *err);
/* "http://127.0.0.1:3128" -> port 3128, loopback; false when it is not a URL with a host. */
bool cx_proxy_url(const char *url, bool *loopback, unsigned *port);

/* ---- 3. the mapping ------------------------------------------------------------------ */

/* What the mapping asks of the host; tests fill it by hand. */
typedef struct cx_host {
    const char *policy_cwd; /* absolute */
    const char *tmpdir;     /* $TMPDIR, or NULL */
    const char *home;       /* $HOME, or NULL */
    /* Does `path` exist (lstat)?  And is it a directory (stat)? */
    bool (*exists)(const char *path, void *ctx);
    bool (*is_dir)(const char *path, void *ctx);
    /* The git directory a ".git" file names ("gitdir: X", X relative to the file's
     * directory), as an absolute path; NULL when `dotgit` is not such a file. */
    char *(*gitdir_of)(const char *dotgit, void *ctx);
    void *ctx;
} cx_host;

typedef struct cx_rule {
    char *path;
    cordon_access access;
    const char *why; /* static: "project_roots", "root", "path entry", ... */
} cx_rule;

typedef enum cx_run_mode {
    CX_RUN_SANDBOX, /* cordon_run with the plan's policy */
    CX_RUN_DIRECT,  /* no sandbox: full disk write with the network enabled (as the helper) */
} cx_run_mode;

typedef struct cx_plan {
    cx_run_mode mode;
    cordon_base base;
    cx_rule *rules;
    size_t n_rules, cap_rules;
    strv deny_globs;
    int glob_depth; /* 0: not set */
    cordon_network network;
    bool fs_restricted;        /* some file system restriction remains (for --use-legacy-landlock) */
    bool allow_unix_sockets;   /* proxy mode: --managed-network's dangerouslyAllowAllUnixSockets */
    const strv *allow_sockets; /* --managed-network's allowUnixSockets: --allow-socket paths (not
                                  owned; NULL: none) */
} cx_plan;

int cx_map(const cx_profile *prof, const cx_host *host, bool proxy, cx_plan *out, cordon_error *err);
void cx_plan_free(cx_plan *p);

/* Apply a plan (sandbox mode) to a fresh policy through the public setters; `env` is
 * the environment to pass whole, as the helper does. */
int cx_apply(const cx_plan *plan, const cx_args *args, char *const *env, cordon_policy *p, cordon_error *err);

/* WSL1 (no user namespaces): /proc/version names Microsoft and the kernel release does
 * not say WSL2.  Pure: the two files' contents (NULL when unreadable). */
bool cx_is_wsl1(const char *proc_version, const char *osrelease);
