// SPDX-License-Identifier: Apache-2.0
/* cordon_codex_main(): the helper's command line in, a cordon run out (codex.h).
 *
 * One process tree instead of the helper's pipeline (bubblewrap probed, a preflight
 * bubblewrap run, the real one, and a re-exec of the helper inside it for seccomp): the
 * profile becomes a cordon_policy through the public setters, and cordon_run_flags()
 * runs the command. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codex/codex.h"
#include "lib/forward.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

extern char **environ;

#define HELPER_NAME "codex-linux-sandbox"

bool cordon_codex_is_helper(const char *argv0)
{
    if (!argv0)
        return false;
    const char *base = strrchr(argv0, '/');
    base = base ? base + 1 : argv0;
    return strcmp(base, HELPER_NAME) == 0;
}

static bool host_exists(const char *path, void *ctx)
{
    (void)ctx;
    struct stat st;
    return lstat(path, &st) == 0;
}

static bool host_is_dir(const char *path, void *ctx)
{
    (void)ctx;
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A small file's contents (NUL-terminated), or NULL; never follows a symlink when
 * `nofollow`. */
static char *read_small_file(const char *path, bool nofollow)
{
    _cleanup_fd_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (nofollow ? O_NOFOLLOW : 0));
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) < 0 || (nofollow && !S_ISREG(st.st_mode)))
        return NULL;
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n <= 0)
        return NULL;
    buf[n] = '\0';
    return xstrdup(buf);
}

static char *host_gitdir_of(const char *dotgit, void *ctx)
{
    (void)ctx;
    char *text = read_small_file(dotgit, true);
    if (!text)
        return NULL;
    char *ret = NULL;
    text[strcspn(text, "\r\n")] = '\0';
    if (strncmp(text, "gitdir:", 7) == 0) {
        const char *g = text + 7;
        g += strspn(g, " \t");
        if (*g == '/') {
            ret = xstrdup(g);
        } else if (*g) {
            char *dir = xstrdup(dotgit);
            char *slash = strrchr(dir, '/');
            if (slash)
                *slash = '\0';
            ret = path_join(*dir ? dir : "/", g);
            free(dir);
        }
    }
    free(text);
    return ret;
}

static bool valid_env_name(const char *s, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '=' || (unsigned char)s[i] <= ' ' || s[i] == 0x7f)
            return false;
    return true;
}

int cx_apply(const cx_plan *plan, const cx_args *args, char *const *env, cordon_policy *p, cordon_error *err)
{
    /* No workspace (the profile's write entries are the writable roots), and HOME and
     * TMPDIR as Codex's environment has them, showing what the profile shows there. */
    if (cordon_policy_set_no_workspace(p, true, err) < 0 || cordon_policy_set_base(p, plan->base, err) < 0 ||
        cordon_policy_set_private_dirs(p, false, err) < 0)
        return -1;
    for (size_t i = 0; i < plan->n_rules; i++) {
        char source[96];
        snprintf(source, sizeof source, "--permission-profile (%s)", plan->rules[i].why);
        if (cordon_policy_add_path(p, plan->rules[i].path, plan->rules[i].access, source, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < plan->deny_globs.n; i++)
        if (cordon_policy_add_deny_glob(p, plan->deny_globs.v[i], "--permission-profile glob_pattern", err) < 0)
            return -1;
    if (plan->glob_depth > 0 && cordon_policy_set_glob_depth(p, plan->glob_depth, err) < 0)
        return err_wrap(err, "glob_scan_max_depth");
    /* Codex keeps .aws read-only under every writable root, as .codex and .agents (which
     * cordon protects anyway). */
    if (cordon_policy_protect(p, ".aws", err) < 0)
        return -1;
    if (cordon_policy_set_network(p, plan->network, err) < 0) {
        if (plan->network == CORDON_NETWORK_PROXY)
            return err_wrap(err, "proxy mode (--managed-network, --allow-network-for-proxy) is not on this build of "
                                 "cordon");
        return -1;
    }
    /* Proxy mode refuses new AF_UNIX sockets (socket pairs stay), as the helper does,
     * unless --managed-network says dangerouslyAllowAllUnixSockets. */
    if (plan->network == CORDON_NETWORK_PROXY && plan->allow_unix_sockets &&
        cordon_policy_set_allow_unix_sockets(p, true, err) < 0)
        return -1;
    /* allowUnixSockets names the host sockets the command may reach: every other pathname
     * socket is refused, as with cordon run's --allow-socket (README) */
    for (size_t i = 0; plan->allow_sockets && i < plan->allow_sockets->n; i++)
        if (cordon_policy_allow_socket(p, plan->allow_sockets->v[i], err) < 0)
            return err_wrap(err, "--managed-network's allowUnixSockets");
    /* --inherit-pid-namespace shows the caller's /proc, whatever --no-proc says (as the
     * helper: both keep the inherited /proc). */
    if (args->inherit_pid_namespace) {
        if (cordon_policy_set_inherit_pid_namespace(p, true, err) < 0)
            return -1;
    } else if (args->no_proc && cordon_policy_set_proc(p, false, err) < 0) {
        return -1;
    }
    /* The helper passes its whole environment to the command (Codex chose it already). */
    for (char *const *e = env; e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || !valid_env_name(*e, (size_t)(eq - *e)))
            continue;
        char *name = xstrndup(*e, (size_t)(eq - *e));
        int r = cordon_policy_keep_env(p, name, err);
        free(name);
        if (r < 0)
            return -1;
    }
    return 0;
}

static void print_error(const cordon_error *err)
{
    char text[2048];
    cordon_error_text(err, text, sizeof text);
    fprintf(stderr, "cordon: %s\n", text[0] ? text : "unknown error");
}

/* Run the command with this process's stdin, stdout and stderr, forwarding the signals
 * a terminal or a supervisor sends to it, as a main() does (lib/forward.h). */
static int run_forwarding(const cordon_policy *pol, char *const command[], cordon_result *res, cordon_error *err)
{
    cordon_proc *c;
    if (cordon_spawn(pol, command, CORDON_SPAWN_STDIN_INHERIT, &c, err) < 0)
        return -1;
    return proc_wait_forwarding(c, res, err);
}

static void print_refusals(const cordon_result *res)
{
    const char *r = res->refusals;
    for (unsigned i = 0; i < res->n_refusals; i++) {
        fprintf(stderr, "cordon: refused %s\n", r);
        r += strlen(r) + 1;
    }
    if (res->refused > res->n_refusals)
        fprintf(stderr, "cordon: ... and %lu more refused calls\n", res->refused - res->n_refusals);
}

/* The command without any sandbox, as the helper runs it when the whole disk is
 * writable and the network enabled.  Returns only when it cannot be executed. */
static int exec_direct(char *const command[])
{
    execvp(command[0], command);
    int e = errno;
    fprintf(stderr, "cordon: cannot execute %s: %s\n", command[0], strerror(e));
    return e == ENOENT ? CORDON_EXIT_NOTFOUND : CORDON_EXIT_NOEXEC;
}

/* Is this the failure of the fresh /proc mount (a container whose /proc is partly
 * masked)?  The helper then retries without one; so does cordon. */
static bool proc_mount_refused(const cordon_error *err)
{
    return err->stage == CORDON_STAGE_ROOT && strstr(err->message, "fresh /proc") &&
           (err->errnum == EPERM || err->errnum == EACCES || err->errnum == EINVAL);
}

static int run(const cx_args *a, const cx_plan *plan)
{
    cordon_error err = CORDON_ERROR_INIT;
    cordon_result res = CORDON_RESULT_INIT;
    int code = CX_EXIT_SETUP;
    for (int attempt = 0; attempt < 2; attempt++) {
        cordon_policy *p = cordon_policy_new();
        res = (cordon_result)CORDON_RESULT_INIT;
        res.exit_code = CORDON_EXIT_SETUP;
        err = (cordon_error)CORDON_ERROR_INIT;
        cx_args args = *a;
        if (attempt == 1)
            args.no_proc = true;
        if (cx_apply(plan, &args, environ, p, &err) < 0) {
            print_error(&err);
            cordon_policy_free(p);
            return CX_EXIT_SETUP;
        }
        if (a->explain) {
            char *text = NULL;
            code = cordon_explain(p, a->command, 0, &text, &err) < 0 ? CX_EXIT_SETUP : 0;
            if (text) {
                fputs(text, stdout);
                cordon_free(text);
            }
            if (code)
                print_error(&err);
            cordon_policy_free(p);
            return code;
        }
        int r = run_forwarding(p, a->command, &res, &err);
        cordon_policy_free(p);
        if (r < 0 && !res.started && attempt == 0 && !a->no_proc && proc_mount_refused(&err))
            continue; /* as the helper: no fresh /proc here, so none */
        if (r < 0)
            print_error(&err);
        if (r < 0 && attempt == 1)
            fputs("cordon: this host refuses a fresh /proc (a container whose /proc is partly masked), and cordon's "
                  "creation control needs a procfs of the sandbox's PID namespace; --inherit-pid-namespace (the "
                  "caller's PID namespace and /proc) works here\n",
                  stderr);
        print_refusals(&res);
        cordon_result_free(&res);
        code = res.exit_code == CORDON_EXIT_SETUP || (r < 0 && res.exit_code == 0) ? CX_EXIT_SETUP : res.exit_code;
        break;
    }
    return code;
}

int cordon_codex_main(int argc, char *const argv[])
{
    cordon_error err = {0};
    cx_args a;
    if (cx_parse_args(argc, argv, &a, &err) < 0) {
        print_error(&err);
        return CX_EXIT_USAGE;
    }
    if (a.help) {
        cx_help(stdout);
        return 0;
    }
    cx_profile prof = {0};
    cx_netctx net = {0};
    cx_plan plan = {0};
    char *policy_cwd = NULL;
    int code = CX_EXIT_USAGE;
    if (a.permission_profile ? cx_profile_parse(a.permission_profile, &prof, &err) < 0
        : a.sandbox_policy   ? cx_legacy_policy_parse(a.sandbox_policy, &prof, &err) < 0
                             : 0) {
        print_error(&err);
        goto out;
    }
    if (a.managed_network && cx_netctx_parse(a.managed_network, &net, &err) < 0) {
        print_error(&err);
        goto out;
    }
    code = CX_EXIT_SETUP;
    if (!a.permission_profile && !a.sandbox_policy) {
        fputs("cordon: missing permission profile configuration: give --permission-profile JSON (or the legacy "
              "--sandbox-policy JSON)\n",
              stderr);
        goto out;
    }
    if (!a.command || !a.command[0]) {
        fputs("cordon: no command specified to execute: codex-linux-sandbox [OPTIONS] -- COMMAND [ARG...]\n", stderr);
        goto out;
    }
    if (a.policy_cwd[0] == '/') {
        policy_cwd = xstrdup(a.policy_cwd);
    } else {
        char cwd[4096];
        if (!getcwd(cwd, sizeof cwd)) {
            fprintf(stderr, "cordon: --sandbox-policy-cwd %s: cannot tell the current directory: %s\n", a.policy_cwd,
                    strerror(errno));
            goto out;
        }
        policy_cwd = path_join(cwd, a.policy_cwd);
    }
    bool proxy = a.managed_network || a.allow_network_for_proxy;
    const char *tmpdir = getenv("TMPDIR"), *home = getenv("HOME");
    cx_host host = {.policy_cwd = policy_cwd,
                    .tmpdir = tmpdir,
                    .home = home,
                    .exists = host_exists,
                    .is_dir = host_is_dir,
                    .gitdir_of = host_gitdir_of};
    if (cx_map(&prof, &host, proxy, &plan, &err) < 0) {
        print_error(&err);
        goto out;
    }
    plan.allow_unix_sockets = net.allow_all_unix_sockets;
    plan.allow_sockets = &net.unix_sockets;
    if (a.use_legacy_landlock && plan.fs_restricted) {
        fputs("cordon: --use-legacy-landlock cannot be used with a filesystem-restricted profile: the legacy Landlock "
              "pipeline cannot isolate app-server Unix sockets, so Codex refuses it (disable "
              "features.use_legacy_landlock); cordon builds the sandbox itself without it\n",
              stderr);
        goto out;
    }
    if (plan.mode == CX_RUN_DIRECT) {
        if (a.explain) {
            printf("no sandbox: the profile gives the whole disk and the network (the helper execs the command as "
                   "it is)\n");
            code = 0;
            goto out;
        }
        cx_plan_free(&plan);
        cx_profile_free(&prof);
        cx_netctx_free(&net);
        free(policy_cwd);
        return exec_direct(a.command);
    }
    char *version = read_small_file("/proc/version", false),
         *release = read_small_file("/proc/sys/kernel/osrelease", false);
    bool wsl1 = cx_is_wsl1(version, release);
    free(version);
    free(release);
    if (wsl1) {
        fputs("cordon: WSL1 cannot create the user namespaces a sandbox needs, so sandboxed commands cannot run "
              "here; use WSL2 (wsl --set-version DISTRO 2)\n",
              stderr);
        goto out;
    }
    if (proxy && cx_check_proxy_env(environ, a.managed_network ? &net : NULL, &err) < 0) {
        print_error(&err);
        goto out;
    }
    code = run(&a, &plan);
out:
    cx_plan_free(&plan);
    cx_profile_free(&prof);
    cx_netctx_free(&net);
    free(policy_cwd);
    return code;
}
