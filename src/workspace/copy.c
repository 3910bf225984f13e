// SPDX-License-Identifier: Apache-2.0
/* The copy backend: a recursive copy of the source (data by reflink where the file
 * system shares extents, else copy_file_range, else read/write), and its manifest: what
 * each entry of the copy was (type, mode, size, times, inode) when it was made, so that
 * changes.c can tell what the workspace changed from what the source changed meanwhile,
 * and compares contents only for entries whose metadata moved. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"
#include "workspace/ws.h"

#define MF_MAGIC   "CORDONMF"
#define MF_VERSION 1u

typedef struct mrec {
    char *path;
    uint32_t mode;
    uint64_t size, ino;
    int64_t mtime_s, mtime_ns, ctime_s, ctime_ns;
    bool seen;
} mrec;

struct ws_mfile {
    mrec *v;
    size_t n, cap;
    int64_t written_s, written_ns;
};

static int copy_data(int in, int out, bool *no_reflink)
{
    if (!*no_reflink) {
        if (ioctl(out, FICLONE, in) == 0)
            return 0;
        /* a file system that does not share extents does not start to: stop asking */
        if (errno == EOPNOTSUPP || errno == ENOTTY || errno == EINVAL || errno == EXDEV)
            *no_reflink = true;
    }
    for (;;) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
        if (n == 0)
            return 0;
        if (n > 0)
            continue;
        if (errno == EINTR)
            continue;
        if (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS || errno == EBADF)
            break;
        return -1;
    }
    /* what copy_file_range could not do: plain reads and writes from where it stopped */
    char buf[65536];
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        if (n == 0)
            return 0;
        if (write_all(out, buf, (size_t)n) < 0)
            return -1;
    }
}

int ws_copy_data(int in, int out)
{
    bool no = false;
    return copy_data(in, out, &no);
}

static void add_rec(ws_mfile *m, const char *rel, const struct stat *st)
{
    grow(&m->v, &m->cap, m->n + 1, sizeof *m->v);
    m->v[m->n++] = (mrec){
        .path = xstrdup(rel),
        .mode = st->st_mode,
        .size = (uint64_t)st->st_size,
        .ino = (uint64_t)st->st_ino,
        .mtime_s = st->st_mtim.tv_sec,
        .mtime_ns = st->st_mtim.tv_nsec,
        .ctime_s = st->st_ctim.tv_sec,
        .ctime_ns = st->st_ctim.tv_nsec,
    };
}

typedef struct copier {
    bool as_root;
    bool no_reflink; /* FICLONE failed: the file system cannot */
    int umask;       /* the process's, or -1 when unknown */
    uid_t uid;
    gid_t gid;
    ws_mfile *m;
    size_t skipped;
    cordon_error *err;
    const char *src; /* for messages */
} copier;

static int copy_dir(copier *c, int sfd, int dfd, const char *rel, int depth);

static void keep_times(int fd, const char *name, const struct stat *st, int flags)
{
    struct timespec t[2] = {st->st_atim, st->st_mtim};
    utimensat(fd, name, t, flags);
}

static int copy_entry(copier *c, int sfd, int dfd, const char *name, const char *rel, int depth)
{
    struct stat st;
    if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot copy %s/%s", c->src, rel);
    if (S_ISDIR(st.st_mode)) {
        if (mkdirat(dfd, name, 0700) < 0)
            return err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot copy %s/%s", c->src, rel);
        _cleanup_fd_ int s2 = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s2 < 0)
            return err_set(c->err, CORDON_STAGE_WORKSPACE, errno,
                           "cannot copy the directory %s/%s (a copy workspace needs to read all of the source)", c->src,
                           rel);
        _cleanup_fd_ int d2 = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (d2 < 0)
            return err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot copy %s/%s", c->src, rel);
        if (copy_dir(c, s2, d2, rel, depth + 1) < 0)
            return -1;
        if (c->as_root && (st.st_uid != c->uid || st.st_gid != c->gid) && fchown(d2, st.st_uid, st.st_gid) < 0)
            return err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot copy the owner of %s/%s", c->src, rel);
        fchmod(d2, st.st_mode & 07777);
        keep_times(d2, "", &st, AT_EMPTY_PATH);
        struct stat now;
        if (fstat(d2, &now) == 0)
            add_rec(c->m, rel, &now);
        return 0;
    }
    if (S_ISREG(st.st_mode)) {
        _cleanup_fd_ int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (in < 0)
            return err_set(c->err, CORDON_STAGE_WORKSPACE, errno,
                           "cannot copy %s/%s (a copy workspace needs to read all of the source)", c->src, rel);
        /* made with its mode when the umask lets it through whole (no fchmod then) */
        mode_t perm = st.st_mode & 0777;
        bool exact = c->umask >= 0 && (perm & (mode_t)c->umask) == 0 && !(st.st_mode & 07000);
        _cleanup_fd_ int out =
            openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, exact ? perm : 0600);
        if (out < 0)
            return err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot copy %s/%s", c->src, rel);
        if (st.st_size > 0 && copy_data(in, out, &c->no_reflink) < 0)
            return err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot copy %s/%s%s", c->src, rel,
                           errno == ENOSPC || errno == EDQUOT ? " (the disk is full)" : "");
        if (c->as_root && (st.st_uid != c->uid || st.st_gid != c->gid) && fchown(out, st.st_uid, st.st_gid) < 0)
            return err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot copy the owner of %s/%s", c->src, rel);
        if (!exact)
            fchmod(out, st.st_mode & 07777);
        keep_times(out, "", &st, AT_EMPTY_PATH);
        struct stat now;
        if (fstat(out, &now) == 0)
            add_rec(c->m, rel, &now);
        return 0;
    }
    if (S_ISLNK(st.st_mode)) {
        char target[4096];
        ssize_t n = readlinkat(sfd, name, target, sizeof target - 1);
        if (n < 0)
            return err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot copy %s/%s", c->src, rel);
        target[n] = '\0';
        if (symlinkat(target, dfd, name) < 0)
            return err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot copy %s/%s", c->src, rel);
        if (c->as_root && (st.st_uid != c->uid || st.st_gid != c->gid) &&
            fchownat(dfd, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) < 0)
            return err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot copy the owner of %s/%s", c->src, rel);
        keep_times(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
        struct stat now;
        if (fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0)
            add_rec(c->m, rel, &now);
        return 0;
    }
    if (S_ISFIFO(st.st_mode) && mkfifoat(dfd, name, st.st_mode & 07777) == 0)
        return 0;
    c->skipped++; /* sockets and devices: nothing a copy can hold */
    return 0;
}

static int copy_dir(copier *c, int sfd, int dfd, const char *rel, int depth)
{
    if (depth > 4096)
        return err_set(c->err, CORDON_STAGE_WORKSPACE, ELOOP, "cannot copy %s/%s: too deep", c->src, rel);
    DIR *d = opendir_dup(sfd);
    if (!d)
        return err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot list %s/%s", c->src, rel);
    int ret = 0;
    struct dirent *de;
    while (ret == 0 && (errno = 0, de = readdir(d)) != NULL) {
        const char *n = de->d_name;
        if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0')))
            continue;
        char *r = *rel ? xasprintf("%s/%s", rel, n) : xstrdup(n);
        ret = copy_entry(c, sfd, dfd, n, r, depth);
        free(r);
    }
    if (ret == 0 && !de && errno)
        ret = err_set(c->err, CORDON_STAGE_WORKSPACE, errno, "cannot list %s/%s", c->src, rel);
    closedir(d);
    return ret;
}

static int cmp_rec(const void *a, const void *b)
{
    return strcmp(((const mrec *)a)->path, ((const mrec *)b)->path);
}

static void put(char **buf, size_t *len, size_t *cap, const void *p, size_t n)
{
    grow(buf, cap, *len + n, 1);
    memcpy(*buf + *len, p, n);
    *len += n;
}

/* The kernel's timestamps are coarse (a clock tick): a write in the same tick as the
 * stat recorded here would leave ctime as recorded, and go unseen.  So the manifest is
 * only done once the file system's clock has moved past every ctime in it: a later
 * change then always shows as a later ctime. */
static void wait_past(const ws_mfile *m, const char *dir)
{
    int64_t max_s = 0, max_ns = 0;
    for (size_t i = 0; i < m->n; i++)
        if (m->v[i].ctime_s > max_s || (m->v[i].ctime_s == max_s && m->v[i].ctime_ns > max_ns)) {
            max_s = m->v[i].ctime_s;
            max_ns = m->v[i].ctime_ns;
        }
    char *probe = path_join(dir, ".tick");
    for (int i = 0; i < 1000; i++) {
        int fd = open(probe, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        struct stat st;
        bool past = fd >= 0 && write(fd, "", 0) == 0 && fchmod(fd, (mode_t)(0600 - (i & 1) * 0200)) == 0 &&
                    fstat(fd, &st) == 0 &&
                    (st.st_ctim.tv_sec > max_s || (st.st_ctim.tv_sec == max_s && st.st_ctim.tv_nsec > max_ns));
        if (fd >= 0)
            close(fd);
        if (past || fd < 0)
            break;
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    unlink(probe);
    free(probe);
}

static int manifest_write(ws_mfile *m, const char *path, cordon_error *err)
{
    if (m->n)
        qsort(m->v, m->n, sizeof *m->v, cmp_rec);
    {
        char *dir = xstrdup(path);
        *strrchr(dir, '/') = '\0';
        wait_past(m, dir);
        free(dir);
    }
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    m->written_s = now.tv_sec;
    m->written_ns = now.tv_nsec;
    char *buf = NULL;
    size_t len = 0, cap = 0;
    uint32_t ver = MF_VERSION;
    uint64_t n = m->n;
    put(&buf, &len, &cap, MF_MAGIC, 8);
    put(&buf, &len, &cap, &ver, sizeof ver);
    put(&buf, &len, &cap, &n, sizeof n);
    put(&buf, &len, &cap, &m->written_s, sizeof m->written_s);
    put(&buf, &len, &cap, &m->written_ns, sizeof m->written_ns);
    for (size_t i = 0; i < m->n; i++) {
        const mrec *r = &m->v[i];
        uint32_t pl = (uint32_t)strlen(r->path);
        put(&buf, &len, &cap, &pl, sizeof pl);
        put(&buf, &len, &cap, r->path, pl);
        put(&buf, &len, &cap, &r->mode, sizeof r->mode);
        put(&buf, &len, &cap, &r->size, sizeof r->size);
        put(&buf, &len, &cap, &r->ino, sizeof r->ino);
        put(&buf, &len, &cap, &r->mtime_s, sizeof r->mtime_s);
        put(&buf, &len, &cap, &r->mtime_ns, sizeof r->mtime_ns);
        put(&buf, &len, &cap, &r->ctime_s, sizeof r->ctime_s);
        put(&buf, &len, &cap, &r->ctime_ns, sizeof r->ctime_ns);
    }
    char *dir = xstrdup(path);
    char *slash = strrchr(dir, '/');
    *slash = '\0';
    int ret = ws_write_atomic(dir, slash + 1, buf, len, err);
    free(dir);
    free(buf);
    return ret;
}

/* The process's umask, read without changing it (umask(2) would: global state), or -1. */
static int read_umask(void)
{
    FILE *f = fopen("/proc/self/status", "re");
    if (!f)
        return -1;
    char line[256];
    int u = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Umask: %o", (unsigned *)&u) == 1)
            break;
    fclose(f);
    return u;
}

int ws_copy_tree(const char *src, const char *dst, const char *manifest, cordon_error *err)
{
    _cleanup_fd_ int sfd = open(src, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open %s", src);
    if (mkdir(dst, 0700) < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot create %s", dst);
    _cleanup_fd_ int dfd = open(dst, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot open %s", dst);
    ws_mfile m = {0};
    copier c = {.as_root = geteuid() == 0,
                .umask = read_umask(),
                .uid = geteuid(),
                .gid = getegid(),
                .m = &m,
                .err = err,
                .src = src};
    int ret = copy_dir(&c, sfd, dfd, "", 0);
    if (ret == 0) {
        struct stat st;
        if (fstat(sfd, &st) == 0) {
            fchmod(dfd, st.st_mode & 07777);
            keep_times(dfd, "", &st, AT_EMPTY_PATH);
        }
        ret = manifest_write(&m, manifest, err);
    }
    for (size_t i = 0; i < m.n; i++)
        free(m.v[i].path);
    free(m.v);
    return ret;
}

static bool get(const char *buf, size_t len, size_t *off, void *p, size_t n)
{
    if (*off + n > len)
        return false;
    memcpy(p, buf + *off, n);
    *off += n;
    return true;
}

int ws_manifest_load(const char *path, ws_mfile **out, cordon_error *err)
{
    size_t len = 0;
    char *buf = ws_read_file(path, (size_t)1 << 34, &len);
    if (!buf)
        return err_set(err, CORDON_STAGE_WORKSPACE, errno,
                       "cannot read the copy's manifest %s (without it cordon cannot tell the workspace's "
                       "changes from the source's)",
                       path);
    ws_mfile *m = xcalloc(1, sizeof *m);
    size_t off = 0;
    char magic[8];
    uint32_t ver = 0;
    uint64_t n = 0;
    bool ok = get(buf, len, &off, magic, 8) && memcmp(magic, MF_MAGIC, 8) == 0 && get(buf, len, &off, &ver, 4) &&
              ver == MF_VERSION && get(buf, len, &off, &n, 8) && get(buf, len, &off, &m->written_s, 8) &&
              get(buf, len, &off, &m->written_ns, 8) && n < len;
    for (uint64_t i = 0; ok && i < n; i++) {
        uint32_t pl;
        mrec r = {0};
        ok = get(buf, len, &off, &pl, 4) && pl < 65536 && off + pl <= len;
        if (!ok)
            break;
        r.path = xstrndup(buf + off, pl);
        off += pl;
        ok = get(buf, len, &off, &r.mode, 4) && get(buf, len, &off, &r.size, 8) && get(buf, len, &off, &r.ino, 8) &&
             get(buf, len, &off, &r.mtime_s, 8) && get(buf, len, &off, &r.mtime_ns, 8) &&
             get(buf, len, &off, &r.ctime_s, 8) && get(buf, len, &off, &r.ctime_ns, 8) &&
             (m->n == 0 || strcmp(m->v[m->n - 1].path, r.path) < 0);
        grow(&m->v, &m->cap, m->n + 1, sizeof *m->v);
        m->v[m->n++] = r;
    }
    free(buf);
    if (!ok || off != len) {
        ws_manifest_free(m);
        return err_set(err, CORDON_STAGE_WORKSPACE, 0,
                       "the copy's manifest %s is corrupt; `cordon workspace remove` and create the workspace "
                       "again (its copy is kept until then)",
                       path);
    }
    *out = m;
    return 0;
}

void ws_manifest_free(ws_mfile *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].path);
    free(m->v);
    free(m);
}

static mrec *find(ws_mfile *m, const char *rel)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(m->v[mid].path, rel);
        if (c == 0)
            return &m->v[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

bool ws_manifest_same(ws_mfile *m, const char *rel, const struct stat *st)
{
    mrec *r = find(m, rel);
    if (!r)
        return false;
    r->seen = true;
    if (r->mode != st->st_mode || r->size != (uint64_t)st->st_size || r->ino != (uint64_t)st->st_ino ||
        r->mtime_s != st->st_mtim.tv_sec || r->mtime_ns != st->st_mtim.tv_nsec || r->ctime_s != st->st_ctim.tv_sec ||
        r->ctime_ns != st->st_ctim.tv_nsec)
        return false;
    return true;
}

bool ws_manifest_known_dir(ws_mfile *m, const char *rel)
{
    mrec *r = find(m, rel);
    if (!r)
        return false;
    r->seen = true;
    return S_ISDIR(r->mode);
}

void ws_manifest_mark(ws_mfile *m, const char *rel)
{
    mrec *r = find(m, rel);
    if (r)
        r->seen = true;
}

size_t ws_manifest_count(const ws_mfile *m)
{
    return m->n;
}

const char *ws_manifest_path(const ws_mfile *m, size_t i, bool *is_dir, bool *seen)
{
    if (is_dir)
        *is_dir = S_ISDIR(m->v[i].mode);
    if (seen)
        *seen = m->v[i].seen;
    return m->v[i].path;
}

int ws_manifest_refresh(const char *copy, const char *path, const char *const *rels, size_t n, cordon_error *err)
{
    ws_mfile *m;
    if (ws_manifest_load(path, &m, err) < 0)
        return -1;
    /* update in place, mark what went, then add what is new: one sort at the end */
    ws_mfile add = {0};
    bool gone = false;
    for (size_t i = 0; i < n; i++) {
        char *p = path_join(copy, rels[i]);
        struct stat st;
        mrec *r = find(m, rels[i]);
        if (lstat(p, &st) == 0) {
            if (r) {
                r->mode = st.st_mode;
                r->size = (uint64_t)st.st_size;
                r->ino = (uint64_t)st.st_ino;
                r->mtime_s = st.st_mtim.tv_sec;
                r->mtime_ns = st.st_mtim.tv_nsec;
                r->ctime_s = st.st_ctim.tv_sec;
                r->ctime_ns = st.st_ctim.tv_nsec;
            } else {
                add_rec(&add, rels[i], &st);
            }
        } else if (r) {
            r->seen = true; /* here: "to drop" */
            gone = true;
        }
        free(p);
    }
    if (gone) {
        size_t k = 0;
        for (size_t i = 0; i < m->n; i++) {
            if (m->v[i].seen)
                free(m->v[i].path);
            else
                m->v[k++] = m->v[i];
        }
        m->n = k;
    }
    for (size_t i = 0; i < add.n; i++) {
        grow(&m->v, &m->cap, m->n + 1, sizeof *m->v);
        m->v[m->n++] = add.v[i];
    }
    free(add.v);
    int ret = manifest_write(m, path, err);
    ws_manifest_free(m);
    return ret;
}
