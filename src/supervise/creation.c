// SPDX-License-Identifier: Apache-2.0
/* The creation control: its set-up inside the new root, the refusals and the report
 * (supervise/creation.h; its other parts: supervise/cc_internal.h). */
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

/* ------------------------------------------------------------------------------------ */
/* set-up, inside the new root */

int cc_add_rule(cc_state *cc, dev_t dev, ino_t ino, const char *name, const char *why)
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
    return cc_add_rule(cc, dev, ino, name, why);
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

int cc_add_dev(cc_state *cc, dev_t dev)
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

/* The next line, NUL-terminated in the buffer: 1, 0 at the end, or -1 with errno (E2BIG:
 * a line longer than the buffer). */
int cc_mi_next(mi_reader *r, char **line)
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
bool cc_mi_ids(const char *line, uint64_t *id, dev_t *dev)
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
    while ((got = cc_mi_next(&r, &line)) > 0) {
        /* ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE ... */
        uint64_t id;
        dev_t dev;
        const char *dash = strstr(line, " - ");
        if (!dash || !cc_mi_ids(line, &id, &dev))
            continue;
        char type[64] = "";
        sscanf(dash + 3, "%63s", type);
        bool ours = false;
        for (size_t i = 0; i < s->n_ours; i++)
            ours |= s->ours[i] == id;
        bool pseudo = strcmp(type, "proc") == 0 || strcmp(type, "devpts") == 0 || strcmp(type, "mqueue") == 0 ||
                      strcmp(type, "sysfs") == 0 || strncmp(type, "cgroup", 6) == 0;
        if ((ours || pseudo ? add_priv_dev(cc, dev) : cc_add_dev(cc, dev)) < 0)
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
            if (cc_add_rule(cc, st.st_dev, st.st_ino, slash + 1, op->why) < 0)
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

void cc_refuse_log(cc_state *cc, const char *what, const char *path, const char *why)
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
void cc_take_shared_refusals(cc_state *cc)
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
    cc_take_shared_refusals(cc);
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

bool cc_was_handed(const cc_state *cc, const struct stat *st)
{
    for (size_t i = 0; i < cc->n_handed; i++)
        if (cc->handed[i].dev == st->st_dev && cc->handed[i].ino == st->st_ino)
            return true;
    return false;
}

void cc_handed(cc_state *cc, int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || cc_was_handed(cc, &st))
        return;
    cc->handed[cc->next_handed].dev = st.st_dev;
    cc->handed[cc->next_handed].ino = st.st_ino;
    cc->next_handed = (cc->next_handed + 1) % CC_MAX_HANDED;
    if (cc->n_handed < CC_MAX_HANDED)
        cc->n_handed++;
}
