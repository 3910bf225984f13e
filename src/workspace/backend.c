// SPDX-License-Identifier: Apache-2.0
/* The backends: each one's probe, creation, restoration and removal.
 *
 * A probe does what the workspace will do, on the file systems it will use, and checks
 * the result: a layer of its own over the source, a file in a lower directory deleted and
 * then the directory itself (a whiteout in the upper layer), the directory made again
 * (opaque: empty in the view), a new file.  A backend whose probe fails is not used. */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <stdint.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/ns.h"
#include "sandbox/overlay.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"
#include "workspace/ws.h"

#define MOUNT_TIMEOUT_MS 30000 /* every mount or unmount command */
#define FUSE_READY_MS    5000  /* a fuse mount's readiness */
#define PROBE_TIMEOUT_MS 5000

/* ---------------------------------------------------------------------------------- */
/* mounts */

/* Decode mountinfo's octal escapes (\040 for a space). */
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

/* The mount points at or below `dir` in this mount namespace (deepest last). */
static strv mounts_below(const char *dir)
{
    strv v = {0};
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return v;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0) {
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... */
        char *save = NULL, *tok = strtok_r(line, " ", &save);
        for (int i = 0; tok && i < 4; i++)
            tok = strtok_r(NULL, " ", &save);
        if (!tok)
            continue;
        unescape(tok);
        if (path_has_prefix(tok, dir))
            strv_push(&v, xstrdup(tok));
    }
    free(line);
    fclose(f);
    return v;
}

bool ws_fuse_mounted(const cordon_workspace *ws)
{
    char *merged = ws_path(ws, "merged");
    strv m = mounts_below(merged);
    bool yes = false;
    for (size_t i = 0; i < m.n; i++)
        yes |= strcmp(m.v[i], merged) == 0;
    strv_free(&m);
    free(merged);
    return yes;
}

static int unmount_one(const char *path, cordon_error *err)
{
    /* fusermount3 for a FUSE mount (as any user), bounded; lazily when it is busy */
    const char *argv[] = {"fusermount3", "-u", "-q", (char *)path, NULL};
    const char *lazy[] = {"fusermount3", "-u", "-q", "-z", (char *)path, NULL};
    ws_cmd c = {.argv = argv, .timeout_ms = MOUNT_TIMEOUT_MS};
    ws_out o;
    if (ws_exec(&c, &o, err) == 0 && WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0) {
        ws_out_free(&o);
        return 0;
    }
    ws_out_free(&o);
    err_clear(err);
    c.argv = lazy;
    if (ws_exec(&c, &o, err) == 0 && WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0) {
        ws_out_free(&o);
        return 0;
    }
    char what[512] = "";
    if (err->stage == CORDON_STAGE_NONE)
        ws_out_describe(&o, what, sizeof what);
    ws_out_free(&o);
    if (geteuid() == 0 && umount2(path, MNT_DETACH) == 0) {
        err_clear(err);
        return 0;
    }
    if (err->stage != CORDON_STAGE_NONE)
        return err_wrap(err, "cannot unmount %s", path);
    return err_set(err, CORDON_STAGE_WORKSPACE, 0, "cannot unmount %s: fusermount3 %s", path, what);
}

int ws_unmount_below(const char *dir, cordon_error *err)
{
    strv m = mounts_below(dir);
    int ret = 0;
    for (size_t i = m.n; i > 0 && ret == 0; i--)
        ret = unmount_one(m.v[i - 1], err);
    strv_free(&m);
    return ret;
}

/* ---------------------------------------------------------------------------------- */
/* probes */

typedef struct probe_paths {
    char *dir, *lower, *upper, *work, *mnt;
    char name[64]; /* the lower directory the probe deletes: absent from the source */
} probe_paths;

static void probe_free(probe_paths *p)
{
    cordon_error e;
    if (p->dir)
        ws_rmtree_path(p->dir, &e);
    free(p->dir);
    free(p->lower);
    free(p->upper);
    free(p->work);
    free(p->mnt);
    *p = (probe_paths){0};
}

static int probe_prepare(const cordon_workspace *ws, const char *leaf, probe_paths *p, cordon_error *err)
{
    *p = (probe_paths){.dir = ws_path(ws, leaf)};
    p->lower = path_join(p->dir, "lower");
    p->upper = path_join(p->dir, "upper");
    p->work = path_join(p->dir, "work");
    p->mnt = path_join(p->dir, "mnt");
    for (unsigned k = 0;; k++) {
        snprintf(p->name, sizeof p->name, ".cordon-probe.%ld.%u", (long)getpid(), k);
        char *in_src = path_join(ws->st.source, p->name);
        struct stat st;
        bool there = lstat(in_src, &st) == 0;
        free(in_src);
        if (!there)
            break;
    }
    char *d = path_join(p->lower, p->name), *f = path_join(d, "f");
    int ret = 0;
    if (mkdir(p->dir, 0700) < 0 || mkdir(p->lower, 0700) < 0 || mkdir(d, 0700) < 0 || mkdir(p->upper, 0700) < 0 ||
        mkdir(p->work, 0700) < 0 || mkdir(p->mnt, 0700) < 0)
        ret = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot prepare the probe in %s", p->dir);
    int fd = ret == 0 ? open(f, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600) : -1;
    if (ret == 0 && fd < 0)
        ret = err_set(err, CORDON_STAGE_WORKSPACE, errno, "cannot prepare the probe in %s", p->dir);
    if (fd >= 0)
        close(fd);
    free(d);
    free(f);
    return ret;
}

/* Through the mounted view `mnt` (upper layer `upper`): delete the lower file D/f and
 * the directory D, make D again (it must be empty: opaque), add a file.  D is a name the
 * source does not have (the source is the lowest layer).  NULL when all of it worked,
 * else what did not.  No allocation: it runs in a cloned child. */
static const char *probe_ops(int mnt, int upper, const char *d, bool kernel)
{
    char df[300], dg[300], wh[300];
    snprintf(df, sizeof df, "%s/f", d);
    snprintf(dg, sizeof dg, "%s/g", d);
    snprintf(wh, sizeof wh, ".wh.%s", d);
    if (unlinkat(mnt, df, 0) < 0)
        return "deleting a file of a lower directory";
    if (unlinkat(mnt, d, AT_REMOVEDIR) < 0)
        return "deleting a lower directory";
    struct stat st;
    if (fstatat(mnt, d, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return "a deleted lower directory still shows";
    bool whiteout = fstatat(upper, d, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == 0;
    if (!whiteout && (kernel || fstatat(upper, wh, &st, AT_SYMLINK_NOFOLLOW) < 0))
        return "no whiteout in the upper layer for a deleted lower directory";
    if (mkdirat(mnt, d, 0700) < 0)
        return "making a deleted directory again";
    if (fstatat(mnt, df, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return "a directory made again over a deleted one is not opaque (the old files show)";
    int fd = openat(mnt, dg, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return "creating a file";
    close(fd);
    if (fstatat(upper, dg, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return "a new file is not in the upper layer";
    return NULL;
}

typedef struct kprobe {
    int report;
    uid_t uid;
    gid_t gid;
    const char *source, *lower, *upper, *work, *mnt, *name;
} kprobe;

static __attribute__((noreturn)) void kprobe_child(const kprobe *k)
{
    char msg[600];
    cordon_error e = {0};
    const char *what = NULL;
    int en = 0;
    if (ns_write_id_maps(k->uid, k->gid, &e) < 0) {
        snprintf(msg, sizeof msg, "%.500s", e.message);
        goto out;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
        what = "making the mount namespace private";
        en = errno;
    } else {
        int top = open(k->lower, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int src = open(k->source, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int up = open(k->upper, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int wk = open(k->work, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (top < 0 || src < 0 || up < 0 || wk < 0) {
            what = "opening the layers";
            en = errno;
        } else {
            int lowers[2] = {top, src};
            char why[400];
            int m = overlay_mount(lowers, 2, up, wk, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, why, sizeof why);
            if (m < 0) {
                en = errno;
                snprintf(msg, sizeof msg, "mounting a kernel overlay in a user namespace (%s): %s", why, strerror(en));
                goto out;
            }
            if (move_mount(m, "", AT_FDCWD, k->mnt, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
                what = "attaching the probe's overlay";
                en = errno;
            } else {
                int mnt = open(k->mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                int upr = open(k->upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                const char *bad = mnt < 0 || upr < 0 ? "opening the view" : probe_ops(mnt, upr, k->name, true);
                if (bad) {
                    what = bad;
                    en = errno;
                } else {
                    int d = openat(upr, k->name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                    char y = 0;
                    if (d < 0 || fgetxattr(d, "user.overlay.opaque", &y, 1) != 1 || y != 'y') {
                        what = "no opaque mark (xattr user.overlay.opaque) on a directory made again; the upper "
                               "layer's file system must keep user xattrs";
                        en = errno;
                    }
                }
            }
        }
    }
    if (!what) {
        (void)write_all(k->report, "", 1);
        _exit(0);
    }
    snprintf(msg, sizeof msg, "%s%s%s", what, en ? ": " : "", en ? strerror(en) : "");
out:
    (void)write_all(k->report, msg, strlen(msg) + 1);
    _exit(1);
}

/* Wait for a pidfd's process at most ms; killed when it takes longer. */
static bool wait_pidfd(int pidfd, int ms)
{
    struct pollfd p = {.fd = pidfd, .events = POLLIN};
    int n;
    while ((n = poll(&p, 1, ms)) < 0 && errno == EINTR)
        ;
    bool done = n > 0;
    if (!done)
        syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
    siginfo_t si;
    while (waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0 && errno == EINTR)
        ;
    return done;
}

/* A probe that worked is remembered in the state root, per kernel and pair of file
 * systems (the upper layer's and the source's): the same kernel overlay on the same file
 * systems works the same way, and creation stays a few milliseconds. */
static char *probe_key(const cordon_workspace *ws)
{
    struct utsname u;
    struct stat r, s;
    if (uname(&u) < 0 || stat(ws->root, &r) < 0 || stat(ws->st.source, &s) < 0)
        return NULL;
    return xasprintf("kernel-overlay 1 %s %ju %ju %u\n", u.release, (uintmax_t)r.st_dev, (uintmax_t)s.st_dev,
                     (unsigned)geteuid());
}

static bool probe_cached(const cordon_workspace *ws, const char *key)
{
    char *path = path_join(ws->root, ".probes");
    size_t len;
    char *text = ws_read_file(path, 65536, &len);
    free(path);
    bool yes = text && key && strstr(text, key) != NULL;
    free(text);
    return yes;
}

static void probe_remember(const cordon_workspace *ws, const char *key)
{
    char *path = path_join(ws->root, ".probes");
    size_t len = 0;
    char *text = ws_read_file(path, 65536, &len);
    char *all = xasprintf("%s%s", text && len < 60000 ? text : "", key);
    cordon_error e;
    ws_write_atomic_flags(ws->root, ".probes", all, strlen(all), false, &e); /* a cache */
    free(all);
    free(text);
    free(path);
}

static int probe_kernel_now(cordon_workspace *ws, cordon_error *err);

static int probe_kernel(cordon_workspace *ws, cordon_error *err)
{
    char *key = probe_key(ws);
    if (key && probe_cached(ws, key)) {
        free(key);
        return 0;
    }
    int r = probe_kernel_now(ws, err);
    if (r == 0 && key)
        probe_remember(ws, key);
    free(key);
    return r;
}

static int probe_kernel_now(cordon_workspace *ws, cordon_error *err)
{
    probe_paths p;
    if (probe_prepare(ws, "probe", &p, err) < 0) {
        probe_free(&p);
        return -1;
    }
    int rep[2];
    if (pipe2(rep, O_CLOEXEC) < 0) {
        probe_free(&p);
        return err_set(err, CORDON_STAGE_WORKSPACE, errno, "pipe");
    }
    kprobe k = {.report = rep[1],
                .uid = geteuid(),
                .gid = getegid(),
                .source = ws->st.source,
                .lower = p.lower,
                .upper = p.upper,
                .work = p.work,
                .mnt = p.mnt,
                .name = p.name};
    /* a user and a mount namespace are all an overlay needs (the fewer, the faster the
     * child's exit tears them down) */
    int pidfd = -1;
    struct clone_args ca = {.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_PIDFD,
                            .pidfd = (uint64_t)(uintptr_t)&pidfd,
                            .exit_signal = SIGCHLD};
    pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof ca);
    if (pid < 0)
        err_set(err, CORDON_STAGE_WORKSPACE, errno, "clone3 (%s)", ns_userns_hint());
    if (pid == 0)
        kprobe_child(&k);
    close(rep[1]);
    int ret = 0;
    if (pid < 0) {
        ret = err_wrap(err, "no user namespace for a kernel overlay");
    } else {
        char msg[600] = "";
        bool done = wait_pidfd(pidfd, PROBE_TIMEOUT_MS);
        close(pidfd);
        ssize_t n = read_all(rep[0], msg, sizeof msg - 1);
        msg[n > 0 ? n : 0] = '\0';
        if (!done)
            ret = err_set(err, CORDON_STAGE_WORKSPACE, ETIMEDOUT, "the kernel overlay's probe hung");
        else if (n != 1)
            ret = err_set(err, CORDON_STAGE_WORKSPACE, 0, "%s", msg[0] ? msg : "the kernel overlay's probe failed");
    }
    close(rep[0]);
    probe_free(&p);
    return ret;
}

/* ---------------------------------------------------------------------------------- */
/* fuse-overlayfs */

static int fuse_usable(char *prog, size_t n, cordon_error *err)
{
    if (!ws_which("fuse-overlayfs", prog, n))
        return err_set(err, CORDON_STAGE_WORKSPACE, 0,
                       "fuse-overlayfs is not installed (sudo apt-get install fuse-overlayfs)");
    char fm[4096];
    if (!ws_which("fusermount3", fm, sizeof fm))
        return err_set(err, CORDON_STAGE_WORKSPACE, 0, "fusermount3 is not installed (sudo apt-get install fuse3)");
    int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        struct stat st;
        if (stat("/dev/fuse", &st) == 0)
            return err_set(err, CORDON_STAGE_WORKSPACE, e, "/dev/fuse (mode %04o, owner %u) cannot be opened by uid %u",
                           (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid, (unsigned)geteuid());
        return err_set(err, CORDON_STAGE_WORKSPACE, e, "no /dev/fuse (sudo modprobe fuse)");
    }
    close(fd);
    return 0;
}

static bool bad_for_fuse_options(const char *p)
{
    return strpbrk(p, ",:\\") != NULL;
}

static int fuse_mount_at(const char *lower, const char *upper, const char *work, const char *mnt, cordon_error *err)
{
    char prog[4096];
    if (fuse_usable(prog, sizeof prog, err) < 0)
        return -1;
    if (strchr(lower, ',') || bad_for_fuse_options(upper) || bad_for_fuse_options(work))
        return err_set(err, CORDON_STAGE_WORKSPACE, EINVAL,
                       "fuse-overlayfs cannot take a path with ',', ':' or '\\' in it (%s)", lower);
    char *opts = xasprintf("lowerdir=%s,upperdir=%s,workdir=%s", lower, upper, work);
    const char *argv[] = {prog, "-o", opts, (char *)mnt, NULL};
    ws_cmd c = {.argv = argv, .setsid = true, .timeout_ms = MOUNT_TIMEOUT_MS};
    ws_out o;
    int r = ws_exec(&c, &o, err);
    free(opts);
    if (r < 0)
        return err_wrap(err, "fuse-overlayfs");
    bool ok = WIFEXITED(o.status) && WEXITSTATUS(o.status) == 0;
    char what[1024];
    ws_out_describe(&o, what, sizeof what);
    ws_out_free(&o);
    if (!ok)
        return err_set(err, CORDON_STAGE_WORKSPACE, 0, "fuse-overlayfs %s", what);
    /* ready when the mount answers (at most FUSE_READY_MS) */
    struct stat parent, st;
    char *up = xstrdup(mnt);
    *strrchr(up, '/') = '\0';
    bool ready = false;
    long long deadline = ws_now_ns() + (long long)FUSE_READY_MS * 1000000LL;
    while (ws_now_ns() < deadline) {
        if (stat(up, &parent) == 0 && stat(mnt, &st) == 0 && st.st_dev != parent.st_dev) {
            ready = true;
            break;
        }
        struct timespec ts = {0, 2 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    free(up);
    if (!ready) {
        cordon_error e2;
        unmount_one(mnt, &e2);
        return err_set(err, CORDON_STAGE_WORKSPACE, ETIMEDOUT, "fuse-overlayfs did not answer at %s within %d ms", mnt,
                       FUSE_READY_MS);
    }
    return 0;
}

int ws_fuse_mount(cordon_workspace *ws, cordon_error *err)
{
    char *merged = ws_path(ws, "merged"), *upper = ws_path(ws, "upper"), *work = ws_path(ws, "work");
    int r = 0;
    if (!ws_fuse_mounted(ws))
        r = fuse_mount_at(ws->st.source, upper, work, merged, err);
    free(merged);
    free(upper);
    free(work);
    return r;
}

int ws_fuse_unmount(cordon_workspace *ws, cordon_error *err)
{
    char *merged = ws_path(ws, "merged");
    int r = 0;
    if (ws_fuse_mounted(ws))
        r = unmount_one(merged, err);
    free(merged);
    return r;
}

static int probe_fuse(cordon_workspace *ws, cordon_error *err)
{
    char prog[4096];
    if (fuse_usable(prog, sizeof prog, err) < 0)
        return -1;
    probe_paths p;
    if (probe_prepare(ws, "probe", &p, err) < 0) {
        probe_free(&p);
        return -1;
    }
    char *lowers = xasprintf("%s:%s", p.lower, ws->st.source);
    int ret = bad_for_fuse_options(ws->st.source) || bad_for_fuse_options(p.lower)
                  ? err_set(err, CORDON_STAGE_WORKSPACE, EINVAL,
                            "fuse-overlayfs cannot take a path with ',', ':' or '\\' in it (%s)", ws->st.source)
                  : fuse_mount_at(lowers, p.upper, p.work, p.mnt, err);
    free(lowers);
    if (ret == 0) {
        _cleanup_fd_ int mnt = open(p.mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_fd_ int upr = open(p.upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        const char *bad = mnt < 0 || upr < 0 ? "opening the view" : probe_ops(mnt, upr, p.name, false);
        int e = errno;
        cordon_error e2;
        if (unmount_one(p.mnt, &e2) < 0 && !bad)
            bad = "unmounting the probe";
        if (bad)
            ret = err_set(err, CORDON_STAGE_WORKSPACE, e, "fuse-overlayfs: %s", bad);
    }
    probe_free(&p);
    return ret;
}

/* ---------------------------------------------------------------------------------- */
/* worktree */

static int create_worktree(cordon_workspace *ws, cordon_error *err)
{
    if (!ws_git_is_top(ws->st.source))
        return err_opt(err, CORDON_STAGE_USAGE, 0, "backend",
                       "the worktree backend needs a git repository: %s is not the top of one", ws->st.source);
    ws_git g = ws_source_git(ws);
    char *head = NULL;
    const char *rp[] = {"rev-parse", "-q", "--verify", "HEAD^{commit}", NULL};
    if (ws_git_ok(&g, rp, NULL, 0, &head, err) < 0)
        return err_wrap(err, "the worktree backend needs a commit to start from");
    char *tree = ws_path(ws, "tree");
    char *branch = xasprintf("cordon/%s", ws->st.name);
    const char *args[] = {"worktree", "add", "-q", "-b", branch, tree, head, NULL};
    int r = ws_git_ok(&g, args, NULL, 0, NULL, err);
    if (r == 0) {
        ws->st.branch = branch;
        ws->st.base = head;
        branch = head = NULL;
    }
    free(tree);
    free(branch);
    free(head);
    return r;
}

static int remove_worktree(cordon_workspace *ws, cordon_error *err)
{
    ws_git g = ws_source_git(ws);
    char *tree = ws_path(ws, "tree");
    const char *rm[] = {"worktree", "remove", "--force", tree, NULL};
    cordon_error e2;
    if (access(tree, F_OK) == 0 && ws_git_ok(&g, rm, NULL, 0, NULL, &e2) < 0 && ws_rmtree_path(tree, err) < 0) {
        free(tree);
        return -1;
    }
    const char *prune[] = {"worktree", "prune", NULL};
    ws_git_ok(&g, prune, NULL, 0, NULL, &e2);
    /* the branch goes only when it is merged (git branch -d refuses otherwise) */
    if (ws->st.branch) {
        const char *del[] = {"branch", "-d", "-q", ws->st.branch, NULL};
        ws_git_ok(&g, del, NULL, 0, NULL, &e2);
    }
    free(tree);
    return 0;
}

/* ---------------------------------------------------------------------------------- */

char *ws_view_path(const cordon_workspace *ws)
{
    switch (ws->st.backend) {
    case CORDON_WS_FUSE: return ws_path(ws, "merged");
    case CORDON_WS_COPY: return ws_path(ws, "copy");
    case CORDON_WS_WORKTREE: return ws_path(ws, "tree");
    case CORDON_WS_NONE: return xstrdup(ws->st.source);
    default: return NULL;
    }
}

static int make_layers(cordon_workspace *ws, bool merged, cordon_error *err)
{
    static const char *const leaves[] = {"upper", "work", "merged"};
    for (size_t i = 0; i < (merged ? 3u : 2u); i++) {
        char *p = ws_path(ws, leaves[i]);
        int r = mkdir(p, 0700);
        int e = errno;
        free(p);
        if (r < 0 && e != EEXIST)
            return err_set(err, CORDON_STAGE_WORKSPACE, e, "cannot create the workspace's %s layer", leaves[i]);
    }
    return 0;
}

static int create_one(cordon_workspace *ws, cordon_ws_backend b, cordon_error *err)
{
    ws->st.backend = b;
    switch (b) {
    case CORDON_WS_KERNEL:
        if (probe_kernel(ws, err) < 0)
            return -1;
        return make_layers(ws, false, err);
    case CORDON_WS_FUSE:
        if (probe_fuse(ws, err) < 0 || make_layers(ws, true, err) < 0)
            return -1;
        return ws_fuse_mount(ws, err);
    case CORDON_WS_COPY: {
        char *copy = ws_path(ws, "copy"), *mf = ws_path(ws, "manifest");
        int r = ws_copy_tree(ws->st.source, copy, mf, err);
        if (r < 0) {
            cordon_error e2;
            ws_rmtree_path(copy, &e2);
            unlink(mf);
        }
        free(copy);
        free(mf);
        return r;
    }
    case CORDON_WS_WORKTREE: return create_worktree(ws, err);
    case CORDON_WS_NONE: return 0;
    case CORDON_WS_AUTO: break;
    }
    return err_set(err, CORDON_STAGE_USAGE, EINVAL, "no such backend");
}

int ws_backend_create(cordon_workspace *ws, cordon_ws_backend want, cordon_error *err)
{
    if (want != CORDON_WS_AUTO) {
        if (create_one(ws, want, err) < 0) {
            err_wrap(err, "the %s backend does not work here", cordon_ws_backend_name(want));
            snprintf(err->option, sizeof err->option, "backend");
            return -1;
        }
        return 0;
    }
    static const cordon_ws_backend order[] = {CORDON_WS_KERNEL, CORDON_WS_FUSE, CORDON_WS_COPY};
    char notes[2048] = "";
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        cordon_error e = {0};
        if (create_one(ws, order[i], &e) == 0) {
            if (notes[0]) {
                free(ws->notes);
                ws->notes = xstrdup(notes);
            }
            return 0;
        }
        size_t l = strlen(notes);
        snprintf(notes + l, sizeof notes - l, "%s%s: %s", l ? "; " : "", cordon_ws_backend_name(order[i]), e.message);
        if (order[i] == CORDON_WS_COPY) {
            *err = e;
            return err_set(err, CORDON_STAGE_WORKSPACE, e.errnum, "no backend works for %s (%s)", ws->st.source, notes);
        }
    }
    return -1;
}

int ws_backend_restore(cordon_workspace *ws, bool remount, cordon_error *err)
{
    switch (ws->st.backend) {
    case CORDON_WS_KERNEL:
    case CORDON_WS_FUSE: {
        static const char *const leaves[] = {"upper", "work"};
        for (size_t i = 0; i < 2; i++) {
            char *p = ws_path(ws, leaves[i]);
            struct stat st;
            int r = stat(p, &st);
            free(p);
            if (r < 0 && leaves[i][0] == 'u')
                return err_set(err, CORDON_STAGE_WORKSPACE, errno,
                               "workspace %s: its upper layer is missing, so its changes are lost; remove it",
                               ws->st.name);
            if (r < 0 && make_layers(ws, false, err) < 0)
                return -1;
        }
        if (ws->st.backend == CORDON_WS_FUSE) {
            char *merged = ws_path(ws, "merged");
            struct stat st;
            /* a mount whose daemon died answers ENOTCONN: replace it; and an explicit
             * restore mounts again (fuse-overlayfs does not see what changed in the
             * source after it mounted, a new mount does) */
            if (ws_fuse_mounted(ws) && (remount || (stat(merged, &st) < 0 && errno == ENOTCONN)) &&
                unmount_one(merged, err) < 0) {
                free(merged);
                return -1;
            }
            mkdir(merged, 0700);
            free(merged);
            return ws_fuse_mount(ws, err);
        }
        return 0;
    }
    case CORDON_WS_COPY: {
        /* never copied again: that would overwrite the workspace's changes */
        char *copy = ws_path(ws, "copy"), *mf = ws_path(ws, "manifest");
        struct stat st;
        int r = 0;
        if (stat(copy, &st) < 0 || stat(mf, &st) < 0)
            r = err_set(err, CORDON_STAGE_WORKSPACE, errno,
                        "workspace %s: its copy (%s) or manifest is missing; cordon never copies again over a "
                        "workspace: remove it and create it again",
                        ws->st.name, copy);
        free(copy);
        free(mf);
        return r;
    }
    case CORDON_WS_WORKTREE: {
        char *tree = ws_path(ws, "tree");
        struct stat st;
        int r = stat(tree, &st) < 0 ? err_set(err, CORDON_STAGE_WORKSPACE, errno,
                                              "workspace %s: its worktree %s is missing", ws->st.name, tree)
                                    : 0;
        free(tree);
        return r;
    }
    default: return 0;
    }
}

int ws_backend_remove(cordon_workspace *ws, cordon_error *err)
{
    if (ws->st.backend == CORDON_WS_WORKTREE && remove_worktree(ws, err) < 0)
        return -1;
    return ws_unmount_below(ws->dir, err);
}
