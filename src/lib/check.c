// SPDX-License-Identifier: Apache-2.0
/* cordon_check(): what this host supports, what the default sandbox needs, and for each
 * missing piece the fix, as one JSON document (`cordon check` prints it, or a text
 * rendering of it).
 *
 * A probe that only makes system calls runs in a child process (util/proc.h: no SIGCHLD
 * for the caller) that is killed after PROBE_MS: a probe must never hang the check (a
 * stale NFS or autofs mount, a wedged FUSE daemon).  The child is a copy of a possibly
 * multi-threaded caller, so those probes allocate nothing (strerrordesc_np, not
 * strerror, which may translate and allocate).  The probes that need more (the cgroup
 * look-up, the test runs through the library) run in the calling process, bounded by a
 * run's timeout.  The user namespace and cgroup probes are the ones a run itself uses
 * (sandbox/ns.c, supervise/limits.c), not copies.  A new probe is a function and a row. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cordon_build.h"
#include "confine/landlock.h"
#include "confine/seccomp.h"
#include "sandbox/ns.h"
#include "sandbox/root.h"
#include "supervise/limits.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/proc.h"
#include "util/time.h"

#define PROBE_MS 500

/* `cordon check` is advice on running cordon: it names the command line's options. */
#define CHECK_ISOLATION_HINT                                                           \
    "; where that cannot be changed, `--isolation landlock` runs the command without " \
    "namespaces, under Landlock and seccomp only (weaker: see doc/security.md)"

typedef struct probe_result {
    int ok;           /* 1 works, 0 does not */
    int value;        /* a number some probes report (the Landlock ABI) */
    const char *word; /* a name some probes report (how --limit-* would be enforced), or NULL */
    char detail[512]; /* what was found */
    char fix[768];    /* how to get it, when it does not work */
} probe_result;

typedef void (*probe_fn)(probe_result *r);

typedef struct probe {
    const char *key;   /* JSON key */
    const char *title; /* for a text rendering */
    bool required;     /* the default sandbox needs it */
    bool in_process;   /* allocates: run in the caller, not in a child */
    probe_fn fn;
    const char *value_key; /* JSON key of `value`, or NULL */
} probe;

__attribute__((format(printf, 3, 4))) static void say(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
}
#define DETAIL(r, ...) say((r)->detail, sizeof(r)->detail, __VA_ARGS__)
#define FIX(r, ...)    say((r)->fix, sizeof(r)->fix, __VA_ARGS__)

/* strerror without locale or allocation (for the probes' children). */
static const char *errtext(int e)
{
    const char *s = strerrordesc_np(e);
    return s ? s : "unknown error";
}

/* The calling process's seccomp mode: 2 when a filter (a container's) is on it. */
static int own_seccomp_mode(void)
{
    char buf[4096];
    return proc_status_read("/proc/self/status", buf, sizeof buf) > 0 ? (int)proc_status_field(buf, "Seccomp", 10) : -1;
}

/* --- probes run in a child ------------------------------------------------------------ */

static void probe_userns(probe_result *r)
{
    ns_probe np;
    if (ns_probe_userns(PROBE_MS - 50, &np) < 0) {
        DETAIL(r, "cannot run the probe (%s)", errtext(errno));
        return;
    }
    if (np.step == NS_STEP_OK) {
        r->ok = 1;
        DETAIL(r, "%s user namespaces work (and mounting inside them)", geteuid() == 0 ? "root's" : "unprivileged");
        return;
    }
    DETAIL(r, "user namespaces do not work here (%s: %s)", ns_step_name(np.step), errtext(np.errnum));
    if (own_seccomp_mode() == 2)
        FIX(r,
            "a seccomp filter on cordon itself refuses them: inside a container this is its profile "
            "(Docker's default); run the container with a profile that allows clone/unshare with "
            "CLONE_NEWUSER (or --security-opt seccomp=unconfined)%s",
            CHECK_ISOLATION_HINT);
    else
        FIX(r, "%s%s", ns_userns_hint(), CHECK_ISOLATION_HINT);
}

static void probe_seccomp(probe_result *r)
{
    cordon_error err = {0};
    const sc_program *p = seccomp_program(0);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_install(p, &err) < 0) {
        DETAIL(r, "cordon's filter cannot be installed: %s", err.message[0] ? err.message : errtext(errno));
        FIX(r, "a kernel with CONFIG_SECCOMP_FILTER is needed (every distribution kernel has it); cordon never "
               "runs a command without its filter");
        return;
    }
    long rc = syscall(SYS_io_uring_setup, 0, NULL);
    if (rc >= 0 || errno != EPERM) {
        DETAIL(r, "the filter loaded but did not refuse io_uring_setup");
        FIX(r, "report this: the filter built for %s does not match this kernel", sc_arches);
        return;
    }
    r->ok = 1;
    DETAIL(r, "cordon's filter loads and refuses what it should (%u instructions, for %s)", p->len, sc_arches);
}

static void probe_pidfd(probe_result *r)
{
    int pidfd = -1;
    struct clone_args args = {.flags = CLONE_PIDFD, .pidfd = (uint64_t)(uintptr_t)&pidfd, .exit_signal = 0};
    long pid = syscall(SYS_clone3, &args, sizeof args);
    bool via_clone3 = !(pid < 0 && errno == ENOSYS);
    if (!via_clone3) /* a seccomp filter (cordon's, Docker's): as sandbox/ns.c */
        pid = syscall(SYS_clone, CLONE_PIDFD, 0UL, &pidfd, 0UL, 0UL);
    if (pid == 0)
        _exit(0);
    siginfo_t si;
    if (pid < 0 || waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED | __WALL) < 0) {
        int e = errno;
        DETAIL(r, "%s: %s", pid < 0 ? "clone with CLONE_PIDFD" : "waitid(P_PIDFD)", errtext(e));
        FIX(r, "%s",
            e == ENOSYS || e == EINVAL ? "Linux 5.4 or later is needed (pidfds supervise the sandbox)"
                                       : "a seccomp filter on cordon itself refuses clone (a container's "
                                         "profile): allow clone3 or clone with CLONE_PIDFD");
        return;
    }
    r->ok = 1;
    DETAIL(r, "%s with CLONE_PIDFD and waitid(P_PIDFD) work", via_clone3 ? "clone3" : "clone (clone3 is refused)");
}

static void probe_landlock(probe_result *r)
{
    errno = 0;
    int abi = landlock_abi();
    r->value = abi;
    if (abi == 0) {
        bool disabled = errno == EOPNOTSUPP;
        DETAIL(r, "no Landlock: %s; the namespaces still confine the filesystem",
               disabled ? "built in but disabled at boot" : "not in this kernel");
        FIX(r, "%s",
            disabled ? "add landlock to the kernel's lsm= boot parameter (e.g. "
                       "lsm=landlock,lockdown,yama,integrity,apparmor,bpf) and reboot"
                     : "Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK=y (6.12 or later to scope "
                       "abstract Unix sockets and signals)");
        return;
    }
    r->ok = 1;
    DETAIL(r, "ABI %d: %s%s", abi, abi >= 6 ? "abstract Unix sockets and signals scoped" : "no scoping",
           abi >= 2 ? "; filesystem rules with --no-nested" : "; too old for filesystem rules (renames)");
    if (abi < 6)
        FIX(r, "Linux 6.12 or later scopes abstract Unix sockets and signals (Landlock ABI 6)");
}

static void probe_overlay(probe_result *r)
{
    cordon_error err = {0};
    uid_t uid = geteuid(); /* before the unshare: unmapped ids read as 65534 after it */
    gid_t gid = getegid();
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 || ns_write_id_maps(uid, gid, &err) < 0) {
        DETAIL(r, "cannot test: user namespaces do not work (%s)", errtext(err.errnum ? err.errnum : errno));
        FIX(r, "see user_namespaces");
        return;
    }
    int fs = (int)syscall(SYS_fsopen, "tmpfs", 0);
    int m = -1;
    if (fs >= 0 && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
        m = (int)syscall(SYS_fsmount, fs, 0, 0);
    if (m < 0 || mkdirat(m, "l", 0755) < 0 || mkdirat(m, "u", 0755) < 0 || mkdirat(m, "w", 0755) < 0) {
        DETAIL(r, "cannot test: no tmpfs in a user namespace (%s)", errtext(errno));
        return;
    }
    char lower[64], upper[64], work[64];
    snprintf(lower, sizeof lower, "/proc/self/fd/%d/l", m);
    snprintf(upper, sizeof upper, "/proc/self/fd/%d/u", m);
    snprintf(work, sizeof work, "/proc/self/fd/%d/w", m);
    int e = 0;
    for (int userxattr = 0; userxattr < 2; userxattr++) {
        int ov = (int)syscall(SYS_fsopen, "overlay", 0);
        if (ov < 0) {
            e = errno;
            break;
        }
        if (syscall(SYS_fsconfig, ov, FSCONFIG_SET_STRING, "lowerdir", lower, 0) == 0 &&
            syscall(SYS_fsconfig, ov, FSCONFIG_SET_STRING, "upperdir", upper, 0) == 0 &&
            syscall(SYS_fsconfig, ov, FSCONFIG_SET_STRING, "workdir", work, 0) == 0 &&
            (!userxattr || syscall(SYS_fsconfig, ov, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) == 0) &&
            syscall(SYS_fsconfig, ov, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0) {
            r->ok = 1;
            DETAIL(r, "a kernel overlay mounts in a user namespace%s", userxattr ? " (with userxattr)" : "");
            return;
        }
        e = errno;
        close(ov);
    }
    DETAIL(r, "no overlayfs in a user namespace (%s)", errtext(e));
    FIX(r, "%s",
        e == ENODEV ? "load the overlay module (sudo modprobe overlay); cordon workspace falls back to "
                      "fuse-overlayfs or a copy meanwhile"
                    : "Linux 5.11 or later mounts overlayfs in user namespaces; cordon workspace falls "
                      "back to fuse-overlayfs or a copy meanwhile");
}

static bool in_path(const char *name, char *found, size_t size)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        size_t n = strcspn(path, ":");
        snprintf(found, size, "%.*s/%s", (int)n, path, name);
        if (n > 0 && access(found, X_OK) == 0)
            return true;
        path += n + (path[n] == ':');
    }
    return false;
}

static void probe_fuse_overlayfs(probe_result *r)
{
    char bin[4096];
    bool have = in_path("fuse-overlayfs", bin, sizeof bin);
    int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (have && fd >= 0) {
        r->ok = 1;
        DETAIL(r, "%s and /dev/fuse", bin);
        return;
    }
    if (!have)
        DETAIL(r, "fuse-overlayfs is not installed%s", fd >= 0 ? "" : "; /dev/fuse cannot be opened");
    else
        DETAIL(r, "%s is installed, but /dev/fuse cannot be opened (%s)", bin, errtext(e));
    if (!have)
        FIX(r, "sudo apt-get install fuse-overlayfs (only needed where the kernel overlay is not)");
    else if (e == ENOENT)
        FIX(r, "no /dev/fuse: sudo modprobe fuse; in a container, pass the device (--device /dev/fuse)");
    else
        FIX(r, "/dev/fuse: %s; in a container, pass the device (--device /dev/fuse)", errtext(e));
}

/* A /proc of the sandbox's own: the probe a run's start-up depends on (sandbox/root.c). */
static void probe_proc(probe_result *r)
{
    char why[256] = "";
    int own = root_proc_probe(why, sizeof why);
    if (own == 1) {
        r->ok = 1;
        DETAIL(r, "a fresh /proc mounts in the sandbox's user and PID namespaces");
        return;
    }
    if (own < 0) {
        DETAIL(r, "cannot test: %s", why);
        FIX(r, "see user_namespaces");
        return;
    }
    DETAIL(r, "%s; %s", why, ROOT_PROC_KEPT);
    FIX(r, "%s", ROOT_PROC_FIX);
}

/* --- probes run in the calling process ------------------------------------------------- */

static void probe_cgroup(probe_result *r)
{
    char where[1024] = "";
    cordon_error why = {0};
    limits_kind k = limits_probe(where, sizeof where, &why);
    r->word = limits_kind_name(k == LIMITS_NONE ? LIMITS_RLIMIT : k);
    if (k == LIMITS_CGROUP2) {
        r->ok = 1;
        DETAIL(r, "cgroup2: cgroup v2 is delegated: each run with limits gets a cgroup of its own under %s", where);
        return;
    }
    if (k == LIMITS_CGROUP1) {
        /* what `cordon run` uses here (root on a v1 or hybrid host): limits are enforced
         * for the whole sandbox as with v2 */
        r->ok = 1;
        DETAIL(r, "cgroup1: cgroup v1 (no delegated v2 here): each run with limits gets cgroups of its own under %s",
               where);
        return;
    }
    char text[sizeof why.message + 128];
    cordon_error_text(&why, text, sizeof text);
    DETAIL(r, "no cgroup can be used: %s", text);
    if (why.errnum == EROFS)
        FIX(r,
            "the cgroup file system is mounted read-only (a container's default): give the container a "
            "writable cgroup of its own (a privileged container, or one with a delegated cgroup), or run "
            "cordon as a user other than root, whose process limit rlimits enforce; resource limits fall "
            "back to rlimits meanwhile%s",
            getuid() == 0 || geteuid() == 0 ? " (and a process limit cannot be enforced as root)" : "");
    else
        FIX(r,
            "run cordon in a delegated cgroup: systemd-run --user --scope -p Delegate=yes cordon run ..., with "
            "pids and memory enabled in the parent's cgroup.subtree_control; resource limits fall back to "
            "rlimits meanwhile%s",
            getuid() == 0 || geteuid() == 0 ? " (and a process limit cannot be enforced as root)" : "");
}

/* Run `true` under p (timeout 10 s): 1 when it exits 0, else 0 with why in r; res gets
 * the run's result (the mode it ran in). */
static int try_true(cordon_policy *p, probe_result *r, cordon_result *res)
{
    cordon_error err = {0};
    *res = (cordon_result)CORDON_RESULT_INIT;
    char *const cmd[] = {(char *)"true", NULL};
    int ok = cordon_policy_set_no_workspace(p, true, &err) == 0 && cordon_policy_set_cwd(p, "/", &err) == 0 &&
             cordon_policy_set_timeout(p, 10, &err) == 0 && cordon_run(p, cmd, res, &err) == 0 && res->exit_code == 0;
    if (!ok) {
        char text[sizeof err.message + 128];
        if (err.message[0])
            cordon_error_text(&err, text, sizeof text);
        else
            snprintf(text, sizeof text, "`true` exited %d", res->exit_code);
        DETAIL(r, "%s", text);
    }
    return ok;
}

/* `true` as `cordon run --no-workspace --chdir /` runs it: the real start-up path, and
 * the mode it ran in (r->word: "namespaces", "namespaces-kept-proc" when the container's
 * /proc is shown, "landlock"). */
static void probe_default_sandbox(probe_result *r)
{
    cordon_policy *p = cordon_policy_new();
    cordon_result res;
    r->ok = p && try_true(p, r, &res);
    cordon_policy_free(p);
    if (!r->ok)
        return;
    if (res.isolation == CORDON_ISOLATION_LANDLOCK) {
        r->word = "landlock";
        DETAIL(r, "`true` runs, under --isolation landlock (no namespaces: %s)",
               res.isolation_why ? res.isolation_why : "as asked");
    } else if (res.proc_kept) {
        r->word = "namespaces-kept-proc";
        DETAIL(r, "`true` runs in the namespace sandbox, with the container's /proc: %s", res.proc_kept);
        FIX(r, "for a /proc of the sandbox's own: %s", ROOT_PROC_FIX);
    } else {
        r->word = "namespaces";
        DETAIL(r, "`true` runs in the default sandbox");
    }
}

/* What a host without user namespaces can still do: `true` under Landlock isolation. */
static void probe_landlock_isolation(probe_result *r)
{
    int abi = landlock_abi();
    cordon_network net = abi >= 4 ? CORDON_NETWORK_NONE : CORDON_NETWORK_HOST;
    cordon_policy *p = cordon_policy_new();
    cordon_error err = {0};
    cordon_result res;
    r->ok = p && cordon_policy_set_isolation(p, CORDON_ISOLATION_LANDLOCK, &err) == 0 &&
            cordon_policy_set_network(p, net, &err) == 0 && try_true(p, r, &res);
    cordon_policy_free(p);
    if (r->ok && abi >= 4) {
        DETAIL(r, "--isolation landlock works here, --network none included (Landlock ABI %d)%s", abi,
               abi >= 6 ? "" : "; signals and abstract Unix sockets are not scoped before ABI 6");
        if (abi < 6)
            FIX(r, "Linux 6.12 or later scopes signals and abstract Unix sockets (Landlock ABI 6)");
    } else if (r->ok) {
        r->ok = 0;
        DETAIL(r, "--isolation landlock works with --network host only (Landlock ABI %d)", abi);
        FIX(r, "Linux 6.7 or later (Landlock ABI 4) refuses TCP for --network none");
    } else {
        FIX(r, "Linux 5.13 or later with Landlock enabled (lsm=...,landlock)");
    }
}

/* Are the files at fds `a` and `b` the same bytes? */
static bool same_content(int a, int b)
{
    char x[65536], y[65536] = {0};
    for (;;) {
        ssize_t n = read(a, x, sizeof x);
        if (n < 0)
            return false;
        size_t got = 0;
        while (got < (size_t)n) {
            ssize_t m = read(b, y + got, (size_t)n - got);
            if (m <= 0)
                return false;
            got += (size_t)m;
        }
        if (n == 0)
            return read(b, y, 1) == 0;
        if (memcmp(x, y, (size_t)n) != 0)
            return false;
    }
}

/* bubblewrap's command line (doc/bwrap.md): Codex and sandbox-runtime run the first bwrap
 * on PATH; Codex skips one in the current directory (a relative PATH entry) or under
 * /tmp, resolves symbolic links and runs the file with --help (doc/codex.md).  Is that
 * file this program: the same file (a hard link) or the same bytes (a copy)? */
static void probe_bwrap_link(probe_result *r)
{
    const char *path = getenv("PATH");
    struct stat self, st, lst;
    if (stat("/proc/self/exe", &self) < 0) {
        DETAIL(r, "cannot tell which program this is (/proc/self/exe: %s)", errtext(errno));
        return;
    }
    char found[4096] = "";
    for (const char *p = path ? path : ""; *p && !found[0];) {
        const char *colon = strchrnul(p, ':');
        size_t l = (size_t)(colon - p);
        char cand[4096];
        bool skipped = l == 0 || p[0] != '/' || (l >= 4 && strncmp(p, "/tmp", 4) == 0 && (l == 4 || p[4] == '/'));
        if (!skipped && l + sizeof "/bwrap" < sizeof cand) {
            memcpy(cand, p, l);
            memcpy(cand + l, "/bwrap", sizeof "/bwrap");
            if (access(cand, X_OK) == 0)
                snprintf(found, sizeof found, "%s", cand);
        }
        p = *colon ? colon + 1 : colon;
    }
    static const char fix[] = "cordon install-bwrap ~/.local/bin, with ~/.local/bin before /usr/bin on PATH "
                              "(never replace /usr/bin/bwrap)";
    if (!found[0]) {
        DETAIL(r, "no bwrap on PATH (outside /tmp and the current directory)");
        FIX(r, "%s", fix);
        return;
    }
    bool same_file = stat(found, &st) == 0 && st.st_dev == self.st_dev && st.st_ino == self.st_ino;
    if (same_file && lstat(found, &lst) == 0 && S_ISLNK(lst.st_mode)) {
        DETAIL(r,
               "the first bwrap on PATH, %s, is a symbolic link to cordon: sandbox-runtime runs cordon, but Codex "
               "resolves the link, reads cordon's own --help and quietly runs its bundled bubblewrap",
               found);
        FIX(r, "%s (a file of its own, not a link)", fix);
        return;
    }
    bool copy = false;
    if (!same_file) {
        int a = open("/proc/self/exe", O_RDONLY | O_CLOEXEC), b = open(found, O_RDONLY | O_CLOEXEC);
        copy = a >= 0 && b >= 0 && st.st_size == self.st_size && same_content(a, b);
        if (a >= 0)
            (void)close(a); /* (read only) */
        if (b >= 0)
            (void)close(b);
    }
    if (same_file || copy) {
        r->ok = 1;
        DETAIL(r, "the first bwrap on PATH, %s, is this cordon (%s): Codex and sandbox-runtime run in cordon", found,
               same_file ? "the same file" : "a copy");
    } else {
        DETAIL(r, "the first bwrap on PATH is %s, not this cordon (bubblewrap, or a copy of another cordon)", found);
        FIX(r, "%s", fix);
    }
}

static const probe probes[] = {
    {"user_namespaces", "user namespaces", true, false, probe_userns, NULL},
    {"seccomp", "seccomp", true, false, probe_seccomp, NULL},
    {"pidfd", "pidfd", true, false, probe_pidfd, NULL},
    {"proc", "a /proc of its own", false, false, probe_proc, NULL},
    {"landlock", "Landlock", false, false, probe_landlock, "abi"},
    {"overlayfs", "overlayfs in userns", false, false, probe_overlay, NULL},
    {"fuse_overlayfs", "fuse-overlayfs", false, false, probe_fuse_overlayfs, NULL},
    {"cgroup_delegation", "cgroups for --limit-*", false, true, probe_cgroup, NULL},
    {"landlock_isolation", "--isolation landlock", false, true, probe_landlock_isolation, NULL},
    {"bwrap_link", "bwrap is cordon", false, true, probe_bwrap_link, NULL},
};
#define N_PROBES (sizeof probes / sizeof probes[0])

/* Run fn in a child; kill it if it has not answered after PROBE_MS. */
static void run_bounded(probe_fn fn, probe_result *out)
{
    *out = (probe_result){0};
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        DETAIL(out, "cannot run the probe (pipe: %s)", errtext(errno));
        return;
    }
    int pidfd = -1;
    pid_t pid = proc_fork(&pidfd);
    if (pid < 0) {
        DETAIL(out, "cannot run the probe (clone: %s)", errtext(errno));
        close(p[0]);
        close(p[1]);
        return;
    }
    if (pid == 0) {
        close(p[0]);
        probe_result r = {0};
        fn(&r);
        _exit(write_all(p[1], &r, sizeof r) == 0 ? 0 : 1);
    }
    close(p[1]);
    long long deadline = now_ms() + PROBE_MS;
    size_t got = 0;
    for (;;) {
        long long left = deadline - now_ms();
        struct pollfd pf = {.fd = p[0], .events = POLLIN};
        int n = left > 0 ? poll(&pf, 1, (int)left) : 0;
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        ssize_t rd = read(p[0], (char *)out + got, sizeof *out - got);
        if (rd < 0 && errno == EINTR)
            continue;
        if (rd <= 0)
            break;
        got += (size_t)rd;
        if (got == sizeof *out)
            break;
    }
    close(p[0]);
    if (got != sizeof *out) {
        *out = (probe_result){0};
        proc_signal(pidfd, SIGKILL);
        DETAIL(out, "the probe did not answer within %d ms (a hung mount or device?)", PROBE_MS);
    }
    proc_reap(pidfd, NULL);
    close(pidfd);
    out->detail[sizeof out->detail - 1] = '\0';
    out->fix[sizeof out->fix - 1] = '\0';
}

static json_t *jstr_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

int cordon_check(char **json, cordon_error *err)
{
    cordon_error e = {.size = sizeof e};
    if (!json) {
        err_set(&e, CORDON_STAGE_USAGE, EINVAL, "cordon_check: nowhere to put the document (json is NULL)");
        err_export(err, &e);
        return -1;
    }
    *json = NULL;
    probe_result res[N_PROBES], sandbox;
    for (size_t i = 0; i < N_PROBES; i++) {
        if (probes[i].in_process) {
            res[i] = (probe_result){0};
            probes[i].fn(&res[i]);
        } else {
            run_bounded(probes[i].fn, &res[i]);
        }
    }
    sandbox = (probe_result){0};
    probe_default_sandbox(&sandbox);
    if (CORDON_BENCHMARK_BUILD) { /* whatever the probes found, this build cannot sandbox */
        sandbox.ok = 0;
        say(sandbox.detail, sizeof sandbox.detail,
            "this cordon is a benchmark build (%s): it is NOT a sandbox; build it again without those options",
            CORDON_BENCHMARK_WHAT);
    }

    json_t *o = json_object();
    json_object_set_new(o, "default_sandbox", json_boolean(sandbox.ok));
    json_object_set_new(o, "error", sandbox.ok ? json_null() : json_string(sandbox.detail));
    /* how it ran: the namespace sandbox, the same with the container's /proc, or Landlock */
    json_object_set_new(o, "mode", sandbox.ok ? json_string(sandbox.word) : json_null());
    json_object_set_new(o, "mode_detail", sandbox.ok ? json_string(sandbox.detail) : json_null());
    json_object_set_new(o, "mode_fix", jstr_or_null(sandbox.fix));
    json_t *checks = json_object();
    for (size_t i = 0; i < N_PROBES; i++) {
        json_t *c = json_object();
        json_object_set_new(c, "ok", json_boolean(res[i].ok));
        json_object_set_new(c, "required", json_boolean(probes[i].required));
        json_object_set_new(c, "detail", jstr_or_null(res[i].detail));
        json_object_set_new(c, "fix", jstr_or_null(res[i].fix));
        if (probes[i].value_key)
            json_object_set_new(c, probes[i].value_key, json_integer(res[i].value));
        if (res[i].word)
            json_object_set_new(c, "mechanism", json_string(res[i].word));
        json_object_set_new(c, "title", json_string(probes[i].title));
        json_object_set_new(checks, probes[i].key, c);
    }
    json_object_set_new(o, "checks", checks);
    *json = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (!*json) {
        err_set(&e, CORDON_STAGE_SUPERVISE, ENOMEM, "cordon_check: out of memory");
        err_export(err, &e);
        return -1;
    }
    if (err)
        err_clear(err);
    return sandbox.ok ? 1 : 0;
}

void cordon_free(void *p)
{
    free(p);
}
