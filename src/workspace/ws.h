// SPDX-License-Identifier: Apache-2.0
/* Copy-on-write workspaces: the pieces behind the cordon_workspace_* calls.
 *
 *   state.c     the state root, names, the backends' names, the versioned state file
 *               (written atomically), locks, removing trees
 *   proc.c      running helpers (git, fuse-overlayfs, fusermount3): execve of an argument
 *               vector, never a shell, bounded in time
 *   backend.c   the backends: probes, create, restore, remove
 *   copy.c      the copy backend's tree copy and its manifest
 *   changes.c   the change set, read from the upper layer (or the copy) against the source,
 *               or for the worktree backend git's own (and its diff)
 *   udiff.c     the unified diff printer
 *   git.c       host git on the source, with nothing the workspace planted in reach
 *   integrate.c the journal, applying changes to the source, the commit, recovery
 *   run.c       a run in the workspace (the view at the source's path)
 *   api.c       the public calls
 *
 * Layout of one workspace, ROOT/NAME/:
 *   state.json  {"version": 1, "name", "source", "backend", ...}
 *   lock        flock: exclusive while the state changes (create, integrate, remove)
 *   run.lock    flock: shared by runs (exclusive for the kernel backend: one overlay
 *               mount of an upper layer at a time), exclusive for integrate and remove
 *   upper/ work/          kernel, fuse: the overlay's layers
 *   merged/               fuse: the mount point of the view
 *   copy/ manifest        copy: the copy, and what it held when made
 *   tree/                 worktree: the git worktree
 *   journal.json          an integration in progress (integrate.c) */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cordon.h"

#define WS_STATE_VERSION 1
#define WS_NAME_MAX      64

typedef struct ws_state {
    int version;
    char *name;
    char *source; /* canonical */
    dev_t source_dev;
    ino_t source_ino;
    cordon_ws_backend backend;
    bool git;          /* the source is the top of a git work tree */
    char *branch;      /* worktree: cordon/NAME */
    char *base;        /* worktree: the commit it was made from */
    long long created; /* seconds since the epoch */
    /* The source's files as the workspace took them: a file whose ctime is at or after
     * this (ns since the epoch; the creation, then the end of the last integration) was
     * changed on the host since, and integrate does not overwrite it unasked.  0: a state
     * written before it was recorded (then `created`, in whole seconds) */
    long long baseline;
} ws_state;

struct cordon_workspace {
    char *root; /* canonical state root */
    char *dir;  /* root/name */
    ws_state st;
    char *notes; /* create (auto): why earlier backends were skipped */
    char *view;  /* host path of the view, or NULL (kernel) */
    int held[2]; /* the locks this call holds (integrate.c's helper keeps them), or -1 */
    char *saved; /* integrate with CORDON_WS_INTEGRATE_FORCE: where the source's overwritten
                    versions were saved, or NULL */
};

/* ---- state.c ---- */
int ws_root(const char *given, char **out, bool create, cordon_error *err);
int ws_check_name(const char *name, cordon_error *err);
char *ws_path(const cordon_workspace *ws, const char *leaf);
/* fresh: the workspace is being created (its state's name need not be made durable) */
int ws_state_write(const cordon_workspace *ws, bool fresh, cordon_error *err);
int ws_state_read(cordon_workspace *ws, cordon_error *err);
void ws_state_free(ws_state *st);
/* Write `len` bytes to dir/leaf atomically: leaf.tmp, fsync, rename, fsync dir. */
int ws_write_atomic(const char *dir, const char *leaf, const void *data, size_t len, cordon_error *err);
/* The same; sync_dir false: the rename is not made durable (no fsync of the directory). */
int ws_write_atomic_flags(const char *dir, const char *leaf, const void *data, size_t len, bool sync_dir,
                          cordon_error *err);
/* Open / read the link of a path of cordon's own (a layer, the state) without following
 * any symlink on the way, wherever a command may have planted one. */
int ws_open_nofollow(const char *path, int flags);
ssize_t ws_readlink_nofollow(const char *path, char *buf, size_t n);
/* Read a whole small file (at most max bytes, no symlink followed); NULL with errno set
 * when it cannot. */
char *ws_read_file(const char *path, size_t max, size_t *len);

enum { WS_LOCK_STATE, WS_LOCK_RUN };
/* flock(LOCK_SH or LOCK_EX) on ROOT/NAME/lock or run.lock; waits at most wait_ms (-1:
 * forever, 0: not at all).  Returns the descriptor (O_CLOEXEC), or -1 with err filled. */
int ws_lock(const cordon_workspace *ws, int which, bool exclusive, int wait_ms, cordon_error *err);
/* Remove a tree, making what was made unreadable readable first; ENOENT is success. */
int ws_rmtree(int dirfd, const char *name, cordon_error *err);
int ws_rmtree_path(const char *path, cordon_error *err);
int ws_mkdir_p(const char *path, mode_t mode, cordon_error *err);
long long ws_now_ns(void);
/* The realtime clock now, in ns (the baseline's start, ws_state.baseline). */
long long ws_realtime_ns(void);
/* Wait until a file written from now on gets a ctime at or after `t` (a ws_realtime_ns()
 * of the past): file times come from the kernel's coarse clock, up to a tick behind. */
void ws_baseline_settle(long long t);

/* ---- proc.c ---- */
typedef struct ws_cmd {
    const char *const *argv; /* argv[0] is searched in PATH when it has no slash */
    char *const *envp;       /* NULL: cordon's own environment */
    const char *cwd;         /* NULL: cordon's */
    const void *in;          /* bytes for stdin, or NULL for /dev/null (or in_fd) */
    size_t in_len;
    int in_fd;      /* > 0: stdin is this descriptor (a file), in is ignored */
    bool capture;   /* keep stdout (else /dev/null) */
    bool setsid;    /* a session of its own (a daemon: fuse-overlayfs) */
    int timeout_ms; /* the whole command; killed when it is over (-1: none) */
    /* descriptors the program inherits as 3, 4, ... (-1 entries skipped): the workspace's
     * locks, so that a git still running after cordon was killed (kill -9 reaches cordon,
     * not its children) holds the workspace until it has done */
    const int *keep;
    size_t n_keep; /* at most WS_KEEP_MAX */
} ws_cmd;
#define WS_KEEP_MAX 2
typedef struct ws_out {
    int status; /* wait status */
    pid_t pid;  /* the process that ran */
    bool timed_out;
    char *out; /* stdout, NUL-terminated (capture) */
    size_t out_len;
    char err[2048]; /* the first bytes of stderr, for messages */
} ws_out;
/* Run c; 0 when it ran (whatever its status: see out->status), -1 with err filled when
 * it could not be started or was killed for its time. */
int ws_exec(const ws_cmd *c, ws_out *out, cordon_error *err);
void ws_out_free(ws_out *o);
/* "exited with status 1: <stderr>" */
void ws_out_describe(const ws_out *o, char *buf, size_t n);
/* Find `prog` in PATH; false when it is not there. */
bool ws_which(const char *prog, char *buf, size_t n);

/* ---- backend.c ---- */
int ws_backend_create(cordon_workspace *ws, cordon_ws_backend want, cordon_error *err);
/* remount: fuse: mount again even when mounted (an explicit restore) */
int ws_backend_restore(cordon_workspace *ws, bool remount, cordon_error *err);
int ws_backend_remove(cordon_workspace *ws, cordon_error *err);
bool ws_fuse_mounted(const cordon_workspace *ws);
/* fuse: mount the view (readiness awaited at most 5 s) / unmount it (30 s at most). */
int ws_fuse_mount(cordon_workspace *ws, cordon_error *err);
int ws_fuse_unmount(cordon_workspace *ws, cordon_error *err);
/* Unmount whatever is mounted under dir (a workspace whose state is lost). */
int ws_unmount_below(const char *dir, cordon_error *err);
char *ws_view_path(const cordon_workspace *ws);

/* ---- copy.c ---- */
typedef struct ws_mfile ws_mfile; /* the copy's manifest, loaded */
/* Copy the tree src into the new directory dst (same owner where cordon can; modes,
 * times, symlinks; reflink or copy_file_range), then write the manifest. */
int ws_copy_tree(const char *src, const char *dst, const char *manifest, cordon_error *err);
int ws_manifest_load(const char *path, ws_mfile **out, cordon_error *err);
void ws_manifest_free(ws_mfile *m);
/* Is rel (as it is now in the copy, stat st) as it was when the manifest was written? */
bool ws_manifest_same(ws_mfile *m, const char *rel, const struct stat *st);
/* Every path of the manifest, in order, for callbacks that find deletions. */
size_t ws_manifest_count(const ws_mfile *m);
const char *ws_manifest_path(const ws_mfile *m, size_t i, bool *is_dir, bool *seen);
void ws_manifest_mark(ws_mfile *m, const char *rel);
/* Does the manifest hold rel as a directory? (Marks it seen.) */
bool ws_manifest_known_dir(ws_mfile *m, const char *rel);
/* Record what the copy now holds at the given paths (after an integration). */
int ws_manifest_refresh(const char *copy, const char *path, const char *const *rels, size_t n, cordon_error *err);
/* Copy one file's data (reflink, copy_file_range, then read/write). */
int ws_copy_data(int in, int out);

/* ---- changes.c ---- */
typedef struct ws_change {
    char status; /* 'A' 'M' 'D'; directories: 'N' new, 'X' gone (changes.c) */
    char *path;  /* relative */
    mode_t mode; /* A, M: the new file's mode (S_IFREG|perm or S_IFLNK) */
    char *from;  /* A, M: where its content is (absolute host path in the upper/copy) */
} ws_change;
typedef struct ws_changes {
    ws_change *v;
    size_t n, cap;
    ws_change *skipped; /* special files, protected names: never integrated */
    size_t n_skipped, cap_skipped;
} ws_changes;
int ws_changes_compute(cordon_workspace *ws, ws_changes *out, cordon_error *err);
void ws_changes_free(ws_changes *c);
/* The top-level names integrate never writes (agent and tool configuration). */
bool ws_protected_name(const char *rel);

/* ---- udiff.c ---- */
/* A git-style diff of one change: old content (NULL: added), new content (NULL: deleted). */
int ws_udiff_print(FILE *out, const char *path, const char *a, size_t alen, mode_t amode, const char *b, size_t blen,
                   mode_t bmode);
/* The hunks of a unified diff of two texts with 3 lines of context (for tests). */
char *ws_udiff_hunks(const char *a, size_t alen, const char *b, size_t blen);

/* ---- git.c ---- */
typedef struct ws_git {
    const char *work_tree; /* where git runs */
    const char *git_dir;   /* NULL: found from the work tree (the source's .git) */
    const char *common_dir;
    const char *index; /* GIT_INDEX_FILE, or NULL */
    const int *hold;   /* the workspace's held locks (ws->held: 2, -1 for none), which git
                        * keeps for as long as it runs, or NULL */
} ws_git;
/* git on the workspace's source, holding the locks this call holds (ws->held). */
ws_git ws_source_git(const cordon_workspace *ws);
/* Run host git with hooks, fsmonitor and every other way to run code off, and no
 * configuration but the system's, the user's and the repository's own. */
int ws_git_run(const ws_git *g, const char *const args[], const void *in, size_t in_len, ws_out *out,
               cordon_error *err);
/* The same, requiring exit status 0; *text gets stdout (trailing newline cut) unless NULL. */
int ws_git_ok(const ws_git *g, const char *const args[], const void *in, size_t in_len, char **text, cordon_error *err);
/* ws_git_run with stdin from the file descriptor in_fd. */
int ws_git_run_fd(const ws_git *g, const char *const args[], int in_fd, ws_out *out, cordon_error *err);
/* Is dir the top of a git work tree? */
bool ws_git_is_top(const char *dir);

/* ---- changes.c: the worktree backend (git's own) ---- */
/* The worktree backend's change set and diff (git's own). */
int ws_worktree_changes(cordon_workspace *ws, ws_changes *out, cordon_error *err);
int ws_worktree_diff(cordon_workspace *ws, bool name_status, FILE *out, cordon_error *err);
/* git on the worktree (*tree: its path, the caller frees it), and a tree object of the
 * worktree as it is (uncommitted and untracked files included) into *out. */
ws_git ws_worktree_git(const cordon_workspace *ws, char **tree);
int ws_worktree_tree(const cordon_workspace *ws, char **out, cordon_error *err);

/* ---- integrate.c ---- */
int ws_integrate(cordon_workspace *ws, const char *message, unsigned flags, cordon_ws_integrated *res,
                 cordon_error *err);
/* Finish an interrupted integration, if any (holding the state lock).  1 when it did. */
int ws_recover(cordon_workspace *ws, cordon_error *err);
/* Drop the scratch ref (refs/cordon/integrate/NAME) an integration stopped before its
 * commit point left in the source's repository (workspace remove; a recovery's undo);
 * best effort: a source whose git fails keeps it. */
void ws_forget_scratch(cordon_workspace *ws);
bool ws_journal_pending(const cordon_workspace *ws);

/* ---- run.c ---- */
int ws_run(cordon_workspace *ws, const cordon_policy *p, char *const argv[], cordon_result *res, cordon_error *err);
