// SPDX-License-Identifier: Apache-2.0
/* `cordon workspace SUBCOMMAND`: copy-on-write workspaces, a thin layer over the
 * cordon_workspace_* calls of libcordon. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

#define EXIT_CONFLICT 1

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cordon: ", stderr);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("; see `cordon help workspace`\n", stderr);
    return CORDON_EXIT_SETUP;
}

void help_workspace(FILE *out)
{
    fputs("usage: cordon workspace SUBCOMMAND ...\n"
          "\n"
          "Copy-on-write workspaces: a writable view of a directory whose changes land in a\n"
          "private layer; the directory is never written until `integrate`.\n"
          "\n"
          "  create NAME --source DIR [--backend B] [--settings FILE]\n"
          "        make a workspace; B is auto (default: kernel, then fuse, then copy: the\n"
          "        first that works is kept and printed), kernel, fuse, copy, worktree (a git\n"
          "        worktree on branch cordon/NAME), none (DIR itself); the settings'\n"
          "        orchestration.isolation (\"overlayfs\", \"worktree\", \"none\") is the default\n"
          "  run NAME [RUN OPTIONS] [--] COMMAND [ARG...]\n"
          "        run COMMAND as `cordon run` does, with the view shown at DIR's own path\n"
          "        (every run option but --workspace/--no-workspace; `cordon help run`)\n"
          "  diff NAME [--name-status]\n"
          "        the changes against DIR as it is now: a unified diff (git apply takes it),\n"
          "        or one \"A|M|D<TAB>path\" line each; .git is never part of them\n"
          "  integrate NAME [-m MESSAGE] [--force]\n"
          "        write the changes into DIR (the workspace's version wins) and, for a git\n"
          "        repository, make exactly one commit on its current branch (none when\n"
          "        nothing changed); worktree: a merge, or the conflicting paths and nothing\n"
          "        changed (exit 1).  A file of DIR's that the integration would overwrite\n"
          "        and that was changed in DIR since the workspace took it (and, in a git\n"
          "        repository, not committed) is refused with its name (exit 125);\n"
          "        --force overwrites it, its version kept in the workspace's directory\n"
          "  list                  the workspaces\n"
          "  status NAME           backend, source, whether it is ready; finishes an\n"
          "                        interrupted integration\n"
          "  restore NAME          mount a fuse view again (after a reboot); never copies again\n"
          "  remove NAME           unmount, delete the layers and the state\n"
          "\n"
          "Every subcommand takes --root STATE: where workspaces live (default\n"
          "$XDG_STATE_HOME/cordon/workspaces, else ~/.local/state/cordon/workspaces).\n"
          "\n"
          "exit status: 0; 1 integrate found conflicts; 125 an error (stderr says what and how\n"
          "to fix it); run: as `cordon run`.\n",
          out);
}

typedef struct ws_args {
    const char *root;
    const char *name;
    const char *source;
    const char *backend;
    const char *settings;
    const char *message;
    bool name_status;
    bool force;
    bool help;
} ws_args;

/* Options of the subcommands other than run. */
static int parse(int argc, char **argv, ws_args *a, const char *allowed, bool need_name)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        const char *val = NULL;
        const char *eq = strchr(arg, '=');
        char opt[64];
        snprintf(opt, sizeof opt, "%.*s", (int)(eq && arg[0] == '-' ? (size_t)(eq - arg) : strlen(arg)), arg);
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            a->help = true;
            continue;
        }
        if (arg[0] != '-') {
            if (a->name)
                return usage_error("unexpected argument '%s'", arg);
            a->name = arg;
            continue;
        }
        bool takes = strcmp(opt, "--root") == 0 || strcmp(opt, "--source") == 0 || strcmp(opt, "--backend") == 0 ||
                     strcmp(opt, "--settings") == 0 || strcmp(opt, "-m") == 0 || strcmp(opt, "--message") == 0;
        char key[80];
        snprintf(key, sizeof key, " %s ", opt);
        if (!strstr(allowed, key) && strcmp(opt, "--root") != 0)
            return usage_error("unknown option '%s' here", opt);
        if (takes) {
            if (eq && arg[0] == '-')
                val = eq + 1;
            else if (i + 1 < argc)
                val = argv[++i];
            else
                return usage_error("%s needs a value", opt);
        } else if (eq) {
            return usage_error("%s takes no value", opt);
        }
        if (strcmp(opt, "--root") == 0)
            a->root = val;
        else if (strcmp(opt, "--source") == 0)
            a->source = val;
        else if (strcmp(opt, "--backend") == 0)
            a->backend = val;
        else if (strcmp(opt, "--settings") == 0)
            a->settings = val;
        else if (strcmp(opt, "-m") == 0 || strcmp(opt, "--message") == 0)
            a->message = val;
        else if (strcmp(opt, "--name-status") == 0)
            a->name_status = true;
        else if (strcmp(opt, "--force") == 0)
            a->force = true;
    }
    if (!a->help && need_name && !a->name)
        return usage_error("%s: which workspace? give its NAME", "cordon workspace");
    return 0;
}

static int open_ws(const ws_args *a, cordon_workspace **ws)
{
    cordon_error err = {0};
    if (cordon_workspace_open(a->root, a->name, ws, &err) < 0) {
        cli_print_error(&err);
        return -1;
    }
    return 0;
}

/* A subcommand's arguments parsed; false when it is done already (its help printed, or a
 * usage error): *code is then its exit status. */
static bool begin(int argc, char **argv, ws_args *a, const char *opts, bool need_name, int *code)
{
    *code = 0;
    if (parse(argc, argv, a, opts, need_name) != 0) {
        *code = CORDON_EXIT_SETUP;
        return false;
    }
    if (a->help) {
        help_workspace(stdout);
        return false;
    }
    return true;
}

static int cmd_create(int argc, char **argv)
{
    ws_args a = {0};
    int code = 0;
    if (!begin(argc, argv, &a, " --source --backend --settings ", true, &code))
        return code;
    cordon_error err = {0};
    cordon_ws_backend b = CORDON_WS_AUTO;
    if (a.backend) {
        if (cordon_ws_backend_from_string(a.backend, &b, &err) < 0) {
            cli_print_error(&err);
            return CORDON_EXIT_SETUP;
        }
    } else if (a.settings) {
        int r = cordon_settings_workspace_backend(a.settings, &b, &err);
        if (r < 0) {
            cli_print_error(&err);
            return CORDON_EXIT_SETUP;
        }
    }
    if (!a.source)
        return usage_error("%s needs --source DIR", "cordon workspace create");
    cordon_workspace *ws = NULL;
    if (cordon_workspace_create(a.root, a.name, a.source, b, &ws, &err) < 0) {
        cli_print_error(&err);
        return CORDON_EXIT_SETUP;
    }
    if (cordon_workspace_notes(ws))
        fprintf(stderr, "cordon: workspace %s: not used: %s\n", a.name, cordon_workspace_notes(ws));
    printf("workspace %s: backend %s, source %s\n", cordon_workspace_name(ws),
           cordon_ws_backend_name(cordon_workspace_backend(ws)), cordon_workspace_source(ws));
    cordon_workspace_free(ws);
    return 0;
}

/* --root STATE among the run options (before the command): taken out of argv. */
static int take_root(int *argc, char **argv, const char **root)
{
    int out = 0, i = 0;
    bool done = false;
    for (; i < *argc; i++) {
        char *arg = argv[i];
        if (done) {
            argv[out++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0 || arg[0] != '-' || arg[1] == '\0') {
            done = true;
            argv[out++] = arg;
            continue;
        }
        if (strcmp(arg, "--root") == 0) {
            if (i + 1 >= *argc)
                return usage_error("%s needs a value", "--root");
            *root = argv[++i];
            continue;
        }
        if (strncmp(arg, "--root=", 7) == 0) {
            *root = arg + 7;
            continue;
        }
        argv[out++] = arg;
        /* an option's value is not the command */
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
        for (const option_def *o = run_options; o->name; o++)
            if (!eq && o->argname && strlen(o->name) == len && strncmp(o->name, arg, len) == 0 && i + 1 < *argc) {
                argv[out++] = argv[++i];
                break;
            }
    }
    *argc = out;
    argv[out] = NULL; /* the command is argv's NULL-terminated tail */
    return 0;
}

static int cmd_run_ws(int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-') {
        if (argc >= 1 && (strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0)) {
            help_workspace(stdout);
            return 0;
        }
        return usage_error("%s: which workspace? cordon workspace run NAME [OPTIONS] -- COMMAND", "run");
    }
    ws_args a = {.name = argv[0]};
    argc--;
    argv++;
    if (take_root(&argc, argv, &a.root) != 0)
        return CORDON_EXIT_SETUP;
    run_args r = {.pol = cordon_policy_new()};
    cordon_error err = {0};
    cordon_result res = {.exit_code = CORDON_EXIT_SETUP, .status_code = -1};
    int code = CORDON_EXIT_SETUP;
    cordon_workspace *ws = NULL;
    if (parse_run_args(argc, argv, &r, true, &err) < 0) {
        cli_print_error(&err);
    } else if (r.help) {
        help_workspace(stdout);
        code = 0;
    } else if (open_ws(&a, &ws) == 0) {
        if (cordon_workspace_run(ws, r.pol, r.command, &res, &err) < 0)
            cli_print_error(&err);
        else if (res.timed_out)
            fprintf(stderr, "cordon: timed out after %s seconds (--timeout); the sandbox was killed\n",
                    r.timeout ? r.timeout : "?");
        cli_print_refusals(&res);
        code = res.exit_code;
    }
    if (r.status_json) {
        cordon_error e2 = {0};
        if (cordon_write_status_json(r.status_json, &res, &err, &e2) < 0) {
            cli_print_error(&e2);
            if (code == 0)
                code = CORDON_EXIT_SETUP;
        }
    }
    cordon_result_free(&res);
    cordon_workspace_free(ws);
    cordon_policy_free(r.pol);
    return code;
}

static int cmd_diff(int argc, char **argv)
{
    ws_args a = {0};
    int code = 0;
    if (!begin(argc, argv, &a, " --name-status ", true, &code))
        return code;
    cordon_workspace *ws;
    if (open_ws(&a, &ws) < 0)
        return CORDON_EXIT_SETUP;
    cordon_error err = {0};
    char *text = NULL;
    if (cordon_workspace_diff(ws, a.name_status ? CORDON_WS_DIFF_NAME_STATUS : 0, &text, &err) < 0) {
        cli_print_error(&err);
        code = CORDON_EXIT_SETUP;
    } else {
        fputs(text, stdout);
        cordon_free(text);
    }
    cordon_workspace_free(ws);
    if (fflush(stdout) != 0 && code == 0) {
        fprintf(stderr, "cordon: cannot write the diff: %s\n", strerror(errno));
        code = CORDON_EXIT_SETUP;
    }
    return code;
}

static int cmd_integrate(int argc, char **argv)
{
    ws_args a = {0};
    int code = 0;
    if (!begin(argc, argv, &a, " -m --message --force ", true, &code))
        return code;
    cordon_workspace *ws;
    if (open_ws(&a, &ws) < 0)
        return CORDON_EXIT_SETUP;
    cordon_error err = {0};
    cordon_ws_integrated res = {0};
    int r = cordon_workspace_integrate(ws, a.message, a.force ? CORDON_WS_INTEGRATE_FORCE : 0, &res, &err);
    if (res.recovered)
        fprintf(stderr, "cordon: workspace %s: an interrupted integration was finished first\n", a.name);
    /* the paths are names the command chose: quoted, never raw to the terminal */
    for (size_t i = 0; i < res.skipped.n; i++) {
        char *q = cordon_quote_path(res.skipped.v[i].path);
        fprintf(stderr, "cordon: warning: not integrated: %s (%s)\n", q,
                "a protected name (agent or tool configuration) or a special file; copy it by hand if you mean it");
        cordon_free(q);
    }
    if (r < 0) {
        cli_print_error(&err);
        code = CORDON_EXIT_SETUP;
    } else if (r == 1) {
        fprintf(stderr, "cordon: workspace %s: the merge into %s conflicts in:\n", a.name, cordon_workspace_source(ws));
        for (size_t i = 0; i < res.conflicts.n; i++) {
            char *q = cordon_quote_path(res.conflicts.v[i].path);
            fprintf(stderr, "cordon:   %s\n", q);
            cordon_free(q);
        }
        fprintf(stderr,
                "cordon: nothing was changed; resolve them on branch cordon/%s (or in the source) and "
                "integrate again\n",
                a.name);
        code = EXIT_CONFLICT;
    } else if (cordon_workspace_saved(ws)) {
        /* --force overwrote the source's own changes: where they are now */
        fprintf(stderr,
                "cordon: workspace %s: --force overwrote %zu file%s changed in %s since the workspace took it; "
                "the source's version%s from before %s kept in %s (until `cordon workspace remove %s`)\n",
                a.name, res.conflicts.n, res.conflicts.n == 1 ? "" : "s", cordon_workspace_source(ws),
                res.conflicts.n == 1 ? "" : "s", res.conflicts.n == 1 ? "is" : "are", cordon_workspace_saved(ws),
                a.name);
    }
    if (r < 0 || r == 1) {
        /* said above */
    } else if (res.added + res.modified + res.deleted == 0) {
        printf("workspace %s: nothing to integrate\n", a.name);
    } else {
        printf("workspace %s: integrated %zu added, %zu modified, %zu deleted into %s", a.name, res.added, res.modified,
               res.deleted, cordon_workspace_source(ws));
        if (res.committed)
            printf("; commit %.12s on %s", res.commit, res.branch);
        putchar('\n');
    }
    cordon_ws_integrated_free(&res);
    cordon_workspace_free(ws);
    return code;
}

static int cmd_simple(const char *sub, int argc, char **argv)
{
    ws_args a = {0};
    bool list = strcmp(sub, "list") == 0;
    int code = 0;
    if (!begin(argc, argv, &a, " ", !list, &code))
        return code;
    cordon_error err = {0};
    if (list) {
        if (a.name)
            return usage_error("unexpected argument '%s'", a.name);
        char **names;
        size_t n;
        if (cordon_workspace_list(a.root, &names, &n, &err) < 0) {
            cli_print_error(&err);
            return CORDON_EXIT_SETUP;
        }
        for (size_t i = 0; i < n; i++) {
            cordon_workspace *ws;
            cordon_error e = {0};
            if (cordon_workspace_open(a.root, names[i], &ws, &e) < 0) {
                char *why = cli_safe_text(e.message);
                printf("%s\t?\t(%s)\n", names[i], why ? why : "");
                free(why);
                continue;
            }
            printf("%s\t%s\t%s\n", names[i], cordon_ws_backend_name(cordon_workspace_backend(ws)),
                   cordon_workspace_source(ws));
            cordon_workspace_free(ws);
        }
        cordon_ws_names_free(names, n);
        return 0;
    }
    if (strcmp(sub, "remove") == 0) {
        if (cordon_workspace_remove(a.root, a.name, &err) < 0) {
            cli_print_error(&err);
            return CORDON_EXIT_SETUP;
        }
        printf("workspace %s: removed\n", a.name);
        return 0;
    }
    cordon_workspace *ws;
    if (open_ws(&a, &ws) < 0)
        return CORDON_EXIT_SETUP;
    if (strcmp(sub, "restore") == 0) {
        if (cordon_workspace_restore(ws, &err) < 0) {
            cli_print_error(&err);
            code = CORDON_EXIT_SETUP;
        } else {
            printf("workspace %s: %s, ready\n", a.name, cordon_ws_backend_name(cordon_workspace_backend(ws)));
        }
    } else {
        cordon_ws_status s;
        if (cordon_workspace_status(ws, &s, &err) < 0) {
            cli_print_error(&err);
            code = CORDON_EXIT_SETUP;
        } else {
            const char *view = cordon_workspace_view(ws);
            printf("name     %s\nbackend  %s\nsource   %s\nstate    %s\nview     %s\n", cordon_workspace_name(ws),
                   cordon_ws_backend_name(cordon_workspace_backend(ws)), cordon_workspace_source(ws),
                   cordon_workspace_dir(ws), view ? view : "(inside its runs only)");
            cordon_ws_changes ch = {0};
            cordon_error e2 = {0};
            if (s.ready && cordon_workspace_changes(ws, &ch, &e2) == 0)
                printf("changes  %zu\n", ch.n);
            cordon_ws_changes_free(&ch);
            char *detail = cli_safe_text(s.detail); /* it may name the command's files */
            printf("in use   %s\nstatus   %s%s%s\n", s.in_use ? "yes (a run)" : "no", s.ready ? "ready" : "not ready",
                   s.detail[0] ? ": " : "", detail ? detail : "");
            free(detail);
            if (!s.ready)
                code = CORDON_EXIT_SETUP;
        }
    }
    cordon_workspace_free(ws);
    return code;
}

int cmd_workspace(int argc, char **argv)
{
    if (argc < 1) {
        help_workspace(stderr);
        return CORDON_EXIT_SETUP;
    }
    const char *sub = argv[0];
    if (strcmp(sub, "--help") == 0 || strcmp(sub, "-h") == 0 || strcmp(sub, "help") == 0) {
        help_workspace(stdout);
        return 0;
    }
    if (strcmp(sub, "create") == 0)
        return cmd_create(argc - 1, argv + 1);
    if (strcmp(sub, "run") == 0)
        return cmd_run_ws(argc - 1, argv + 1);
    if (strcmp(sub, "diff") == 0)
        return cmd_diff(argc - 1, argv + 1);
    if (strcmp(sub, "integrate") == 0)
        return cmd_integrate(argc - 1, argv + 1);
    if (strcmp(sub, "list") == 0 || strcmp(sub, "status") == 0 || strcmp(sub, "restore") == 0 ||
        strcmp(sub, "remove") == 0)
        return cmd_simple(sub, argc - 1, argv + 1);
    fprintf(stderr,
            "cordon: unknown workspace subcommand '%s'; subcommands are create, run, diff, integrate, "
            "list, status, restore, remove\n",
            sub);
    return CORDON_EXIT_SETUP;
}
