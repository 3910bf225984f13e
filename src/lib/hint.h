// SPDX-License-Identifier: Apache-2.0
/* A command the host has that the sandbox does not show (doc/guide-run.md, "Toolchains in
 * the home"): `cargo` in ~/.cargo/bin, pyenv's python3.  Worked out on the host before the
 * run, from the resolved rules and the command's own PATH. */
#pragma once
#include "plan/plan.h"

typedef struct cmd_hint {
    char *warning; /* the host's cmd is hidden and another one will run instead: say so
                    * before the run; or NULL */
    char *missing; /* the host's cmd is hidden and nothing else in PATH is shown: to add to
                    * the "command not found" of a run that exits 127; or NULL */
} cmd_hint;

/* Fill h (both NULL when there is nothing to say: the host has no such command, or the
 * sandbox shows it, or the run is under --isolation landlock, on the host's own paths). */
void cmd_hint_make(const resolved *r, const plan *p, char *const env[], const char *cmd, cmd_hint *h);
void cmd_hint_free(cmd_hint *h);
