// SPDX-License-Identifier: Apache-2.0
/* Integration: the workspace's changes into the source, and for a git source exactly one
 * commit on its current branch.
 *
 * Nothing the user can see changes until every byte is in place, and after that point
 * the integration always finishes:
 *
 *  1. (this process) the change set; every target checked to be writable; for git, the
 *     commit built by `git fast-import` from the branch's tip plus exactly the changes
 *     (the view's bytes, no filters: nothing the user staged is swept in, the user's index
 *     is not read), on a scratch ref.  Unreachable objects are all it leaves behind.
 *  2. (a helper in a session of its own, so that a kill of cordon, Ctrl-C included, does
 *     not stop it; it holds the workspace's locks and nothing else of the caller's)
 *     journal.json "stage" (written atomically: temporary file, fsync, rename), then
 *     every new file written whole into a staging directory on the source's mount (the
 *     state directory when it shares one with the source, else the git directory, else a
 *     hidden directory in the source).  A failure here (a full disk) removes the staged
 *     files: the source is untouched.
 *  3. journal.json "apply": the commit point.  The branch moved by compare-and-swap
 *     (`update-ref --stdin`: update BRANCH NEW OLD and delete the scratch ref, one
 *     transaction; on a new tip the commit is built again on it, at most 32 times);
 *     deletions, directories, then each staged file renamed over its target; the user's
 *     index set for exactly those paths.  The caller returns here: the source has it all.
 *  4. (the helper's child) syncfs of the source, journal "files_done", the upper layer
 *     reset (kernel, fuse) or the copy's manifest refreshed, journal.json removed.
 *
 * Whoever finds journal.json (every workspace command looks, holding the state lock)
 * finishes what it says: "stage" is undone, "apply" redone (the upper layer or the copy,
 * which the journal's records point into, is reset only after the files are on disk;
 * after a reboot the staged files are not trusted and are written again from it).
 *
 * The worktree backend integrates by a merge (`merge-tree --write-tree`): conflicts are
 * reported and change nothing; a clean merge is committed, checked against the user's
 * index and working tree (`read-tree -n -m -u`), then applied the same way (CAS, then
 * `read-tree -m -u`).
 *
 * The parts are in files of their own (integ.h); here, each strategy is a straight line
 * up to its commit point (integ_complete_detached). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"
#include "util/trace.h"
#include "workspace/integ.h"
#include "workspace/ws.h"

static void count(const ws_changes *c, cordon_ws_integrated *res)
{
    for (size_t i = 0; i < c->n; i++) {
        if (c->v[i].status == 'A')
            res->added++;
        else if (c->v[i].status == 'M')
            res->modified++;
        else if (c->v[i].status == 'D')
            res->deleted++;
    }
}

static void to_public_paths(const strv *paths, cordon_ws_changes *out)
{
    out->v = xcalloc(paths->n + 1, sizeof *out->v);
    for (size_t i = 0; i < paths->n; i++)
        out->v[i] = (cordon_ws_change){.status = 'U', .path = xstrdup(paths->v[i])};
    out->n = paths->n;
}

static void to_public(const ws_change *v, size_t n, cordon_ws_changes *out)
{
    out->v = xcalloc(n + 1, sizeof *out->v);
    out->n = 0;
    for (size_t i = 0; i < n; i++)
        if (v[i].status == 'A' || v[i].status == 'M' || v[i].status == 'D')
            out->v[out->n++] = (cordon_ws_change){.status = v[i].status, .path = xstrdup(v[i].path)};
}

/* Can the user write where the changes go?  Checked before anything is written. */
static int check_writable(const cordon_workspace *ws, const ws_changes *c, cordon_error *err)
{
    _cleanup_fd_ int root = open(ws->st.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open the source %s", ws->st.source);
    for (size_t i = 0; i < c->n; i++) {
        char *dir = xstrdup(c->v[i].path);
        for (;;) {
            char *slash = strrchr(dir, '/');
            if (slash)
                *slash = '\0';
            else
                dir[0] = '\0';
            int d = integ_open_beneath(root, dir, O_PATH | O_DIRECTORY);
            if (d >= 0) {
                bool ok = faccessat(d, "", W_OK | X_OK, AT_EMPTY_PATH | AT_EACCESS) == 0;
                int e = errno;
                close(d);
                if (!ok) {
                    err_set(err, CORDON_STAGE_WORKSPACE, e,
                            "cannot integrate %s: the source's directory %s%s%s is not writable; nothing was "
                            "changed",
                            c->v[i].path, ws->st.source, dir[0] ? "/" : "", dir);
                    free(dir);
                    return -1;
                }
                break;
            }
            if (!dir[0])
                break;
        }
        free(dir);
    }
    return 0;
}

/* The source's own, uncommitted changes that the integration would overwrite: refused,
 * named, unless forced; forced, each kept in the workspace's directory first. */
static int guard_host_edits(cordon_workspace *ws, const ws_changes *c, unsigned flags, cordon_ws_integrated *res,
                            cordon_error *err)
{
    strv edits;
    if (integ_host_edits(ws, c, &edits, err) < 0)
        return -1;
    int r = 0;
    if (edits.n > 0)
        to_public_paths(&edits, &res->conflicts);
    if (edits.n > 0 && !(flags & CORDON_WS_INTEGRATE_FORCE)) {
        char list[640];
        integ_list_paths(&edits, list, sizeof list);
        const char *them = edits.n == 1 ? "it" : "them";
        r = err_opt(err, CORDON_STAGE_WORKSPACE, 0, "force",
                    "%zu file%s changed in %s since the workspace took it%s would be overwritten: %s; commit or "
                    "stash %s (or move %s away) and integrate again, or integrate with force to overwrite %s "
                    "(the source's version%s then kept in %s/overwritten/)",
                    edits.n, edits.n == 1 ? "" : "s", ws->st.source,
                    ws_git_is_top(ws->st.source) ? " and not committed" : "", list, them, them, them,
                    edits.n == 1 ? " is" : "s are", ws->dir);
    } else if (edits.n > 0) {
        r = integ_save_host_versions(ws, &edits, err);
    }
    strv_free(&edits);
    return r;
}

/* For a git source: the branch to integrate into, and the commit built on its tip. */
static int build_on_branch(cordon_workspace *ws, journal *j, cordon_error *err)
{
    ws_git g = ws_source_git(ws);
    const char *sr[] = {"symbolic-ref", "-q", "HEAD", NULL};
    if (ws_git_ok(&g, sr, NULL, 0, &j->branch, err) < 0)
        return err_wrap(err, "%s is not on a branch (a detached HEAD?): check out the branch to integrate into",
                        ws->st.source);
    _cleanup_free_ char *tip = NULL;
    if (integ_git_tip(&g, j->branch, &tip, err) < 0)
        return -1;
    TRACE("ws-commit");
    int r = integ_build_commit(ws, &g, j, tip, err);
    TRACE("ws-commit-done");
    return r;
}

/* The journal of an integration of c, up to its commit point: the records, the message,
 * for git the commit, and the staging directory. */
static int make_journal(cordon_workspace *ws, const ws_changes *c, const char *message, const cordon_ws_integrated *res,
                        journal *j, cordon_error *err)
{
    j->phase = xstrdup("stage");
    j->git = ws_git_is_top(ws->st.source);
    for (size_t i = 0; i < c->n; i++) {
        grow(&j->v, &j->cap, j->n + 1, sizeof *j->v);
        j->v[j->n++] = (jrec){.status = c->v[i].status,
                              .path = xstrdup(c->v[i].path),
                              .mode = (unsigned)c->v[i].mode,
                              .from = integ_dupn(c->v[i].from)};
    }
    if (message && *message)
        j->message = xasprintf("%s\n", message);
    else
        j->message = xasprintf("Integrate workspace %s\n\n%zu added, %zu modified, %zu deleted (cordon workspace "
                               "integrate)\n",
                               ws->st.name, res->added, res->modified, res->deleted);
    if (j->git && build_on_branch(ws, j, err) < 0)
        return -1;
    _cleanup_fd_ int sfd = open(ws->st.source, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open %s", ws->st.source);
    j->stage = integ_choose_stage(ws, sfd, j->git);
    return 0;
}

/* Before the commit point, or rolled back: say so, and what a full disk needs. */
static void nothing_integrated(cordon_error *err)
{
    bool full = strstr(err->message, "No space left") || strstr(err->message, "Disk quota") ||
                strstr(err->message, "Out of diskspace") || err->errnum == ENOSPC || err->errnum == EDQUOT;
    err_wrap(err, "%snothing was integrated, the source is as it was and the workspace keeps its changes",
             full ? "the disk is full: free some space and integrate again; " : "");
}

/* The kernel, fuse and copy backends: the change set checked (the source's own edits,
 * writable targets), the journal made (for git, the commit built), then the commit point
 * and everything after it in the helper. */
static int integrate_files(cordon_workspace *ws, const char *message, unsigned flags, cordon_ws_integrated *res,
                           cordon_error *err)
{
    ws_changes c;
    TRACE("ws-changes");
    if (ws_changes_compute(ws, &c, err) < 0)
        return -1;
    TRACE("ws-changes-done");
    to_public(c.skipped, c.n_skipped, &res->skipped);
    count(&c, res);
    journal j = {0};
    int ret = 0;
    if (c.n > 0 &&
        (guard_host_edits(ws, &c, flags, res, err) < 0 || check_writable(ws, &c, err) < 0 ||
         make_journal(ws, &c, message, res, &j, err) < 0 || integ_complete_detached(ws, &j, true, true, err) < 0))
        ret = -1;
    if (ret == 0 && j.git && j.commit && *j.commit) {
        res->committed = true;
        snprintf(res->commit, sizeof res->commit, "%s", j.commit);
        snprintf(res->branch, sizeof res->branch, "%s", integ_branch_short(j.branch));
    }
    if (ret < 0 && !ws_journal_pending(ws))
        nothing_integrated(err);
    integ_journal_free(&j);
    ws_changes_free(&c);
    return ret;
}

/* ---------------------------------------------------------------------------------- */
/* worktree */

/* 1. What the worktree holds, as a commit on cordon/NAME (when there is something new):
 * *ws_tip, the branch's commit. */
static int commit_worktree(cordon_workspace *ws, const ws_git *wg, char **ws_tip, cordon_error *err)
{
    _cleanup_free_ char *t = NULL, *wt_head = NULL, *head_tree = NULL, *spec = NULL;
    if (ws_worktree_tree(ws, &t, err) < 0 || integ_git_tip(wg, "HEAD", &wt_head, err) < 0)
        return -1;
    spec = xasprintf("%s^{tree}", wt_head);
    const char *rp[] = {"rev-parse", spec, NULL};
    if (ws_git_ok(wg, rp, NULL, 0, &head_tree, err) < 0)
        return -1;
    if (strcmp(head_tree, t) == 0) {
        *ws_tip = xstrdup(wt_head);
        return 0;
    }
    _cleanup_free_ char *msg = xasprintf("Work of workspace %s\n", ws->st.name);
    _cleanup_free_ char *bref = xasprintf("refs/heads/%s", ws->st.branch);
    const char *ct[] = {"commit-tree", t, "-p", wt_head, "-F", "-", NULL};
    if (ws_git_ok(wg, ct, msg, strlen(msg), ws_tip, err) < 0)
        return -1;
    const char *ur[] = {"update-ref", bref, *ws_tip, wt_head, NULL};
    /* the worktree's own index follows its branch */
    const char *rt[] = {"read-tree", "HEAD", NULL};
    if (ws_git_ok(wg, ur, NULL, 0, NULL, err) < 0 || ws_git_ok(wg, rt, NULL, 0, NULL, err) < 0)
        return -1;
    return 0;
}

/* merge-tree's conflicted paths (after the tree, NUL-separated), each once. */
static void take_conflicts(const ws_out *o, cordon_ws_changes *cf)
{
    size_t cap = 0;
    size_t i = strlen(o->out) + 1;
    while (i < o->out_len && o->out[i]) {
        const char *p = o->out + i;
        bool dup = false;
        for (size_t k = 0; k < cf->n && !dup; k++)
            dup = strcmp(cf->v[k].path, p) == 0;
        if (!dup) {
            grow(&cf->v, &cap, cf->n + 1, sizeof *cf->v);
            cf->v[cf->n++] = (cordon_ws_change){.status = 'C', .path = xstrdup(p)};
        }
        i += strlen(p) + 1;
    }
}

/* 2. The merge of ws_tip into tip, in memory: 0 and *merged (its tree), 1 conflicts (in
 * res), 2 nothing new on cordon/NAME, -1. */
static int merge_in_memory(const ws_git *sg, const char *tip, const char *ws_tip, char **merged,
                           cordon_ws_integrated *res, cordon_error *err)
{
    const char *mb[] = {"merge-base", "--is-ancestor", ws_tip, tip, NULL};
    _cleanup_out_ ws_out anc = {0};
    if (ws_git_run(sg, mb, NULL, 0, &anc, err) < 0)
        return -1;
    if (WIFEXITED(anc.status) && WEXITSTATUS(anc.status) == 0)
        return 2;
    const char *mt[] = {"merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", tip, ws_tip, NULL};
    _cleanup_out_ ws_out o = {0};
    if (ws_git_run(sg, mt, NULL, 0, &o, err) < 0)
        return -1;
    int code = WIFEXITED(o.status) ? WEXITSTATUS(o.status) : -1;
    if (code == 1) {
        take_conflicts(&o, &res->conflicts);
        return 1;
    }
    if (code != 0) {
        char what[1024];
        ws_out_describe(&o, what, sizeof what);
        return err_set(err, CORDON_STAGE_WORKSPACE, 0, "git merge-tree %s", what);
    }
    o.out[strcspn(o.out, "\n")] = '\0';
    *merged = xstrdup(o.out);
    return 0;
}

/* 3. Will the user's index and working tree take it? (changes nothing)  Then the merge
 * commit: *commit. */
static int commit_merge(cordon_workspace *ws, const ws_git *sg, const char *message, const char *tip,
                        const char *ws_tip, const char *merged, char **commit, cordon_error *err)
{
    const char *rt[] = {"read-tree", "-n", "-m", "-u", tip, merged, NULL};
    if (ws_git_ok(sg, rt, NULL, 0, NULL, err) < 0)
        return err_wrap(err,
                        "the merge of %s is clean, but your uncommitted changes in %s are in its way; commit or "
                        "stash them; nothing was changed",
                        ws->st.branch, ws->st.source);
    _cleanup_free_ char *msg = message && *message
                                   ? xasprintf("%s\n", message)
                                   : xasprintf("Merge workspace %s (branch %s)\n", ws->st.name, ws->st.branch);
    const char *ct[] = {"commit-tree", merged, "-p", tip, "-p", ws_tip, "-F", "-", NULL};
    return ws_git_ok(sg, ct, msg, strlen(msg), commit, err);
}

/* What the merge changed on the branch, counted (best effort: a failure counts none). */
static void count_merge(const ws_git *sg, const char *tip, const char *commit, cordon_ws_integrated *res)
{
    const char *dt[] = {"diff-tree", "-r", "--no-renames", "--name-status", "-z", tip, commit, NULL};
    _cleanup_out_ ws_out o = {0};
    cordon_error e;
    if (ws_git_run(sg, dt, NULL, 0, &o, &e) < 0)
        return;
    for (size_t i = 0; i < o.out_len;) {
        char s = o.out[i];
        i += strlen(o.out + i) + 1;
        if (i >= o.out_len)
            break;
        i += strlen(o.out + i) + 1;
        if (s == 'A')
            res->added++;
        else if (s == 'D')
            res->deleted++;
        else
            res->modified++;
    }
}

/* The worktree backend: its work committed on cordon/NAME, merged in memory into the
 * source's branch, the merge checked and committed; then the commit point (the journal)
 * and the branch moved and the files applied by the helper. */
static int integrate_worktree(cordon_workspace *ws, const char *message, cordon_ws_integrated *res, cordon_error *err)
{
    _cleanup_free_ char *tree = NULL;
    ws_git wg = ws_worktree_git(ws, &tree);
    ws_git sg = ws_source_git(ws);
    _cleanup_free_ char *ws_tip = NULL, *ref = NULL, *tip = NULL, *merged = NULL, *commit = NULL;
    if (commit_worktree(ws, &wg, &ws_tip, err) < 0)
        return -1;
    const char *sr[] = {"symbolic-ref", "-q", "HEAD", NULL};
    if (ws_git_ok(&sg, sr, NULL, 0, &ref, err) < 0)
        return err_wrap(err, "%s is not on a branch: check out the branch to integrate into", ws->st.source);
    if (integ_git_tip(&sg, ref, &tip, err) < 0)
        return -1;
    int m = merge_in_memory(&sg, tip, ws_tip, &merged, res, err);
    if (m != 0)
        return m == 2 ? 0 : m; /* nothing new, conflicts, or an error */
    if (commit_merge(ws, &sg, message, tip, ws_tip, merged, &commit, err) < 0)
        return -1;
    journal j = {.phase = xstrdup("apply"),
                 .git = true,
                 .worktree = true,
                 .branch = xstrdup(ref),
                 .old = xstrdup(tip),
                 .commit = xstrdup(commit)};
    /* the commit point: from here on the merge is finished, by a recovery if need be */
    int r = integ_journal_write(ws, &j, err) < 0 || integ_complete_detached(ws, &j, false, true, err) < 0 ? -1 : 0;
    integ_journal_free(&j);
    if (r < 0)
        return -1;
    res->committed = true;
    snprintf(res->commit, sizeof res->commit, "%s", commit);
    snprintf(res->branch, sizeof res->branch, "%s", integ_branch_short(ref));
    count_merge(&sg, tip, commit, res);
    /* the next diff starts from what is integrated now */
    integ_setstr(&ws->st.base, ws_tip);
    return ws_state_write(ws, false, err);
}

int ws_integrate(cordon_workspace *ws, const char *message, unsigned flags, cordon_ws_integrated *res,
                 cordon_error *err)
{
    int r = ws_recover(ws, err);
    if (r < 0)
        return -1;
    res->recovered = r == 1;
    switch (ws->st.backend) {
    case CORDON_WS_NONE: return 0; /* the command wrote the source itself */
    case CORDON_WS_WORKTREE: return integrate_worktree(ws, message, res, err);
    default: return integrate_files(ws, message, flags, res, err);
    }
}
