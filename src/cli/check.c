/* `cordon check [--json]`: what this host supports, what the default sandbox needs, and
 * for each missing piece the fix.
 *
 * Every probe runs in a child process that is killed after PROBE_MS: a probe must never
 * hang `cordon check` (a stale NFS or autofs mount, a wedged FUSE daemon).  The probes
 * are one table: a new one is a function and a row. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/magic.h>
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
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "confine/landlock.h"
#include "confine/seccomp.h"

#define PROBE_MS 500

typedef struct probe_result {
    int ok;           /* 1 works, 0 does not */
    int value;        /* a number some probes report (the Landlock ABI) */
    char detail[512]; /* what was found */
    char fix[512];    /* how to get it, when it does not work */
} probe_result;

typedef void (*probe_fn)(probe_result *r);

typedef struct probe {
    const char *key;   /* JSON key */
    const char *title; /* text output */
    bool required;     /* the default sandbox needs it */
    probe_fn fn;
    const char *value_key; /* JSON key of `value`, or NULL */
} probe;

static void say(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(char *buf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof((probe_result *)0)->detail, fmt, ap);
    va_end(ap);
}

static long read_long(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[32];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return strtol(buf, NULL, 10);
}

static int read_text(const char *path, char *buf, size_t size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, size - 1);
    int e = errno;
    close(fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    return 0;
}

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    errno = e;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The calling process's seccomp mode: 2 when a filter (a container's) is on it. */
static int own_seccomp_mode(void)
{
    char buf[4096];
    if (read_text("/proc/self/status", buf, sizeof buf) < 0)
        return -1;
    const char *s = strstr(buf, "\nSeccomp:");
    return s ? atoi(s + 9) : -1;
}

/* Enter a new user and mount namespace with the caller's ids mapped, as cordon does. */
static int enter_userns(int *err_step)
{
    uid_t uid = geteuid();
    gid_t gid = getegid();
    *err_step = 0;
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
        return -1;
    char map[64];
    *err_step = 1;
    if (write_text("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
        return -1;
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if (write_text("/proc/self/uid_map", map) < 0)
        return -1;
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    if (write_text("/proc/self/gid_map", map) < 0)
        return -1;
    *err_step = 2;
    return 0;
}

/* --- probes (each runs in its own child process) ----------------------------------- */

static void probe_userns(probe_result *r)
{
    int step;
    int rc = enter_userns(&step);
    int e = errno;
    if (rc == 0) {
        /* Ubuntu's AppArmor restriction lets the namespace be created but takes the
         * capabilities inside away: only a mount shows it. */
        int fs = (int)syscall(SYS_fsopen, "tmpfs", 0);
        if (fs >= 0 && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0) {
            r->ok = 1;
            say(r->detail, "%s user namespaces work (and mounting inside them)",
                geteuid() == 0 ? "root's" : "unprivileged");
            return;
        }
        e = errno;
        step = 3;
    }
    long clone_sysctl = read_long("/proc/sys/kernel/unprivileged_userns_clone");
    long max_ns = read_long("/proc/sys/user/max_user_namespaces");
    long apparmor = read_long("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    const char *steps[] = {"creating one", "writing its id maps", "", "mounting inside one"};
    say(r->detail, "user namespaces do not work here (%s: %s)", steps[step], strerror(e));
    if (clone_sysctl == 0)
        say(r->fix, "unprivileged user namespaces are disabled: sudo sysctl -w "
                    "kernel.unprivileged_userns_clone=1 (and persist it in /etc/sysctl.d)");
    else if (max_ns == 0 || e == ENOSPC || e == EUSERS)
        say(r->fix, "user.max_user_namespaces is %ld: sudo sysctl -w user.max_user_namespaces=15000", max_ns);
    else if (apparmor == 1)
        say(r->fix, "AppArmor restricts unprivileged user namespaces (Ubuntu 23.10 and later): install a "
                    "profile that allows `userns` for cordon, e.g. /etc/apparmor.d/cordon: `abi <abi/4.0>, "
                    "include <tunables/global> profile cordon /usr/local/bin/cordon flags=(unconfined) { "
                    "userns, }`, then sudo apparmor_parser -r /etc/apparmor.d/cordon");
    else if (own_seccomp_mode() == 2)
        say(r->fix, "a seccomp filter on cordon itself refuses them: inside a container this is its "
                    "profile (Docker's default); run the container with a profile that allows "
                    "clone/unshare with CLONE_NEWUSER (or --security-opt seccomp=unconfined)");
    else
        say(r->fix, "the kernel refused (%s); a kernel without CONFIG_USER_NS, or a security module, "
                    "forbids user namespaces here", strerror(e));
    size_t n = strlen(r->fix);
    snprintf(r->fix + n, sizeof r->fix - n,
             "; where that cannot be changed: cordon run --isolation landlock (no namespaces, weaker: "
             "doc/security.md)");
}

static void probe_seccomp(probe_result *r)
{
    cordon_error err = {0};
    const sc_program *p = seccomp_program(0);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_install(p, &err) < 0) {
        say(r->detail, "cordon's filter cannot be installed: %s", err.message[0] ? err.message : strerror(errno));
        say(r->fix, "a kernel with CONFIG_SECCOMP_FILTER is needed (every distribution kernel has it); "
                    "cordon never runs a command without its filter");
        return;
    }
    long rc = syscall(SYS_io_uring_setup, 0, NULL);
    if (rc >= 0 || errno != EPERM) {
        say(r->detail, "the filter loaded but did not refuse io_uring_setup");
        say(r->fix, "report this: the filter built for %s does not match this kernel", sc_arches);
        return;
    }
    r->ok = 1;
    say(r->detail, "cordon's filter loads and refuses what it should (%u instructions, for %s)", p->len,
        sc_arches);
}

static void probe_pidfd(probe_result *r)
{
    int pidfd = -1;
    struct clone_args args = {.flags = CLONE_PIDFD, .pidfd = (uint64_t)(uintptr_t)&pidfd, .exit_signal = SIGCHLD};
    long pid = syscall(SYS_clone3, &args, sizeof args);
    bool via_clone3 = !(pid < 0 && errno == ENOSYS);
    if (!via_clone3) /* a seccomp filter (cordon's, Docker's): as sandbox/ns.c */
        pid = syscall(SYS_clone, CLONE_PIDFD | SIGCHLD, 0UL, &pidfd, 0UL, 0UL);
    if (pid == 0)
        _exit(0);
    siginfo_t si;
    if (pid < 0 || waitid(P_PIDFD, (id_t)pidfd, &si, WEXITED) < 0) {
        say(r->detail, "%s: %s", pid < 0 ? "clone with CLONE_PIDFD" : "waitid(P_PIDFD)", strerror(errno));
        say(r->fix, errno == ENOSYS || errno == EINVAL
                        ? "Linux 5.4 or later is needed (pidfds supervise the sandbox)"
                        : "a seccomp filter on cordon itself refuses clone (a container's profile): "
                          "allow clone3 or clone with CLONE_PIDFD");
        return;
    }
    r->ok = 1;
    say(r->detail, "%s with CLONE_PIDFD and waitid(P_PIDFD) work", via_clone3 ? "clone3" : "clone (clone3 is refused)");
}

static void probe_landlock(probe_result *r)
{
    errno = 0;
    int abi = landlock_abi();
    r->value = abi;
    if (abi == 0) {
        bool disabled = errno == EOPNOTSUPP;
        say(r->detail, "no Landlock: %s; the namespaces still confine the filesystem",
            disabled ? "built in but disabled at boot" : "not in this kernel");
        say(r->fix, disabled ? "add landlock to the kernel's lsm= boot parameter (e.g. "
                               "lsm=landlock,lockdown,yama,integrity,apparmor,bpf) and reboot"
                             : "Linux 5.13 or later with CONFIG_SECURITY_LANDLOCK=y (6.12 or later to scope "
                               "abstract Unix sockets and signals)");
        return;
    }
    r->ok = 1;
    say(r->detail, "ABI %d: %s%s", abi, abi >= 6 ? "abstract Unix sockets and signals scoped" : "no scoping",
        abi >= 2 ? "; filesystem rules with --no-nested" : "; too old for filesystem rules (renames)");
    if (abi < 6)
        say(r->fix, "Linux 6.12 or later scopes abstract Unix sockets and signals (Landlock ABI 6)");
}

static void probe_overlay(probe_result *r)
{
    int step;
    if (enter_userns(&step) < 0) {
        say(r->detail, "cannot test: user namespaces do not work (%s)", strerror(errno));
        say(r->fix, "see user_namespaces");
        return;
    }
    int fs = (int)syscall(SYS_fsopen, "tmpfs", 0);
    int m = -1;
    if (fs >= 0 && syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
        m = (int)syscall(SYS_fsmount, fs, 0, 0);
    if (m < 0 || mkdirat(m, "l", 0755) < 0 || mkdirat(m, "u", 0755) < 0 || mkdirat(m, "w", 0755) < 0) {
        say(r->detail, "cannot test: no tmpfs in a user namespace (%s)", strerror(errno));
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
            say(r->detail, "a kernel overlay mounts in a user namespace%s",
                userxattr ? " (with userxattr)" : "");
            return;
        }
        e = errno;
        close(ov);
    }
    say(r->detail, "no overlayfs in a user namespace (%s)", strerror(e));
    say(r->fix, e == ENODEV ? "load the overlay module (sudo modprobe overlay); cordon workspace falls back "
                              "to fuse-overlayfs or a copy meanwhile"
                            : "Linux 5.11 or later mounts overlayfs in user namespaces; cordon workspace "
                              "falls back to fuse-overlayfs or a copy meanwhile");
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
        say(r->detail, "%s and /dev/fuse", bin);
        return;
    }
    if (!have)
        say(r->detail, "fuse-overlayfs is not installed%s", fd >= 0 ? "" : "; /dev/fuse cannot be opened");
    else
        say(r->detail, "%s is installed, but /dev/fuse cannot be opened (%s)", bin, strerror(e));
    if (!have)
        say(r->fix, "sudo apt-get install fuse-overlayfs (only needed where the kernel overlay is not)");
    else if (e == ENOENT)
        say(r->fix, "no /dev/fuse: sudo modprobe fuse; in a container, pass the device (--device /dev/fuse)");
    else
        say(r->fix, "/dev/fuse: %s; in a container, pass the device (--device /dev/fuse)", strerror(e));
}

static void probe_cgroup(probe_result *r)
{
    char self[4096];
    if (read_text("/proc/self/cgroup", self, sizeof self) < 0) {
        say(r->detail, "cannot read /proc/self/cgroup (%s)", strerror(errno));
        return;
    }
    const char *line = strstr(self, "0::");
    if (line != self && line && line[-1] != '\n')
        line = NULL;
    if (!line) {
        say(r->detail, "no cgroup v2 hierarchy (only cgroup v1)");
        say(r->fix, "boot with systemd.unified_cgroup_hierarchy=1 for cgroup v2; resource limits fall back "
                    "to rlimits");
        return;
    }
    char rel[2048];
    snprintf(rel, sizeof rel, "%.*s", (int)strcspn(line + 3, "\n"), line + 3);
    static const char *const mounts[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
    const char *mnt = NULL;
    for (size_t i = 0; i < 2 && !mnt; i++) {
        struct statfs sf;
        if (statfs(mounts[i], &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
            mnt = mounts[i];
    }
    if (!mnt) {
        say(r->detail, "cgroup v2 is not mounted at /sys/fs/cgroup");
        say(r->fix, "mount cgroup2 at /sys/fs/cgroup (systemd does); resource limits fall back to rlimits");
        return;
    }
    char dir[4096], file[4200], ctl[512] = "";
    snprintf(dir, sizeof dir, "%s%s", mnt, strcmp(rel, "/") == 0 ? "" : rel);
    snprintf(file, sizeof file, "%s/cgroup.controllers", dir);
    read_text(file, ctl, sizeof ctl);
    ctl[strcspn(ctl, "\n")] = '\0';
    bool writable = access(dir, W_OK) == 0;
    snprintf(file, sizeof file, "%s/cgroup.subtree_control", dir);
    writable = writable && access(file, W_OK) == 0;
    snprintf(file, sizeof file, "%s/cgroup.procs", dir);
    writable = writable && access(file, W_OK) == 0;
    bool memory = strstr(ctl, "memory") != NULL, pids = strstr(ctl, "pids") != NULL;
    if (writable && memory && pids) {
        r->ok = 1;
        say(r->detail, "%s is delegated to this user (controllers: %s)", dir, ctl);
        return;
    }
    say(r->detail, "%s %s; controllers available there: %s%s", dir,
        writable ? "is writable" : "is not writable by this user", ctl[0] ? ctl : "none",
        strcmp(mnt, "/sys/fs/cgroup/unified") == 0 ? " (a hybrid host: the controllers are cgroup v1's)" : "");
    if (!writable)
        say(r->fix, "run cordon in a delegated cgroup: systemd-run --user --scope -p Delegate=yes cordon run "
                    "...; resource limits fall back to rlimits meanwhile");
    else
        say(r->fix, "enable the memory and pids controllers for this cgroup (a cgroup v2 host: boot with "
                    "systemd.unified_cgroup_hierarchy=1); resource limits fall back to rlimits meanwhile");
}

static void probe_default_sandbox(probe_result *r)
{
    /* Run `true` as `cordon run --no-workspace --chdir /` would. */
    cordon_policy *p = cordon_policy_new();
    cordon_error err = {0};
    cordon_result res;
    char *const cmd[] = {(char *)"true", NULL};
    r->ok = cordon_policy_set_no_workspace(p, true, &err) == 0 && cordon_policy_set_cwd(p, "/", &err) == 0 &&
            cordon_run(p, cmd, &res, &err) == 0 && res.exit_code == 0;
    cordon_policy_free(p);
    if (r->ok)
        say(r->detail, "`true` runs in the default sandbox");
    else
        say(r->detail, "%s", err.message[0] ? err.message : "`true` did not exit 0 in the default sandbox");
}

/* What a host without user namespaces can still do: `true` under --isolation landlock. */
static void probe_landlock_isolation(probe_result *r)
{
    int abi = landlock_abi();
    cordon_network net = abi >= 4 ? CORDON_NETWORK_NONE : CORDON_NETWORK_HOST;
    cordon_policy *p = cordon_policy_new();
    cordon_error err = {0};
    cordon_result res;
    char *const cmd[] = {(char *)"true", NULL};
    r->ok = cordon_policy_set_isolation(p, CORDON_ISOLATION_LANDLOCK, &err) == 0 &&
            cordon_policy_set_network(p, net, &err) == 0 && cordon_policy_set_no_workspace(p, true, &err) == 0 &&
            cordon_policy_set_cwd(p, "/", &err) == 0 && cordon_run(p, cmd, &res, &err) == 0 && res.exit_code == 0;
    cordon_policy_free(p);
    if (r->ok && abi >= 4) {
        say(r->detail, "--isolation landlock works here, --network none included (Landlock ABI %d)%s", abi,
            abi >= 6 ? "" : "; signals and abstract Unix sockets are not scoped before ABI 6");
        if (abi < 6)
            say(r->fix, "Linux 6.12 or later scopes signals and abstract Unix sockets (Landlock ABI 6)");
    } else if (r->ok) {
        r->ok = 0;
        say(r->detail, "--isolation landlock works with --network host only (Landlock ABI %d)", abi);
        say(r->fix, "Linux 6.7 or later (Landlock ABI 4) refuses TCP for --network none");
    } else {
        say(r->detail, "%s", err.message[0] ? err.message : "`true` did not exit 0 under --isolation landlock");
        say(r->fix, "Linux 5.13 or later with Landlock enabled (lsm=...,landlock)");
    }
}

static const probe probes[] = {
    {"user_namespaces", "user namespaces", true, probe_userns, NULL},
    {"seccomp", "seccomp", true, probe_seccomp, NULL},
    {"pidfd", "pidfd", true, probe_pidfd, NULL},
    {"landlock", "Landlock", false, probe_landlock, "abi"},
    {"overlayfs", "overlayfs in userns", false, probe_overlay, NULL},
    {"fuse_overlayfs", "fuse-overlayfs", false, probe_fuse_overlayfs, NULL},
    {"cgroup_delegation", "cgroup v2 delegation", false, probe_cgroup, NULL},
    {"landlock_isolation", "--isolation landlock", false, probe_landlock_isolation, NULL},
};
#define N_PROBES (sizeof probes / sizeof probes[0])

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Run fn in a child; kill it if it has not answered after PROBE_MS. */
static void run_bounded(probe_fn fn, probe_result *out)
{
    *out = (probe_result){0};
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        say(out->detail, "cannot run the probe (pipe: %s)", strerror(errno));
        return;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        say(out->detail, "cannot run the probe (fork: %s)", strerror(errno));
        close(p[0]);
        close(p[1]);
        return;
    }
    if (pid == 0) {
        close(p[0]);
        /* A probe that hangs dies with cordon too. */
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        probe_result r = {0};
        fn(&r);
        ssize_t w = write(p[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
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
        kill(pid, SIGKILL);
        say(out->detail, "the probe did not answer within %d ms (a hung mount or device?)", PROBE_MS);
    }
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    out->detail[sizeof out->detail - 1] = '\0';
    out->fix[sizeof out->fix - 1] = '\0';
}

static json_t *jstr_or_null(const char *s)
{
    return s && *s ? json_string(s) : json_null();
}

int cmd_check(int argc, char **argv)
{
    bool json = false;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            help_check(stdout);
            return 0;
        } else {
            fprintf(stderr, "cordon: check: unknown option '%s'; see `cordon help check`\n", argv[i]);
            return CORDON_EXIT_SETUP;
        }
    }
    probe_result res[N_PROBES], sandbox;
    for (size_t i = 0; i < N_PROBES; i++)
        run_bounded(probes[i].fn, &res[i]);
    run_bounded(probe_default_sandbox, &sandbox);
    int code = sandbox.ok ? 0 : 1;

    if (json) {
        json_t *o = json_object();
        json_object_set_new(o, "default_sandbox", json_boolean(sandbox.ok));
        json_object_set_new(o, "error", sandbox.ok ? json_null() : json_string(sandbox.detail));
        json_t *checks = json_object();
        for (size_t i = 0; i < N_PROBES; i++) {
            json_t *c = json_object();
            json_object_set_new(c, "ok", json_boolean(res[i].ok));
            json_object_set_new(c, "required", json_boolean(probes[i].required));
            json_object_set_new(c, "detail", jstr_or_null(res[i].detail));
            json_object_set_new(c, "fix", jstr_or_null(res[i].fix));
            if (probes[i].value_key)
                json_object_set_new(c, probes[i].value_key, json_integer(res[i].value));
            json_object_set_new(checks, probes[i].key, c);
        }
        json_object_set_new(o, "checks", checks);
        char *text = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(o);
        if (!text) {
            fprintf(stderr, "cordon: check: out of memory\n");
            return CORDON_EXIT_SETUP;
        }
        printf("%s\n", text);
        free(text);
        return code;
    }
    printf("default sandbox: %s\n", sandbox.ok ? "works" : "does not work here");
    if (!sandbox.ok)
        printf("  %s\n", sandbox.detail);
    for (size_t i = 0; i < N_PROBES; i++) {
        const char *mark = res[i].ok ? "ok" : probes[i].required ? "FAIL" : "no";
        printf("  %-5s %-22s %s\n", mark, probes[i].title, res[i].detail);
        if (res[i].fix[0])
            printf("  %-5s %-22s fix: %s\n", "", "", res[i].fix);
    }
    return code;
}
