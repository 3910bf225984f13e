#include "supervise/creation.h"

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

#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif
#ifndef O_TMPFILE
#define O_TMPFILE (020000000 | O_DIRECTORY)
#endif

#ifdef CORDON_TRACE_TIMING
static long long trace_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}
#endif

/* ------------------------------------------------------------------------------------ */
/* set-up, inside the new root */

static int add_rule(cc_state *cc, dev_t dev, ino_t ino, const char *name, const char *why)
{
    for (size_t i = 0; i < cc->n_rules; i++)
        if (cc->rules[i].dev == dev && cc->rules[i].ino == ino && strcmp(cc->rules[i].name, name) == 0)
            return 0;
    if (cc->n_rules >= CC_MAX_RULES || strlen(name) >= PW_NAME_MAX)
        return -ENOSPC;
    cc_rule *r = &cc->rules[cc->n_rules++];
    r->dev = dev;
    r->ino = ino;
    snprintf(r->name, sizeof r->name, "%s", name);
    r->why = why;
    return 0;
}

int cc_add_name(cc_state *cc, dev_t dev, ino_t ino, const char *name, const char *why)
{
    return add_rule(cc, dev, ino, name, why);
}

/* Add `dev` to a list of at most CC_MAX_DEVS devices, once. */
static int add_unique_dev(dev_t *list, size_t *n, dev_t dev)
{
    for (size_t i = 0; i < *n; i++)
        if (list[i] == dev)
            return 0;
    if (*n >= CC_MAX_DEVS)
        return -ENOSPC;
    list[(*n)++] = dev;
    return 0;
}

static int add_dev(cc_state *cc, dev_t dev)
{
    return add_unique_dev(cc->devs, &cc->n_devs, dev);
}

static int add_priv_dev(cc_state *cc, dev_t dev)
{
    return add_unique_dev(cc->priv_devs, &cc->n_priv_devs, dev);
}

/* The directory above `path` inside the new root, opened without following symlinks. */
static int open_parent(const char *path, char *name, cordon_error *err)
{
    const char *slash = strrchr(path, '/');
    if (!slash || !slash[1] || strlen(slash + 1) >= PW_NAME_MAX)
        return err_set(err, CORDON_STAGE_ROOT, EINVAL, "cannot protect %s: not a path with a name", path);
    char parent[PW_PATH_MAX];
    size_t pl = (size_t)(slash - path);
    if (pl >= sizeof parent)
        return err_set(err, CORDON_STAGE_ROOT, ENAMETOOLONG, "%s", path);
    memcpy(parent, path, pl);
    parent[pl] = '\0';
    strcpy(name, slash + 1);
    _cleanup_fd_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot open the new root");
    root_scratch none = {0};
    return mnt_open_dest(root, &none, pl ? parent : "/", DEST_EXISTING, err);
}

/* Lines of a /proc mount table, read a part at a time into a fixed buffer (PID 1 does
 * not allocate). */
typedef struct mi_reader {
    int fd;
    char *buf;
    size_t size, have, used;
    bool eof;
} mi_reader;

/* The next line, NUL-terminated in the buffer: 1, 0 at the end, or -1 with errno (E2BIG:
 * a line longer than the buffer). */
static int mi_next(mi_reader *r, char **line)
{
    memmove(r->buf, r->buf + r->used, r->have - r->used);
    r->have -= r->used;
    r->used = 0;
    for (;;) {
        char *nl = memchr(r->buf, '\n', r->have);
        if (nl || (r->eof && r->have > 0)) {
            if (!nl)
                nl = r->buf + r->have; /* the last line, without its newline */
            *nl = '\0';
            r->used = (size_t)(nl - r->buf) + (nl < r->buf + r->have ? 1 : 0);
            *line = r->buf;
            return 1;
        }
        if (r->eof)
            return 0;
        if (r->have >= r->size - 1) {
            errno = E2BIG;
            return -1;
        }
        ssize_t n = read(r->fd, r->buf + r->have, r->size - 1 - r->have);
        if (n < 0)
            return -1;
        r->eof = n == 0;
        r->have += (size_t)n;
    }
}

/* A mount table line's mount id and superblock device (ID PARENT MAJOR:MINOR ...). */
static bool mi_ids(const char *line, uint64_t *id, dev_t *dev)
{
    unsigned long long i = 0;
    unsigned maj = 0, min = 0;
    if (sscanf(line, "%llu %*u %u:%u", &i, &maj, &min) != 3)
        return false;
    *id = i;
    *dev = makedev(maj, min);
    return true;
}

/* Which file systems are the host's: every mount of the new root's table but cordon's
 * own tmpfs mounts and the kernel's pseudo file systems (those two are listed apart). */
static int read_host_devs(cc_state *cc, int proc_fd, const root_scratch *s, cordon_error *err)
{
    _cleanup_fd_ int fd = openat(proc_fd, "self/mountinfo", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot read the sandbox's mount table");
    mi_reader r = {.fd = fd, .buf = cc->status, .size = sizeof cc->status};
    char *line;
    int got;
    while ((got = mi_next(&r, &line)) > 0) {
        /* ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE ... */
        uint64_t id;
        dev_t dev;
        const char *dash = strstr(line, " - ");
        if (!dash || !mi_ids(line, &id, &dev))
            continue;
        char type[64] = "";
        sscanf(dash + 3, "%63s", type);
        bool ours = false;
        for (size_t i = 0; i < s->n_ours; i++)
            ours |= s->ours[i] == id;
        bool pseudo = strcmp(type, "proc") == 0 || strcmp(type, "devpts") == 0 || strcmp(type, "mqueue") == 0 ||
                      strcmp(type, "sysfs") == 0 || strncmp(type, "cgroup", 6) == 0;
        if ((ours || pseudo ? add_priv_dev(cc, dev) : add_dev(cc, dev)) < 0)
            return err_set(err, CORDON_STAGE_ROOT, ENOSPC, "too many file systems in the sandbox's view");
    }
    if (got < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno,
                       errno == E2BIG ? "a line of the mount table is too long"
                                      : "cannot read the sandbox's mount table");
    return 0;
}

static int open_procfs(const plan *p, const root_scratch *s, cordon_error *err)
{
    if (s->proc_fd >= 0)
        return fcntl(s->proc_fd, F_DUPFD_CLOEXEC, 3);
    int fd = p->proc ? open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    if (fd < 0)
        return err_set(err, CORDON_STAGE_ROOT, p->proc ? errno : ENOENT,
                       "cannot open a procfs for the creation control");
    return fd;
}

/* Hand the rules to an outer cordon's supervisor: the records only ever refuse more. */
static int hand_to_outer(cc_state *cc, cordon_error *err)
{
    size_t total = cc->n_rules + cc->n_devs, done = 0;
    while (done < total) {
        size_t n = 0;
        for (; n < sizeof cc->wire / sizeof cc->wire[0] && done + n < total; n++) {
            size_t k = done + n;
            cc_wire *w = &cc->wire[n];
            memset(w, 0, sizeof *w);
            if (k < cc->n_rules) {
                w->kind = CC_WIRE_NAME;
                w->dev = cc->rules[k].dev;
                w->ino = cc->rules[k].ino;
                snprintf(w->name, sizeof w->name, "%s", cc->rules[k].name);
            } else {
                w->kind = CC_WIRE_DEV;
                w->dev = cc->devs[k - cc->n_rules];
            }
        }
        if (prctl((int)CORDON_PRCTL, CC_PRCTL_ADD, (unsigned long)cc->wire, n * sizeof(cc_wire), 0) != 0)
            return err_set(err, CORDON_STAGE_CONFINE, errno, "the cordon this sandbox runs in refused its protections");
        done += n;
    }
    return 0;
}

/* --isolation landlock: the plan's rules (and the private HOME and TMPDIR) by device
 * and inode, for ll_decide.  A path that is gone or out of reach holds no rule. */
static int ll_add(cc_state *cc, const char *path, cordon_access a, bool list_only, const char *why, cordon_error *err)
{
    _cleanup_fd_ int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || S_ISLNK(st.st_mode))
        return 0;
    if (cc->n_ll_rules >= CC_MAX_RULES)
        return err_set(err, CORDON_STAGE_CONFINE, ENOSPC,
                       "--isolation landlock: too many rules for the creation control (at most %d)", CC_MAX_RULES);
    cc->ll_rules[cc->n_ll_rules].dev = st.st_dev;
    cc->ll_rules[cc->n_ll_rules].ino = st.st_ino;
    cc->ll_rules[cc->n_ll_rules].write = a == CORDON_ACCESS_WRITE;
    cc->ll_rules[cc->n_ll_rules].list_only = list_only;
    if (list_only)
        snprintf(cc->ll_rules[cc->n_ll_rules].why, sizeof cc->ll_rules[0].why, "%s",
                 "--isolation landlock: a hidden path is in this directory, so the command may only list it "
                 "and could not read a new entry (doc/security.md)");
    else
        snprintf(cc->ll_rules[cc->n_ll_rules].why, sizeof cc->ll_rules[0].why, "%s (%s)",
                 a == CORDON_ACCESS_NONE   ? "hidden"
                 : a == CORDON_ACCESS_READ ? "read-only"
                                           : "writable",
                 why);
    cc->n_ll_rules++;
    return 0;
}

static int ll_setup(cc_state *cc, const plan *p, cordon_error *err)
{
    cc->n_ll_rules = 0;
    cc->ll_mode = p->isolation == CORDON_ISOLATION_LANDLOCK;
    if (!cc->ll_mode)
        return 0;
    for (size_t i = 0; i < cc->n_ll_list_only; i++)
        if (ll_add(cc, cc->ll_list_only[i], CORDON_ACCESS_READ, true, "", err) < 0)
            return -1;
    for (size_t i = 0; i < p->n_rules; i++) {
        const plan_rule *r = &p->rules[i];
        if (r->exists && ll_add(cc, r->path, r->access, false, r->why ? r->why : "a rule of the view", err) < 0)
            return -1;
    }
    for (size_t i = 0; i < cc->n_ll_devices; i++)
        if (ll_add(cc, cc->ll_devices[i], CORDON_ACCESS_WRITE, false, "minimal /dev", err) < 0)
            return -1;
    if ((cc->ll_home && ll_add(cc, cc->ll_home, CORDON_ACCESS_WRITE, false, "private HOME", err) < 0) ||
        (cc->ll_tmpdir && ll_add(cc, cc->ll_tmpdir, CORDON_ACCESS_WRITE, false, "private TMPDIR", err) < 0))
        return -1;
    return 0;
}

int cc_setup(cc_state *cc, const plan *p, const root_scratch *s, cordon_error *err)
{
    cc->listener = -1;
    cc->n_rules = cc->n_devs = cc->n_gitdirs = cc->n_lifted = cc->n_refusals = 0;
    cc->n_priv_devs = cc->n_host_extra = cc->n_handed = cc->next_handed = 0;
    cc->tid = 0;
    cc->fuse_made = cc->in_worker = false;
    void *page = mmap(NULL, sizeof(cc_shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot map the creation control's shared page");
    cc->shared = page;
    cc->refused = 0;
    memset(cc->not_hooks, 0, sizeof cc->not_hooks);
    cc->not_hooks_epoch = 1;
    int proc = open_procfs(p, s, err);
    if (proc < 0)
        return -1;
    TRACE("cc-procfs");
    if (pw_init(&cc->pw, proc) < 0)
        return err_set(err, CORDON_STAGE_ROOT, errno, "cannot open the new root for the creation control");
    cc->pw.proc_foreign = s->proc_kept;
    bool have_last = false;
    size_t last_len = 0;
    struct stat last;
    for (size_t i = 0; i < p->n_cc_rules; i++) {
        const plan_cc_rule *op = &p->cc_rules[i];
        if (op->kind == PLAN_NOCREATE) {
            /* the rules are sorted: names of one directory come together (the top of a
             * writable path holds a dozen), and its walk is done once */
            const char *slash = strrchr(op->path, '/');
            if (!slash) /* never: the plan's paths are absolute */
                return err_set(err, CORDON_STAGE_ROOT, EINVAL, "%s: %s is not an absolute path", op->why, op->path);
            size_t pl = (size_t)(slash - op->path);
            struct stat st;
            if (!(have_last && pl == last_len && memcmp(op->path, cc->path2, pl) == 0)) {
                char name[PW_NAME_MAX];
                _cleanup_fd_ int d = open_parent(op->path, name, err);
                if (d < 0)
                    return err_wrap(err, "%s: holding %s", op->why, op->path);
                if (fstat(d, &last) < 0)
                    return err_set(err, CORDON_STAGE_ROOT, errno, "%s: %s", op->why, op->path);
                memcpy(cc->path2, op->path, pl);
                last_len = pl;
                have_last = true;
            }
            st = last;
            if (add_rule(cc, st.st_dev, st.st_ino, slash + 1, op->why) < 0)
                return err_set(err, CORDON_STAGE_ROOT, ENOSPC, "too many protected names (at most %d)", CC_MAX_RULES);
        } else if ((op->kind == PLAN_GITDIR && cc->n_gitdirs < CC_MAX_GITDIRS) ||
                   (op->kind == PLAN_LIFT && cc->n_lifted < CC_MAX_GITDIRS)) {
            _cleanup_fd_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
            root_scratch none = {0};
            cordon_error ignored = {0};
            _cleanup_fd_ int d = root < 0 ? -1 : mnt_open_dest(root, &none, op->path, DEST_EXISTING, &ignored);
            struct stat st;
            if (d >= 0 && fstat(d, &st) == 0 && op->kind == PLAN_GITDIR && S_ISDIR(st.st_mode)) {
                cc->gitdirs[cc->n_gitdirs].dev = st.st_dev;
                cc->gitdirs[cc->n_gitdirs].ino = st.st_ino;
                cc->n_gitdirs++;
            } else if (d >= 0 && op->kind == PLAN_LIFT && fstat(d, &st) == 0) {
                cc->lifted[cc->n_lifted].dev = st.st_dev;
                cc->lifted[cc->n_lifted].ino = st.st_ino;
                cc->n_lifted++;
            }
        }
    }
    TRACE("cc-rules");
    if (ll_setup(cc, p, err) < 0)
        return -1;
    if (read_host_devs(cc, proc, s, err) < 0)
        return -1;
    TRACE("cc-devs");
    for (int fd = 0; fd <= 2; fd++)
        cc_handed(cc, fd);
    sk_setup(&cc->sk, &p->net.sockets);
    /* Under another cordon the kernel gives the command no listener of its own: ask. */
    long hello = prctl((int)CORDON_PRCTL, CC_PRCTL_HELLO, 0, 0, 0);
    if (hello == (long)CC_PRCTL_HELLO_OK) {
        cc->nested = true;
        return hand_to_outer(cc, err);
    }
    cc->nested = false;
    return 0;
}

/* ------------------------------------------------------------------------------------ */
/* serving */

static void refuse_log(cc_state *cc, const char *what, const char *path, const char *why)
{
    if (cc->in_worker && cc->shared) {
        __atomic_fetch_add(&cc->shared->refused, 1, __ATOMIC_SEQ_CST);
        unsigned k = __atomic_fetch_add(&cc->shared->n, 1, __ATOMIC_SEQ_CST);
        if (k < CC_SHARED_REFUSALS) {
            cc_refusal *r = &cc->shared->r[k];
            snprintf(r->what, sizeof r->what, "%.*s", (int)sizeof r->what - 1, what);
            snprintf(r->path, sizeof r->path, "%.*s", (int)sizeof r->path - 1, path);
            r->why = why; /* a string of the program's, at the same address in PID 1 */
        }
        return;
    }
    cc->refused++;
    if (cc->n_refusals >= CC_MAX_REFUSALS)
        return;
    cc_refusal *r = &cc->refusals[cc->n_refusals++];
    snprintf(r->what, sizeof r->what, "%.*s", (int)sizeof r->what - 1, what);
    snprintf(r->path, sizeof r->path, "%.*s", (int)sizeof r->path - 1, path);
    r->why = why;
}

/* Take in the refusals that workers logged on the shared page. */
static void take_shared_refusals(cc_state *cc)
{
    if (!cc->shared || cc->in_worker)
        return;
    unsigned long refused = __atomic_exchange_n(&cc->shared->refused, 0, __ATOMIC_SEQ_CST);
    if (refused == 0)
        return;
    unsigned n = __atomic_load_n(&cc->shared->n, __ATOMIC_SEQ_CST);
    if (n > CC_SHARED_REFUSALS)
        n = CC_SHARED_REFUSALS;
    for (unsigned k = 0; k < n && cc->n_refusals < CC_MAX_REFUSALS; k++)
        cc->refusals[cc->n_refusals++] = cc->shared->r[k];
    __atomic_store_n(&cc->shared->n, 0, __ATOMIC_SEQ_CST);
    cc->refused += refused;
}

void cc_report(cc_state *cc, int report_fd)
{
    take_shared_refusals(cc);
#ifdef CORDON_TRACE_TIMING
    fprintf(
        stderr,
        "cordon-trace: creation-control %llu calls, %lld us in the handler, %lld of them handing back descriptors\n",
        (unsigned long long)cc->trace_calls, cc->trace_us, cc->trace_addfd_us);
#endif
    for (size_t i = 0; i < cc->n_refusals; i++) {
        char text[900];
        snprintf(text, sizeof text, "%s %s: %s", cc->refusals[i].what, cc->refusals[i].path, cc->refusals[i].why);
        report_send(report_fd, REPORT_REFUSAL, NULL, (int)(i + 1 == cc->n_refusals ? cc->refused : 0), text);
    }
}

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
    while ((got = mi_next(&r, &line)) > 0) {
        uint64_t id;
        dev_t dev;
        if (mi_ids(line, &id, &dev) && id == mnt_id) {
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
static bool is_host(cc_state *cc, int fd, const struct stat *st)
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

static bool lifted(const cc_state *cc, const struct stat *st)
{
    for (size_t i = 0; i < cc->n_lifted; i++)
        if (cc->lifted[i].dev == st->st_dev && cc->lifted[i].ino == st->st_ino)
            return true;
    return false;
}

static bool exists_at(int dir, const char *name, struct stat *st)
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
 * through decide(). */
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
        has[i] = exists_at(dir, git_marks[i], &st);
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
        had[i] = exists_at(dir, git_marks[i], &st);
        will[i] = had[i] || strcmp(name, git_marks[i]) == 0;
    }
    return (git_dir_of(will) && !git_dir_of(had)) || (common_of(will) && !common_of(had));
}

static bool guarded(const cc_state *cc, int dir, const struct stat *st)
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
 * (a name `hooks` made: decide() forgets everything then, whatever it answers), or G
 * must become guarded, which a directory that is not guarded never does
 * (doc/security.md, "The git invariant").  What the host does meanwhile (a `git clone`
 * by the user) makes new directories, and the identity includes the file handle, which
 * holds the inode's generation: a new hooks directory that got the inode number of one
 * remembered (and deleted since) is not taken for it; a file system without file
 * handles is asked every time.  Only a `..` that is the directory's own parent counts:
 * not at the root of a mount, where `..` is the mount point's (a bind of a hooks
 * directory elsewhere would otherwise be remembered as not one); nor an answer that
 * failed. */
static bool is_hooks_dir(cc_state *cc, int dir, const struct stat *st)
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
        return fstat(up, &ust) == 0 && guarded(cc, up, &ust);
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

#define WHY_NEW_REPO                                                                       \
    "a new git repository (.git) in a host directory: a host git would run its hooks and " \
    "configuration; create repositories in $TMPDIR (see doc/security.md)"
#define WHY_HEAD                                                                            \
    "with objects and refs, or HEAD and commondir, a directory is a git directory (or the " \
    "common directory of one) for a host git: a new one would run its configuration there"
#define WHY_GIT_FILE                                                                         \
    "git configuration and hooks are read and run by a host git: cordon keeps them as they " \
    "were"
#define WHY_WHITEOUT                                                                    \
    "a whiteout leaves a character device (0:0) in a host directory, for overlay file " \
    "systems; fuse-overlayfs works without"
#define WHY_FIFO_HEAD                                                                       \
    "a host git opens HEAD in every directory it looks at, and a FIFO there would hang it " \
    "(in that directory and every one below); a FIFO in a git directory would hang it too"
#define WHY_GIT_DIR                                                                   \
    "the mode or owner of a git directory decides who else may change its hooks and " \
    "configuration: cordon keeps it as it was"

/* Would a FIFO named `name` in `dir` hang a host git?  HEAD anywhere (git reads it in
 * every directory it considers), and any name in a guarded directory. */
static const char *fifo_hangs_git(cc_state *cc, int dir, const struct stat *dst, const char *name)
{
    if (!is_host(cc, dir, dst))
        return NULL;
    if (strcmp(name, "HEAD") == 0 || guarded(cc, dir, dst))
        return WHY_FIFO_HEAD;
    return NULL;
}

#define WHY_LL_UNKNOWN                                                               \
    "--isolation landlock: cannot tell which rule of the view holds this path (its " \
    "directory is out of reach)"

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
static const char *ll_decide(cc_state *cc, int dir, const struct stat *dst, const char *name, bool names)
{
    bool w = false;
    const char *why;
    struct stat st;
    if (name[0] && exists_at(dir, name, &st) && (why = ll_rule_of(cc, &st, false, &w)))
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
static bool ll_pinned(const cc_state *cc, int dir, const char *name)
{
    struct stat st;
    bool w;
    return cc->ll_mode && exists_at(dir, name, &st) && ll_rule_of(cc, &st, false, &w);
}

/* NULL when allowed, else why not. */
static const char *decide(cc_state *cc, int dir, const struct stat *dst, const char *name, cc_act act)
{
    if (act == CC_CREATE && strcmp(name, "hooks") == 0)
        not_hooks_forget(cc); /* the call may make `dir`/hooks name another directory */
    if (cc->ll_mode) {
        const char *why = ll_decide(cc, dir, dst, name, act == CC_CREATE);
        if (why)
            return why;
    }
    if (act == CC_CREATE)
        for (size_t i = 0; i < cc->n_rules; i++)
            if (cc->rules[i].ino == dst->st_ino && cc->rules[i].dev == dst->st_dev &&
                strcmp(cc->rules[i].name, name) == 0)
                return cc->rules[i].why;
    if (!is_host(cc, dir, dst))
        return NULL; /* a private tmpfs: it vanishes with the run */
    if (act != CC_SOURCE && strcmp(name, ".git") == 0)
        return act == CC_CREATE ? WHY_NEW_REPO : WHY_GIT_FILE; /* a new one, or the gitfile's or .git's mode */
    if (act == CC_CREATE && !known_gitdir(cc, dst) && becomes_git_like(dir, name))
        return WHY_HEAD;
    struct stat st;
    if (is_git_sensitive(name) && guarded(cc, dir, dst) && !(exists_at(dir, name, &st) && lifted(cc, &st)))
        return WHY_GIT_FILE;
    if (!lifted(cc, dst) && is_hooks_dir(cc, dir, dst))
        return WHY_GIT_FILE;
    return NULL;
}

const char *cc_decide(cc_state *cc, int dir, const struct stat *dir_st, const char *name, cc_act act)
{
    return decide(cc, dir, dir_st, name, act);
}

/* Memory of the thread: a NUL-terminated string of at most size - 1 bytes, read a
 * page at a time (a string may end right before an unmapped page). */
static int read_string(pid_t tid, uint64_t addr, char *out, size_t size)
{
    if (addr == 0)
        return -EFAULT;
    size_t got = 0;
    while (got < size - 1) {
        uint64_t a = addr + got;
        size_t chunk = 4096 - (size_t)(a & 4095);
        if (chunk > size - 1 - got)
            chunk = size - 1 - got;
        struct iovec local = {out + got, chunk}, remote = {(void *)(uintptr_t)a, chunk};
        ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
        if (n < 0 && (errno == EPERM || errno == EACCES)) {
            pw_ptrace_cap(true);
            n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
            int e = errno;
            pw_ptrace_cap(false);
            errno = e;
        }
        if (n <= 0)
            return n < 0 ? (errno == ESRCH ? -ESRCH : -EFAULT) : -EFAULT;
        char *nul = memchr(out + got, '\0', (size_t)n);
        if (nul)
            return 0;
        got += (size_t)n;
    }
    return -ENAMETOOLONG;
}

static int read_mem(pid_t tid, uint64_t addr, void *out, size_t len)
{
    struct iovec local = {out, len}, remote = {(void *)(uintptr_t)addr, len};
    ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (n < 0 && (errno == EPERM || errno == EACCES)) {
        pw_ptrace_cap(true);
        n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
        pw_ptrace_cap(false);
    }
    return n == (ssize_t)len ? 0 : -EFAULT;
}

typedef struct call {
    uint64_t id;
    pid_t tid;
    uint32_t arch;
    uint64_t args[6];
    const char *what;
    const char *path; /* for the refusal log */
} call;

static bool still_valid(cc_state *cc, uint64_t id)
{
    return ioctl(cc->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static void respond(cc_state *cc, uint64_t id, long long val, int error)
{
    struct seccomp_notif_resp *resp = (struct seccomp_notif_resp *)cc->resp;
    memset(resp, 0, sizeof *resp);
    resp->id = id;
    resp->val = error ? 0 : val;
    resp->error = error ? -error : 0;
    (void)ioctl(cc->listener, SECCOMP_IOCTL_NOTIF_SEND, resp); /* ENOENT: the thread is gone */
}

/* Hand the thread a new descriptor and answer its call (SECCOMP_ADDFD_FLAG_SEND).
 *
 * The thread installs the descriptor itself, so the ioctl waits for it to run, and the
 * kernel wakes it (and then the supervisor) without SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP's
 * hand-over: on an otherwise idle machine each wake-up lands on the other, halted CPU
 * (tens of microseconds in a virtual machine, most of an open's cost).  Both are held on
 * the CPU the supervisor runs on for the moment of the hand-back, and let go after. */
static void respond_fd(cc_state *cc, uint64_t id, pid_t tid, int fd, bool cloexec)
{
#ifdef CORDON_TRACE_TIMING
    long long t0 = trace_us();
#endif
    struct seccomp_notif_addfd add = {
        .id = id,
        .flags = SECCOMP_ADDFD_FLAG_SEND,
        .srcfd = (uint32_t)fd,
        .newfd = 0,
        .newfd_flags = cloexec ? O_CLOEXEC : 0,
    };
    cpu_set_t one, mine, theirs;
    int cpu = sched_getcpu();
    bool pinned = false;
    if (cpu >= 0 && cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof mine, &mine) == 0 &&
        sched_getaffinity(tid, sizeof theirs, &theirs) == 0 && CPU_ISSET(cpu, &theirs)) {
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(tid, sizeof one, &one) == 0) {
            pinned = true;
            (void)sched_setaffinity(0, sizeof one, &one);
        }
    }
    if (ioctl(cc->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 && errno != ENOENT)
        respond(cc, id, 0, errno == EMFILE ? EMFILE : EIO);
    if (pinned) {
        (void)sched_setaffinity(tid, sizeof theirs, &theirs); /* ESRCH: it has gone */
        (void)sched_setaffinity(0, sizeof mine, &mine);
    }
#ifdef CORDON_TRACE_TIMING
    cc->trace_addfd_us += trace_us() - t0;
#endif
}

static int refuse(cc_state *cc, const call *c, const char *why)
{
    refuse_log(cc, c->what, c->path, why);
    return EPERM;
}

/* Act with the thread's umask: the process's is PID 1's, which acts for one call at a
 * time. */
static int with_umask(cc_state *cc, pid_t tid)
{
    (void)tid;
    int u = pw_umask(&cc->pw);
    if (u < 0)
        return u;
    umask((mode_t)u);
    return 0;
}

#define ARG_FD(a) ((int)(int32_t)(uint32_t)(a))

static bool was_handed(const cc_state *cc, const struct stat *st)
{
    for (size_t i = 0; i < cc->n_handed; i++)
        if (cc->handed[i].dev == st->st_dev && cc->handed[i].ino == st->st_ino)
            return true;
    return false;
}

void cc_handed(cc_state *cc, int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || was_handed(cc, &st))
        return;
    cc->handed[cc->next_handed].dev = st.st_dev;
    cc->handed[cc->next_handed].ino = st.st_ino;
    cc->next_handed = (cc->next_handed + 1) % CC_MAX_HANDED;
    if (cc->n_handed < CC_MAX_HANDED)
        cc->n_handed++;
}

#define WHY_UNNAMED                                                                         \
    "cannot tell which file the descriptor names in the sandbox (it was opened in another " \
    "mount namespace, or moved): only files handed to the command from outside may be "     \
    "reopened for writing without a name"

/* A descriptor that the path reached through a magic link of /proc: decide on the
 * name it has in the thread's view.  Pipes, sockets, devices and deleted files have
 * none that matters; a host file whose name cannot be found again is refused unless it
 * was handed in from outside (the command's standard descriptors): a descriptor taken
 * in another mount namespace (a tmpfs over the repository, say) is not a way around the
 * rules. */
static const char *decide_object(cc_state *cc, int obj, cc_act act)
{
    struct stat st;
    if (fstat(obj, &st) < 0)
        return "cannot look at the file";
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return NULL;
    if (!is_host(cc, obj, &st))
        return NULL;
    if (S_ISREG(st.st_mode) && st.st_nlink == 0)
        return NULL; /* deleted: no name */
    if (cc->ll_mode && was_handed(cc, &st))
        return NULL; /* --isolation landlock: the view is the host's, so its name is found,
                        and a rule of the view (--base host) would refuse what the command
                        was given to write */
    char p[48];
    snprintf(p, sizeof p, "self/fd/%d", obj);
    ssize_t n = readlinkat(cc->pw.proc_fd, p, cc->path2, sizeof cc->path2 - 1);
    if (n > 0 && cc->path2[0] == '/') {
        cc->path2[n] = '\0';
        pw_result r;
        if (pw_resolve(&cc->pw, AT_FDCWD, cc->path2, 0, &r) == 0) {
            struct stat nst;
            bool found = false;
            const char *why = NULL;
            if (r.dir_fd >= 0 && !r.dot && exists_at(r.dir_fd, r.name, &nst) && nst.st_dev == st.st_dev &&
                nst.st_ino == st.st_ino) {
                found = true;
                why = decide(cc, r.dir_fd, &r.dir_st, r.name, act);
            } else if (r.dot && r.dir_fd >= 0 && r.dir_st.st_dev == st.st_dev && r.dir_st.st_ino == st.st_ino) {
                found = true;
            }
            pw_result_close(&r);
            if (found)
                return why;
        }
    }
    return was_handed(cc, &st) ? NULL : WHY_UNNAMED;
}

/* The controlling terminal of the thread, for an open of /dev/tty. */
static int open_ctty(cc_state *cc, pid_t tid, int flags)
{
    char p[48];
    snprintf(p, sizeof p, "%d/stat", (int)pw_proc_id(&cc->pw, tid));
    _cleanup_fd_ int fd = openat(cc->pw.proc_fd, p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, cc->status, sizeof cc->status - 1);
    if (n <= 0)
        return -EIO;
    cc->status[n] = '\0';
    const char *rp = strrchr(cc->status, ')');
    unsigned long tty = 0;
    if (!rp || sscanf(rp + 1, " %*c %*d %*d %*d %lu", &tty) != 1)
        return -EIO;
    if (tty == 0)
        return -ENXIO;
    unsigned maj = major((dev_t)tty), min = minor((dev_t)tty);
    if (maj < 136 || maj > 143)
        return -ENXIO;
    snprintf(p, sizeof p, "/dev/pts/%u", (maj - 136) * 256 + min);
    int t = open(p, (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    return t < 0 ? -errno : t;
}

static bool add_worker(cc_state *cc, pid_t pid, uint64_t id)
{
    if (cc->n_workers >= sizeof cc->workers / sizeof cc->workers[0])
        return false;
    cc->workers[cc->n_workers].pid = pid;
    cc->workers[cc->n_workers].id = id;
    cc->workers[cc->n_workers].listener = cc->listener;
    cc->n_workers++;
    return true;
}

void cc_reaped(cc_state *cc, pid_t pid, int status)
{
    take_shared_refusals(cc);
    for (size_t i = 0; i < cc->n_workers; i++) {
        if (cc->workers[i].pid != pid)
            continue;
        /* harmless when the worker answered: the id is no longer valid then */
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
            int listener = cc->listener;
            cc->listener = cc->workers[i].listener;
            respond(cc, cc->workers[i].id, 0, EINTR);
            cc->listener = listener;
        }
        cc->workers[i] = cc->workers[--cc->n_workers];
        return;
    }
}

/* Fork a worker for a call that may take long (it answers the notification itself, so
 * that PID 1 goes on serving): 0 in the worker, > 0 in PID 1, or -errno. */
static pid_t fork_worker(cc_state *cc, uint64_t id)
{
    if (cc->n_workers >= sizeof cc->workers / sizeof cc->workers[0])
        return -EAGAIN;
    pid_t w = fork();
    if (w < 0)
        return -errno;
    if (w > 0)
        add_worker(cc, w, id);
    return w;
}

/* Is the thread in a user namespace other than the supervisor's? */
static bool other_userns(cc_state *cc, pid_t tid)
{
    char p[48];
    struct stat theirs, mine;
    snprintf(p, sizeof p, "%d/ns/user", (int)pw_proc_id(&cc->pw, tid));
    pw_ptrace_cap(true);
    bool other = fstatat(cc->pw.proc_fd, p, &theirs, 0) < 0 || fstatat(cc->pw.proc_fd, "self/ns/user", &mine, 0) < 0 ||
                 theirs.st_ino != mine.st_ino || theirs.st_dev != mine.st_dev;
    pw_ptrace_cap(false);
    return other;
}

/* In a worker: become the thread as far as an open asks: its user namespace and its
 * effective capabilities there (the files of /proc judge the opener by them: a nested
 * user namespace's uid_map is written by its parent's processes only). */
static int become_thread_userns(cc_state *cc, pid_t tid)
{
    char p[48];
    snprintf(p, sizeof p, "%d/status", (int)pw_proc_id(&cc->pw, tid));
    _cleanup_fd_ int sfd = openat(cc->pw.proc_fd, p, O_RDONLY | O_CLOEXEC);
    ssize_t n = sfd < 0 ? -1 : read(sfd, cc->status, sizeof cc->status - 1);
    if (n <= 0)
        return -EIO;
    cc->status[n] = '\0';
    const char *ce = strstr(cc->status, "CapEff:");
    if (!ce)
        return -EIO;
    unsigned long long eff = strtoull(ce + 7, NULL, 16);
    snprintf(p, sizeof p, "%d/ns/user", (int)pw_proc_id(&cc->pw, tid));
    pw_ptrace_cap(true);
    int fd = openat(cc->pw.proc_fd, p, O_RDONLY | O_CLOEXEC);
    pw_ptrace_cap(false);
    if (fd < 0)
        return -errno;
    int r = setns(fd, CLONE_NEWUSER);
    int e = errno;
    close(fd);
    if (r < 0)
        return -e;
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    d[0].permitted = d[0].effective = (uint32_t)eff;
    d[1].permitted = d[1].effective = (uint32_t)(eff >> 32);
    if (syscall(SYS_capset, &h, d) < 0)
        return -errno;
    return 0;
}

/* An open in a worker, which answers the notification itself so that PID 1 goes on
 * serving: for a FIFO (the open waits for the other end), or as the thread's user
 * namespace (as_thread). */
static void open_in_worker(cc_state *cc, uint64_t id, pid_t tid, int dir, const char *name, int flags, bool cloexec,
                           bool as_thread)
{
    pid_t w = fork_worker(cc, id);
    if (w < 0) {
        respond(cc, id, 0, -w);
        return;
    }
    if (w > 0)
        return;
    int e = as_thread ? become_thread_userns(cc, tid) : 0;
    if (e < 0) {
        respond(cc, id, 0, -e);
        _exit(0);
    }
    int fd = openat(dir, name, flags | O_CLOEXEC);
    if (fd < 0)
        respond(cc, id, 0, errno);
    else
        respond_fd(cc, id, tid, fd, cloexec);
    _exit(0);
}

/* Clear the O_NONBLOCK the supervisor added to an open of its own. */
static int unblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

static int do_open(cc_state *cc, const call *c, int dirfd, const char *path, int flags, mode_t mode)
{
    bool cloexec = flags & O_CLOEXEC;
    bool creat = flags & O_CREAT;
    if ((flags & O_TMPFILE) == O_TMPFILE) {
        pw_result r;
        int e = pw_resolve(&cc->pw, dirfd, path, PW_WHOLE, &r);
        if (e < 0)
            return -e;
        int obj = r.obj_fd;
        struct stat st;
        if (fstat(obj, &st) < 0 || !S_ISDIR(st.st_mode)) {
            pw_result_close(&r);
            return ENOTDIR;
        }
        if (!still_valid(cc, c->id) || (e = with_umask(cc, c->tid)) < 0) {
            pw_result_close(&r);
            return e < 0 ? -e : ENOENT;
        }
        int fd = openat(obj, ".", (flags | O_CLOEXEC), mode);
        e = errno;
        pw_result_close(&r);
        if (fd < 0)
            return e;
        respond_fd(cc, c->id, c->tid, fd, cloexec);
        close(fd);
        return -1;
    }
    unsigned pwf = ((flags & O_NOFOLLOW) || (creat && (flags & O_EXCL))) ? 0 : PW_FOLLOW_LAST;
    for (int attempt = 0; attempt < 4; attempt++) {
        pw_result r;
        int e = pw_resolve(&cc->pw, dirfd, path, pwf, &r);
        if (e < 0)
            return -e;
        int fd = -1;
        if (r.obj_fd >= 0) {
            /* a magic link of /proc: reopen the file it names, as the kernel does */
            const char *why = decide_object(cc, r.obj_fd, CC_WRITE);
            if (why) {
                pw_result_close(&r);
                return refuse(cc, c, why);
            }
            struct stat st;
            if (fstat(r.obj_fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0)) {
                fd = open_ctty(cc, c->tid, flags);
                pw_result_close(&r);
                if (fd < 0)
                    return -fd;
            } else {
                char p[48];
                snprintf(p, sizeof p, "self/fd/%d", r.obj_fd);
                if (!still_valid(cc, c->id)) {
                    pw_result_close(&r);
                    return ENOENT;
                }
                fd = openat(cc->pw.proc_fd, p, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_NONBLOCK | O_CLOEXEC);
                e = errno;
                if (fd < 0 && e == EWOULDBLOCK && !(flags & O_NONBLOCK) && S_ISREG(st.st_mode) && !cc->in_worker) {
                    /* a lease to break: wait for it in a worker (the descriptor is the
                     * worker's too, under the same number) */
                    open_in_worker(cc, c->id, c->tid, cc->pw.proc_fd, p, flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW),
                                   cloexec, false);
                    pw_result_close(&r);
                    return -1;
                }
                pw_result_close(&r);
                if (fd < 0)
                    return e;
                if (!(flags & O_NONBLOCK))
                    (void)fcntl(fd, F_SETFL, flags & ~O_NONBLOCK & (O_APPEND | O_ASYNC | O_DIRECT | O_NOATIME));
            }
            respond_fd(cc, c->id, c->tid, fd, cloexec);
            close(fd);
            return -1;
        }
        if (r.dot || r.slash) {
            /* a directory (or what must be one), opened for writing or created */
            struct stat st;
            bool dir_exists = r.dot || exists_at(r.dir_fd, r.name, &st);
            pw_result_close(&r);
            return dir_exists || creat ? EISDIR : ENOENT;
        }
        struct stat st;
        bool exists = exists_at(r.dir_fd, r.name, &st);
        const char *why = decide(cc, r.dir_fd, &r.dir_st, r.name, exists ? CC_WRITE : CC_CREATE);
        if (why) {
            pw_result_close(&r);
            return refuse(cc, c, why);
        }
        if (!still_valid(cc, c->id)) {
            pw_result_close(&r);
            return ENOENT;
        }
        if (exists && S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0)) {
            fd = open_ctty(cc, c->tid, flags);
            pw_result_close(&r);
            if (fd < 0)
                return -fd;
            respond_fd(cc, c->id, c->tid, fd, cloexec);
            close(fd);
            return -1;
        }
        if (exists && S_ISFIFO(st.st_mode) && !(flags & O_NONBLOCK)) {
            open_in_worker(cc, c->id, c->tid, r.dir_fd, r.name, (flags & ~O_CREAT) | O_NOFOLLOW, cloexec, false);
            pw_result_close(&r);
            return -1;
        }
        if (exists && pw_is_procfs(&cc->pw, r.dir_fd, r.dir_st.st_dev) && other_userns(cc, c->tid)) {
            open_in_worker(cc, c->id, c->tid, r.dir_fd, r.name, (flags & ~O_CREAT) | O_NOFOLLOW, cloexec, true);
            pw_result_close(&r);
            return -1;
        }
        int f = flags | O_NOFOLLOW | O_CLOEXEC;
        if (exists && !(flags & O_EXCL))
            f &= ~O_CREAT; /* an existing file: if it goes meanwhile, decide again */
        if (!exists && (e = with_umask(cc, c->tid)) < 0) {
            pw_result_close(&r);
            return -e;
        }
        /* an existing file may hold a lease, which an open for writing breaks and then
         * waits for (lease-break-time): never in PID 1, which serves every other call */
        bool nb = exists && S_ISREG(st.st_mode) && !(flags & O_NONBLOCK) && !cc->in_worker;
        fd = openat(r.dir_fd, r.name, nb ? f | O_NONBLOCK : f, mode);
        e = errno;
        if (fd < 0 && nb && e == EWOULDBLOCK) {
            open_in_worker(cc, c->id, c->tid, r.dir_fd, r.name, f & ~O_CREAT, cloexec, false);
            pw_result_close(&r);
            return -1;
        }
        if (fd >= 0 && nb && unblock(fd) < 0) {
            e = errno;
            close(fd);
            pw_result_close(&r);
            return e;
        }
        pw_result_close(&r);
        if (fd < 0) {
            if ((e == ENOENT && exists && creat) || (e == ELOOP && pwf))
                continue; /* it changed under us: again */
            return e;
        }
        respond_fd(cc, c->id, c->tid, fd, cloexec);
        close(fd);
        return -1;
    }
    return EAGAIN;
}

/* Resolve a path whose last component is to be created. */
static int resolve_new(cc_state *cc, int dirfd, const char *path, pw_result *r)
{
    int e = pw_resolve(&cc->pw, dirfd, path, 0, r);
    if (e < 0)
        return -e;
    if (r->obj_fd >= 0 || r->dot) {
        pw_result_close(r);
        return EEXIST;
    }
    return 0;
}

static int do_mknod(cc_state *cc, const call *c, int dirfd, const char *path, mode_t mode, dev_t dev, bool dir)
{
    pw_result r;
    int e = resolve_new(cc, dirfd, path, &r);
    if (e)
        return e;
    if (r.slash && !dir) {
        pw_result_close(&r);
        return ENOENT;
    }
    struct stat st;
    if (exists_at(r.dir_fd, r.name, &st)) { /* the kernel's answer, and nothing to refuse */
        pw_result_close(&r);
        return EEXIST;
    }
    const char *why = decide(cc, r.dir_fd, &r.dir_st, r.name, CC_CREATE);
    if (!why && !dir && S_ISFIFO(mode))
        why = fifo_hangs_git(cc, r.dir_fd, &r.dir_st, r.name);
    if (why) {
        pw_result_close(&r);
        return refuse(cc, c, why);
    }
    if (!still_valid(cc, c->id) || (e = with_umask(cc, c->tid)) < 0) {
        pw_result_close(&r);
        return e < 0 ? -e : ENOENT;
    }
    int rc = dir ? mkdirat(r.dir_fd, r.name, mode) : mknodat(r.dir_fd, r.name, mode, dev);
    e = errno;
    pw_result_close(&r);
    return rc < 0 ? e : 0;
}

static int do_symlink(cc_state *cc, const call *c, const char *target, int dirfd, const char *path)
{
    pw_result r;
    int e = resolve_new(cc, dirfd, path, &r);
    if (e)
        return e;
    const char *why = r.slash ? NULL : decide(cc, r.dir_fd, &r.dir_st, r.name, CC_CREATE);
    if (why) {
        pw_result_close(&r);
        return refuse(cc, c, why);
    }
    if (!still_valid(cc, c->id)) {
        pw_result_close(&r);
        return ENOENT;
    }
    int rc = r.slash ? (errno = ENOENT, -1) : symlinkat(target, r.dir_fd, r.name);
    e = errno;
    pw_result_close(&r);
    return rc < 0 ? e : 0;
}

static int do_rename(cc_state *cc, const call *c, int odirfd, const char *opath, int ndirfd, const char *npath,
                     unsigned flags)
{
    pw_result o, n;
    int e = pw_resolve(&cc->pw, odirfd, opath, 0, &o);
    if (e < 0)
        return -e;
    if (o.obj_fd >= 0 || o.dot) {
        pw_result_close(&o);
        return EBUSY;
    }
    if ((e = pw_resolve(&cc->pw, ndirfd, npath, 0, &n)) < 0) {
        pw_result_close(&o);
        return -e;
    }
    if (n.obj_fd >= 0 || n.dot) {
        pw_result_close(&o);
        pw_result_close(&n);
        return EBUSY;
    }
    const char *why = decide(cc, n.dir_fd, &n.dir_st, n.name, CC_CREATE);
    if (!why && (flags & (RENAME_EXCHANGE | RENAME_WHITEOUT)))
        why = decide(cc, o.dir_fd, &o.dir_st, o.name, CC_CREATE);
    if (!why && cc->ll_mode) /* the old name goes: its directory must be writable too */
        why = ll_decide(cc, o.dir_fd, &o.dir_st, o.name, true);
    if (!why && (ll_pinned(cc, o.dir_fd, o.name) || ll_pinned(cc, n.dir_fd, n.name))) {
        pw_result_close(&o);
        pw_result_close(&n);
        return EBUSY; /* as the mount point says with namespaces (not a refusal: git tries) */
    }
    if (!why && (flags & RENAME_WHITEOUT) && is_host(cc, o.dir_fd, &o.dir_st))
        why = WHY_WHITEOUT;
    struct stat ost, nst;
    if (!why && exists_at(o.dir_fd, o.name, &ost) && S_ISFIFO(ost.st_mode))
        why = fifo_hangs_git(cc, n.dir_fd, &n.dir_st, n.name);
    if (!why && (flags & RENAME_EXCHANGE) && exists_at(n.dir_fd, n.name, &nst) && S_ISFIFO(nst.st_mode))
        why = fifo_hangs_git(cc, o.dir_fd, &o.dir_st, o.name);
    if (why) {
        pw_result_close(&o);
        pw_result_close(&n);
        return refuse(cc, c, why);
    }
    int rc = -1;
    if (still_valid(cc, c->id))
        rc =
            flags ? renameat2(o.dir_fd, o.name, n.dir_fd, n.name, flags) : renameat(o.dir_fd, o.name, n.dir_fd, n.name);
    else
        errno = ENOENT;
    e = errno;
    pw_result_close(&o);
    pw_result_close(&n);
    return rc < 0 ? e : 0;
}

/* --isolation landlock only (SC_CMD_LANDLOCK): unlink, unlinkat and rmdir, by the
 * rules of the view (ll_decide), then performed here on the directory resolved. */
static int do_unlink(cc_state *cc, const call *c, int dirfd, const char *path, int flags)
{
    if (flags & ~AT_REMOVEDIR)
        return EINVAL;
    if (!cc->ll_mode)
        return ENOSYS; /* never: the filter sends these only in that mode */
    pw_result r;
    int e = pw_resolve(&cc->pw, dirfd, path, 0, &r);
    if (e < 0)
        return -e;
    if (r.obj_fd >= 0 || r.dot) {
        bool obj = r.obj_fd >= 0;
        pw_result_close(&r);
        return obj ? EBUSY : (flags & AT_REMOVEDIR) ? EINVAL : EISDIR;
    }
    struct stat st;
    if (r.slash && !(flags & AT_REMOVEDIR) && exists_at(r.dir_fd, r.name, &st)) {
        pw_result_close(&r);
        return S_ISDIR(st.st_mode) ? EISDIR : ENOTDIR;
    }
    const char *why = ll_decide(cc, r.dir_fd, &r.dir_st, r.name, true);
    if (!why && ll_pinned(cc, r.dir_fd, r.name)) {
        pw_result_close(&r);
        return EBUSY; /* as the mount point says (git removes empty directories up to it) */
    }
    if (why) {
        pw_result_close(&r);
        return refuse(cc, c, why);
    }
    int rc = -1;
    if (still_valid(cc, c->id))
        rc = unlinkat(r.dir_fd, r.name, flags);
    else
        errno = ENOENT;
    e = errno;
    pw_result_close(&r);
    return rc < 0 ? e : 0;
}

static int do_link(cc_state *cc, const call *c, int odirfd, const char *opath, int ndirfd, const char *npath, int flags)
{
    pw_result o = {.dir_fd = -1, .obj_fd = -1}, n;
    int e;
    if ((flags & AT_EMPTY_PATH) && opath[0] == '\0') {
        int fd = pw_thread_fd(&cc->pw, odirfd);
        if (fd < 0)
            return -fd;
        o.obj_fd = fd;
    } else if ((e = pw_resolve(&cc->pw, odirfd, opath, (flags & AT_SYMLINK_FOLLOW) ? PW_FOLLOW_LAST : 0, &o)) < 0) {
        return -e;
    }
    if (o.dot) {
        pw_result_close(&o);
        return EPERM; /* a directory */
    }
    if ((e = resolve_new(cc, ndirfd, npath, &n)) != 0) {
        pw_result_close(&o);
        return e;
    }
    struct stat st;
    bool have = o.obj_fd >= 0 ? fstat(o.obj_fd, &st) == 0 : exists_at(o.dir_fd, o.name, &st);
    const char *why = NULL;
    if (have && S_ISREG(st.st_mode) && (st.st_mode & (S_ISUID | S_ISGID)))
        why = "a hard link to a set-user-ID or set-group-ID file would keep it runnable on the host";
    if (!why)
        why =
            o.obj_fd >= 0 ? decide_object(cc, o.obj_fd, CC_SOURCE) : decide(cc, o.dir_fd, &o.dir_st, o.name, CC_SOURCE);
    if (!why)
        why = decide(cc, n.dir_fd, &n.dir_st, n.name, CC_CREATE);
    if (!why && have && S_ISFIFO(st.st_mode))
        why = fifo_hangs_git(cc, n.dir_fd, &n.dir_st, n.name);
    if (why) {
        pw_result_close(&o);
        pw_result_close(&n);
        return refuse(cc, c, why);
    }
    int rc = -1;
    if (!still_valid(cc, c->id)) {
        errno = ENOENT;
    } else if (o.obj_fd >= 0) {
        char p[48];
        snprintf(p, sizeof p, "self/fd/%d", o.obj_fd);
        rc = linkat(cc->pw.proc_fd, p, n.dir_fd, n.name, AT_SYMLINK_FOLLOW);
    } else {
        rc = linkat(o.dir_fd, o.name, n.dir_fd, n.name, 0);
    }
    e = errno;
    pw_result_close(&o);
    pw_result_close(&n);
    return rc < 0 ? e : 0;
}

/* ------------------------------------------------------------------------------------ */
/* mode, owner and length: chmod, chown and truncate of an existing file */

typedef enum meta_kind { META_CHMOD, META_CHOWN, META_TRUNCATE } meta_kind;

typedef struct meta_req {
    meta_kind kind;
    mode_t mode;
    uid_t uid;
    gid_t gid;
    off_t len;
} meta_req;

/* The decision on a directory object: a guarded directory, or the hooks of one, keeps
 * its mode and owner (a group- or world-writable .git lets another user change hooks). */
static const char *decide_dir_meta(cc_state *cc, int obj, const struct stat *st)
{
    if (!S_ISDIR(st->st_mode) || !is_host(cc, obj, st) || lifted(cc, st))
        return NULL;
    if (guarded(cc, obj, st) || is_hooks_dir(cc, obj, st))
        return WHY_GIT_DIR;
    return NULL;
}

static int meta_perform(cc_state *cc, int obj, const struct stat *st, const meta_req *m)
{
    char p[48];
    snprintf(p, sizeof p, "self/fd/%d", obj);
    switch (m->kind) {
    case META_CHMOD:
        if (S_ISLNK(st->st_mode))
            return EOPNOTSUPP; /* as fchmodat2(AT_SYMLINK_NOFOLLOW) on a symlink */
        return fchmodat(cc->pw.proc_fd, p, m->mode, 0) < 0 ? errno : 0;
    case META_CHOWN: return fchownat(obj, "", m->uid, m->gid, AT_EMPTY_PATH) < 0 ? errno : 0;
    case META_TRUNCATE: {
        if (S_ISDIR(st->st_mode))
            return EISDIR;
        if (!S_ISREG(st->st_mode))
            return EINVAL;
        if (m->len < 0)
            return EINVAL;
        /* a lease on the file is broken by the open and waited for: in a worker */
        _cleanup_fd_ int fd =
            openat(cc->pw.proc_fd, p, O_WRONLY | O_NOCTTY | O_CLOEXEC | (cc->in_worker ? 0 : O_NONBLOCK));
        if (fd < 0)
            return errno == EWOULDBLOCK && !cc->in_worker ? -EWOULDBLOCK : errno;
        return ftruncate(fd, m->len) < 0 ? errno : 0;
    }
    }
    return EINVAL;
}

/* chmod, chown or truncate of `path` relative to `dirfd` (path NULL: of the thread's
 * descriptor dirfd itself), deciding on the name the file has in the thread's view and,
 * for a directory, on the directory itself; performed on a descriptor of the object. */
static int do_meta(cc_state *cc, const call *c, int dirfd, const char *path, bool follow, const meta_req *m)
{
    _cleanup_fd_ int obj = -1;
    const char *why = NULL;
    if (!path) {
        obj = pw_thread_fd(&cc->pw, dirfd);
        if (obj < 0)
            return -obj;
        why = decide_object(cc, obj, CC_WRITE);
    } else {
        pw_result r;
        int e = pw_resolve(&cc->pw, dirfd, path, follow ? PW_FOLLOW_LAST : 0, &r);
        if (e < 0)
            return -e;
        if (r.obj_fd >= 0 || r.dot) {
            obj = fcntl(r.obj_fd >= 0 ? r.obj_fd : r.dir_fd, F_DUPFD_CLOEXEC, 3);
            e = errno;
            pw_result_close(&r);
            if (obj < 0)
                return e;
            why = decide_object(cc, obj, CC_WRITE);
        } else {
            struct stat named, got;
            if (fstatat(r.dir_fd, r.name, &named, AT_SYMLINK_NOFOLLOW) < 0) {
                e = errno;
                pw_result_close(&r);
                return e;
            }
            if (r.slash && !S_ISDIR(named.st_mode)) {
                pw_result_close(&r);
                return ENOTDIR;
            }
            why = decide(cc, r.dir_fd, &r.dir_st, r.name, CC_WRITE);
            obj = openat(r.dir_fd, r.name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
            e = errno;
            pw_result_close(&r);
            if (obj < 0)
                return e;
            if (fstat(obj, &got) < 0 || got.st_dev != named.st_dev || got.st_ino != named.st_ino)
                return EAGAIN; /* it changed under us */
        }
    }
    struct stat st;
    if (fstat(obj, &st) < 0)
        return errno;
    if (!why && m->kind != META_TRUNCATE)
        why = decide_dir_meta(cc, obj, &st);
    if (why)
        return refuse(cc, c, why);
    if (!still_valid(cc, c->id))
        return ENOENT;
    int e = meta_perform(cc, obj, &st, m);
    if (e != -EWOULDBLOCK)
        return e;
    pid_t w = fork_worker(cc, c->id); /* a lease to wait for */
    if (w != 0)
        return w < 0 ? -w : -1;
    cc->in_worker = true;
    respond(cc, c->id, 0, meta_perform(cc, obj, &st, m));
    _exit(0);
}

/* An owner as the call passed it: the 16-bit calls of the 32-bit ABIs mean -1 by 0xffff. */
static uint32_t call_id(const call *c, uint64_t arg, bool narrow)
{
    bool compat = c->arch != AUDIT_ARCH_X86_64 && c->arch != AUDIT_ARCH_AARCH64;
    uint32_t v = (uint32_t)arg;
    if (narrow && compat) {
        v &= 0xffff;
        if (v == 0xffff)
            v = (uint32_t)-1;
    }
    return v;
}

/* ------------------------------------------------------------------------------------ */
/* new file systems in the command's own namespaces */

/* Not sysfs: its files are the kernel's global settings, owned by the host's root and
 * checked against that uid alone, so a caller that is root would have them writable
 * through a read-write sysfs of a nested network namespace wherever the kernel finds a
 * sysfs mount it deems fully visible and not locked read-only (a container whose /sys
 * is a sysfs of its own, as systemd-nspawn's with a private network).  Nothing nested
 * needs one: runc and Podman bind /sys where the mount is refused, cordon binds it. */
static bool fs_type_allowed(const char *t)
{
    static const char *const ok[] = {"tmpfs",  "ramfs",   "proc", "devpts",  "mqueue",
                                     "cgroup", "cgroup2", "fuse", "fuseblk", "binfmt_misc"};
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++)
        if (strcmp(t, ok[i]) == 0)
            return true;
    return strncmp(t, "fuse.", 5) == 0;
}

#define WHY_FS_TYPE                                                                  \
    "a file system of this type (a kernel overlay, say) would create files in host " \
    "directories on the command's behalf, past the creation control; fuse-overlayfs works"
#define WHY_SYSFS                                                                            \
    "a sysfs of its own would show the kernel's global settings, writable to a caller that " \
    "is the host's root; the view's /sys (--base host) is the one there is"

/* Does the thread hold CAP_SYS_ADMIN (in its own user namespace)? */
static bool thread_has_sys_admin(cc_state *cc, pid_t tid)
{
    char p[48];
    snprintf(p, sizeof p, "%d/status", (int)pw_proc_id(&cc->pw, tid));
    _cleanup_fd_ int fd = openat(cc->pw.proc_fd, p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, cc->status, sizeof cc->status - 1);
    if (n <= 0)
        return false;
    cc->status[n] = '\0';
    const char *c = strstr(cc->status, "CapEff:");
    return c && (strtoull(c + 7, NULL, 16) & (1ULL << 21 /* CAP_SYS_ADMIN */));
}

typedef struct ns_fds {
    int fd[8];
} ns_fds;

static const struct {
    const char *name;
    int type;
} ns_kinds[] = {
    {"user", CLONE_NEWUSER}, {"mnt", CLONE_NEWNS},        {"ipc", CLONE_NEWIPC}, {"net", CLONE_NEWNET},
    {"uts", CLONE_NEWUTS},   {"cgroup", CLONE_NEWCGROUP}, {"pid", CLONE_NEWPID},
};
#define N_NS (sizeof ns_kinds / sizeof ns_kinds[0])

/* In the worker: enter the thread's namespaces (the user namespace first, which the
 * supervisor's uid owns, giving the capabilities the others ask for), and its root and
 * working directory; the PID namespace only takes effect for children. */
static int enter_thread(cc_state *cc, pid_t tid)
{
    char p[64];
    int fds[N_NS];
    bool same[N_NS];
    /* every descriptor first: entering the user namespace changes the credentials */
    pw_ptrace_cap(true);
    for (size_t i = 0; i < N_NS; i++) {
        snprintf(p, sizeof p, "%d/ns/%s", (int)pw_proc_id(&cc->pw, tid), ns_kinds[i].name);
        fds[i] = openat(cc->pw.proc_fd, p, O_RDONLY | O_CLOEXEC);
        struct stat theirs, mine;
        snprintf(p, sizeof p, "self/ns/%s", ns_kinds[i].name);
        same[i] = fds[i] >= 0 && fstat(fds[i], &theirs) == 0 && fstatat(cc->pw.proc_fd, p, &mine, 0) == 0 &&
                  theirs.st_ino == mine.st_ino && theirs.st_dev == mine.st_dev;
    }
    pw_ptrace_cap(false);
    int r = 0;
    for (size_t i = 0; i < N_NS && r == 0; i++) {
        if (fds[i] < 0)
            r = -EPERM;
        else if (!same[i] && setns(fds[i], ns_kinds[i].type) < 0)
            r = -errno;
    }
    for (size_t i = 0; i < N_NS; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    return r;
}

static int enter_root_cwd(int root, int cwd)
{
    if (fchdir(root) < 0 || chroot(".") < 0 || fchdir(cwd) < 0)
        return -errno;
    return 0;
}

/* fsopen(2) and mount(2) of a new file system: in a worker that has entered the thread's
 * namespaces, root and working directory, with the type read once (an allowed one). */
static int do_new_fs(cc_state *cc, const call *c, bool is_fsopen)
{
    char *type = cc->path1, *target = cc->path2;
    int e = read_string(c->tid, is_fsopen ? c->args[0] : c->args[2], type, PW_PATH_MAX);
    if (e < 0)
        return -e;
    call logged = *c; /* the path logged is the type */
    logged.path = type;
    if (!fs_type_allowed(type))
        return refuse(cc, &logged, strcmp(type, "sysfs") == 0 ? WHY_SYSFS : WHY_FS_TYPE);
    if (!thread_has_sys_admin(cc, c->tid))
        return EPERM;
    if (strncmp(type, "fuse", 4) == 0)
        cc->fuse_made = true; /* before the worker that makes it: see cc_state */
    char *source = NULL, *data = NULL;
    if (!is_fsopen) {
        if ((e = read_string(c->tid, c->args[1], target, PW_PATH_MAX)) < 0)
            return -e;
        if (c->args[0] && read_string(c->tid, c->args[0], cc->pw.link, sizeof cc->pw.link) == 0)
            source = cc->pw.link;
        if (c->args[4] && read_string(c->tid, c->args[4], cc->status, sizeof cc->status) == 0)
            data = cc->status;
    }
    /* A proc of a nested namespace, for a caller that is the host's root: only its
     * processes (subset=pid), none of /proc/sys or /proc/sysrq-trigger, whose files are
     * checked against the host's root uid alone.  The kernel refuses a nested proc where
     * cordon's /proc is the only one (it keeps those files read-only over it, so none is
     * fully visible), but allows it read-write where the mount namespace still holds a
     * fully visible /proc out of sight (systemd-nspawn enters its container by moving
     * its root over / and chroot, leaving the host's mounts beneath). */
    bool host_root = geteuid() == 0; /* PID 1's ids are the caller's (sandbox/ns.c) */
    int root = -1, cwd = -1;
    char p[64];
    snprintf(p, sizeof p, "%d/root", (int)pw_proc_id(&cc->pw, c->tid));
    pw_ptrace_cap(true);
    root = openat(cc->pw.proc_fd, p, O_PATH | O_DIRECTORY | O_CLOEXEC);
    snprintf(p, sizeof p, "%d/cwd", (int)pw_proc_id(&cc->pw, c->tid));
    cwd = openat(cc->pw.proc_fd, p, O_PATH | O_DIRECTORY | O_CLOEXEC);
    pw_ptrace_cap(false);
    if (root < 0 || cwd < 0 || !still_valid(cc, c->id)) {
        e = root < 0 || cwd < 0 ? errno : ESRCH;
        if (root >= 0)
            close(root);
        if (cwd >= 0)
            close(cwd);
        return e;
    }
    pid_t w = fork_worker(cc, c->id);
    if (w != 0) {
        close(root);
        close(cwd);
        return w < 0 ? -w : -1; /* the worker answers */
    }
    /* the worker */
    if ((e = enter_thread(cc, c->tid)) < 0) {
        respond(cc, c->id, 0, -e);
        _exit(0);
    }
    pid_t w2 = fork(); /* in the thread's PID namespace (proc's instance depends on it) */
    if (w2 < 0) {
        respond(cc, c->id, 0, errno);
        _exit(0);
    }
    if (w2 > 0) {
        /* a mount is answered here, once w2 is gone: the thread must not see it in its
         * PID namespace's /proc (fsopen's descriptor can only be handed over by w2) */
        int st = 0;
        while (waitpid(w2, &st, 0) < 0 && errno == EINTR)
            ;
        if (!is_fsopen)
            respond(cc, c->id, 0, WIFEXITED(st) ? WEXITSTATUS(st) : EIO);
        _exit(0);
    }
    if ((e = enter_root_cwd(root, cwd)) < 0) {
        if (is_fsopen)
            respond(cc, c->id, 0, -e);
        _exit(is_fsopen ? 0 : -e);
    }
    bool pids_only = strcmp(type, "proc") == 0 && host_root;
    if (is_fsopen) {
        int fd = fsopen(type, (unsigned)c->args[1] | FSOPEN_CLOEXEC);
        if (fd >= 0 && pids_only && fsconfig(fd, FSCONFIG_SET_STRING, "subset", "pid", 0) < 0) {
            respond(cc, c->id, 0, EPERM); /* no subset=pid (Linux 5.8): no proc */
            _exit(0);
        }
        if (fd < 0)
            respond(cc, c->id, 0, errno);
        else
            respond_fd(cc, c->id, c->tid, fd, (unsigned)c->args[1] & FSOPEN_CLOEXEC);
        _exit(0);
    }
    if (pids_only) {
        /* the caller's own options, then subset=pid, which no later option or
         * reconfiguration undoes (the mount fails on a kernel without it) */
        char *opts = cc->path1; /* the type, read into it, is no longer needed */
        int n = snprintf(opts, PW_PATH_MAX, "%s%ssubset=pid", data ? data : "", data && *data ? "," : "");
        if (n < 0 || n >= PW_PATH_MAX)
            _exit(E2BIG);
        data = opts;
        type = (char *)"proc";
    }
    int r = mount(source, target, type, (unsigned long)c->args[3], data);
    _exit(r < 0 ? (errno > 0 && errno < 256 ? errno : EIO) : 0);
}

/* A nested cordon's request. */
static int do_prctl(cc_state *cc, const call *c, long long *val)
{
    unsigned long req = c->args[1];
    if (req == CC_PRCTL_HELLO) {
        *val = CC_PRCTL_HELLO_OK;
        return 0;
    }
    if (req != CC_PRCTL_ADD)
        return EINVAL;
    size_t len = c->args[3];
    if (len == 0 || len % sizeof(cc_wire) != 0 || len > sizeof cc->wire)
        return EINVAL;
    if (read_mem(c->tid, c->args[2], cc->wire, len) < 0)
        return EFAULT;
    for (size_t i = 0; i < len / sizeof(cc_wire); i++) {
        cc_wire *w = &cc->wire[i];
        w->name[PW_NAME_MAX - 1] = '\0';
        int rc = 0;
        if (w->kind == CC_WIRE_NAME && w->name[0] && !strchr(w->name, '/'))
            rc = add_rule(cc, (dev_t)w->dev, (ino_t)w->ino, w->name, "protected by a cordon inside this sandbox");
        else if (w->kind == CC_WIRE_DEV)
            rc = add_dev(cc, (dev_t)w->dev);
        else
            return EINVAL;
        if (rc < 0)
            return ENOSPC;
    }
    *val = 0;
    return 0;
}

/* What supervise/sockets.c needs of the creation control (it calls nothing here). */
static const char *sk_decide_create(void *ctx, int dir, const struct stat *dst, const char *name)
{
    return decide(ctx, dir, dst, name, CC_CREATE);
}

static void sk_refused(void *ctx, const char *what, const char *path, const char *why)
{
    refuse_log(ctx, what, path, why);
}

static pid_t sk_fork_worker(void *ctx, uint64_t id)
{
    return fork_worker(ctx, id);
}

static int serve_socket(cc_state *cc, const call *c, sc_op op, uint32_t arch, long long *val)
{
    sk_host h = {.listener = cc->listener,
                 .pw = &cc->pw,
                 .ctx = cc,
                 .decide_create = sk_decide_create,
                 .refused = sk_refused,
                 .fork_worker = sk_fork_worker};
    sk_call sc = {.id = c->id, .tid = c->tid, .compat = !(arch & __AUDIT_ARCH_64BIT)};
    memcpy(sc.args, c->args, sizeof sc.args);
    int which = op == SC_OP_CONNECT   ? SK_CONNECT
                : op == SC_OP_BIND    ? SK_BIND
                : op == SC_OP_SENDTO  ? SK_SENDTO
                : op == SC_OP_SENDMSG ? SK_SENDMSG
                                      : SK_SENDMMSG;
    return sk_serve(&cc->sk, &h, which, &sc, val);
}

/* Let the kernel do the call (its arguments are in registers, which the thread cannot
 * change any more: nothing was decided on its memory). */
static void respond_continue(cc_state *cc, uint64_t id)
{
    struct seccomp_notif_resp *resp = (struct seccomp_notif_resp *)cc->resp;
    memset(resp, 0, sizeof *resp);
    resp->id = id;
    resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    (void)ioctl(cc->listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

/* Does the call work on files (and so may wait on a FUSE server)? */
static bool on_files(sc_op op)
{
    switch (op) {
    case SC_OP_NONE:
    case SC_OP_PRCTL:
    case SC_OP_FSOPEN:
    case SC_OP_MOUNT:
    case SC_OP_UMASK:
    case SC_OP_NEWROOT: return false;
    default: return true;
    }
}

void cc_serve_one(cc_state *cc)
{
#ifdef CORDON_TRACE_TIMING
    long long t0 = trace_us();
#endif
    struct seccomp_notif *req = (struct seccomp_notif *)cc->req;
    memset(cc->req, 0, sizeof cc->req);
    if (ioctl(cc->listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
        return; /* EINTR, or ENOENT: the thread is gone already */
    call c = {.id = req->id, .tid = (pid_t)req->pid, .arch = req->data.arch, .path = ""};
    memcpy(c.args, req->data.args, sizeof c.args);
    sc_op op = seccomp_notify_op(req->data.arch, req->data.nr);
    pw_begin(&cc->pw, c.tid);
    cc->tid = c.tid;
    if (cc->fuse_made && !cc->in_worker && on_files(op)) {
        pid_t w = fork_worker(cc, c.id);
        if (w != 0) {
            pw_end(&cc->pw);
            if (w < 0)
                respond(cc, c.id, 0, -w);
            return; /* the worker answers */
        }
        cc->in_worker = true;
    }
    int err = 0;
    long long val = 0;
    char *p1 = cc->path1, *p2 = cc->path2;
    int e;
#define STR(arg, buf)                                                      \
    do {                                                                   \
        if ((e = read_string(c.tid, c.args[arg], buf, PW_PATH_MAX)) < 0) { \
            err = -e;                                                      \
            goto out;                                                      \
        }                                                                  \
    } while (0)
    switch (op) {
    case SC_OP_OPEN:
    case SC_OP_CREAT:
        STR(0, p1);
        c.path = p1;
        c.what = op == SC_OP_CREAT ? "creat" : "open";
        err = do_open(cc, &c, AT_FDCWD, p1, op == SC_OP_CREAT ? O_CREAT | O_WRONLY | O_TRUNC : (int)c.args[1],
                      (mode_t)(op == SC_OP_CREAT ? c.args[1] : c.args[2]));
        break;
    case SC_OP_OPENAT:
        STR(1, p1);
        c.path = p1;
        c.what = "openat";
        err = do_open(cc, &c, ARG_FD(c.args[0]), p1, (int)c.args[2], (mode_t)c.args[3]);
        break;
    case SC_OP_MKDIR:
    case SC_OP_MKDIRAT: {
        bool at = op == SC_OP_MKDIRAT;
        STR(at ? 1 : 0, p1);
        c.path = p1;
        c.what = "mkdir";
        err = do_mknod(cc, &c, at ? ARG_FD(c.args[0]) : AT_FDCWD, p1, (mode_t)c.args[at ? 2 : 1], 0, true);
        break;
    }
    case SC_OP_MKNOD:
    case SC_OP_MKNODAT: {
        bool at = op == SC_OP_MKNODAT;
        STR(at ? 1 : 0, p1);
        c.path = p1;
        c.what = "mknod";
        err = do_mknod(cc, &c, at ? ARG_FD(c.args[0]) : AT_FDCWD, p1, (mode_t)c.args[at ? 2 : 1],
                       (dev_t)c.args[at ? 3 : 2], false);
        break;
    }
    case SC_OP_RENAME:
        STR(0, p1);
        STR(1, p2);
        c.path = p2;
        c.what = "rename";
        err = do_rename(cc, &c, AT_FDCWD, p1, AT_FDCWD, p2, 0);
        break;
    case SC_OP_RENAMEAT:
    case SC_OP_RENAMEAT2:
        STR(1, p1);
        STR(3, p2);
        c.path = p2;
        c.what = "rename";
        err = do_rename(cc, &c, ARG_FD(c.args[0]), p1, ARG_FD(c.args[2]), p2,
                        op == SC_OP_RENAMEAT2 ? (unsigned)c.args[4] : 0);
        break;
    case SC_OP_LINK:
        STR(0, p1);
        STR(1, p2);
        c.path = p2;
        c.what = "link";
        err = do_link(cc, &c, AT_FDCWD, p1, AT_FDCWD, p2, 0);
        break;
    case SC_OP_LINKAT:
        STR(1, p1);
        STR(3, p2);
        c.path = p2;
        c.what = "link";
        err = do_link(cc, &c, ARG_FD(c.args[0]), p1, ARG_FD(c.args[2]), p2, (int)c.args[4]);
        break;
    case SC_OP_UNLINK:
    case SC_OP_RMDIR:
        STR(0, p1);
        c.path = p1;
        c.what = op == SC_OP_RMDIR ? "rmdir" : "unlink";
        err = do_unlink(cc, &c, AT_FDCWD, p1, op == SC_OP_RMDIR ? AT_REMOVEDIR : 0);
        break;
    case SC_OP_UNLINKAT:
        STR(1, p1);
        c.path = p1;
        c.what = (c.args[2] & AT_REMOVEDIR) ? "rmdir" : "unlink";
        err = do_unlink(cc, &c, ARG_FD(c.args[0]), p1, (int)c.args[2]);
        break;
    case SC_OP_SYMLINK:
        STR(0, p1);
        STR(1, p2);
        c.path = p2;
        c.what = "symlink";
        err = do_symlink(cc, &c, p1, AT_FDCWD, p2);
        break;
    case SC_OP_SYMLINKAT:
        STR(0, p1);
        STR(2, p2);
        c.path = p2;
        c.what = "symlink";
        err = do_symlink(cc, &c, p1, ARG_FD(c.args[1]), p2);
        break;
    case SC_OP_CHMOD:
    case SC_OP_FCHMODAT:
    case SC_OP_FCHMODAT2: {
        bool at = op != SC_OP_CHMOD;
        unsigned flags = op == SC_OP_FCHMODAT2 ? (unsigned)c.args[3] : 0;
        if (flags & ~(unsigned)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
            err = EINVAL;
            break;
        }
        STR(at ? 1 : 0, p1);
        c.path = p1;
        c.what = "chmod";
        meta_req m = {.kind = META_CHMOD, .mode = (mode_t)(c.args[at ? 2 : 1] & 07777)};
        bool empty = (flags & AT_EMPTY_PATH) && p1[0] == '\0';
        err = do_meta(cc, &c, at ? ARG_FD(c.args[0]) : AT_FDCWD, empty ? NULL : p1, !(flags & AT_SYMLINK_NOFOLLOW), &m);
        break;
    }
    case SC_OP_FCHMOD: {
        c.what = "fchmod";
        meta_req m = {.kind = META_CHMOD, .mode = (mode_t)(c.args[1] & 07777)};
        err = do_meta(cc, &c, ARG_FD(c.args[0]), NULL, true, &m);
        break;
    }
    case SC_OP_CHOWN:
    case SC_OP_LCHOWN:
    case SC_OP_CHOWN32:
    case SC_OP_LCHOWN32: {
        bool narrow = op == SC_OP_CHOWN || op == SC_OP_LCHOWN;
        STR(0, p1);
        c.path = p1;
        c.what = "chown";
        meta_req m = {.kind = META_CHOWN, .uid = call_id(&c, c.args[1], narrow), .gid = call_id(&c, c.args[2], narrow)};
        err = do_meta(cc, &c, AT_FDCWD, p1, op == SC_OP_CHOWN || op == SC_OP_CHOWN32, &m);
        break;
    }
    case SC_OP_FCHOWN:
    case SC_OP_FCHOWN32: {
        c.what = "fchown";
        bool narrow = op == SC_OP_FCHOWN;
        meta_req m = {.kind = META_CHOWN, .uid = call_id(&c, c.args[1], narrow), .gid = call_id(&c, c.args[2], narrow)};
        err = do_meta(cc, &c, ARG_FD(c.args[0]), NULL, true, &m);
        break;
    }
    case SC_OP_FCHOWNAT: {
        unsigned flags = (unsigned)c.args[4];
        if (flags & ~(unsigned)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)) {
            err = EINVAL;
            break;
        }
        STR(1, p1);
        c.path = p1;
        c.what = "chown";
        meta_req m = {.kind = META_CHOWN, .uid = (uid_t)(uint32_t)c.args[2], .gid = (gid_t)(uint32_t)c.args[3]};
        bool empty = (flags & AT_EMPTY_PATH) && p1[0] == '\0';
        err = do_meta(cc, &c, ARG_FD(c.args[0]), empty ? NULL : p1, !(flags & AT_SYMLINK_NOFOLLOW), &m);
        break;
    }
    case SC_OP_TRUNCATE:
    case SC_OP_TRUNCATE64: {
        STR(0, p1);
        c.path = p1;
        c.what = "truncate";
        uint64_t len = c.args[1];
        if (op == SC_OP_TRUNCATE64) /* (path, low, high) on x86; (path, pad, low, high) on arm */
            len = c.arch == AUDIT_ARCH_I386 ? ((c.args[1] & 0xffffffffu) | (c.args[2] << 32))
                                            : ((c.args[2] & 0xffffffffu) | (c.args[3] << 32));
        else if (c.arch != AUDIT_ARCH_X86_64 && c.arch != AUDIT_ARCH_AARCH64)
            len = (uint64_t)(int64_t)(int32_t)(uint32_t)len;
        meta_req m = {.kind = META_TRUNCATE, .len = (off_t)len};
        err = do_meta(cc, &c, AT_FDCWD, p1, true, &m);
        break;
    }
    case SC_OP_PRCTL: err = do_prctl(cc, &c, &val); break;
    case SC_OP_FSOPEN:
    case SC_OP_MOUNT:
        c.what = op == SC_OP_FSOPEN ? "fsopen" : "mount";
        err = do_new_fs(cc, &c, op == SC_OP_FSOPEN);
        break;
    case SC_OP_UMASK:
    case SC_OP_NEWROOT:
        /* what the supervisor remembers of the thread changes; the call itself is the
         * kernel's (its arguments decide nothing here) */
        pw_thread_changed(&cc->pw, c.tid, op == SC_OP_UMASK ? (int)(c.args[0] & 0777) : -1);
        pw_end(&cc->pw);
        respond_continue(cc, c.id);
        return;
    case SC_OP_CONNECT:
    case SC_OP_BIND:
    case SC_OP_SENDTO:
    case SC_OP_SENDMSG:
    case SC_OP_SENDMMSG: err = serve_socket(cc, &c, op, req->data.arch, &val); break;
    case SC_OP_NONE: err = ENOSYS; break;
    }
out:
#undef STR
    pw_end(&cc->pw);
    umask(077);
    if (err >= 0)
        respond(cc, c.id, val, err);
    if (cc->in_worker)
        _exit(0);
#ifdef CORDON_TRACE_TIMING
    cc->trace_calls++;
    cc->trace_us += trace_us() - t0;
#endif
}
