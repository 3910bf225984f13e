// SPDX-License-Identifier: Apache-2.0
/* Unit tests for what cordon protects by itself (src/policy/protect.c), through
 * resolve_policy() and plan_build():
 *
 * - atop every writable directory: .git/hooks, .git/config, .git/config.worktree (also
 *   through a .git file's gitdir: and its commondir, and in .git/modules/...), .cordon,
 *   .codex, .agents and the --protect names; existing ones become read-only rules,
 *   missing ones hidden rules that the plan holds with a stub; config.worktree is not
 *   held where missing; a user rule granting write on exactly the (existing) path lifts
 *   it; a rule on a missing path protects nothing; the .git file of a worktree or a
 *   submodule is itself read-only; paths are looked up where they really are ('..' and
 *   symlinks in a gitdir resolved), and a symlink crossed inside a writable path fails
 *   closed;
 * - pins: every directory between a writable root and a protected or stub-held path is
 *   bound onto itself (a WRITE rule with rrule.pin, a bind-rw with plan_op.pin) so that
 *   it cannot be renamed away (`mv .git .git-old; mkdir -p .git/hooks`); checked per
 *   row, and as a property of every plan: no protected mount point, nor any directory
 *   above it, can be renamed inside a host-writable bind;
 * - under --base host, when a rule shows the real home: the credential stores are hidden
 *   unless a rule names them; every other user's home is hidden unless a rule names it
 *   (or /home).
 *
 * The workspace fixtures are a table (one test per row, built in a fresh mkdtemp()
 * directory, canonicalised, removed afterwards); "{D}" in a file's content, a link's
 * target or an expected source stands for that directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plan/plan.h"
#include "policy/policy.h"
#include "policy/gitconfig.h"
#include "policy/protect.h"
#include "policy/resolve.h"
#include "policy/sensitive.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"

#include "fixture.h"

/* ---- the table -------------------------------------------------------------------- */

typedef enum fkind { F_END = 0, F_DIR, F_FILE, F_LINK } fkind;
typedef struct fent {
    fkind kind;
    const char *path; /* relative to the fixture directory */
    const char *text; /* F_FILE: content; F_LINK: target ({D} = the fixture directory) */
} fent;

typedef enum xkind {
    X_END = 0,
    X_HELD,    /* a protect rule hiding a missing path; the plan holds it with a stub */
    X_RO,      /* a protect rule keeping an existing path read-only; a read-only bind */
    X_PIN,     /* a pin: a writable protect rule on an existing directory between a
                * writable root and what it holds; a bind-rw of itself that stays */
    X_NOTHING, /* no protect rule at the path */
} xkind;

/* What resolved_lookup() gives at the path (checked for X_NOTHING; the others imply it). */
typedef enum lk { LK_ANY = 0, LK_WRITE, LK_READ, LK_HIDDEN, LK_UNCOVERED } lk;

typedef struct expect {
    xkind kind;
    const char *path; /* relative */
    lk lookup;
    const char *source; /* the rule's exact source ({D} substituted), when given */
} expect;

typedef struct pcase {
    const char *name;
    fent files[20];
    const char *allow[4];    /* writable rules, relative */
    const char *allow_ro[4]; /* read-only rules */
    const char *deny[4];
    const char *protect[4]; /* --protect NAME */
    bool read_only;
    expect ex[24];
    int n_protect;        /* exact number of protect rules (pins included); -1: not checked */
    const char *fails[3]; /* resolve fails and the message holds these */
    const char *sealed;   /* hidden by a user rule: nothing cordon adds at or below it,
                              * no bind below it, everything below it hidden */
} pcase;

#define WS_NAMES_HELD                                                                                          \
    {X_HELD, "ws/.cordon", 0}, {X_HELD, "ws/.codex", 0}, {X_HELD, "ws/.agents", 0}, {X_HELD, "ws/.claude", 0}, \
        {X_HELD, "ws/.mcp.json", 0}, {X_HELD, "ws/.vscode", 0}, {X_HELD, "ws/.idea", 0},                       \
    {                                                                                                          \
        X_HELD, "ws/.gitmodules", 0                                                                            \
    }
/* The names that joined .cordon .codex .agents at the top of every writable path. */
#define MORE 5

static const pcase cases[] = {
    {
        /* .git is pinned: `mv .git .git-old; mkdir -p .git/hooks` must fail */
        .name = "plain .git directory",
        .files = {{F_DIR, "ws/.git", 0},
                  {F_DIR, "ws/.git/hooks", 0},
                  {F_FILE, "ws/.git/config", "[core]\n"},
                  {F_FILE, "ws/.git/HEAD", "ref: refs/heads/main\n"},
                  {F_DIR, "ws/.git/objects", 0}},
        .ex = {{X_RO, "ws/.git/hooks", 0, "protected git hooks in writable {D}/ws"},
               {X_RO, "ws/.git/config", 0, "protected git config in writable {D}/ws"},
               {X_PIN, "ws/.git", 0, "pinned: holds {D}/ws/.git/hooks"},
               {X_NOTHING, "ws/.git/config.worktree", LK_WRITE}, /* missing: not held */
               {X_NOTHING, "ws/.git/HEAD", LK_WRITE},            /* git commit still works */
               {X_NOTHING, "ws/.git/objects/ab", LK_WRITE},
               {X_NOTHING, "ws/src", LK_WRITE},
               WS_NAMES_HELD},
        .n_protect = 5 + 1 + MORE, /* + the pin on .git */
    },
    {
        /* a stub-held name pins what is above it just the same */
        .name = ".git without hooks: the name is held",
        .files = {{F_DIR, "ws/.git", 0}, {F_FILE, "ws/.git/config", ""}},
        .ex = {{X_HELD, "ws/.git/hooks", 0},
               {X_RO, "ws/.git/config", 0},
               {X_PIN, "ws/.git", 0, "pinned: holds {D}/ws/.git/hooks"},
               {X_NOTHING, "ws/.git/config.worktree", LK_WRITE},
               WS_NAMES_HELD},
        .n_protect = 5 + 1 + MORE,
    },
    {
        .name = ".git with config.worktree, without config",
        .files = {{F_DIR, "ws/.git", 0}, {F_DIR, "ws/.git/hooks", 0}, {F_FILE, "ws/.git/config.worktree", ""}},
        .ex = {{X_RO, "ws/.git/hooks", 0},
               {X_HELD, "ws/.git/config", 0},
               {X_RO, "ws/.git/config.worktree", 0},
               {X_PIN, "ws/.git", 0, "pinned: holds {D}/ws/.git/hooks"},
               WS_NAMES_HELD},
        .n_protect = 6 + 1 + MORE,
    },
    {
        /* a worktree: ws/.git names its git directory, whose commondir names the
         * repository's; the repository's .git is writable (commits write objects there);
         * the .git file itself is read-only (its gitdir: line could be repointed) */
        .name = ".git file: gitdir (relative) and commondir",
        .files = {{F_FILE, "ws/.git", "gitdir: ../real/.git/worktrees/x\n"},
                  {F_DIR, "real", 0},
                  {F_DIR, "real/.git", 0},
                  {F_DIR, "real/.git/hooks", 0},
                  {F_FILE, "real/.git/config", ""},
                  {F_DIR, "real/.git/worktrees", 0},
                  {F_DIR, "real/.git/worktrees/x", 0},
                  {F_FILE, "real/.git/worktrees/x/commondir", "../..\n"},
                  {F_FILE, "real/.git/worktrees/x/HEAD", ""},
                  {F_FILE, "real/.git/worktrees/x/config.worktree", ""}},
        .allow = {"real/.git"},
        .ex = {{X_RO, "ws/.git", 0, "protected git file in writable {D}/ws"},
               {X_HELD, "real/.git/worktrees/x/hooks", 0},
               {X_HELD, "real/.git/worktrees/x/config", 0},
               {X_RO, "real/.git/worktrees/x/config.worktree", 0},
               {X_RO, "real/.git/hooks", 0},
               {X_RO, "real/.git/config", 0},
               /* between the writable real/.git and what is held in the worktree's gitdir */
               {X_PIN, "real/.git/worktrees", 0, "pinned: holds {D}/real/.git/worktrees/x/hooks"},
               {X_PIN, "real/.git/worktrees/x", 0, "pinned: holds {D}/real/.git/worktrees/x/hooks"},
               {X_NOTHING, "real/.git/config.worktree", LK_WRITE},
               {X_NOTHING, "real/.git/worktrees/x/HEAD", LK_WRITE},
               {X_NOTHING, "real/.git/objects", LK_WRITE},
               {X_HELD, "real/.git/.codex", 0}, /* real/.git is a writable directory too */
               WS_NAMES_HELD},
        .n_protect =
            5 + 3 + 3 + 1 + 2 + 2 * MORE + 1 /* commondir kept read-only too */, /* + the .git file, + two pins */
    },
    {
        .name = ".git file: absolute gitdir, commondir absolute, no trailing newline",
        .files = {{F_FILE, "ws/.git", "gitdir:   {D}/gd/wt"},
                  {F_DIR, "gd", 0},
                  {F_DIR, "gd/wt", 0},
                  {F_DIR, "gd/wt/hooks", 0},
                  {F_FILE, "gd/wt/commondir", "{D}/gd/common"},
                  {F_DIR, "gd/common", 0},
                  {F_FILE, "gd/common/config", ""}},
        .allow = {"gd"},
        .ex = {{X_RO, "ws/.git", 0, "protected git file in writable {D}/ws"},
               {X_RO, "gd/wt/hooks", 0},
               {X_HELD, "gd/wt/config", 0},
               {X_HELD, "gd/common/hooks", 0},
               {X_RO, "gd/common/config", 0},
               {X_PIN, "gd/wt", 0, "pinned: holds {D}/gd/wt/hooks"},
               {X_PIN, "gd/common", 0, "pinned: holds {D}/gd/common/hooks"},
               {X_NOTHING, "gd/common/config.worktree", LK_WRITE},
               {X_HELD, "gd/.codex", 0},
               WS_NAMES_HELD},
        .n_protect = 4 + 3 + 3 + 1 + 2 + 2 * MORE + 1 /* commondir kept read-only too */,
    },
    {
        /* the git directory is not writable anyway: nothing to add there */
        .name = ".git file: gitdir outside every writable path",
        .files = {{F_FILE, "ws/.git", "gitdir: {D}/ro/.git"},
                  {F_DIR, "ro", 0},
                  {F_DIR, "ro/.git", 0},
                  {F_DIR, "ro/.git/hooks", 0},
                  {F_FILE, "ro/.git/config", ""}},
        .allow_ro = {"ro"},
        .ex = {{X_RO, "ws/.git", 0, "protected git file in writable {D}/ws"},
               {X_NOTHING, "ro/.git/hooks", LK_READ},
               {X_NOTHING, "ro/.git/config", LK_READ},
               {X_NOTHING, "ro/.git", LK_READ},
               WS_NAMES_HELD},
        .n_protect = 3 + 1 + MORE,
    },
    {
        .name = ".git file without gitdir: only the file is kept read-only",
        .files = {{F_FILE, "ws/.git", "not a git file\n"}},
        .ex = {{X_RO, "ws/.git", 0, "protected git file in writable {D}/ws"},
               {X_NOTHING, "ws/.git/hooks", LK_READ},
               WS_NAMES_HELD},
        .n_protect = 3 + 1 + MORE,
    },
    {
        /* every level from the workspace down to each submodule's git directory */
        .name = "submodules: .git/modules/a and .git/modules/a/modules/b",
        .files = {{F_DIR, "ws/.git", 0},
                  {F_DIR, "ws/.git/hooks", 0},
                  {F_FILE, "ws/.git/config", ""},
                  {F_DIR, "ws/.git/modules", 0},
                  {F_FILE, "ws/.git/modules/README", ""},
                  {F_DIR, "ws/.git/modules/a", 0},
                  {F_DIR, "ws/.git/modules/a/hooks", 0},
                  {F_FILE, "ws/.git/modules/a/config", ""},
                  {F_DIR, "ws/.git/modules/a/modules", 0},
                  {F_DIR, "ws/.git/modules/a/modules/b", 0},
                  {F_FILE, "ws/.git/modules/a/modules/b/config", ""},
                  {F_FILE, "ws/.git/modules/a/modules/b/config.worktree", ""}},
        .ex = {{X_RO, "ws/.git/hooks", 0},
               {X_RO, "ws/.git/config", 0},
               {X_RO, "ws/.git/modules/a/hooks", 0},
               {X_RO, "ws/.git/modules/a/config", 0},
               {X_NOTHING, "ws/.git/modules/a/config.worktree", LK_WRITE},
               {X_HELD, "ws/.git/modules/a/modules/b/hooks", 0},
               {X_RO, "ws/.git/modules/a/modules/b/config", 0},
               {X_RO, "ws/.git/modules/a/modules/b/config.worktree", 0},
               {X_PIN, "ws/.git", 0, "pinned: holds {D}/ws/.git/hooks"},
               {X_PIN, "ws/.git/modules", 0, "pinned: holds {D}/ws/.git/modules/a/hooks"},
               {X_PIN, "ws/.git/modules/a", 0, "pinned: holds {D}/ws/.git/modules/a/hooks"},
               {X_PIN, "ws/.git/modules/a/modules", 0, "pinned: holds {D}/ws/.git/modules/a/modules/b/hooks"},
               {X_PIN, "ws/.git/modules/a/modules/b", 0, "pinned: holds {D}/ws/.git/modules/a/modules/b/hooks"},
               {X_NOTHING, "ws/.git/modules/README", LK_WRITE},
               {X_NOTHING, "ws/.git/modules/a/objects", LK_WRITE},
               WS_NAMES_HELD},
        .n_protect = 2 + 2 + 3 + 3 + 5 + MORE,
    },
    {
        /* directly atop the writable directory: nothing to pin */
        .name = "agent metadata: existing directory and file, missing name",
        .files = {{F_DIR, "ws/.codex", 0}, {F_FILE, "ws/.cordon", "x"}, {F_DIR, "ws/.codex/sub", 0}},
        .ex = {{X_RO, "ws/.codex", 0},
               {X_RO, "ws/.cordon", 0},
               {X_HELD, "ws/.agents", 0},
               {X_NOTHING, "ws/.codex/sub", LK_READ},
               {X_NOTHING, "ws/.codexx", LK_WRITE}},
        .n_protect = 3 + MORE,
    },
    {
        .name = "--protect names atop every writable directory",
        .files = {{F_DIR, "ws/.zed", 0}, {F_DIR, "w", 0}, {F_FILE, "w/.cursor", ""}},
        .allow = {"w"},
        .protect = {".zed", ".cursor"},
        .ex = {{X_RO, "ws/.zed", 0},
               {X_HELD, "ws/.cursor", 0},
               {X_HELD, "w/.zed", 0},
               {X_RO, "w/.cursor", 0},
               {X_HELD, "w/.codex", 0},
               WS_NAMES_HELD},
        .n_protect = 2 * (8 + 2), /* the default names and the two --protect ones, twice */
    },
    {
        /* Nested writable roots: how ws/.codex and ws/.git/hooks are kept from being
         * renamed away (they hold .cordon etc.) is src's choice (a pin rule, or the user
         * rule kept in the plan): checked as a property, so the count is not fixed. */
        .name = "a user rule granting write on exactly the existing path lifts the protection",
        .files = {{F_DIR, "ws/.codex", 0},
                  {F_DIR, "ws/.git", 0},
                  {F_DIR, "ws/.git/hooks", 0},
                  {F_FILE, "ws/.git/config", ""}},
        .allow = {"ws/.codex", "ws/.git/hooks"},
        .ex = {{X_NOTHING, "ws/.codex", LK_WRITE},
               {X_NOTHING, "ws/.git/hooks", LK_WRITE},
               {X_RO, "ws/.git/config", 0}, /* only the exact path */
               {X_PIN, "ws/.git", 0, "pinned: holds {D}/ws/.git/config"},
               {X_HELD, "ws/.cordon", 0},
               {X_HELD, "ws/.agents", 0},
               {X_HELD, "ws/.codex/.codex", 0}, /* itself a writable directory */
               {X_HELD, "ws/.git/hooks/.cordon", 0}},
        .n_protect = -1,
    },
    {
        /* A rule on a path that does not exist mounts nothing: it neither protects nor
         * lifts a protection (cordon holds the name with a stub all the same). */
        .name = "a rule on a missing protected path: held all the same",
        .files = {{F_DIR, "ws/.git", 0}, {F_FILE, "ws/.git/config", ""}},
        .allow = {"ws/.agents"},
        .allow_ro = {"ws/.codex", "ws/.git/hooks"},
        .ex = {{X_HELD, "ws/.codex", 0},
               {X_HELD, "ws/.agents", 0},
               {X_HELD, "ws/.cordon", 0},
               {X_HELD, "ws/.git/hooks", 0},
               {X_RO, "ws/.git/config", 0},
               {X_PIN, "ws/.git", 0, "pinned: holds {D}/ws/.git/hooks"}},
        .n_protect = 3 + 2 + 1 + MORE,
    },
    {
        /* write on a directory above (here .git) is not write on exactly the path; .git
         * must not be renamable all the same (the count: see the nested-roots row) */
        .name = "a writable .git does not lift hooks and config",
        .files = {{F_DIR, "ws/.git", 0}, {F_DIR, "ws/.git/hooks", 0}, {F_FILE, "ws/.git/config", ""}},
        .allow = {"ws/.git"},
        .ex = {{X_RO, "ws/.git/hooks", 0},
               {X_RO, "ws/.git/config", 0},
               {X_HELD, "ws/.git/.codex", 0},
               {X_NOTHING, "ws/.git/objects", LK_WRITE},
               WS_NAMES_HELD},
        .n_protect = -1,
    },
    {
        /* a writable root nested (unmounted: redundant) in the writable workspace: the
         * directories above it can be renamed too unless they are pinned */
        .name = "a writable repository nested in the workspace: its protection cannot be renamed away",
        .files = {{F_DIR, "ws/sub", 0},
                  {F_DIR, "ws/sub/repo", 0},
                  {F_DIR, "ws/sub/repo/.git", 0},
                  {F_DIR, "ws/sub/repo/.git/hooks", 0},
                  {F_FILE, "ws/sub/repo/.git/config", ""}},
        .allow = {"ws/sub/repo"},
        .ex = {{X_RO, "ws/sub/repo/.git/hooks", 0},
               {X_RO, "ws/sub/repo/.git/config", 0},
               {X_PIN, "ws/sub/repo/.git", 0, "pinned: holds {D}/ws/sub/repo/.git/hooks"},
               {X_HELD, "ws/sub/repo/.codex", 0},
               WS_NAMES_HELD},
        .n_protect = -1,
    },
    {
        /* read-only or hidden already: nothing to add, and a hidden .git is not
         * re-exposed by read-only rules on what is inside it (.agents: see
         * test_deny_on_missing_protected_name) */
        .name = "--deny .git, --allow-ro .codex, --deny .agents",
        .files = {{F_DIR, "ws/.git", 0},
                  {F_DIR, "ws/.git/hooks", 0},
                  {F_FILE, "ws/.git/config", ""},
                  {F_DIR, "ws/.git/modules", 0},
                  {F_DIR, "ws/.git/modules/a", 0},
                  {F_DIR, "ws/.git/modules/a/hooks", 0},
                  {F_DIR, "ws/.codex", 0}},
        .allow_ro = {"ws/.codex"},
        .deny = {"ws/.git", "ws/.agents"},
        .ex = {{X_NOTHING, "ws/.git/hooks", LK_HIDDEN},
               {X_NOTHING, "ws/.git/config", LK_HIDDEN},
               {X_NOTHING, "ws/.git/modules/a/hooks", LK_HIDDEN},
               {X_NOTHING, "ws/.codex", LK_READ},
               {X_HELD, "ws/.cordon", 0}},
        .n_protect = 2 + MORE, /* .cordon, and a deny of its own beside the --deny of the missing .agents */
        .sealed = "ws/.git",
    },
    {
        .name = "read-only workspace: nothing added",
        .files = {{F_DIR, "ws/.git", 0}, {F_DIR, "ws/.git/hooks", 0}, {F_FILE, "ws/.git/config", ""}, {F_DIR, "w", 0}},
        .allow = {"w"},
        .protect = {".vscode"},
        .read_only = true,
        .ex = {{X_NOTHING, "ws/.git/hooks", LK_READ},
               {X_NOTHING, "ws/.codex", LK_READ},
               {X_NOTHING, "ws/.git", LK_READ},
               {X_NOTHING, "ws/.vscode", LK_READ},
               {X_NOTHING, "w/.codex", LK_READ}},
        .n_protect = 0,
    },
    {
        .name = "read-only and missing writable rules: nothing added",
        .files = {{F_DIR, "r", 0}, {F_DIR, "r/.git", 0}, {F_DIR, "r/.git/hooks", 0}},
        .allow_ro = {"r"},
        .allow = {"nope"},
        .ex = {{X_NOTHING, "r/.git/hooks", LK_READ},
               {X_NOTHING, "r/.git", LK_READ},
               {X_NOTHING, "r/.codex", LK_READ},
               {X_NOTHING, "nope/.codex", LK_WRITE},
               WS_NAMES_HELD},
        .n_protect = 3 + MORE,
    },
    {
        /* a '..' in the gitdir leads into a repository hidden by --deny: protecting what is
         * there would mount it read-only inside the hidden tree (looked up as written, the
         * path was below the writable workspace) */
        .name = ".git file: gitdir with '..' into a repository hidden by --deny",
        .files = {{F_FILE, "ws/.git", "gitdir: ../real/.git/worktrees/x\n"},
                  {F_DIR, "real", 0},
                  {F_DIR, "real/.git", 0},
                  {F_DIR, "real/.git/hooks", 0},
                  {F_FILE, "real/.git/config", "[core]\n"},
                  {F_DIR, "real/.git/worktrees", 0},
                  {F_DIR, "real/.git/worktrees/x", 0},
                  {F_DIR, "real/.git/worktrees/x/hooks", 0},
                  {F_FILE, "real/.git/worktrees/x/commondir", "../..\n"},
                  {F_FILE, "real/.git/worktrees/x/config", ""},
                  {F_FILE, "real/.git/worktrees/x/config.worktree", ""}},
        .deny = {"real"},
        .ex = {{X_RO, "ws/.git", 0, "protected git file in writable {D}/ws"},
               {X_NOTHING, "real/.git/worktrees/x/hooks", LK_HIDDEN},
               {X_NOTHING, "real/.git/worktrees/x/config", LK_HIDDEN},
               {X_NOTHING, "real/.git/worktrees/x/config.worktree", LK_HIDDEN},
               {X_NOTHING, "real/.git/worktrees/x", LK_HIDDEN},
               {X_NOTHING, "real/.git/hooks", LK_HIDDEN},
               {X_NOTHING, "real/.git/config", LK_HIDDEN},
               WS_NAMES_HELD},
        .n_protect = 3 + 1 + MORE,
        .sealed = "real",
    },
    {
        /* the gitdir names the repository through a symlink (outside every writable
         * path): what is protected is where it really is, in the allowed real/.git */
        .name = ".git file: gitdir through a symlink to an allowed repository",
        .files = {{F_FILE, "ws/.git", "gitdir: {D}/link/.git/worktrees/x\n"},
                  {F_DIR, "real", 0},
                  {F_DIR, "real/.git", 0},
                  {F_DIR, "real/.git/hooks", 0},
                  {F_FILE, "real/.git/config", ""},
                  {F_DIR, "real/.git/worktrees", 0},
                  {F_DIR, "real/.git/worktrees/x", 0},
                  {F_FILE, "real/.git/worktrees/x/commondir", "../..\n"},
                  {F_FILE, "real/.git/worktrees/x/config.worktree", "[core]\n"},
                  {F_LINK, "link", "real"}},
        .allow = {"real/.git"},
        .ex = {{X_RO, "ws/.git", 0, "protected git file in writable {D}/ws"},
               {X_RO, "real/.git/worktrees/x/config.worktree", 0, "protected git config.worktree in writable {D}/ws"},
               {X_HELD, "real/.git/worktrees/x/hooks", 0},
               {X_HELD, "real/.git/worktrees/x/config", 0},
               {X_RO, "real/.git/hooks", 0},
               {X_RO, "real/.git/config", 0},
               {X_PIN, "real/.git/worktrees", 0, "pinned: holds {D}/real/.git/worktrees/x/hooks"},
               {X_PIN, "real/.git/worktrees/x", 0, "pinned: holds {D}/real/.git/worktrees/x/hooks"},
               {X_NOTHING, "real/.git/worktrees/x/HEAD", LK_WRITE},
               {X_HELD, "real/.git/.codex", 0},
               WS_NAMES_HELD},
        .n_protect = 5 + 3 + 3 + 1 + 2 + 2 * MORE + 1 /* commondir kept read-only too */,
    },
    {
        /* the stub sits at the first missing component (ws/a/b/c); ws/a and ws/a/b
         * would let `mv a a-old; mkdir -p a/b/c/.env` create the denied path */
        .name = "a missing --deny deeper in the workspace: the directories above its stub are pinned",
        .files = {{F_DIR, "ws/a", 0}, {F_DIR, "ws/a/b", 0}},
        .deny = {"ws/a/b/c/.env"},
        .ex = {{X_PIN, "ws/a", 0, "pinned: holds {D}/ws/a/b/c"},
               {X_PIN, "ws/a/b", 0, "pinned: holds {D}/ws/a/b/c"},
               {X_NOTHING, "ws/a/b/c/.env", LK_HIDDEN},
               {X_NOTHING, "ws/a/other", LK_WRITE},
               WS_NAMES_HELD},
        .n_protect = 3 + 2 + MORE,
    },
    {
        /* the nearest writable rule (ws/a/b) is redundant in the plan, not a mount
         * point: `mv a a-old; mkdir -p a/b/c/x` would create the denied path */
        .name = "a missing --deny below a writable rule nested in the workspace",
        .files = {{F_DIR, "ws/a", 0}, {F_DIR, "ws/a/b", 0}},
        .allow = {"ws/a/b"},
        .deny = {"ws/a/b/c/x"},
        .ex = {{X_NOTHING, "ws/a/b/c/x", LK_HIDDEN}, {X_HELD, "ws/a/b/.codex", 0}, WS_NAMES_HELD},
        .n_protect = -1,
    },
    {
        .name = "a missing --deny directly in the workspace: no pin",
        .deny = {"ws/secret", "ws/new/x"},
        .ex = {{X_NOTHING, "ws/secret", LK_HIDDEN}, {X_NOTHING, "ws/new/x", LK_HIDDEN}, WS_NAMES_HELD},
        .n_protect = 3 + MORE,
    },
    {
        /* under a read-only directory nothing can be made: nothing held, nothing pinned */
        .name = "a missing --deny under a read-only directory: no stub, no pin",
        .files = {{F_DIR, "ws/ro", 0}, {F_DIR, "ws/ro/a", 0}},
        .allow_ro = {"ws/ro"},
        .deny = {"ws/ro/a/b/c"},
        .ex = {{X_NOTHING, "ws/ro", LK_READ},
               {X_NOTHING, "ws/ro/a", LK_READ},
               {X_NOTHING, "ws/ro/a/b/c", LK_HIDDEN},
               WS_NAMES_HELD},
        .n_protect = 3 + MORE,
    },
    {
        .name = "a symlinked .git/hooks in the writable workspace fails closed",
        .files = {{F_DIR, "ws/.git", 0}, {F_DIR, "elsewhere", 0}, {F_LINK, "ws/.git/hooks", "../../elsewhere"}},
        .fails = {"{D}/ws/.git/hooks", "symlink", "protected git hooks"},
    },
    {
        .name = "a symlinked .git in the writable workspace fails closed",
        .files = {{F_DIR, "gitreal", 0}, {F_DIR, "gitreal/hooks", 0}, {F_LINK, "ws/.git", "../gitreal"}},
        .fails = {"{D}/ws/.git", "symlink", "{D}/gitreal"},
    },
    {
        .name = "a symlinked .codex in the writable workspace fails closed",
        .files = {{F_DIR, "elsewhere", 0}, {F_LINK, "ws/.codex", "{D}/elsewhere"}},
        .fails = {"{D}/ws/.codex", "symlink"},
    },
    {
        /* the command could replace the dangling link with a directory of its own */
        .name = "a dangling symlinked .codex in the writable workspace fails closed",
        .files = {{F_LINK, "ws/.codex", "{D}/nowhere"}},
        .fails = {"{D}/ws/.codex", "symlink"},
    },
    {
        .name = ".git/modules: a symlink to a git directory in the workspace fails closed",
        .files = {{F_DIR, "ws/.git", 0},
                  {F_DIR, "ws/.git/hooks", 0},
                  {F_FILE, "ws/.git/config", ""},
                  {F_DIR, "ws/.git/modules", 0},
                  {F_DIR, "ws/gd", 0},
                  {F_DIR, "ws/gd/hooks", 0},
                  {F_FILE, "ws/gd/config", ""},
                  {F_LINK, "ws/.git/modules/a", "../../gd"}},
        .fails = {"crosses the symlink {D}/ws/.git/modules/a,", "writable {D}/ws"},
    },
    {
        /* followed, it leads out of every rule: nothing there to protect, but the link
         * itself lies in the writable .git/modules and could be replaced by a directory
         * with hooks */
        .name = ".git/modules: a symlink to a git directory outside every rule fails closed",
        .files = {{F_DIR, "ws/.git", 0},
                  {F_DIR, "ws/.git/hooks", 0},
                  {F_FILE, "ws/.git/config", ""},
                  {F_DIR, "ws/.git/modules", 0},
                  {F_DIR, "gd", 0},
                  {F_DIR, "gd/hooks", 0},
                  {F_FILE, "gd/config", ""},
                  {F_LINK, "ws/.git/modules/a", "{D}/gd"}},
        .fails = {"crosses the symlink {D}/ws/.git/modules/a,", "writable {D}/ws"},
    },
    {
        .name = ".git/modules: a dangling symlink fails closed",
        .files = {{F_DIR, "ws/.git", 0},
                  {F_DIR, "ws/.git/hooks", 0},
                  {F_FILE, "ws/.git/config", ""},
                  {F_DIR, "ws/.git/modules", 0},
                  {F_LINK, "ws/.git/modules/a", "{D}/nowhere"}},
        .fails = {"crosses the symlink {D}/ws/.git/modules/a,", "writable {D}/ws"},
    },
};

/* ---- fixture -------------------------------------------------------------------------- */

/* `s` with every "{D}" replaced by the fixture directory. */
static char *subst(const fixture *f, const char *s)
{
    size_t cap = strlen(s) + 1, n = 0;
    for (const char *q = s; (q = strstr(q, "{D}")) != NULL; q += 3)
        cap += strlen(f->dir);
    char *out = xmalloc(cap);
    while (*s) {
        if (strncmp(s, "{D}", 3) == 0) {
            memcpy(out + n, f->dir, strlen(f->dir));
            n += strlen(f->dir);
            s += 3;
        } else {
            out[n++] = *s++;
        }
    }
    out[n] = '\0';
    return out;
}

static void make(const fixture *f, const fent *e)
{
    char *text = e->text ? subst(f, e->text) : NULL;
    switch (e->kind) {
    case F_DIR: mk(f, e->path); break;
    case F_FILE: write_file(f, e->path, text); break;
    case F_LINK: ln(f, text, e->path); break;
    case F_END: break;
    }
    free(text);
}

/* f->row: the row (its initial state), or NULL */
static int setup(void **state)
{
    return fixture_setup(state, "protect", FX_WS | FX_HOME | FX_POLICY);
}

static void check_properties(const fixture *f);

/* Resolve and plan; whatever the policy, the properties hold (check_properties). */
static void build_ok(fixture *f)
{
    plan_ok(f);
    check_properties(f);
}

/* The winning rule exactly at `path`, or NULL. */
static const rrule *winner_at(const fixture *f, const char *path)
{
    for (size_t i = 0; i < f->r.n_rules; i++)
        if (!f->r.rules[i].shadowed && strcmp(f->r.rules[i].path, path) == 0)
            return &f->r.rules[i];
    return NULL;
}

/* The protect rule at `path`, or NULL; fails when there are two. */
static const rrule *protect_at(const fixture *f, const char *path)
{
    const rrule *w = NULL;
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *x = &f->r.rules[i];
        if (x->origin != ORIGIN_PROTECT || strcmp(x->path, path) != 0)
            continue;
        if (w)
            fail_msg("two protect rules at %s", path);
        w = x;
    }
    return w;
}

static size_t n_protect(const fixture *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->r.n_rules; i++)
        n += f->r.rules[i].origin == ORIGIN_PROTECT;
    return n;
}

static const char *lk_name(lk l)
{
    switch (l) {
    case LK_ANY: return "any";
    case LK_WRITE: return "writable";
    case LK_READ: return "read-only";
    case LK_HIDDEN: return "hidden";
    case LK_UNCOVERED: return "not covered";
    }
    return "?";
}

static void check_lookup(const fixture *f, const char *path, lk want)
{
    if (want == LK_ANY)
        return;
    const rrule *x = resolved_lookup(&f->r, path);
    lk got = !x                                 ? LK_UNCOVERED
             : x->access == CORDON_ACCESS_WRITE ? LK_WRITE
             : x->access == CORDON_ACCESS_READ  ? LK_READ
                                                : LK_HIDDEN;
    if (got != want)
        fail_msg("%s: %s, expected %s (rule %s from %s)", path, lk_name(got), lk_name(want), x ? x->path : "-",
                 x ? x->source : "-");
}

static void dump_protect(const fixture *f)
{
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *x = &f->r.rules[i];
        if (x->origin == ORIGIN_PROTECT)
            print_message("# protect %s%s %s (%s)\n", access_name(x->access), x->pin ? " (pin)" : "", x->path,
                          x->source);
    }
}

/* The expected source, when the row gives one. */
static void check_source(const fixture *f, const rrule *x, const expect *e)
{
    if (!e->source)
        return;
    char *want = subst(f, e->source);
    if (strcmp(x->source, want) != 0)
        fail_msg("%s: source \"%s\", expected \"%s\"", x->path, x->source, want);
    free(want);
}

/* `p` without its last component (p is absolute, not "/"). */
static char *parent_of(const char *p)
{
    char *d = xstrdup(p);
    char *slash = strrchr(d, '/');
    if (slash == d)
        slash[1] = '\0';
    else
        *slash = '\0';
    return d;
}

/* Does the plan mount anything at exactly `p`, or hold its name with the creation
 * control (a NOCREATE rule)? */
static bool mount_point(const plan *pl, const char *p)
{
    for (size_t i = 0; i < pl->n_ops; i++)
        if (pl->ops[i].kind != PLAN_NOTE && strcmp(pl->ops[i].dest, p) == 0)
            return true;
    for (size_t i = 0; i < pl->n_cc_rules; i++)
        if (pl->cc_rules[i].kind == PLAN_NOCREATE && strcmp(pl->cc_rules[i].path, p) == 0)
            return true;
    return false;
}

/* Is `dir` inside a writable bind of the host (a private tmpfs does not count: what
 * is renamed there is not renamed on the host)? */
static bool host_writable(const plan *pl, const char *dir)
{
    const plan_op *c = plan_covering(pl, dir);
    return c && c->kind == PLAN_BIND && !c->read_only;
}

/* Nothing can rename `held` (a protected path or a stub) nor a directory above it on
 * the host: every one of them whose parent is host-writable is a mount point (rename(2)
 * of a mount point fails with EBUSY; a directory with mounts below it moves freely). */
static void check_not_renamable(const fixture *f, const char *held, const char *what)
{
    char *a = xstrdup(held);
    while (strcmp(a, "/") != 0) {
        char *parent = parent_of(a);
        if (host_writable(&f->pl, parent) && !mount_point(&f->pl, a)) {
            dump_protect(f);
            fail_msg("%s can be renamed away from %s (%s): %s is writable and %s no mount point", what, held,
                     f->row ? ((const pcase *)f->row)->name : "-", parent, a);
        }
        free(a);
        a = parent;
    }
    free(a);
}

/* What every result must satisfy, whatever the row. */
static void check_properties(const fixture *f)
{
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *x = &f->r.rules[i];
        if (x->origin != ORIGIN_PROTECT)
            continue;
        if (!x->pin && strncmp(x->source, "protected ", 10) != 0) {
            /* --base host: a credential store or another user's home, hidden as it is */
            assert_int_equal(x->access, CORDON_ACCESS_NONE);
            assert_int_not_equal(x->type, FT_MISSING);
            continue;
        }
        if (!x->pin) {
            /* atop a writable path: a read-only rule on something that exists or a
             * hidden rule on something missing (cordon never adds a write, nor hides
             * what is there) */
            assert_true((x->access == CORDON_ACCESS_READ) == (x->type != FT_MISSING));
            assert_int_not_equal(x->access, CORDON_ACCESS_WRITE);
            check_not_renamable(f, x->type == FT_MISSING ? x->first_missing : x->path, x->source);
            continue;
        }
        /* A pin: an existing directory bound writable onto itself, where it was
         * writable anyway, because something below it is held. */
        assert_int_equal(x->access, CORDON_ACCESS_WRITE);
        assert_int_equal(x->type, FT_DIR);
        char *prefix = xasprintf("pinned: holds %s/", x->path);
        if (strncmp(x->source, prefix, strlen(prefix)) != 0)
            fail_msg("pin %s: source \"%s\" does not name a path below it", x->path, x->source);
        free(prefix);
        const char *held = x->source + strlen("pinned: holds ");
        if (!mount_point(&f->pl, held))
            fail_msg("pin %s holds %s, which the plan does not mount", x->path, held);
        char *parent = parent_of(x->path);
        const rrule *above = resolved_lookup(&f->r, parent);
        if (!above || above->access != CORDON_ACCESS_WRITE)
            fail_msg("pin %s below %s, which is not writable: it grants access", x->path, parent);
        free(parent);
        if (!x->shadowed) {
            const plan_op *b = op_find(&f->pl, PLAN_BIND, x->path);
            if (!b)
                fail_msg("pin %s: no bind in the plan", x->path);
            assert_true(b->pin);
            assert_false(b->read_only);
            assert_true(b->is_dir);
            assert_string_equal(b->src, b->dest);
            assert_null(op_find(&f->pl, PLAN_NOTE, x->path)); /* not dropped as redundant */
        }
    }
    /* what the plan holds with stubs (protected names, missing denied paths) */
    for (size_t i = 0; i < f->pl.n_cc_rules; i++)
        if (f->pl.cc_rules[i].kind == PLAN_NOCREATE)
            check_not_renamable(f, f->pl.cc_rules[i].path, f->pl.cc_rules[i].why);
    /* a bind op is pinned only for a pin rule */
    for (size_t i = 0; i < f->pl.n_ops; i++) {
        const plan_op *o = &f->pl.ops[i];
        if (o->kind == PLAN_BIND && o->pin) {
            const rrule *w = winner_at(f, o->dest);
            assert_non_null(w);
            assert_true(w->pin);
        }
    }
}

/* A tree hidden by a user rule: nothing cordon adds in it, nothing bound below it. */
static void check_sealed(const fixture *f, const char *rel)
{
    char *s = fx(f, rel);
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *x = &f->r.rules[i];
        if (path_has_prefix(x->path, s) && x->origin == ORIGIN_PROTECT)
            fail_msg("%s hidden, yet cordon adds %s %s (%s)", s, access_name(x->access), x->path, x->source);
    }
    for (size_t i = 0; i < f->pl.n_ops; i++) {
        const plan_op *o = &f->pl.ops[i];
        if (o->kind == PLAN_NOTE || !path_has_prefix(o->dest, s))
            continue;
        if (strcmp(o->dest, s) != 0 || o->kind != PLAN_HIDE) {
            const char *kind = plan_kind_name(o->kind), *why = o->why ? o->why : "-";
            fail_msg("%s hidden, yet the plan has %s %s (%s)", s, kind, o->dest, why);
        }
    }
    const plan_op *h = op_find(&f->pl, PLAN_HIDE, s);
    assert_non_null(h);
    check_lookup(f, s, LK_HIDDEN);
    free(s);
}

static void check_expect(fixture *f, const expect *e)
{
    char *p = fx(f, e->path);
    const rrule *x = protect_at(f, p);
    switch (e->kind) {
    case X_HELD: {
        if (!x) {
            dump_protect(f);
            fail_msg("%s is not held", p);
        }
        assert_ptr_equal(winner_at(f, p), x);
        assert_int_equal(x->access, CORDON_ACCESS_NONE);
        assert_int_equal(x->type, FT_MISSING);
        assert_false(x->pin);
        assert_contains(x->source, "protected");
        check_source(f, x, e);
        /* the plan holds it (its first missing component: here itself) with a stub */
        assert_string_equal(x->first_missing, p);
        const plan_cc_rule *h = cc_find(&f->pl, PLAN_NOCREATE, p);
        if (!h)
            fail_msg("no hide operation holds %s", p);
        assert_string_equal(h->why, x->source);
        assert_null(op_find(&f->pl, PLAN_BIND, p)); /* a rule on the missing path mounts nothing */
        check_lookup(f, p, LK_HIDDEN);
        break;
    }
    case X_RO: {
        if (!x) {
            dump_protect(f);
            fail_msg("%s is not kept read-only", p);
        }
        assert_ptr_equal(winner_at(f, p), x);
        assert_int_equal(x->access, CORDON_ACCESS_READ);
        assert_true(x->type == FT_DIR || x->type == FT_FILE);
        assert_false(x->pin);
        struct stat st;
        assert_int_equal(lstat(p, &st), 0);
        assert_true(x->dev == st.st_dev && x->ino == st.st_ino);
        assert_contains(x->source, "protected");
        check_source(f, x, e);
        const plan_op *b = op_find(&f->pl, PLAN_BIND, p);
        if (!b)
            fail_msg("no bind of %s", p);
        assert_true(b->read_only);
        assert_int_equal(b->is_dir, x->type == FT_DIR);
        assert_false(b->pin);
        assert_null(op_find(&f->pl, PLAN_HIDE, p));
        check_lookup(f, p, LK_READ);
        break;
    }
    case X_PIN: {
        if (!x) {
            dump_protect(f);
            fail_msg("%s is not pinned", p);
        }
        assert_ptr_equal(winner_at(f, p), x);
        assert_true(x->pin);
        assert_int_equal(x->access, CORDON_ACCESS_WRITE);
        assert_int_equal(x->type, FT_DIR);
        struct stat st;
        assert_int_equal(lstat(p, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_true(x->dev == st.st_dev && x->ino == st.st_ino);
        check_source(f, x, e);
        const plan_op *b = op_find(&f->pl, PLAN_BIND, p);
        if (!b)
            fail_msg("no bind pins %s", p);
        assert_true(b->pin);
        assert_false(b->read_only);
        assert_true(b->is_dir);
        assert_string_equal(b->src, p);
        assert_true(b->dev == st.st_dev && b->ino == st.st_ino);
        assert_string_equal(b->why, x->source);
        assert_null(op_find(&f->pl, PLAN_NOTE, p));
        assert_null(op_find(&f->pl, PLAN_HIDE, p));
        check_lookup(f, p, LK_WRITE);
        /* it adds no access: what is above it is writable already */
        char *parent = parent_of(p);
        check_lookup(f, parent, LK_WRITE);
        free(parent);
        break;
    }
    case X_NOTHING:
        if (x)
            fail_msg("%s: unexpected protect rule (%s, %s)", p, access_name(x->access), x->source);
        check_lookup(f, p, e->lookup);
        break;
    case X_END: break;
    }
    free(p);
}

static void test_case(void **state)
{
    fixture *f = *state;
    const pcase *c = f->row;
    for (size_t i = 0; i < sizeof c->files / sizeof *c->files && c->files[i].kind != F_END; i++)
        make(f, &c->files[i]);
    for (size_t i = 0; i < 4 && c->allow[i]; i++)
        rule(f, c->allow[i], CORDON_ACCESS_WRITE);
    for (size_t i = 0; i < 4 && c->allow_ro[i]; i++)
        rule(f, c->allow_ro[i], CORDON_ACCESS_READ);
    for (size_t i = 0; i < 4 && c->deny[i]; i++)
        rule(f, c->deny[i], CORDON_ACCESS_NONE);
    for (size_t i = 0; i < 4 && c->protect[i]; i++)
        assert_int_equal(cordon_policy_protect(f->p, c->protect[i], &f->err), 0);
    if (c->read_only)
        assert_int_equal(cordon_policy_set_read_only(f->p, true, &f->err), 0);

    if (c->fails[0]) {
        resolved r;
        if (resolve_policy(f->p, &f->host, &r, &f->err) == 0) {
            resolved_free(&r);
            fail_msg("%s: resolve_policy succeeded, expected it to fail closed", c->name);
        }
        assert_int_equal(f->err.stage, CORDON_STAGE_RESOLVE);
        for (size_t i = 0; i < 3 && c->fails[i]; i++) {
            char *want = subst(f, c->fails[i]);
            assert_contains(f->err.message, want);
            free(want);
        }
        return;
    }
    build_ok(f);
    for (size_t i = 0; i < sizeof c->ex / sizeof *c->ex && c->ex[i].kind != X_END; i++)
        check_expect(f, &c->ex[i]);
    if (c->n_protect >= 0 && n_protect(f) != (size_t)c->n_protect) {
        dump_protect(f);
        fail_msg("%s: %zu protect rules, expected %d", c->name, n_protect(f), c->n_protect);
    }
    if (c->sealed)
        check_sealed(f, c->sealed);
}

/* ---- --protect NAME --------------------------------------------------------------- */

static void test_protect_names_refused(void **state)
{
    fixture *f = *state;
    static const char *const bad[] = {"a/b", "", ".", "..", "/abs", "x/", "/"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err_clear(&f->err);
        if (cordon_policy_protect(f->p, bad[i], &f->err) == 0)
            fail_msg("--protect '%s' accepted", bad[i]);
        assert_int_equal(f->err.stage, CORDON_STAGE_USAGE);
        assert_string_equal(f->err.option, "protect");
        char *quoted = xasprintf("'%s'", bad[i]);
        assert_contains(f->err.message, quoted);
        free(quoted);
    }
    assert_int_equal(cordon_policy_protect(f->p, NULL, &f->err), -1);
    assert_int_equal(f->err.stage, CORDON_STAGE_USAGE);
    assert_int_equal(f->p->protect.n, 0);
    /* a single component, even an odd one, is a name */
    static const char *const good[] = {".vscode", "...", ".env", "a b", "-x"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_int_equal(cordon_policy_protect(f->p, good[i], &f->err), 0);
    assert_int_equal(f->p->protect.n, sizeof good / sizeof *good);
    assert_string_equal(f->p->protect.v[2], ".env");
    /* they apply: "..." is held atop the workspace */
    build_ok(f);
    char *p = fx(f, "ws/...");
    assert_non_null(protect_at(f, p));
    assert_non_null(cc_find(&f->pl, PLAN_NOCREATE, p));
    free(p);
}

/* A rule on a missing path below a protected one: both held by one stub. */
static void test_protect_and_deny_below_share_a_stub(void **state)
{
    fixture *f = *state;
    rule(f, "ws/.codex/secret", CORDON_ACCESS_NONE);
    build_ok(f);
    char *codex = fx(f, "ws/.codex");
    char *secret = fx(f, "ws/.codex/secret");
    const plan_cc_rule *h = cc_find(&f->pl, PLAN_NOCREATE, codex);
    assert_non_null(h);
    assert_null(op_find(&f->pl, PLAN_HIDE, secret));
    assert_null(cc_find(&f->pl, PLAN_NOCREATE, secret)); /* refusing .codex is enough */
    /* not a mount: what covers the path inside is the writable workspace */
    assert_int_equal(plan_covering(&f->pl, secret)->kind, PLAN_BIND);
    free(codex);
    free(secret);
}

/* A --deny of a missing protected name: the user's rule mounts nothing by itself (a
 * rule on a missing path protects nothing), so cordon adds its own deny beside it; one
 * stub holds the name for both, whichever of the two equal rules wins. */
static void test_deny_on_missing_protected_name(void **state)
{
    fixture *f = *state;
    rule(f, "ws/.agents", CORDON_ACCESS_NONE);
    build_ok(f);
    char *p = fx(f, "ws/.agents");
    const rrule *x = protect_at(f, p);
    assert_non_null(x);
    assert_int_equal(x->access, CORDON_ACCESS_NONE);
    assert_int_equal(x->type, FT_MISSING);
    assert_false(x->pin);
    size_t users = 0;
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *y = &f->r.rules[i];
        if (strcmp(y->path, p) != 0 || y->origin == ORIGIN_PROTECT)
            continue;
        users++;
        assert_int_equal(y->origin, ORIGIN_FLAG);
        assert_int_equal(y->access, CORDON_ACCESS_NONE);
    }
    assert_int_equal(users, 1);
    const rrule *w = winner_at(f, p);
    assert_non_null(w);
    assert_int_equal(w->access, CORDON_ACCESS_NONE);
    const plan_cc_rule *h = cc_find(&f->pl, PLAN_NOCREATE, p); /* fails on two */
    assert_non_null(h);
    assert_string_equal(h->why, w->source);
    assert_int_equal(n_protect(f), protect_n_default_names); /* the default names: no pin */
    check_lookup(f, p, LK_HIDDEN);
    free(p);
}

/* The .git file of a worktree is kept read-only, exactly the file: what the command
 * may still do in the workspace around it is unchanged. */
static void test_git_file_read_only(void **state)
{
    fixture *f = *state;
    static const fent files[] = {
        {F_FILE, "ws/.git", "gitdir: ../gd\n"},
        {F_DIR, "gd", 0},
        {F_DIR, "gd/hooks", 0},
        {F_FILE, "gd/config", ""},
        {F_DIR, "ws/src", 0},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        make(f, &files[i]);
    rule(f, "gd", CORDON_ACCESS_WRITE);
    build_ok(f);
    char *dotgit = fx(f, "ws/.git");
    const rrule *x = protect_at(f, dotgit);
    assert_non_null(x);
    assert_ptr_equal(winner_at(f, dotgit), x);
    assert_int_equal(x->access, CORDON_ACCESS_READ);
    assert_int_equal(x->type, FT_FILE);
    assert_false(x->pin);
    char *want = xasprintf("protected git file in writable %s", f->ws);
    assert_string_equal(x->source, want);
    free(want);
    const plan_op *b = op_find(&f->pl, PLAN_BIND, dotgit);
    assert_non_null(b);
    assert_true(b->read_only);
    assert_false(b->is_dir); /* a file bound on a file */
    assert_false(b->pin);
    assert_string_equal(b->src, dotgit);
    /* directly in the workspace: nothing pinned for it */
    for (size_t i = 0; i < f->r.n_rules; i++)
        if (f->r.rules[i].pin && path_has_prefix(f->r.rules[i].path, f->ws))
            fail_msg("unexpected pin %s", f->r.rules[i].path);
    char *src = fx(f, "ws/src");
    check_lookup(f, src, LK_WRITE);
    free(src);
    /* the gitdir it names is protected as before */
    char *hooks = fx(f, "gd/hooks");
    assert_non_null(protect_at(f, hooks));
    free(hooks);
    /* a read-only workspace: the file is read-only anyway, nothing added */
    fresh_policy(f, CORDON_BASE_EMPTY);
    assert_int_equal(cordon_policy_set_read_only(f->p, true, &f->err), 0);
    build_ok(f);
    assert_null(protect_at(f, dotgit));
    check_lookup(f, dotgit, LK_READ);
    free(dotgit);
}

/* ---- credential stores -------------------------------------------------------------- */

/* The README's list ("The home and the host"): every one of them is in the table (sensitive.c). */
static const char *const stores[] = {
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/gh",
    ".pypirc",
    ".npmrc",
    ".config/git/credentials",
    ".pgpass",
    ".vault-token",
    ".claude/.credentials.json",
    ".codex/auth.json",
    ".cargo/credentials.toml",
    ".config/containers/auth.json",
    ".terraform.d",
    ".local/share/keyrings",
    ".password-store",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".config/hub",
    ".gem/credentials",
    ".m2/settings.xml",
    ".config/op",
    ".config/rclone",
    ".s3cfg",
    ".boto",
};

static void test_credential_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof stores / sizeof *stores; i++) {
        bool found = false;
        for (size_t k = 0; k < n_credential_stores; k++)
            found |= strcmp(credential_stores[k].path, stores[i]) == 0;
        if (!found)
            fail_msg("~/%s (in the README's list) is not in the credential store table", stores[i]);
    }
    /* the entries are relative and clean: no leading or trailing '/', no "." or ".." */
    for (size_t k = 0; k < n_credential_stores + n_startup_files; k++) {
        const home_entry *e = k < n_credential_stores ? &credential_stores[k] : &startup_files[k - n_credential_stores];
        assert_true(e->path[0] && e->path[0] != '/' && e->path[strlen(e->path) - 1] != '/');
        assert_null(strstr(e->path, "//"));
        assert_null(strstr(e->path, "/../"));
        assert_null(strstr(e->path, "/./"));
        assert_true(strcmp(e->path, "..") != 0 && strncmp(e->path, "../", 3) != 0 && strncmp(e->path, "./", 2) != 0);
        assert_non_null(e->what);
    }
}

static const rrule *store_rule(const fixture *f, const char *store)
{
    char *p = path_join(f->home, store);
    const rrule *x = protect_at(f, p);
    free(p);
    return x;
}

static void make_home(fixture *f)
{
    static const fent files[] = {
        {F_DIR, "home/.ssh", 0},          {F_FILE, "home/.ssh/id_ed25519", "k"},
        {F_DIR, "home/.aws", 0},          {F_FILE, "home/.netrc", "machine x"},
        {F_DIR, "home/.config", 0},       {F_DIR, "home/.config/gcloud", 0},
        {F_DIR, "home/.docker", 0},       {F_FILE, "home/.npmrc", ""},
        {F_DIR, "home/.config/other", 0}, {F_FILE, "home/.bashrc", ""},
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++)
        make(f, &files[i]);
}

static void test_credential_stores(void **state)
{
    fixture *f = *state;
    make_home(f);
    fresh_policy(f, CORDON_BASE_HOST);
    rule(f, "home", CORDON_ACCESS_READ);         /* the real home is shown */
    rule(f, "home/.aws", CORDON_ACCESS_READ);    /* named exactly: shown */
    rule(f, "home/.docker", CORDON_ACCESS_NONE); /* named exactly: the user's own deny */
    build_ok(f);
    static const char *const hidden[] = {".ssh", ".netrc", ".config/gcloud", ".npmrc"};
    for (size_t i = 0; i < sizeof hidden / sizeof *hidden; i++) {
        const rrule *x = store_rule(f, hidden[i]);
        if (!x)
            fail_msg("credential store ~/%s is not hidden", hidden[i]);
        char *p = path_join(f->home, hidden[i]);
        assert_ptr_equal(winner_at(f, p), x);
        assert_int_equal(x->access, CORDON_ACCESS_NONE);
        assert_true(strncmp(x->source, "credential store: ", 18) == 0);
        const plan_op *h = op_find(&f->pl, PLAN_HIDE, p);
        assert_non_null(h);
        assert_int_equal(h->is_dir, x->type == FT_DIR);
        char *below = path_join(p, "x");
        assert_ptr_equal(plan_covering(&f->pl, below), h);
        free(below);
        free(p);
    }
    /* named by a rule: not touched */
    assert_null(store_rule(f, ".aws"));
    char *aws = path_join(f->home, ".aws");
    assert_int_equal(resolved_lookup(&f->r, aws)->access, CORDON_ACCESS_READ);
    free(aws);
    assert_null(store_rule(f, ".docker"));
    char *docker = path_join(f->home, ".docker");
    assert_int_equal(winner_at(f, docker)->origin, ORIGIN_FLAG);
    assert_int_equal(winner_at(f, docker)->access, CORDON_ACCESS_NONE);
    free(docker);
    /* missing ones: nothing (the home is read-only, nothing to hold) */
    static const char *const missing[] = {".gnupg", ".azure", ".kube", ".git-credentials", ".config/gh", ".pypirc"};
    for (size_t i = 0; i < sizeof missing / sizeof *missing; i++)
        assert_null(store_rule(f, missing[i]));
    /* the rest of the home stays visible */
    char *other = path_join(f->home, ".config/other");
    assert_int_equal(resolved_lookup(&f->r, other)->access, CORDON_ACCESS_READ);
    free(other);
    /* nothing else in the home is protected */
    for (size_t i = 0; i < f->r.n_rules; i++) {
        const rrule *x = &f->r.rules[i];
        if (x->origin != ORIGIN_PROTECT || !path_has_prefix(x->path, f->home))
            continue;
        bool known = false;
        for (size_t k = 0; k < n_credential_stores; k++) {
            char *p = path_join(f->home, credential_stores[k].path);
            known |= strcmp(p, x->path) == 0;
            free(p);
        }
        if (!known)
            fail_msg("unexpected protect rule %s in the home", x->path);
    }
}

static void test_credential_stores_writable_home(void **state)
{
    fixture *f = *state;
    make_home(f);
    fresh_policy(f, CORDON_BASE_HOST);
    rule(f, "home", CORDON_ACCESS_WRITE);
    build_ok(f);
    assert_non_null(store_rule(f, ".ssh"));
    assert_non_null(store_rule(f, ".netrc"));
    assert_null(store_rule(f, ".gnupg")); /* missing stores are not held */
    /* the writable home is a writable directory like any other */
    char *codex = path_join(f->home, ".codex");
    assert_non_null(cc_find(&f->pl, PLAN_NOCREATE, codex));
    free(codex);
    /* a rule above the home counts as showing it */
    fresh_policy(f, CORDON_BASE_HOST);
    rule_abs(f, f->dir, CORDON_ACCESS_READ);
    build_ok(f);
    assert_non_null(store_rule(f, ".ssh"));
}

/* The home replaced by a private one, or another base: no credential rules. */
static void test_credential_stores_not_shown(void **state)
{
    fixture *f = *state;
    make_home(f);
    /* --base host, no rule shows the home */
    fresh_policy(f, CORDON_BASE_HOST);
    build_ok(f);
    for (size_t i = 0; i < sizeof stores / sizeof *stores; i++)
        assert_null(store_rule(f, stores[i]));
    /* a rule inside the home is not the home */
    fresh_policy(f, CORDON_BASE_HOST);
    rule(f, "home/.config/other", CORDON_ACCESS_READ);
    build_ok(f);
    for (size_t i = 0; i < sizeof stores / sizeof *stores; i++)
        assert_null(store_rule(f, stores[i]));
    /* --base system and empty: nothing shows the home */
    for (int b = 0; b < 2; b++) {
        fresh_policy(f, b ? CORDON_BASE_SYSTEM : CORDON_BASE_EMPTY);
        build_ok(f);
        for (size_t i = 0; i < sizeof stores / sizeof *stores; i++)
            assert_null(store_rule(f, stores[i]));
    }
    /* no HOME at all */
    fresh_policy(f, CORDON_BASE_HOST);
    f->host.home = NULL;
    rule(f, "home", CORDON_ACCESS_READ);
    resolve_ok(f);
    for (size_t i = 0; i < sizeof stores / sizeof *stores; i++)
        assert_null(store_rule(f, stores[i]));
    f->host.home = f->home;
}

/* ---- --base host: other users' homes -------------------------------------------------- */

/* What the host has: every directory in /home, and /root (data-driven: this machine
 * has /home/cloudsdk and /root). */
static void other_homes(strv *out)
{
    *out = (strv){0};
    DIR *d = opendir("/home");
    if (d) {
        struct dirent *de;
        while ((de = readdir(d)) != NULL) {
            if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                continue;
            char *p = path_join("/home", de->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
                strv_push(out, p);
            else
                free(p);
        }
        closedir(d);
    }
    struct stat st;
    if (lstat("/root", &st) == 0 && S_ISDIR(st.st_mode))
        strv_push(out, xstrdup("/root"));
}

static void assert_home_hidden(const fixture *f, const char *h, bool hidden)
{
    const rrule *x = protect_at(f, h);
    if (hidden) {
        if (!x)
            fail_msg("%s is not hidden", h);
        assert_ptr_equal(winner_at(f, h), x);
        assert_int_equal(x->access, CORDON_ACCESS_NONE);
        assert_string_equal(x->source, "another user's home");
        const plan_op *op = op_find(&f->pl, PLAN_HIDE, h);
        assert_non_null(op);
        assert_true(op->is_dir);
    } else if (x) {
        fail_msg("%s hidden (%s)", h, x->source);
    }
}

static void test_other_homes(void **state)
{
    fixture *f = *state;
    strv homes;
    other_homes(&homes);
    if (homes.n == 0)
        fail_msg("neither /root nor a directory in /home: nothing to check on this host");

    /* the caller's home elsewhere: all of them hidden */
    fresh_policy(f, CORDON_BASE_HOST);
    build_ok(f);
    for (size_t i = 0; i < homes.n; i++)
        assert_home_hidden(f, homes.v[i], true);

    /* one named exactly by a rule is shown; the others stay hidden */
    fresh_policy(f, CORDON_BASE_HOST);
    rule_abs(f, homes.v[0], CORDON_ACCESS_READ);
    build_ok(f);
    assert_home_hidden(f, homes.v[0], false);
    assert_int_equal(resolved_lookup(&f->r, homes.v[0])->access, CORDON_ACCESS_READ);
    for (size_t i = 1; i < homes.n; i++)
        assert_home_hidden(f, homes.v[i], true);

    /* a rule on /home shows every /home/X (not /root) */
    struct stat st;
    if (lstat("/home", &st) == 0 && S_ISDIR(st.st_mode)) {
        fresh_policy(f, CORDON_BASE_HOST);
        rule_abs(f, "/home", CORDON_ACCESS_READ);
        build_ok(f);
        for (size_t i = 0; i < homes.n; i++)
            assert_home_hidden(f, homes.v[i], strcmp(homes.v[i], "/root") == 0);
    }

    /* the caller's own home is not another user's */
    fresh_policy(f, CORDON_BASE_HOST);
    f->host.home = homes.v[0];
    build_ok(f);
    assert_home_hidden(f, homes.v[0], false);
    for (size_t i = 1; i < homes.n; i++)
        assert_home_hidden(f, homes.v[i], true);
    f->host.home = f->home;

    /* other bases do not show them in the first place */
    fresh_policy(f, CORDON_BASE_SYSTEM);
    build_ok(f);
    for (size_t i = 0; i < homes.n; i++) {
        assert_home_hidden(f, homes.v[i], false);
        assert_null(resolved_lookup(&f->r, homes.v[i]));
    }
    strv_free(&homes);
}

/* Only user.name and user.email: quoted values, later ones win, subsections and other
 * sections ignored (issue 9, item 5). */
static void test_git_identity_buffer(void **state)
{
    (void)state;
    static const char doc[] = "[user]\n\tname = First\n[user \"x\"]\n\tname = Sub\n"
                              "[credential]\n\thelper = store\n[user]\n\tname = \"Ada \\\"A.\\\" Lovelace\"\n"
                              "\temail = ada@example.org ; a comment\n[includeIf \"gitdir:~/w/\"]\n\tpath = /x\n";
    gitconfig_ctx ctx = {.home = "/nonexistent-home"};
    gitconfig_identity id = {{0}};
    gitconfig_identity_buffer(&ctx, doc, sizeof doc - 1, &id);
    assert_string_equal(id.name, "Ada \"A.\" Lovelace");
    assert_string_equal(id.email, "ada@example.org");
}

int main(void)
{
    enum { N = sizeof cases / sizeof *cases };
    struct CMUnitTest tests[N + 16];
    for (size_t i = 0; i < N; i++)
        tests[i] = (struct CMUnitTest){
            .name = cases[i].name,
            .test_func = test_case,
            .setup_func = setup,
            .teardown_func = fixture_teardown,
            .initial_state = (void *)&cases[i],
        };
    size_t n = N;
#define T(fn)    \
    tests[n++] = \
        (struct CMUnitTest){.name = #fn, .test_func = fn, .setup_func = setup, .teardown_func = fixture_teardown}
    T(test_protect_names_refused);
    T(test_protect_and_deny_below_share_a_stub);
    T(test_deny_on_missing_protected_name);
    T(test_git_file_read_only);
    T(test_credential_table);
    T(test_credential_stores);
    T(test_credential_stores_writable_home);
    T(test_credential_stores_not_shown);
    T(test_other_homes);
    T(test_git_identity_buffer);
#undef T
    return _cmocka_run_group_tests("protect", tests, n, NULL, NULL);
}
