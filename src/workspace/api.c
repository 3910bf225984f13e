// SPDX-License-Identifier: Apache-2.0
/* The public cordon_workspace_* calls: locks, recovery first, then the piece that does
 * the work (ws.h). */
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy/jsonpos.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/path.h"
#include "util/strv.h"
#include "workspace/ws.h"

#define LOCK_WAIT_MS 60000 /* how long a command waits for another that changes the workspace */

int cordon_settings_workspace_backend(const char *file, cordon_ws_backend *out, cordon_error *err)
{
    /* the user's own file, by the path given (symlinks followed, as for --settings) */
    FILE *f = fopen(file, "re");
    if (!f)
        return err_set(err, CORDON_STAGE_SETTINGS, errno, "%s: cannot read the settings file", file);
    char *text = xmalloc(((size_t)1 << 20) + 1);
    size_t len = fread(text, 1, (size_t)1 << 20, f);
    bool big = !feof(f);
    fclose(f);
    text[len] = '\0';
    if (big) {
        free(text);
        return err_set(err, CORDON_STAGE_SETTINGS, EFBIG, "%s: not a settings file (over 1 MiB)", file);
    }
    json_error_t je;
    json_t *doc = json_loadb(text, len, 0, &je);
    int ret = 0;
    if (!doc) {
        ret = err_set(err, CORDON_STAGE_SETTINGS, 0, "%s:%d: malformed JSON: %s", file, je.line, je.text);
        goto out;
    }
    json_t *orch = json_object_get(doc, "orchestration");
    json_t *iso = orch ? json_object_get(orch, "isolation") : NULL;
    if (!iso)
        goto out;
    jsonpos_step path[] = {JSONPOS_KEY("orchestration"), JSONPOS_KEY("isolation")};
    int line = jsonpos_line(text, len, path, 2);
    const char *v = json_string_value(iso);
    if (!json_is_object(orch) || !v ||
        (strcmp(v, "worktree") != 0 && strcmp(v, "overlayfs") != 0 && strcmp(v, "none") != 0)) {
        ret = err_set(err, CORDON_STAGE_SETTINGS, 0,
                      "%s:%d: \"orchestration.isolation\" must be \"worktree\", \"overlayfs\" or \"none\"", file, line);
        goto out;
    }
    *out = strcmp(v, "worktree") == 0 ? CORDON_WS_WORKTREE : strcmp(v, "none") == 0 ? CORDON_WS_NONE : CORDON_WS_AUTO;
    ret = 1;
out:
    json_decref(doc);
    free(text);
    return ret;
}

static cordon_workspace *ws_new(const char *root, const char *name)
{
    cordon_workspace *ws = xcalloc(1, sizeof *ws);
    ws->root = xstrdup(root);
    ws->st.name = xstrdup(name);
    ws->dir = path_join(root, name);
    ws->held[0] = ws->held[1] = -1;
    return ws;
}

void cordon_workspace_free(cordon_workspace *ws)
{
    if (!ws)
        return;
    free(ws->root);
    free(ws->dir);
    free(ws->notes);
    free(ws->view);
    free(ws->saved);
    ws_state_free(&ws->st);
    free(ws);
}

const char *cordon_workspace_name(const cordon_workspace *ws)
{
    return ws->st.name;
}
const char *cordon_workspace_source(const cordon_workspace *ws)
{
    return ws->st.source;
}
cordon_ws_backend cordon_workspace_backend(const cordon_workspace *ws)
{
    return ws->st.backend;
}
const char *cordon_workspace_dir(const cordon_workspace *ws)
{
    return ws->dir;
}
const char *cordon_workspace_view(const cordon_workspace *ws)
{
    return ws->view;
}
const char *cordon_workspace_notes(const cordon_workspace *ws)
{
    return ws->notes;
}

int cordon_workspace_create(const char *root_given, const char *name, const char *source, cordon_ws_backend backend,
                            cordon_workspace **out, cordon_error *err)
{
    err_clear(err);
    *out = NULL;
    if (ws_check_name(name, err) < 0)
        return -1;
    if (!source || !*source)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "source", "a workspace needs a source directory");
    char real[PATH_MAX];
    if (!realpath(source, real))
        return err_opt(err, CORDON_STAGE_USAGE, errno, "source", "the source %s", source);
    struct stat st;
    if (stat(real, &st) < 0 || !S_ISDIR(st.st_mode))
        return err_opt(err, CORDON_STAGE_USAGE, ENOTDIR, "source", "the source %s", source);
    char *root = NULL;
    if (ws_root(root_given, &root, true, err) < 0)
        return -1;
    if (backend != CORDON_WS_NONE && (path_has_prefix(root, real) || path_has_prefix(real, root))) {
        err_opt(err, CORDON_STAGE_USAGE, 0, "root",
                "the workspaces' state directory %s and the source %s must not lie inside each other: "
                "keep the state elsewhere",
                root, real);
        free(root);
        return -1;
    }
    cordon_workspace *ws = ws_new(root, name);
    free(root);
    if (mkdir(ws->dir, 0700) < 0) {
        int e = errno;
        if (e == EEXIST)
            err_set(err, CORDON_STAGE_USAGE, 0,
                    "workspace %s exists already (%s); `cordon workspace remove %s` first, or pick another name", name,
                    ws->dir, name);
        else
            err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot create %s", ws->dir);
        cordon_workspace_free(ws);
        return -1;
    }
    ws->st.version = WS_STATE_VERSION;
    ws->st.source = xstrdup(real);
    ws->st.source_dev = st.st_dev;
    ws->st.source_ino = st.st_ino;
    ws->st.git = ws_git_is_top(real);
    ws->st.created = (long long)time(NULL);
    /* what the source held before this moment is what the workspace starts from; a host
     * change from now on is stamped at or after it (integrate looks: ws_state.baseline) */
    ws->st.baseline = ws_realtime_ns();
    int lock = ws_lock(ws, WS_LOCK_STATE, true, 0, err);
    if (lock < 0 || ws_backend_create(ws, backend, err) < 0 || ws_state_write(ws, true, err) < 0) {
        cordon_error e2;
        ws_backend_remove(ws, &e2);
        ws_rmtree_path(ws->dir, &e2);
        if (lock >= 0)
            close(lock);
        cordon_workspace_free(ws);
        return -1;
    }
    ws_baseline_settle(ws->st.baseline); /* mostly past already: creation took that long */
    close(lock);
    ws->view = ws_view_path(ws);
    *out = ws;
    return 0;
}

int cordon_workspace_open(const char *root_given, const char *name, cordon_workspace **out, cordon_error *err)
{
    err_clear(err);
    *out = NULL;
    if (ws_check_name(name, err) < 0)
        return -1;
    char *root = NULL;
    if (ws_root(root_given, &root, false, err) < 0) {
        if (err->errnum == ENOENT)
            err_set(err, CORDON_STAGE_USAGE, 0, "no workspace %s: there is no workspace at all yet", name);
        return -1;
    }
    cordon_workspace *ws = ws_new(root, name);
    free(root);
    if (ws_state_read(ws, err) < 0) {
        cordon_workspace_free(ws);
        return -1;
    }
    ws->view = ws_view_path(ws);
    *out = ws;
    return 0;
}

/* The state lock, exclusive, and any interrupted integration finished. */
static int enter(cordon_workspace *ws, cordon_error *err)
{
    int fd = ws_lock(ws, WS_LOCK_STATE, true, LOCK_WAIT_MS, err);
    if (fd < 0)
        return -1;
    /* the state may have changed while we waited (an integration moved the base) */
    ws->held[0] = fd;
    int r = ws_state_read(ws, err) < 0 || ws_recover(ws, err) < 0 ? -1 : 0;
    ws->held[0] = -1;
    if (r < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* The run fills a cordon_result of the library's own layout, exported to the caller's
 * (result_export: as far as its size says, never beyond, its size kept). */
static int workspace_run(cordon_workspace *ws, const cordon_policy *p, char *const argv[], cordon_result *res,
                         cordon_error *err)
{
    if (!p)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "cordon_workspace_run: no policy");
    int st = enter(ws, err);
    if (st < 0)
        return -1;
    if (ws_backend_restore(ws, false, err) < 0) {
        close(st);
        return -1;
    }
    /* one overlay mount of an upper layer at a time; the others share */
    int run = ws_lock(ws, WS_LOCK_RUN, ws->st.backend == CORDON_WS_KERNEL, 0, err);
    close(st);
    if (run < 0) {
        if (ws->st.backend == CORDON_WS_KERNEL)
            err_wrap(err, "a kernel-overlay workspace is used by one run at a time");
        return -1;
    }
    int r = ws_run(ws, p, argv, res, err);
    close(run);
    return r;
}

int cordon_workspace_run(cordon_workspace *ws, const cordon_policy *p, char *const argv[], cordon_result *res,
                         cordon_error *err)
{
    err_clear(err);
    cordon_result r = {.size = sizeof r, .exit_code = CORDON_EXIT_SETUP, .status_code = -1};
    int ret = workspace_run(ws, p, argv, &r, err);
    result_export(res, &r);
    cordon_result_free(&r);
    return ret;
}

int cordon_workspace_changes(cordon_workspace *ws, cordon_ws_changes *out, cordon_error *err)
{
    err_clear(err);
    *out = (cordon_ws_changes){0};
    int st = enter(ws, err);
    if (st < 0)
        return -1;
    ws_changes c;
    int r = ws_changes_compute(ws, &c, err);
    close(st);
    if (r < 0)
        return -1;
    out->v = xcalloc(c.n + 1, sizeof *out->v);
    for (size_t i = 0; i < c.n; i++)
        if (c.v[i].status == 'A' || c.v[i].status == 'M' || c.v[i].status == 'D')
            out->v[out->n++] = (cordon_ws_change){.status = c.v[i].status, .path = xstrdup(c.v[i].path)};
    ws_changes_free(&c);
    return 0;
}

void cordon_workspace_change_list_free(cordon_workspace_change_list *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        free(c->v[i].path);
    free(c->v);
    *c = (cordon_workspace_change_list){0};
}

/* How much of a growable workspace struct the caller has (0: this release's layout). */
static size_t caller_has(unsigned size, size_t ours)
{
    return size == 0 || size > ours ? ours : size;
}
#define COVERS(n, type, field) ((n) >= offsetof(type, field) + sizeof(((type *)0)->field))

static char *slurp_at(const char *path, size_t *len, mode_t mode)
{
    if (S_ISLNK(mode)) {
        char buf[4096];
        ssize_t n = ws_readlink_nofollow(path, buf, sizeof buf);
        if (n < 0)
            return NULL;
        *len = (size_t)n;
        return xstrndup(buf, (size_t)n);
    }
    return ws_read_file(path, (size_t)1 << 31, len);
}

static int diff_to(cordon_workspace *ws, unsigned flags, FILE *out, cordon_error *err)
{
    int st = enter(ws, err);
    if (st < 0)
        return -1;
    bool ns = flags & CORDON_WS_DIFF_NAME_STATUS;
    if (ws->st.backend == CORDON_WS_WORKTREE) {
        int r = ws_worktree_diff(ws, ns, out, err);
        close(st);
        return r;
    }
    ws_changes c;
    int r = ws_changes_compute(ws, &c, err);
    if (r < 0) {
        close(st);
        return -1;
    }
    for (size_t i = 0; i < c.n && r == 0; i++) {
        const ws_change *x = &c.v[i];
        if (x->status != 'A' && x->status != 'M' && x->status != 'D')
            continue;
        if (ns) {
            char *q = path_quote(x->path);
            fprintf(out, "%c\t%s\n", x->status, q);
            free(q);
            continue;
        }
        char *old_path = path_join(ws->st.source, x->path);
        struct stat ost;
        bool have_old = x->status != 'A' && lstat(old_path, &ost) == 0;
        size_t alen = 0, blen = 0;
        char *a = have_old ? slurp_at(old_path, &alen, ost.st_mode) : NULL;
        char *b = x->status != 'D' ? slurp_at(x->from, &blen, x->mode) : NULL;
        if ((have_old && !a) || (x->status != 'D' && !b)) {
            r = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot read %s", x->path);
        } else if (a && b && S_ISLNK(ost.st_mode) != S_ISLNK(x->mode)) {
            /* a file became a symlink or the reverse: git shows a deletion and an addition */
            ws_udiff_print(out, x->path, a, alen, ost.st_mode, NULL, 0, 0);
            ws_udiff_print(out, x->path, NULL, 0, 0, b, blen, x->mode);
        } else {
            ws_udiff_print(out, x->path, a, alen, have_old ? ost.st_mode : 0, b, blen, x->mode);
        }
        free(a);
        free(b);
        free(old_path);
    }
    ws_changes_free(&c);
    close(st);
    return r;
}

/* Into a memory stream: the API hands out strings, not stdio streams. */
int cordon_workspace_diff(cordon_workspace *ws, unsigned flags, char **text, cordon_error *err)
{
    err_clear(err);
    if (!text)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL,
                       "cordon_workspace_diff: nowhere to put the diff (text is NULL)");
    *text = NULL;
    if (flags & ~CORDON_WORKSPACE_DIFF_NAME_STATUS)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "cordon_workspace_diff: unknown flags %#x", flags);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (!out)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cordon_workspace_diff: cannot make a memory stream");
    int r = diff_to(ws, flags, out, err);
    if (fclose(out) != 0 && r == 0)
        r = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cordon_workspace_diff: out of memory");
    if (r < 0) {
        free(buf);
        return -1;
    }
    *text = buf;
    return 0;
}

const char *cordon_workspace_saved(const cordon_workspace *ws)
{
    return ws ? ws->saved : NULL;
}

static int integrate(cordon_workspace *ws, const char *message, unsigned flags, cordon_workspace_integration *res,
                     cordon_error *err)
{
    int st = ws_lock(ws, WS_LOCK_STATE, true, LOCK_WAIT_MS, err);
    if (st < 0)
        return -1;
    if (ws_state_read(ws, err) < 0) {
        close(st);
        return -1;
    }
    int run = ws_lock(ws, WS_LOCK_RUN, true, 0, err);
    if (run < 0) {
        close(st);
        return err_wrap(err, "cannot integrate now");
    }
    ws->held[0] = st;
    ws->held[1] = run;
    if (flags & ~(unsigned)CORDON_WS_INTEGRATE_FORCE) {
        close(run);
        close(st);
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "integrate: unknown flags 0x%x", flags);
    }
    free(ws->saved);
    ws->saved = NULL;
    int r = ws_integrate(ws, message, flags, res, err);
    ws->held[0] = ws->held[1] = -1;
    close(run);
    close(st);
    return r;
}

/* Filled in a whole struct of ours, then exported to the caller's layout: the lists its
 * layout has are handed over, the others freed. */
int cordon_workspace_integrate(cordon_workspace *ws, const char *message, unsigned flags,
                               cordon_workspace_integration *res, cordon_error *err)
{
    err_clear(err);
    if (!res)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "cordon_workspace_integrate: no result given (res is NULL)");
    cordon_workspace_integration r = {.size = sizeof r};
    int ret = integrate(ws, message, flags, &r, err);
    unsigned size = res->size;
    size_t n = caller_has(size, sizeof r);
    memcpy(res, &r, n);
    res->size = size;
    if (!COVERS(n, cordon_workspace_integration, conflicts))
        cordon_workspace_change_list_free(&r.conflicts);
    if (!COVERS(n, cordon_workspace_integration, skipped))
        cordon_workspace_change_list_free(&r.skipped);
    return ret;
}

void cordon_workspace_integration_free(cordon_workspace_integration *res)
{
    if (!res)
        return;
    size_t n = caller_has(res->size, sizeof *res);
    if (COVERS(n, cordon_workspace_integration, conflicts))
        cordon_workspace_change_list_free(&res->conflicts);
    if (COVERS(n, cordon_workspace_integration, skipped))
        cordon_workspace_change_list_free(&res->skipped);
}

int cordon_workspace_restore(cordon_workspace *ws, cordon_error *err)
{
    err_clear(err);
    int st = enter(ws, err);
    if (st < 0)
        return -1;
    /* not while a run uses the view (fuse: it is mounted again) */
    int run = ws_lock(ws, WS_LOCK_RUN, true, 0, err);
    if (run < 0) {
        close(st);
        return err_wrap(err, "cannot restore it now");
    }
    int r = ws_backend_restore(ws, true, err);
    close(run);
    close(st);
    return r;
}

static int status(cordon_workspace *ws, cordon_workspace_state *s, cordon_error *err)
{
    int st = ws_lock(ws, WS_LOCK_STATE, true, LOCK_WAIT_MS, err);
    if (st < 0)
        return -1;
    int r = ws_state_read(ws, err);
    if (r == 0) {
        s->pending = ws_journal_pending(ws);
        cordon_error e2;
        ws->held[0] = st;
        int rec = s->pending ? ws_recover(ws, &e2) : 0;
        ws->held[0] = -1;
        if (s->pending && rec >= 0)
            s->pending = ws_journal_pending(ws);
        else if (s->pending)
            snprintf(s->detail, sizeof s->detail, "an interrupted integration cannot be finished: %.400s", e2.message);
        int run = ws_lock(ws, WS_LOCK_RUN, true, 0, &e2);
        s->in_use = run < 0;
        if (run >= 0)
            close(run);
        s->mounted = ws->st.backend == CORDON_WS_FUSE && ws_fuse_mounted(ws);
        s->ready = !s->pending;
        if (ws->st.backend == CORDON_WS_FUSE && !s->mounted) {
            s->ready = false;
            snprintf(s->detail, sizeof s->detail,
                     "its view is not mounted (after a reboot?): `cordon workspace restore %s` mounts it again",
                     ws->st.name);
        }
        char *top = ws_view_path(ws);
        if (!top && ws->st.backend == CORDON_WS_KERNEL)
            top = ws_path(ws, "upper");
        struct stat sb;
        if (top && ws->st.backend != CORDON_WS_FUSE && stat(top, &sb) < 0) {
            s->ready = false;
            snprintf(s->detail, sizeof s->detail, "%s is missing: the workspace is broken; remove it", top);
        }
        free(top);
    }
    close(st);
    return r;
}

int cordon_workspace_status(cordon_workspace *ws, cordon_workspace_state *st, cordon_error *err)
{
    err_clear(err);
    if (!st)
        return err_set(err, CORDON_STAGE_USAGE, EINVAL, "cordon_workspace_status: no state given (st is NULL)");
    cordon_workspace_state s = {.size = sizeof s};
    int r = status(ws, &s, err);
    unsigned size = st->size;
    memcpy(st, &s, caller_has(size, sizeof s));
    st->size = size;
    return r;
}

int cordon_workspace_remove(const char *root_given, const char *name, cordon_error *err)
{
    err_clear(err);
    if (ws_check_name(name, err) < 0)
        return -1;
    char *root = NULL;
    if (ws_root(root_given, &root, false, err) < 0)
        return err_wrap(err, "no workspace %s", name);
    cordon_workspace *ws = ws_new(root, name);
    free(root);
    struct stat sb;
    if (stat(ws->dir, &sb) < 0) {
        err_set(err, CORDON_STAGE_USAGE, 0, "no workspace %s under %s", name, ws->root);
        cordon_workspace_free(ws);
        return -1;
    }
    int ret = -1;
    int st = ws_lock(ws, WS_LOCK_STATE, true, LOCK_WAIT_MS, err);
    if (st < 0)
        goto out;
    int run = ws_lock(ws, WS_LOCK_RUN, true, 0, err);
    if (run < 0) {
        err_wrap(err, "cannot remove it now");
        close(st);
        goto out;
    }
    cordon_error e2;
    bool known = ws_state_read(ws, &e2) == 0; /* a corrupt state is still removed */
    /* a scratch ref a killed integration left goes with it */
    if (known && !ws_journal_pending(ws))
        ws_forget_scratch(ws);
    if (known && ws_journal_pending(ws)) {
        err_set(err, CORDON_STAGE_WORKSPACE, 0,
                "workspace %s has an interrupted integration; `cordon workspace status %s` finishes it first", name,
                name);
    } else if ((known ? ws_backend_remove(ws, err) : ws_unmount_below(ws->dir, err)) == 0 &&
               ws_rmtree_path(ws->dir, err) == 0) {
        ret = 0;
    }
    close(run);
    close(st);
out:
    cordon_workspace_free(ws);
    return ret;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cordon_workspace_list(const char *root_given, char ***names, size_t *n, cordon_error *err)
{
    err_clear(err);
    *names = NULL;
    *n = 0;
    char *root = NULL;
    if (ws_root(root_given, &root, false, err) < 0) {
        if (err->errnum == ENOENT) {
            err_clear(err);
            *names = xcalloc(1, sizeof **names);
            return 0;
        }
        return -1;
    }
    DIR *d = opendir(root);
    if (!d) {
        int e = errno;
        free(root);
        return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot list the workspaces");
    }
    strv v = {0};
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        cordon_error e;
        if (de->d_name[0] == '.' || ws_check_name(de->d_name, &e) < 0)
            continue;
        char *p = xasprintf("%s/%s/state.json", root, de->d_name);
        char *dir = xasprintf("%s/%s", root, de->d_name);
        struct stat st;
        if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
            strv_push(&v, xstrdup(de->d_name));
        free(p);
        free(dir);
    }
    closedir(d);
    free(root);
    if (!v.v)
        v.v = xcalloc(1, sizeof *v.v);
    qsort(v.v, v.n, sizeof *v.v, cmp_name);
    *names = v.v;
    *n = v.n;
    return 0;
}

void cordon_workspace_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}
