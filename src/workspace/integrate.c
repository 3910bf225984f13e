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
 * `read-tree -m -u`). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/openat2.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"
#include "util/trace.h"
#include "workspace/ws.h"

#define JOURNAL   "journal.json"
#define CAS_TRIES 32

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

static void refresh_baseline(cordon_workspace *ws);

static void journal_free(journal *j)
{
    for (size_t i = 0; i < j->n; i++) {
        free(j->v[i].path);
        free(j->v[i].from);
        free(j->v[i].oid);
    }
    free(j->v);
    free(j->phase);
    free(j->branch);
    free(j->old);
    free(j->commit);
    free(j->message);
    free(j->stage);
    free(j->boot);
    *j = (journal){0};
}

static char *dupn(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static void setstr(char **dst, const char *v)
{
    free(*dst);
    *dst = dupn(v);
}

static int journal_write(const cordon_workspace *ws, const journal *j, cordon_error *err)
{
    json_t *o = json_object();
    json_object_set_new(o, "version", json_integer(1));
    json_object_set_new(o, "phase", json_string(j->phase));
    json_object_set_new(o, "git", json_boolean(j->git));
    json_object_set_new(o, "worktree", json_boolean(j->worktree));
    json_object_set_new(o, "ref_done", json_boolean(j->ref_done));
    json_object_set_new(o, "files_done", json_boolean(j->files_done));
    json_object_set_new(o, "branch", j->branch ? json_string(j->branch) : json_null());
    json_object_set_new(o, "old", j->old ? json_string(j->old) : json_null());
    json_object_set_new(o, "commit", j->commit ? json_string(j->commit) : json_null());
    json_object_set_new(o, "message", j->message ? json_string(j->message) : json_null());
    json_object_set_new(o, "stage", j->stage ? json_string(j->stage) : json_null());
    json_object_set_new(o, "boot", j->boot ? json_string(j->boot) : json_null());
    json_t *a = json_array();
    for (size_t i = 0; i < j->n; i++) {
        const jrec *r = &j->v[i];
        json_t *e = json_object();
        char st[2] = {r->status, 0};
        json_object_set_new(e, "s", json_string(st));
        json_object_set_new(e, "p", json_string(r->path));
        json_object_set_new(e, "m", json_integer(r->mode));
        if (r->from)
            json_object_set_new(e, "f", json_string(r->from));
        if (r->oid)
            json_object_set_new(e, "o", json_string(r->oid));
        json_array_append_new(a, e);
    }
    json_object_set_new(o, "changes", a);
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    if (!text)
        return err_set(err, CORDON_STAGE_WORKSPACE, ENOMEM, "journal");
    int r = ws_write_atomic(ws->dir, JOURNAL, text, strlen(text), err);
    free(text);
    return r;
}

static int journal_read(const cordon_workspace *ws, journal *j, cordon_error *err)
{
    *j = (journal){0};
    char *path = ws_path(ws, JOURNAL);
    size_t len;
    char *text = ws_read_file(path, (size_t)1 << 30, &len);
    int e = errno;
    free(path);
    if (!text)
        return err_set(err, CORDON_STAGE_WORKSPACE, e, "workspace %s: cannot read its journal", ws->st.name);
    json_error_t je;
    json_t *o = json_loadb(text, len, 0, &je);
    free(text);
    json_t *a = o ? json_object_get(o, "changes") : NULL;
    const char *phase = o ? json_string_value(json_object_get(o, "phase")) : NULL;
    if (!o || !json_is_array(a) || !phase || (strcmp(phase, "stage") != 0 && strcmp(phase, "apply") != 0)) {
        json_decref(o);
        return err_set(err, CORDON_STAGE_WORKSPACE, 0,
                       "workspace %s: its journal %s/%s is corrupt; an integration was interrupted and cannot be "
                       "finished: check the source, then remove the journal",
                       ws->st.name, ws->dir, JOURNAL);
    }
    j->phase = xstrdup(phase);
    j->git = json_is_true(json_object_get(o, "git"));
    j->worktree = json_is_true(json_object_get(o, "worktree"));
    j->ref_done = json_is_true(json_object_get(o, "ref_done"));
    j->files_done = json_is_true(json_object_get(o, "files_done"));
    j->branch = dupn(json_string_value(json_object_get(o, "branch")));
    j->old = dupn(json_string_value(json_object_get(o, "old")));
    j->commit = dupn(json_string_value(json_object_get(o, "commit")));
    j->message = dupn(json_string_value(json_object_get(o, "message")));
    j->stage = dupn(json_string_value(json_object_get(o, "stage")));
    j->boot = dupn(json_string_value(json_object_get(o, "boot")));
    size_t i;
    json_t *el;
    json_array_foreach(a, i, el)
    {
        const char *s = json_string_value(json_object_get(el, "s"));
        const char *p = json_string_value(json_object_get(el, "p"));
        if (!s || !p)
            continue;
        grow(&j->v, &j->cap, j->n + 1, sizeof *j->v);
        j->v[j->n++] = (jrec){
            .status = s[0],
            .path = xstrdup(p),
            .mode = (unsigned)json_integer_value(json_object_get(el, "m")),
            .from = dupn(json_string_value(json_object_get(el, "f"))),
            .oid = dupn(json_string_value(json_object_get(el, "o"))),
        };
    }
    json_decref(o);
    return 0;
}

bool ws_journal_pending(const cordon_workspace *ws)
{
    char *p = ws_path(ws, JOURNAL);
    bool yes = access(p, F_OK) == 0;
    free(p);
    return yes;
}

static int journal_remove(const cordon_workspace *ws, cordon_error *err)
{
    char *p = ws_path(ws, JOURNAL);
    int r = unlink(p) < 0 && errno != ENOENT ? err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot remove %s", p) : 0;
    free(p);
    _cleanup_fd_ int d = open(ws->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d >= 0)
        fsync(d);
    return r;
}

/* ---------------------------------------------------------------------------------- */
/* the source, reached without following symlinks */

static int open_beneath(int root, const char *rel, int flags)
{
    struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
                           .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, root, rel && *rel ? rel : ".", &how, sizeof how);
}

static void split_rel(const char *rel, char **dir, const char **leaf)
{
    const char *slash = strrchr(rel, '/');
    *dir = slash ? xstrndup(rel, (size_t)(slash - rel)) : xstrdup("");
    *leaf = slash ? slash + 1 : rel;
}

/* Make rel a directory in the source (and its parents); what stands in the way (a file
 * or a symlink where the view has a directory) goes: the workspace's version wins. */
static int ensure_dir(int root, const char *rel, mode_t mode, cordon_error *err)
{
    int cur = fcntl(root, F_DUPFD_CLOEXEC, 3);
    if (cur < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "dup");
    char *copy = xstrdup(rel);
    char *save = NULL;
    int ret = 0;
    for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        int next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (next < 0 && (errno == ENOTDIR || errno == ELOOP)) {
            if (unlinkat(cur, c, 0) < 0 && errno != ENOENT) {
                ret = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot replace %s in the source", rel);
                break;
            }
            errno = ENOENT;
        }
        if (next < 0 && errno == ENOENT) {
            if (mkdirat(cur, c, mode & 07777) < 0 && errno != EEXIST) {
                ret = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot create %s in the source", rel);
                break;
            }
            next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            ret = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open %s in the source", rel);
            break;
        }
        close(cur);
        cur = next;
    }
    free(copy);
    if (ret < 0) {
        close(cur);
        return -1;
    }
    return cur;
}

/* Write rec's content as the file `name` in dirfd (created anew). */
static int write_content(const jrec *r, int dirfd, const char *name, int owner_dirfd, const char *owner_name,
                         cordon_error *err)
{
    unlinkat(dirfd, name, 0);
    if (S_ISLNK(r->mode)) {
        char target[4096];
        ssize_t n = ws_readlink_nofollow(r->from, target, sizeof target - 1);
        if (n < 0)
            return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read the workspace's %s", r->path);
        target[n] = '\0';
        if (symlinkat(target, dirfd, name) < 0)
            return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s%s", r->path,
                           errno == ENOSPC || errno == EDQUOT ? " (the disk is full)" : "");
        return 0;
    }
    _cleanup_fd_ int in = ws_open_nofollow(r->from, O_RDONLY);
    if (in < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read the workspace's %s", r->path);
    _cleanup_fd_ int out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s", r->path);
    if (ws_copy_data(in, out) < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s%s", r->path,
                       errno == ENOSPC || errno == EDQUOT ? " (the disk is full)" : "");
    if (geteuid() == 0 && owner_dirfd >= 0) {
        /* as root: keep the file's owner (a new file takes its directory's) */
        struct stat st;
        if (fstatat(owner_dirfd, owner_name, &st, AT_SYMLINK_NOFOLLOW) == 0 ||
            fstatat(owner_dirfd, "", &st, AT_EMPTY_PATH) == 0) {
            if (fchown(out, st.st_uid, st.st_gid) < 0)
                return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot give %s its owner", r->path);
        }
    }
    if (fchmod(out, r->mode & 07777) < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s", r->path);
    return 0;
}

static char *stage_name(size_t i)
{
    return xasprintf("%zu", i);
}

/* ---------------------------------------------------------------------------------- */
/* git */

static const char *branch_short(const char *ref)
{
    return strncmp(ref, "refs/heads/", 11) == 0 ? ref + 11 : ref;
}

static unsigned git_mode(unsigned m)
{
    if (S_ISLNK(m))
        return 0120000;
    return (m & 0100) ? 0100755 : 0100644;
}

/* The tip of ref, or "" when the branch has no commit yet. */
static int git_tip(const ws_git *g, const char *ref, char **tip, cordon_error *err)
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
static int build_commit(const cordon_workspace *ws, const ws_git *g, journal *j, const char *tip, cordon_error *err)
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
                fprintf(f, "M %06o %s ", git_mode(r->mode), r->oid);
            else
                fprintf(f, "M %06o :%zu ", git_mode(r->mode), i + 1);
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
            setstr(&j->v[m - 1].oid, sp + 1);
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
        setstr(&j->commit, ""); /* the changes only bring the working tree back to HEAD's */
        const char *del[] = {"update-ref", "-d", ref, NULL};
        cordon_error e2;
        ws_git_ok(g, del, NULL, 0, NULL, &e2);
    } else {
        setstr(&j->commit, commit);
    }
    setstr(&j->old, tip);
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
            line = xasprintf("%o %s\t%s", git_mode(r->mode), r->oid, r->path);
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
static int move_branch(cordon_workspace *ws, const ws_git *g, journal *j, cordon_error *err)
{
    char *ref = scratch_ref(ws);
    int ret = -1;
    for (int attempt = 0; attempt < CAS_TRIES; attempt++) {
        /* the tip the changes were built on: "" for a new branch, and for a journal that
         * lost it (a journal is read back after a crash) */
        const char *old = j->old ? j->old : "";
        char *tip = NULL;
        if (git_tip(g, j->branch, &tip, err) < 0)
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
                        branch_short(j->branch));
                goto out;
            }
            /* a new tip: the same changes on top of it */
            int r = j->worktree ? -1 : build_commit(ws, g, j, tip, err);
            free(tip);
            if (r < 0 || journal_write(ws, j, err) < 0)
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
        if (git_tip(g, j->branch, &now, err) < 0)
            goto out;
        bool moved = strcmp(now, old) != 0;
        free(now);
        if (!moved) {
            if (attempt + 1 < CAS_TRIES) {
                struct timespec ts = {0, 20 * 1000 * 1000};
                nanosleep(&ts, NULL);
                continue;
            }
            err_set(err, CORDON_STAGE_WORKSPACE, 0, "cannot move the branch %s: git update-ref %s",
                    branch_short(j->branch), what);
            goto out;
        }
    }
    err_set(err, CORDON_STAGE_WORKSPACE, 0,
            "the branch %s kept moving (%d tries); nothing was integrated: try again when it is quiet",
            branch_short(j->branch), CAS_TRIES);
out:
    free(ref);
    return ret;
}

/* The user's own index: exactly the integrated paths, as in the new commit. */
static int update_user_index(const ws_git *g, const journal *j, cordon_error *err)
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

/* ---------------------------------------------------------------------------------- */
/* staging */

static bool same_mount(int a, int b)
{
    struct statx x, y;
    if (statx(a, "", AT_EMPTY_PATH, STATX_MNT_ID, &x) < 0 || statx(b, "", AT_EMPTY_PATH, STATX_MNT_ID, &y) < 0)
        return false;
    return x.stx_dev_major == y.stx_dev_major && x.stx_dev_minor == y.stx_dev_minor &&
           (!(x.stx_mask & STATX_MNT_ID) || !(y.stx_mask & STATX_MNT_ID) || x.stx_mnt_id == y.stx_mnt_id);
}

/* Where new files are written before they are renamed into the source: a directory on
 * the same mount (rename(2) cannot cross one), as invisible as can be. */
static char *choose_stage(const cordon_workspace *ws, int srcfd, bool git)
{
    {
        _cleanup_fd_ int d = open(ws->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (d >= 0 && same_mount(srcfd, d))
            return ws_path(ws, "stage");
    }
    if (git) {
        char *gd = path_join(ws->st.source, ".git");
        struct stat st;
        _cleanup_fd_ int d =
            lstat(gd, &st) == 0 && S_ISDIR(st.st_mode) ? open(gd, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        if (d >= 0 && same_mount(srcfd, d)) {
            char *p = xasprintf("%s/cordon-stage-%s", gd, ws->st.name);
            free(gd);
            return p;
        }
        free(gd);
    }
    return xasprintf("%s/.cordon-stage-%s", ws->st.source, ws->st.name);
}

static int unstage(const journal *j, cordon_error *err)
{
    if (!j->stage)
        return 0;
    return ws_rmtree_path(j->stage, err);
}

/* The kernel backend's upper layer is emptied once the source has everything, and no run
 * can touch it meanwhile (integrate holds the run lock): its file is staged by a hard link
 * instead of a copy, the overlay's own marks (user.overlay.*) taken off first.  False
 * when that cannot be done (another mount, another backend): then it is copied. */
static bool link_content(const cordon_workspace *ws, const jrec *r, int sfd, const char *name, int owner_dirfd,
                         const char *owner_name)
{
    if (ws->st.backend != CORDON_WS_KERNEL)
        return false;
    if (!S_ISLNK(r->mode)) {
        char names[4096];
        ssize_t n = llistxattr(r->from, names, sizeof names);
        if (n < 0 && errno != ENOTSUP)
            return false;
        for (ssize_t k = 0; k < n; k += (ssize_t)strlen(names + k) + 1)
            if (strncmp(names + k, "user.overlay.", 13) == 0 && lremovexattr(r->from, names + k) < 0)
                return false;
    }
    unlinkat(sfd, name, 0);
    if (linkat(AT_FDCWD, r->from, sfd, name, 0) < 0)
        return false;
    struct stat st, own;
    if (geteuid() == 0 && owner_dirfd >= 0 && fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        (fstatat(owner_dirfd, owner_name, &own, AT_SYMLINK_NOFOLLOW) == 0 ||
         fstatat(owner_dirfd, "", &own, AT_EMPTY_PATH) == 0) &&
        (st.st_uid != own.st_uid || st.st_gid != own.st_gid) &&
        fchownat(sfd, name, own.st_uid, own.st_gid, AT_SYMLINK_NOFOLLOW) < 0) {
        unlinkat(sfd, name, 0);
        return false;
    }
    return true;
}

static int stage_files(const cordon_workspace *ws, journal *j, cordon_error *err)
{
    if (mkdir(j->stage, 0700) < 0 && errno != EEXIST)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot create the staging directory %s", j->stage);
    _cleanup_fd_ int sfd = open(j->stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (sfd < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open %s", j->stage);
    _cleanup_fd_ int root = open(ws->st.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (size_t i = 0; i < j->n; i++) {
        const jrec *r = &j->v[i];
        if (r->status != 'A' && r->status != 'M')
            continue;
        char *dir;
        const char *leaf;
        split_rel(r->path, &dir, &leaf);
        _cleanup_fd_ int od = root >= 0 ? open_beneath(root, dir, O_PATH | O_DIRECTORY) : -1;
        free(dir);
        char *name = stage_name(i);
        int rr = link_content(ws, r, sfd, name, od, leaf) ? 0 : write_content(r, sfd, name, od, leaf, err);
        free(name);
        if (rr < 0)
            return -1;
    }
    return 0;
}

/* The files: deletions (deepest first), directories gone and new, then every staged
 * file renamed over its target.  Idempotent: a recovery runs it again.  `restage`: the
 * staged files cannot be trusted (the machine restarted since: their data may never have
 * reached the disk), so every file is written again from the workspace. */
static int apply_files(const cordon_workspace *ws, const journal *j, bool restage, cordon_error *err)
{
    _cleanup_fd_ int root = open(ws->st.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open the source %s", ws->st.source);
    _cleanup_fd_ int sfd = j->stage && !restage ? open(j->stage, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    for (size_t k = j->n; k > 0; k--) {
        const jrec *r = &j->v[k - 1];
        if (r->status != 'D' && r->status != 'X')
            continue;
        char *dir;
        const char *leaf;
        split_rel(r->path, &dir, &leaf);
        int d = open_beneath(root, dir, O_PATH | O_DIRECTORY);
        free(dir);
        if (d < 0)
            continue; /* gone already, or now behind a symlink: nothing of ours there */
        int rr = unlinkat(d, leaf, r->status == 'X' ? AT_REMOVEDIR : 0);
        int e = errno;
        close(d);
        if (rr < 0 && e != ENOENT && e != ENOTEMPTY && e != EEXIST && e != ENOTDIR && e != EISDIR)
            return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot remove %s from the source", r->path);
    }
    for (size_t k = 0; k < j->n; k++) {
        const jrec *r = &j->v[k];
        if (r->status != 'N')
            continue;
        int d = ensure_dir(root, r->path, r->mode ? r->mode : 0755, err);
        if (d < 0)
            return -1;
        close(d);
    }
    for (size_t k = 0; k < j->n; k++) {
        const jrec *r = &j->v[k];
        if (r->status != 'A' && r->status != 'M')
            continue;
        char *dir;
        const char *leaf;
        split_rel(r->path, &dir, &leaf);
        int d = *dir ? ensure_dir(root, dir, 0755, err) : fcntl(root, F_DUPFD_CLOEXEC, 3);
        free(dir);
        if (d < 0)
            return err_wrap(err, "integrating %s", r->path);
        char *name = stage_name(k);
        int rr = -1;
        errno = ENOENT;
        if (sfd >= 0)
            rr = renameat(sfd, name, d, leaf);
        if (rr < 0 && (errno == EISDIR || errno == ENOTEMPTY || errno == EEXIST)) {
            /* a directory stands where the view has a file: it goes (what it held is
             * deleted above, unless the source has new files there: last writer wins) */
            if (ws_rmtree(d, leaf, err) < 0) {
                close(d);
                free(name);
                return -1;
            }
            rr = renameat(sfd, name, d, leaf);
        }
        if (rr < 0 && errno == ENOENT) {
            /* not staged (any more): renamed by an earlier, interrupted run, or not to be
             * trusted; the workspace's content again, from the upper layer or the copy
             * (intact until the source has everything for sure) */
            char tmp[64];
            snprintf(tmp, sizeof tmp, ".cordon-integrate.%zu", k);
            if (write_content(r, d, tmp, d, leaf, err) < 0 ||
                (renameat(d, tmp, d, leaf) < 0 &&
                 (errno != EISDIR || ws_rmtree(d, leaf, err) < 0 || renameat(d, tmp, d, leaf) < 0))) {
                int e = errno;
                unlinkat(d, tmp, 0);
                close(d);
                free(name);
                return err->message[0] ? -1 : err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot write %s", r->path);
            }
            rr = 0;
        }
        free(name);
        if (rr < 0) {
            int e = errno;
            close(d);
            return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot write %s in the source", r->path);
        }
        close(d);
    }
    return 0;
}

/* After the source has it all: the workspace starts again from the source (kernel, fuse:
 * an empty upper layer; copy: the manifest knows the copy's new state). */
static int reset_workspace(cordon_workspace *ws, const journal *j, cordon_error *err)
{
    if (ws->st.backend == CORDON_WS_COPY) {
        const char **rels = xcalloc(j->n + 1, sizeof *rels);
        for (size_t i = 0; i < j->n; i++)
            rels[i] = j->v[i].path;
        char *copy = ws_path(ws, "copy"), *mf = ws_path(ws, "manifest");
        int r = ws_manifest_refresh(copy, mf, rels, j->n, err);
        free(copy);
        free(mf);
        free(rels);
        return r;
    }
    if (ws->st.backend != CORDON_WS_KERNEL && ws->st.backend != CORDON_WS_FUSE)
        return 0;
    bool fuse = ws->st.backend == CORDON_WS_FUSE;
    if (fuse && ws_fuse_mounted(ws) && ws_fuse_unmount(ws, err) < 0)
        return err_wrap(err, "the changes are integrated, but the workspace's view could not be unmounted to "
                             "start it again from the source");
    static const char *const layers[] = {"upper", "work"};
    for (size_t i = 0; i < 2; i++) {
        char *p = ws_path(ws, layers[i]);
        char *old = xasprintf("%s.old", p);
        /* a new, empty layer in one rename: never a half-emptied one */
        if (access(p, F_OK) == 0) {
            if (ws_rmtree_path(old, err) < 0 || rename(p, old) < 0) {
                int e = errno;
                free(p);
                free(old);
                return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot reset the workspace's %s layer", layers[i]);
            }
        }
        if (mkdir(p, 0700) < 0 && errno != EEXIST) {
            int e = errno;
            free(p);
            free(old);
            return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot reset the workspace's %s layer", layers[i]);
        }
        int r = ws_rmtree_path(old, err);
        free(p);
        free(old);
        if (r < 0)
            return -1;
    }
    if (fuse && ws_fuse_mount(ws, err) < 0)
        return err_wrap(err, "the changes are integrated, but the workspace's view could not be mounted again");
    return 0;
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

/* Everything after the decision to integrate.  stage: write the staged files first (the
 * journal says "stage" until they are all written: a failure or a kill then undoes).
 * notify >= 0: a helper's pipe to the caller, told as soon as the source has everything. */
static int complete(cordon_workspace *ws, journal *j, bool stage, bool early, int *notify, cordon_error *err)
{
    ws_git g = ws_source_git(ws);
    char boot[64];
    boot_id(boot);
    bool restage = j->boot && strcmp(j->boot, boot) != 0;
    if (stage) {
        setstr(&j->boot, boot);
        if (journal_write(ws, j, err) < 0)
            return -1;
        TRACE("ws-stage");
        if (stage_files(ws, j, err) < 0) {
            cordon_error e2;
            unstage(j, &e2);
            journal_remove(ws, &e2);
            return -1;
        }
    }
    if (strcmp(j->phase, "stage") == 0) {
        /* the commit point */
        setstr(&j->phase, "apply");
        if (journal_write(ws, j, err) < 0) {
            cordon_error e2;
            unstage(j, &e2);
            journal_remove(ws, &e2);
            return -1;
        }
    }
    if (j->worktree) {
        if (!j->ref_done) {
            if (move_branch(ws, &g, j, err) < 0) {
                cordon_error e2;
                journal_remove(ws, &e2);
                return -1;
            }
            j->ref_done = true;
            if (journal_write(ws, j, err) < 0)
                return -1;
        }
        const char *rt[] = {"read-tree", "-m", "-u", j->old, j->commit, NULL};
        if (ws_git_ok(&g, rt, NULL, 0, NULL, err) < 0) {
            /* an interrupted read-tree (a recovery) left the index behind the working tree:
             * take the merge's tree whole into both (what was staged beside is lost) */
            const char *co[] = {"read-tree", "--reset", "-u", j->commit, NULL};
            if (ws_git_ok(&g, co, NULL, 0, NULL, err) < 0)
                return -1;
            err_clear(err);
        }
        return journal_remove(ws, err);
    }
    TRACE("ws-cas");
    if (j->git && !j->ref_done) {
        if (move_branch(ws, &g, j, err) < 0) {
            /* the branch kept moving: nothing is applied yet, so roll back */
            cordon_error e2;
            unstage(j, &e2);
            journal_remove(ws, &e2);
            return -1;
        }
        j->ref_done = true;
        if (journal_write(ws, j, err) < 0)
            return -1;
    }
    if (!j->files_done) {
        TRACE("ws-apply");
        if (apply_files(ws, j, restage, err) < 0)
            return -1;
        TRACE("ws-index");
        if (j->git && update_user_index(&g, j, err) < 0)
            return -1;
        TRACE("ws-applied");
        /* the source has everything: the caller may go (an integration's; a recovery's
         * caller waits for all of it) */
        if (early)
            detach_tail(notify, j);
        /* the files on disk before the workspace's own copy of them goes */
        _cleanup_fd_ int root = open(ws->st.source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (root < 0 || syncfs(root) < 0)
            return err_set(err, CORDON_STAGE_WORKSPACE, errno, "syncfs %s", ws->st.source);
        j->files_done = true;
        if (journal_write(ws, j, err) < 0)
            return -1;
    }
    if (reset_workspace(ws, j, err) < 0 || unstage(j, err) < 0)
        return -1;
    /* only now: the reset drops the layer's links to what was staged by hard link, which
     * stamps those files of the source anew */
    refresh_baseline(ws);
    return journal_remove(ws, err);
}

/* complete() in a helper that outlives this process (a session of its own, deaf to the
 * terminal's signals, holding the workspace's locks it inherits); wait until it says the
 * source has everything (or failed) and take its result. */
static int complete_detached(cordon_workspace *ws, journal *j, bool stage, bool early, cordon_error *err)
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
    setstr(&j->commit, o.commit);
    return 0;
}

/* ---------------------------------------------------------------------------------- */

int ws_recover(cordon_workspace *ws, cordon_error *err)
{
    if (!ws_journal_pending(ws))
        return 0;
    journal j;
    if (journal_read(ws, &j, err) < 0)
        return -1;
    int r;
    if (strcmp(j.phase, "stage") == 0) {
        /* the commit point was not reached: undo */
        r = unstage(&j, err);
        if (r == 0)
            r = journal_remove(ws, err);
        if (r == 0)
            ws_forget_scratch(ws);
    } else {
        r = complete_detached(ws, &j, false, false, err);
    }
    journal_free(&j);
    if (r < 0)
        return err_wrap(err, "workspace %s: finishing an interrupted integration", ws->st.name);
    return 1;
}

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
            int d = open_beneath(root, dir, O_PATH | O_DIRECTORY);
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

/* ---------------------------------------------------------------------------------- */
/* the source's own changes since the workspace took it (README, "Copy-on-write
 * workspaces": uncommitted changes are never overwritten silently) */

/* A file time at or after the baseline, allowing for file systems whose times are
 * coarser than the clock: whole seconds (a nanosecond part of 0: ext4's small inodes, FAT's
 * 2 s) and microseconds. */
static bool stamped_since(const struct timespec *t, long long baseline)
{
    if (t->tv_nsec == 0)
        return (long long)t->tv_sec >= baseline / 1000000000LL - 1;
    return (long long)t->tv_sec * 1000000000LL + t->tv_nsec >= baseline - 1000;
}

/* lstat of rel in the source, no symlink followed on the way; -1 with errno otherwise. */
static int stat_beneath(int root, const char *rel, struct stat *st)
{
    char *dir;
    const char *leaf;
    split_rel(rel, &dir, &leaf);
    int d = open_beneath(root, dir, O_PATH | O_DIRECTORY);
    free(dir);
    if (d < 0)
        return -1;
    int r = fstatat(d, leaf, st, AT_SYMLINK_NOFOLLOW);
    int e = errno;
    close(d);
    errno = e;
    return r;
}

/* git's id of what the source holds at rel (a regular file or a symlink, its bytes as
 * they are: no filters), or NULL when it cannot be read. */
static char *host_blob(const ws_git *g, int root, const char *rel, const struct stat *st, cordon_error *err)
{
    const char *args[] = {"hash-object", "--no-filters", "--stdin", NULL};
    ws_out o;
    int r;
    if (S_ISLNK(st->st_mode)) {
        char *dir;
        const char *leaf;
        split_rel(rel, &dir, &leaf);
        _cleanup_fd_ int d = open_beneath(root, dir, O_PATH | O_DIRECTORY);
        free(dir);
        char target[4096];
        ssize_t n = d >= 0 ? readlinkat(d, leaf, target, sizeof target) : -1;
        if (n < 0 || (size_t)n >= sizeof target)
            return NULL;
        r = ws_git_run(g, args, target, (size_t)n, &o, err);
    } else {
        _cleanup_fd_ int fd = open_beneath(root, rel, O_RDONLY | O_NOCTTY);
        if (fd < 0)
            return NULL;
        r = ws_git_run_fd(g, args, fd, &o, err);
    }
    if (r < 0)
        return NULL;
    char *id = NULL;
    if (WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0 && o.out) {
        o.out[strcspn(o.out, "\n")] = '\0';
        id = xstrdup(o.out);
    }
    ws_out_free(&o);
    return id;
}

/* Keep in *cand only the files whose version in the source is not HEAD's own: a version
 * that is committed is in git's history, not lost (and when the history moved, the
 * workspace's version wins, as it always did). */
static int drop_committed(cordon_workspace *ws, int root, strv *cand, cordon_error *err)
{
    ws_git g = ws_source_git(ws);
    strv args = {0};
    strv_push(&args, xstrdup("--literal-pathspecs"));
    strv_push(&args, xstrdup("ls-tree"));
    strv_push(&args, xstrdup("-z"));
    strv_push(&args, xstrdup("HEAD"));
    strv_push(&args, xstrdup("--"));
    for (size_t i = 0; i < cand->n; i++)
        strv_push(&args, xstrdup(cand->v[i]));
    ws_out o;
    int r = ws_git_run(&g, (const char *const *)args.v, NULL, 0, &o, err);
    strv_free(&args);
    if (r < 0)
        return -1;
    if (!WIFEXITED(o.status) || WEXITSTATUS(o.status) != 0) {
        ws_out_free(&o); /* no commit yet (or no HEAD): nothing is committed */
        return 0;
    }
    strv keep = {0};
    for (size_t i = 0; i < cand->n; i++) {
        /* "MODE TYPE ID\tPATH\0" entries */
        bool committed = false;
        for (size_t k = 0; k < o.out_len && !committed;) {
            const char *e = o.out + k;
            size_t len = strlen(e);
            k += len + 1;
            const char *tab = strchr(e, '\t');
            unsigned mode;
            char type[16], id[128];
            if (!tab || strcmp(tab + 1, cand->v[i]) != 0 || sscanf(e, "%o %15s %127s", &mode, type, id) != 3 ||
                strcmp(type, "blob") != 0)
                continue;
            struct stat st;
            if (stat_beneath(root, cand->v[i], &st) < 0 || (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) ||
                git_mode(st.st_mode) != mode)
                break;
            _cleanup_free_ char *have = host_blob(&g, root, cand->v[i], &st, err);
            committed = have && strcmp(have, id) == 0;
        }
        if (committed)
            free(cand->v[i]);
        else
            strv_push(&keep, cand->v[i]);
    }
    ws_out_free(&o);
    free(cand->v);
    *cand = keep;
    return 0;
}

/* The files the integration would overwrite or delete that the source changed since the
 * workspace took it (ws_state.baseline) and did not commit: their version exists nowhere
 * else. */
static int host_edits(cordon_workspace *ws, const ws_changes *c, strv *out, cordon_error *err)
{
    *out = (strv){0};
    _cleanup_fd_ int root = open(ws->st.source, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open the source %s", ws->st.source);
    long long base = ws->st.baseline > 0 ? ws->st.baseline : ws->st.created * 1000000000LL;
    for (size_t i = 0; i < c->n; i++) {
        char s = c->v[i].status;
        if (s != 'A' && s != 'M' && s != 'D')
            continue;
        struct stat st;
        if (stat_beneath(root, c->v[i].path, &st) < 0) {
            /* nothing there (or a symlink on the way, which the integration replaces by a
             * directory: the link itself, not what it leads to) */
            if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP || errno == EXDEV)
                continue;
            strv_free(out);
            return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot look at %s in the source", c->v[i].path);
        }
        if (!S_ISDIR(st.st_mode) && stamped_since(&st.st_ctim, base))
            strv_push(out, xstrdup(c->v[i].path));
    }
    if (out->n > 0 && ws_git_is_top(ws->st.source) && drop_committed(ws, root, out, err) < 0) {
        strv_free(out);
        return -1;
    }
    return 0;
}

/* "a.txt, "b\nc" and 3 more": as many as fit in n bytes. */
static void list_paths(const strv *paths, char *buf, size_t n)
{
    size_t used = 0, i = 0;
    buf[0] = '\0';
    for (; i < paths->n; i++) {
        _cleanup_free_ char *q = path_quote(paths->v[i]); /* as git prints it */
        size_t need = strlen(q) + (i ? 2 : 0);
        if (used + need + 24 >= n)
            break;
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "", q);
    }
    if (i < paths->n)
        snprintf(buf + used, n - used, " and %zu more", paths->n - i);
}

/* --force: the source's versions of `paths` copied into the workspace's directory,
 * overwritten/TIME/PATH, before the integration replaces them. */
static int save_host_versions(cordon_workspace *ws, const strv *paths, cordon_error *err)
{
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "clock_gettime");
    struct tm tm;
    char stamp[64];
    if (!gmtime_r(&now.tv_sec, &tm) || strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%S", &tm) == 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, 0, "cannot format the time");
    _cleanup_free_ char *dir = xasprintf("%s/overwritten/%s.%09ldZ", ws->dir, stamp, (long)now.tv_nsec);
    if (ws_mkdir_p(dir, 0700, err) < 0)
        return err_wrap(err, "cannot keep the source's versions");
    _cleanup_fd_ int root = open(ws->st.source, O_PATH | O_DIRECTORY | O_CLOEXEC);
    _cleanup_fd_ int droot = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (root < 0 || droot < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot keep the source's versions in %s", dir);
    for (size_t i = 0; i < paths->n; i++) {
        const char *rel = paths->v[i];
        char *sub;
        const char *leaf;
        split_rel(rel, &sub, &leaf);
        int d = *sub ? ensure_dir(droot, sub, 0700, err) : fcntl(droot, F_DUPFD_CLOEXEC, 3);
        _cleanup_fd_ int sd = open_beneath(root, sub, O_PATH | O_DIRECTORY);
        free(sub);
        if (d < 0)
            return err_wrap(err, "cannot keep the source's versions in %s", dir);
        _cleanup_fd_ int dd = d;
        struct stat st;
        if (sd < 0 || fstatat(sd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
            return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read %s in the source to keep it", rel);
        if (S_ISLNK(st.st_mode)) {
            char target[4096];
            ssize_t n = readlinkat(sd, leaf, target, sizeof target - 1);
            if (n < 0)
                return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read %s in the source to keep it", rel);
            target[n] = '\0';
            if (symlinkat(target, dd, leaf) < 0)
                return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot keep %s in %s", rel, dir);
            continue;
        }
        _cleanup_fd_ int in = openat(sd, leaf, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
        _cleanup_fd_ int outfd = openat(dd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (in < 0 || outfd < 0 || ws_copy_data(in, outfd) < 0 || fchmod(outfd, st.st_mode & 0777) < 0 ||
            fsync(outfd) < 0)
            return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot keep %s in %s%s", rel, dir,
                           errno == ENOSPC || errno == EDQUOT ? " (the disk is full)" : "");
    }
    free(ws->saved);
    ws->saved = steal_pointer(&dir);
    return 0;
}

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
    int ret = -1;
    journal j = {0};
    if (c.n == 0) {
        ret = 0;
        goto out;
    }
    {
        strv edits;
        if (host_edits(ws, &c, &edits, err) < 0)
            goto out;
        if (edits.n > 0) {
            to_public_paths(&edits, &res->conflicts);
            if (!(flags & CORDON_WS_INTEGRATE_FORCE)) {
                char list[640];
                list_paths(&edits, list, sizeof list);
                err_opt(err, CORDON_STAGE_WORKSPACE, 0, "force",
                        "%zu file%s changed in %s since the workspace took it%s would be overwritten: %s; commit or "
                        "stash %s (or move %s away) and integrate again, or integrate with force to overwrite %s "
                        "(the source's version%s then kept in %s/overwritten/)",
                        edits.n, edits.n == 1 ? "" : "s", ws->st.source,
                        ws_git_is_top(ws->st.source) ? " and not committed" : "", list, edits.n == 1 ? "it" : "them",
                        edits.n == 1 ? "it" : "them", edits.n == 1 ? "it" : "them", edits.n == 1 ? " is" : "s are",
                        ws->dir);
                strv_free(&edits);
                goto out;
            }
            int r = save_host_versions(ws, &edits, err);
            strv_free(&edits);
            if (r < 0)
                goto out;
        }
        strv_free(&edits);
    }
    if (check_writable(ws, &c, err) < 0)
        goto out;
    j.phase = xstrdup("stage");
    j.git = ws_git_is_top(ws->st.source);
    for (size_t i = 0; i < c.n; i++) {
        grow(&j.v, &j.cap, j.n + 1, sizeof *j.v);
        j.v[j.n++] = (jrec){.status = c.v[i].status,
                            .path = xstrdup(c.v[i].path),
                            .mode = (unsigned)c.v[i].mode,
                            .from = dupn(c.v[i].from)};
    }
    if (message && *message)
        j.message = xasprintf("%s\n", message);
    else
        j.message = xasprintf("Integrate workspace %s\n\n%zu added, %zu modified, %zu deleted (cordon workspace "
                              "integrate)\n",
                              ws->st.name, res->added, res->modified, res->deleted);
    ws_git g = ws_source_git(ws);
    if (j.git) {
        char *ref = NULL;
        const char *sr[] = {"symbolic-ref", "-q", "HEAD", NULL};
        if (ws_git_ok(&g, sr, NULL, 0, &ref, err) < 0) {
            err_wrap(err, "%s is not on a branch (a detached HEAD?): check out the branch to integrate into",
                     ws->st.source);
            goto out;
        }
        j.branch = ref;
        char *tip = NULL;
        if (git_tip(&g, j.branch, &tip, err) < 0)
            goto out;
        TRACE("ws-commit");
        int r = build_commit(ws, &g, &j, tip, err);
        TRACE("ws-commit-done");
        free(tip);
        if (r < 0)
            goto out;
    }
    {
        _cleanup_fd_ int sfd = open(ws->st.source, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (sfd < 0) {
            err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open %s", ws->st.source);
            goto out;
        }
        j.stage = choose_stage(ws, sfd, j.git);
    }
    if (complete_detached(ws, &j, true, true, err) < 0)
        goto out;
    if (j.git && j.commit && *j.commit) {
        res->committed = true;
        snprintf(res->commit, sizeof res->commit, "%s", j.commit);
        snprintf(res->branch, sizeof res->branch, "%s", branch_short(j.branch));
    }
    ret = 0;
out:
    if (ret < 0 && !ws_journal_pending(ws)) {
        /* before the commit point, or rolled back: say so, and what a full disk needs */
        bool full = strstr(err->message, "No space left") || strstr(err->message, "Disk quota") ||
                    strstr(err->message, "Out of diskspace") || err->errnum == ENOSPC || err->errnum == EDQUOT;
        err_wrap(err, "%snothing was integrated, the source is as it was and the workspace keeps its changes",
                 full ? "the disk is full: free some space and integrate again; " : "");
    }
    journal_free(&j);
    ws_changes_free(&c);
    return ret;
}

/* ---------------------------------------------------------------------------------- */
/* worktree */

static int integrate_worktree(cordon_workspace *ws, const char *message, cordon_ws_integrated *res, cordon_error *err)
{
    char *tree;
    ws_git wg = ws_worktree_git(ws, &tree);
    ws_git sg = ws_source_git(ws);
    int ret = -1;
    char *t = NULL, *wt_head = NULL, *ref = NULL, *tip = NULL, *merged = NULL, *commit = NULL, *ws_tip = NULL;
    char *bref = xasprintf("refs/heads/%s", ws->st.branch);
    journal j = {0};
    /* 1. what the worktree holds, as a commit on cordon/NAME (when there is something) */
    if (ws_worktree_tree(ws, &t, err) < 0)
        goto out;
    if (git_tip(&wg, "HEAD", &wt_head, err) < 0)
        goto out;
    {
        char *spec = xasprintf("%s^{tree}", wt_head);
        const char *rp[] = {"rev-parse", spec, NULL};
        char *head_tree = NULL;
        int r = ws_git_ok(&wg, rp, NULL, 0, &head_tree, err);
        free(spec);
        if (r < 0)
            goto out;
        bool dirty = strcmp(head_tree, t) != 0;
        free(head_tree);
        if (dirty) {
            char *msg = xasprintf("Work of workspace %s\n", ws->st.name);
            const char *ct[] = {"commit-tree", t, "-p", wt_head, "-F", "-", NULL};
            r = ws_git_ok(&wg, ct, msg, strlen(msg), &ws_tip, err);
            free(msg);
            if (r < 0)
                goto out;
            const char *ur[] = {"update-ref", bref, ws_tip, wt_head, NULL};
            if (ws_git_ok(&wg, ur, NULL, 0, NULL, err) < 0)
                goto out;
            /* the worktree's own index follows its branch */
            const char *rt[] = {"read-tree", "HEAD", NULL};
            if (ws_git_ok(&wg, rt, NULL, 0, NULL, err) < 0)
                goto out;
        } else {
            ws_tip = xstrdup(wt_head);
        }
    }
    /* 2. the merge into the source's current branch, in memory */
    {
        const char *sr[] = {"symbolic-ref", "-q", "HEAD", NULL};
        if (ws_git_ok(&sg, sr, NULL, 0, &ref, err) < 0) {
            err_wrap(err, "%s is not on a branch: check out the branch to integrate into", ws->st.source);
            goto out;
        }
    }
    if (git_tip(&sg, ref, &tip, err) < 0)
        goto out;
    {
        const char *mb[] = {"merge-base", "--is-ancestor", ws_tip, tip, NULL};
        ws_out o;
        if (ws_git_run(&sg, mb, NULL, 0, &o, err) < 0)
            goto out;
        bool contained = WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0;
        ws_out_free(&o);
        if (contained) {
            ret = 0; /* nothing new on cordon/NAME */
            goto out;
        }
    }
    {
        const char *mt[] = {"merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", tip, ws_tip, NULL};
        ws_out o;
        if (ws_git_run(&sg, mt, NULL, 0, &o, err) < 0)
            goto out;
        int code = WIFEXITED(o.status) ? WEXITSTATUS(o.status) : -1;
        if (code == 1) {
            /* conflicts: the tree, then the conflicted paths, NUL-separated */
            cordon_ws_changes *cf = &res->conflicts;
            size_t cap = 0;
            size_t i = strlen(o.out) + 1;
            while (i < o.out_len && o.out[i]) {
                const char *p = o.out + i;
                bool dup = false;
                for (size_t k = 0; k < cf->n && !dup; k++)
                    dup = strcmp(cf->v[k].path, p) == 0;
                if (!dup) {
                    grow(&cf->v, &cap, cf->n + 1, sizeof *cf->v);
                    cf->v[cf->n++] = (cordon_ws_change){.status = 'C', .path = xstrdup(p)};
                }
                i += strlen(p) + 1;
            }
            ws_out_free(&o);
            ret = 1;
            goto out;
        }
        if (code != 0) {
            char what[1024];
            ws_out_describe(&o, what, sizeof what);
            ws_out_free(&o);
            err_set(err, CORDON_STAGE_WORKSPACE, 0, "git merge-tree %s", what);
            goto out;
        }
        o.out[strcspn(o.out, "\n")] = '\0';
        merged = xstrdup(o.out);
        ws_out_free(&o);
    }
    /* 3. will the user's index and working tree take it? (changes nothing) */
    {
        const char *rt[] = {"read-tree", "-n", "-m", "-u", tip, merged, NULL};
        if (ws_git_ok(&sg, rt, NULL, 0, NULL, err) < 0) {
            err_wrap(err,
                     "the merge of %s is clean, but your uncommitted changes in %s are in its way; commit or "
                     "stash them; nothing was changed",
                     ws->st.branch, ws->st.source);
            goto out;
        }
    }
    {
        char *msg = message && *message ? xasprintf("%s\n", message)
                                        : xasprintf("Merge workspace %s (branch %s)\n", ws->st.name, ws->st.branch);
        const char *ct[] = {"commit-tree", merged, "-p", tip, "-p", ws_tip, "-F", "-", NULL};
        int r = ws_git_ok(&sg, ct, msg, strlen(msg), &commit, err);
        free(msg);
        if (r < 0)
            goto out;
    }
    j.phase = xstrdup("apply");
    j.git = true;
    j.worktree = true;
    j.branch = xstrdup(ref);
    j.old = xstrdup(tip);
    j.commit = xstrdup(commit);
    /* the commit point: from here on the merge is finished, by a recovery if need be */
    if (journal_write(ws, &j, err) < 0 || complete_detached(ws, &j, false, true, err) < 0)
        goto out;
    res->committed = true;
    snprintf(res->commit, sizeof res->commit, "%s", commit);
    snprintf(res->branch, sizeof res->branch, "%s", branch_short(ref));
    {
        const char *dt[] = {"diff-tree", "-r", "--no-renames", "--name-status", "-z", tip, commit, NULL};
        ws_out o;
        if (ws_git_run(&sg, dt, NULL, 0, &o, err) == 0) {
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
            ws_out_free(&o);
        }
    }
    /* the next diff starts from what is integrated now */
    setstr(&ws->st.base, ws_tip);
    if (ws_state_write(ws, false, err) < 0)
        goto out;
    ret = 0;
out:
    journal_free(&j);
    free(bref);
    free(tree);
    free(t);
    free(wt_head);
    free(ref);
    free(tip);
    free(merged);
    free(commit);
    free(ws_tip);
    return ret;
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
