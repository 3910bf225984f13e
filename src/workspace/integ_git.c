// SPDX-License-Identifier: Apache-2.0
/* The typed git steps of an integration (integ.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>
#include <time.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"
#include "util/trace.h"
#include "workspace/integ.h"
#include "workspace/ws.h"

/* ---------------------------------------------------------------------------------- */
/* git */

const char *integ_branch_short(const char *ref)
{
    return strncmp(ref, "refs/heads/", 11) == 0 ? ref + 11 : ref;
}

unsigned integ_git_mode(unsigned m)
{
    if (S_ISLNK(m))
        return 0120000;
    return (m & 0100) ? 0100755 : 0100644;
}

/* The tip of ref, or "" when the branch has no commit yet. */
int integ_git_tip(const ws_git *g, const char *ref, char **tip, cordon_error *err)
{
    char *spec = xasprintf("%s^{commit}", ref);
    const char *args[] = {"rev-parse", "-q", "--verify", spec, NULL};
    ws_out o;
    int r = ws_git_run(g, args, NULL, 0, &o, err);
    free(spec);
    if (r < 0)
        return -1;
    if (WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0) {
        char *t = o.out;
        t[strcspn(t, "\n")] = '\0';
        *tip = xstrdup(t);
    } else {
        *tip = xstrdup("");
    }
    ws_out_free(&o);
    return 0;
}

/* A path for fast-import: C-quoted when it has to be (a newline, a leading quote) or
 * could be misread (a backslash, control bytes). */
static void put_path(FILE *f, const char *p)
{
    bool quote = p[0] == '"';
    for (const char *c = p; *c && !quote; c++)
        quote = *c == '\\' || (unsigned char)*c < 0x20 || *c == 0x7f;
    if (!quote) {
        fputs(p, f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)p; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c == '\n')
            fputs("\\n", f);
        else if (*c < 0x20 || *c == 0x7f)
            fprintf(f, "\\%03o", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

/* "Name <email> 1700000000 +0000" for the author and the committer, as git would use. */
static int idents(const ws_git *g, char **author, char **committer, cordon_error *err)
{
    const char *args[] = {"var", "-l", NULL};
    char *out = NULL;
    if (ws_git_ok(g, args, NULL, 0, &out, err) < 0)
        return err_wrap(err, "who makes the commit? (git config user.name and user.email)");
    *author = *committer = NULL;
    char *save = NULL;
    for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (strncmp(l, "GIT_AUTHOR_IDENT=", 17) == 0 && !*author)
            *author = xstrdup(l + 17);
        else if (strncmp(l, "GIT_COMMITTER_IDENT=", 20) == 0 && !*committer)
            *committer = xstrdup(l + 20);
    }
    free(out);
    if (!*author || !*committer) {
        /* (the caller frees them too, on its way out) */
        free(*author);
        free(*committer);
        *author = *committer = NULL;
        return err_set(err, CORDON_STAGE_WORKSPACE, 0,
                       "git does not know who makes the commit: set git config user.name and user.email");
    }
    return 0;
}

static char *scratch_ref(const cordon_workspace *ws)
{
    return xasprintf("refs/cordon/integrate/%s", ws->st.name);
}

/* Drop the scratch ref an integration left when it was stopped (killed, or undone) before
 * the branch's compare-and-swap, which drops it otherwise.  Best effort, by design: the
 * ref is garbage that no command reads (the next integration replaces it, --force), and a
 * source whose git is gone or broken must not keep a workspace from being removed or an
 * undone integration from counting as undone; such a source keeps the ref. */
void ws_forget_scratch(cordon_workspace *ws)
{
    if (!ws->st.git || !ws_git_is_top(ws->st.source))
        return;
    ws_git g = ws_source_git(ws);
    char *ref = scratch_ref(ws);
    const char *del[] = {"update-ref", "-d", ref, NULL};
    cordon_error e;
    (void)ws_git_ok(&g, del, NULL, 0, NULL, &e);
    free(ref);
}

/* Build the commit on `tip` with `git fast-import`: tip's tree plus exactly the changes
 * (the blobs written straight into a pack: the view's bytes, no filters), on a scratch
 * ref that the branch's compare-and-swap deletes.  Nothing of the user's index or working
 * tree is read or touched.  The first time the blobs go in the stream, with marks whose
 * ids are kept (the user's index gets them); later builds (a new tip) name them by id. */
static int stream_failed(const char *fi, cordon_error *err)
{
    return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s%s", fi,
                   errno == ENOSPC || errno == EDQUOT ? " (the disk is full)" : "");
}

/* One blob of the stream: r's content (a symlink's target, a file's bytes, which must not
 * change meanwhile), with mark `mark`. */
static int put_blob(FILE *f, const char *fi, const jrec *r, size_t mark, cordon_error *err)
{
    if (S_ISLNK(r->mode)) {
        char target[4096];
        ssize_t n = ws_readlink_nofollow(r->from, target, sizeof target);
        if (n < 0)
            return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read the workspace's %s", r->path);
        fprintf(f, "blob\nmark :%zu\ndata %zd\n", mark, n);
        fwrite(target, 1, (size_t)n, f);
        fputc('\n', f);
        return 0;
    }
    _cleanup_fd_ int in = ws_open_nofollow(r->from, O_RDONLY);
    struct stat st, now;
    if (in < 0 || fstat(in, &st) < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read the workspace's %s", r->path);
    fprintf(f, "blob\nmark :%zu\ndata %lld\n", mark, (long long)st.st_size);
    if (fflush(f) != 0 || ws_copy_data(in, fileno(f)) < 0)
        return stream_failed(fi, err);
    /* what copy_file_range wrote is past the stream's position: catch up */
    if (fseeko(f, 0, SEEK_END) < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s", fi);
    if (fstat(in, &now) < 0 || now.st_size != st.st_size)
        return err_set(err, CORDON_STAGE_WORKSPACE, 0, "%s changed while it was being integrated", r->path);
    fputc('\n', f);
    return 0;
}

/* The commit (mark cmark) on ref: tip's tree with j's changes, then `ls` of both root
 * trees (the same: nothing to commit), then the end, and the stream rewound. */
static int put_commit(FILE *f, const char *fi, const journal *j, const char *ref, const char *tip, size_t cmark,
                      const char *author, const char *committer, cordon_error *err)
{
    fprintf(f, "reset %s\ncommit %s\nmark :%zu\nauthor %s\ncommitter %s\ndata %zu\n%s\n", ref, ref, cmark, author,
            committer, strlen(j->message), j->message);
    if (*tip)
        fprintf(f, "from %s\n", tip);
    for (size_t i = 0; i < j->n; i++) {
        const jrec *r = &j->v[i];
        if (r->status == 'D')
            fputs("D ", f);
        else if ((r->status == 'A' || r->status == 'M') && r->oid)
            fprintf(f, "M %06o %s ", integ_git_mode(r->mode), r->oid);
        else if (r->status == 'A' || r->status == 'M')
            fprintf(f, "M %06o :%zu ", integ_git_mode(r->mode), i + 1);
        else
            continue;
        put_path(f, r->path);
        fputc('\n', f);
    }
    fprintf(f, "\nls :%zu \"\"\n", cmark);
    if (*tip)
        fprintf(f, "ls %s \"\"\n", tip);
    fputs("done\n", f);
    if (fflush(f) != 0 || ferror(f) || fseeko(f, 0, SEEK_SET) < 0)
        return stream_failed(fi, err);
    return 0;
}

/* git fast-import over the stream in fd, its marks into `marks`: its output in *o. */
static int run_fast_import(const ws_git *g, int fd, const char *marks, ws_out *o, cordon_error *err)
{
    _cleanup_free_ char *em = xasprintf("--export-marks=%s", marks);
    /* --force: a scratch ref an interrupted run left is replaced, not refused; the pack
     * compressed lightly, as git compresses loose objects */
    const char *args[] = {"-c", "pack.compression=1", "fast-import", "--quiet", "--done", "--force", em, NULL};
    if (ws_git_run_fd(g, args, fd, o, err) < 0)
        return -1;
    if (WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0)
        return 0;
    char what[1024];
    ws_out_describe(o, what, sizeof what);
    err_set(err, CORDON_STAGE_WORKSPACE, 0, "git fast-import (in %s) %s", g->work_tree, what);
    /* its crash report is not the user's to clean up */
    _cleanup_free_ char *crash = xasprintf("%s/.git/fast_import_crash_%d", g->work_tree, (int)o->pid);
    unlink(crash);
    return -1;
}

/* What fast-import made: the blob ids into j's records, the commit's id (NULL when it
 * did not say), and from its `ls` output whether the tree is tip's own. */
static int read_made(journal *j, const char *marks, ws_out *o, const char *tip, size_t cmark, char **commit,
                     bool *same_tree, cordon_error *err)
{
    size_t mlen = 0;
    _cleanup_free_ char *marks_text = ws_read_file(marks, (size_t)1 << 28, &mlen);
    if (!marks_text)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read git fast-import's marks");
    char *save = NULL;
    *commit = NULL;
    for (char *l = strtok_r(marks_text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(l, ' ');
        if (l[0] != ':' || !sp)
            continue;
        size_t m = strtoul(l + 1, NULL, 10);
        if (m == cmark)
            *commit = xstrdup(sp + 1);
        else if (m >= 1 && m <= j->n && !j->v[m - 1].oid)
            integ_setstr(&j->v[m - 1].oid, sp + 1);
    }
    /* `ls` of both root trees: the same means nothing to commit */
    char trees[2][80] = {"", ""};
    int nt = 0;
    for (char *l = strtok_r(o->out, "\n", &save); l && nt < 2; l = strtok_r(NULL, "\n", &save))
        if (sscanf(l, "%*o tree %79s", trees[nt]) == 1)
            nt++;
    if (!*commit || nt != (*tip ? 2 : 1))
        return err_set(err, CORDON_STAGE_WORKSPACE, 0, "git fast-import did not say what it made");
    *same_tree = *tip && strcmp(trees[0], trees[1]) == 0;
    return 0;
}

static void unlink_path(char **p)
{
    if (*p)
        unlink(*p);
    free(*p);
}

/* Build the commit on `tip` with `git fast-import`: tip's tree plus exactly the changes
 * (the blobs written straight into a pack: the view's bytes, no filters), on a scratch
 * ref that the branch's compare-and-swap deletes.  Nothing of the user's index or working
 * tree is read or touched.  The first time the blobs go in the stream, with marks whose
 * ids are kept (the user's index gets them); later builds (a new tip) name them by id. */
int integ_build_commit(const cordon_workspace *ws, const ws_git *g, journal *j, const char *tip, cordon_error *err)
{
    __attribute__((cleanup(unlink_path))) char *fi = ws_path(ws, "integrate.fi");
    __attribute__((cleanup(unlink_path))) char *marks = ws_path(ws, "integrate.marks");
    _cleanup_free_ char *ref = scratch_ref(ws), *author = NULL, *committer = NULL, *commit = NULL;
    if (idents(g, &author, &committer, err) < 0)
        return -1;
    TRACE("ws-fi-stream");
    _cleanup_fd_ int fd = open(fi, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    _cleanup_file_ FILE *f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    if (!f)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s", fi);
    (void)steal_fd(&fd); /* (the stream's now) */
    for (size_t i = 0; i < j->n; i++) {
        const jrec *r = &j->v[i];
        if ((r->status == 'A' || r->status == 'M') && !r->oid && put_blob(f, fi, r, i + 1, err) < 0)
            return -1;
    }
    size_t cmark = j->n + 1;
    if (put_commit(f, fi, j, ref, tip, cmark, author, committer, err) < 0)
        return -1;
    TRACE("ws-fi-run");
    _cleanup_out_ ws_out o = {0};
    bool same_tree = false;
    if (run_fast_import(g, fileno(f), marks, &o, err) < 0)
        return -1;
    TRACE("ws-fi-ran");
    if (read_made(j, marks, &o, tip, cmark, &commit, &same_tree, err) < 0)
        return -1;
    if (same_tree) {
        integ_setstr(&j->commit, ""); /* the changes only bring the working tree back to HEAD's */
        const char *del[] = {"update-ref", "-d", ref, NULL};
        cordon_error e2;
        ws_git_ok(g, del, NULL, 0, NULL, &e2);
    } else {
        integ_setstr(&j->commit, commit);
    }
    integ_setstr(&j->old, tip);
    return 0;
}

/* "MODE OID\tPATH\0" per file change, for update-index -z --index-info (mode 0 removes). */
static char *index_info(const journal *j, size_t *len)
{
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < j->n; i++) {
        const jrec *r = &j->v[i];
        char *line;
        if (r->status == 'D')
            line = xasprintf("0 %s\t%s", "0000000000000000000000000000000000000000", r->path);
        else if ((r->status == 'A' || r->status == 'M') && r->oid)
            line = xasprintf("%o %s\t%s", integ_git_mode(r->mode), r->oid, r->path);
        else
            continue;
        size_t l = strlen(line) + 1;
        grow(&buf, &cap, n + l, 1);
        memcpy(buf + n, line, l);
        n += l;
        free(line);
    }
    *len = n;
    return buf;
}

/* One compare-and-swap of the branch from old to j->commit (a merge's without the
 * scratch ref, which it never made).  0: moved; 1: git refused (what: its words); -1. */
static int cas_once(const cordon_workspace *ws, const ws_git *g, const journal *j, const char *old, const char *ref,
                    char *what, size_t what_n, cordon_error *err)
{
    size_t zl = strlen(j->commit);
    char zero[80];
    memset(zero, '0', zl < sizeof zero ? zl : sizeof zero - 1);
    zero[zl < sizeof zero ? zl : sizeof zero - 1] = '\0';
    _cleanup_free_ char *tx =
        j->worktree
            ? xasprintf("start\nupdate %s %s %s\ncommit\n", j->branch, j->commit, *old ? old : zero)
            : xasprintf("start\nupdate %s %s %s\ndelete %s\ncommit\n", j->branch, j->commit, *old ? old : zero, ref);
    _cleanup_free_ char *msg = xasprintf("cordon workspace integrate %s", ws->st.name);
    const char *args[] = {"update-ref", "-m", msg, "--stdin", NULL};
    _cleanup_out_ ws_out o = {0};
    if (ws_git_run(g, args, tx, strlen(tx), &o, err) < 0)
        return -1;
    ws_out_describe(&o, what, what_n);
    return WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 ? 0 : 1;
}

/* Move the branch to the commit by compare-and-swap (and drop the scratch ref, in the
 * same transaction); on a new tip build the commit again on that tip and try again. */
int integ_move_branch(cordon_workspace *ws, const ws_git *g, journal *j, cordon_error *err)
{
    _cleanup_free_ char *ref = scratch_ref(ws);
    for (int attempt = 0; attempt < INTEG_CAS_TRIES; attempt++) {
        /* the tip the changes were built on: "" for a new branch, and for a journal that
         * lost it (a journal is read back after a crash) */
        const char *old = j->old ? j->old : "";
        _cleanup_free_ char *tip = NULL;
        if (integ_git_tip(g, j->branch, &tip, err) < 0)
            return -1;
        if (j->commit && *j->commit && strcmp(tip, j->commit) == 0)
            return 0; /* done already (a recovery) */
        if (strcmp(tip, old) != 0) {
            if (j->worktree)
                return err_set(err, CORDON_STAGE_WORKSPACE, 0,
                               "the branch %s moved while the merge was being applied; nothing of the merge was "
                               "applied: integrate again",
                               integ_branch_short(j->branch));
            /* a new tip: the same changes on top of it */
            if (integ_build_commit(ws, g, j, tip, err) < 0 || integ_journal_write(ws, j, err) < 0)
                return -1;
            continue;
        }
        if (!j->commit || !*j->commit)
            return 0; /* nothing to commit */
        char what[1024];
        int r = cas_once(ws, g, j, old, ref, what, sizeof what, err);
        if (r <= 0)
            return r;
        /* moved meanwhile (or locked by another git): look again */
        _cleanup_free_ char *now = NULL;
        if (integ_git_tip(g, j->branch, &now, err) < 0)
            return -1;
        if (strcmp(now, old) != 0)
            continue;
        if (attempt + 1 == INTEG_CAS_TRIES)
            return err_set(err, CORDON_STAGE_WORKSPACE, 0, "cannot move the branch %s: git update-ref %s",
                           integ_branch_short(j->branch), what);
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    return err_set(err, CORDON_STAGE_WORKSPACE, 0,
                   "the branch %s kept moving (%d tries); nothing was integrated: try again when it is quiet",
                   integ_branch_short(j->branch), INTEG_CAS_TRIES);
}

/* The user's own index: exactly the integrated paths, as in the new commit. */
int integ_update_user_index(const ws_git *g, const journal *j, cordon_error *err)
{
    size_t len;
    char *info = index_info(j, &len);
    int ret = 0;
    if (len) {
        const char *args[] = {"update-index", "-z", "--index-info", NULL};
        for (int attempt = 0; attempt < 100; attempt++) {
            ret = ws_git_ok(g, args, info, len, NULL, err);
            if (ret == 0 || !strstr(err->message, "index.lock"))
                break;
            struct timespec ts = {0, 20 * 1000 * 1000}; /* another git holds the index */
            nanosleep(&ts, NULL);
        }
    }
    free(info);
    return ret < 0 ? err_wrap(err, "updating the index of %s", g->work_tree) : 0;
}
