// SPDX-License-Identifier: Apache-2.0
/* cordon — run commands in a fresh, minimal, unprivileged Linux sandbox.
 *
 * The library behind the `cordon` command line.  A harness builds a policy with the
 * setters below (each validates its input at once and reports what is wrong), then
 * runs a command under it.  Nothing is printed.
 *
 * The conventions (doc/api.md, "Conventions"), the same for every call:
 *   - success is 0; failure is -1 with the caller's cordon_error filled (never errno
 *     alone).  A call with more to say than success returns a positive value for it
 *     (cordon_proc_wait's 1: still running; cordon_check's 1: the sandbox works), and
 *     says so.  A call that makes an object returns it through an out parameter;
 *   - names are cordon_OBJECT_VERB: cordon_policy_set_X sets one value (booleans are
 *     positive: set_nested, not set_no_nested), cordon_policy_add_X adds one entry to a
 *     list (a rule, a domain, a port, an environment variable);
 *   - a limit of 0 is no limit (the policy's timeout, a command's timeout, the idle
 *     timeout, the resource limits); a wait of 0 only looks (cordon_proc_wait, as poll);
 *   - every object the library makes for the caller is released with one call named
 *     after it, cordon_X_free (NULL is fine), which also ends what only that object
 *     holds (a running process, a session made here); plain memory (a string, a JSON
 *     document) with cordon_free;
 *   - structs the caller passes in or gets filled begin with `unsigned size` (set it
 *     with the CORDON_X_INIT initializer): a later libcordon appends fields and never
 *     writes beyond the caller's size; 0 means the layout of this release;
 *   - handles are checked for NULL and for their kind; a freed handle is the caller's
 *     bug, not detected (it would mean reading freed memory).
 */
#ifndef CORDON_H
#define CORDON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h> /* not used by the API any more; kept for the callers that relied on it */

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define CORDON_API __attribute__((visibility("default")))
#else
#define CORDON_API
#endif

/* The version of this header (cordon_version() says the library's). */
#define CORDON_VERSION_MAJOR  0
#define CORDON_VERSION_MINOR  2
#define CORDON_VERSION_MICRO  0
#define CORDON_VERSION_STRING "0.2.0"
/* True when this header is at least MAJOR.MINOR.MICRO. */
#define CORDON_CHECK_VERSION(major, minor, micro)                                                             \
    (CORDON_VERSION_MAJOR > (major) || (CORDON_VERSION_MAJOR == (major) && CORDON_VERSION_MINOR > (minor)) || \
     (CORDON_VERSION_MAJOR == (major) && CORDON_VERSION_MINOR == (minor) && CORDON_VERSION_MICRO >= (micro)))

#define CORDON_EXIT_TIMEOUT  124 /* --timeout expired */
#define CORDON_EXIT_SETUP    125 /* cordon failed before the command could start */
#define CORDON_EXIT_NOEXEC   126 /* found but not executable */
#define CORDON_EXIT_NOTFOUND 127 /* command not found */

/* Where a failure happened: the `stage` of --status-json. */
typedef enum cordon_stage {
    CORDON_STAGE_NONE = 0,
    CORDON_STAGE_USAGE,      /* bad arguments to a setter or on the command line */
    CORDON_STAGE_SETTINGS,   /* reading a settings file */
    CORDON_STAGE_RESOLVE,    /* resolving rule paths on the host */
    CORDON_STAGE_PLAN,       /* compiling the mount plan */
    CORDON_STAGE_NAMESPACES, /* creating namespaces, id maps */
    CORDON_STAGE_ROOT,       /* building the new root */
    CORDON_STAGE_CONFINE,    /* capabilities, no_new_privs */
    CORDON_STAGE_EXEC,       /* executing the command */
    CORDON_STAGE_SUPERVISE,  /* waiting, signals, timeout */
    CORDON_STAGE_LIMITS,     /* resource limits: cgroups, rlimits */
    CORDON_STAGE_WORKSPACE,  /* copy-on-write workspaces: state, backends, integration */
} cordon_stage;

/* The error every failing call fills.  It may grow (fields appended at the end): `size`
 * is sizeof(cordon_error) as the caller was compiled, and the library never writes
 * beyond it; 0 (a zero-initialised struct) means this first layout.  So both
 * `cordon_error err = {0};` and `cordon_error err = CORDON_ERROR_INIT;` keep working
 * when a later libcordon appends fields. */
typedef struct cordon_error {
    unsigned size;      /* sizeof(cordon_error) of the caller, or 0 */
    cordon_stage stage; /* where it failed */
    int errnum;         /* errno of the cause, or 0; never spelled out in message */
    bool truncated;     /* message did not fit: it was cut and ends in "..." */
    char option[32];    /* the setting the error is about, by the camelCase name of its
                         * command-line option ("workspace", "chdir", "timeout",
                         * "limitMemory", ...), or "": messages name settings as the API
                         * does, and a caller adds its own names for them (the command
                         * line: "--chdir DIR").  "outerNoNested": the outer sandbox's
                         * noNested refused a nested one */
    char message[1024]; /* what went wrong and, where known, how to fix it */
} cordon_error;
/* clang-format off: an initializer on one line */
#define CORDON_ERROR_INIT            \
    {                                \
        .size = sizeof(cordon_error) \
    }
/* clang-format on */

CORDON_API const char *cordon_stage_name(cordon_stage stage);
/* The message with the errno spelled out ("...: Permission denied"), as the command line
 * prints it, into buf (always NUL-terminated when n > 0).  Returns the length of the
 * whole text, as snprintf does: a value >= n means buf was too small. */
CORDON_API int cordon_error_text(const cordon_error *err, char *buf, size_t n);

typedef enum cordon_access {
    CORDON_ACCESS_NONE = 0, /* hidden: an empty, unwritable directory or file */
    CORDON_ACCESS_READ = 1,
    CORDON_ACCESS_WRITE = 2,
} cordon_access;

typedef enum cordon_base {
    CORDON_BASE_SYSTEM = 0, /* /usr /bin /sbin /lib* /etc read-only */
    CORDON_BASE_HOST,       /* the whole host read-only */
    CORDON_BASE_EMPTY,      /* nothing but what rules add */
} cordon_base;

typedef enum cordon_network {
    CORDON_NETWORK_NONE = 0, /* own namespace, loopback only */
    CORDON_NETWORK_HOST,
    CORDON_NETWORK_PROXY, /* own namespace; out only through proxies (cordon_policy_allow_domain,
                             or the loopback proxies of the proxy variables, bridged in) */
} cordon_network;

typedef struct cordon_policy cordon_policy;

CORDON_API cordon_policy *cordon_policy_new(void);
CORDON_API void cordon_policy_free(cordon_policy *p);

/* cordon's protections on top of the rules (default on).  Off (bubblewrap's exact mode,
 * CORDON_BWRAP_EXACT=1, doc/bwrap.md): no creation control (protected names, git, missing
 * paths held), no hidden credential stores, other homes or host service sockets, no
 * seccomp filter and no Landlock; the namespaces, the view the rules describe, no
 * capabilities and no_new_privs stay.  Not with --isolation landlock. */
CORDON_API int cordon_policy_set_protections(cordon_policy *p, bool on, cordon_error *err);

/* A private, empty, writable tmpfs mounted at PATH (absolute, inside the sandbox; not "/")
 * with permissions MODE, over what the rules show there (bwrap's --tmpfs; doc/bwrap.md);
 * SIZE bytes at most (bwrap's --size), or 0 for no size of its own.  Not with
 * --isolation landlock. */
CORDON_API int cordon_policy_add_tmpfs(cordon_policy *p, const char *path, unsigned mode, unsigned long long size,
                                       cordon_error *err);

/* A symlink at PATH (absolute, inside the sandbox) pointing to TARGET (bwrap's --symlink):
 * made only inside cordon's own mounts (its root, a tmpfs), never in a host directory. */
CORDON_API int cordon_policy_add_symlink(cordon_policy *p, const char *path, const char *target, cordon_error *err);

/* Parse names used on the command line and in settings ("system", "none", ...). */
CORDON_API int cordon_base_from_string(const char *s, cordon_base *out, cordon_error *err);
CORDON_API int cordon_network_from_string(const char *s, cordon_network *out, cordon_error *err);

/* How the command is isolated (--isolation). */
typedef enum cordon_isolation {
    CORDON_ISOLATION_NAMESPACES = 0, /* new user, mount, PID, ... namespaces (default); a host
                                        without user namespaces fails the run (exit 125) */
    CORDON_ISOLATION_LANDLOCK,       /* no namespaces: the filesystem and the network by
                                        Landlock and seccomp only; weaker (doc/security.md) */
    CORDON_ISOLATION_AUTO,           /* namespaces where the host allows them, else Landlock,
                                        saying so (cordon_result.isolation_why) */
} cordon_isolation;
CORDON_API int cordon_isolation_from_string(const char *s, cordon_isolation *out, cordon_error *err);
CORDON_API const char *cordon_isolation_name(cordon_isolation i);
CORDON_API int cordon_policy_set_isolation(cordon_policy *p, cordon_isolation i, cordon_error *err);

CORDON_API int cordon_policy_set_base(cordon_policy *p, cordon_base base, cordon_error *err);
/* PATH must be absolute.  `source` names where the rule came from (e.g. "--allow"). */
CORDON_API int cordon_policy_add_path(cordon_policy *p, const char *path, cordon_access access, const char *source,
                                      cordon_error *err);
/* The workspace (writable unless read-only); default: the top of the git work tree the current
 * directory is in, else the current directory ("." is the current directory alone).  NULL: no
 * workspace at all (--no-workspace). */
CORDON_API int cordon_policy_set_workspace(cordon_policy *p, const char *dir, cordon_error *err);
CORDON_API int cordon_policy_set_data_root(cordon_policy *p, const char *dir, cordon_error *err);
CORDON_API int cordon_policy_set_read_only(cordon_policy *p, bool ro, cordon_error *err);
CORDON_API int cordon_policy_set_network(cordon_policy *p, cordon_network net, cordon_error *err);
/* NAME=VALUE in the command's environment (--env). */
CORDON_API int cordon_policy_add_env(cordon_policy *p, const char *name_eq_value, cordon_error *err);
/* The caller's NAME passed on (--keep-env). */
CORDON_API int cordon_policy_add_keep_env(cordon_policy *p, const char *name, cordon_error *err);
CORDON_API int cordon_policy_set_clear_env(cordon_policy *p, bool clear, cordon_error *err);
CORDON_API int cordon_policy_set_cwd(cordon_policy *p, const char *dir, cordon_error *err);
/* Seconds, > 0; 0 means no timeout. */
CORDON_API int cordon_policy_set_timeout(cordon_policy *p, double seconds, cordon_error *err);
CORDON_API int cordon_policy_set_timeout_string(cordon_policy *p, const char *s, cordon_error *err);
CORDON_API int cordon_policy_set_proc(cordon_policy *p, bool mount_proc, cordon_error *err);
/* Share the caller's PID namespace instead of giving the sandbox one of its own, and show
 * the caller's /proc read-only instead of a fresh one (Codex's --inherit-pid-namespace,
 * for trusted provisioning): process lookups work, and the command can see the caller's
 * processes and signal those of its uid.  What the command leaves behind is still killed
 * when it exits (cordon's supervisor is its child subreaper). */
CORDON_API int cordon_policy_set_inherit_pid_namespace(cordon_policy *p, bool inherit, cordon_error *err);
/* false: no private HOME and TMPDIR directories.  The command's HOME and TMPDIR are what
 * its environment says (cordon_policy_keep_env, cordon_policy_set_env), showing what the
 * view shows there (under CORDON_BASE_HOST the caller's home read-only, its credential
 * stores hidden); /tmp stays private unless a rule covers it.  Codex's helper mode uses
 * it: Codex's commands see the home and temporary directory its profile describes, and
 * --base host can then bind the host root whole.  Default: true. */
CORDON_API int cordon_policy_set_private_dirs(cordon_policy *p, bool private_dirs, cordon_error *err);
/* false (--no-nested): refuse sandboxes inside the sandbox: no new user namespaces, no
 * mount API (seccomp), and Landlock filesystem rules on top of the namespaces (see
 * doc/seccomp.md).  By default (true) the command may nest sandboxes, which can only
 * ever be stricter. */
CORDON_API int cordon_policy_set_nested(cordon_policy *p, bool nested, cordon_error *err);
/* Show the usual per-user tool directories of the home read-only, those that exist
 * (~/.cargo ~/.rustup ~/.pyenv ~/.nvm ~/.volta ~/go ~/.deno ~/.bun ~/.local/bin ...:
 * doc/guide-run.md); the home's credential stores in them stay hidden.  Nothing under
 * CORDON_BASE_HOST, which shows them already. */
CORDON_API int cordon_policy_set_toolchains(cordon_policy *p, bool toolchains, cordon_error *err);

/* Warnings: a rule of the caller's that changes nothing (a path that does not exist, a
 * rule overridden by another at equal length, one that adds nothing to the rule above it),
 * or a settings file's top-level key that nothing reads (cordon_policy_set_strict_settings),
 * is not an error (the run goes on) but most likely a mistake.  fn is called with one
 * message each (in the API's terms: the rule's source and path), from cordon_run*,
 * cordon_spawn and cordon_explain, in the calling thread, before they start anything; it
 * may be called from several threads at once when the policy serves several runs.  NULL
 * (the default) drops them.  The command line prints "cordon: warning: MESSAGE". */
typedef void (*cordon_warning_fn)(const char *message, void *ctx);
CORDON_API int cordon_policy_set_warning_handler(cordon_policy *p, cordon_warning_fn fn, void *ctx, cordon_error *err);

/* Keep NAME (one path component, e.g. ".vscode") read-only at the top of every writable
 * path, like .git/hooks, .cordon, .codex and .agents. */
CORDON_API int cordon_policy_add_protected(cordon_policy *p, const char *name, cordon_error *err);

/* Hide PATH wherever the view would show it, as cordon hides the credential stores of the
 * home (~/.ssh, ~/.aws, ...): an empty, unwritable directory or file in its place.  Unlike
 * cordon_policy_add_path(CORDON_ACCESS_NONE) (--deny), a rule that names PATH exactly shows
 * it after all, and a PATH that does not exist is not held (so a settings file can list
 * tokens that one run then asks for by name). */
CORDON_API int cordon_policy_add_hidden(cordon_policy *p, const char *path, cordon_error *err);

/* Resource limits on the command and everything it starts.  Applied through a cgroup of
 * the run's own when the caller has a delegated cgroup (v2; or v1 where the caller can
 * write it, e.g. root on a hybrid host), otherwise through rlimits set in the command's
 * process before exec (per process, weaker: see README, "Resource limits"). */
typedef enum cordon_limit {
    CORDON_LIMIT_PIDS = 0, /* processes and threads alive at once */
    CORDON_LIMIT_MEMORY,   /* bytes */
    CORDON_LIMIT_CPU,      /* CPU seconds in all */
} cordon_limit;
/* value 0 removes the limit. */
CORDON_API int cordon_policy_set_limit(cordon_policy *p, cordon_limit which, unsigned long long value,
                                       cordon_error *err);
/* As on the command line: "50" (pids), "512M" or "2G" (memory: K, M, G, T are powers of
 * 1024; a plain number is bytes), "10" (CPU seconds). */
CORDON_API int cordon_policy_set_limit_string(cordon_policy *p, cordon_limit which, const char *s, cordon_error *err);

/* Hide every match of GLOB like a --deny (see doc/cordon.1, "DENY GLOBS"): an absolute
 * pattern with `*`, `?`, `[...]` and `**`, expanded on the host at launch under its static
 * directory prefix.  A pattern with no static prefix (whose first component already holds a
 * glob character) is refused at once.  `source` names the rule in messages (default "--deny-glob"). */
CORDON_API int cordon_policy_add_deny_glob(cordon_policy *p, const char *glob, const char *source, cordon_error *err);
/* How many levels below its static prefix a deny glob looks: 1 .. CORDON_GLOB_MAX_DEPTH,
 * or -1 for unlimited (the default). */
#define CORDON_GLOB_MAX_DEPTH 4096
CORDON_API int cordon_policy_set_glob_depth(cordon_policy *p, int depth, cordon_error *err);

/* The network through proxies (README, "Network"; each setter validates at once).
 * --allow-domain: the filtering proxy lets the command reach DOMAIN ("example.com"; "*.example.com"
 * for its subdomains; or an IP address), and CORDON_NETWORK_PROXY becomes the default. */
CORDON_API int cordon_policy_add_allowed_domain(cordon_policy *p, const char *domain, cordon_error *err);
/* --deny-domain: refused even where an allow matches (checked first). */
CORDON_API int cordon_policy_add_denied_domain(cordon_policy *p, const char *domain, cordon_error *err);
/* --add-host NAME=ADDRESS: the filtering proxy resolves NAME to ADDRESS (an IP literal)
 * without asking DNS, as an /etc/hosts line would (internal names, tests). */
CORDON_API int cordon_policy_add_host(cordon_policy *p, const char *name_eq_address, cordon_error *err);
/* --dns-server ADDRESS[:PORT]: the filtering proxy asks this name server (up to three, in
 * order; IPv6 as [ADDRESS]:PORT; default port 53) instead of those of /etc/resolv.conf. */
CORDON_API int cordon_policy_add_dns_server(cordon_policy *p, const char *address, cordon_error *err);
/* --allow-unix-sockets: with CORDON_NETWORK_PROXY, let the command create AF_UNIX sockets
 * (by default only socket pairs, and only AF_INET/AF_INET6 sockets otherwise). */
CORDON_API int cordon_policy_set_allow_unix_sockets(cordon_policy *p, bool allow, cordon_error *err);
/* --allow-socket PATH: the host's pathname Unix socket at PATH (absolute) may be connected
 * to, and sent to, from inside.  Every other pathname socket the sandbox did not bind
 * itself is refused (EACCES), in every network mode. */
CORDON_API int cordon_policy_add_allowed_socket(cordon_policy *p, const char *path, cordon_error *err);
/* --forward-port PORT: the host's 127.0.0.1:PORT reachable inside as 127.0.0.1:PORT. */
CORDON_API int cordon_policy_add_forwarded_port(cordon_policy *p, unsigned port, cordon_error *err);
/* --publish-port PORT, 127.0.0.1:HOSTPORT:PORT: what the command listens on at 127.0.0.1:PORT inside,
 * reachable on the host's 127.0.0.1:HOSTPORT (host_port 0: the same port). */
CORDON_API int cordon_policy_add_published_port(cordon_policy *p, unsigned port, unsigned host_port, cordon_error *err);
/* The same two from their command-line spelling: "5432"; for publish also "3000:3000" and
 * Docker's order with the host's address, "127.0.0.1:8000:3000" (the host's 8000 to the
 * command's 3000).  A bare "A:B" of two different ports is refused (CORDON_STAGE_USAGE,
 * option "publishPort"): Docker reads it HOST:CONTAINER, cordon read it PORT:HOSTPORT. */
CORDON_API int cordon_policy_add_forwarded_port_string(cordon_policy *p, const char *spec, cordon_error *err);
CORDON_API int cordon_policy_add_published_port_string(cordon_policy *p, const char *spec, cordon_error *err);
/* --network-log FILE: every proxy decision and refused connection as a JSON line,
 * appended to FILE (created 0600; a symlink there is refused). */
CORDON_API int cordon_policy_set_network_log(cordon_policy *p, const char *file, cordon_error *err);

/* Read a settings file (JSON: README, "Settings file").  Rules add to the policy; scalar
 * values apply unless a setter already chose them explicitly. */
CORDON_API int cordon_policy_load_settings(cordon_policy *p, const char *file, cordon_error *err);
/* Refuse a settings file with a top-level key that neither cordon ("sandbox",
 * "orchestration") nor the harnesses whose settings files it shares (pi's, Claude Code's)
 * know, instead of warning about it (a misspelt "sandbox" drops every rule in it): a file
 * read after this fails at once (CORDON_STAGE_SETTINGS, option "strictSettings"), and so
 * does this call when a file read before had one.  Settings: "strictSettings": true.
 * Once on, nothing turns it off (false is a no-op).  Without it each such key is a
 * warning (cordon_policy_set_warning_handler) naming it and the nearest known key. */
CORDON_API int cordon_policy_set_strict_settings(cordon_policy *p, bool strict, cordon_error *err);
/* The settings' "sandbox.enabled": 1, 0, or -1 when no settings file said. */
CORDON_API int cordon_policy_settings_enabled(const cordon_policy *p);
/* The settings' "orchestration.sandboxed" (a harness confines its subagents, doc/api.md):
 * 1, 0, or -1 when no settings file said.  Top-level keys other than "sandbox" and
 * "orchestration" are a harness's own settings (pi's, Claude Code's: accepted as they are)
 * or a warning (cordon_policy_set_strict_settings). */
CORDON_API int cordon_policy_settings_sandboxed(const cordon_policy *p);
/* What the settings say for what the caller does rather than the sandbox: "statusJson"
 * (where to write the result, as --status-json: cordon_status_file_open) or NULL, and
 * "tty" (run on a terminal of its own, CORDON_SPAWN_PTY): 1, 0, or -1 when not said.  A
 * setter or flag of the caller's wins over them. */
CORDON_API const char *cordon_policy_settings_status_json(const cordon_policy *p);
CORDON_API int cordon_policy_settings_tty(const cordon_policy *p);

/* The resolved rules and the ordered mount plan, as text (flags 0) or JSON, into *text
 * (free it with cordon_free); runs nothing.  VERBOSE lists every call the seccomp filter
 * refuses (else their number); JSON makes one JSON object instead of text: "policy"
 * (base, network, workspace, cwd, home and what it is, tmpdir, timeout, limits ...),
 * "rules" (each with access, path, source, line, overridden), "globs", "plan" (each
 * operation with kind, dest, src, read_only, why, in order), "warnings", "environment",
 * "command", "home_layer" (under --base host: whether the kernel overlay works here),
 * "confinement" (seccomp's refused calls, Landlock's rules) and "limits_mechanism". */
#define CORDON_EXPLAIN_VERBOSE 0x1u
#define CORDON_EXPLAIN_JSON    0x2u
CORDON_API int cordon_explain(const cordon_policy *p, char *const argv[], unsigned flags, char **text,
                              cordon_error *err);

/* How a run ended.  Growable like cordon_error: `size` is sizeof(cordon_result) as the
 * caller was compiled (CORDON_RESULT_INIT), 0 for this release's layout; the library
 * never writes beyond it.  New fields go at the end (python/cordon/_native.py mirrors the
 * layout, and keeps working with its own size until it learns them).  The two lists of
 * refusals are the library's allocations: release them with cordon_result_free once
 * read (a result filled again is freed first by the caller, or they leak). */
typedef struct cordon_result {
    unsigned size;   /* sizeof(cordon_result) of the caller, or 0 */
    int exit_code;   /* what cordon exits with: the command's code, 128+N, 124, 125... */
    int status_code; /* the command's own exit code, or -1 when it did not exit */
    int signal;      /* the signal that killed the command, or 0 */
    bool timed_out;
    bool started; /* the command was executed */
    /* How the resource limits were applied: "cgroup2", "cgroup1", "rlimit", or NULL when
     * none was set; and the limits known to have been reached (1u << CORDON_LIMIT_*): a
     * refused fork or an OOM kill in the run's cgroup, or the CPU time used up. */
    const char *limits;
    unsigned limits_hit;
    /* The isolation the run used (never AUTO), and when --isolation auto chose Landlock,
     * why the namespaces could not be used (a static string), else NULL. */
    cordon_isolation isolation;
    const char *isolation_why;
    /* The creation control: how many of the command's calls were refused (creating a
     * protected name, a new git repository, writing git configuration or hooks...), and
     * the first n_refusals of them as "OPERATION PATH: WHY" strings, one after the other,
     * each ending in a NUL (NULL when n_refusals is 0; cordon_result_free). */
    unsigned long refused;
    unsigned n_refusals;
    char *refusals;
    double wall_seconds; /* from the start of the sandbox to the end of its last process */
    /* With --network proxy, --forward-port or --publish-port: the connections and requests
     * cordon let through, those it refused (a domain not allowed, a refused address, a bad
     * request) and those that failed (the destination could not be resolved or reached), as
     * --network-log records them; network_counted says that there was a network to count. */
    bool network_counted;
    unsigned network_allowed, network_refused, network_failed;
    /* The distinct hosts cordon's proxy refused by its rules (the command only saw a 403
     * or a SOCKS refusal), once each, the first n_network_refusals of them as
     * "HOST:PORT (WHY); to allow it: FLAG" strings ("(WHY)" alone when a --deny-domain
     * refused it), one after the other, each ending in a NUL (NULL when there are none;
     * cordon_result_free); network_refusals_more: the distinct hosts refused beyond them. */
    unsigned n_network_refusals, network_refusals_more;
    char *network_refusals;
    /* A detached session command (cordon_session_cmd.detach): its pid in the session's
     * PID namespace, once it started; else 0. */
    int pid;
    /* When the kernel refused the sandbox a /proc of its own (a container that masks
     * parts of /proc, as Docker, Podman and Kubernetes do by default): what the sandbox
     * has instead, a static sentence (the container's /proc, read-only with its masks,
     * and what that shows); NULL when it had its own /proc, or none it asked for. */
    const char *proc_kept;
} cordon_result;
/* clang-format off: an initializer on one line */
#define CORDON_RESULT_INIT            \
    {                                 \
        .size = sizeof(cordon_result) \
    }
/* clang-format on */
/* Free the lists the library allocated in res (refusals, network_refusals) and set them
 * to NULL; the rest of res stays.  NULL is fine. */
CORDON_API void cordon_result_free(cordon_result *res);

/* ---- running commands ------------------------------------------------------------
 *
 * What these calls do to the calling process, and nothing else:
 *   - each run is one child process, the sandbox's PID 1, cloned with no exit signal and
 *     a pidfd and reaped through that pidfd by cordon_proc_wait/cordon_proc_free (or
 *     cordon_run*): the caller's SIGCHLD handler never runs for it, its waitpid(-1) never
 *     sees it (nor does SIGCHLD set to SIG_IGN reap it), and none is left as a zombie
 *     once cordon_proc_free or cordon_run* returns.  A run with cgroup limits also has a
 *     short-lived janitor child, reaped the same way;
 *   - no signal handler, disposition or process signal mask is changed and no pending
 *     signal is consumed.  The calling thread blocks all signals for the few
 *     microseconds of the clone itself (as posix_spawn does) and restores its mask; a
 *     signal arriving then is delivered right after, not lost.  No SIGPIPE is raised by
 *     cordon's own writes (the caller's writes to a stdin pipe are the caller's);
 *   - no thread is started (but deny globs are walked by short-lived threads that are
 *     joined before the call returns); no global state is kept;
 *   - every descriptor handed to the caller is close-on-exec, and the sandbox's side
 *     never holds descriptors of other runs or of the caller;
 *   - the sandbox dies with the caller's process (with the spawning thread too when
 *     that is the main thread: the kernel's parent-death signal).
 * Signals sent to the caller are not forwarded to the sandbox: that is the caller's
 * choice, through cordon_proc_kill (the command line forwards SIGINT, SIGTERM, ...).
 * The policy's timeout, limits and environment apply to every form.  Calls retry EINTR
 * themselves.  Independent policies and processes may be used from different threads
 * at once; one cordon_proc is not to be waited for from two threads at once (killing it
 * from any thread or signal handler is fine). */

/* Run argv[0] (searched in the sandbox's PATH) to completion, with the caller's
 * stdin, stdout and stderr.  Returns 0 when the command ran (whatever its status,
 * see result), or -1 with err filled when setup failed (result->exit_code is 125,
 * or 126/127 when the command could not be executed). */
CORDON_API int cordon_run(const cordon_policy *p, char *const argv[], cordon_result *result, cordon_error *err);

/* Called with output as it arrives; returning non-zero stops the run (the whole sandbox
 * is killed; the result then says SIGKILL). */
typedef int (*cordon_output_fn)(const char *data, size_t len, void *ctx);
/* Run to completion with stdout and stderr merged and delivered to fn as they arrive
 * (stdin is /dev/null).  Returns as cordon_run does. */
CORDON_API int cordon_run_output(const cordon_policy *p, char *const argv[], cordon_output_fn fn, void *ctx,
                                 cordon_result *result, cordon_error *err);

/* Start a sandboxed child and return at once (once the sandbox's PID 1 exists: a failure
 * of setup after that shows in cordon_proc_wait's result). */
#define CORDON_SPAWN_STDIN_PIPE    0x1u  /* else stdin is /dev/null */
#define CORDON_SPAWN_STDOUT_PIPE   0x2u  /* else inherited */
#define CORDON_SPAWN_STDERR_PIPE   0x4u  /* else inherited */
#define CORDON_SPAWN_MERGE_STDERR  0x8u  /* stderr into the stdout pipe (needs STDOUT_PIPE) */
#define CORDON_SPAWN_STDIN_INHERIT 0x10u /* stdin is the caller's own (not with STDIN_PIPE) */
/* A terminal: the command's stdin, stdout and stderr (stderr: unless STDERR_PIPE) are a
 * pseudo-terminal of the sandbox's own devpts, its controlling terminal (the command is
 * the foreground process group of a session that the sandbox's PID 1, or in a session the
 * command's shepherd, leads: job control, ^C and ^\ work inside, and ^Z stops the command
 * itself; cordon_proc_kill SIGCONT continues it), whose master is cordon_proc_pty().  Not
 * with STDIN_PIPE, STDIN_INHERIT, STDOUT_PIPE or MERGE_STDERR.  The terminal starts with
 * the settings and window size of the first of the caller's 0, 1, 2 that is a terminal,
 * else the kernel's defaults and 24x80; set its size with ioctl(master, TIOCSWINSZ) at any
 * time (the command gets SIGWINCH), signal its foreground process group with
 * ioctl(master, TIOCSIG, sig) (SIGINT, SIGQUIT or SIGTSTP: the kernel sends no other so).
 * cordon_spawn returns once the sandbox has made the terminal (its root is built).  The
 * master reads EIO once every process of the sandbox has closed the terminal; TIOCSTI and
 * TIOCLINUX stay refused inside.  The caller's own terminal never reaches the sandbox. */
#define CORDON_SPAWN_PTY 0x20u
typedef struct cordon_proc cordon_proc;
/* Validates everything (argv, flags, the policy, the plan) before anything is started;
 * -1 with err filled, and nothing started, on failure. */
CORDON_API int cordon_spawn(const cordon_policy *p, char *const argv[], unsigned flags, cordon_proc **out,
                            cordon_error *err);

/* What one command may choose for itself without a policy of its own: the same for
 * cordon_spawn_cmd and cordon_session_spawn_cmd.  Growable like cordon_error: `size` is
 * sizeof(cordon_cmd) of the caller (CORDON_CMD_INIT), 0 for this release's layout; every
 * field zero is "as the policy (or the session) says". */
typedef struct cordon_cmd {
    unsigned size;
    const char *cwd;  /* the working directory inside; NULL: the policy's (the session's) */
    char *const *env; /* NAME=VALUE entries set over the policy's (session's) environment
                         * (NULL-terminated), or NULL */
    double timeout;   /* with has_timeout: seconds, 0 for none */
    bool keep;        /* sessions only: what the command leaves running stays in the session */
    bool tty;         /* the same as the spawn flag CORDON_SPAWN_PTY (the one terminal
                         * mechanism: the master is cordon_proc_pty()) */
    bool detach;      /* sessions only; with keep, without a terminal: cordon_proc_wait
                         * returns as soon as the command has started (exit code 0,
                         * `started`, its `pid`), and the command stays in the session, its
                         * streams those of the spawn (cordon_proc_free does not kill it); a
                         * command that could not start is reported as usual */
    bool has_timeout; /* timeout is this command's; false: the policy's (the session's).
                         * A caller of the 0.1 layout, whose size ends before this field,
                         * keeps 0.1's meaning: timeout 0 the policy's, < 0 none */
} cordon_cmd;
/* clang-format off: an initializer on one line */
#define CORDON_CMD_INIT            \
    {                              \
        .size = sizeof(cordon_cmd) \
    }
/* clang-format on */
/* cordon_spawn with a command's own settings (cmd may be NULL): the policy is not
 * changed, so one policy serves calls with different directories, environments and
 * timeouts at once.  keep and detach are refused (CORDON_STAGE_USAGE): they are a
 * session's. */
CORDON_API int cordon_spawn_cmd(const cordon_policy *p, char *const argv[], unsigned flags, const cordon_cmd *cmd,
                                cordon_proc **out, cordon_error *err);
/* The pipes' descriptors (close-on-exec, owned by c: closed by cordon_proc_free), or -1
 * when not piped. */
CORDON_API int cordon_proc_stdin(const cordon_proc *c);
CORDON_API int cordon_proc_stdout(const cordon_proc *c);
CORDON_API int cordon_proc_stderr(const cordon_proc *c);
/* CORDON_SPAWN_PTY (or cordon_cmd.tty, in a session too): the terminal's master (read the
 * command's output from it, write its input to it; close-on-exec, blocking as the pipes
 * are, owned by c), or -1 without the flag, or when the setup failed before the terminal
 * was made (cordon_proc_wait says why). */
CORDON_API int cordon_proc_pty(const cordon_proc *c);
/* Close the stdin pipe (the command sees EOF).  -1 with err (errnum EBADF) when there
 * is none (any more). */
CORDON_API int cordon_proc_close_stdin(cordon_proc *c, cordon_error *err);
/* Readable (poll POLLIN) once the whole sandbox has ended; a pidfd of its PID 1, owned by c. */
CORDON_API int cordon_proc_exit_fd(const cordon_proc *c);
/* Async-signal-safe and thread-safe.  SIGKILL ends the whole sandbox at once; SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH and SIGCONT are delivered to the
 * command (SIGCONT to its whole process group, as fg continues a job); 0 tells whether the sandbox still runs.  -1 with err (which may be NULL;
 * filled without formatting, so from a signal handler too): errnum EINVAL (another
 * signal, or c is not a process), ESRCH (it has ended). */
CORDON_API int cordon_proc_kill(cordon_proc *c, int sig, cordon_error *err);
/* Wait up to timeout_ms (-1: as long as it takes; 0: just look) for the command and
 * every process it left to end.  0: it ended, and *res says how (when it could not
 * start, res->started is false and err says at which stage and why); 1: still running;
 * -1: bad arguments or waiting failed (err).  Once ended, every later call returns 0
 * and the same result.  res and err may be NULL. */
CORDON_API int cordon_proc_wait(cordon_proc *c, int timeout_ms, cordon_result *res, cordon_error *err);
/* Kill what still runs, reap it, close the descriptors, free c.  NULL is fine. */
CORDON_API void cordon_proc_free(cordon_proc *c);

/* ---- sessions (doc/api.md, "Sessions") -------------------------------------------
 *
 * A session is one sandbox (one view, one network namespace, one set of limits) built
 * once, that commands are started in, each in a few hundred microseconds.  Each command
 * behaves as a cordon_spawn of its own: its exit status, its output, its timeout, and
 * what it leaves running is killed when it exits -- unless `keep`: then it stays in the
 * session until the session ends.  Commands of one session see each other's processes
 * and files (that is the point); they cannot see or reach another session.
 *
 * What these calls do to the calling process: cordon_session_new starts one child (the
 * session's PID 1), as cordon_spawn does (no SIGCHLD, reaped through a pidfd by
 * cordon_session_free); a published session (cordon_session_listen) also has a small
 * janitor child that removes its socket should the process die.  The session dies with
 * the calling process (`cordon session start` serves it from a daemon of its own, which
 * is how the command line's session outlives the process that started it). */
typedef struct cordon_session cordon_session;

/* Build the sandbox for `p` and return once it can start commands.  The policy's
 * timeout is each command's (cordon_session_cmd.timeout overrides it); its limits are
 * the session's as a whole (cgroups) or each process's (rlimits); HOME, TMPDIR and /tmp
 * are private to the session and shared by its commands, and so is its network (its
 * proxy, forwarded and published ports).  Under CORDON_ISOLATION_LANDLOCK (or _AUTO
 * where user namespaces are refused) there are no namespaces: a thread of the calling
 * process supervises the session, and each command runs as a cordon_spawn under Landlock
 * would run it, with the rules prepared here; HOME and TMPDIR are the session's
 * directories on the host, and there is no /tmp, PID or network namespace of its own
 * (doc/guide-sessions.md).  -1 with err filled: nothing is left. */
CORDON_API int cordon_session_new(const cordon_policy *p, cordon_session **out, cordon_error *err);

/* Start argv in the session, as cordon_spawn does (the same flags and cordon_proc;
 * cordon_proc_exit_fd is readable once the command and what it left have ended, and
 * cordon_proc_kill's SIGKILL takes the command's whole process tree, nothing else of the
 * session).  A command whose session has ended or whose policy can no longer be met
 * (its workspace deleted on the host, say) fails to start: cordon_proc_wait then says
 * so (exit code 125, stage and message), or this call does. */
CORDON_API int cordon_session_spawn(cordon_session *s, char *const argv[], unsigned flags, cordon_proc **out,
                                    cordon_error *err);
/* The same with a command's own settings (cordon_cmd; cmd may be NULL).  A terminal
 * (CORDON_SPAWN_PTY or cmd->tty): its master is cordon_proc_pty(), and also
 * cordon_proc_stdin() and cordon_proc_stdout(), as in 0.1. */
CORDON_API int cordon_session_spawn_cmd(cordon_session *s, char *const argv[], unsigned flags, const cordon_cmd *cmd,
                                        cordon_proc **out, cordon_error *err);
/* A session made here: end it, everything in it, once `seconds` have passed with no
 * command running (none started, none waiting to start; a detached command and what a
 * kept one left running do not count), counted from now or from the end of the last
 * command; 0 (the default): never.  -1 with err when the session has ended already. */
CORDON_API int cordon_session_set_idle_timeout(cordon_session *s, double seconds, cordon_error *err);
/* Release the handle and what only it holds: a session made here is held by its handle
 * alone, so everything in it ends (every process, mount and namespace; a published
 * socket) and this waits until it is gone, as cordon_proc_free ends a running process;
 * one from cordon_session_open is held by the process that serves it, so only the
 * connection is closed (the session goes on; cordon_session_stop ends it).  NULL is fine. */
CORDON_API void cordon_session_free(cordon_session *s);

/* Publishing a session to this user's other processes (`cordon session`): sessions
 * live in a directory of the user's own, $XDG_RUNTIME_DIR/cordon/sessions, else
 * /run/user/UID/cordon/sessions, else for root /run/cordon/sessions, else
 * /tmp/cordon-UID/sessions (made 0700, and refused unless it is the user's own).
 * cordon_session_dir() writes that directory into buf (-1 with err when it cannot be
 * made or is not safe). */
CORDON_API int cordon_session_dir(char *buf, size_t n, cordon_error *err);
/* Publish s under `name` ([A-Za-z0-9._-], 1 to 64 characters, not starting with '.'):
 * a socket in the directory above (mode 0600), that only this user's processes outside
 * any sandbox can use (SO_PEERCRED, and proofs sent with each request).  The name is
 * refused while a live session holds it. */
CORDON_API int cordon_session_listen(cordon_session *s, const char *name, cordon_error *err);
/* Serve the published session: hand each command that arrives to it, answer
 * cordon_session_list and cordon_session_stop, until one of: a stop request (returns 0),
 * watch_fd becomes readable (a pidfd of the process whose life the session follows;
 * -1: none; returns 1), the session ends by itself (2).  -1 with err on failure.  The
 * caller then calls cordon_session_free. */
CORDON_API int cordon_session_serve(cordon_session *s, int watch_fd, cordon_error *err);
/* A published session of this user, by name (or by the path of its socket, when the
 * name holds a '/'), to start commands in with cordon_session_spawn*.  -1 with err when
 * there is none; one whose holder died is found out (and its socket removed) by the
 * first spawn, which then fails (exit code 125, "not running any more"). */
CORDON_API int cordon_session_open(const char *name, cordon_session **out, cordon_error *err);
/* Stop the published session `name` and return once everything in it is gone. */
CORDON_API int cordon_session_stop(const char *name, cordon_error *err);
/* This user's published sessions as JSON, {"dir": D, "sessions": [{"name", "pid",
 * "started"}]} (the holder's pid, the start time in seconds since the epoch), into
 * *json (free it with cordon_free).  Stale sockets are removed. */
CORDON_API int cordon_session_list(char **json, cordon_error *err);

/* What this host supports and what the default sandbox needs (`cordon check`): a JSON
 * document, {"default_sandbox": bool, "error": why not or null, "checks": {NAME: {"ok",
 * "required", "detail", "fix", "title"}}} (README, "Where the kernel refuses"), into
 * *json, to be freed with cordon_free().  Probes that could hang run in children
 * (no SIGCHLD, reaped) killed after 500 ms; then `true` runs in the default sandbox.
 * Returns 1 when the default sandbox works here, 0 when not, -1 (err) when the check
 * itself failed. */
CORDON_API int cordon_check(char **json, cordon_error *err);
/* Free memory the library allocated for the caller (a string, a JSON document). */
CORDON_API void cordon_free(void *p);

/* The --status-json document, in two steps so that a file that cannot be written fails
 * before anything runs, and nothing the command does can redirect it.  _open, before the
 * run: opens FILE's directory (as the path is then), makes a file in it and reserves the
 * space the document needs; -1 with err filled when that fails (--status-json: exit
 * 125, nothing runs).  _write, after: the document (result, and setup_err when setup
 * failed) goes into that file, which then replaces FILE by a rename in that same
 * directory: whatever the command put at FILE meanwhile (a symlink, a file) is replaced,
 * never written through or followed, and a directory of the path renamed or replaced by
 * a link does not move the document.  When writing fails, no document is left at FILE
 * (not an older one either).  _free frees f (NULL is fine). */
typedef struct cordon_status_file cordon_status_file;
CORDON_API int cordon_status_file_open(const char *file, cordon_status_file **out, cordon_error *err);
CORDON_API int cordon_status_file_write(cordon_status_file *f, const cordon_result *result,
                                        const cordon_error *setup_err, cordon_error *err);
CORDON_API void cordon_status_file_free(cordon_status_file *f);
/* Both steps at once. */
CORDON_API int cordon_write_status_json(const char *file, const cordon_result *result, const cordon_error *setup_err,
                                        cordon_error *err);

CORDON_API const char *cordon_version(void);

/* A file name as git prints it, safe to write to a terminal: unchanged when it is printable
 * UTF-8 without '"' or '\\', else inside double quotes with C escapes ("\033", "\n",
 * "\t", "\\"...).  For names a sandboxed command chose (cordon_workspace_integration's paths, the
 * refusals of cordon_result): written raw, an ESC or a CR in one could erase a line of the
 * user's terminal and print another.  A new string: free it with cordon_free. */
CORDON_API char *cordon_quote_path(const char *name);

/* ---- Codex compatibility (doc/codex.md) -----------------------------------------------
 * cordon as Codex's Linux sandbox helper: the command line of `codex-linux-sandbox`
 * (--sandbox-policy-cwd, --permission-profile, ...) mapped onto a cordon policy.  A
 * program that embeds libcordon dispatches on its name as the cordon binary does:
 *
 *     int main(int argc, char **argv) {
 *         if (cordon_codex_is_helper(argv[0]))
 *             return cordon_codex_main(argc, argv);
 *         ...
 *     }
 */
/* Is argv0's base name "codex-linux-sandbox"? */
CORDON_API bool cordon_codex_is_helper(const char *argv0);
/* Unlike the rest of the library this is a main(): it parses argv as the helper does,
 * runs the command, prints its diagnostics ("cordon: ...") on stderr and returns the exit
 * status to exit with (the command's own; 2 for a malformed command line or profile, 1
 * when the sandbox cannot be set up).  Where the profile asks for no sandbox at all (the
 * whole disk writable and the network enabled) it execs the command in place, as the
 * helper does.  Call it last: it leaves the sandbox's exited PID 1 to the process's exit. */
CORDON_API int cordon_codex_main(int argc, char *const argv[]);

/* cordon as bubblewrap: bwrap's command line (bubblewrap 0.8-0.11's manual) mapped onto a
 * cordon policy, with cordon's protections on top (doc/bwrap.md).  Dispatched on the
 * name as cordon_codex_is_helper() is: */
/* Is argv0's base name "bwrap"? */
CORDON_API bool cordon_bwrap_is_name(const char *argv0);
/* A main(): parses argv as bwrap does (argv[0] is the program's name), runs the command,
 * prints its diagnostics ("bwrap: ...") on stderr and returns the exit status to exit
 * with: the command's own (128+N for a signal), 1 when the command line is malformed or
 * asks for what cordon refuses, or the sandbox cannot be set up. */
CORDON_API int cordon_bwrap_main(int argc, char *const argv[]);

/* ===================================================================================
 * Copy-on-write workspaces (`cordon workspace`; doc/api.md, "Workspaces")
 *
 * A workspace is a writable view of a source directory whose changes land in a private
 * layer; the source is never written until cordon_workspace_integrate().  Its state lives
 * under a root directory (NULL: $XDG_STATE_HOME/cordon/workspaces), one directory per
 * workspace.  Every call takes the workspace's lock as it needs; two workspaces (or two
 * handles of one) may be used from different threads and processes at once.
 * =================================================================================== */

typedef enum cordon_backend {
    CORDON_BACKEND_AUTO = 0, /* kernel, then fuse, then copy: the first that works is kept */
    CORDON_BACKEND_KERNEL,   /* kernel overlayfs, mounted inside each run's own sandbox */
    CORDON_BACKEND_FUSE,     /* fuse-overlayfs, mounted on the host under the state directory */
    CORDON_BACKEND_COPY,     /* a copy (reflink or copy_file_range where the file system can) */
    CORDON_BACKEND_WORKTREE, /* a git worktree on branch cordon/NAME (git sources only) */
    CORDON_BACKEND_NONE,     /* the source itself, no isolation */
} cordon_backend;

/* "auto", "kernel", "fuse", "copy", "worktree", "none" */
CORDON_API int cordon_backend_from_string(const char *s, cordon_backend *out, cordon_error *err);
CORDON_API const char *cordon_backend_name(cordon_backend b);
/* A settings file's "orchestration.isolation" ("overlayfs" -> AUTO, "worktree", "none"):
 * 1 with *out set when the file says, 0 when it does not, -1 on error (file, line, key). */
CORDON_API int cordon_settings_workspace_backend(const char *file, cordon_backend *out, cordon_error *err);

typedef struct cordon_workspace cordon_workspace;

/* NAME: 1-64 of [A-Za-z0-9._-], starting with a letter or digit.  SOURCE: an existing
 * directory.  AUTO tries the backends in order; the one that works is recorded and used by
 * every later call (cordon_workspace_notes() says why others were not). */
CORDON_API int cordon_workspace_create(const char *root, const char *name, const char *source, cordon_backend backend,
                                       cordon_workspace **out, cordon_error *err);
CORDON_API int cordon_workspace_open(const char *root, const char *name, cordon_workspace **out, cordon_error *err);
CORDON_API void cordon_workspace_free(cordon_workspace *ws);
CORDON_API const char *cordon_workspace_name(const cordon_workspace *ws);
CORDON_API const char *cordon_workspace_source(const cordon_workspace *ws);
CORDON_API cordon_backend cordon_workspace_backend(const cordon_workspace *ws);
/* The workspace's state directory. */
CORDON_API const char *cordon_workspace_dir(const cordon_workspace *ws);
/* Where the view is on the host: fuse's merged mount, the copy, the worktree, the source
 * (none); NULL for the kernel backend, whose view exists only inside its runs. */
CORDON_API const char *cordon_workspace_view(const cordon_workspace *ws);
/* After create with AUTO: why the backends before the chosen one did not work; or NULL. */
CORDON_API const char *cordon_workspace_notes(const cordon_workspace *ws);

/* Run argv in the workspace: as cordon_run() with the policy p, except that the
 * workspace is the view, shown at the source's path, and the working directory is the
 * policy's, else the current directory when it lies in the source, else the source. */
CORDON_API int cordon_workspace_run(cordon_workspace *ws, const cordon_policy *p, char *const argv[],
                                    cordon_result *result, cordon_error *err);

/* The workspace's changes against the source as it is now (renames are D + A; `.git` is
 * never part of them), sorted by path. */
typedef struct cordon_workspace_change {
    char status; /* 'A' added, 'M' modified, 'D' deleted */
    char *path;  /* relative to the source */
} cordon_workspace_change;
typedef struct cordon_workspace_change_list {
    cordon_workspace_change *v;
    size_t n;
} cordon_workspace_change_list;
CORDON_API int cordon_workspace_changes(cordon_workspace *ws, cordon_workspace_change_list *out, cordon_error *err);
CORDON_API void cordon_workspace_change_list_free(cordon_workspace_change_list *c);
#define CORDON_WORKSPACE_DIFF_NAME_STATUS 0x1u /* "M\tpath" lines instead of a unified diff */
/* A git-style unified diff (git apply takes it) of the changes, into *text (free it with
 * cordon_free). */
CORDON_API int cordon_workspace_diff(cordon_workspace *ws, unsigned flags, char **text, cordon_error *err);

/* What an integration did.  Growable: `size` as cordon_result's (CORDON_WORKSPACE_INTEGRATION_INIT). */
typedef struct cordon_workspace_integration {
    unsigned size;
    size_t added, modified, deleted;
    bool committed;                         /* a git source: one commit was made */
    char commit[65];                        /* its id */
    char branch[256];                       /* the branch it is on */
    bool recovered;                         /* an integration that was interrupted was completed first */
    cordon_workspace_change_list conflicts; /* worktree: the paths a merge could not take
                                               ('C'); the other backends: the source's files
                                               changed since the workspace took them and not
                                               committed, that the integration refused to
                                               overwrite (or, with
                                               CORDON_WORKSPACE_INTEGRATE_FORCE, overwrote) ('U') */
    cordon_workspace_change_list skipped;   /* changes never integrated (protected names, special files) */
} cordon_workspace_integration;
/* clang-format off: an initializer on one line */
#define CORDON_WORKSPACE_INTEGRATION_INIT            \
    {                                                \
        .size = sizeof(cordon_workspace_integration) \
    }
/* clang-format on */
/* Write the changes into the source (the workspace's version wins); for a git source also
 * exactly one commit on its current branch (none for no change).  MESSAGE may be NULL.
 * 0 done, 1 conflicts (worktree: nothing changed), -1 error.  Free res with
 * cordon_workspace_integration_free().
 *
 * Before anything is written, the source's files that the integration would overwrite or
 * delete are compared with the source as the workspace took it (its creation, then the
 * end of the last integration): a file changed there since (its ctime) whose version is
 * not HEAD's own (a git source) or at all (another source) is somebody's unsaved work.
 * Without FORCE the integration is refused (-1, nothing written, stage WORKSPACE, option
 * "force", res->conflicts names them); with FORCE their versions are first copied into
 * the workspace's directory (cordon_workspace_saved(), until the workspace is removed),
 * then overwritten.  The worktree backend's merge refuses on its own to touch uncommitted
 * changes in its way; FORCE does not change that. */
#define CORDON_WORKSPACE_INTEGRATE_FORCE 0x1u
CORDON_API int cordon_workspace_integrate(cordon_workspace *ws, const char *message, unsigned flags,
                                          cordon_workspace_integration *res, cordon_error *err);
/* After an integration with CORDON_WORKSPACE_INTEGRATE_FORCE that overwrote files of the
 * source's: the directory holding their versions as they were (their paths below it),
 * else NULL. */
CORDON_API const char *cordon_workspace_saved(const cordon_workspace *ws);
CORDON_API void cordon_workspace_integration_free(cordon_workspace_integration *res);

/* Re-establish the recorded backend (fuse: mount again after a reboot; all: finish an
 * interrupted integration); never re-copies. */
CORDON_API int cordon_workspace_restore(cordon_workspace *ws, cordon_error *err);

/* Growable: `size` as cordon_result's (CORDON_WORKSPACE_STATE_INIT). */
typedef struct cordon_workspace_state {
    unsigned size;
    bool ready;       /* usable as it is */
    bool mounted;     /* fuse: the merged view is mounted */
    bool pending;     /* an integration was interrupted (the next call completes it) */
    bool in_use;      /* a run is using it */
    char detail[512]; /* what is wrong when not ready, and the fix */
} cordon_workspace_state;
/* clang-format off: an initializer on one line */
#define CORDON_WORKSPACE_STATE_INIT            \
    {                                          \
        .size = sizeof(cordon_workspace_state) \
    }
/* clang-format on */
CORDON_API int cordon_workspace_status(cordon_workspace *ws, cordon_workspace_state *st, cordon_error *err);

/* Unmount, delete the layers and the state; a worktree is removed (its branch kept). */
CORDON_API int cordon_workspace_remove(const char *root, const char *name, cordon_error *err);
/* The names of the workspaces under root, sorted. */
CORDON_API int cordon_workspace_list(const char *root, char ***names, size_t *n, cordon_error *err);
CORDON_API void cordon_workspace_names_free(char **names, size_t n);

/* ---- the names of 0.1 (doc/api.md, "From 0.1 to 0.2") -----------------------------------
 * Source compatibility for what was only renamed; define CORDON_NO_COMPAT to see the new
 * names alone.  What changed its signature (cordon_explain, cordon_workspace_diff,
 * cordon_workspace_integrate, cordon_proc_kill, cordon_proc_close_stdin,
 * cordon_status_file_open) has no alias: the compiler points at each call. */
#ifndef CORDON_NO_COMPAT
#define cordon_policy_set_env                      cordon_policy_add_env
#define cordon_policy_keep_env                     cordon_policy_add_keep_env
#define cordon_policy_protect                      cordon_policy_add_protected
#define cordon_policy_hide                         cordon_policy_add_hidden
#define cordon_policy_allow_domain                 cordon_policy_add_allowed_domain
#define cordon_policy_deny_domain                  cordon_policy_add_denied_domain
#define cordon_policy_allow_socket                 cordon_policy_add_allowed_socket
#define cordon_policy_forward_port                 cordon_policy_add_forwarded_port
#define cordon_policy_publish_port                 cordon_policy_add_published_port
#define cordon_policy_forward_port_string          cordon_policy_add_forwarded_port_string
#define cordon_policy_publish_port_string          cordon_policy_add_published_port_string
#define cordon_policy_set_no_nested(p, no, e)      cordon_policy_set_nested((p), !(no), (e))
#define cordon_policy_set_no_workspace(p, none, e) ((none) ? cordon_policy_set_workspace((p), NULL, (e)) : 0)
#define cordon_session_cmd                         cordon_cmd
/* 0.1's initializer gives 0.1's layout, so that 0.1's meaning of timeout stays (0: the
 * session's, < 0: none) for the code written for it */
#define CORDON_SESSION_CMD_INIT                   \
    {                                             \
        .size = offsetof(cordon_cmd, has_timeout) \
    }
#define cordon_ws_backend             cordon_backend
#define CORDON_WS_AUTO                CORDON_BACKEND_AUTO
#define CORDON_WS_KERNEL              CORDON_BACKEND_KERNEL
#define CORDON_WS_FUSE                CORDON_BACKEND_FUSE
#define CORDON_WS_COPY                CORDON_BACKEND_COPY
#define CORDON_WS_WORKTREE            CORDON_BACKEND_WORKTREE
#define CORDON_WS_NONE                CORDON_BACKEND_NONE
#define cordon_ws_backend_from_string cordon_backend_from_string
#define cordon_ws_backend_name        cordon_backend_name
#define cordon_ws_change              cordon_workspace_change
#define cordon_ws_changes             cordon_workspace_change_list
#define cordon_ws_changes_free        cordon_workspace_change_list_free
#define cordon_ws_integrated          cordon_workspace_integration
#define cordon_ws_integrated_free     cordon_workspace_integration_free
#define cordon_ws_status              cordon_workspace_state
#define cordon_ws_names_free          cordon_workspace_names_free
#define cordon_status_file_close      cordon_status_file_free
#define CORDON_WS_DIFF_NAME_STATUS    CORDON_WORKSPACE_DIFF_NAME_STATUS
#define CORDON_WS_INTEGRATE_FORCE     CORDON_WORKSPACE_INTEGRATE_FORCE
#endif

#ifdef __cplusplus
}
#endif
#endif
