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
int integ_build_commit(const cordon_workspace *ws, const ws_git *g, journal *j, const char *tip, cordon_error *err)
{
    char *fi = ws_path(ws, "integrate.fi"), *marks = ws_path(ws, "integrate.marks"), *ref = scratch_ref(ws);
    char *author = NULL, *committer = NULL, *marks_text = NULL;
    int ret = -1;
    FILE *f = NULL;
    int fd = -1;
    ws_out o = {0};
    bool have_out = false;
    if (idents(g, &author, &committer, err) < 0)
        goto out;
    TRACE("ws-fi-stream");
    fd = open(fi, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    f = fd >= 0 ? fdopen(fd, "w+") : NULL;
    if (!f) {
        err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s", fi);
        goto out;
    }
    fd = -1;
    for (size_t i = 0; i < j->n; i++) {
        const jrec *r = &j->v[i];
        if ((r->status != 'A' && r->status != 'M') || r->oid)
            continue;
        if (S_ISLNK(r->mode)) {
            char target[4096];
            ssize_t n = ws_readlink_nofollow(r->from, target, sizeof target);
            if (n < 0) {
                err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read the workspace's %s", r->path);
                goto out;
            }
            fprintf(f, "blob\nmark :%zu\ndata %zd\n", i + 1, n);
            fwrite(target, 1, (size_t)n, f);
            fputc('\n', f);
            continue;
        }
        _cleanup_fd_ int in = ws_open_nofollow(r->from, O_RDONLY);
        struct stat st;
        if (in < 0 || fstat(in, &st) < 0) {
            err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read the workspace's %s", r->path);
            goto out;
        }
        fprintf(f, "blob\nmark :%zu\ndata %lld\n", i + 1, (long long)st.st_size);
        if (fflush(f) != 0 || ws_copy_data(in, fileno(f)) < 0) {
            err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s%s", fi,
                    errno == ENOSPC || errno == EDQUOT ? " (the disk is full)" : "");
            goto out;
        }
        /* what copy_file_range wrote is past the stream's position: catch up */
        if (fseeko(f, 0, SEEK_END) < 0) {
            err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s", fi);
            goto out;
        }
        struct stat now;
        if (fstat(in, &now) < 0 || now.st_size != st.st_size) {
            err_set(err, CORDON_STAGE_WORKSPACE, 0, "%s changed while it was being integrated", r->path);
            goto out;
        }
        fputc('\n', f);
    }
    size_t cmark = j->n + 1;
    fprintf(f, "reset %s\ncommit %s\nmark :%zu\nauthor %s\ncommitter %s\ndata %zu\n%s\n", ref, ref, cmark, author,
            committer, strlen(j->message), j->message);
    if (*tip)
        fprintf(f, "from %s\n", tip);
    for (size_t i = 0; i < j->n; i++) {
        const jrec *r = &j->v[i];
        if (r->status == 'D') {
            fputs("D ", f);
        } else if (r->status == 'A' || r->status == 'M') {
            if (r->oid)
                fprintf(f, "M %06o %s ", integ_git_mode(r->mode), r->oid);
            else
                fprintf(f, "M %06o :%zu ", integ_git_mode(r->mode), i + 1);
        } else {
            continue;
        }
        put_path(f, r->path);
        fputc('\n', f);
    }
    fprintf(f, "\nls :%zu \"\"\n", cmark);
    if (*tip)
        fprintf(f, "ls %s \"\"\n", tip);
    fputs("done\n", f);
    if (fflush(f) != 0 || ferror(f) || fseeko(f, 0, SEEK_SET) < 0) {
        err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s%s", fi,
                errno == ENOSPC || errno == EDQUOT ? " (the disk is full)" : "");
        goto out;
    }
    TRACE("ws-fi-run");
    {
        char *em = xasprintf("--export-marks=%s", marks);
        /* --force: a scratch ref an interrupted run left is replaced, not refused; the
         * pack compressed lightly, as git compresses loose objects */
        const char *args[] = {"-c", "pack.compression=1", "fast-import", "--quiet", "--done", "--force", em, NULL};
        int r = ws_git_run_fd(g, args, fileno(f), &o, err);
        free(em);
        if (r < 0)
            goto out;
        have_out = true;
        if (!WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0) {
            char what[1024];
            ws_out_describe(&o, what, sizeof what);
            err_set(err, CORDON_STAGE_WORKSPACE, 0, "git fast-import (in %s) %s", g->work_tree, what);
            /* its crash report is not the user's to clean up */
            char *crash = xasprintf("%s/.git/fast_import_crash_%d", g->work_tree, (int)o.pid);
            unlink(crash);
            free(crash);
            goto out;
        }
    }
    TRACE("ws-fi-ran");
    /* the marks: blob ids for the records, the commit's id */
    size_t mlen = 0;
    marks_text = ws_read_file(marks, (size_t)1 << 28, &mlen);
    if (!marks_text) {
        err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read git fast-import's marks");
        goto out;
    }
    char *commit = NULL, *save = NULL;
    for (char *l = strtok_r(marks_text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(l, ' ');
        if (l[0] != ':' || !sp)
            continue;
        size_t m = strtoul(l + 1, NULL, 10);
        if (m == cmark)
            commit = sp + 1;
        else if (m >= 1 && m <= j->n && !j->v[m - 1].oid)
            integ_setstr(&j->v[m - 1].oid, sp + 1);
    }
    /* `ls` of both root trees: the same means nothing to commit */
    char trees[2][80] = {"", ""};
    int nt = 0;
    for (char *l = strtok_r(o.out, "\n", &save); l && nt < 2; l = strtok_r(NULL, "\n", &save))
        if (sscanf(l, "%*o tree %79s", trees[nt]) == 1)
            nt++;
    if (!commit || nt != (*tip ? 2 : 1)) {
        err_set(err, CORDON_STAGE_WORKSPACE, 0, "git fast-import did not say what it made");
        goto out;
    }
    if (*tip && strcmp(trees[0], trees[1]) == 0) {
        integ_setstr(&j->commit, ""); /* the changes only bring the working tree back to HEAD's */
        const char *del[] = {"update-ref", "-d", ref, NULL};
        cordon_error e2;
        ws_git_ok(g, del, NULL, 0, NULL, &e2);
    } else {
        integ_setstr(&j->commit, commit);
    }
    integ_setstr(&j->old, tip);
    ret = 0;
out:
    if (f)
        fclose(f);
    if (fd >= 0)
        close(fd);
    if (have_out)
        ws_out_free(&o);
    unlink(fi);
    unlink(marks);
    free(marks_text);
    free(author);
    free(committer);
    free(fi);
    free(marks);
    free(ref);
    return ret;
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

/* Move the branch to the commit by compare-and-swap (and drop the scratch ref, in the
 * same transaction); on a new tip build the commit again on that tip and try again. */
int integ_move_branch(cordon_workspace *ws, const ws_git *g, journal *j, cordon_error *err)
{
    char *ref = scratch_ref(ws);
    int ret = -1;
    for (int attempt = 0; attempt < INTEG_CAS_TRIES; attempt++) {
        /* the tip the changes were built on: "" for a new branch, and for a journal that
         * lost it (a journal is read back after a crash) */
        const char *old = j->old ? j->old : "";
        char *tip = NULL;
        if (integ_git_tip(g, j->branch, &tip, err) < 0)
            goto out;
        if (j->commit && *j->commit && strcmp(tip, j->commit) == 0) {
            free(tip);
            ret = 0; /* done already (a recovery) */
            goto out;
        }
        if (strcmp(tip, old) != 0) {
            if (j->worktree) {
                free(tip);
                err_set(err, CORDON_STAGE_WORKSPACE, 0,
                        "the branch %s moved while the merge was being applied; nothing of the merge was "
                        "applied: integrate again",
                        integ_branch_short(j->branch));
                goto out;
            }
            /* a new tip: the same changes on top of it */
            int r = j->worktree ? -1 : integ_build_commit(ws, g, j, tip, err);
            free(tip);
            if (r < 0 || integ_journal_write(ws, j, err) < 0)
                goto out;
            continue;
        }
        free(tip);
        if (!j->commit || !*j->commit) {
            ret = 0; /* nothing to commit */
            goto out;
        }
        size_t zl = strlen(j->commit);
        char zero[80];
        memset(zero, '0', zl < sizeof zero ? zl : sizeof zero - 1);
        zero[zl < sizeof zero ? zl : sizeof zero - 1] = '\0';
        char *tx = j->worktree ? xasprintf("start\nupdate %s %s %s\ncommit\n", j->branch, j->commit, *old ? old : zero)
                               : xasprintf("start\nupdate %s %s %s\ndelete %s\ncommit\n", j->branch, j->commit,
                                           *old ? old : zero, ref);
        char *msg = xasprintf("cordon workspace integrate %s", ws->st.name);
        const char *args[] = {"update-ref", "-m", msg, "--stdin", NULL};
        ws_out o;
        int r = ws_git_run(g, args, tx, strlen(tx), &o, err);
        free(msg);
        free(tx);
        if (r < 0)
            goto out;
        bool ok = WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0;
        char what[1024];
        ws_out_describe(&o, what, sizeof what);
        ws_out_free(&o);
        if (ok) {
            ret = 0;
            goto out;
        }
        /* moved meanwhile (or locked by another git): look again */
        char *now = NULL;
        if (integ_git_tip(g, j->branch, &now, err) < 0)
            goto out;
        bool moved = strcmp(now, old) != 0;
        free(now);
        if (!moved) {
            if (attempt + 1 < INTEG_CAS_TRIES) {
                struct timespec ts = {0, 20 * 1000 * 1000};
                nanosleep(&ts, NULL);
                continue;
            }
            err_set(err, CORDON_STAGE_WORKSPACE, 0, "cannot move the branch %s: git update-ref %s",
                    integ_branch_short(j->branch), what);
            goto out;
        }
    }
    err_set(err, CORDON_STAGE_WORKSPACE, 0,
            "the branch %s kept moving (%d tries); nothing was integrated: try again when it is quiet",
            integ_branch_short(j->branch), INTEG_CAS_TRIES);
out:
    free(ref);
    return ret;
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
