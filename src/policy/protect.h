/* What cordon protects by itself, whatever the rules say (CONTRACT, "Always"):
 *
 * - at the top of every writable path: .git/hooks, .git/config and
 *   .git/config.worktree (also in the directory a .git file's "gitdir:" names, its
 *   commondir, and every repository below .git/modules) stay read-only, so git add and
 *   git commit work but no hook or config can be planted to run outside the sandbox
 *   the next time a person uses git; .cordon, .codex, .agents and the --protect names
 *   are read-only; a rule granting write on exactly that path lifts the protection;
 * - under --base host, when the caller's real home is visible: the usual credential
 *   stores are hidden unless a rule names them exactly; every other user's home is
 *   hidden unless a rule names it (or /home).
 *
 * Adds rules of origin ORIGIN_PROTECT; called by resolve_policy() once the winning
 * rules are known. */
#pragma once
#include "policy/resolve.h"

int protect_expand(resolved *r, cordon_error *err);

/* The names protected at the top of every writable path (CONTRACT): .cordon .codex
 * .agents .claude .mcp.json .vscode .idea .gitmodules. */
extern const char *const protect_default_names[];
extern const size_t protect_n_default_names;
