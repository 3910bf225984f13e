// SPDX-License-Identifier: Apache-2.0
#include <string.h>

#include "cli.h"

void help_main(FILE *out)
{
    fputs("usage: cordon COMMAND [ARGS]\n"
          "\n"
          "Run commands in a fresh, minimal, unprivileged Linux sandbox.\n"
          "\n"
          "commands:\n"
          "  run [OPTIONS] [--] COMMAND [ARG...]   run COMMAND confined\n"
          "  explain [OPTIONS] [-- COMMAND...]     print the resolved rules and the mount plan; runs nothing\n"
          "  check [--json]                        say whether this host can run the default sandbox\n"
          "  workspace SUBCOMMAND ...              copy-on-write workspaces (`cordon help workspace`)\n"
          "  session start|exec|list|stop ...      one sandbox for many commands (`cordon help session`)\n"
          "  bwrap [OPTIONS] [--] COMMAND [ARG...] bubblewrap's command line (`cordon bwrap --help`)\n"
          "  install-bwrap DIR                     cordon's bwrap as DIR/bwrap, for Codex and sandbox-runtime\n"
          "  help [COMMAND]                        show help for a command\n"
          "  --version                             print the version\n"
          "\n"
          "`cordon help run` lists every option; `man cordon` says more. Through a link named\n"
          "codex-linux-sandbox, cordon speaks Codex's sandbox helper (codex-linux-sandbox --help);\n"
          "through a link named bwrap, bubblewrap's command line.\n",
          out);
}

#define HELP_LEFT  28 /* width of the option column */
#define HELP_WIDTH 79 /* the lines of `cordon help run` */

/* text from column HELP_LEFT + 3 on, wrapped at word boundaries to HELP_WIDTH */
static void print_wrapped(FILE *out, const char *text)
{
    const size_t room = HELP_WIDTH - (HELP_LEFT + 3);
    size_t col = 0;
    for (const char *p = text; *p;) {
        size_t w = strcspn(p, " ");
        if (col > 0 && col + 1 + w > room) {
            fprintf(out, "\n%*s", HELP_LEFT + 3, "");
            col = 0;
        } else if (col > 0) {
            fputc(' ', out);
            col++;
        }
        fprintf(out, "%.*s", (int)w, p);
        col += w;
        p += w;
        while (*p == ' ')
            p++;
    }
    fputc('\n', out);
}

void help_run(FILE *out, const char *cmd)
{
    fprintf(out, "usage: cordon %s [OPTIONS] [--] %s\n\n", cmd,
            strcmp(cmd, "explain") == 0 ? "[COMMAND [ARG...]]" : "COMMAND [ARG...]");
    if (strcmp(cmd, "explain") == 0)
        fputs("Print the policy, the resolved rules and the ordered mount plan that `cordon run`\n"
              "would use with the same options. Runs nothing.\n\n",
              out);
    else
        fputs("Run COMMAND in new user, mount, PID, IPC, UTS, cgroup and (unless --network host)\n"
              "network namespaces, as the caller's uid, with no capabilities, no_new_privs, in a new\n"
              "session. The view is built from a base plus rules; HOME, TMPDIR and /tmp are private.\n\n",
              out);
    fputs("options:\n", out);
    for (const option_def *o = run_options; o->name; o++) {
        if (o->explain_only && strcmp(cmd, "explain") != 0)
            continue;
        char left[96];
        snprintf(left, sizeof left, "%s%s%s", o->name, o->argname ? " " : "", o->argname ? o->argname : "");
        /* a long option and value on a line of its own, the help below it */
        if (strlen(left) > HELP_LEFT)
            fprintf(out, "  %s\n%*s", left, HELP_LEFT + 3, "");
        else
            fprintf(out, "  %-*s ", HELP_LEFT, left);
        print_wrapped(out, o->help);
    }
    fputs("\nRules resolve by specificity: the rule on the longest matching path wins; at equal\n"
          "length deny beats write beats read. So --allow /repo --deny /repo/a --allow /repo/a/b\n"
          "leaves /repo writable, /repo/a hidden and /repo/a/b writable again.\n"
          "\n"
          "exit status: the command's own; 128+N if killed by signal N; 124 timeout;\n"
          "125 cordon failed before the command started; 126 not executable; 127 not found.\n",
          out);
}

void help_check(FILE *out)
{
    fputs("usage: cordon check [--json]\n\n"
          "Say what this host supports: user namespaces (and if not, why), seccomp, pidfd,\n"
          "a /proc of the sandbox's own (a container masks /proc), Landlock, overlayfs in a\n"
          "user namespace, fuse-overlayfs, the cgroups for --limit-*, --isolation landlock;\n"
          "for what is missing, the fix. Each probe is killed after 500 ms. Then run the\n"
          "default sandbox as `cordon run` would and say the mode it ran in (namespaces;\n"
          "namespaces-kept-proc: the container's /proc; landlock) and how to get the full\n"
          "one: exit 0 when it works, 1 when not (doc/kubernetes.md: containers and pods).\n"
          "\n"
          "  --json   the same as JSON: default_sandbox, error, mode, mode_detail, mode_fix, and\n"
          "           checks.NAME.{ok, required, detail, fix} (checks.landlock.abi too); see\n"
          "           the README or `man cordon`\n",
          out);
}

void help_install_bwrap(FILE *out)
{
    fputs("usage: cordon install-bwrap DIR\n\n"
          "Put cordon's bwrap (bubblewrap's command line, doc/bwrap.md) at DIR/bwrap for the\n"
          "current user: a hard link to this cordon, else a copy; never a symbolic link, which\n"
          "Codex resolves and then takes for something else than bwrap. DIR and its parents are\n"
          "made if missing; a DIR/bwrap that is not cordon (the system's bubblewrap) is left\n"
          "alone and refused.\n"
          "DIR must come before /usr/bin on PATH (e.g. ~/.local/bin); `cordon check` says\n"
          "whether it does. Set CORDON_BWRAP_EXACT=1 to turn cordon's additions off.\n",
          out);
}

int help_command(const char *topic, FILE *out)
{
    if (!topic) {
        help_main(out);
        return 0;
    }
    if (strcmp(topic, "run") == 0 || strcmp(topic, "explain") == 0) {
        help_run(out, topic);
        return 0;
    }
    if (strcmp(topic, "check") == 0) {
        help_check(out);
        return 0;
    }
    if (strcmp(topic, "install-bwrap") == 0) {
        help_install_bwrap(out);
        return 0;
    }
    if (strcmp(topic, "workspace") == 0) {
        help_workspace(out);
        return 0;
    }
    if (strcmp(topic, "session") == 0) {
        help_session(out);
        return 0;
    }
    if (strcmp(topic, "help") == 0) {
        help_main(out);
        return 0;
    }
    fprintf(stderr, "cordon: no help for '%s'; commands are run, explain, check, workspace, session\n", topic);
    return CORDON_EXIT_SETUP;
}
