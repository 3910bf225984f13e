// SPDX-License-Identifier: Apache-2.0
#include "supervise/limits.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/proc.h"
#include "util/strv.h"

/* snprintf for messages and paths, where cutting a very long path short is acceptable
 * (and gcc's truncation warnings are not). */
__attribute__((format(printf, 3, 4))) static void fmt(char *buf, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, n, f, ap);
    va_end(ap);
}

/* The controller each limit needs.  In cgroup v2 the CPU limit needs none: cpu.stat's
 * usage_usec is in every cgroup, and cpu.max is a rate, not a total, so cordon watches
 * the total itself.  In v1 the total is cpuacct.usage. */
static const char *const v2_controller[LIMITS_N] = {"pids", "memory", NULL};
static const char *const v1_controller[LIMITS_N] = {"pids", "memory", "cpuacct"};

/* How long the janitor keeps trying to remove a cgroup that is still populated (the
 * sandbox is being torn down) before it gives up. */
#define JANITOR_TRIES 3000 /* x 10 ms */

const char *limits_kind_name(limits_kind k)
{
    switch (k) {
    case LIMITS_NONE: return NULL;
    case LIMITS_CGROUP2: return "cgroup2";
    case LIMITS_CGROUP1: return "cgroup1";
    case LIMITS_RLIMIT: return "rlimit";
    }
    return NULL;
}

static bool any_limit(const limit_values *w)
{
    for (int i = 0; i < LIMITS_N; i++)
        if (w->v[i])
            return true;
    return false;
}

/* ------------------------------------------------------------------------------------ */
/* small file helpers (parent side only: they allocate) */

/* The whole of a /proc or cgroup file, NUL-terminated; NULL when it cannot be read. */
static char *read_text(int dirfd, const char *path)
{
    _cleanup_fd_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return NULL;
    size_t cap = 4096, len = 0;
    _cleanup_free_ char *buf = xmalloc(cap);
    for (;;) {
        if (len + 1 >= cap) {
            if (cap >= ((size_t)8 << 20))
                return NULL;
            cap *= 2;
            buf = xrealloc(buf, cap);
        }
        ssize_t r = read(fd, buf + len, cap - 1 - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return NULL;
        if (r == 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    return steal_pointer(&buf);
}

/* Read a small cgroup file into buf (NUL-terminated); -1 with errno set. */
static int read_small(int dirfd, const char *name, char *buf, size_t n)
{
    _cleanup_fd_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t r = read_all(fd, buf, n - 1);
    if (r < 0)
        return -1;
    buf[r] = '\0';
    return 0;
}

/* Write s to a cgroup file (one write, as the kernel wants); -1 with errno set. */
static int write_small(int dirfd, const char *name, const char *s)
{
    _cleanup_fd_ int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t w = write(fd, s, strlen(s));
    if (w < 0)
        return -1;
    if ((size_t)w != strlen(s)) {
        errno = EIO;
        return -1;
    }
    return 0;
}

/* Does the space- or comma-separated list hold word? */
static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        size_t k = strcspn(p, " ,\n");
        if (k == n && strncmp(p, word, n) == 0)
            return true;
        p += k;
        p += strspn(p, " ,\n");
    }
    return false;
}

/* "key N" in a flat-keyed cgroup file (memory.events, pids.events, cpu.stat); -1 if absent. */
static long long flat_key(const char *text, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (strncmp(p, key, n) == 0 && p[n] == ' ')
            return strtoll(p + n + 1, NULL, 10);
    return -1;
}

/* ------------------------------------------------------------------------------------ */
/* finding the caller's cgroups */

/* The caller's cgroup as /proc/self/cgroup shows it: in the v2 hierarchy (controller
 * NULL) or in the v1 hierarchy holding `controller`. */
static bool own_cgroup(const char *text, const char *controller, char *path, size_t n)
{
    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *c1 = memchr(line, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
        if (c2) {
            char ctrls[256];
            size_t cl = (size_t)(c2 - c1 - 1);
            bool match;
            if (cl < sizeof ctrls) {
                memcpy(ctrls, c1 + 1, cl);
                ctrls[cl] = '\0';
                match = controller ? has_word(ctrls, controller) : (cl == 0 && c1 == line + 1 && line[0] == '0');
            } else {
                match = false;
            }
            size_t pl = len - (size_t)(c2 + 1 - line);
            if (match && pl > 0 && pl < n) {
                memcpy(path, c2 + 1, pl);
                path[pl] = '\0';
                return true;
            }
        }
        line = end ? end + 1 : NULL;
    }
    return false;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' && p[3] <= '7') {
            *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

/* Where the cgroup `cgpath` of the v2 hierarchy (controller NULL) or of the v1 one
 * holding `controller` is in the file system: dir, and the mount point it is under. */
static bool cgroup_dir(const char *mountinfo, const char *controller, const char *cgpath, char *dir, size_t n,
                       char *mnt_out, size_t mn)
{
    for (const char *line = mountinfo; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[4096];
        const char *start = line;
        line = end ? end + 1 : NULL;
        if (len >= sizeof buf)
            continue;
        memcpy(buf, start, len);
        buf[len] = '\0';
        char *f[8] = {0};
        char *save = NULL, *tok = strtok_r(buf, " ", &save);
        int k = 0;
        while (tok && k < 5) {
            f[k++] = tok;
            tok = strtok_r(NULL, " ", &save);
        }
        while (tok && strcmp(tok, "-") != 0) /* optional fields */
            tok = strtok_r(NULL, " ", &save);
        char *fstype = tok ? strtok_r(NULL, " ", &save) : NULL;
        char *source = fstype ? strtok_r(NULL, " ", &save) : NULL;
        char *super = source ? strtok_r(NULL, " ", &save) : NULL;
        if (k < 5 || !fstype)
            continue;
        if (controller ? (strcmp(fstype, "cgroup") != 0 || !super || !has_word(super, controller))
                       : strcmp(fstype, "cgroup2") != 0)
            continue;
        unescape(f[3]);
        unescape(f[4]);
        const char *root = f[3], *mnt = f[4], *rel;
        size_t rl = strlen(root);
        if (strcmp(root, "/") == 0)
            rel = cgpath;
        else if (strncmp(cgpath, root, rl) == 0 && (cgpath[rl] == '/' || cgpath[rl] == '\0'))
            rel = cgpath + rl;
        else
            continue;
        if (strcmp(rel, "/") == 0)
            rel = "";
        int w = snprintf(dir, n, "%s%s", strcmp(mnt, "/") == 0 && *rel ? "" : mnt, rel);
        if (w < 0 || (size_t)w >= n || snprintf(mnt_out, mn, "%s", mnt) >= (int)mn)
            return false;
        return true;
    }
    return false;
}

/* The caller may make cgroups in dir and move processes into them (cgroup.procs of the
 * common ancestor, which dir is, writable). */
static bool writable_cgroup(const char *dir)
{
    char procs[4200];
    fmt(procs, sizeof procs, "%s/cgroup.procs", dir);
    return faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0 && faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) == 0;
}

/* Is dir on a read-only mount?  A container's /sys/fs/cgroup is, by default (Docker's):
 * then no permission or delegation would help, and the message says so. */
static bool readonly_mount(const char *dir)
{
    struct statvfs s;
    return statvfs(dir, &s) == 0 && (s.f_flag & ST_RDONLY);
}

typedef struct host_cgroups {
    char *self;      /* /proc/self/cgroup */
    char *mountinfo; /* /proc/self/mountinfo */
} host_cgroups;

static void host_cgroups_read(host_cgroups *h)
{
    h->self = read_text(AT_FDCWD, "/proc/self/cgroup");
    h->mountinfo = read_text(AT_FDCWD, "/proc/self/mountinfo");
}

static void host_cgroups_free(host_cgroups *h)
{
    free(h->self);
    free(h->mountinfo);
}

/* cgroup v2: the nearest cgroup from the caller's own up to the hierarchy's root that the
 * caller can write and that has every controller `want` needs enabled for its children.
 * (The caller's own cgroup rarely qualifies when memory is wanted: a cgroup with processes
 * cannot enable domain controllers for its children.) */
static int find_v2(const host_cgroups *h, const limit_values *want, char *dir, size_t n, cordon_error *why)
{
    char path[4096], mnt[4096];
    if (!h->self || !h->mountinfo) {
        err_set(why, CORDON_STAGE_LIMITS, 0, "cannot read /proc/self/cgroup or /proc/self/mountinfo");
        return -1;
    }
    if (!own_cgroup(h->self, NULL, path, sizeof path)) {
        err_set(why, CORDON_STAGE_LIMITS, 0, "cordon is in no cgroup v2 (this host uses cgroup v1 only)");
        return -1;
    }
    if (strncmp(path, "/..", 3) == 0) {
        err_set(why, CORDON_STAGE_LIMITS, 0, "cordon's cgroup is outside its cgroup namespace");
        return -1;
    }
    if (!cgroup_dir(h->mountinfo, NULL, path, dir, n, mnt, sizeof mnt)) {
        err_set(why, CORDON_STAGE_LIMITS, 0, "no cgroup v2 file system is mounted here");
        return -1;
    }
    char own[4096];
    fmt(own, sizeof own, "%s", dir);
    for (;;) {
        char ctl[512], sub[4200];
        fmt(sub, sizeof sub, "%s/cgroup.subtree_control", dir);
        bool ok = read_small(AT_FDCWD, sub, ctl, sizeof ctl) == 0;
        for (int i = 0; ok && i < LIMITS_N; i++)
            if (want->v[i] && v2_controller[i] && !has_word(ctl, v2_controller[i]))
                ok = false;
        if (ok && writable_cgroup(dir))
            return 0;
        size_t ml = strlen(mnt);
        char *slash = strrchr(dir, '/');
        if (strlen(dir) <= ml || !slash || (size_t)(slash - dir) < ml)
            break;
        *slash = '\0';
        if (!*dir)
            fmt(dir, n, "/");
    }
    /* Say why: the controllers are not in v2 at all, or not delegated to this user. */
    char top[4200], ctl[512] = "";
    fmt(top, sizeof top, "%s/cgroup.controllers", mnt);
    read_small(AT_FDCWD, top, ctl, sizeof ctl);
    for (int i = 0; i < LIMITS_N; i++)
        if (want->v[i] && v2_controller[i] && !has_word(ctl, v2_controller[i])) {
            err_set(why, CORDON_STAGE_LIMITS, 0,
                    "the cgroup v2 hierarchy at %s has no %s controller (on this host it belongs to "
                    "cgroup v1)",
                    mnt, v2_controller[i]);
            return -1;
        }
    if (readonly_mount(own)) {
        err_set(why, CORDON_STAGE_LIMITS, EROFS,
                "the cgroup v2 file system at %s is mounted read-only (as a container's /sys/fs/cgroup "
                "is by default): no cgroup can be made in it",
                mnt);
        return -1;
    }
    err_set(why, CORDON_STAGE_LIMITS, 0,
            "no cgroup from %s up to %s is both writable by uid %u and has the needed controllers "
            "enabled for its children (cgroup.subtree_control): cgroup v2 is not delegated to you",
            own, mnt, (unsigned)geteuid());
    return -1;
}

/* cgroup v1: the caller's own directory in the hierarchy holding `controller`, if the
 * caller can write it (root, or a v1 tree chowned to the user). */
static int find_v1(const host_cgroups *h, const char *controller, char *dir, size_t n, cordon_error *why)
{
    char path[4096], mnt[4096];
    if (!h->self || !h->mountinfo || !own_cgroup(h->self, controller, path, sizeof path) ||
        !cgroup_dir(h->mountinfo, controller, path, dir, n, mnt, sizeof mnt)) {
        err_set(why, CORDON_STAGE_LIMITS, 0, "no cgroup v1 %s hierarchy", controller);
        return -1;
    }
    if (!writable_cgroup(dir)) {
        if (readonly_mount(dir))
            err_set(why, CORDON_STAGE_LIMITS, EROFS,
                    "the cgroup v1 directory %s is on a read-only mount (as a container's /sys/fs/cgroup "
                    "is by default)",
                    dir);
        else
            err_set(why, CORDON_STAGE_LIMITS, 0, "the cgroup v1 directory %s is not writable by uid %u", dir,
                    (unsigned)geteuid());
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* the janitor: removes the run's cgroups once cordon is gone */

static void remove_dirs(const limits_dir *dirs, size_t n, bool *done)
{
    for (size_t i = 0; i < n; i++) {
        if (done[i])
            continue;
        if (unlinkat(dirs[i].parent_fd, dirs[i].name, AT_REMOVEDIR) == 0 || errno != EBUSY)
            done[i] = true; /* removed, already gone, or never made */
    }
}

static bool all_done(const bool *done, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!done[i])
            return false;
    return true;
}

/* Started before any cgroup is made, so that a cordon killed at any moment leaves none
 * behind: it waits for the pipe's end (cordon is gone, or done), then removes the
 * directories, retrying while the dying sandbox still populates them.  A copy of a
 * possibly multi-threaded process: only system calls from here on. */
static int start_janitor(limits_run *l, cordon_error *err)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return err_set(err, CORDON_STAGE_LIMITS, errno, "pipe");
    pid_t pid = proc_fork(NULL);
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return err_set(err, CORDON_STAGE_LIMITS, e, "cannot start the cgroup janitor");
    }
    if (pid == 0) {
        close(p[1]);
        int keep[1 + LIMITS_DIRS];
        size_t k = 0;
        keep[k++] = p[0];
        for (size_t i = 0; i < l->n_dirs; i++)
            keep[k++] = l->dirs[i].parent_fd;
        detach_janitor(keep, k);
        char c;
        while (read(p[0], &c, 1) != 0 && errno == EINTR)
            ;
        bool done[LIMITS_DIRS] = {false};
        for (int t = 0; t < JANITOR_TRIES; t++) {
            remove_dirs(l->dirs, l->n_dirs, done);
            if (all_done(done, l->n_dirs))
                break;
            poll(NULL, 0, 10);
        }
        _exit(0);
    }
    close(p[0]);
    l->janitor = pid;
    l->janitor_wfd = p[1];
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* making the run's cgroups */

static void run_name(char *buf, size_t n)
{
    unsigned r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        r = (unsigned)ts.tv_nsec ^ (unsigned)ts.tv_sec;
    }
    fmt(buf, n, "cordon-%d-%08x", (int)getpid(), r);
}

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* Remove what was made (what cannot be removed yet is left to the janitor), close
 * everything, and let the janitor go. */
static void drop_cgroups(limits_run *l, bool wait)
{
    bool done[LIMITS_DIRS] = {false};
    remove_dirs(l->dirs, l->n_dirs, done);
    for (size_t i = 0; i < l->n_dirs; i++) {
        /* parent fds may be shared between entries: close each once */
        int fd = l->dirs[i].parent_fd;
        for (size_t j = i; j < l->n_dirs; j++)
            if (l->dirs[j].parent_fd == fd)
                l->dirs[j].parent_fd = -1;
        if (fd >= 0)
            close(fd);
    }
    l->n_dirs = 0;
    close_fd(&l->into_fd);
    for (int i = 0; i < LIMITS_N; i++) {
        close_fd(&l->join_fd[i]);
        close_fd(&l->dir_fd[i]);
    }
    close_fd(&l->janitor_wfd);
    if (l->janitor > 0 && wait) {
        proc_reap_pid(l->janitor);
        l->janitor = -1;
    }
}

static int fail_setup(cordon_error *why, const char *what, const char *where)
{
    return err_set(why, CORDON_STAGE_LIMITS, errno, "%s %s", what, where);
}

/* The cgroups of runs whose cordon and janitor were both killed (a kill of every process
 * of the run at once): "cordon-PID-X" whose PID, the cordon that made it, is gone, and
 * that nothing runs in any more (rmdir of a populated cgroup fails: it stays). */
static void reap_stale_cgroups(int parent)
{
    _cleanup_fd_ int fd = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    _cleanup_dir_ DIR *d = fdopendir(fd);
    if (!d)
        return;
    (void)steal_fd(&fd); /* the DIR owns it now */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int pid = 0, n = 0;
        if (strncmp(e->d_name, "cordon-", 7) != 0 || sscanf(e->d_name + 7, "%d-%*x%n", &pid, &n) != 1 || n == 0 ||
            e->d_name[7 + n] != '\0' || pid <= 0)
            continue;
        if (kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        char leaf[sizeof e->d_name + 16];
        fmt(leaf, sizeof leaf, "%s/sandbox", e->d_name);
        (void)unlinkat(dirfd(d), leaf, AT_REMOVEDIR); /* cgroup v2's leaf, where there is one */
        (void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
    }
}

static int setup_v2(limits_run *l, const char *dir, cordon_error *why)
{
    int parent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (parent < 0)
        return fail_setup(why, "cannot open", dir);
    reap_stale_cgroups(parent);
    char name[64];
    run_name(name, sizeof name);
    l->dirs[0].parent_fd = parent;
    fmt(l->dirs[0].name, sizeof l->dirs[0].name, "%s/sandbox", name);
    l->dirs[1].parent_fd = parent;
    fmt(l->dirs[1].name, sizeof l->dirs[1].name, "%s", name);
    l->n_dirs = 2;
    fmt(l->where, sizeof l->where, "%s/%s", dir, name);
    if (start_janitor(l, why) < 0)
        return -1;
    if (mkdirat(parent, name, 0755) < 0)
        return fail_setup(why, "cannot make a cgroup in", dir);
    _cleanup_fd_ int run = openat(parent, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (run < 0)
        return fail_setup(why, "cannot open", l->where);
    char v[32];
    /* Nothing inside may make cgroups below the leaf: the limits stay where the command
     * cannot write them, and removing the run's cgroup stays two rmdirs. */
    if (write_small(run, "cgroup.max.depth", "1") < 0 || write_small(run, "cgroup.max.descendants", "1") < 0)
        return fail_setup(why, "cannot write cgroup.max.depth in", l->where);
    if (l->want.v[CORDON_LIMIT_PIDS]) {
        /* cordon's PID 1 lives in the cgroup too */
        fmt(v, sizeof v, "%llu", l->want.v[CORDON_LIMIT_PIDS] + 1);
        if (write_small(run, "pids.max", v) < 0)
            return fail_setup(why, "cannot write pids.max in", l->where);
    }
    if (l->want.v[CORDON_LIMIT_MEMORY]) {
        fmt(v, sizeof v, "%llu", l->want.v[CORDON_LIMIT_MEMORY]);
        if (write_small(run, "memory.max", v) < 0)
            return fail_setup(why, "cannot write memory.max in", l->where);
        /* Swap would let a hog go on past the limit, slowly: none for the sandbox. */
        if (write_small(run, "memory.swap.max", "0") < 0 && errno != ENOENT)
            return fail_setup(why, "cannot write memory.swap.max in", l->where);
    }
    if (mkdirat(run, "sandbox", 0755) < 0)
        return fail_setup(why, "cannot make a cgroup in", l->where);
    l->into_fd = openat(run, "sandbox", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (l->into_fd < 0)
        return fail_setup(why, "cannot open the leaf of", l->where);
    for (int i = 0; i < LIMITS_N; i++)
        if (l->want.v[i] && (l->dir_fd[i] = fcntl(run, F_DUPFD_CLOEXEC, 3)) < 0)
            return fail_setup(why, "cannot open", l->where);
    return 0;
}

static int setup_v1(limits_run *l, const host_cgroups *h, cordon_error *why)
{
    /* a copy: what is wanted does not change while the cgroups are made (and the analyzer
     * can then tell that of[i] is set wherever a limit is) */
    const limit_values want = l->want;
    /* One directory per hierarchy (pids and memory may share one). */
    char dirs[LIMITS_N][4096];
    int of[LIMITS_N]; /* limit -> index into dirs */
    size_t nd = 0;
    for (int i = 0; i < LIMITS_N; i++) {
        of[i] = -1;
        if (!want.v[i])
            continue;
        char d[4096];
        if (find_v1(h, v1_controller[i], d, sizeof d, why) < 0)
            return -1;
        for (size_t j = 0; j < nd; j++)
            if (strcmp(dirs[j], d) == 0)
                of[i] = (int)j;
        if (of[i] < 0) {
            fmt(dirs[nd], sizeof dirs[nd], "%s", d);
            of[i] = (int)nd++;
        }
    }
    char name[64];
    run_name(name, sizeof name);
    for (size_t j = 0; j < nd; j++) {
        int fd = open(dirs[j], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            return fail_setup(why, "cannot open", dirs[j]);
        reap_stale_cgroups(fd);
        l->dirs[j].parent_fd = fd;
        fmt(l->dirs[j].name, sizeof l->dirs[j].name, "%s", name);
        l->n_dirs = j + 1;
    }
    size_t wl = 0;
    for (size_t j = 0; j < nd && wl < sizeof l->where; j++)
        wl += (size_t)snprintf(l->where + wl, sizeof l->where - wl, "%s%s/%s", j ? " " : "", dirs[j], name);
    if (start_janitor(l, why) < 0)
        return -1;
    int run[LIMITS_N] = {-1, -1, -1};
    int ret = 0;
    for (size_t j = 0; j < nd && ret == 0; j++) {
        if (mkdirat(l->dirs[j].parent_fd, name, 0755) < 0 ||
            (run[j] = openat(l->dirs[j].parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
            (l->join_fd[j] = openat(run[j], "cgroup.procs", O_WRONLY | O_CLOEXEC)) < 0)
            ret = fail_setup(why, "cannot make a cgroup in", dirs[j]);
    }
    char v[32];
    if (ret == 0 && want.v[CORDON_LIMIT_PIDS]) {
        fmt(v, sizeof v, "%llu", want.v[CORDON_LIMIT_PIDS] + 1);
        if (write_small(run[of[CORDON_LIMIT_PIDS]], "pids.max", v) < 0)
            ret = fail_setup(why, "cannot write pids.max in", dirs[of[CORDON_LIMIT_PIDS]]);
    }
    if (ret == 0 && want.v[CORDON_LIMIT_MEMORY]) {
        int m = run[of[CORDON_LIMIT_MEMORY]];
        fmt(v, sizeof v, "%llu", want.v[CORDON_LIMIT_MEMORY]);
        if (write_small(m, "memory.limit_in_bytes", v) < 0 ||
            (write_small(m, "memory.memsw.limit_in_bytes", v) < 0 && errno != ENOENT))
            ret = fail_setup(why, "cannot write memory.limit_in_bytes in", dirs[of[CORDON_LIMIT_MEMORY]]);
    }
    for (int i = 0; ret == 0 && i < LIMITS_N; i++)
        if (of[i] >= 0 && (l->dir_fd[i] = fcntl(run[of[i]], F_DUPFD_CLOEXEC, 3)) < 0)
            ret = fail_setup(why, "cannot open", dirs[of[i]]);
    for (size_t j = 0; j < nd; j++)
        if (run[j] >= 0)
            close(run[j]);
    return ret;
}

static void limits_init(limits_run *l, const limit_values *want)
{
    *l = (limits_run){.into_fd = -1, .janitor = -1, .janitor_wfd = -1, .cpu_fd = -1};
    for (int i = 0; i < LIMITS_N; i++)
        l->join_fd[i] = l->dir_fd[i] = -1;
    if (want)
        l->want = *want;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    l->ncpu = n > 0 ? n : 1;
}

/* RLIMIT_NPROC counts the processes of the real uid in the sandbox's user namespace, but
 * the kernel never applies it to uid 0 (copy_process(): INIT_USER is exempt). */
static int use_rlimits(limits_run *l, cordon_error *err)
{
    l->kind = LIMITS_RLIMIT;
    if (l->want.v[CORDON_LIMIT_PIDS] && (getuid() == 0 || geteuid() == 0)) {
        char why[sizeof l->why.message + 128];
        cordon_error_text(&l->why, why, sizeof why);
        return err_opt(err, CORDON_STAGE_LIMITS, 0, "limitPids",
                       "a process limit cannot be enforced here: no cgroup can be used (%s), and the "
                       "kernel does not apply RLIMIT_NPROC to root; run cordon as another user, or "
                       "from a cgroup v2 delegated to you (`cordon check` says more)",
                       why);
    }
    return 0;
}

/* why = "first; second", each with its errno spelled out. */
static void join_whys(cordon_error *why, const cordon_error *first, const cordon_error *second)
{
    /* EROFS (a cgroup file system mounted read-only) travels on, for `cordon check`'s
     * advice: spelled out once, at the end */
    char a[sizeof first->message + 128], b[sizeof second->message + 128];
    if (first->errnum == EROFS)
        snprintf(a, sizeof a, "%s", first->message);
    else
        cordon_error_text(first, a, sizeof a);
    if (second->errnum == EROFS)
        snprintf(b, sizeof b, "%s", second->message);
    else
        cordon_error_text(second, b, sizeof b);
    err_set(why, CORDON_STAGE_LIMITS, first->errnum == EROFS || second->errnum == EROFS ? EROFS : 0, "%s; %s", a, b);
}

int limits_prepare(limits_run *l, const limit_values *want, cordon_error *err)
{
    limits_init(l, want);
    if (!any_limit(want))
        return 0;
    host_cgroups h = {0};
    host_cgroups_read(&h);
    char dir[4096];
    cordon_error why2 = {0}, why1 = {0};
    if (find_v2(&h, want, dir, sizeof dir, &why2) == 0) {
        l->kind = LIMITS_CGROUP2;
        if (setup_v2(l, dir, &why2) == 0) {
            host_cgroups_free(&h);
            return 0;
        }
        drop_cgroups(l, true);
        limits_init(l, want);
    }
    l->kind = LIMITS_CGROUP1;
    if (setup_v1(l, &h, &why1) == 0) {
        host_cgroups_free(&h);
        return 0;
    }
    drop_cgroups(l, true);
    limits_init(l, want);
    host_cgroups_free(&h);
    join_whys(&l->why, &why2, &why1);
    return use_rlimits(l, err);
}

int limits_fallback(limits_run *l, const cordon_error *why, cordon_error *err)
{
    limit_values want = l->want;
    drop_cgroups(l, true);
    limits_init(l, &want);
    l->why = *why;
    return use_rlimits(l, err);
}

/* ------------------------------------------------------------------------------------ */
/* after clone3: system calls only */

/* The file that counts the run's CPU time, in the cgroup holding that limit. */
static const char *cpu_file(const limits_run *l)
{
    return l->kind == LIMITS_CGROUP2 ? "cpu.stat" : "cpuacct.usage";
}

int limits_enter(limits_run *l, cordon_error *err)
{
    if (l->kind != LIMITS_CGROUP1 && l->kind != LIMITS_CGROUP2)
        return 0;
    /* PID 1 watches the CPU time (report.c) under the command's Landlock domain, which
     * may not allow opening anything outside the view: opened now, read with pread. */
    if (l->want.v[CORDON_LIMIT_CPU] && l->dir_fd[CORDON_LIMIT_CPU] >= 0 &&
        (l->cpu_fd = openat(l->dir_fd[CORDON_LIMIT_CPU], cpu_file(l), O_RDONLY | O_CLOEXEC)) < 0)
        return err_set(err, CORDON_STAGE_LIMITS, errno, "cannot open %s in the run's cgroup (%s)", cpu_file(l),
                       l->where);
    for (int i = 0; i < LIMITS_N; i++)
        if (l->join_fd[i] >= 0 && write(l->join_fd[i], "0", 1) != 1)
            return err_set(err, CORDON_STAGE_LIMITS, errno, "cannot join the run's cgroup (%s)", l->where);
    /* clone3 rooted the sandbox's cgroup namespace at cordon's own cgroup, whatever
     * CLONE_INTO_CGROUP chose: root a new one here, at the run's cgroup. */
    if (unshare(CLONE_NEWCGROUP) < 0)
        return err_set(err, CORDON_STAGE_LIMITS, errno, "cannot make a cgroup namespace for the run");
    return 0;
}

static int lower_rlimit(int resource, rlim_t soft, rlim_t hard)
{
    struct rlimit cur;
    if (getrlimit(resource, &cur) < 0)
        return -1;
    /* Never above what the caller already has (raising needs CAP_SYS_RESOURCE). */
    if (cur.rlim_max != RLIM_INFINITY && hard > cur.rlim_max)
        hard = cur.rlim_max;
    if (soft > hard)
        soft = hard;
    struct rlimit r = {.rlim_cur = soft, .rlim_max = hard};
    return setrlimit(resource, &r);
}

int limits_apply_rlimits(const limits_run *l, cordon_error *err)
{
    if (l->kind != LIMITS_RLIMIT)
        return 0;
    unsigned long long pids = l->want.v[CORDON_LIMIT_PIDS];
    unsigned long long mem = l->want.v[CORDON_LIMIT_MEMORY];
    unsigned long long cpu = l->want.v[CORDON_LIMIT_CPU];
    /* +1: cordon's PID 1 has the same uid in the sandbox's user namespace. */
    if (pids && lower_rlimit(RLIMIT_NPROC, (rlim_t)pids + 1, (rlim_t)pids + 1) < 0)
        return err_set(err, CORDON_STAGE_LIMITS, errno, "setrlimit(RLIMIT_NPROC, %llu)", pids + 1);
    if (mem && lower_rlimit(RLIMIT_AS, (rlim_t)mem, (rlim_t)mem) < 0)
        return err_set(err, CORDON_STAGE_LIMITS, errno, "setrlimit(RLIMIT_AS, %llu)", mem);
    /* SIGXCPU at the limit, SIGKILL a second later for a command that ignores it. */
    if (cpu && lower_rlimit(RLIMIT_CPU, (rlim_t)cpu, (rlim_t)cpu + 1) < 0)
        return err_set(err, CORDON_STAGE_LIMITS, errno, "setrlimit(RLIMIT_CPU, %llu)", cpu);
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* the outer side during and after the run */

/* CPU time used by the run's cgroup, in microseconds; -1 when it cannot be read. */
static long long cpu_used_usec(const limits_run *l)
{
    char buf[1024];
    if (l->cpu_fd >= 0) {
        ssize_t n = pread(l->cpu_fd, buf, sizeof buf - 1, 0); /* a cgroup file reads anew from 0 */
        if (n < 0)
            return -1;
        buf[n] = '\0';
        return l->kind == LIMITS_CGROUP2 ? flat_key(buf, "usage_usec") : strtoll(buf, NULL, 10) / 1000;
    }
    if (l->kind == LIMITS_CGROUP2) {
        if (read_small(l->dir_fd[CORDON_LIMIT_CPU], "cpu.stat", buf, sizeof buf) < 0)
            return -1;
        return flat_key(buf, "usage_usec");
    }
    if (read_small(l->dir_fd[CORDON_LIMIT_CPU], "cpuacct.usage", buf, sizeof buf) < 0)
        return -1;
    return strtoll(buf, NULL, 10) / 1000;
}

static bool watching_cpu(const limits_run *l)
{
    return (l->kind == LIMITS_CGROUP2 || l->kind == LIMITS_CGROUP1) && l->want.v[CORDON_LIMIT_CPU] &&
           l->dir_fd[CORDON_LIMIT_CPU] >= 0 && !l->cpu_exceeded;
}

/* Under rlimits nothing tells a refused fork: PID 1 looks how many processes the
 * sandbox has every PIDS_SAMPLE_MS, and one that reached the limit counts as hit. */
#define PIDS_SAMPLE_MS 20

static bool sampling_pids(const limits_run *l)
{
    return l->kind == LIMITS_RLIMIT && l->want.v[CORDON_LIMIT_PIDS] && !(l->hit & (1u << CORDON_LIMIT_PIDS));
}

void limits_sample_pids(limits_run *l, int proc_fd)
{
    if (!sampling_pids(l) || proc_fd < 0)
        return;
    int fd = openat(proc_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    unsigned long long n = 0;
    _Alignas(8) char buf[4096];
    long got;
    while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
        for (long off = 0; off < got;) {
            struct {
                uint64_t ino;
                int64_t off;
                unsigned short reclen;
                unsigned char type;
                char name[];
            } *d = (void *)(buf + off);
            off += d->reclen;
            n += d->name[0] >= '1' && d->name[0] <= '9';
        }
    close(fd);
    /* PID 1 counts too (one uid in the user namespace): RLIMIT_NPROC is the limit + 1 */
    if (n >= l->want.v[CORDON_LIMIT_PIDS] + 1)
        l->hit |= 1u << CORDON_LIMIT_PIDS;
}

int limits_next_check_ms(const limits_run *l)
{
    if (sampling_pids(l))
        return PIDS_SAMPLE_MS;
    if (!watching_cpu(l))
        return -1;
    long long left = (long long)l->want.v[CORDON_LIMIT_CPU] * 1000000 - cpu_used_usec(l);
    if (left <= 0)
        return 0;
    /* CPU time grows at most ncpu times as fast as wall time: look again when the limit
     * could first be reached, but at least every 10 ms and at most every second. */
    long long ms = left / 1000 / l->ncpu;
    return ms < 10 ? 10 : ms > 1000 ? 1000 : (int)ms;
}

bool limits_cpu_used_up(limits_run *l)
{
    if (!watching_cpu(l))
        return false;
    long long used = cpu_used_usec(l);
    if (used < 0 || used < (long long)l->want.v[CORDON_LIMIT_CPU] * 1000000)
        return false;
    l->cpu_exceeded = true;
    l->hit |= 1u << CORDON_LIMIT_CPU;
    return true;
}

/* Which limits the kernel enforced: a refused fork, an OOM kill. */
static void note_hits(limits_run *l)
{
    char buf[2048];
    int fd = l->dir_fd[CORDON_LIMIT_PIDS];
    if (fd >= 0 && read_small(fd, "pids.events", buf, sizeof buf) == 0 && flat_key(buf, "max") > 0)
        l->hit |= 1u << CORDON_LIMIT_PIDS;
    fd = l->dir_fd[CORDON_LIMIT_MEMORY];
    if (fd >= 0) {
        const char *file = l->kind == LIMITS_CGROUP2 ? "memory.events" : "memory.oom_control";
        if (read_small(fd, file, buf, sizeof buf) == 0 && flat_key(buf, "oom_kill") > 0)
            l->hit |= 1u << CORDON_LIMIT_MEMORY;
    }
}

void limits_collect(limits_run *l)
{
    if (l->kind == LIMITS_CGROUP1 || l->kind == LIMITS_CGROUP2)
        note_hits(l);
}

void limits_finish(limits_run *l, bool wait)
{
    if (l->kind == LIMITS_CGROUP1 || l->kind == LIMITS_CGROUP2)
        note_hits(l);
    drop_cgroups(l, wait);
}

/* ------------------------------------------------------------------------------------ */
/* looking only: cordon check and cordon explain */

static limits_kind probe(const limit_values *want, char *where, size_t n, cordon_error *why)
{
    host_cgroups h = {0};
    host_cgroups_read(&h);
    cordon_error why2 = {0}, why1 = {0};
    limits_kind k = LIMITS_RLIMIT;
    if (find_v2(&h, want, where, n, &why2) == 0) {
        k = LIMITS_CGROUP2;
    } else {
        size_t wl = 0;
        where[0] = '\0';
        k = LIMITS_CGROUP1;
        for (int i = 0; i < LIMITS_N && k == LIMITS_CGROUP1; i++) {
            char d[4096];
            if (!want->v[i])
                continue;
            if (find_v1(&h, v1_controller[i], d, sizeof d, &why1) < 0)
                k = LIMITS_RLIMIT;
            else if (wl < n && !strstr(where, d))
                wl += (size_t)snprintf(where + wl, n - wl, "%s%s", wl ? " " : "", d);
        }
        if (k == LIMITS_RLIMIT)
            join_whys(why, &why2, &why1);
    }
    host_cgroups_free(&h);
    return k;
}

limits_kind limits_probe(char *where, size_t n, cordon_error *why)
{
    static const limit_values all_limits = {{64, 64ULL << 20, 1}};
    return probe(&all_limits, where, n, why);
}

void limits_explain(FILE *out, const limit_values *want)
{
    if (!any_limit(want)) {
        fprintf(out, "\nlimits\n  none (--limit-pids, --limit-memory, --limit-cpu)\n");
        return;
    }
    char where[1024] = "", why[sizeof((cordon_error *)0)->message + 128];
    cordon_error reason = {0};
    limits_kind k = probe(want, where, sizeof where, &reason);
    cordon_error_text(&reason, why, sizeof why);
    static const char *const v2_how[LIMITS_N] = {"pids.max (+1: cordon's PID 1 counts)", "memory.max, no swap",
                                                 "cpu.stat usage_usec, watched by cordon"};
    static const char *const v1_how[LIMITS_N] = {"pids.max (+1: cordon's PID 1 counts)", "memory.limit_in_bytes",
                                                 "cpuacct.usage, watched by cordon"};
    static const char *const rl_how[LIMITS_N] = {"RLIMIT_NPROC: processes of your uid in the sandbox's user namespace",
                                                 "RLIMIT_AS: address space of each process",
                                                 "RLIMIT_CPU: CPU time of each process"};
    if (k == LIMITS_CGROUP2)
        fprintf(out, "\nlimits (cgroup v2: a cgroup of the run's own under %s)\n", where);
    else if (k == LIMITS_CGROUP1)
        fprintf(out, "\nlimits (cgroup v1: cgroups of the run's own under %s)\n", where);
    else
        fprintf(out, "\nlimits (rlimits, set in the command's process: %s)\n", why);
    for (int i = 0; i < LIMITS_N; i++) {
        if (!want->v[i])
            continue;
        char v[64];
        limit_format((cordon_limit)i, want->v[i], v, sizeof v);
        const char *how = k == LIMITS_CGROUP2 ? v2_how[i] : k == LIMITS_CGROUP1 ? v1_how[i] : rl_how[i];
        fprintf(out, "  %-8s %-10s %s\n", limit_name((cordon_limit)i), v, how);
    }
    if (k == LIMITS_RLIMIT && want->v[CORDON_LIMIT_PIDS] && (getuid() == 0 || geteuid() == 0))
        fprintf(out, "  (as root, --limit-pids fails: the kernel does not apply RLIMIT_NPROC to uid 0)\n");
}
