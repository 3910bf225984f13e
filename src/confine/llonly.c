// SPDX-License-Identifier: Apache-2.0
#include "confine/llonly.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/proc.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"

/* Paths cordon grants itself, whatever the rules say: a rule on "/" (--base host) must
 * not hand out the host's block devices (a root caller could read a raw disk, every
 * deny notwithstanding) or decide about /proc. */
static const char *const reserved[] = {"/dev", "/proc"};

static void add_grant(llonly *l, const char *path, ll_class cls, bool is_dir, const char *why)
{
    grow(&l->grants, &l->cap_grants, l->n_grants + 1, sizeof *l->grants);
    l->grants[l->n_grants++] = (ll_grant){.path = xstrdup(path), .cls = cls, .is_dir = is_dir, .why = why};
}

static bool strictly_below(const char *path, const char *top)
{
    return strcmp(path, top) != 0 && path_has_prefix(path, top);
}

/* Does a path below `top` need less than `a` (so that a grant on `top` would give it
 * too much)?  A winning rule that is weaker, or a reserved path. */
static bool restricts(const plan_rule *d, cordon_access a)
{
    return a == CORDON_ACCESS_WRITE ? d->access != CORDON_ACCESS_WRITE : d->access == CORDON_ACCESS_NONE;
}

/* A rule below that restricts: one on a path that does not exist counts only without
 * the creation control, which otherwise refuses to create it (its PLAN_NOCREATE). */
static bool rule_splits(const plan *p, const plan_rule *d, const char *top, cordon_access a)
{
    return strictly_below(d->path, top) && restricts(d, a) && (d->exists || !llonly_supervised(p));
}

static bool needs_split(const plan *p, const char *top, cordon_access a)
{
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strictly_below(reserved[i], top))
            return true;
    for (size_t i = 0; i < p->n_rules; i++)
        if (rule_splits(p, &p->rules[i], top, a))
            return true;
    return false;
}

/* Is something below `top` hidden (a deny, or cordon's own /dev and /proc)?  Then the
 * split directory may only be listed; else (only read-only paths below) it may be read,
 * and entries made there later can be read and run. */
static bool hides_below(const plan *p, const char *top)
{
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strictly_below(reserved[i], top))
            return true;
    for (size_t i = 0; i < p->n_rules; i++)
        if (rule_splits(p, &p->rules[i], top, CORDON_ACCESS_READ))
            return true;
    return false;
}

bool llonly_supervised(const plan *p)
{
#if defined(CORDON_NO_CREATION_CONTROL) || defined(CORDON_NO_CONFINE)
    (void)p;
    return false;
#else
    return !p->bare;
#endif
}

static bool is_reserved(const char *path)
{
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strcmp(path, reserved[i]) == 0)
            return true;
    return false;
}

static bool has_rule_at(const plan *p, const char *path)
{
    for (size_t i = 0; i < p->n_rules; i++)
        if (strcmp(p->rules[i].path, path) == 0)
            return true;
    return false;
}

static ll_class class_of(cordon_access a)
{
    return a == CORDON_ACCESS_WRITE ? LL_WRITE : LL_READ;
}

/* Grant `a` on `path` (a directory or file that exists), splitting it where something
 * below must get less. */
static int grant_tree(const plan *p, llonly *l, const char *path, bool is_dir, cordon_access a, const char *why,
                      int depth, cordon_error *err)
{
    if (!is_dir || !needs_split(p, path, a)) {
        add_grant(l, path, class_of(a), is_dir, why);
        return 0;
    }
    if (depth > 64)
        return err_set(err, CORDON_STAGE_CONFINE, ELOOP, "Landlock isolation: %s is nested too deep", path);
    /* Only read-only paths below: the directory may be read (entries made later too),
     * and the supervisor makes and removes names in it, by the rules (llonly.h). */
    bool readable = llonly_supervised(p) && !hides_below(p, path);
    if (readable)
        add_grant(l, path, LL_READ, true, "read: something below is read-only");
    else
        add_grant(l, path, LL_LIST, true, "listing only: something below is hidden");
    if (readable && a == CORDON_ACCESS_WRITE) {
        add_grant(l, path, LL_WRITE, true, "the supervisor's: it creates here, by the rules");
        l->grants[l->n_grants - 1].sup_only = true;
    }
    _cleanup_fd_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && (errno == EACCES || errno == EPERM || errno == ENOENT))
        return 0; /* not listable by the caller: nothing below is granted (fail closed) */
    if (fd < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock isolation: cannot list %s", path);
    _cleanup_dir_ DIR *d = fdopendir(fd);
    if (!d)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock isolation: cannot list %s", path);
    (void)steal_fd(&fd); /* the DIR owns it now */
    int ret = 0;
    struct dirent *e;
    while (ret == 0 && (errno = 0, e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        _cleanup_free_ char *child = path_join(path, e->d_name);
        if (is_reserved(child) || has_rule_at(p, child))
            continue; /* cordon's own grants, or the rule's own */
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT || errno == EACCES)
                continue;
            ret = err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock isolation: cannot look at %s", child);
            break;
        }
        if (S_ISLNK(st.st_mode))
            continue; /* what a symlink reaches is decided at its target */
        ret = grant_tree(p, l, child, S_ISDIR(st.st_mode), a, why, depth + 1, err);
    }
    if (ret == 0 && errno != 0)
        ret = err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock isolation: cannot list %s", path);
    return ret;
}

int llonly_grants(const plan *p, llonly *out, cordon_error *err)
{
    for (size_t i = 0; i < p->n_rules; i++) {
        const plan_rule *x = &p->rules[i];
        if (x->access == CORDON_ACCESS_NONE || !x->exists)
            continue;
        bool reserved_below = false;
        for (size_t k = 0; k < sizeof reserved / sizeof *reserved; k++)
            reserved_below |= path_has_prefix(x->path, reserved[k]);
        if (reserved_below)
            continue; /* /dev and /proc are cordon's to grant */
        if (grant_tree(p, out, x->path, x->is_dir, x->access, x->why, 0, err) < 0)
            return -1;
    }
    if (p->list_root)
        add_grant(out, "/", LL_LIST, true, "base host: the top directory, listed");
    /* The minimal /dev of the namespaced sandbox, from the host's /dev: the nodes, and
     * ptys (/dev/ptmx and /dev/pts; the caller's other terminals there are writable by
     * their owner anyway, and TIOCSTI stays refused by seccomp). */
    static const char *const ptys[] = {"/dev/ptmx", "/dev/pts"};
    struct stat st;
    for (size_t k = 0; k < PLAN_DEV_NODES; k++)
        if (stat(plan_dev_nodes[k], &st) == 0)
            add_grant(out, plan_dev_nodes[k], LL_DEVICE, S_ISDIR(st.st_mode), "minimal /dev");
    for (size_t k = 0; k < sizeof ptys / sizeof *ptys; k++)
        if (stat(ptys[k], &st) == 0)
            add_grant(out, ptys[k], LL_DEVICE, S_ISDIR(st.st_mode), "minimal /dev: ptys");
    /* The host's /proc, read-only: Landlock keeps the command from ptrace-reading
     * processes outside the sandbox (environ, maps, fd, mem). */
    if (p->proc)
        add_grant(out, "/proc", LL_READ, true, "/proc (the host's, read-only)");
    return 0;
}

#define JANITOR_TRIES 200 /* x 25 ms: what a killed run's stragglers get to die */

/* The janitor of the private directory, forked before it is made: it waits for the end of
 * its pipe (cordon done, or killed), then removes the directory, retrying while the dying
 * sandbox still writes there.  Only system calls from here on (a copy of a possibly
 * multi-threaded process). */
static __attribute__((noreturn)) void janitor_main(int parent_fd, const char *name, int rfd)
{
    int keep[] = {parent_fd, rfd};
    detach_janitor(keep, 2);
    char c;
    while (read(rfd, &c, 1) != 0 && errno == EINTR)
        ;
    struct stat st;
    /* never a directory of someone else's (a name that was taken: cordon made nothing) */
    if (fstatat(parent_fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
        _exit(0);
    for (int t = 0; t < JANITOR_TRIES && remove_tree_at(parent_fd, name) < 0; t++)
        poll(NULL, 0, 25);
    _exit(0);
}

/* Private directories of runs whose cordon and janitor were both killed (a kill of every
 * process of the run at once, the OOM killer): "cordon-ll-PID-X" of ours whose PID (the
 * cordon that made it) is gone.  A PID reused since only keeps a stale one a while. */
static void reap_stale_dirs(int parent_fd)
{
    _cleanup_fd_ int fd = openat(parent_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    _cleanup_dir_ DIR *d = fdopendir(fd);
    if (!d)
        return;
    (void)steal_fd(&fd); /* the DIR owns it now */
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int pid = 0, n = 0;
        if (strncmp(e->d_name, "cordon-ll-", 10) != 0 || sscanf(e->d_name + 10, "%d-%*x%n", &pid, &n) != 1 || n == 0 ||
            e->d_name[10 + n] != '\0' || pid <= 0)
            continue;
        if (kill(pid, 0) == 0 || errno != ESRCH)
            continue; /* its cordon runs (or a process of someone else's has the PID) */
        struct stat st;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
            st.st_uid == geteuid())
            (void)remove_tree_at(dirfd(d), e->d_name);
    }
}

/* Where the private directory is made: $TMPDIR, or /tmp. */
static const char *private_dir_base(void)
{
    const char *base = getenv("TMPDIR");
    return base && base[0] == '/' ? base : "/tmp";
}

char *llonly_dir_shown(void)
{
    return path_join(private_dir_base(), LL_DIR_SHOWN);
}

static int make_private_dir(llonly *l, cordon_error *err)
{
    const char *base = private_dir_base();
    l->parent_fd = open(base, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (l->parent_fd < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock isolation: cannot open %s for a private directory",
                       base);
    uint64_t r[2];
    if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock isolation: getrandom");
    reap_stale_dirs(l->parent_fd);
    char name[64];
    snprintf(name, sizeof name, "cordon-ll-%d-%016llx", (int)getpid(), (unsigned long long)(r[0] ^ r[1] << 7));
    /* The janitor first: a cordon killed between the mkdir and a later fork would leave
     * the directory behind. */
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "pipe");
    pid_t pid = proc_fork(NULL);
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return err_set(err, CORDON_STAGE_CONFINE, e,
                       "Landlock isolation: cannot start the private directory's janitor");
    }
    if (pid == 0) {
        close(p[1]);
        janitor_main(l->parent_fd, name, p[0]);
    }
    close(p[0]);
    l->janitor = pid;
    l->janitor_wfd = p[1];
    if (mkdirat(l->parent_fd, name, 0700) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock isolation: cannot make a private directory in %s",
                       base);
    l->dir = path_join(base, name);
    l->home = path_join(l->dir, "home");
    l->tmpdir = path_join(l->dir, "tmp");
    if (mkdir(l->home, 0700) < 0 || mkdir(l->tmpdir, 0700) < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock isolation: cannot make %s/home and tmp", l->dir);
    add_grant(l, l->home, LL_WRITE, true, "private HOME");
    add_grant(l, l->tmpdir, LL_WRITE, true, "private TMPDIR");
    return 0;
}

/* The command's ruleset (sup false), or the supervisor's: the same network rules and
 * scopes (it connects and binds on the command's behalf: supervise/sockets.h), and of the
 * file system only the rights that change something (it reads what it must to resolve
 * the command's paths, /proc and the cgroup files), granted as for the command plus
 * write on the split directories. */
static int build_one(llonly *l, bool sup, int *out, cordon_error *err)
{
    uint64_t fs = landlock_fs_rights_of_abi(l->abi);
    if (sup)
        fs &= ~landlock_class_rights(LL_READ, true);
    uint64_t net = l->net_none ? LL_NET_BIND_TCP | LL_NET_CONNECT_TCP : 0;
    uint64_t scoped = l->scoped ? LL_SCOPES_ALL : 0;
    *out = landlock_ruleset_new(l->abi, fs, net, scoped);
    if (*out < 0)
        return err_set(err, CORDON_STAGE_CONFINE, errno, "cannot create a Landlock ruleset (ABI %d)", l->abi);
    for (size_t i = 0; i < l->n_grants; i++) {
        const ll_grant *g = &l->grants[i];
        if (g->sup_only && !sup)
            continue;
        _cleanup_fd_ int fd = open(g->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            if (errno == ENOENT || errno == EACCES)
                continue; /* gone since it was listed, or out of the caller's reach */
            return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock isolation: cannot open %s", g->path);
        }
        struct stat st;
        if (fstat(fd, &st) < 0)
            return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock isolation: cannot look at %s", g->path);
        if (S_ISLNK(st.st_mode))
            continue;
        uint64_t rights = landlock_class_rights(g->cls, S_ISDIR(st.st_mode)) & fs;
        if (rights && landlock_allow(*out, fd, rights) < 0)
            return err_set(err, CORDON_STAGE_CONFINE, errno, "Landlock isolation: cannot allow %s", g->path);
    }
    landlock_allow_stdio(*out, fs);
    return 0;
}

static int build_ruleset(llonly *l, cordon_error *err)
{
    if (build_one(l, false, &l->ruleset_fd, err) < 0)
        return -1;
    return l->supervised ? build_one(l, true, &l->sup_ruleset_fd, err) : 0;
}

int llonly_prepare(const plan *p, llonly *out, cordon_error *err)
{
    *out = (llonly){.ruleset_fd = -1,
                    .sup_ruleset_fd = -1,
                    .prepared = true,
                    .parent_fd = -1,
                    .janitor = -1,
                    .janitor_wfd = -1,
                    .supervised = llonly_supervised(p)};
    errno = 0;
    out->abi = landlock_abi();
    if (out->abi == 0)
        return err_opt(err, CORDON_STAGE_CONFINE, 0, "isolation", "Landlock isolation needs Landlock, and %s",
                       errno == EOPNOTSUPP ? "it is disabled at boot here: add landlock to the kernel's lsm= "
                                             "parameter"
                                           : "this kernel has none (Linux 5.13 or later with "
                                             "CONFIG_SECURITY_LANDLOCK)");
    cordon_network net = p->network;
    if (net == CORDON_NETWORK_PROXY)
        return err_opt(err, CORDON_STAGE_USAGE, 0, "network", "Landlock isolation does not support the proxy network");
    out->net_none = net == CORDON_NETWORK_NONE;
    if (out->net_none && out->abi < 4)
        return err_opt(err, CORDON_STAGE_CONFINE, 0, "network",
                       "Landlock isolation without network needs Landlock ABI 4 (Linux 6.7) to refuse TCP; "
                       "this kernel has ABI %d: use the host network, or a newer kernel",
                       out->abi);
    out->scoped = out->abi >= 6;
    if (make_private_dir(out, err) < 0 || llonly_grants(p, out, err) < 0 || build_ruleset(out, err) < 0) {
        llonly_free(out);
        return -1;
    }
    return 0;
}

void llonly_free(llonly *l)
{
    if (l->ruleset_fd >= 0)
        close(l->ruleset_fd);
    if (l->prepared && l->sup_ruleset_fd >= 0)
        close(l->sup_ruleset_fd);
    /* Every process of the run is gone: remove the directory (the command may have
     * planted symlinks in it: none is followed), then let the janitor go. */
    if (l->prepared) {
        if (l->dir && l->parent_fd >= 0)
            (void)remove_tree_at(l->parent_fd, strrchr(l->dir, '/') + 1);
        if (l->janitor_wfd >= 0)
            close(l->janitor_wfd);
        if (l->janitor > 0)
            while (proc_reap_pid(l->janitor) < 0 && errno == EINTR)
                ;
        if (l->parent_fd >= 0)
            close(l->parent_fd);
    }
    free(l->dir);
    for (size_t i = 0; i < l->n_grants; i++)
        free(l->grants[i].path);
    free(l->grants);
    free(l->home);
    free(l->tmpdir);
    *l = (llonly){.ruleset_fd = -1, .sup_ruleset_fd = -1};
}

/* doc/security.md, "--isolation landlock: what it does not protect" */
static const char *const ll_differences[] = {
    "the host's processes are visible: /proc lists them, and their command lines are readable "
    "(--no-proc hides /proc); their environment, memory and descriptors are not (Landlock refuses "
    "ptrace)",
    "the host's network stack: --network none refuses every socket but TCP, and Landlock TCP "
    "connect and bind, and listen(2); no loopback of the sandbox's own, no proxy network",
    "no private /tmp: the host's /tmp is not shown; HOME and TMPDIR are directories on the host, "
    "outside a --limit-memory",
    "a directory with a hidden path below (a --deny inside the workspace) may only be listed: no "
    "new name there",
    "no IPC namespace (System V and POSIX queues refused), the host's hostname, no nesting",
    "processes left behind when cordon and its supervisor are killed together are not killed",
    "the times and extended attributes of read-only files can be changed (Landlock does not "
    "govern them; a read-only mount refuses them)",
};

const char *const *llonly_differences(size_t *n)
{
    *n = sizeof ll_differences / sizeof *ll_differences;
    return ll_differences;
}

void llonly_explain(FILE *out, const llonly *l)
{
    fprintf(out, "\nisolation landlock (no namespaces; see doc/security.md for what this does not protect)\n");
    fprintf(out, "  landlock      ABI %d; network %s; abstract Unix sockets and signals %s\n", l->abi,
            l->net_none ? "none (TCP connect, bind and listen refused; only TCP sockets may be created)" : "host",
            l->scoped ? "scoped" : "NOT scoped (ABI 6, Linux 6.12, needed)");
    for (size_t i = 0; i < l->n_grants; i++)
        fprintf(out, "    %-7s %-40s %s\n", l->grants[i].sup_only ? "create" : ll_class_name(l->grants[i].cls),
                l->grants[i].path, l->grants[i].why);
    fprintf(out, "    (everything else: no access; HOME and TMPDIR are made private at run time)\n");
    fprintf(out, "  creation control  %s\n",
            l->supervised ? "on: cordon's supervisor (no namespace) performs the command's creations, writes, "
                            "renames and removals by the rules above and the creation control's (see its section)"
                          : "OFF (bubblewrap's exact mode, or a build without it): Landlock alone");
    size_t nd;
    const char *const *diff = llonly_differences(&nd);
    fprintf(out, "  unlike the namespaced sandbox:\n");
    for (size_t i = 0; i < nd; i++)
        fprintf(out, "    - %s\n", diff[i]);
    if (!l->scoped)
        fprintf(out, "    - signals and abstract Unix sockets are not scoped (Landlock ABI %d; 6 needed)\n", l->abi);
}
