// SPDX-License-Identifier: Apache-2.0
/* The command line: argument tables and subcommands, nothing else.  Every run option
 * is one row of run_options[]; help.c prints the same table, so --help cannot drift. */
#pragma once
#include <stdbool.h>
#include <stdio.h>

#include "cordon.h"

typedef struct run_args {
    cordon_policy *pol;
    const char *status_json;
    const char *timeout; /* as given, for messages */
    char **command;      /* NULL-terminated, points into argv */
    int tty;             /* --tty 1, --no-tty 0, neither -1 */
    bool explain;        /* parsing for `cordon explain` (set by the caller) */
    bool json, verbose;  /* explain --json, --verbose */
    bool help;
} run_args;

typedef int (*opt_fn)(run_args *a, const char *value, cordon_error *err);

typedef struct option_def {
    const char *name;    /* "--allow" */
    const char *argname; /* "PATH", or NULL for a switch */
    opt_fn fn;
    const char *help;
    bool explain_only; /* an option of `cordon explain`, not of `cordon run` */
} option_def;

extern const option_def run_options[];

/* The command line's own errors (stage "usage"), and context added to the library's:
 * "--base: previous message".  Both return -1. */
int cli_fail(cordon_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_wrap(cordon_error *err, const char *context);
/* The flag(s) for a library option name ("dataRoot" -> "--data-root DIR"), into buf. */
void cli_option_flags(const char *option, char *buf, size_t n);

/* Parse argv (after the subcommand word).  Returns 0, or -1 with err filled. */
int parse_run_args(int argc, char **argv, run_args *a, bool command_required, cordon_error *err);

/* tty.c: --tty.  Is it on (tty as parsed: 1, 0, -1 for "when stdin and stdout are
 * terminals")?  Run the command on a terminal of its own relayed to cordon's; returns as
 * run_forwarding() does. */
bool cli_tty_wanted(int tty);
int cli_run_tty(const cordon_policy *pol, char **command, cordon_result *res, cordon_error *err);
/* The relay alone, for a process started otherwise (`cordon session exec --tty`): its
 * signal handlers (before the start: a signal meanwhile is delivered once the process is
 * there), then relay c's terminal (cordon_proc_pty) to cordon's until c ends, and wait for
 * it; returns cordon_proc_wait's value, with cordon's terminal restored. */
void cli_tty_prepare(void);
int cli_tty_relay(cordon_proc *c, cordon_result *res, cordon_error *err);

void help_main(FILE *out);
void help_run(FILE *out, const char *cmd);
void help_check(FILE *out);
void help_install_bwrap(FILE *out);
/* `cordon check [--json]` (check.c); returns the exit status. */
int cmd_check(int argc, char **argv);
/* `cordon install-bwrap DIR` (install_bwrap.c) */
int cmd_install_bwrap(int argc, char **argv);
/* `cordon workspace SUBCOMMAND ...` (workspace.c); returns the exit status. */
int cmd_workspace(int argc, char **argv);
void help_workspace(FILE *out);
/* `cordon session ...` (session.c); returns the exit status. */
int cmd_session(int argc, char **argv);
void help_session(FILE *out);
/* report.c: the library's error as the command line prints it ("cordon: message
 * (--flag)"), into buf; and printed on stderr. */
void cli_error_text(const cordon_error *err, char *buf, size_t n);
/* Text that may carry a name the command chose (a status's detail), safe to print: quoted
 * whole as names are (cordon_quote_path) when it holds a control character, else a copy.
 * free() it; NULL only when memory ran out. */
char *cli_safe_text(const char *s);
void cli_print_error(const cordon_error *err);
/* What the creation control refused in a run that ended, one stderr line each (the
 * command itself only saw EPERM). */
void cli_print_refusals(const cordon_result *res);
/* `cordon help [COMMAND]`; returns the exit status. */
int help_command(const char *topic, FILE *out);
