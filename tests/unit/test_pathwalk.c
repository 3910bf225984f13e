// SPDX-License-Identifier: Apache-2.0
/* The resolver differential (issue 19, section 5; doc/security.md, "The resolver
 * differential"): the creation control's path walk, pw_resolve (src/supervise/pathwalk.c),
 * against the kernel's own resolution for the same process, over generated trees with
 * relative, absolute, dangling and looping symlinks, "..", trailing slashes, a mount
 * point (a tmpfs, with symlinks out of it) and the /proc/self/fd and /proc/self/cwd magic
 * links.
 *
 * The thread the walk works for is a child process (the target), which also computes
 * the kernel's answer itself: for a name that is not followed (mkdir, O_EXCL), the
 * directory the kernel resolves the path's directory part to (open(O_PATH|O_DIRECTORY) of
 * the text before the last component, which the kernel resolves left to right exactly so)
 * and the last component; for a followed one (open(O_CREAT) without O_EXCL), the object
 * the kernel opens, or where it creates the file (created for real, read back through
 * /proc/self/fd, removed at once). The test process is the supervisor: it resolves every
 * path with pw_resolve for the child and compares, by device and inode.
 *
 * Two kinds of target: one chrooted into the tree inside a user and mount namespace of
 * its own with /proc bound in (its root is not the supervisor's, so the walk does every
 * step itself: ".." clamped at its root, absolute symlinks from its root, "self" meaning
 * it), and one with the supervisor's root (the walk's fast path, the kernel's openat2,
 * for what has no magic link). The second creates nothing (its ".." reaches the host).
 *
 * PW_DIFF_CASES sets the number of cases (default 1,000,000); PW_DIFF_SEED the first
 * round's seed (each divergence prints its round's seed: PW_DIFF_SEED=S replays from that
 * round); PW_DIFF_SHOW how many divergences are printed (20). */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise/pathwalk.h"

#define BATCH    200
#define PATH_LEN 512

enum {
    REF_ERR = 0,  /* the kernel fails with err */
    REF_DIRNAME,  /* it would make `name` in the directory dev:ino */
    REF_OBJ,      /* it opens the object dev:ino */
    REF_NOCREATE, /* open(O_CREAT) of "missing/" or a dangling "link/": nothing is made */
    REF_MAYBE,    /* a dangling symlink whose target cannot be made (err): the walk may
                    resolve it (the creation then fails) or fail with err */
    REF_SKIP,     /* not compared: a creation the target must not do (outside a chroot) */
};

typedef struct {
    char path[PATH_LEN];
    int follow;
    /* the kernel's answer, from the target */
    int kind, err;
    dev_t dev;
    ino_t ino;
    char name[PW_NAME_MAX];
} diff_case;

typedef struct {
    int n;
    diff_case c[BATCH];
} diff_shm;

typedef struct {
    unsigned long long state;
} rng_t;

static unsigned rnd(rng_t *r, unsigned n)
{
    r->state = r->state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((r->state >> 33) % n);
}

/* ---------------------------------------------------------------------------------- */
/* the tree */

static const char *const NAMES[] = {"a", "b", "c", "d", "f", "l", "m", "n"};
#define NNAMES (sizeof NAMES / sizeof NAMES[0])

/* symlink targets; "@" is replaced by the tree's root as the target sees it ("" when
 * it is chrooted into the tree) */
static const char *const TARGETS[] = {
    "a",
    "b",
    "..",
    "../..",
    "../a",
    "a/b",
    ".",
    "nope",
    "f",
    "f/x",
    "l",
    "m",
    "a/../b",
    "./a//b/",
    "@/",
    "@/a",
    "@/a/b",
    "@/nope/x",
    "@/l",
    "@/a/l",
    "@/f",
    "/proc/self/fd/10",
    "/proc/self/fd/11",
    "/proc/self/cwd",
    "/proc/self/cwd/a",
    "/proc/self/fd/10/..",
    "/proc/thread-self/cwd/b",
    "l",
    "n/x",
    "../../../..",
    "a/b/c/d",
    "",
};
#define NTARGETS (sizeof TARGETS / sizeof TARGETS[0])

static void expand(char *out, size_t size, const char *t, const char *root)
{
    if (t[0] == '@')
        snprintf(out, size, "%s%s", root, t + 1);
    else
        snprintf(out, size, "%s", t);
}

/* A random tree under dir: directories to depth 3, files, symlinks (a quarter of the
 * names at each level). Records its directories (relative) in dirs. */
static void make_tree(rng_t *r, const char *dir, const char *rel, int depth, const char *root, char dirs[][64],
                      int *ndirs, bool chrooted)
{
    for (unsigned i = 0; i < NNAMES; i++) {
        char p[PATH_MAX], q[64];
        snprintf(p, sizeof p, "%s/%s", dir, NAMES[i]);
        snprintf(q, sizeof q, "%s/%s", rel, NAMES[i]);
        unsigned k = rnd(r, 8);
        if (k < 3 && depth < 3) {
            if (mkdir(p, 0755) == 0) {
                if (*ndirs < 64)
                    snprintf(dirs[(*ndirs)++], 64, "%s", q);
                make_tree(r, p, q, depth + 1, root, dirs, ndirs, chrooted);
            }
        } else if (k < 5) {
            char t[PATH_MAX];
            const char *tt = TARGETS[rnd(r, NTARGETS)];
            if (!chrooted && strncmp(tt, "/proc/self/root", 15) == 0)
                tt = "nope";
            expand(t, sizeof t, tt, root);
            if (t[0] != '\0')
                (void)!symlink(t, p);
        } else if (k < 6) {
            int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
            if (fd >= 0)
                close(fd);
        }
    }
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
    (void)st, (void)flag, (void)f;
    (void)remove(p);
    return 0;
}

static void rm_tree(const char *dir)
{
    (void)nftw(dir, rm_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static void random_path(rng_t *r, char *out, size_t size, const char *root)
{
    static const char *const PREFIX[] = {"",
                                         "",
                                         "",
                                         "@/",
                                         "@/",
                                         "/proc/self/fd/10/",
                                         "/proc/self/cwd/",
                                         "/proc/thread-self/cwd/",
                                         "/proc/self/fd/",
                                         "/proc/self/",
                                         "./",
                                         "@//"};
    static const char *const COMP[] = {"a", "b", "c", "d", "f", "l", "m", "n", "nope", ".", "..", "x", "10", "11"};
    char buf[PATH_LEN];
    const char *pre = PREFIX[rnd(r, sizeof PREFIX / sizeof PREFIX[0])];
    size_t len = 0;
    if (pre[0] == '@')
        len = (size_t)snprintf(buf, sizeof buf, "%s%s", root, pre + 1);
    else
        len = (size_t)snprintf(buf, sizeof buf, "%s", pre);
    unsigned n = 1 + rnd(r, 5);
    for (unsigned i = 0; i < n && len < sizeof buf - 16; i++) {
        const char *c = COMP[rnd(r, sizeof COMP / sizeof COMP[0])];
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", c, i + 1 < n ? (rnd(r, 8) ? "/" : "//") : "");
    }
    if (rnd(r, 8) == 0 && len < sizeof buf - 2)
        buf[len++] = '/', buf[len] = '\0';
    snprintf(out, size, "%s", buf);
}

/* ---------------------------------------------------------------------------------- */
/* the target: the kernel's answers */

static void ident(int fd, diff_case *c)
{
    struct stat st;
    if (fstat(fd, &st) < 0) {
        c->kind = REF_ERR, c->err = errno;
        return;
    }
    c->dev = st.st_dev, c->ino = st.st_ino;
}

/* the directory part and the last component of p, as the kernel splits it */
static bool split(const char *p, char *dir, size_t dsize, char *last, size_t lsize)
{
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/')
        n--;
    if (n == 1 && p[0] == '/')
        return false; /* "/" */
    size_t s = n;
    while (s > 0 && p[s - 1] != '/')
        s--;
    snprintf(last, lsize, "%.*s", (int)(n - s), p + s);
    if (s == 0)
        snprintf(dir, dsize, ".");
    else
        snprintf(dir, dsize, "%.*s", (int)s, p);
    return true;
}

static void kernel_answer(diff_case *c, bool may_create)
{
    char dir[PATH_LEN], last[PW_NAME_MAX];
    c->kind = REF_OBJ, c->err = 0, c->name[0] = '\0';
    bool dots =
        !split(c->path, dir, sizeof dir, last, sizeof last) || strcmp(last, ".") == 0 || strcmp(last, "..") == 0;
    if (dots) {
        int fd = open(c->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            c->kind = REF_ERR, c->err = errno;
            return;
        }
        ident(fd, c);
        close(fd);
        return;
    }
    if (!c->follow) {
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            c->kind = REF_ERR, c->err = errno;
            return;
        }
        c->kind = REF_DIRNAME;
        snprintf(c->name, sizeof c->name, "%s", last);
        ident(fd, c);
        close(fd);
        return;
    }
    int fd = open(c->path, O_PATH | O_CLOEXEC);
    if (fd >= 0) {
        ident(fd, c);
        close(fd);
        return;
    }
    if (errno != ENOENT) {
        c->kind = REF_ERR, c->err = errno;
        return;
    }
    size_t len = strlen(c->path);
    if (c->path[len - 1] == '/') {
        c->kind = REF_NOCREATE; /* open(O_CREAT) of "name/" creates nothing (EISDIR) */
        return;
    }
    struct stat st;
    if (lstat(c->path, &st) < 0) {
        /* nothing there, not even a dangling symlink: the name in the directory part */
        int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (d < 0) {
            c->kind = REF_ERR, c->err = errno;
            return;
        }
        c->kind = REF_DIRNAME;
        snprintf(c->name, sizeof c->name, "%s", last);
        ident(d, c);
        close(d);
        return;
    }
    /* a dangling symlink, followed: only a creation tells where it lands */
    if (!may_create) {
        c->kind = REF_SKIP;
        return;
    }
    /* where would open(O_CREAT) put it? make it, read its name back, remove it */
    fd = open(c->path, O_CREAT | O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
    if (fd < 0) {
        /* the walk's answer is where it would be made; the file system (procfs) or a
         * missing directory says no: only the walk's own error is comparable */
        c->kind = errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? REF_MAYBE : REF_SKIP;
        c->err = errno;
        return;
    }
    char self[64], made[PATH_LEN];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(self, made, sizeof made - 1);
    close(fd);
    if (n <= 0) {
        c->kind = REF_ERR, c->err = EIO;
        return;
    }
    made[n] = '\0';
    if (!split(made, dir, sizeof dir, last, sizeof last)) {
        c->kind = REF_ERR, c->err = EIO;
        return;
    }
    int d = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    (void)unlink(made);
    if (d < 0) {
        c->kind = REF_ERR, c->err = EIO;
        return;
    }
    c->kind = REF_DIRNAME;
    snprintf(c->name, sizeof c->name, "%s", last);
    ident(d, c);
    close(d);
}

/* The target's life: become what the round needs, then answer batches until told to
 * end (a closed pipe). */
static void target_main(diff_shm *shm, int in, int out, const char *tree, bool chrooted, const char *cwd,
                        const char *fd10, const char *fd11, const char *mnt)
{
    char b = 1;
    /* fds 10 and 11 are the round's: the pipes must not be there */
    in = fcntl(in, F_DUPFD_CLOEXEC, 100);
    out = fcntl(out, F_DUPFD_CLOEXEC, 100);
    if (in < 0 || out < 0)
        _exit(2);
    if (chrooted) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
            _exit(3);
        char m[64];
        int fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "deny", 4) != 4)
            _exit(4);
        close(fd);
        snprintf(m, sizeof m, "0 %u 1", (unsigned)uid);
        fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, m, strlen(m)) != (ssize_t)strlen(m))
            _exit(4);
        close(fd);
        snprintf(m, sizeof m, "0 %u 1", (unsigned)gid);
        fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, m, strlen(m)) != (ssize_t)strlen(m))
            _exit(4);
        close(fd);
        char procdir[PATH_MAX];
        snprintf(procdir, sizeof procdir, "%s/proc", tree);
        if (mount("/proc", procdir, NULL, MS_BIND | MS_REC, NULL) < 0)
            _exit(5);
        if (mnt[0]) {
            /* a mount point: ".." out of its root, symlinks inside it */
            char d[PATH_MAX], q[PATH_MAX];
            snprintf(d, sizeof d, "%s%s", tree, mnt);
            if (mount("tmpfs", d, "tmpfs", 0, "size=64k") < 0)
                _exit(5);
            snprintf(q, sizeof q, "%s/a", d);
            (void)mkdir(q, 0755);
            snprintf(q, sizeof q, "%s/a/b", d);
            (void)mkdir(q, 0755);
            snprintf(q, sizeof q, "%s/l", d);
            (void)!symlink("..", q);
            snprintf(q, sizeof q, "%s/m", d);
            (void)!symlink("/proc/self/cwd", q);
            snprintf(q, sizeof q, "%s/n", d);
            (void)!symlink("a/../../..", q);
            snprintf(q, sizeof q, "%s/a/c", d);
            (void)!symlink("../l", q);
        }
        if (chdir(tree) < 0 || chroot(".") < 0)
            _exit(6);
    }
    if (chdir(cwd) < 0)
        _exit(7);
    int f = open(fd10, O_PATH | O_CLOEXEC);
    if (f >= 0 && f != 10) {
        dup2(f, 10);
        close(f);
    }
    f = open(fd11, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (f >= 0 && f != 11) {
        dup2(f, 11);
        close(f);
    }
    if (write(out, &b, 1) != 1)
        _exit(8);
    for (;;) {
        if (read(in, &b, 1) != 1)
            _exit(0);
        for (int i = 0; i < shm->n; i++)
            kernel_answer(&shm->c[i], chrooted);
        if (write(out, &b, 1) != 1)
            _exit(8);
    }
}

/* ---------------------------------------------------------------------------------- */
/* the supervisor: pw_resolve, compared */

static bool same(int fd, const char *name, const diff_case *c)
{
    struct stat st;
    int r = name ? fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) : fstat(fd, &st);
    return r == 0 && st.st_dev == c->dev && st.st_ino == c->ino;
}

/* NULL when pw_resolve's answer is the kernel's, else what differs */
static const char *compare(int r, pw_result *res, const diff_case *c, char *why, size_t size)
{
    if (c->kind == REF_SKIP)
        return NULL;
    if (c->kind == REF_NOCREATE) {
        if (r < 0 || (res->dir_fd >= 0 && (res->slash || res->dot)))
            return NULL;
        snprintf(why, size, "kernel creates nothing (a trailing slash); pw_resolve: '%s' to create", res->name);
        return why;
    }
    if (c->kind == REF_MAYBE) {
        if (r == -c->err || (r == 0 && res->dir_fd >= 0 && !res->dot))
            return NULL;
        snprintf(why, size, "kernel: %s when creating through a dangling symlink; pw_resolve: %s", strerror(c->err),
                 r < 0 ? strerror(-r) : "the object itself");
        return why;
    }
    if (c->kind == REF_ERR) {
        /* a trailing slash on what is not a directory: the walk says "slash", the caller
         * fails (cc_perform.c) */
        if (r == 0 && res->slash && res->dir_fd >= 0 && (c->err == ENOTDIR || c->err == EISDIR))
            return NULL;
        if (r == -c->err)
            return NULL;
        snprintf(why, size, "kernel: %s; pw_resolve: %s", strerror(c->err), r < 0 ? strerror(-r) : "resolved");
        return why;
    }
    if (r < 0) {
        snprintf(why, size, "kernel resolved it; pw_resolve: %s", strerror(-r));
        return why;
    }
    if (c->kind == REF_DIRNAME) {
        if (res->dir_fd >= 0 && !res->dot && strcmp(res->name, c->name) == 0 && same(res->dir_fd, NULL, c))
            return NULL;
        snprintf(why, size, "kernel: the name '%s' in directory %lu; pw_resolve: '%s' in %s", c->name,
                 (unsigned long)c->ino, res->name, res->dir_fd >= 0 ? "another directory" : "no directory");
        return why;
    }
    /* REF_OBJ: the object itself */
    bool ok = res->obj_fd >= 0   ? same(res->obj_fd, NULL, c)
              : res->dot         ? same(res->dir_fd, NULL, c)
              : res->dir_fd >= 0 ? same(res->dir_fd, res->name, c)
                                 : false;
    if (ok)
        return NULL;
    snprintf(why, size, "kernel: object %lu; pw_resolve: %s '%s'", (unsigned long)c->ino,
             res->obj_fd >= 0 ? "another object" : "name", res->name);
    return why;
}

typedef struct {
    unsigned long long cases, divergences, skipped, kernel_errors, show;
} diff_stats;

static bool round_run(pw_ctx *ctx, diff_shm *shm, const char *base, unsigned long long seed, bool chrooted,
                      unsigned long long ncases, diff_stats *st)
{
    rng_t r = {seed};
    char tree[PATH_MAX];
    snprintf(tree, sizeof tree, "%s/r%llu", base, seed);
    if (mkdir(tree, 0755) < 0)
        fail_msg("mkdir %s: %s", tree, strerror(errno));
    const char *root = chrooted ? "" : tree;
    char dirs[64][64];
    int ndirs = 0;
    make_tree(&r, tree, "", 0, root, dirs, &ndirs, chrooted);
    char procdir[PATH_MAX];
    snprintf(procdir, sizeof procdir, "%s/proc", tree);
    (void)mkdir(procdir, 0755);
    char cwd[PATH_MAX], fd10[PATH_MAX], fd11[PATH_MAX];
    const char *cw = ndirs ? dirs[rnd(&r, (unsigned)ndirs)] : "";
    const char *d10 = ndirs ? dirs[rnd(&r, (unsigned)ndirs)] : "";
    snprintf(cwd, sizeof cwd, "%s%s", chrooted ? "/" : tree, cw);
    snprintf(fd10, sizeof fd10, "%s%s", chrooted ? "/" : tree, d10);
    snprintf(fd11, sizeof fd11, "%s/%s", chrooted ? "" : tree, NAMES[rnd(&r, NNAMES)]);
    /* the chrooted target mounts a tmpfs on a directory that is not its cwd's or fd 10's */
    const char *mnt = "";
    for (int k = 0; chrooted && ndirs && k < 4 && !mnt[0]; k++) {
        const char *m = dirs[rnd(&r, (unsigned)ndirs)];
        if (strncmp(cw, m, strlen(m)) != 0 && strncmp(d10, m, strlen(m)) != 0)
            mnt = m;
    }

    int to[2], from[2];
    if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
        fail_msg("pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0)
        fail_msg("fork: %s", strerror(errno));
    if (pid == 0) {
        close(to[1]), close(from[0]);
        target_main(shm, to[0], from[1], tree, chrooted, cwd, fd10, fd11, mnt);
        _exit(0);
    }
    close(to[0]), close(from[1]);
    char b = 0;
    bool ok = true;
    if (read(from[0], &b, 1) != 1) {
        int status = 0;
        waitpid(pid, &status, 0);
        close(to[1]), close(from[0]);
        rm_tree(tree);
        if (chrooted)
            return false; /* no user namespace here: the caller skips */
        fail_msg("the target did not start (status %d)", status);
    }
    static pw_result res[BATCH];
    static int rr[BATCH];
    unsigned long long done = 0;
    while (done < ncases && ok) {
        int n = (int)(ncases - done < BATCH ? ncases - done : BATCH);
        shm->n = n;
        pw_begin(ctx, pid);
        for (int i = 0; i < n; i++) {
            diff_case *c = &shm->c[i];
            random_path(&r, c->path, sizeof c->path, root);
            c->follow = (int)rnd(&r, 2);
            rr[i] = pw_resolve(ctx, AT_FDCWD, c->path, c->follow ? PW_FOLLOW_LAST : 0, &res[i]);
        }
        if (write(to[1], &b, 1) != 1 || read(from[0], &b, 1) != 1)
            fail_msg("the target died");
        for (int i = 0; i < n; i++) {
            diff_case *c = &shm->c[i];
            char why[600];
            const char *d = compare(rr[i], &res[i], c, why, sizeof why);
            if (c->kind == REF_SKIP || c->kind == REF_MAYBE || c->kind == REF_NOCREATE)
                st->skipped++;
            if (c->kind == REF_ERR)
                st->kernel_errors++;
            if (d) {
                st->divergences++;
                if (st->divergences <= st->show)
                    print_message(
                        "# DIVERGENCE (round seed %llu, %s target, cwd %s, fd 10 %s, tmpfs on %s): %s %s: %s\n", seed,
                        chrooted ? "chrooted" : "same-root", cwd, fd10, mnt[0] ? mnt : "nothing", c->path,
                        c->follow ? "followed" : "not followed", d);
            }
            if (rr[i] == 0)
                pw_result_close(&res[i]);
        }
        pw_end(ctx);
        done += (unsigned long long)n;
        st->cases += (unsigned long long)n;
    }
    close(to[1]), close(from[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    rm_tree(tree);
    return true;
}

static void run_diff(bool chrooted, unsigned long long cases)
{
    const char *e = getenv("PW_DIFF_CASES");
    unsigned long long total = cases ? cases : e ? strtoull(e, NULL, 10) : 1000000ULL;
    e = getenv("PW_DIFF_SEED");
    unsigned long long seed = e ? strtoull(e, NULL, 10) : 1;
    total /= 2; /* half for each kind of target */
    char base[] = "/tmp/cordon-pwdiff.XXXXXX";
    if (!mkdtemp(base))
        fail_msg("mkdtemp: %s", strerror(errno));
    chmod(base, 0755);
    int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    assert_true(proc >= 0);
    pw_ctx *ctx = calloc(1, sizeof *ctx);
    assert_non_null(ctx);
    assert_int_equal(pw_init(ctx, proc), 0);
    diff_shm *shm = mmap(NULL, sizeof *shm, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    assert_true(shm != MAP_FAILED);
    e = getenv("PW_DIFF_SHOW"); /* how many divergences to print (20) */
    diff_stats st = {.show = e ? strtoull(e, NULL, 10) : 20};
    const unsigned long long per_round = 25000;
    bool skipped = false;
    for (unsigned long long s = seed; st.cases < total; s++) {
        unsigned long long n = total - st.cases < per_round ? total - st.cases : per_round;
        if (!round_run(ctx, shm, base, s, chrooted, n, &st)) {
            skipped = true;
            break;
        }
    }
    print_message(
        "# %s target: %llu cases, %llu divergences (%llu where the kernel failed, %llu not compared by place: "
        "no creation possible, or none allowed outside a chroot)\n",
        chrooted ? "chrooted" : "same-root", st.cases, st.divergences, st.kernel_errors, st.skipped);
    munmap(shm, sizeof *shm);
    close(ctx->root_fd);
    free(ctx);
    close(proc);
    rm_tree(base);
    if (skipped)
        skip();
    assert_int_equal(st.divergences, 0);
}

static void test_chrooted(void **state)
{
    (void)state;
    run_diff(true, 0);
}

/* The first round with the supervisor's descriptors few, as in a fresh PID 1: its own
 * /proc/self/fd/N must not stand in for the thread's (a run of many rounds has fds up to
 * 70 open in the supervisor, cached pidfds, and hid that). */
static void test_same_root_fresh(void **state)
{
    (void)state;
    run_diff(false, 20000);
}

static void test_same_root(void **state)
{
    (void)state;
    run_diff(false, 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_root_fresh),
        cmocka_unit_test(test_chrooted),
        cmocka_unit_test(test_same_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
