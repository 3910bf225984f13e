// SPDX-License-Identifier: Apache-2.0
/* cordon_bwrap_main(): bwrap's command line in, a cordon run out (bwrap.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "bwrap/bwrap.h"
#include "lib/forward.h"
#include "policy/policy.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/path.h"
#include "util/strv.h"
#include "util/trace.h"

extern char **environ;

#define BWRAP_NAME "bwrap"
/* cordon's protections off (doc/bwrap.md): read once, at start, from this process's
 * environment, never passed on to the command's */
#define EXACT_ENV "CORDON_BWRAP_EXACT"
/* The bubblewrap release whose options `--help` lists (no --argv0, which came in 0.9):
 * a caller that asks --version sees the same interface as --help shows. */
#define BWRAP_COMPAT_VERSION "0.8.0"

bool cordon_bwrap_is_name(const char *argv0)
{
    if (!argv0)
        return false;
    const char *slash = strrchr(argv0, '/');
    return strcmp(slash ? slash + 1 : argv0, BWRAP_NAME) == 0;
}

/* bw_host.src_type on the real host: following symlinks, as bwrap opens sources; the file
 * opened once (O_PATH, so that no device is opened for it) and then asked through that
 * descriptor, so that the type and the entries read are of one and the same file. */
static bw_src_type host_src_type(const char *path, void *ctx)
{
    (void)ctx;
    struct stat st;
    _cleanup_fd_ int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? BW_SRC_MISSING : BW_SRC_OTHER;
    if (fstat(fd, &st) < 0)
        return BW_SRC_OTHER;
    if (S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 3))
        return BW_SRC_DEVNULL;
    if (!S_ISDIR(st.st_mode))
        return BW_SRC_OTHER;
    int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    _cleanup_dir_ DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
    if (!d) {
        if (dfd >= 0)
            (void)close(dfd); /* (a directory opened to read: nothing to flush) */
        return BW_SRC_OTHER;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            return BW_SRC_OTHER;
    return BW_SRC_EMPTY_DIR;
}

/* bw_host.exists: as src_type's open (following symlinks), nothing listed */
static bool host_exists(const char *path, void *ctx)
{
    (void)ctx;
    _cleanup_fd_ int fd = open(path, O_PATH | O_CLOEXEC);
    return fd >= 0 || (errno != ENOENT && errno != ENOTDIR);
}

/* The command's environment: this process's, changed by --setenv, --unsetenv and
 * --clearenv in their order, as bwrap passes it.  Without CORDON_BWRAP_EXACT (unless a
 * --setenv puts it back): a bwrap the command runs in turn (cordon again, through the
 * same PATH) keeps its protections unless its own caller turns them off. */
static void build_env(const bw_args *a, strv *out)
{
    for (char *const *e = environ; e && *e; e++)
        if (strncmp(*e, "PWD=", 4) != 0 && strncmp(*e, EXACT_ENV "=", sizeof EXACT_ENV) != 0)
            strv_push(out, xstrdup(*e));
    for (size_t i = 0; i < a->n_env; i++) {
        const bw_env *v = &a->env[i];
        size_t nl = v->name ? strlen(v->name) : 0, w = 0;
        for (size_t k = 0; k < out->n; k++) {
            bool drop = v->kind == BW_ENV_CLEAR || (v->name && strncmp(out->v[k], v->name, nl) == 0 &&
                                                    (out->v[k][nl] == '=' || out->v[k][nl] == '\0'));
            if (drop)
                free(out->v[k]);
            else
                out->v[w++] = out->v[k];
        }
        out->n = w;
        if (v->kind == BW_ENV_SET)
            strv_push(out, xasprintf("%s=%s", v->name, v->value));
    }
}

/* Is `dir` shown by the plan?  The longest rule at or above it says; else the base. */
static bool plan_shows(const bw_plan *p, const char *dir)
{
    size_t best = 0;
    bool shown = p->base == CORDON_BASE_HOST;
    for (size_t i = 0; i < p->n_rules; i++) {
        size_t l = strlen(p->rules[i].path);
        if (!p->rules[i].target && !p->rules[i].data && !p->rules[i].host_mkdir &&
            path_has_prefix(dir, p->rules[i].path) && l >= best) {
            best = l;
            shown = p->rules[i].tmpfs ? strcmp(dir, p->rules[i].path) == 0 : p->rules[i].access != CORDON_ACCESS_NONE;
        }
    }
    return shown;
}

/* CORDON_BWRAP_EXACT=1: bubblewrap makes a missing mount point where it mounts, on the host
 * when the place is a writable bind (a file of mode 0444 for /dev/null, else a directory,
 * and the directories above it); cordon's creation control, which holds such names, is
 * off then.
 * Only below the host path a writable rule shows (`top`, which exists), one component at
 * a time without following a symlink.  0, or -1 with msg. */
static int make_mount_point(const char *top, const char *path, bool file, char *msg, size_t n)
{
    _cleanup_fd_ int dir = open_no_symlinks(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return snprintf(msg, n, "Can't open %s: %s", top, strerror(errno)), -1;
    const char *rest = path + strlen(top);
    char name[NAME_MAX + 1];
    while (path_next_name(&rest, name) > 0) {
        bool last = *rest == '\0';
        int fd;
        if (last && file) {
            fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
            if (fd < 0 && errno != EEXIST)
                return snprintf(msg, n, "Can't create file at %s: %s", path, strerror(errno)), -1;
            if (fd >= 0)
                (void)close(fd); /* (empty, nothing written: nothing a close could lose) */
            return 0;
        }
        if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST)
            return snprintf(msg, n, "Can't mkdir %s: %s", path, strerror(errno)), -1;
        fd = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
            return snprintf(msg, n, "Can't open %s: %s", path, strerror(errno)), -1;
        (void)close(dir); /* (an O_PATH descriptor: nothing to flush) */
        dir = fd;
    }
    return 0;
}

/* The mount points bubblewrap would make on the host (make_mount_point), for the hides and
 * tmpfs mounts whose path is missing below a writable rule. */
/* The rule that shows the place of rules[i]: the longest other one above its path (not a
 * symlink), or NULL (the root). */
static const bw_rule *rule_above(const bw_plan *plan, size_t i)
{
    const bw_rule *r = &plan->rules[i], *above = NULL;
    for (size_t k = 0; k < plan->n_rules; k++)
        if (k != i && !plan->rules[k].target && !plan->rules[k].data && !plan->rules[k].host_mkdir &&
            strcmp(plan->rules[k].path, r->path) != 0 && path_has_prefix(r->path, plan->rules[k].path) &&
            (!above || strlen(plan->rules[k].path) > strlen(above->path)))
            above = &plan->rules[k];
    return above;
}

/* Is rules[i] in a host directory that a writable rule shows (where bubblewrap makes its
 * mount points and symlinks on the host)? */
static bool in_writable_host_dir(const bw_plan *plan, size_t i)
{
    const bw_rule *above = rule_above(plan, i);
    return above && above->access == CORDON_ACCESS_WRITE && !above->tmpfs;
}

/* --symlink in a writable host directory, as bubblewrap makes it: on the host, where a
 * symlink of that target may already be. */
static int make_symlink(const char *path, const char *target, char *msg, size_t n)
{
    _cleanup_free_ char *parent = xstrdup(path);
    const char *name = strrchr(path, '/') + 1;
    path_to_parent(parent);
    _cleanup_fd_ int dir = open_no_symlinks(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return snprintf(msg, n, "Can't open %s: %s", parent, strerror(errno)), -1;
    if (symlinkat(target, dir, name) == 0)
        return 0;
    char cur[4096];
    ssize_t l = errno == EEXIST ? readlinkat(dir, name, cur, sizeof cur - 1) : -1;
    if (l >= 0 && (size_t)l == strlen(target) && memcmp(cur, target, (size_t)l) == 0)
        return 0;
    return snprintf(msg, n, "Can't make symlink at %s: %s", path, strerror(errno ? errno : EEXIST)), -1;
}

static int make_mount_points(const bw_plan *plan, char *msg, size_t n)
{
    for (size_t i = 0; i < plan->n_rules; i++) {
        const bw_rule *r = &plan->rules[i];
        struct stat st;
        if (r->target) {
            if (in_writable_host_dir(plan, i) && make_symlink(r->path, r->target, msg, n) < 0)
                return -1;
            continue;
        }
        if (r->host_mkdir) {
            if (make_mount_point(rule_above(plan, i)->path, r->path, false, msg, n) < 0)
                return -1;
            continue;
        }
        if ((r->access != CORDON_ACCESS_NONE && !r->tmpfs) || r->data || lstat(r->path, &st) == 0)
            continue;
        if (in_writable_host_dir(plan, i) && make_mount_point(rule_above(plan, i)->path, r->path, r->file, msg, n) < 0)
            return -1;
    }
    return 0;
}

static int apply(const bw_args *a, const bw_plan *plan, bool exact, cordon_policy *p, cordon_error *err)
{
    /* bubblewrap's sandbox is namespaces, never Landlock alone: no probe of the kernel
     * per run (--isolation auto asks in a child process), a failure as bwrap's where
     * user namespaces do not work */
    if (cordon_policy_set_isolation(p, CORDON_ISOLATION_NAMESPACES, err) < 0 ||
        cordon_policy_set_no_workspace(p, true, err) < 0 || cordon_policy_set_base(p, plan->base, err) < 0 ||
        cordon_policy_set_private_dirs(p, false, err) < 0 || cordon_policy_set_network(p, plan->network, err) < 0 ||
        cordon_policy_set_proc(p, plan->proc, err) < 0 || policy_set_keep_caps(p, a->caps, err) < 0 ||
        (a->hostname && policy_set_hostname(p, a->hostname, err) < 0) ||
        (a->disable_userns && cordon_policy_set_no_nested(p, true, err) < 0))
        return -1;
    for (size_t i = 0; i < plan->n_rules; i++) {
        const bw_rule *r = &plan->rules[i];
        if (r->target && exact && in_writable_host_dir(plan, i))
            continue; /* made on the host (make_mount_points): the view shows it */
        if (r->host_mkdir && exact)
            continue; /* made on the host too */
        if (r->host_mkdir)
            return err_set(err, CORDON_STAGE_USAGE, 0,
                           "--dir %s: cordon's bwrap makes no directory in a host directory (bwrap would make it "
                           "on the host); make it first, or use --tmpfs, or set CORDON_BWRAP_EXACT=1",
                           r->path);
        if (r->target  ? cordon_policy_add_symlink(p, r->path, r->target, err) < 0
            : r->data  ? policy_add_file(p, r->path, r->data, r->mode, err) < 0
            : r->tmpfs ? cordon_policy_add_tmpfs(p, r->path, r->mode, r->size, err) < 0
                       : cordon_policy_add_path(p, r->path, r->access, r->why, err) < 0)
            return -1;
    }
    /* bwrap stays in the caller's directory where the sandbox shows it, else "/" */
    char cwd[4096];
    _cleanup_free_ char *norm = getcwd(cwd, sizeof cwd) ? path_normalize(cwd) : NULL;
    /* a relative --chdir: bwrap changes to it from the new root's "/" */
    _cleanup_free_ char *chdir_abs = a->chdir && a->chdir[0] != '/' ? xasprintf("/%s", a->chdir) : NULL;
    const char *dir = chdir_abs ? chdir_abs : a->chdir ? a->chdir : norm && plan_shows(plan, norm) ? norm : "/";
    if ((a->chdir || dir != norm) && cordon_policy_set_cwd(p, dir, err) < 0)
        return -1;
    strv env = {0};
    build_env(a, &env);
    /* and says where it is, as bwrap does */
    strv_push(&env, xasprintf("PWD=%s", dir));
    int r = cordon_policy_set_clear_env(p, true, err);
    for (size_t i = 0; r == 0 && i < env.n; i++)
        r = cordon_policy_set_env(p, env.v[i], err);
    strv_free(&env);
    return r;
}

/* The pid a pidfd refers to, in this process's PID namespace (its fdinfo), or -1. */
static long pidfd_pid(int pidfd)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
    _cleanup_fd_ int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = strstr(buf, "\nPid:");
    return p ? strtol(p + 5, NULL, 10) : -1;
}

/* bwrap's description of the sandbox: the child's pid (cordon's PID 1, where bwrap's own
 * child is) and the namespaces it has that this process has not, in bwrap's order and
 * spelling: --info-fd's multi-line document (`multiline`), or --json-status-fd's
 * line. */
static int write_info(int fd, long pid, bool multiline)
{
    static const char *const ns[] = {"cgroup", "ipc", "mnt", "net", "pid", "uts"};
    char doc[1024];
    const char *sep = multiline ? ",\n    " : ", ";
    int len = snprintf(doc, sizeof doc, "%s\"child-pid\": %ld", multiline ? "{\n    " : "{ ", pid);
    for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
        char mine[64], theirs[64];
        struct stat a, b;
        snprintf(mine, sizeof mine, "/proc/self/ns/%s", ns[i]);
        snprintf(theirs, sizeof theirs, "/proc/%ld/ns/%s", pid, ns[i]);
        if (stat(theirs, &b) == 0 && stat(mine, &a) == 0 && a.st_ino != b.st_ino)
            len += snprintf(doc + len, sizeof doc - (size_t)len, "%s\"%s-namespace\": %llu", sep, ns[i],
                            (unsigned long long)b.st_ino);
    }
    len += snprintf(doc + len, sizeof doc - (size_t)len, "%s", multiline ? "\n}\n" : " }\n");
    return write_all(fd, doc, (size_t)len);
}

/* Run the command with this process's stdin, stdout and stderr, forwarding the signals
 * a terminal or a supervisor sends to it, as a main() does (lib/forward.h). */
static int run_forwarding(const cordon_policy *pol, const bw_args *a, cordon_result *res, cordon_error *err)
{
    cordon_proc *c;
    if (cordon_spawn(pol, a->command, CORDON_SPAWN_STDIN_INHERIT, &c, err) < 0)
        return -1;
    /* --info-fd, --json-status-fd: as bwrap writes them once the sandbox exists (a
     * caller that closed its end is no reason to stop the command: bwrap goes on too) */
    if (a->info_fd >= 0 || a->json_status_fd >= 0) {
        long pid = pidfd_pid(cordon_proc_exit_fd(c));
        if (a->info_fd >= 0) {
            (void)write_info(a->info_fd, pid, true);
            (void)close(a->info_fd);
        }
        if (a->json_status_fd >= 0)
            (void)write_info(a->json_status_fd, pid, false);
    }
    return proc_wait_forwarding(c, res, err);
}

/* "bwrap: MSG" on stderr, after "<3>" with --level-prefix (bwrap's syslog level of an
 * error) */
static void say(bool level_prefix, const char *msg)
{
    fprintf(stderr, "%sbwrap: %s\n", level_prefix ? "<3>" : "", msg);
}

static void print_error(bool level_prefix, const cordon_error *err)
{
    char text[2048];
    cordon_error_text(err, text, sizeof text);
    say(level_prefix, text[0] ? text : "unknown error");
}

/* --block-fd: wait until FD has data (or its end), as bwrap does before the command. */
static void block_on(int fd)
{
    char b;
    while (read(fd, &b, 1) < 0 && errno == EINTR)
        ;
}

/* --lock-file DEST: a read lock on the file the sandbox shows at DEST (a host path, which
 * cordon's view shows at the same path), held by this process until the command ends. */
static int lock_file(const bw_plan *plan, const char *dest, char *msg, size_t n)
{
    _cleanup_free_ char *norm = path_normalize(dest);
    _cleanup_free_ char *dir = xstrdup(norm);
    path_to_parent(dir);
    if (!plan_shows(plan, dir))
        return snprintf(msg, n, "Can't lock file %s: No such file or directory", dest), -1;
    int fd = open(norm, O_RDONLY | O_CLOEXEC);
    struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    if (fd < 0 || fcntl(fd, F_SETLKW, &l) < 0) {
        int e = errno;
        if (fd >= 0)
            (void)close(fd); /* (read only) */
        return snprintf(msg, n, "Can't lock file %s: %s", dest, strerror(e)), -1;
    }
    return 0; /* (the descriptor stays open, close-on-exec, until this process ends) */
}

static void print_refusals(const cordon_result *res)
{
    const char *r = res->refusals;
    for (unsigned i = 0; i < res->n_refusals; i++) {
        fprintf(stderr, "cordon: refused %s\n", r);
        r += strlen(r) + 1;
    }
    if (res->refused > res->n_refusals)
        fprintf(stderr, "cordon: ... and %lu more refused calls\n", res->refused - res->n_refusals);
}

int cordon_bwrap_main(int argc, char *const argv[])
{
    TRACE("bwrap-main");
    /* read once: the one switch of this personality (doc/bwrap.md) */
    const char *exact_env = getenv(EXACT_ENV);
    bool exact = exact_env && strcmp(exact_env, "1") == 0;
    if (argc < 2) {
        bw_help(stderr, argv[0]);
        return BW_EXIT_FAIL;
    }
    char msg[1024];
    bw_args a;
    if (bw_parse_args(argc, argv, &a, msg, sizeof msg) < 0) {
        bool lp = false; /* (--level-prefix given before the fault) */
        for (int i = 1; i < argc && strcmp(argv[i], "--") != 0; i++)
            lp |= strcmp(argv[i], "--level-prefix") == 0;
        say(lp, msg);
        return BW_EXIT_FAIL;
    }
    const bool lp = a.level_prefix;
    if (a.help || a.version) {
        if (a.help)
            bw_help(stdout, argv[0]);
        else
            printf("bubblewrap %s (cordon %s)\n", BWRAP_COMPAT_VERSION, cordon_version());
        bw_args_free(&a);
        return fflush(stdout) == 0 ? 0 : BW_EXIT_FAIL;
    }
    bw_host host = {.src_type = host_src_type, .exists = host_exists};
    bw_plan plan;
    if (bw_map(&a, &host, &plan, msg, sizeof msg) < 0) {
        say(lp, msg);
        bw_args_free(&a);
        return BW_EXIT_FAIL;
    }
    /* --die-with-parent: this process dies with its parent, and the sandbox with it
     * (cordon's PID 1 dies with cordon) */
    if (a.die_with_parent) {
        pid_t parent = getppid();
        errno = 0; /* (a stat above may have left one: "the parent is gone" is no errno) */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent) {
            snprintf(msg, sizeof msg, "--die-with-parent: %s", errno ? strerror(errno) : "the parent is gone");
            say(lp, msg);
            bw_plan_free(&plan);
            bw_args_free(&a);
            return BW_EXIT_FAIL;
        }
    }
    cordon_error err = CORDON_ERROR_INIT;
    cordon_result res = CORDON_RESULT_INIT;
    cordon_policy *p = cordon_policy_new();
    int code = BW_EXIT_FAIL;
    int locked = 0;
    for (size_t i = 0; !a.explain && i < a.n_lock_files && locked == 0; i++)
        locked = lock_file(&plan, a.lock_files[i], msg, sizeof msg);
    if (locked < 0) {
        say(lp, msg);
    } else if (exact && !a.explain && make_mount_points(&plan, msg, sizeof msg) < 0) {
        say(lp, msg);
    } else if ((exact && cordon_policy_set_protections(p, false, &err) < 0) || apply(&a, &plan, exact, p, &err) < 0) {
        print_error(lp, &err);
    } else if (a.explain) {
        char *text = NULL;
        code = cordon_explain(p, a.command, 0, &text, &err) < 0 ? BW_EXIT_FAIL : 0;
        if (text) {
            fputs(text, stdout);
            cordon_free(text);
        }
        if (code)
            print_error(lp, &err);
    } else {
        if (a.block_fd >= 0)
            block_on(a.block_fd);
        if (run_forwarding(p, &a, &res, &err) < 0) {
            print_error(lp, &err);
            print_refusals(&res);
        } else {
            print_refusals(&res);
            code = res.exit_code;
            if (a.json_status_fd >= 0) {
                char line[64];
                int l = snprintf(line, sizeof line, "{ \"exit-code\": %d }\n", code);
                (void)write_all(a.json_status_fd, line, (size_t)l); /* (as above) */
            }
        }
    }
    cordon_result_free(&res);
    cordon_policy_free(p);
    bw_plan_free(&plan);
    bw_args_free(&a);
    TRACE("bwrap-done");
    return code;
}
