// SPDX-License-Identifier: Apache-2.0
/* bwrap's command line (bubblewrap 0.8-0.11's manual, bwrap(1)): every option is in the
 * table below, either implemented or refused with its name; none is ignored. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bwrap/bwrap.h"
#include "util/strv.h"

typedef enum bw_opt {
    O_HELP,
    O_VERSION,
    O_UNSHARE_NS, /* a namespace cordon always makes: accepted */
    O_UNSHARE_NET,
    O_UNSHARE_UTS,
    O_UNSHARE_ALL,
    O_SHARE_NET,
    O_CHDIR,
    O_SETENV,
    O_UNSETENV,
    O_CLEARENV,
    O_BIND,
    O_RO_BIND,
    O_BIND_TRY,
    O_RO_BIND_TRY,
    O_REMOUNT_RO,
    O_TMPFS,
    O_DEV,
    O_PROC,
    O_PERMS,
    O_SIZE,
    O_NEW_SESSION, /* cordon always starts a new session */
    O_DIE_WITH_PARENT,
    O_AS_PID_1, /* accepted: cordon's own PID 1 supervises (doc/bwrap.md) */
    O_CAP_DROP, /* --cap-drop, --cap-add: the set, in order; only CAP_SETFCAP can stay */
    O_CAP_ADD,
    O_ARGS, /* --args FD: NUL-separated arguments read in place of the option */
    O_SYMLINK,
    O_INFO_FD, /* --info-fd, --json-status-fd: bwrap's JSON documents (main.c) */
    O_JSON_FD,
    O_DIR,
    O_FILE, /* --file, --bind-data, --ro-bind-data FD DEST */
    O_BIND_DATA,
    O_RO_BIND_DATA,
    O_CHMOD,
    O_HOSTNAME,
    O_UID, /* --uid, --gid: only the caller's own (doc/bwrap.md) */
    O_GID,
    O_LEVEL_PREFIX,
    O_LOCK_FILE,
    O_SYNC_FD,
    O_BLOCK_FD,
    O_DISABLE_USERNS,
    O_EXPLAIN, /* cordon's own: print the plan, run nothing */
    O_REFUSED,
} bw_opt;

typedef struct opt_def {
    const char *name;
    int nargs;
    bw_opt what;
    const char *help_args; /* NULL: not listed by --help (refused) */
    const char *help;
} opt_def;

/* Every option of bwrap(1), 0.8 to 0.11. */
static const opt_def opts[] = {
    {"--help", 0, O_HELP, "", "Print this help"},
    {"--version", 0, O_VERSION, "", "Print version"},
    {"--args", 1, O_ARGS, "FD", "Parse NUL-separated args from FD"},
    {"--argv0", 1, O_REFUSED, NULL, NULL},
    {"--level-prefix", 0, O_LEVEL_PREFIX, "", "Prepend e.g. <3> to diagnostic messages"},
    {"--unshare-all", 0, O_UNSHARE_ALL, "", "Unshare every namespace we support by default"},
    {"--share-net", 0, O_SHARE_NET, "", "Retain the network namespace (can only combine with --unshare-all)"},
    {"--unshare-user", 0, O_UNSHARE_NS, "", "Create new user namespace (may be automatically implied if not setuid)"},
    {"--unshare-user-try", 0, O_UNSHARE_NS, "", "Create new user namespace if possible else continue by skipping it"},
    {"--unshare-ipc", 0, O_UNSHARE_NS, "", "Create new ipc namespace"},
    {"--unshare-pid", 0, O_UNSHARE_NS, "", "Create new pid namespace"},
    {"--unshare-net", 0, O_UNSHARE_NET, "", "Create new network namespace"},
    {"--unshare-uts", 0, O_UNSHARE_UTS, "", "Create new uts namespace"},
    {"--unshare-cgroup", 0, O_UNSHARE_NS, "", "Create new cgroup namespace"},
    {"--unshare-cgroup-try", 0, O_UNSHARE_NS, "",
     "Create new cgroup namespace if possible else continue by skipping it"},
    {"--userns", 1, O_REFUSED, NULL, NULL},
    {"--userns2", 1, O_REFUSED, NULL, NULL},
    {"--disable-userns", 0, O_DISABLE_USERNS, "", "Disable further use of user namespaces inside sandbox"},
    {"--assert-userns-disabled", 0, O_REFUSED, NULL, NULL},
    {"--pidns", 1, O_REFUSED, NULL, NULL},
    {"--uid", 1, O_UID, "UID", "Custom uid in the sandbox (your own only)"},
    {"--gid", 1, O_GID, "GID", "Custom gid in the sandbox (your own only)"},
    {"--hostname", 1, O_HOSTNAME, "NAME", "Custom hostname in the sandbox (requires --unshare-uts)"},
    {"--chdir", 1, O_CHDIR, "DIR", "Change directory to DIR"},
    {"--clearenv", 0, O_CLEARENV, "", "Unset all environment variables"},
    {"--setenv", 2, O_SETENV, "VAR VALUE", "Set an environment variable"},
    {"--unsetenv", 1, O_UNSETENV, "VAR", "Unset an environment variable"},
    {"--lock-file", 1, O_LOCK_FILE, "DEST", "Take a lock on DEST while sandbox is running"},
    {"--sync-fd", 1, O_SYNC_FD, "FD", "Keep this fd open while sandbox is running"},
    {"--bind", 2, O_BIND, "SRC DEST", "Bind mount the host path SRC on DEST (SRC = DEST)"},
    {"--bind-try", 2, O_BIND_TRY, "SRC DEST", "Equal to --bind but ignores non-existent SRC"},
    {"--dev-bind", 2, O_REFUSED, NULL, NULL},
    {"--dev-bind-try", 2, O_REFUSED, NULL, NULL},
    {"--ro-bind", 2, O_RO_BIND, "SRC DEST",
     "Bind mount the host path SRC readonly on DEST (SRC = DEST; /dev/null or an empty dir hides DEST)"},
    {"--ro-bind-try", 2, O_RO_BIND_TRY, "SRC DEST", "Equal to --ro-bind but ignores non-existent SRC"},
    {"--bind-fd", 2, O_REFUSED, NULL, NULL},
    {"--ro-bind-fd", 2, O_REFUSED, NULL, NULL},
    {"--remount-ro", 1, O_REMOUNT_RO, "DEST", "Remount DEST as readonly; does not recursively remount"},
    {"--overlay-src", 1, O_REFUSED, NULL, NULL},
    {"--overlay", 3, O_REFUSED, NULL, NULL},
    {"--tmp-overlay", 1, O_REFUSED, NULL, NULL},
    {"--ro-overlay", 1, O_REFUSED, NULL, NULL},
    {"--exec-label", 1, O_REFUSED, NULL, NULL},
    {"--file-label", 1, O_REFUSED, NULL, NULL},
    {"--proc", 1, O_PROC, "DEST", "Mount new procfs on DEST (/proc only)"},
    {"--dev", 1, O_DEV, "DEST", "Mount new dev on DEST (/dev only)"},
    {"--tmpfs", 1, O_TMPFS, "DEST", "Mount new tmpfs on DEST"},
    {"--mqueue", 1, O_REFUSED, NULL, NULL},
    {"--dir", 1, O_DIR, "DEST", "Create dir at DEST"},
    {"--file", 2, O_FILE, "FD DEST", "Copy from FD to file which is bind-mounted on DEST"},
    {"--bind-data", 2, O_BIND_DATA, "FD DEST", "Copy from FD to file which is bind-mounted on DEST"},
    {"--ro-bind-data", 2, O_RO_BIND_DATA, "FD DEST", "Copy from FD to file which is readonly bind-mounted on DEST"},
    {"--symlink", 2, O_SYMLINK, "SRC DEST", "Create symlink at DEST with target SRC (not in a host directory)"},
    {"--seccomp", 1, O_REFUSED, NULL, NULL},
    {"--add-seccomp-fd", 1, O_REFUSED, NULL, NULL},
    {"--block-fd", 1, O_BLOCK_FD, "FD", "Block on FD until some data to read is available"},
    {"--userns-block-fd", 1, O_REFUSED, NULL, NULL},
    {"--info-fd", 1, O_INFO_FD, "FD", "Write information about the running container to FD"},
    {"--json-status-fd", 1, O_JSON_FD, "FD", "Write container status to FD as multiple JSON documents"},
    {"--new-session", 0, O_NEW_SESSION, "", "Create a new terminal session"},
    {"--die-with-parent", 0, O_DIE_WITH_PARENT, "",
     "Kills with SIGKILL child process (COMMAND) when bwrap or bwrap's parent dies."},
    {"--as-pid-1", 0, O_AS_PID_1, "", "Accepted: cordon's own PID 1 supervises the command"},
    {"--cap-add", 1, O_CAP_ADD, "CAP", "Add cap CAP (CAP_SETFCAP only, without setxattr: doc/bwrap.md)"},
    {"--cap-drop", 1, O_CAP_DROP, "CAP", "Drop cap CAP when running as privileged user"},
    {"--perms", 1, O_PERMS, "OCTAL", "Set permissions of next argument (--bind-data, --file, etc.)"},
    {"--size", 1, O_SIZE, "BYTES", "Set size of next argument (only for --tmpfs)"},
    {"--chmod", 2, O_CHMOD, "OCTAL PATH", "Change permissions of PATH (made by an earlier option) to OCTAL"},
    {"--cordon-explain", 0, O_EXPLAIN, NULL, NULL},
};

/* libcap's names, by number (cap_from_name takes them in any case, and ALL) */
static const char *const cap_names[] = {
    "chown",
    "dac_override",
    "dac_read_search",
    "fowner",
    "fsetid",
    "kill",
    "setgid",
    "setuid",
    "setpcap",
    "linux_immutable",
    "net_bind_service",
    "net_broadcast",
    "net_admin",
    "net_raw",
    "ipc_lock",
    "ipc_owner",
    "sys_module",
    "sys_rawio",
    "sys_chroot",
    "sys_ptrace",
    "sys_pacct",
    "sys_admin",
    "sys_boot",
    "sys_nice",
    "sys_resource",
    "sys_time",
    "sys_tty_config",
    "mknod",
    "lease",
    "audit_write",
    "audit_control",
    "setfcap",
    "mac_override",
    "mac_admin",
    "syslog",
    "wake_alarm",
    "block_suspend",
    "audit_read",
    "perfmon",
    "bpf",
    "checkpoint_restore",
};
#define CAP_SETFCAP_BIT (1ULL << 31)

/* --cap-add/--cap-drop's CAP: its bit, all of them for ALL, or -1 (not a capability) */
static int parse_cap(const char *s, uint64_t *out)
{
    if (strcasecmp(s, "ALL") == 0)
        return *out = ~0ULL, 0;
    if (strncasecmp(s, "cap_", 4) == 0)
        for (size_t i = 0; i < sizeof cap_names / sizeof *cap_names; i++)
            if (strcasecmp(s + 4, cap_names[i]) == 0)
                return *out = 1ULL << i, 0;
    return -1;
}

static const opt_def *find_opt(const char *name)
{
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        if (strcmp(opts[i].name, name) == 0)
            return &opts[i];
    return NULL;
}

void bw_help(FILE *out, const char *argv0)
{
    fprintf(out, "usage: %s [OPTIONS...] [--] COMMAND [ARGS...]\n\n", argv0 && *argv0 ? argv0 : "bwrap");
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
        if (!opts[i].help_args)
            continue;
        char left[64];
        snprintf(left, sizeof left, "%s%s%s", opts[i].name, opts[i].help_args[0] ? " " : "", opts[i].help_args);
        fprintf(out, "    %-28s %s\n", left, opts[i].help);
    }
}

int bw_fail(char *msg, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, n, fmt, ap);
    va_end(ap);
    return -1;
}

static bw_op *add_op(bw_args *a, bw_op_kind kind, const char *option)
{
    grow(&a->ops, &a->cap_ops, a->n_ops + 1, sizeof *a->ops);
    bw_op *op = &a->ops[a->n_ops++];
    *op = (bw_op){.kind = kind, .option = option, .perms = -1};
    return op;
}

static void add_env(bw_args *a, bw_env_kind kind, const char *name, const char *value)
{
    grow(&a->env, &a->cap_env, a->n_env + 1, sizeof *a->env);
    a->env[a->n_env++] = (bw_env){.kind = kind, .name = name, .value = value};
}

/* bwrap's numbers (--perms, --size, FD arguments): digits only in `base`, at most `max`
 * (strtoull alone would also take blanks and a sign, and wrap a negative number round). */
static int parse_number(const char *s, int base, unsigned long long max, unsigned long long *out)
{
    char *end;
    if (!s || s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, base);
    if (*end || errno || v > max)
        return -1;
    *out = v;
    return 0;
}

/* bwrap's --perms: an octal number of at most 07777. */
static int parse_perms(const char *s, int *out)
{
    unsigned long long v;
    if (parse_number(s, 8, 07777, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* bwrap's FD arguments: a decimal number, 0 or more. */
static int parse_fd(const char *s, int *out)
{
    unsigned long long v;
    if (parse_number(s, 10, INT_MAX, &v) < 0)
        return -1;
    *out = (int)v;
    return 0;
}

/* --args FD at vec[at]: the arguments read from FD (NUL-separated, as bwrap reads them:
 * a last one without its NUL counts too) replace vec[at] and vec[at + 1].  The buffer
 * stays in a->bufs, which the arguments point into. */
static int splice_args(bw_args *a, int *argc, int at, char *msg, size_t n)
{
    int fd;
    if (parse_fd(a->vec[at + 1], &fd) < 0)
        return bw_fail(msg, n, "Invalid fd: %s", a->vec[at + 1]);
    size_t len = 0, cap = 4096;
    char *buf = xmalloc(cap);
    for (;;) {
        if (len + 1 >= cap)
            buf = xrealloc(buf, cap *= 2);
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return bw_fail(msg, n, "Can't read --args data: %s", strerror(e));
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    strv_push(&a->bufs, buf);
    size_t k = 0;
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
        k++;
    char **v = xcalloc((size_t)*argc - 2 + k + 1, sizeof *v);
    memcpy(v, a->vec, (size_t)at * sizeof *v);
    size_t j = (size_t)at;
    for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
        v[j++] = buf + i;
    memcpy(v + j, a->vec + at + 2, (size_t)(*argc - at - 2) * sizeof *v);
    *argc = *argc - 2 + (int)k;
    free(a->vec);
    a->vec = v;
    return 0;
}

/* --file, --bind-data, --ro-bind-data: all of FD, as bwrap reads it, kept in a->bufs.
 * Text only: a NUL byte is refused (cordon writes the file from a string). */
static int read_data(bw_args *a, int fd, const char *option, const char *dest, const char **out, char *msg, size_t n)
{
    size_t len = 0, cap = 4096;
    char *buf = xmalloc(cap);
    for (;;) {
        if (len + 1 >= cap)
            buf = xrealloc(buf, cap *= 2);
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            return bw_fail(msg, n, "Can't read %s data for %s: %s", option, dest, strerror(e));
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        free(buf);
        return bw_fail(msg, n, "%s %s: the data holds a NUL byte; cordon's bwrap writes text files only", option, dest);
    }
    strv_push(&a->bufs, buf);
    *out = buf;
    return 0;
}

/* What one parse carries from option to option: --perms and --size wait for the option
 * they apply to, and the rest is checked once every option is read. */
typedef struct parse_state {
    int next_perms;
    unsigned long long next_size;
    const char *cap_refused; /* the last --cap-add of a capability other than CAP_SETFCAP */
    bool uid_given, gid_given, unshare_user, unshare_pid, as_pid_1;
} parse_state;

/* --perms and --size apply to the next option, which they may precede in either order
 * (bwrap checks --perms first) */
static int check_pending(const parse_state *st, bw_opt what, char *msg, size_t n)
{
    if (st->next_perms >= 0 && what != O_TMPFS && what != O_SIZE && what != O_DIR && what != O_FILE &&
        what != O_BIND_DATA && what != O_RO_BIND_DATA)
        return bw_fail(msg, n, "--perms must be followed by an option that creates a file");
    if (st->next_size && what != O_TMPFS && what != O_PERMS)
        return bw_fail(msg, n, "--size must be followed by --tmpfs");
    return 0;
}

/* --file, --bind-data, --ro-bind-data FD DEST */
static int add_data_op(bw_args *out, parse_state *st, const opt_def *d, const char *a1, const char *a2, char *msg,
                       size_t n)
{
    int fd;
    const char *data = NULL;
    if (parse_fd(a1, &fd) < 0)
        return bw_fail(msg, n, "Invalid fd: %s", a1);
    if (read_data(out, fd, d->name, a2, &data, msg, n) < 0)
        return -1;
    bw_op *op = add_op(out, BW_FILE, d->name);
    op->src = data;
    op->dest = a2;
    op->read_only = d->what == O_RO_BIND_DATA;
    op->writable = d->what == O_BIND_DATA;
    /* bwrap's defaults: 0666 for --file, 0600 for the data binds */
    op->perms = st->next_perms >= 0 ? st->next_perms : d->what == O_FILE ? 0666 : 0600;
    st->next_perms = -1;
    return 0;
}

/* An option that makes or changes something in the new root, or --perms/--size before one. */
static int apply_fs_option(bw_args *out, parse_state *st, const opt_def *d, const char *a1, const char *a2, char *msg,
                           size_t n)
{
    bw_op *op;
    switch (d->what) {
    case O_DIR:
        op = add_op(out, BW_DIR, d->name);
        op->dest = a1;
        op->perms = st->next_perms;
        st->next_perms = -1;
        break;
    case O_FILE:
    case O_BIND_DATA:
    case O_RO_BIND_DATA: return add_data_op(out, st, d, a1, a2, msg, n);
    case O_CHMOD:
        op = add_op(out, BW_CHMOD, d->name);
        if (parse_perms(a1, &op->perms) < 0)
            return bw_fail(msg, n, "--chmod takes an octal argument");
        op->dest = a2;
        break;
    case O_BIND:
    case O_RO_BIND:
    case O_BIND_TRY:
    case O_RO_BIND_TRY:
        op = add_op(out, BW_BIND, d->name);
        op->src = a1;
        op->dest = a2;
        op->read_only = d->what == O_RO_BIND || d->what == O_RO_BIND_TRY;
        op->try_ = d->what == O_BIND_TRY || d->what == O_RO_BIND_TRY;
        break;
    case O_REMOUNT_RO: add_op(out, BW_REMOUNT_RO, d->name)->dest = a1; break;
    case O_TMPFS:
        op = add_op(out, BW_TMPFS, d->name);
        op->dest = a1;
        op->perms = st->next_perms;
        op->size = st->next_size;
        st->next_perms = -1;
        st->next_size = 0;
        break;
    case O_DEV: add_op(out, BW_DEV, d->name)->dest = a1; break;
    case O_PROC: add_op(out, BW_PROC, d->name)->dest = a1; break;
    case O_SYMLINK:
        op = add_op(out, BW_SYMLINK, d->name);
        op->src = a1;
        op->dest = a2;
        break;
    case O_SIZE:
        if (parse_number(a1, 10, ULLONG_MAX, &st->next_size) < 0 || st->next_size == 0)
            return bw_fail(msg, n, "--size takes a non-zero number of bytes");
        break;
    case O_PERMS:
        if (parse_perms(a1, &st->next_perms) < 0)
            return bw_fail(msg, n, "--perms takes an octal argument");
        break;
    default: break; /* (a setting: apply_option) */
    }
    return 0;
}

/* --cap-add, --cap-drop */
static int apply_cap(bw_args *out, parse_state *st, const opt_def *d, const char *a1, char *msg, size_t n)
{
    uint64_t bit;
    if (parse_cap(a1, &bit) < 0)
        return bw_fail(msg, n, "%s: unknown capability: %s", d->name, a1);
    if (d->what == O_CAP_DROP)
        out->caps &= ~bit;
    else
        out->caps |= bit;
    if (d->what == O_CAP_ADD && (bit & ~CAP_SETFCAP_BIT))
        st->cap_refused = a1;
    return 0;
}

/* --uid, --gid: accepted only as the caller's own */
static int apply_id(parse_state *st, const opt_def *d, const char *a1, char *msg, size_t n)
{
    int id;
    unsigned own = d->what == O_UID ? (unsigned)getuid() : (unsigned)getgid();
    if (parse_fd(a1, &id) < 0)
        return bw_fail(msg, n, "Invalid %s: %s", d->what == O_UID ? "uid" : "gid", a1);
    *(d->what == O_UID ? &st->uid_given : &st->gid_given) = true;
    if ((unsigned)id != own)
        return bw_fail(msg, n,
                       "%s %s: cordon's bwrap runs the command as your own %s (%u), not as another (see "
                       "doc/bwrap.md)",
                       d->name, a1, d->what == O_UID ? "uid" : "gid", own);
    return 0;
}

/* One option with its arguments A1 and A2 ("" when it takes fewer). 1: --help or --version,
 * which end the parse; 0: go on; -1: refused, with MSG saying why. */
static int apply_option(bw_args *out, parse_state *st, const opt_def *d, const char *a1, const char *a2, char *msg,
                        size_t n)
{
    switch (d->what) {
    case O_HELP: out->help = true; return 1;
    case O_VERSION: out->version = true; return 1;
    case O_UNSHARE_NS:
        st->unshare_user |= strncmp(d->name, "--unshare-user", 14) == 0;
        st->unshare_pid |= strcmp(d->name, "--unshare-pid") == 0;
        break;
    case O_AS_PID_1: st->as_pid_1 = true; break;
    case O_NEW_SESSION: break;
    case O_CAP_ADD:
    case O_CAP_DROP: return apply_cap(out, st, d, a1, msg, n);
    case O_UNSHARE_NET: out->unshare_net = true; break;
    case O_UNSHARE_UTS: out->unshare_uts = true; break;
    case O_HOSTNAME: out->hostname = a1; break;
    case O_UID:
    case O_GID: return apply_id(st, d, a1, msg, n);
    case O_LEVEL_PREFIX: out->level_prefix = true; break;
    case O_DISABLE_USERNS: out->disable_userns = true; break;
    case O_LOCK_FILE:
        out->lock_files = xrealloc(out->lock_files, (out->n_lock_files + 1) * sizeof *out->lock_files);
        out->lock_files[out->n_lock_files++] = a1;
        break;
    case O_SYNC_FD:
    case O_BLOCK_FD:
        if (parse_fd(a1, d->what == O_SYNC_FD ? &out->sync_fd : &out->block_fd) < 0)
            return bw_fail(msg, n, "Invalid fd: %s", a1);
        break;
    case O_UNSHARE_ALL: out->unshare_all = true; break;
    case O_SHARE_NET: out->share_net = true; break;
    case O_DIE_WITH_PARENT: out->die_with_parent = true; break;
    case O_CHDIR: out->chdir = a1; break;
    case O_SETENV: add_env(out, BW_ENV_SET, a1, a2); break;
    case O_UNSETENV: add_env(out, BW_ENV_UNSET, a1, NULL); break;
    case O_CLEARENV: add_env(out, BW_ENV_CLEAR, NULL, NULL); break;
    case O_EXPLAIN: out->explain = true; break;
    case O_INFO_FD:
    case O_JSON_FD:
        if (parse_fd(a1, d->what == O_INFO_FD ? &out->info_fd : &out->json_status_fd) < 0)
            return bw_fail(msg, n, "Invalid fd: %s", a1);
        break;
    case O_ARGS: break;    /* (spliced by bw_parse_args) */
    case O_REFUSED: break; /* (refused by bw_parse_args) */
    default: return apply_fs_option(out, st, d, a1, a2, msg, n);
    }
    return 0;
}

/* What bwrap checks once every option is read. */
static int check_combination(const bw_args *out, const parse_state *st, char *msg, size_t n)
{
    if (st->next_perms >= 0)
        return bw_fail(msg, n, "--perms must be followed by an option that creates a file");
    if (st->next_size)
        return bw_fail(msg, n, "--size must be followed by --tmpfs");
    /* bwrap's set after all of them: what stays beyond CAP_SETFCAP is refused (doc/bwrap.md) */
    if (out->caps & ~CAP_SETFCAP_BIT)
        return bw_fail(msg, n,
                       "--cap-add %s: cordon's bwrap gives the command no capability but CAP_SETFCAP "
                       "(see doc/bwrap.md)",
                       st->cap_refused ? st->cap_refused : "ALL");
    if ((st->uid_given || st->gid_given) && !st->unshare_user && !out->unshare_all)
        return bw_fail(msg, n, "Specifying --%s requires --unshare-user or --userns", st->uid_given ? "uid" : "gid");
    if (st->as_pid_1 && !st->unshare_pid && !out->unshare_all)
        return bw_fail(msg, n, "Specifying --as-pid-1 requires --unshare-pid");
    if (out->hostname && !out->unshare_uts && !out->unshare_all)
        return bw_fail(msg, n, "Specifying --hostname requires --unshare-uts");
    return 0;
}

int bw_parse_args(int argc, char *const argv[], bw_args *out, char *msg, size_t n)
{
    *out = (bw_args){.info_fd = -1, .json_status_fd = -1, .sync_fd = -1, .block_fd = -1};
    /* a vector of its own, which --args can splice */
    out->vec = xcalloc((size_t)argc + 1, sizeof *out->vec);
    memcpy(out->vec, argv, (size_t)argc * sizeof *out->vec);
    parse_state st = {.next_perms = -1};
    int i = 1;
    for (; i < argc; i++) {
        argv = out->vec;
        const char *arg = argv[i];
        if (strcmp(arg, "--") == 0) {
            i++;
            break;
        }
        if (arg[0] != '-')
            break;
        const opt_def *d = find_opt(arg);
        if (!d)
            return bw_args_free(out), bw_fail(msg, n, "Unknown option %s", arg);
        if (d->what == O_REFUSED)
            return bw_args_free(out), bw_fail(msg, n, "%s is not supported by cordon's bwrap (see doc/bwrap.md)", arg);
        if (i + d->nargs >= argc) {
            static const char *const count[] = {"", "an argument", "two arguments", "three arguments"};
            return bw_args_free(out), bw_fail(msg, n, "%s takes %s", arg, count[d->nargs]);
        }
        const char *a1 = d->nargs >= 1 ? argv[i + 1] : ""; /* ("": never read) */
        const char *a2 = d->nargs >= 2 ? argv[i + 2] : "";
        if (check_pending(&st, d->what, msg, n) < 0)
            return bw_args_free(out), -1;
        if (d->what == O_ARGS) {
            if (splice_args(out, &argc, i, msg, n) < 0)
                return bw_args_free(out), -1;
            i--; /* parse what was read from here */
            continue;
        }
        i += d->nargs;
        int r = apply_option(out, &st, d, a1, a2, msg, n);
        if (r < 0)
            return bw_args_free(out), -1;
        if (r > 0)
            return 0;
    }
    if (check_combination(out, &st, msg, n) < 0)
        return bw_args_free(out), -1;
    if (i >= argc) {
        bw_args_free(out);
        return bw_fail(msg, n, "No command specified");
    }
    out->command = out->vec + i;
    return 0;
}

void bw_args_free(bw_args *a)
{
    free(a->ops);
    free(a->env);
    free(a->lock_files);
    free(a->vec);
    strv_free(&a->bufs);
    *a = (bw_args){0};
}
