// SPDX-License-Identifier: Apache-2.0
/* A workspace's state on disk: where it lives, its name, the versioned state file (only
 * ever replaced whole: a temporary file, fsync, rename, fsync of the directory), locks,
 * and removing trees. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/openat2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"
#include "workspace/ws.h"

#define STATE_FILE "state.json"
#define STATE_MAX  ((size_t)64 * 1024)

int ws_mkdir_p(const char *path, mode_t mode, cordon_error *err)
{
    char *p = xstrdup(path);
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        if (mkdir(p, mode) < 0 && errno != EEXIST) {
            int e = errno;
            err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot create %s", p);
            free(p);
            return -1;
        }
        *s = c;
        if (!c)
            break;
    }
    free(p);
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
        return err_set(err, CORDON_STAGE_WORKSPACE, errno ? errno : ENOTDIR, "%s is not a directory", path);
    return 0;
}

int ws_root(const char *given, char **out, bool create, cordon_error *err)
{
    char *root;
    if (given && *given) {
        if (given[0] != '/') {
            char cwd[PATH_MAX];
            if (!getcwd(cwd, sizeof cwd))
                return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot tell the current directory");
            root = path_join(cwd, given);
        } else {
            root = xstrdup(given);
        }
    } else {
        const char *xs = getenv("XDG_STATE_HOME");
        const char *home = getenv("HOME");
        if (xs && xs[0] == '/')
            root = xasprintf("%s/cordon/workspaces", xs);
        else if (home && home[0] == '/')
            root = xasprintf("%s/.local/state/cordon/workspaces", home);
        else
            return err_opt(err, CORDON_STAGE_USAGE, 0, "root",
                           "where do workspaces live? neither XDG_STATE_HOME nor HOME is an absolute "
                           "path: set one, or name the state directory");
    }
    if (create && ws_mkdir_p(root, 0700, err) < 0) {
        free(root);
        return err_wrap(err, "the workspaces' state directory");
    }
    char real[PATH_MAX];
    if (!realpath(root, real)) {
        int e = errno;
        err_set(err, CORDON_STAGE_WORKSPACE, e, "the workspaces' state directory %s", root);
        free(root);
        return -1;
    }
    free(root);
    *out = xstrdup(real);
    return 0;
}

int ws_check_name(const char *name, cordon_error *err)
{
    size_t n = name ? strlen(name) : 0;
    bool ok = n >= 1 && n <= WS_NAME_MAX;
    for (size_t i = 0; ok && i < n; i++) {
        char c = name[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        ok = alnum || (i > 0 && (c == '.' || c == '_' || c == '-'));
    }
    /* also a valid git branch name: cordon/NAME */
    if (ok && (strstr(name, "..") || name[n - 1] == '.' || (n >= 5 && strcmp(name + n - 5, ".lock") == 0)))
        ok = false;
    if (!ok)
        return err_set(err, CORDON_STAGE_USAGE, 0,
                       "'%s' is not a workspace name: 1 to %d letters, digits, '.', '_' or '-', starting "
                       "with a letter or digit (no '..', not ending in '.' or '.lock')",
                       name ? name : "", WS_NAME_MAX);
    return 0;
}

char *ws_path(const cordon_workspace *ws, const char *leaf)
{
    return path_join(ws->dir, leaf);
}

int ws_open_nofollow(const char *path, int flags)
{
    /* (O_PATH takes no other flags than these: openat2 refuses them) */
    int extra = (flags & O_PATH) ? 0 : O_NOCTTY;
    struct open_how how = {.flags = (uint64_t)(flags | O_NOFOLLOW | O_CLOEXEC | extra),
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

ssize_t ws_readlink_nofollow(const char *path, char *buf, size_t n)
{
    _cleanup_fd_ int fd = ws_open_nofollow(path, O_PATH);
    if (fd < 0)
        return -1;
    return readlinkat(fd, "", buf, n);
}

char *ws_read_file(const char *path, size_t max, size_t *len)
{
    _cleanup_fd_ int fd = ws_open_nofollow(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) < 0)
        return NULL;
    if (!S_ISREG(st.st_mode) || (size_t)st.st_size > max) {
        errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
        return NULL;
    }
    char *buf = xmalloc((size_t)st.st_size + 1);
    ssize_t n = read_all(fd, buf, (size_t)st.st_size);
    if (n < 0) {
        int e = errno;
        free(buf);
        errno = e;
        return NULL;
    }
    buf[n] = '\0';
    if (len)
        *len = (size_t)n;
    return buf;
}

int ws_write_atomic(const char *dir, const char *leaf, const void *data, size_t len, cordon_error *err)
{
    return ws_write_atomic_flags(dir, leaf, data, len, true, err);
}

int ws_write_atomic_flags(const char *dir, const char *leaf, const void *data, size_t len, bool sync_dir,
                          cordon_error *err)
{
    _cleanup_fd_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open %s", dir);
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.tmp", leaf);
    int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot write %s/%s", dir, tmp);
    if (write_all(fd, data, len) < 0 || fsync(fd) < 0) {
        int e = errno;
        close(fd);
        unlinkat(dfd, tmp, 0);
        return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot write %s/%s%s", dir, leaf,
                       e == ENOSPC || e == EDQUOT ? " (the disk is full: nothing was changed; free some space "
                                                    "and try again)"
                                                  : "");
    }
    close(fd);
    if (renameat(dfd, tmp, dfd, leaf) < 0) {
        int e = errno;
        unlinkat(dfd, tmp, 0);
        return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot replace %s/%s", dir, leaf);
    }
    if (sync_dir) {
        _cleanup_fd_ int sync_fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (sync_fd >= 0)
            fsync(sync_fd);
    }
    return 0;
}

/* The backends' names, as the state file and the command line spell them (the public
 * cordon_backend_name and cordon_backend_from_string). */
static const char *const backend_names[] = {"auto", "kernel", "fuse", "copy", "worktree", "none"};

const char *cordon_backend_name(cordon_backend b)
{
    return (unsigned)b < sizeof backend_names / sizeof *backend_names ? backend_names[b] : "?";
}

int cordon_backend_from_string(const char *s, cordon_backend *out, cordon_error *err)
{
    for (size_t i = 0; s && i < sizeof backend_names / sizeof *backend_names; i++)
        if (strcmp(s, backend_names[i]) == 0) {
            *out = (cordon_backend)i;
            return 0;
        }
    if (s && (strcmp(s, "overlayfs") == 0 || strcmp(s, "overlay") == 0)) {
        *out = CORDON_WS_AUTO;
        return 0;
    }
    return err_set(err, CORDON_STAGE_USAGE, 0,
                   "unknown workspace backend '%s'; backends are auto, kernel, fuse, copy, worktree, none", s ? s : "");
}

void ws_state_free(ws_state *st)
{
    free(st->name);
    free(st->source);
    free(st->branch);
    free(st->base);
    *st = (ws_state){0};
}

int ws_state_write(const cordon_workspace *ws, bool fresh, cordon_error *err)
{
    const ws_state *st = &ws->st;
    json_t *o = json_object();
    json_object_set_new(o, "version", json_integer(WS_STATE_VERSION));
    json_object_set_new(o, "name", json_string(st->name));
    json_object_set_new(o, "source", json_string(st->source));
    json_object_set_new(o, "source_dev", json_integer((json_int_t)st->source_dev));
    json_object_set_new(o, "source_ino", json_integer((json_int_t)st->source_ino));
    json_object_set_new(o, "backend", json_string(cordon_ws_backend_name(st->backend)));
    json_object_set_new(o, "git", json_boolean(st->git));
    if (st->branch)
        json_object_set_new(o, "branch", json_string(st->branch));
    if (st->base)
        json_object_set_new(o, "base", json_string(st->base));
    json_object_set_new(o, "created", json_integer(st->created));
    if (st->baseline > 0)
        json_object_set_new(o, "baseline", json_integer(st->baseline));
    char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!text)
        return err_set(err, CORDON_STAGE_WORKSPACE, ENOMEM, "state");
    size_t len = strlen(text);
    char *doc = xasprintf("%s\n", text);
    free(text);
    /* a new workspace's state: no need to make its name durable in the directory (were
     * it lost, the workspace would be "not created completely", with nothing lost) */
    int r = ws_write_atomic_flags(ws->dir, STATE_FILE, doc, len + 1, !fresh, err);
    free(doc);
    return r;
}

static int corrupt(const cordon_workspace *ws, const char *why, cordon_error *err)
{
    return err_set(err, CORDON_STAGE_WORKSPACE, 0,
                   "workspace %s: its state file %s/%s is corrupt (%s); nothing was changed: `cordon "
                   "workspace remove %s` deletes the workspace",
                   ws->st.name ? ws->st.name : "?", ws->dir, STATE_FILE, why, ws->st.name ? ws->st.name : "NAME");
}

int ws_state_read(cordon_workspace *ws, cordon_error *err)
{
    char *path = ws_path(ws, STATE_FILE);
    size_t len = 0;
    char *text = ws_read_file(path, STATE_MAX, &len);
    int e = errno;
    free(path);
    if (!text) {
        struct stat st;
        if (stat(ws->dir, &st) < 0)
            return err_set(err, CORDON_STAGE_USAGE, 0,
                           "no workspace %s under %s (`cordon workspace list` shows them, `cordon workspace "
                           "create` makes one)",
                           ws->st.name, ws->root);
        if (e == ENOENT)
            return err_set(err, CORDON_STAGE_WORKSPACE, 0,
                           "workspace %s has no state file (%s/%s): it was not created completely; "
                           "`cordon workspace remove %s` deletes what is left",
                           ws->st.name, ws->dir, STATE_FILE, ws->st.name);
        return err_set(err, CORDON_STAGE_WORKSPACE, e, "workspace %s: cannot read %s/%s", ws->st.name, ws->dir,
                       STATE_FILE);
    }
    json_error_t je;
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    free(text);
    if (!o || !json_is_object(o)) {
        char why[256];
        if (o)
            snprintf(why, sizeof why, "not a JSON object");
        else
            snprintf(why, sizeof why, "line %d: %s", je.line, je.text);
        json_decref(o);
        return corrupt(ws, why, err);
    }
    int ret = -1;
    json_t *v = json_object_get(o, "version");
    if (!json_is_integer(v)) {
        corrupt(ws, "no \"version\"", err);
        goto out;
    }
    if (json_integer_value(v) > WS_STATE_VERSION || json_integer_value(v) < 1) {
        err_set(err, CORDON_STAGE_WORKSPACE, 0,
                "workspace %s: its state file is version %lld, this cordon reads version %d: use the cordon "
                "that made it",
                ws->st.name, (long long)json_integer_value(v), WS_STATE_VERSION);
        goto out;
    }
    const char *name = json_string_value(json_object_get(o, "name"));
    const char *source = json_string_value(json_object_get(o, "source"));
    const char *backend = json_string_value(json_object_get(o, "backend"));
    json_t *dev = json_object_get(o, "source_dev"), *ino = json_object_get(o, "source_ino");
    json_t *git = json_object_get(o, "git"), *created = json_object_get(o, "created");
    cordon_ws_backend b;
    cordon_error e2;
    if (!name || strcmp(name, ws->st.name) != 0) {
        corrupt(ws, "its \"name\" is not the workspace's", err);
        goto out;
    }
    if (!source || source[0] != '/' || !json_is_integer(dev) || !json_is_integer(ino) || !json_is_boolean(git) ||
        !json_is_integer(created)) {
        corrupt(ws, "\"source\", \"source_dev\", \"source_ino\", \"git\" or \"created\" missing or of the wrong type",
                err);
        goto out;
    }
    if (!backend || cordon_ws_backend_from_string(backend, &b, &e2) < 0 || b == CORDON_WS_AUTO) {
        corrupt(ws, "no valid \"backend\"", err);
        goto out;
    }
    const char *branch = json_string_value(json_object_get(o, "branch"));
    const char *base = json_string_value(json_object_get(o, "base"));
    if (b == CORDON_WS_WORKTREE && (!branch || !base)) {
        corrupt(ws, "a worktree without \"branch\" or \"base\"", err);
        goto out;
    }
    ws->st.version = (int)json_integer_value(v);
    free(ws->st.source);
    ws->st.source = xstrdup(source);
    ws->st.source_dev = (dev_t)json_integer_value(dev);
    ws->st.source_ino = (ino_t)json_integer_value(ino);
    ws->st.backend = b;
    ws->st.git = json_is_true(git);
    ws->st.created = json_integer_value(created);
    json_t *baseline = json_object_get(o, "baseline");
    ws->st.baseline = json_is_integer(baseline) ? json_integer_value(baseline) : 0;
    free(ws->st.branch);
    free(ws->st.base);
    ws->st.branch = branch ? xstrdup(branch) : NULL;
    ws->st.base = base ? xstrdup(base) : NULL;
    ret = 0;
out:
    json_decref(o);
    return ret;
}

int ws_lock(const cordon_workspace *ws, int which, bool exclusive, int wait_ms, cordon_error *err)
{
    const char *leaf = which == WS_LOCK_RUN ? "run.lock" : "lock";
    char *path = ws_path(ws, leaf);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        int e = errno;
        err_set(err, CORDON_STAGE_WORKSPACE, e, "workspace %s: cannot open its lock %s", ws->st.name, path);
        free(path);
        return -1;
    }
    free(path);
    int op = exclusive ? LOCK_EX : LOCK_SH;
    long long deadline = wait_ms >= 0 ? ws_now_ns() + (long long)wait_ms * 1000000LL : -1;
    for (;;) {
        if (flock(fd, op | LOCK_NB) == 0)
            return fd;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            int e = errno;
            close(fd);
            return err_set(err, CORDON_STAGE_WORKSPACE, e, "workspace %s: cannot lock it", ws->st.name);
        }
        if (deadline >= 0 && ws_now_ns() >= deadline) {
            close(fd);
            errno = EWOULDBLOCK;
            return err_set(err, CORDON_STAGE_WORKSPACE, 0,
                           which == WS_LOCK_RUN ? "workspace %s is in use by a run; try again when it has ended"
                                                : "workspace %s is busy (another cordon is changing it); try again",
                           ws->st.name);
        }
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Remove everything inside the open directory fd (depth first). */
static int empty_dir(int fd, const char *what, int depth, cordon_error *err)
{
    if (depth > 4096)
        return err_set(err, CORDON_STAGE_WORKSPACE, ELOOP, "cannot remove %s: too deep", what);
    DIR *d = opendir_dup(fd);
    if (!d)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot list %s", what);
    int ret = 0;
    struct dirent *de;
    while (ret == 0 && (errno = 0, de = readdir(d)) != NULL) {
        const char *n = de->d_name;
        if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
            continue;
        if (unlinkat(fd, n, 0) == 0 || errno == ENOENT)
            continue;
        if (errno != EISDIR && errno != EPERM) {
            ret = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot remove %s/%s", what, n);
            break;
        }
        ret = ws_rmtree(fd, n, err);
    }
    if (ret == 0 && errno != 0 && de == NULL)
        ret = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot list %s", what);
    closedir(d);
    return ret;
}

int ws_rmtree(int dirfd, const char *name, cordon_error *err)
{
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot remove %s", name);
    if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
            return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot remove %s", name);
        return 0;
    }
    /* a directory the command made unreadable (chmod 000): ours, so make it ours again */
    if ((st.st_mode & 0700) != 0700 && fchmodat(dirfd, name, 0700, 0) < 0) {
        /* not ours to change: the open below says what is wrong */
    }
    _cleanup_fd_ int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? 0 : err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot remove %s", name);
    if (empty_dir(fd, name, 0, err) < 0)
        return -1;
    if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot remove %s", name);
    return 0;
}

int ws_rmtree_path(const char *path, cordon_error *err)
{
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    if (!slash || !slash[1]) {
        free(dir);
        return err_set(err, CORDON_STAGE_WORKSPACE, EINVAL, "refusing to remove %s", path);
    }
    *slash = '\0';
    _cleanup_fd_ int dfd = open(slash == dir ? "/" : dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int r = dfd < 0 ? (errno == ENOENT ? 0 : err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open %s", dir))
                    : ws_rmtree(dfd, slash + 1, err);
    if (r < 0)
        err_wrap(err, "%s", dir);
    free(dir);
    return r;
}
