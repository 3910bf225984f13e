// SPDX-License-Identifier: Apache-2.0
/* --status-json's file, written so that no command can turn it against its caller.
 *
 * Before the run: the directory is opened (following the caller's own path as it is
 * then), an unnamed file made in it (O_TMPFILE) and space reserved, so that a file that
 * cannot be written fails the run before anything runs.  After the run: the document goes
 * into that file, which is linked into the same directory under a fresh name and renamed
 * over FILE.  Nothing the command did in the meantime is followed: a symlink put at FILE
 * is replaced, not written through, and a directory of the path renamed or replaced by a
 * link does not move the document (the directory descriptor is the one opened before).
 * A file system without O_TMPFILE gets a hidden named file instead, made before the run
 * the same way. */
#include "lib/status.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/strv.h"

#define STATUS_MAGIC 0x636f72646f6e5354ULL /* "cordonST" */
/* What the document can take up: its fixed fields, the refusals (4 KiB), a message
 * (1 KiB), room for what later versions add. */
#define STATUS_RESERVE 65536

struct cordon_status_file {
    uint64_t magic;
    int dir_fd;             /* the directory FILE is in, opened before the run */
    char *name;             /* FILE's last component */
    char *shown;            /* FILE as given, for messages */
    int fd;                 /* the file the document goes into: unnamed, or named `tmp` */
    char tmp[NAME_MAX + 1]; /* its name, when the file system has no O_TMPFILE; else "" */
};

static void random_name(char *buf, size_t n, const char *name)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint64_t)getpid() * 2654435761u ^ (uint64_t)(uintptr_t)buf;
    snprintf(buf, n, ".%.*s.cordon-%016llx", (int)(n > 40 ? n - 40 : 1), name, (unsigned long long)r);
}

static void status_free(cordon_status_file *f)
{
    if (!f)
        return;
    if (f->fd >= 0)
        close(f->fd);
    if (f->tmp[0])
        unlinkat(f->dir_fd, f->tmp, 0);
    if (f->dir_fd >= 0)
        close(f->dir_fd);
    free(f->name);
    free(f->shown);
    free(f);
}

/* As cordon_status_file_open, returning the file or NULL. */
static cordon_status_file *status_open(const char *file, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    if (!file || !*file) {
        err_set(&e, CORDON_STAGE_USAGE, EINVAL, "no status file name given");
        err_export(err, &e);
        return NULL;
    }
    cordon_status_file *f = xcalloc(1, sizeof *f);
    f->magic = STATUS_MAGIC;
    f->dir_fd = f->fd = -1;
    f->shown = xstrdup(file);
    const char *slash = strrchr(file, '/');
    const char *base = slash ? slash + 1 : file;
    _cleanup_free_ char *dir = slash ? xasprintf("%.*s", (int)(slash == file ? 1 : slash - file), file) : xstrdup(".");
    f->name = xstrdup(base);
    if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || strlen(base) > NAME_MAX - 48) {
        err_set(&e, CORDON_STAGE_USAGE, 0, "%s: not a file name (give the path of a file to write)", file);
        goto fail;
    }
    f->dir_fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (f->dir_fd < 0) {
        err_set(&e, CORDON_STAGE_USAGE, errno, "cannot write the status document %s: its directory %s", file, dir);
        goto fail;
    }
    struct stat st;
    if (fstatat(f->dir_fd, f->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
        err_set(&e, CORDON_STAGE_USAGE, EISDIR, "cannot write the status document %s", file);
        goto fail;
    }
    f->fd = openat(f->dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
    if (f->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        /* no O_TMPFILE here: a hidden file of our own, made now, renamed into place after */
        random_name(f->tmp, sizeof f->tmp, f->name);
        f->fd = openat(f->dir_fd, f->tmp, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (f->fd < 0)
            f->tmp[0] = '\0';
    }
    if (f->fd < 0) {
        err_set(&e, CORDON_STAGE_USAGE, errno, "cannot write the status document %s", file);
        goto fail;
    }
    /* the space the document will need, now rather than after the run */
    int r = posix_fallocate(f->fd, 0, STATUS_RESERVE);
    if (r != 0 && r != EOPNOTSUPP && r != EINVAL) {
        err_set(&e, CORDON_STAGE_USAGE, r, "cannot write the status document %s", file);
        goto fail;
    }
    return f;
fail:
    status_free(f);
    err_export(err, &e);
    return NULL;
}

int cordon_status_file_open(const char *file, cordon_status_file **out, cordon_error *err)
{
    if (!out) {
        cordon_error e = {.size = sizeof e};
        err_set(&e, CORDON_STAGE_USAGE, EINVAL, "cordon_status_file_open: nowhere to put the file (out is NULL)");
        err_export(err, &e);
        return -1;
    }
    *out = status_open(file, err);
    if (!*out)
        return -1;
    err_clear(err);
    return 0;
}

/* The unnamed file gets a name next to FILE (via /proc/self/fd, which works without
 * privileges for an O_TMPFILE file); 0 or -1 with errno. */
static int give_name(cordon_status_file *f)
{
    if (f->tmp[0])
        return 0;
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->fd);
    for (int tries = 0; tries < 8; tries++) {
        random_name(f->tmp, sizeof f->tmp, f->name);
        if (linkat(AT_FDCWD, proc, f->dir_fd, f->tmp, AT_SYMLINK_FOLLOW) == 0)
            return 0;
        if (errno != EEXIST)
            break;
    }
    f->tmp[0] = '\0';
    return -1;
}

int cordon_status_file_write(cordon_status_file *f, const cordon_result *res, const cordon_error *setup_err,
                             cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    int ret = -1;
    _cleanup_free_ char *text = NULL;
    if (!f || f->magic != STATUS_MAGIC || f->fd < 0) {
        err_set(&e, CORDON_STAGE_USAGE, EINVAL, "cordon_status_file_write: %s",
                !f ? "no status file (NULL)" : "not an open status file from cordon_status_file_open");
        goto out;
    }
    if (!res) {
        err_set(&e, CORDON_STAGE_USAGE, EINVAL, "cordon_status_file_write: no result given");
        goto out;
    }
    if (!(text = status_document(res, setup_err, &e)))
        goto out;
    size_t len = strlen(text);
    errno = 0;
    if (pwrite(f->fd, text, len, 0) != (ssize_t)len || ftruncate(f->fd, (off_t)len) < 0) {
        err_set(&e, CORDON_STAGE_SUPERVISE, errno ? errno : EIO, "cannot write the status document %s", f->shown);
        goto drop;
    }
    if (give_name(f) < 0 || renameat(f->dir_fd, f->tmp, f->dir_fd, f->name) < 0) {
        err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot write the status document %s", f->shown);
        goto drop;
    }
    f->tmp[0] = '\0'; /* it is FILE now */
    ret = 0;
    goto out;
drop:
    /* No document at all rather than an earlier run's (or one the command put there),
     * which a harness would take for this run's. */
    {
        struct stat st;
        if (fstatat(f->dir_fd, f->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
            unlinkat(f->dir_fd, f->name, 0);
    }
out:
    if (ret < 0)
        err_export(err, &e);
    else if (err)
        err_clear(err);
    return ret;
}

void cordon_status_file_free(cordon_status_file *f)
{
    if (f && f->magic == STATUS_MAGIC)
        status_free(f);
}

int cordon_write_status_json(const char *file, const cordon_result *res, const cordon_error *setup_err,
                             cordon_error *err)
{
    if (!res) {
        cordon_error e = {.size = sizeof e};
        err_set(&e, CORDON_STAGE_USAGE, EINVAL, "cordon_write_status_json: no result given");
        err_export(err, &e);
        return -1;
    }
    cordon_status_file *f = status_open(file, err);
    if (!f)
        return -1;
    int r = cordon_status_file_write(f, res, setup_err, err);
    cordon_status_file_free(f);
    return r;
}
