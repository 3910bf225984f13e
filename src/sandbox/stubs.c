#include "sandbox/stubs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/strv.h"

#define MARKER_PREFIX ".cordon-stub."
#define STUBS_MAX 24

/* Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot.
 * With the pid it names one process for good (pids are reused, start times are not). */
static unsigned long long start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    p++;
    for (int field = 2; field < 22 && *p; field++) {
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
    }
    return strtoull(p, NULL, 10);
}

static bool marker_alive(const char *name)
{
    int pid = 0;
    unsigned long long st = 0;
    if (sscanf(name, MARKER_PREFIX "%d.%llu", &pid, &st) != 2 || pid <= 0)
        return false;
    return start_time(pid) == st;
}

typedef enum scan_result { SCAN_EMPTY, SCAN_MARKERS_ONLY, SCAN_OTHER } scan_result;

/* Look at the entries of a stub directory (raw getdents64: no allocation, the janitor
 * may be a copy of a multi-threaded process); remove dead markers when asked. */
static scan_result scan(int fd, bool sweep_dead, bool *live_marker)
{
    char buf[4096];
    bool markers = false, other = false;
    *live_marker = false;
    if (lseek(fd, 0, SEEK_SET) < 0)
        return SCAN_OTHER;
    for (;;) {
        long n = syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0)
            break;
        for (long off = 0; off < n;) {
            struct {
                unsigned long long ino;
                long long off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *de = (void *)(buf + off);
            off += de->reclen;
            if (strcmp(de->name, ".") == 0 || strcmp(de->name, "..") == 0)
                continue;
            if (strncmp(de->name, MARKER_PREFIX, sizeof MARKER_PREFIX - 1) != 0) {
                other = true;
                continue;
            }
            markers = true;
            if (marker_alive(de->name))
                *live_marker = true;
            else if (sweep_dead)
                unlinkat(fd, de->name, 0);
        }
    }
    return other ? SCAN_OTHER : markers ? SCAN_MARKERS_ONLY : SCAN_EMPTY;
}

static bool still_linked(int parent_fd, const char *name, int fd)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && fstatat(parent_fd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_dev == b.st_dev &&
           a.st_ino == b.st_ino;
}

static int add_marker(stub *s, cordon_error *err)
{
    int m = openat(s->fd, s->marker, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0400);
    if (m < 0 && errno != EEXIST)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot mark the stub %s", s->name);
    if (m >= 0)
        close(m);
    return 0;
}

/* Make the stub appear whole: a directory with our marker already in it, renamed into
 * place (RENAME_NOREPLACE), so another run never sees a stub without its owner. */
static int create_atomically(stub *s, cordon_error *err)
{
    char tmp[320];
    snprintf(tmp, sizeof tmp, ".cordon-stub-new.%d.%.255s", (int)getpid(), s->name);
    if (mkdirat(s->parent_fd, tmp, 0700) < 0)
        return errno == EEXIST ? 1 : err_set(err, CORDON_STAGE_ROOT, errno, "cannot create a stub for %s", s->name);
    int fd = openat(s->parent_fd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int ret = 0;
    if (fd < 0) {
        ret = err_set(err, CORDON_STAGE_ROOT, errno, "cannot open the new stub for %s", s->name);
    } else {
        int m = openat(fd, s->marker, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0400);
        if (m < 0)
            ret = err_set(err, CORDON_STAGE_ROOT, errno, "cannot mark the stub for %s", s->name);
        else
            close(m);
        if (ret == 0 && renameat2(s->parent_fd, tmp, s->parent_fd, s->name, RENAME_NOREPLACE) < 0)
            ret = errno == EEXIST ? 1 : err_set(err, CORDON_STAGE_ROOT, errno, "cannot put the stub %s in place", s->name);
        if (ret != 0) {
            unlinkat(fd, s->marker, 0);
            unlinkat(s->parent_fd, tmp, AT_REMOVEDIR);
        }
        close(fd);
    }
    return ret; /* 0: created; 1: something is there already */
}

static int create_one(const plan_op *op, stub *s, const char *marker, cordon_error *err)
{
    const char *slash = strrchr(op->dest, '/');
    if (!slash || !slash[1] || strlen(slash + 1) >= sizeof s->name)
        return err_set(err, CORDON_STAGE_ROOT, EINVAL, "bad stub path %s", op->dest);
    snprintf(s->name, sizeof s->name, "%s", slash + 1);
    snprintf(s->marker, sizeof s->marker, "%s", marker);
    char parent[4096];
    size_t pl = (size_t)(slash - op->dest);
    if (pl >= sizeof parent)
        return err_set(err, CORDON_STAGE_ROOT, ENAMETOOLONG, "%s", op->dest);
    memcpy(parent, op->dest, pl);
    parent[pl] = '\0';
    struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                           .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
    s->parent_fd = (int)syscall(SYS_openat2, AT_FDCWD, pl ? parent : "/", &how, sizeof how);
    if (s->parent_fd < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "%s: cannot open %s without following symlinks",
                       op->why, pl ? parent : "/");
    for (int attempt = 0; attempt < 4; attempt++) {
        int c = create_atomically(s, err);
        if (c < 0)
            return -1;
        s->fd = openat(s->parent_fd, s->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (s->fd < 0) {
            if (errno == ENOENT)
                continue; /* removed meanwhile by the run that owned it: try again */
            return err_set(err, CORDON_STAGE_ROOT, errno,
                           "%s: %s appeared during setup and is not a directory; refusing", op->why, op->dest);
        }
        if (flock(s->fd, LOCK_EX) < 0)
            return err_set(err, CORDON_STAGE_ROOT, errno, "cannot lock the stub %s", op->dest);
        if (!still_linked(s->parent_fd, s->name, s->fd)) {
            close(s->fd);
            s->fd = -1;
            continue;
        }
        int ret = 0;
        if (c == 0) {
            s->ours = true;
        } else {
            bool live;
            /* Someone else's stub: join it. Anything else (a directory a person or a
             * program made meanwhile) is hidden all the same but never removed. */
            s->ours = scan(s->fd, false, &live) == SCAN_MARKERS_ONLY;
            if (s->ours)
                ret = add_marker(s, err);
        }
        flock(s->fd, LOCK_UN);
        return ret;
    }
    return err_set(err, CORDON_STAGE_ROOT, EAGAIN, "%s: could not hold %s for the run", op->why, op->dest);
}

int stubs_create(const plan *p, stubs *s, cordon_error *err)
{
    *s = (stubs){.janitor = -1, .janitor_fd = -1};
    size_t n = 0;
    for (size_t i = 0; i < p->n_ops; i++)
        n += p->ops[i].kind == PLAN_HIDE && p->ops[i].stub;
    if (n == 0)
        return 0;
    if (n > STUBS_MAX)
        return err_set(err, CORDON_STAGE_ROOT, 0,
                       "%zu missing paths to hold in writable directories; at most %d are supported", n, STUBS_MAX);
    char marker[64];
    snprintf(marker, sizeof marker, MARKER_PREFIX "%d.%llu", (int)getpid(), start_time(getpid()));
    s->v = xcalloc(n, sizeof *s->v);
    for (size_t i = 0; i < p->n_ops; i++) {
        if (p->ops[i].kind != PLAN_HIDE || !p->ops[i].stub)
            continue;
        stub *x = &s->v[s->n++];
        x->parent_fd = x->fd = -1;
        if (create_one(&p->ops[i], x, marker, err) < 0) {
            stubs_release(s);
            return -1;
        }
    }
    return 0;
}

static void release_one(stub *s)
{
    if (s->ours && s->fd >= 0 && flock(s->fd, LOCK_EX) == 0) {
        unlinkat(s->fd, s->marker, 0);
        bool live;
        scan_result r = scan(s->fd, true, &live);
        if (!live && r != SCAN_OTHER && still_linked(s->parent_fd, s->name, s->fd))
            unlinkat(s->parent_fd, s->name, AT_REMOVEDIR); /* fails harmlessly if not empty */
        flock(s->fd, LOCK_UN);
    }
    if (s->fd >= 0)
        close(s->fd);
    if (s->parent_fd >= 0)
        close(s->parent_fd);
    s->fd = s->parent_fd = -1;
}

static void release_all(stubs *s)
{
    for (size_t i = 0; i < s->n; i++)
        release_one(&s->v[i]);
}

int stubs_start_janitor(stubs *s, int pidfd, cordon_error *err)
{
    if (s->n == 0)
        return 0;
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return err_set(err, CORDON_STAGE_SUPERVISE, errno, "pipe");
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return err_set(err, CORDON_STAGE_SUPERVISE, e, "cannot start the stub janitor");
    }
    if (pid == 0) {
        /* Outside the sandbox, in a session of its own (a signal to cordon's process
         * group does not reach it), holding nothing but what it needs. */
        setsid();
        int keep[2 + 2 * STUBS_MAX];
        size_t k = 0;
        keep[k++] = p[0];
        keep[k++] = pidfd;
        for (size_t i = 0; i < s->n; i++) {
            keep[k++] = s->v[i].fd;
            keep[k++] = s->v[i].parent_fd;
        }
        close_fds_except(keep, k);
        int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (devnull >= 0) {
            dup2(devnull, 0);
            dup2(devnull, 1);
            dup2(devnull, 2);
        }
        char c;
        ssize_t n;
        while ((n = read(p[0], &c, 1)) < 0 && errno == EINTR)
            ;
        if (n == 1)
            _exit(0); /* cordon released the stubs itself */
        /* cordon died: the sandbox dies with it; once PID 1 is gone, clean up. */
        struct pollfd pf = {.fd = pidfd, .events = POLLIN};
        poll(&pf, 1, 10000);
        release_all(s);
        _exit(0);
    }
    close(p[0]);
    s->janitor = pid;
    s->janitor_fd = p[1];
    return 0;
}

void stubs_release(stubs *s)
{
    release_all(s);
    if (s->janitor_fd >= 0) {
        (void)!write(s->janitor_fd, "x", 1);
        close(s->janitor_fd);
        s->janitor_fd = -1;
    }
    if (s->janitor > 0) {
        while (waitpid(s->janitor, NULL, 0) < 0 && errno == EINTR)
            ;
        s->janitor = -1;
    }
    free(s->v);
    s->v = NULL;
    s->n = 0;
}
