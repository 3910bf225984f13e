// SPDX-License-Identifier: Apache-2.0
/* The parts of an integration (integrate.c, which says how one goes), each in a file of
 * its own:
 *   - integ_journal.c  journal.json: what an integration in progress has decided;
 *   - integ_git.c      the typed git steps: the branch's tip, the commit built by
 *                      fast-import, the branch's compare-and-swap, the user's index;
 *   - integ_stage.c    the source reached without following symlinks, the staging
 *                      directory, the files applied, the workspace reset;
 *   - integ_helper.c   everything after the commit point, in a helper that outlives
 *                      the caller, and the recovery of an interrupted integration;
 *   - integ_host.c     the source's own changes since the workspace took it. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "util/err.h"
#include "util/strv.h"
#include "workspace/ws.h"

#define INTEG_JOURNAL   "journal.json"
#define INTEG_CAS_TRIES 32

typedef struct jrec {
    char status;
    char *path;
    unsigned mode;
    char *from; /* A, M: the content */
    char *oid;  /* git: the blob */
} jrec;

typedef struct journal {
    char *phase; /* "stage" or "apply" */
    bool git;
    char *branch; /* refs/heads/X */
    char *old;    /* the tip the commit is built on ("" unborn) */
    char *commit; /* "" when the tree is HEAD's own (nothing to commit) */
    bool ref_done;
    bool files_done; /* the source has everything: what is left is resetting the workspace */
    char *message;
    char *stage;   /* the staging directory */
    char *boot;    /* the boot id the files were staged under */
    bool worktree; /* a merge: old..commit applied by read-tree */
    jrec *v;
    size_t n, cap;
} journal;

/* A ws_out (zeroed where it is declared) freed when it goes out of scope. */
static inline void integ_out_freep(ws_out *o)
{
    ws_out_free(o);
}
#define _cleanup_out_ __attribute__((cleanup(integ_out_freep)))

/* ---- integ_journal.c ---- */
void integ_journal_free(journal *j);
char *integ_dupn(const char *s);              /* xstrdup, NULL for NULL */
void integ_setstr(char **dst, const char *v); /* *dst replaced by a copy of v */
/* journal.json written atomically (temporary file, fsync, rename), read, removed. */
int integ_journal_write(const cordon_workspace *ws, const journal *j, cordon_error *err);
int integ_journal_read(const cordon_workspace *ws, journal *j, cordon_error *err);
int integ_journal_remove(const cordon_workspace *ws, cordon_error *err);

/* ---- integ_git.c ---- */
const char *integ_branch_short(const char *ref); /* refs/heads/X -> X */
unsigned integ_git_mode(unsigned m);             /* a file's mode as git records it */
/* The tip of ref, or "" when the branch has no commit yet. */
int integ_git_tip(const ws_git *g, const char *ref, char **tip, cordon_error *err);
/* The commit of j's changes on tip (git fast-import), on a scratch ref: j->commit ("" when
 * the tree is tip's own), j->old = tip, the records' blob ids. */
int integ_build_commit(const cordon_workspace *ws, const ws_git *g, journal *j, const char *tip, cordon_error *err);
/* The branch moved to j->commit by compare-and-swap (the scratch ref dropped in the same
 * transaction); on a new tip the commit built again on it. */
int integ_move_branch(cordon_workspace *ws, const ws_git *g, journal *j, cordon_error *err);
/* The user's own index: exactly the integrated paths, as in the new commit. */
int integ_update_user_index(const ws_git *g, const journal *j, cordon_error *err);

/* ---- integ_stage.c ---- */
/* openat2 of rel beneath root: no symlink, no magic link, no "..". */
int integ_open_beneath(int root, const char *rel, int flags);
void integ_split_rel(const char *rel, char **dir, const char **leaf);
/* rel made a directory beneath root (what stands in the way goes): its descriptor. */
int integ_ensure_dir(int root, const char *rel, mode_t mode, cordon_error *err);
/* Where new files are staged: a directory on the source's mount. */
char *integ_choose_stage(const cordon_workspace *ws, int srcfd, bool git);
int integ_stage_files(const cordon_workspace *ws, journal *j, cordon_error *err);
int integ_unstage(const journal *j, cordon_error *err);
/* The files into the source (idempotent); restage: the staged ones are not trusted. */
int integ_apply_files(const cordon_workspace *ws, const journal *j, bool restage, cordon_error *err);
/* The workspace starts again from the source (an empty upper layer, a new manifest). */
int integ_reset_workspace(cordon_workspace *ws, const journal *j, cordon_error *err);

/* ---- integ_helper.c ---- */
/* Everything after the decision to integrate, in a helper that outlives the caller;
 * returns once the source has everything (early) or all is done. */
int integ_complete_detached(cordon_workspace *ws, journal *j, bool stage, bool early, cordon_error *err);

/* ---- integ_host.c ---- */
/* The files the integration would overwrite or delete that the source changed since the
 * workspace took it and did not commit. */
int integ_host_edits(cordon_workspace *ws, const ws_changes *c, strv *out, cordon_error *err);
/* "a.txt, "b\nc" and 3 more": as many as fit in n bytes. */
void integ_list_paths(const strv *paths, char *buf, size_t n);
/* --force: the source's versions of paths kept in the workspace's directory. */
int integ_save_host_versions(cordon_workspace *ws, const strv *paths, cordon_error *err);
