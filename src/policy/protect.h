// SPDX-License-Identifier: Apache-2.0
/* What cordon protects by itself, whatever the rules say (README, "Workspace protection"
 * and "The home and the host"):
 *
 * - at the top of every writable path: .git/hooks, .git/config and
 *   .git/config.worktree (also in the directory a .git file's "gitdir:" names, its
 *   commondir, and every repository below .git/modules) stay read-only, so git add and
 *   git commit work but no hook or config can be planted to run outside the sandbox
 *   the next time a person uses git; .cordon, .codex, .agents and the --protect names
 *   are read-only; a rule granting write on exactly that path lifts the protection;
 * - wherever the view shows the caller's home (a rule on it or above it): the credential
 *   stores of sensitive.c are hidden unless a rule names them exactly; wherever it is
 *   writable, its start-up files (sensitive.c) stay read-only and cannot be created;
 *   every other user's home is hidden unless a rule names it (or /home); --hide paths
 *   are hidden like the credential stores;
 * - under --base host: /run, /var/run and $XDG_RUNTIME_DIR (the host's service sockets)
 *   are hidden unless a rule shows them;
 * - a writable workspace that is the home, "/" or above the home is refused unless
 *   --allow names it;
 * - protect_pin: the directories between a writable path and a hidden or read-only one
 *   below it are pinned, so that they cannot be renamed away.
 *
 * Adds rules of origin ORIGIN_PROTECT; called by resolve_policy() once the winning
 * rules are known.  Uses the rule set of rules.h, never resolve.c itself. */
#pragma once
#include "policy/policy.h"
#include "policy/rules.h"

/* `p`: the --protect names, and the workspace flags and --allow rules the home check reads. */
int protect_expand(resolved *r, const struct cordon_policy *p, cordon_error *err);

/* The names protected at the top of every writable path (README, "Workspace
 * protection"): .cordon .codex .agents .claude .mcp.json .vscode .idea .gitmodules. */
extern const char *const protect_default_names[];
extern const size_t protect_n_default_names;
/* Once the rules are sorted again: pin every directory between a writable directory and a
 * hidden or read-only path below it (so that it cannot be renamed away). */
int protect_pin(resolved *r, cordon_error *err);
