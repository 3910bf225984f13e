// SPDX-License-Identifier: Apache-2.0
/* The source's own changes since the workspace took it (integ.h; README, "Copy-on-write
 * workspaces": uncommitted changes are never overwritten silently). */
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
    integ_split_rel(rel, &dir, &leaf);
    int d = integ_open_beneath(root, dir, O_PATH | O_DIRECTORY);
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
        integ_split_rel(rel, &dir, &leaf);
        _cleanup_fd_ int d = integ_open_beneath(root, dir, O_PATH | O_DIRECTORY);
        free(dir);
        char target[4096];
        ssize_t n = d >= 0 ? readlinkat(d, leaf, target, sizeof target) : -1;
        if (n < 0 || (size_t)n >= sizeof target)
            return NULL;
        r = ws_git_run(g, args, target, (size_t)n, &o, err);
    } else {
        _cleanup_fd_ int fd = integ_open_beneath(root, rel, O_RDONLY | O_NOCTTY);
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
                integ_git_mode(st.st_mode) != mode)
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
int integ_host_edits(cordon_workspace *ws, const ws_changes *c, strv *out, cordon_error *err)
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
void integ_list_paths(const strv *paths, char *buf, size_t n)
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
int integ_save_host_versions(cordon_workspace *ws, const strv *paths, cordon_error *err)
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
        integ_split_rel(rel, &sub, &leaf);
        int d = *sub ? integ_ensure_dir(droot, sub, 0700, err) : fcntl(droot, F_DUPFD_CLOEXEC, 3);
        _cleanup_fd_ int sd = integ_open_beneath(root, sub, O_PATH | O_DIRECTORY);
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
