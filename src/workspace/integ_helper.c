// SPDX-License-Identifier: Apache-2.0
/* After the commit point of an integration (integ.h): the helper that finishes it,
 * whatever happens to its caller, and the recovery of one that was interrupted. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <signal.h>
#include <sys/wait.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"
#include "util/trace.h"
#include "workspace/integ.h"
#include "workspace/ws.h"

/* The source now holds what the workspace integrated, the workspace's layer is reset: the
 * workspace goes on from the source as it is, and a host change from now on is one of the
 * source's own (ws_state.baseline).  Best effort: a baseline not moved only makes the next
 * integration more careful (it names files this one wrote, and --force keeps them). */
static void refresh_baseline(cordon_workspace *ws)
{
    long long t = ws_realtime_ns();
    long long old = ws->st.baseline;
    ws->st.baseline = t;
    cordon_error e;
    if (ws_state_write(ws, false, &e) < 0) {
        ws->st.baseline = old;
        return;
    }
    ws_baseline_settle(t);
}

static void boot_id(char out[64])
{
    out[0] = '\0';
    _cleanup_fd_ int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, out, 63);
        out[n > 0 ? n : 0] = '\0';
        out[strcspn(out, "\n")] = '\0';
    }
}

typedef struct outcome {
    int rc;
    cordon_error err;
    char commit[65];
} outcome;

static void send_outcome(int fd, int rc, const cordon_error *err, const journal *j)
{
    outcome o = {.rc = rc};
    if (rc < 0 && err)
        o.err = *err;
    snprintf(o.commit, sizeof o.commit, "%s", j->commit ? j->commit : "");
    (void)write_all(fd, &o, sizeof o);
}

/* The helper has done what the caller waits for: tell it, and go on in a grandchild
 * (which the caller need not reap) with what is left.  In process (notify < 0) nothing
 * to do. */
static void detach_tail(int *notify, const journal *j)
{
    if (*notify < 0)
        return;
    pid_t pid = fork();
    if (pid > 0 || pid < 0) {
        /* the helper (or, without a grandchild, the helper itself goes on after) */
        send_outcome(*notify, 0, NULL, j);
        close(*notify);
        *notify = -1;
        if (pid > 0)
            _exit(0);
    }
    if (pid == 0) {
        close(*notify);
        *notify = -1;
    }
}

/* Before anything is applied: the staged files and the journal go, the source is as it
 * was.  -1 (the caller's error stands). */
static int roll_back(const cordon_workspace *ws, const journal *j)
{
    cordon_error e2;
    integ_unstage(j, &e2);
    integ_journal_remove(ws, &e2);
    return -1;
}

/* The journal says "stage" until every new file is written: a failure or a kill then
 * undoes. */
static int stage_all(const cordon_workspace *ws, journal *j, const char *boot, cordon_error *err)
{
    integ_setstr(&j->boot, boot);
    if (integ_journal_write(ws, j, err) < 0)
        return -1;
    TRACE("ws-stage");
    return integ_stage_files(ws, j, err) < 0 ? roll_back(ws, j) : 0;
}

/* A merge (the worktree backend): the branch moved, then the user's index and working
 * tree by read-tree. */
static int finish_merge(cordon_workspace *ws, const ws_git *g, journal *j, cordon_error *err)
{
    if (!j->ref_done) {
        if (integ_move_branch(ws, g, j, err) < 0) {
            cordon_error e2;
            integ_journal_remove(ws, &e2);
            return -1;
        }
        j->ref_done = true;
        if (integ_journal_write(ws, j, err) < 0)
            return -1;
    }
    const char *rt[] = {"read-tree", "-m", "-u", j->old, j->commit, NULL};
    if (ws_git_ok(g, rt, NULL, 0, NULL, err) < 0) {
        /* an interrupted read-tree (a recovery) left the index behind the working tree:
         * take the merge's tree whole into both (what was staged beside is lost) */
        const char *co[] = {"read-tree", "--reset", "-u", j->commit, NULL};
        if (ws_git_ok(g, co, NULL, 0, NULL, err) < 0)
            return -1;
        err_clear(err);
    }
    return integ_journal_remove(ws, err);
}

/* The files into the source and the user's index; then the caller may go (early), and
 * the files are synced to disk before the workspace's own copy of them goes. */
static int apply(cordon_workspace *ws, const ws_git *g, journal *j, bool restage, bool early, int *notify,
                 cordon_error *err)
{
    TRACE("ws-apply");
    if (integ_apply_files(ws, j, restage, err) < 0)
        return -1;
    TRACE("ws-index");
    if (j->git && integ_update_user_index(g, j, err) < 0)
        return -1;
    TRACE("ws-applied");
    /* the source has everything: the caller may go (an integration's; a recovery's
     * caller waits for all of it) */
    if (early)
        detach_tail(notify, j);
    _cleanup_fd_ int root = open(ws->st.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0 || syncfs(root) < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "syncfs %s", ws->st.source);
    j->files_done = true;
    return integ_journal_write(ws, j, err);
}

/* Everything after the decision to integrate.  stage: write the staged files first.
 * notify >= 0: a helper's pipe to the caller, told as soon as the source has everything. */
static int complete(cordon_workspace *ws, journal *j, bool staging, bool early, int *notify, cordon_error *err)
{
    ws_git g = ws_source_git(ws);
    char boot[64];
    boot_id(boot);
    bool restage = j->boot && strcmp(j->boot, boot) != 0;
    if (staging && stage_all(ws, j, boot, err) < 0)
        return -1;
    if (strcmp(j->phase, "stage") == 0) {
        /* the commit point */
        integ_setstr(&j->phase, "apply");
        if (integ_journal_write(ws, j, err) < 0)
            return roll_back(ws, j);
    }
    if (j->worktree)
        return finish_merge(ws, &g, j, err);
    TRACE("ws-cas");
    if (j->git && !j->ref_done) {
        if (integ_move_branch(ws, &g, j, err) < 0)
            return roll_back(ws, j); /* the branch kept moving: nothing is applied yet */
        j->ref_done = true;
        if (integ_journal_write(ws, j, err) < 0)
            return -1;
    }
    if (!j->files_done && apply(ws, &g, j, restage, early, notify, err) < 0)
        return -1;
    if (integ_reset_workspace(ws, j, err) < 0 || integ_unstage(j, err) < 0)
        return -1;
    /* only now: the reset drops the layer's links to what was staged by hard link, which
     * stamps those files of the source anew */
    refresh_baseline(ws);
    return integ_journal_remove(ws, err);
}

/* complete() in a helper that outlives this process (a session of its own, deaf to the
 * terminal's signals, holding the workspace's locks it inherits); wait until it says the
 * source has everything (or failed) and take its result. */
int integ_complete_detached(cordon_workspace *ws, journal *j, bool stage, bool early, cordon_error *err)
{
    int p[2];
    pid_t pid = -1;
    if (pipe2(p, O_CLOEXEC) == 0 && (pid = fork()) < 0) {
        close(p[0]);
        close(p[1]);
    }
    if (pid < 0) {
        int none = -1;
        return complete(ws, j, stage, false, &none, err);
    }
    if (pid == 0) {
        /* nothing of the caller's but the locks (which it keeps while it works): not its
         * standard output either, which a caller may read to the end */
        int keep[3] = {p[1], ws->held[0], ws->held[1]};
        detach_janitor(keep, 3);
        struct sigaction ign = {.sa_handler = SIG_IGN};
        int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU};
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
            sigaction(sigs[i], &ign, NULL);
        int notify = p[1];
        cordon_error e = {0};
        int rc = complete(ws, j, stage, early, &notify, &e);
        if (notify >= 0)
            send_outcome(notify, rc, &e, j); /* ended before the source had everything */
        _exit(rc < 0);
    }
    close(p[1]);
    outcome o;
    ssize_t n = read_all(p[0], &o, sizeof o);
    close(p[0]);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    if (n != (ssize_t)sizeof o)
        return err_set(err, CORDON_STAGE_WORKSPACE, 0,
                       "the integration's helper ended early; `cordon workspace status %s` finishes or undoes "
                       "the integration",
                       ws->st.name);
    if (o.rc < 0) {
        *err = o.err;
        return -1;
    }
    integ_setstr(&j->commit, o.commit);
    return 0;
}

/* ---------------------------------------------------------------------------------- */

int ws_recover(cordon_workspace *ws, cordon_error *err)
{
    if (!ws_journal_pending(ws))
        return 0;
    journal j;
    if (integ_journal_read(ws, &j, err) < 0)
        return -1;
    int r;
    if (strcmp(j.phase, "stage") == 0) {
        /* the commit point was not reached: undo */
        r = integ_unstage(&j, err);
        if (r == 0)
            r = integ_journal_remove(ws, err);
        if (r == 0)
            ws_forget_scratch(ws);
    } else {
        r = integ_complete_detached(ws, &j, false, false, err);
    }
    integ_journal_free(&j);
    if (r < 0)
        return err_wrap(err, "workspace %s: finishing an interrupted integration", ws->st.name);
    return 1;
}
