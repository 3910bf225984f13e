// SPDX-License-Identifier: Apache-2.0
#include "confine/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/strv.h"

/* The build headers may be older than the running kernel: name every right and scope
 * cordon knows here, with the ABI that introduced it. */
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule       445
#define SYS_landlock_restrict_self  446
#endif
#define LL_FS_EXECUTE                 (1ULL << 0) /* ABI 1 */
#define LL_FS_WRITE_FILE              (1ULL << 1)
#define LL_FS_READ_FILE               (1ULL << 2)
#define LL_FS_READ_DIR                (1ULL << 3)
#define LL_FS_REMOVE_DIR              (1ULL << 4)
#define LL_FS_REMOVE_FILE             (1ULL << 5)
#define LL_FS_MAKE_CHAR               (1ULL << 6)
#define LL_FS_MAKE_DIR                (1ULL << 7)
#define LL_FS_MAKE_REG                (1ULL << 8)
#define LL_FS_MAKE_SOCK               (1ULL << 9)
#define LL_FS_MAKE_FIFO               (1ULL << 10)
#define LL_FS_MAKE_BLOCK              (1ULL << 11)
#define LL_FS_MAKE_SYM                (1ULL << 12)
#define LL_FS_REFER                   (1ULL << 13) /* ABI 2 */
#define LL_FS_TRUNCATE                (1ULL << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV               (1ULL << 15) /* ABI 5 */
#define LL_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  /* ABI 6 */
#define LL_SCOPE_SIGNAL               (1ULL << 1)  /* ABI 6 */
#define LL_CREATE_RULESET_VERSION     (1U << 0)
#define LL_RULE_PATH_BENEATH          1

/* struct landlock_ruleset_attr as of ABI 6; older kernels get a prefix of it. */
struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net; /* ABI 4 */
    uint64_t scoped;             /* ABI 6 */
};
struct ll_path_beneath_attr {
    uint64_t allowed_access;
    int32_t parent_fd;
} __attribute__((packed));

/* Every right of each class, spelled out: a right the kernel learns later is handled
 * (denied) until it is added here, so a kernel upgrade never widens the policy. */
#define LL_READ_RIGHTS (LL_FS_EXECUTE | LL_FS_READ_FILE | LL_FS_READ_DIR)
/* Not MAKE_CHAR or MAKE_BLOCK: device nodes are never created in a sandbox that has no
 * user namespace of its own (and would be on nodev mounts); not IOCTL_DEV: writable
 * trees hold no usable device (nodev). */
#define LL_WRITE_RIGHTS                                                                                           \
    (LL_READ_RIGHTS | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | LL_FS_MAKE_DIR | \
     LL_FS_MAKE_REG | LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | LL_FS_MAKE_SYM | LL_FS_REFER)
#define LL_DEVICE_RIGHTS (LL_FS_READ_FILE | LL_FS_WRITE_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_PROC_RIGHTS   (LL_FS_WRITE_FILE | LL_FS_TRUNCATE)
/* Rights that make sense on a single file (landlock_add_rule refuses others). */
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

uint64_t landlock_fs_rights_of_abi(int abi)
{
    uint64_t r = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */
    if (abi >= 2)
        r |= LL_FS_REFER;
    if (abi >= 3)
        r |= LL_FS_TRUNCATE;
    if (abi >= 5)
        r |= LL_FS_IOCTL_DEV;
    return r;
}

uint64_t landlock_class_rights(ll_class c, bool is_dir)
{
    uint64_t r = 0;
    switch (c) {
    case LL_READ: r = LL_READ_RIGHTS; break;
    case LL_WRITE: r = LL_WRITE_RIGHTS; break;
    case LL_DEVICE: r = LL_DEVICE_RIGHTS; break;
    case LL_PROC: r = LL_PROC_RIGHTS; break;
    case LL_LIST: r = LL_FS_READ_DIR; break;
    }
    return is_dir ? r : r & LL_FILE_RIGHTS;
}

const char *ll_class_name(ll_class c)
{
    switch (c) {
    case LL_READ: return "read";
    case LL_WRITE: return "write";
    case LL_DEVICE: return "device";
    case LL_PROC: return "proc";
    case LL_LIST: return "list";
    }
    return "?";
}

int landlock_abi(void)
{
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return abi > 0 ? (int)abi : 0;
}

static void add_rule(landlock_prep *lp, size_t *cap, const char *path, ll_class cls)
{
    grow(&lp->rules, cap, lp->n_rules + 1, sizeof *lp->rules);
    lp->rules[lp->n_rules++] = (ll_rule){.path = path, .cls = cls};
}

void landlock_prepare(landlock_prep *lp, const plan *p, bool no_nested)
{
    *lp = (landlock_prep){.ruleset_fd = -1};
    errno = 0;
    lp->abi = landlock_abi();
    if (lp->abi == 0) {
        lp->abi_errno = errno;
        return;
    }
    if (lp->abi >= 6)
        lp->scoped = LL_SCOPE_ABSTRACT_UNIX_SOCKET | LL_SCOPE_SIGNAL;
    /* ABI 1 cannot grant REFER: every rename or link between two directories would
     * fail with EXDEV, even inside the workspace, which breaks too many tools. */
    lp->fs = no_nested && lp->abi >= 2;
    if (!lp->fs)
        return;
    lp->handled = landlock_fs_rights_of_abi(lp->abi);

    size_t cap = 0;
    add_rule(lp, &cap, "/", LL_READ);
    for (size_t i = 0; i < p->n_ops; i++) {
        const plan_op *op = &p->ops[i];
        switch (op->kind) {
        case PLAN_BIND:
        case PLAN_OVERLAY:
            if (!op->read_only)
                add_rule(lp, &cap, op->dest, LL_WRITE);
            break;
        case PLAN_TMPFS:
        case PLAN_COW: add_rule(lp, &cap, op->dest, LL_WRITE); break;
        case PLAN_DEV:
            for (size_t k = 0; k < PLAN_DEV_NODES; k++)
                add_rule(lp, &cap, plan_dev_nodes[k], LL_DEVICE);
            add_rule(lp, &cap, "/dev/pts", LL_DEVICE);
            add_rule(lp, &cap, "/dev/shm", LL_WRITE);
            break;
        case PLAN_PROC: add_rule(lp, &cap, op->dest, LL_PROC); break;
        case PLAN_HIDE:
        case PLAN_HOLD:
        case PLAN_FILE:
        case PLAN_SYMLINK:
        case PLAN_NOTE: break;
        }
    }
}

void landlock_prep_free(landlock_prep *lp)
{
    free(lp->rules);
    *lp = (landlock_prep){.ruleset_fd = -1};
}

int landlock_allow(int ruleset, int fd, uint64_t rights)
{
    struct ll_path_beneath_attr pb = {.allowed_access = rights, .parent_fd = fd};
    return (int)syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
}

int landlock_ruleset_new(int abi, uint64_t fs, uint64_t net, uint64_t scoped)
{
    struct ll_ruleset_attr attr = {.handled_access_fs = fs, .handled_access_net = net, .scoped = scoped};
    size_t size = abi >= 6 ? sizeof attr : abi >= 4 ? 2 * sizeof(uint64_t) : sizeof(uint64_t);
    return (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
}

/* The command already holds its stdin, stdout and stderr; reopening them through
 * /dev/stdout (/proc/self/fd/N) must keep working when they are a file or a terminal
 * that the view does not show (the caller's `> log`, its terminal).  Grant exactly the
 * access the descriptor has, on that one file.  Pipes and sockets need nothing:
 * Landlock does not govern them.  Failing to add such a rule only means less access,
 * so it is not an error. */
void landlock_allow_stdio(int ruleset, uint64_t handled)
{
    for (int fd = 0; fd < 3; fd++) {
        struct stat st;
        int fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fstat(fd, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
            continue;
        uint64_t r = 0;
        int acc = fl & O_ACCMODE;
        if (acc == O_RDONLY || acc == O_RDWR)
            r |= LL_FS_READ_FILE;
        if (acc == O_WRONLY || acc == O_RDWR)
            r |= LL_FS_WRITE_FILE | LL_FS_TRUNCATE;
        if (S_ISCHR(st.st_mode))
            r |= LL_FS_IOCTL_DEV;
        r &= handled & LL_FILE_RIGHTS;
        if (r)
            (void)landlock_allow(ruleset, fd, r);
    }
}

int landlock_apply(const landlock_prep *lp, cordon_error *err)
{
    if (lp->ruleset_fd >= 0) {
        /* --isolation landlock: built by the parent (llonly.c), on the host's paths */
        if (syscall(SYS_landlock_restrict_self, lp->ruleset_fd, 0) < 0)
            return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot apply the Landlock ruleset");
        return 0;
    }
    if (!lp->fs && !lp->scoped && !lp->need_domain)
        return 0;
    if (lp->abi == 0)
        return err_opt(err, CORDON_STAGE_CONFINE, lp->abi_errno ? lp->abi_errno : ENOSYS, "noProc",
                       "this container masks parts of /proc, so the sandbox shows the container's own /proc, and "
                       "without Landlock nothing would keep the command from reading its other processes' "
                       "environment and memory: run with --no-proc, or unmask /proc (doc/kubernetes.md)");
    /* Neither rules nor scopes, only a domain (need_domain): it handles making block
     * devices, which no sandbox can do anyway (no CAP_MKNOD where it counts). */
    uint64_t fs = lp->fs ? lp->handled : lp->scoped ? 0 : LL_FS_MAKE_BLOCK;
    _cleanup_fd_ int rs = landlock_ruleset_new(lp->abi, fs, 0, lp->scoped);
    if (rs < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot create a Landlock ruleset (ABI %d)", lp->abi);
    if (lp->fs) {
        for (size_t i = 0; i < lp->n_rules; i++) {
            const ll_rule *r = &lp->rules[i];
            _cleanup_fd_ int fd = open(r->path, O_PATH | O_CLOEXEC);
            if (fd < 0) {
                if (errno == ENOENT)
                    continue; /* nothing there: nothing to allow */
                return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock: cannot open %s", r->path);
            }
            struct stat st;
            if (fstat(fd, &st) < 0)
                return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock: cannot look at %s", r->path);
            uint64_t rights = landlock_class_rights(r->cls, S_ISDIR(st.st_mode)) & lp->handled;
            if (rights && landlock_allow(rs, fd, rights) < 0)
                return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock: cannot add the rule for %s", r->path);
        }
        landlock_allow_stdio(rs, lp->handled);
    }
    if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot apply the Landlock ruleset");
    return 0;
}

void landlock_describe(const landlock_prep *lp, char *buf, size_t size)
{
    if (lp->abi == 0) {
        snprintf(buf, size, "not available (%s); namespaces still confine the filesystem",
                 lp->abi_errno == EOPNOTSUPP ? "Landlock is disabled at boot: add landlock to the lsm= "
                                               "kernel parameter"
                                             : "this kernel has no Landlock: Linux 5.13 or later with "
                                               "CONFIG_SECURITY_LANDLOCK");
        return;
    }
    const char *scope = lp->scoped ? "abstract Unix sockets and signals scoped to the sandbox"
                                   : "no scoping (ABI 6, Linux 6.12, scopes abstract Unix sockets and signals)";
    const char *fs = lp->fs        ? "filesystem rules below"
                     : lp->abi < 2 ? "no filesystem rules (ABI 1 cannot allow renames between directories)"
                                   : "no filesystem rules unless --no-nested (they forbid mounting, so "
                                     "sandboxes inside the sandbox)";
    snprintf(buf, size, "ABI %d: %s; %s", lp->abi, scope, fs);
}
