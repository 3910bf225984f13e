// SPDX-License-Identifier: Apache-2.0
/* The creation control's decision: may the command make or change this name here?
 * (doc/security.md, "The creation control" and "The git invariant"). */
#include "supervise/cc_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>

#include "confine/seccomp.h"
#include "supervise/report.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/trace.h"

/* The mount `mnt_id` in the thread's mount namespace (/proc/TID/mountinfo): 1 with
 * *sdev its superblock's device, 0 when the namespace has no such mount, -1 when the
 * table cannot be read. */
static int thread_mount(cc_state *cc, pid_t tid, uint64_t mnt_id, dev_t *sdev)
{
    char p[48];
    if (tid > 0)
        snprintf(p, sizeof p, "%d/mountinfo", (int)pw_proc_id(&cc->pw, tid));
    else
        snprintf(p, sizeof p, "self/mountinfo");
    _cleanup_fd_ int fd = openat(cc->pw.proc_fd, p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    mi_reader r = {.fd = fd, .buf = cc->status, .size = sizeof cc->status};
    char *line;
    int got;
    while ((got = cc_mi_next(&r, &line)) > 0) {
        uint64_t id;
        dev_t dev;
        if (cc_mi_ids(line, &id, &dev) && id == mnt_id) {
            *sdev = dev;
            return 1;
        }
    }
    return got < 0 ? -1 : 0; /* a line too long: cannot tell, which is_host takes as the host's */
}

static bool in_devs(const dev_t *list, size_t n, dev_t v)
{
    for (size_t i = 0; i < n; i++)
        if (list[i] == v)
            return true;
    return false;
}

/* Is the file `fd` (of stat *st) on a host file system, where the git rules apply?  By
 * its device first (the common case), then by its mount's superblock, in PID 1's mount
 * table (the sandbox's) or the thread's (a mount the command made): a btrfs subvolume
 * reports a device of its own, not its file system's.  Fails closed: a file whose
 * mount or superblock cannot be told is the host's. */
bool cc_is_host(cc_state *cc, int fd, const struct stat *st)
{
    if (in_devs(cc->devs, cc->n_devs, st->st_dev) || in_devs(cc->host_extra, cc->n_host_extra, st->st_dev))
        return true;
    if (in_devs(cc->priv_devs, cc->n_priv_devs, st->st_dev))
        return false;
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
        return true;
    dev_t sdev = 0;
    if (thread_mount(cc, 0, sx.stx_mnt_id, &sdev) != 1 &&
        (cc->tid <= 0 || thread_mount(cc, cc->tid, sx.stx_mnt_id, &sdev) != 1))
        return true;
    if (!in_devs(cc->devs, cc->n_devs, sdev))
        return false; /* one of cordon's own, or one made for the command: a tmpfs, a proc */
    if (cc->n_host_extra < sizeof cc->host_extra / sizeof cc->host_extra[0])
        cc->host_extra[cc->n_host_extra++] = st->st_dev;
    return true;
}

static bool known_gitdir(const cc_state *cc, const struct stat *st)
{
    for (size_t i = 0; i < cc->n_gitdirs; i++)
        if (cc->gitdirs[i].dev == st->st_dev && cc->gitdirs[i].ino == st->st_ino)
            return true;
    return false;
}

bool cc_lifted(const cc_state *cc, const struct stat *st)
{
    for (size_t i = 0; i < cc->n_lifted; i++)
        if (cc->lifted[i].dev == st->st_dev && cc->lifted[i].ino == st->st_ino)
            return true;
    return false;
}

bool cc_exists_at(int dir, const char *name, struct stat *st)
{
    return fstatat(dir, name, st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The git rules (doc/security.md, "The git invariant").
 *
 * A directory is *git-like* when a host git could take it for a git directory or for
 * the common directory of one: it holds `objects` and `refs`, or `HEAD` and
 * `commondir` (git's own is_git_directory(): HEAD, and objects and refs passing
 * access(X_OK), here or in the directory commondir names; a common directory needs only
 * objects and refs).  Any type of file counts for each mark: git follows symlinks and
 * only asks access(), so a mark's type is no evidence either way.
 *
 * A directory is *guarded* when it is git-like now or was a git directory at start (the
 * plan's PLAN_GITDIR, known by device and inode, whatever it holds now).  Then:
 *  1. in a guarded directory, nothing the command does creates, writes, replaces or
 *     changes the mode or owner of config, config.worktree, commondir, gitdir, hooks,
 *     info, worktrees or modules, nor anything in its hooks;
 *  2. in a directory that was not a git directory at start, nothing creates the mark
 *     that would make it a git directory or a common directory when it was not one.
 * So a directory git-like at the end of the run was either a git directory at start
 * (and its files were guarded all along), or what it is now all through the run (it
 * could not have become so again once it stopped): in both cases guarded, whatever
 * order of steps the command took (tests/unit/test_creation.c checks it).  Every call that makes a name (open, creat, mkdir, mknod,
 * rename on both sides, link, symlink, bind) or changes a mode or an owner goes
 * through cc_decide(). */
static const char *const git_marks[] = {"HEAD", "objects", "refs", "commondir"};
#define N_MARKS 4

/* A git directory for git's discovery: HEAD, and objects and refs or commondir. */
static bool git_dir_of(const bool has[N_MARKS])
{
    return has[0] && (has[3] || (has[1] && has[2]));
}

/* What a common directory needs: objects and refs. */
static bool common_of(const bool has[N_MARKS])
{
    return has[1] && has[2];
}

static bool git_like_of(const bool has[N_MARKS])
{
    return git_dir_of(has) || common_of(has);
}

static bool is_git_like(int dir)
{
    bool has[N_MARKS];
    struct stat st;
    for (size_t i = 0; i < N_MARKS; i++)
        has[i] = cc_exists_at(dir, git_marks[i], &st);
    return git_like_of(has);
}

static bool is_mark(const char *name)
{
    for (size_t i = 0; i < N_MARKS; i++)
        if (strcmp(name, git_marks[i]) == 0)
            return true;
    return false;
}

/* Would creating `name` in `dir` make it a git directory, or a common directory, when
 * it was not (a common directory given a HEAD becomes a git directory, whose config a
 * host git would then read there)? */
static bool becomes_git_like(int dir, const char *name)
{
    if (!is_mark(name))
        return false;
    struct stat st;
    bool had[N_MARKS], will[N_MARKS];
    for (size_t i = 0; i < N_MARKS; i++) {
        had[i] = cc_exists_at(dir, git_marks[i], &st);
        will[i] = had[i] || strcmp(name, git_marks[i]) == 0;
    }
    return (git_dir_of(will) && !git_dir_of(had)) || (common_of(will) && !common_of(had));
}

bool cc_guarded(const cc_state *cc, int dir, const struct stat *st)
{
    return known_gitdir(cc, st) || is_git_like(dir);
}

static size_t not_hooks_slot(const struct stat *st)
{
    uint64_t h = ((uint64_t)st->st_ino ^ ((uint64_t)st->st_dev << 20)) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 40) & (CC_NOT_HOOKS - 1);
}

/* A name `hooks` is being made (or exchanged): what was known of hooks directories no
 * longer holds. */
static void not_hooks_forget(cc_state *cc)
{
    if (++cc->not_hooks_epoch == 0) { /* wrapped: never, in practice */
        memset(cc->not_hooks, 0, sizeof cc->not_hooks);
        cc->not_hooks_epoch = 1;
    }
}

static uint64_t mnt_of(int fd)
{
    struct statx sx;
    if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &sx) < 0 || !(sx.stx_mask & STATX_MNT_ID))
        return 0;
    return sx.stx_mnt_id;
}

/* Is `dir` (of stat *st) the hooks directory of a guarded directory?
 *
 * Asked for every name made on a host file system, and almost always no: that answer is
 * remembered by the directory's identity.  It holds for the rest of the run: for `dir`
 * to become the hooks of a guarded directory G, either G/hooks must be made to name it
 * (a name `hooks` made: cc_decide() forgets everything then, whatever it answers), or G
 * must become guarded, which a directory that is not guarded never does
 * (doc/security.md, "The git invariant").  What the host does meanwhile (a `git clone`
 * by the user) makes new directories, and the identity includes the file handle, which
 * holds the inode's generation: a new hooks directory that got the inode number of one
 * remembered (and deleted since) is not taken for it; a file system without file
 * handles is asked every time.  Only a `..` that is the directory's own parent counts:
 * not at the root of a mount, where `..` is the mount point's (a bind of a hooks
 * directory elsewhere would otherwise be remembered as not one); nor an answer that
 * failed. */
bool cc_is_hooks_dir(cc_state *cc, int dir, const struct stat *st)
{
    size_t slot = not_hooks_slot(st);
    _Alignas(struct file_handle) unsigned char buf[sizeof(struct file_handle) + CC_HANDLE_MAX];
    struct file_handle *fh = (struct file_handle *)buf;
    fh->handle_bytes = CC_HANDLE_MAX;
    int mnt_id;
    bool handle = name_to_handle_at(dir, "", fh, &mnt_id, AT_EMPTY_PATH) == 0 && fh->handle_bytes <= CC_HANDLE_MAX;
    if (handle && cc->not_hooks[slot].epoch == cc->not_hooks_epoch && cc->not_hooks[slot].ino == st->st_ino &&
        cc->not_hooks[slot].dev == st->st_dev && cc->not_hooks[slot].type == fh->handle_type &&
        cc->not_hooks[slot].len == fh->handle_bytes &&
        memcmp(cc->not_hooks[slot].handle, fh->f_handle, fh->handle_bytes) == 0)
        return false;
    _cleanup_fd_ int up = openat(dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (up < 0)
        return false;
    struct stat h, ust;
    bool named = fstatat(up, "hooks", &h, AT_SYMLINK_NOFOLLOW) == 0;
    if (!named && errno != ENOENT)
        return false;
    if (named && h.st_dev == st->st_dev && h.st_ino == st->st_ino)
        return fstat(up, &ust) == 0 && cc_guarded(cc, up, &ust);
    uint64_t m = handle ? mnt_of(dir) : 0;
    if (m != 0 && m == mnt_of(up)) {
        cc->not_hooks[slot].dev = st->st_dev;
        cc->not_hooks[slot].ino = st->st_ino;
        cc->not_hooks[slot].type = fh->handle_type;
        cc->not_hooks[slot].len = fh->handle_bytes;
        memcpy(cc->not_hooks[slot].handle, fh->f_handle, fh->handle_bytes);
        cc->not_hooks[slot].epoch = cc->not_hooks_epoch;
    }
    return false;
}

static const char *const git_sensitive[] = {"config", "config.worktree", "commondir", "gitdir", "hooks",
                                            "info",   "worktrees",       "modules"};

static bool is_git_sensitive(const char *name)
{
    for (size_t i = 0; i < sizeof git_sensitive / sizeof *git_sensitive; i++)
        if (strcmp(name, git_sensitive[i]) == 0)
            return true;
    return false;
}

/* Would a FIFO named `name` in `dir` hang a host git?  HEAD anywhere (git reads it in
 * every directory it considers), and any name in a guarded directory. */
const char *cc_fifo_hangs_git(cc_state *cc, int dir, const struct stat *dst, const char *name)
{
    if (!cc_is_host(cc, dir, dst))
        return NULL;
    if (strcmp(name, "HEAD") == 0 || cc_guarded(cc, dir, dst))
        return WHY_FIFO_HEAD;
    return NULL;
}

/* --isolation landlock: the rule of the plan on this file or directory, or NULL. */
/* --isolation landlock: the rule of the plan on this file or directory (list_only
 * false), or whether it is a directory split around a hidden path (true); NULL: none. */
static const char *ll_rule_of(const cc_state *cc, const struct stat *st, bool list_only, bool *write)
{
    for (size_t i = 0; i < cc->n_ll_rules; i++)
        if (cc->ll_rules[i].ino == st->st_ino && cc->ll_rules[i].dev == st->st_dev &&
            cc->ll_rules[i].list_only == list_only) {
            *write = cc->ll_rules[i].write;
            return cc->ll_rules[i].why;
        }
    return NULL;
}

/* --isolation landlock: may the command change `name` in `dir`?  The supervisor's own
 * Landlock domain lets it write in every directory llonly.c split (where the command's
 * may only list and read), so the plan's rules are applied here: the name's own rule,
 * else the nearest rule on the way up from `dir` (by device and inode, through "..",
 * as Landlock itself walks), as the longest matching path of the plan decides.  No rule
 * up to the root: nothing of the plan grants it, and the supervisor's domain, which
 * outside the split directories is the command's, decides.  A directory split around a
 * hidden path takes no new name and loses none (`names`: the call makes or removes one
 * in `dir`); an existing entry there is judged by the rules above. */
const char *cc_ll_decide(cc_state *cc, int dir, const struct stat *dst, const char *name, bool names)
{
    bool w = false;
    const char *why;
    struct stat st;
    if (name[0] && cc_exists_at(dir, name, &st) && (why = ll_rule_of(cc, &st, false, &w)))
        return w ? NULL : why;
    if (names && (why = ll_rule_of(cc, dst, true, &w)))
        return why;
    _cleanup_fd_ int cur = -1;
    struct stat cst = *dst;
    for (int depth = 0; depth < PW_PATH_MAX; depth++) {
        if ((why = ll_rule_of(cc, &cst, false, &w)))
            return w ? NULL : why;
        int up = openat(cur >= 0 ? cur : dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct stat ust;
        if (up < 0 || fstat(up, &ust) < 0) {
            if (up >= 0)
                close(up);
            return WHY_LL_UNKNOWN;
        }
        if (ust.st_dev == cst.st_dev && ust.st_ino == cst.st_ino) {
            close(up);
            return NULL; /* the root */
        }
        if (cur >= 0)
            close(cur);
        cur = up;
        cst = ust;
    }
    return WHY_LL_UNKNOWN;
}

/* --isolation landlock: may `name` in `dir` be renamed, replaced or removed?  Not when it
 * has a rule of its own (the workspace's .git, its hooks and config, an --allow-ro path):
 * a mount point with namespaces, which cannot be moved away from its rule (EBUSY). */
bool cc_ll_pinned(const cc_state *cc, int dir, const char *name)
{
    struct stat st;
    bool w;
    return cc->ll_mode && cc_exists_at(dir, name, &st) && ll_rule_of(cc, &st, false, &w);
}

/* The verdict from the rules held in memory and the answers of `look`, asked in this
 * order and only as far as the verdict depends on them: no system call of its own. */
const char *cc_judge(const cc_state *cc, const struct stat *dst, const char *name, cc_act act, const cc_look *look)
{
    if (cc->ll_mode) {
        const char *why = look->ll_rule(look->ctx, act == CC_CREATE);
        if (why)
            return why;
    }
    if (act == CC_CREATE)
        for (size_t i = 0; i < cc->n_rules; i++)
            if (cc->rules[i].ino == dst->st_ino && cc->rules[i].dev == dst->st_dev &&
                strcmp(cc->rules[i].name, name) == 0)
                return cc->rules[i].why;
    if (!look->host(look->ctx))
        return NULL; /* a private tmpfs: it vanishes with the run */
    if (act != CC_SOURCE && strcmp(name, ".git") == 0)
        return act == CC_CREATE ? WHY_NEW_REPO : WHY_GIT_FILE; /* a new one, or the gitfile's or .git's mode */
    if (act == CC_CREATE && !known_gitdir(cc, dst) && look->becomes_git_like(look->ctx))
        return WHY_HEAD;
    if (is_git_sensitive(name) && look->guarded(look->ctx) && !look->name_lifted(look->ctx))
        return WHY_GIT_FILE;
    if (!cc_lifted(cc, dst) && look->hooks_dir(look->ctx))
        return WHY_GIT_FILE;
    return NULL;
}

/* The look-ups of cc_judge, on the directory descriptor the walk ended on. */
typedef struct fs_look {
    cc_state *cc;
    int dir;
    const struct stat *dst;
    const char *name;
} fs_look;

static const char *look_ll_rule(void *ctx, bool names)
{
    fs_look *l = ctx;
    return cc_ll_decide(l->cc, l->dir, l->dst, l->name, names);
}

static bool look_host(void *ctx)
{
    fs_look *l = ctx;
    return cc_is_host(l->cc, l->dir, l->dst);
}

static bool look_becomes_git_like(void *ctx)
{
    fs_look *l = ctx;
    return becomes_git_like(l->dir, l->name);
}

static bool look_guarded(void *ctx)
{
    fs_look *l = ctx;
    return cc_guarded(l->cc, l->dir, l->dst);
}

static bool look_name_lifted(void *ctx)
{
    fs_look *l = ctx;
    struct stat st;
    return cc_exists_at(l->dir, l->name, &st) && cc_lifted(l->cc, &st);
}

static bool look_hooks_dir(void *ctx)
{
    fs_look *l = ctx;
    return cc_is_hooks_dir(l->cc, l->dir, l->dst);
}

const char *cc_decide(cc_state *cc, int dir, const struct stat *dst, const char *name, cc_act act)
{
    if (act == CC_CREATE && strcmp(name, "hooks") == 0)
        not_hooks_forget(cc); /* the call may make `dir`/hooks name another directory */
    fs_look l = {.cc = cc, .dir = dir, .dst = dst, .name = name};
    const cc_look look = {.ctx = &l,
                          .ll_rule = look_ll_rule,
                          .host = look_host,
                          .becomes_git_like = look_becomes_git_like,
                          .guarded = look_guarded,
                          .name_lifted = look_name_lifted,
                          .hooks_dir = look_hooks_dir};
    return cc_judge(cc, dst, name, act, &look);
}
