// SPDX-License-Identifier: Apache-2.0
/* The helper's command line, parsed as its clap definition does: long options with a
 * value (`--opt V` or `--opt=V`), switches, each at most once; the first word that is not
 * an option (or everything after `--`) is the command. */
#include <string.h>

#include "cordon_build.h"
#include "codex/codex.h"
#include "util/err.h"

typedef enum opt_id {
    O_POLICY_CWD,
    O_COMMAND_CWD,
    O_PERMISSION_PROFILE,
    O_SANDBOX_POLICY,
    O_MANAGED_NETWORK,
    O_ALLOW_NETWORK_FOR_PROXY,
    O_NO_PROC,
    O_USE_LEGACY_LANDLOCK,
    O_INHERIT_PID_NAMESPACE,
    O_EXPLAIN,
    O_HELP,
    O_N,
} opt_id;

typedef struct cx_opt {
    const char *name;
    const char *value; /* the value's name in help, or NULL for a switch */
    const char *help;
} cx_opt;

static const cx_opt opts[O_N] = {
    [O_POLICY_CWD] = {"--sandbox-policy-cwd", "DIR",
                      "the project root: what project_roots and current_working_directory name (required)"},
    [O_COMMAND_CWD] = {"--command-cwd", "DIR",
                       "the command's logical working directory; as with Codex 0.169's helper, the "
                       "command runs in this process's own working directory"},
    [O_PERMISSION_PROFILE] = {"--permission-profile", "JSON",
                              "the permissions: {\"type\":\"managed\",\"file_system\":...,\"network\":...}, "
                              "{\"type\":\"disabled\"} or {\"type\":\"external\",\"network\":...}"},
    [O_SANDBOX_POLICY] = {"--sandbox-policy", "JSON",
                          "the legacy policy: {\"type\":\"read-only\"}, {\"type\":\"workspace-write\",...} or "
                          "{\"type\":\"danger-full-access\"} (0.169's helper no longer takes it; cordon does)"},
    [O_MANAGED_NETWORK] = {"--managed-network", "JSON",
                           "proxy mode: only the loopback proxies of the proxy variables are reachable "
                           "({\"loopbackPorts\":[...],\"dangerouslyAllowAllUnixSockets\":false})"},
    [O_ALLOW_NETWORK_FOR_PROXY] = {"--allow-network-for-proxy", NULL, "proxy mode (the older spelling)"},
    [O_NO_PROC] = {"--no-proc", NULL, "no /proc inside (cordon shows none; see doc/codex.md)"},
    [O_USE_LEGACY_LANDLOCK] = {"--use-legacy-landlock", NULL,
                               "refused for a filesystem-restricted profile, as by the helper"},
    [O_INHERIT_PID_NAMESPACE] = {"--inherit-pid-namespace", NULL,
                                 "share the caller's PID namespace and /proc (read-only)"},
    [O_EXPLAIN] = {"--cordon-explain", NULL, "print what cordon makes of the profile (cordon explain); run nothing"},
    [O_HELP] = {"--help", NULL, "show this help"},
};

void cx_help(FILE *out)
{
    fputs("codex-linux-sandbox (cordon " CORDON_VERSION "): Codex's Linux sandbox helper, run by cordon\n\n"
          "usage: codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR]\n"
          "           (--permission-profile JSON | --sandbox-policy JSON)\n"
          "           [--managed-network JSON | --allow-network-for-proxy] [--no-proc]\n"
          "           [--use-legacy-landlock] [--inherit-pid-namespace] -- COMMAND [ARG...]\n\n",
          out);
    for (size_t i = 0; i < O_N; i++) {
        char head[64];
        snprintf(head, sizeof head, "%s%s%s", opts[i].name, opts[i].value ? " " : "",
                 opts[i].value ? opts[i].value : "");
        fprintf(out, "  %-28s %s\n", head, opts[i].help);
    }
    fputs("\nExit status: the command's own (128+N when killed by signal N); 2 when the command line\n"
          "or a JSON value is malformed; 1 when the sandbox cannot be set up; 126/127 when the\n"
          "command cannot be executed or found. See doc/codex.md.\n",
          out);
}

static int find_opt(const char *arg, size_t len)
{
    for (int i = 0; i < O_N; i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, arg, len) == 0)
            return i;
    return -1;
}

int cx_parse_args(int argc, char *const argv[], cx_args *out, cordon_error *err)
{
    *out = (cx_args){0};
    bool seen[O_N] = {false};
    int i = 1;
    for (; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(arg, "-h") == 0) {
            out->help = true;
            continue;
        }
        if (arg[0] != '-' || arg[1] == '\0')
            break; /* the command */
        if (arg[1] != '-')
            return err_set(err, CORDON_STAGE_USAGE, 0,
                           "unexpected argument '%s'; the helper's options are long ones (--sandbox-policy-cwd "
                           "DIR ...), see --help",
                           arg);
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        int id = find_opt(arg, len);
        if (id < 0)
            return err_set(err, CORDON_STAGE_USAGE, 0,
                           "unexpected argument '%.*s'; to pass it to the command, put it after '--' (see "
                           "--help)",
                           (int)len, arg);
        if (seen[id])
            return err_set(err, CORDON_STAGE_USAGE, 0, "the argument '%s' cannot be used multiple times",
                           opts[id].name);
        seen[id] = true;
        const char *value = NULL;
        if (opts[id].value) {
            if (eq)
                value = eq + 1;
            else if (i + 1 < argc)
                value = argv[++i];
            else
                return err_set(err, CORDON_STAGE_USAGE, 0, "a value is required for '%s <%s>' but none was supplied",
                               opts[id].name, opts[id].value);
        } else if (eq) {
            return err_set(err, CORDON_STAGE_USAGE, 0, "unexpected value '%s' for '%s': it is a switch", eq + 1,
                           opts[id].name);
        }
        switch ((opt_id)id) {
        case O_POLICY_CWD: out->policy_cwd = value; break;
        case O_COMMAND_CWD: out->command_cwd = value; break;
        case O_PERMISSION_PROFILE: out->permission_profile = value; break;
        case O_SANDBOX_POLICY: out->sandbox_policy = value; break;
        case O_MANAGED_NETWORK: out->managed_network = value; break;
        case O_ALLOW_NETWORK_FOR_PROXY: out->allow_network_for_proxy = true; break;
        case O_NO_PROC: out->no_proc = true; break;
        case O_USE_LEGACY_LANDLOCK: out->use_legacy_landlock = true; break;
        case O_INHERIT_PID_NAMESPACE: out->inherit_pid_namespace = true; break;
        case O_EXPLAIN: out->explain = true; break;
        case O_HELP: out->help = true; break;
        case O_N: break;
        }
    }
    out->command = i < argc ? &argv[i] : NULL;
    if (out->help)
        return 0;
    if (!out->policy_cwd)
        return err_set(err, CORDON_STAGE_USAGE, 0,
                       "the following required argument was not provided: --sandbox-policy-cwd <DIR>");
    if (!*out->policy_cwd)
        return err_set(err, CORDON_STAGE_USAGE, 0, "--sandbox-policy-cwd: an empty path");
    if (out->permission_profile && out->sandbox_policy)
        return err_set(err, CORDON_STAGE_USAGE, 0,
                       "--permission-profile and --sandbox-policy cannot be used together: give one");
    if (out->managed_network && out->allow_network_for_proxy)
        return err_set(err, CORDON_STAGE_USAGE, 0,
                       "--managed-network and --allow-network-for-proxy cannot be used together: give one");
    return 0;
}
