// SPDX-License-Identifier: Apache-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#include <stdarg.h>
#include <stdio.h>

int cli_fail(cordon_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    err->truncated = n < 0 || (size_t)n >= sizeof err->message;
    err->stage = CORDON_STAGE_USAGE;
    err->errnum = 0;
    return -1;
}

int cli_wrap(cordon_error *err, const char *context)
{
    char old[sizeof err->message];
    memcpy(old, err->message, sizeof old);
    int n = snprintf(err->message, sizeof err->message, "%s: %s", context, old);
    if (n < 0 || (size_t)n >= sizeof err->message)
        err->truncated = true;
    err->option[0] = '\0'; /* named now */
    return -1;
}

void cli_option_flags(const char *option, char *buf, size_t n)
{
    /* the camelCase name of the option, as the library gives it, spelled as a flag */
    static const struct {
        const char *option, *flags;
    } special[] = {
        {"workspace", "--workspace DIR or --no-workspace"},
        {"chdir", "--chdir DIR"},
        {"dataRoot", "--data-root DIR"},
        {"isolation", "--isolation landlock"},
        /* a nested run that the outer sandbox's --no-nested refused */
        {"outerNoNested", "the outer sandbox's --no-nested; without namespaces: --isolation landlock"},
    };
    for (size_t i = 0; i < sizeof special / sizeof special[0]; i++)
        if (strcmp(option, special[i].option) == 0) {
            snprintf(buf, n, "%s", special[i].flags);
            return;
        }
    size_t o = 0;
    if (n < 3) {
        if (n)
            buf[0] = '\0';
        return;
    }
    buf[o++] = '-';
    buf[o++] = '-';
    for (const char *c = option; *c && o + 2 < n; c++) {
        if (*c >= 'A' && *c <= 'Z') {
            buf[o++] = '-';
            buf[o++] = (char)(*c - 'A' + 'a');
        } else {
            buf[o++] = *c;
        }
    }
    buf[o] = '\0';
}

/* A setter's result; its error named by the flag that called it. */
static int named(int rc, cordon_error *err, const char *flag)
{
    return rc < 0 ? cli_wrap(err, flag) : rc;
}

static int opt_base(run_args *a, const char *v, cordon_error *err)
{
    cordon_base b;
    if (cordon_base_from_string(v, &b, err) < 0)
        return cli_wrap(err, "--base");
    return named(cordon_policy_set_base(a->pol, b, err), err, "--base");
}

static int opt_network(run_args *a, const char *v, cordon_error *err)
{
    cordon_network n;
    if (cordon_network_from_string(v, &n, err) < 0)
        return cli_wrap(err, "--network");
    return named(cordon_policy_set_network(a->pol, n, err), err, "--network");
}

static int opt_workspace(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_set_workspace(a->pol, v, err), err, "--workspace");
}

static int opt_no_workspace(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    return cordon_policy_set_no_workspace(a->pol, true, err);
}

static int opt_allow(run_args *a, const char *v, cordon_error *err)
{
    return cordon_policy_add_path(a->pol, v, CORDON_ACCESS_WRITE, "--allow", err);
}

static int opt_allow_ro(run_args *a, const char *v, cordon_error *err)
{
    return cordon_policy_add_path(a->pol, v, CORDON_ACCESS_READ, "--allow-ro", err);
}

static int opt_deny(run_args *a, const char *v, cordon_error *err)
{
    return cordon_policy_add_path(a->pol, v, CORDON_ACCESS_NONE, "--deny", err);
}

static int opt_hide(run_args *a, const char *v, cordon_error *err)
{
    return cordon_policy_hide(a->pol, v, err);
}

static int opt_deny_glob(run_args *a, const char *v, cordon_error *err)
{
    return cordon_policy_add_deny_glob(a->pol, v, "--deny-glob", err);
}

static int opt_glob_depth(run_args *a, const char *v, cordon_error *err)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (!*v || errno != 0 || *end != '\0' || n < 1 || n > CORDON_GLOB_MAX_DEPTH)
        return cli_fail(err, "--glob-depth: '%s' is not a number of levels between 1 and %d", v, CORDON_GLOB_MAX_DEPTH);
    return named(cordon_policy_set_glob_depth(a->pol, (int)n, err), err, "--glob-depth");
}

static int opt_protect(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_protect(a->pol, v, err), err, "--protect");
}

static int opt_read_only(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    return cordon_policy_set_read_only(a->pol, true, err);
}

static int opt_settings(run_args *a, const char *v, cordon_error *err)
{
    if (!*v)
        return cli_fail(err, "--settings: empty file name");
    return cordon_policy_load_settings(a->pol, v, err);
}

static int opt_strict_settings(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    return named(cordon_policy_set_strict_settings(a->pol, true, err), err, "--strict-settings");
}

static int opt_data_root(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_set_data_root(a->pol, v, err), err, "--data-root");
}

static int opt_env(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_set_env(a->pol, v, err), err, "--env");
}

static int opt_keep_env(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_keep_env(a->pol, v, err), err, "--keep-env");
}

static int opt_clear_env(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    return cordon_policy_set_clear_env(a->pol, true, err);
}

static int opt_chdir(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_set_cwd(a->pol, v, err), err, "--chdir");
}

static int opt_timeout(run_args *a, const char *v, cordon_error *err)
{
    a->timeout = v;
    return named(cordon_policy_set_timeout_string(a->pol, v, err), err, "--timeout");
}

static int opt_status_json(run_args *a, const char *v, cordon_error *err)
{
    if (!*v)
        return cli_fail(err, "--status-json: empty file name");
    a->status_json = v;
    return 0;
}

static int opt_no_proc(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    return cordon_policy_set_proc(a->pol, false, err);
}

static int opt_toolchains(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    return cordon_policy_set_toolchains(a->pol, true, err);
}

static int opt_no_nested(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    return cordon_policy_set_no_nested(a->pol, true, err);
}

static int opt_limit_pids(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_set_limit_string(a->pol, CORDON_LIMIT_PIDS, v, err), err, "--limit-pids");
}

static int opt_limit_memory(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_set_limit_string(a->pol, CORDON_LIMIT_MEMORY, v, err), err, "--limit-memory");
}

static int opt_limit_cpu(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_set_limit_string(a->pol, CORDON_LIMIT_CPU, v, err), err, "--limit-cpu");
}

static int opt_isolation(run_args *a, const char *v, cordon_error *err)
{
    cordon_isolation i;
    if (cordon_isolation_from_string(v, &i, err) < 0)
        return cli_wrap(err, "--isolation");
    return named(cordon_policy_set_isolation(a->pol, i, err), err, "--isolation");
}

/* --network proxy and the filtering proxy (src/net) */
static int opt_allow_domain(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_allow_domain(a->pol, v, err), err, "--allow-domain");
}

static int opt_deny_domain(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_deny_domain(a->pol, v, err), err, "--deny-domain");
}

static int opt_add_host(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_add_host(a->pol, v, err), err, "--add-host");
}

static int opt_dns_server(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_add_dns_server(a->pol, v, err), err, "--dns-server");
}

static int opt_allow_unix_sockets(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    return named(cordon_policy_set_allow_unix_sockets(a->pol, true, err), err, "--allow-unix-sockets");
}

static int opt_allow_socket(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_allow_socket(a->pol, v, err), err, "--allow-socket");
}

static int opt_forward_port(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_forward_port_string(a->pol, v, err), err, "--forward-port");
}

static int opt_publish_port(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_publish_port_string(a->pol, v, err), err, "--publish-port");
}

static int opt_network_log(run_args *a, const char *v, cordon_error *err)
{
    return named(cordon_policy_set_network_log(a->pol, v, err), err, "--network-log");
}

static int opt_tty(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    (void)err;
    a->tty = 1;
    return 0;
}

static int opt_no_tty(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    (void)err;
    a->tty = 0;
    return 0;
}

static int opt_json(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    (void)err;
    a->json = true;
    return 0;
}

static int opt_verbose(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    (void)err;
    a->verbose = true;
    return 0;
}

static int opt_help(run_args *a, const char *v, cordon_error *err)
{
    (void)v;
    (void)err;
    a->help = true;
    return 0;
}

const option_def run_options[] = {
    {"--base", "system|host|empty", opt_base,
     "what the view starts from: system (default: /usr /bin /sbin /lib* /etc read-only), "
     "host (the whole host read-only) or empty"},
    {"--workspace", "DIR", opt_workspace,
     "the writable workspace (default: the top of the current directory's git work tree, else the current "
     "directory; `--workspace .`: the current directory alone)"},
    {"--no-workspace", NULL, opt_no_workspace, "do not expose the current directory"},
    {"--allow", "PATH", opt_allow, "PATH visible and writable"},
    {"--allow-ro", "PATH", opt_allow_ro, "PATH visible, read-only"},
    {"--deny", "PATH", opt_deny,
     "PATH hidden: an empty, unwritable directory or file in its place, even inside an allowed path"},
    {"--hide", "PATH", opt_hide,
     "PATH hidden wherever the view shows it, as the credential stores of the home are; a rule "
     "naming PATH exactly shows it again (unlike --deny), and a missing PATH is not held"},
    {"--deny-glob", "GLOB", opt_deny_glob,
     "every match of GLOB (an absolute pattern: * ? [...] **) hidden like --deny; expanded at "
     "launch under the pattern's static directory prefix, e.g. --deny-glob \"$PWD/**/*.env\""},
    {"--glob-depth", "N", opt_glob_depth, "how many levels below its prefix --deny-glob looks (default: unlimited)"},
    {"--protect", "NAME", opt_protect,
     "also keep NAME read-only at the top of every writable path (as .git/hooks, .codex ...)"},
    {"--read-only", NULL, opt_read_only,
     "every allowed path and the workspace read-only (HOME and TMPDIR stay writable)"},
    {"--settings", "FILE", opt_settings, "read rules from a JSON settings file; flags add to it"},
    {"--strict-settings", NULL, opt_strict_settings,
     "refuse a settings file with a top-level key cordon and the harnesses it shares settings with (pi, "
     "Claude Code) do not know (default: a warning naming the nearest known key, e.g. \"sanbox\" -> \"sandbox\")"},
    {"--data-root", "DIR", opt_data_root, "the value of <data-root> in settings files"},
    {"--network", "none|host|proxy", opt_network,
     "none (default): own network namespace with loopback only; host: the host's network; proxy: "
     "own namespace, out only through the loopback proxies of the proxy variables (bridged in, the "
     "variables rewritten) or cordon's filtering proxy (--allow-domain)"},
    {"--allow-domain", "DOMAIN", opt_allow_domain,
     "(implies --network proxy) cordon's HTTP/CONNECT/SOCKS5 proxy lets the command reach DOMAIN "
     "('*.example.com': its subdomains; or an IP address); others get 403 naming the flag, and each "
     "refused host is said once on stderr after the run"},
    {"--deny-domain", "DOMAIN", opt_deny_domain, "refused even where an --allow-domain matches"},
    {"--add-host", "NAME=ADDRESS", opt_add_host,
     "cordon's proxy resolves NAME to ADDRESS without DNS (a loopback or private ADDRESS then "
     "needs NAME allowed exactly; from DNS it needs the address itself allowed)"},
    {"--dns-server", "ADDRESS[:PORT]", opt_dns_server,
     "cordon's proxy asks this name server (up to three) instead of those of /etc/resolv.conf"},
    {"--allow-unix-sockets", NULL, opt_allow_unix_sockets,
     "with --network proxy, allow creating AF_UNIX sockets (default: refused; socket pairs work)"},
    {"--allow-socket", "PATH", opt_allow_socket,
     "the host's Unix socket at PATH (absolute) may be connected to; every other pathname socket the sandbox did "
     "not bind is refused (EACCES)"},
    {"--forward-port", "PORT", opt_forward_port,
     "the host's 127.0.0.1:PORT reachable inside as 127.0.0.1:PORT (a database, a dev server)"},
    {"--publish-port", "PORT|127.0.0.1:HOSTPORT:PORT", opt_publish_port,
     "what the command listens on at 127.0.0.1:PORT inside, reachable at the host's "
     "127.0.0.1:HOSTPORT (default PORT, as --forward-port); the host's port first, as Docker's -p; "
     "a bare A:B of two ports is refused as ambiguous"},
    {"--network-log", "FILE", opt_network_log,
     "append every proxy decision and refused connection to FILE as JSON lines"},
    {"--env", "NAME=VALUE", opt_env, "set a variable in the command's environment"},
    {"--keep-env", "NAME", opt_keep_env, "pass NAME through from cordon's environment"},
    {"--clear-env", NULL, opt_clear_env,
     "start from an empty environment (default: PATH TERM LANG LC_* TZ USER LOGNAME)"},
    {"--chdir", "DIR", opt_chdir,
     "working directory inside (default: the current directory; the workspace where that is not visible)"},
    {"--timeout", "SECONDS", opt_timeout, "kill the whole sandbox after SECONDS (decimals allowed); exit 124"},
    {"--status-json", "FILE", opt_status_json,
     "write the result (exit code, signal, timed out, failed stage) as JSON to FILE"},
    {"--no-proc", NULL, opt_no_proc, "do not mount /proc"},
    {"--toolchains", NULL, opt_toolchains,
     "the home's tool directories read-only where they exist (~/.cargo ~/.rustup ~/.pyenv ~/.nvm ~/.volta ~/go "
     "~/.deno ~/.bun ~/.local/bin ...; credential stores stay hidden)"},
    {"--no-nested", NULL, opt_no_nested,
     "no sandbox inside the sandbox: refuse new user namespaces and the mount API, and add "
     "Landlock filesystem rules (by default the command may nest sandboxes, only ever stricter)"},
    {"--limit-pids", "N", opt_limit_pids, "at most N processes and threads at once for the command and all it starts"},
    {"--limit-memory", "SIZE", opt_limit_memory,
     "at most SIZE of memory (bytes, or K M G T: powers of 1024, e.g. 512M); the kernel kills "
     "what goes over; the private /tmp, HOME, TMPDIR and /dev/shm hold at most SIZE together"},
    {"--limit-cpu", "SECONDS", opt_limit_cpu,
     "at most SECONDS of CPU time (whole seconds), then the command is killed (SIGXCPU, exit 152); "
     "all three through a cgroup of the run's own where one can be made, else rlimits "
     "(see `cordon explain` and README)"},
    {"--isolation", "namespaces|landlock|auto", opt_isolation,
     "namespaces (default); landlock: no namespaces, the filesystem and the network by Landlock "
     "and seccomp, cordon's supervisor keeping the creation control, for hosts without user "
     "namespaces (weaker: see doc/security.md and `cordon explain`); auto: namespaces where "
     "possible, else landlock, saying so"},
    {"--tty", NULL, opt_tty,
     "run the command on a terminal of the sandbox's own (job control, ^C, ^Z, window size), "
     "relayed to cordon's; default: when cordon's stdin and stdout are terminals and it runs in the foreground"},
    {"--no-tty", NULL, opt_no_tty, "no terminal: the command gets cordon's stdin, stdout and stderr as they are"},
    {"--json", NULL, opt_json,
     "explain: print the resolved policy, the rules, the plan, the confinement and the warnings as one JSON "
     "object",
     true},
    {"--verbose", NULL, opt_verbose, "explain: also list every call the seccomp filter refuses", true},
    {"--help", NULL, opt_help, "show this help"},
    {NULL, NULL, NULL, NULL},
};

/* The run option `name` (len bytes) is most likely a typo of: the option at the smallest
 * edit distance (a swap of neighbours is one edit), when it is small, or NULL.  (The
 * library has its own for settings keys and values; the command line is on the public
 * header only.) */
static const char *suggest_option(const char *name, size_t len)
{
    if (len > 40)
        return NULL;
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (const option_def *o = run_options; o->name; o++) {
        size_t lb = strlen(o->name);
        size_t d[42][42];
        for (size_t i = 0; i <= len; i++)
            d[i][0] = i;
        for (size_t j = 0; j <= lb && j < 42; j++)
            d[0][j] = j;
        if (lb > 40)
            continue;
        for (size_t i = 1; i <= len; i++)
            for (size_t j = 1; j <= lb; j++) {
                size_t v = d[i - 1][j - 1] + (name[i - 1] != o->name[j - 1]);
                if (d[i - 1][j] + 1 < v)
                    v = d[i - 1][j] + 1;
                if (d[i][j - 1] + 1 < v)
                    v = d[i][j - 1] + 1;
                if (i > 1 && j > 1 && name[i - 1] == o->name[j - 2] && name[i - 2] == o->name[j - 1] &&
                    d[i - 2][j - 2] + 1 < v)
                    v = d[i - 2][j - 2] + 1;
                d[i][j] = v;
            }
        if (d[len][lb] < best_d) {
            best_d = d[len][lb];
            best = o->name;
        }
    }
    size_t allowed = len / 5 + 1;
    return best && best_d <= allowed ? best : NULL;
}

static const option_def *find_option(const char *name, size_t len)
{
    for (const option_def *o = run_options; o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
            return o;
    return NULL;
}

int parse_run_args(int argc, char **argv, run_args *a, bool command_required, cordon_error *err)
{
    int i = 0;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(arg, "-h") == 0) {
            a->help = true;
            continue;
        }
        if (arg[0] != '-' || arg[1] == '\0')
            break; /* the first non-option word starts the command */
        if (arg[1] != '-') {
            /* -allow: one dash short of an option? */
            char two[64];
            snprintf(two, sizeof two, "-%s", arg);
            const char *eq1 = strchr(two, '=');
            if (find_option(two, eq1 ? (size_t)(eq1 - two) : strlen(two)))
                return cli_fail(err,
                                "unknown option '%s': did you mean '%.*s'? (options are long; see `cordon help "
                                "run`)",
                                arg, eq1 ? (int)(eq1 - two) : (int)strlen(two), two);
            return cli_fail(err, "unknown option '%s'; options are long (--allow ...); see `cordon help run`", arg);
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        const option_def *o = find_option(arg, len);
        if (!o) {
            const char *near = suggest_option(arg, len);
            if (near)
                return cli_fail(err, "unknown option '%.*s': did you mean %s? (see `cordon help run`)", (int)len, arg,
                                near);
            return cli_fail(err, "unknown option '%.*s'; see `cordon help run`", (int)len, arg);
        }
        if (o->explain_only && !a->explain)
            return cli_fail(err, "%s is an option of `cordon explain`, not of `cordon run`", o->name);
        const char *value = NULL;
        if (o->argname) {
            if (eq) {
                value = eq + 1;
            } else if (i + 1 < argc) {
                /* `--allow -- cmd`, `--allow --deny X`: the value was forgotten, the next
                 * word is not it */
                const char *next = argv[i + 1];
                if (strcmp(next, "--") == 0 ||
                    (next[0] == '-' && next[1] == '-' && find_option(next, strcspn(next, "="))))
                    return cli_fail(err, "%s needs a value (%s) before %s", o->name, o->argname, next);
                value = argv[++i];
            } else {
                return cli_fail(err, "%s needs a value (%s)", o->name, o->argname);
            }
        } else if (eq) {
            return cli_fail(err, "%s takes no value", o->name);
        }
        if (o->fn(a, value ? value : "", err) < 0)
            return -1;
    }
    a->command = i < argc ? &argv[i] : NULL;
    if (command_required && !a->command && !a->help)
        return cli_fail(err, "no command given: cordon run [OPTIONS] [--] COMMAND [ARG...]");
    return 0;
}
