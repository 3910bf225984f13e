// SPDX-License-Identifier: Apache-2.0
/* The policy model: what the caller asked for, before anything touches the host.
 *
 * Flags (through the public setters) and settings files fill one cordon_policy.  Every
 * new knob is a field here, a setter in lib/api.c or policy.c, a line in `cordon
 * explain`, and (when it affects the view) a case in resolve.c / plan.c. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cordon.h"
#include "util/strv.h"

/* Where a rule came from; printed by `cordon explain` and in error messages. */
typedef enum rule_origin {
    ORIGIN_FLAG,      /* --allow, --allow-ro, --deny, cordon_policy_add_path() */
    ORIGIN_SETTINGS,  /* a settings file's allowedPaths / deniedPaths */
    ORIGIN_WORKSPACE, /* the workspace (--workspace or the current directory) */
    ORIGIN_BASE,      /* the --base */
    ORIGIN_PROTECT,   /* added by cordon: protected metadata, credential stores */
} rule_origin;

typedef struct policy_rule {
    char *path; /* as given (flags: absolute; settings: may use ~, <workspace>, relative) */
    cordon_access access;
    rule_origin origin;
    char *source; /* "--allow", or the settings file name */
    int line;     /* settings line, or 0 */
    bool expand;  /* settings syntax: ~, <workspace>, <data-root>, relative to workspace */
} policy_rule;

/* A deny glob (--deny-glob, or a deniedPaths entry with a glob character): expanded on
 * the host at launch by resolve.c (policy/glob.h), each match becoming a deny rule. */
typedef struct policy_glob {
    char *pattern;      /* as given (settings: may use ~, <workspace>, relative) */
    rule_origin origin; /* ORIGIN_FLAG or ORIGIN_SETTINGS */
    char *source;       /* "--deny-glob", or the settings file name */
    int line;           /* settings line, or 0 */
    bool expand;        /* settings syntax, as for policy_rule */
} policy_glob;

/* A private, empty, writable tmpfs at `path` (inside the sandbox), of `mode`; or, with
 * `target`, a symlink at `path` pointing to `target` (cordon_policy_add_symlink); or, with
 * `data`, a file of `mode` holding it (policy_add_file). */
typedef struct policy_tmpfs {
    char *path;
    unsigned mode;
    unsigned long long size; /* bytes, or 0: no size of its own */
    char *target;
    char *data;
} policy_tmpfs;

typedef enum env_op_kind { ENV_SET, ENV_KEEP } env_op_kind;
typedef struct env_op {
    env_op_kind kind;
    char *name;
    char *value; /* ENV_SET only */
} env_op;

/* Resource limits, indexed by cordon_limit; 0 = none (supervise/limits.c applies them). */
#define LIMITS_N 3
typedef struct limit_values {
    unsigned long long v[LIMITS_N]; /* pids: processes and threads; memory: bytes; cpu: seconds */
} limit_values;

/* The network beyond none and host (src/net/netpolicy.c sets it, src/net/netplan.c reads
 * it): the filtering proxy's rules, port forwarding, the decision log. */
typedef struct policy_port {
    unsigned short inside, host;
} policy_port;
typedef struct policy_net {
    strv allow, deny;        /* --allow-domain, --deny-domain: normalised patterns */
    strv hosts;              /* --add-host: "name=address", normalised */
    strv dns;                /* --dns-server: "address port", normalised */
    bool allow_unix;         /* --allow-unix-sockets */
    strv sockets;            /* --allow-socket PATH: absolute, as given */
    bool allow_unix_set;     /* chosen by the setter: settings do not override */
    unsigned short *forward; /* --forward-port */
    size_t n_forward;
    policy_port *publish; /* --publish-port */
    size_t n_publish;
    char *log; /* --network-log FILE */
} policy_net;
void policy_net_free(policy_net *n);

/* A copy-on-write workspace's view for one run (src/workspace/run.c, plan/view.c): set
 * only on the private copy of a policy that cordon_workspace_run() makes; NULL otherwise.
 * The view appears at `source` inside the sandbox. */
typedef struct policy_view {
    const char *name;     /* the workspace, for explain and messages */
    const char *source;   /* canonical source directory: where the view is shown inside */
    const char *host_dir; /* fuse, copy, worktree: the view as a host directory, which the
                             policy's workspace names (plan/view.c moves it to `source`);
                             NULL for the kernel overlay */
    const char *upper;    /* kernel overlay: the layers, mounted inside the sandbox */
    const char *work;
} policy_view;

struct cordon_policy {
    cordon_base base;
    policy_rule *rules;
    size_t n_rules, cap_rules;

    char *workspace; /* absolute as given (resolved later by canon.c); NULL = current directory */
    bool no_workspace;
    char *data_root; /* absolute as given, or NULL */
    bool read_only;
    bool read_only_set; /* chosen by a setter: settings do not override */

    cordon_network network;
    bool network_set; /* chosen by a setter: settings do not override */

    env_op *env;
    size_t n_env, cap_env;
    bool clear_env;

    char *cwd;      /* absolute as given, or NULL = the current directory */
    double timeout; /* seconds; 0 = none */
    bool no_proc;
    bool inherit_pid_ns;  /* the caller's PID namespace and /proc (read-only) */
    bool no_private_dirs; /* no private HOME and TMPDIR (cordon_policy_set_private_dirs) */
    bool no_nested;       /* --no-nested */
    bool toolchains;      /* --toolchains: the home's tool directories read-only (policy/toolchains.h) */
    bool bare;            /* cordon_policy_set_protections(false): bubblewrap's exact mode */
    char *hostname;       /* policy_set_hostname, or NULL */
    uint64_t keep_caps;   /* policy_set_keep_caps: 1 << CAP_* the command keeps in its user
                           * namespace (bwrap's --cap-add CAP_SETFCAP), else 0 */
    cordon_isolation isolation;
    bool isolation_set; /* chosen by a setter: settings do not override */

    int settings_enabled;          /* -1: no settings file said; else 0/1 */
    char *settings_enabled_where;  /* "FILE:LINE" of the "enabled" that said so, or NULL */
    int settings_sandboxed;        /* orchestration.sandboxed: -1: no settings file said; else 0/1 */
    char *orchestration_isolation; /* orchestration.isolation as given, or NULL */
    strv settings_unknown;         /* "FILE:LINE: ..." for each top-level key of a settings file
                                    * that neither cordon nor the harnesses it shares settings
                                    * with know (a typo of "sandbox" drops its rules): warned */
    bool strict_settings;          /* --strict-settings, "strictSettings": such a key is an error */
    strv protect;                  /* --protect NAME: more names kept read-only atop writable paths */

    policy_rule *hides; /* --hide, hiddenPaths: hidden wherever shown, unless a rule names them
                           * exactly (as the credential stores are: policy/protect.c) */
    size_t n_hides, cap_hides;

    policy_tmpfs *tmpfs; /* cordon_policy_add_tmpfs, _add_symlink: tmpfs mounts, symlinks */
    size_t n_tmpfs, cap_tmpfs;

    policy_glob *globs; /* deny globs, in the order given */
    size_t n_globs, cap_globs;
    int glob_depth; /* --glob-depth: levels below a glob's static prefix; -1 = unlimited */

    limit_values limits;
    unsigned limits_set; /* 1u << cordon_limit chosen by a setter: settings do not override */

    policy_net net;
    const policy_view *view; /* a workspace run's view (not owned), or NULL */

    unsigned scalars_set;       /* POLICY_SET_*: chosen by a setter; settings do not override */
    size_t n_env_settings;      /* env[0..n): from settings files, before the setters' (which win) */
    char *settings_status_json; /* "statusJson" of a settings file (the caller writes it), or NULL */
    int settings_tty;           /* "tty": -1 not said, 0, 1 */

    cordon_warning_fn warn_fn; /* cordon_policy_set_warning_handler: rules that change
                                  nothing, said once per run or explain; NULL: dropped */
    void *warn_ctx;
};

/* Scalars a setter chose (cordon_policy.scalars_set): a settings file leaves them. */
enum {
    POLICY_SET_BASE = 1u << 0,
    POLICY_SET_WORKSPACE = 1u << 1, /* --workspace or --no-workspace */
    POLICY_SET_DATA_ROOT = 1u << 2,
    POLICY_SET_CLEAR_ENV = 1u << 3,
    POLICY_SET_CWD = 1u << 4,
    POLICY_SET_TIMEOUT = 1u << 5,
    POLICY_SET_PROC = 1u << 6,
    POLICY_SET_NO_NESTED = 1u << 7,
    POLICY_SET_GLOB_DEPTH = 1u << 8,
    POLICY_SET_TOOLCHAINS = 1u << 9,
};

/* A variable from a settings file: after the other settings files' ones, before the
 * setters' (so a flag wins whatever the order). */
void policy_add_settings_env(struct cordon_policy *p, bool keep, const char *name, const char *value);

/* Append a rule (copies strings). */
void policy_add_rule(struct cordon_policy *p, const char *path, cordon_access access, rule_origin origin,
                     const char *source, int line, bool expand);

/* Append a --hide path (copies strings). */
void policy_add_hide(struct cordon_policy *p, const char *path, rule_origin origin, const char *source, int line,
                     bool expand);

/* Append a deny glob (copies strings; the pattern was checked by the caller). */
void policy_add_glob(struct cordon_policy *p, const char *pattern, rule_origin origin, const char *source, int line,
                     bool expand);

/* Settings reader (settings.c): fill p from a JSON settings file.  Errors name the
 * file, the line and the key, with stage CORDON_STAGE_SETTINGS. */
int settings_load(struct cordon_policy *p, const char *file, cordon_error *err);
/* The same on a document already in memory; `name` stands for the file in messages. */
int settings_load_buffer(struct cordon_policy *p, const char *name, const char *buf, size_t len, cordon_error *err);

const char *access_name(cordon_access a);
const char *base_name(cordon_base b);
const char *network_name(cordon_network n);
const char *origin_name(rule_origin o);

/* Limits (limit.c): "pids", "memory", "cpu"; the option that sets one ("limitPids", as
 * cordon_error.option names it). */
const char *limit_name(cordon_limit which);
const char *limit_option(cordon_limit which);
/* Check a value (0 = no limit), or parse one as written on the command line; errors name
 * the option and say what is accepted. */
int limit_check(cordon_limit which, unsigned long long value, cordon_error *err);
int limit_parse(cordon_limit which, const char *s, unsigned long long *out, cordon_error *err);
/* "50", "64 MiB", "10 s": for explain and messages. */
void limit_format(cordon_limit which, unsigned long long value, char *buf, size_t n);

/* The capabilities (1 << CAP_*) the command keeps in the sandbox's user namespace, as
 * ambient capabilities: only CAP_SETFCAP is taken (bwrap's --cap-add CAP_SETFCAP,
 * doc/bwrap.md), and with cordon's protections on, the command's filter then refuses
 * the setxattr calls, so that what the capability still allows is mapping uid 0 into a
 * user namespace nested in the sandbox's. */
int policy_set_keep_caps(cordon_policy *p, uint64_t caps, cordon_error *err);

/* A file at `path` (absolute, inside the sandbox) holding `data` (text: no NUL byte), of
 * `mode`, made in a place of cordon's own (its empty root, a tmpfs), never in a host
 * directory (bwrap's --file, --ro-bind-data; doc/bwrap.md). */
int policy_add_file(cordon_policy *p, const char *path, const char *data, unsigned mode, cordon_error *err);
/* The sandbox's host name, in its UTS namespace (bwrap's --hostname). */
int policy_set_hostname(cordon_policy *p, const char *name, cordon_error *err);
