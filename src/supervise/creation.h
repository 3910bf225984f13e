// SPDX-License-Identifier: Apache-2.0
/* The creation control: the sandbox's PID 1 performs, on the command's behalf, every
 * call that creates a name or opens a file for writing, and refuses what must not be.
 *
 * The command's seccomp filter (confine/seccomp_table.c, SC_CMD rows) turns open(O_CREAT
 * or for writing), mkdir, mknod, rename, link and symlink into seccomp user
 * notifications.  PID 1 reads the path from the command's memory once, resolves it as
 * the kernel would for the command (supervise/pathwalk.h) down to a descriptor of the
 * parent directory, decides on (that directory's device and inode, the name), and acts
 * on that descriptor itself — with the command's uid, umask and Landlock domain and no
 * effective capability — then hands back the result (the new descriptor through
 * SECCOMP_IOCTL_NOTIF_ADDFD).  It never lets the kernel redo the call
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE) after looking at memory another thread could have
 * rewritten meanwhile.  The kernel allows one listener per process, so a command cannot
 * install one of its own in front of cordon's; a cordon inside the sandbox hands its
 * rules to this supervisor instead (prctl(CORDON_PRCTL)).
 *
 * What is refused (doc/security.md, "The creation control"):
 *  - a protected name that does not exist (agent configuration at the top of every
 *    writable path, a --deny path that does not exist yet, a missing git hooks directory):
 *    the plan's PLAN_NOCREATE rules (plan.cc_rules), resolved inside the new root to (dev, ino, name);
 *  - on every file system of the host (all but cordon's own mounts and those the command
 *    made, decided by mount, not by device: cc_decide.c, cc_is_host): a new `.git` anywhere;
 *    the git invariant (doc/security.md): in a directory that was not a git directory
 *    at start, no mark that would make it a git directory or a common directory
 *    (`objects` and `refs`, `HEAD` with those or `commondir`, any type of file); in a
 *    guarded one (git-like now, or a git directory at start), no
 *    change to config, config.worktree, commondir, gitdir, hooks, info, worktrees or
 *    modules, nor anything in its hooks, nor its own mode or owner; hard links of those
 *    and of set-user-ID or set-group-ID files.
 * Files in the sandbox's private tmpfs mounts (HOME, /tmp, TMPDIR) are not refused:
 * they vanish with the run.
 *
 * PID 1 must not allocate (it is a clone of a possibly multi-threaded caller): the
 * parent allocates cc_state, PID 1 fills and uses it. */
#pragma once
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cordon.h"
#include "plan/plan.h"
#include "sandbox/mount.h"
#include "supervise/pathwalk.h"
#include "supervise/sockets.h"

#define CC_MAX_RULES    1024
#define CC_MAX_DEVS     512
#define CC_MAX_GITDIRS  256
#define CC_MAX_REFUSALS 32
#define CC_MAX_HANDED   64
#define CC_NOT_HOOKS    512 /* a power of two */
#define CC_HANDLE_MAX   40  /* the file handles kept (ext4: 8 bytes, tmpfs: 12, btrfs: 20) */

/* A name that must not be created in one directory. */
typedef struct cc_rule {
    dev_t dev;
    ino_t ino;
    char name[PW_NAME_MAX];
    const char *why; /* the plan operation's, or a nested cordon's */
} cc_rule;

typedef struct cc_refusal {
    char what[64];  /* "mkdir", "open for writing", ... */
    char path[512]; /* as the command passed it */
    const char *why;
} cc_refusal;

/* prctl(CORDON_PRCTL, request, buffer, length) requests of a nested cordon. */
#define CC_PRCTL_HELLO    1u /* answered with CC_PRCTL_HELLO_OK by a cordon supervisor */
#define CC_PRCTL_ADD      2u /* buffer: cc_wire records to add (only ever refusals) */
#define CC_PRCTL_HELLO_OK 0x434fu
typedef struct cc_wire {
    uint64_t dev;
    uint64_t ino;
    uint32_t kind; /* CC_WIRE_NAME: refuse `name` in (dev, ino); CC_WIRE_DEV: a host file
                      system (dev) the git rules apply to */
    char name[PW_NAME_MAX];
} cc_wire;
#define CC_WIRE_NAME 1u
#define CC_WIRE_DEV  2u

/* Refusals of calls served by a forked worker (cc_state.fuse_made), on a shared page:
 * PID 1 takes them in when it reaps the worker. */
#define CC_SHARED_REFUSALS 8
typedef struct cc_shared {
    unsigned n;            /* entries used (atomically: workers run at once) */
    unsigned long refused; /* all, including those not kept */
    cc_refusal r[CC_SHARED_REFUSALS];
} cc_shared;

typedef struct cc_state {
    bool enabled;
    int listener; /* the command's notification descriptor, or -1 */
    bool nested;  /* an outer cordon serves the calls: rules were handed to it */
    cc_rule rules[CC_MAX_RULES];
    size_t n_rules;
    dev_t devs[CC_MAX_DEVS]; /* host file systems (their superblocks' devices): the git
                                rules apply there */
    size_t n_devs;
    /* The devices of cordon's own mounts (tmpfs, the home's overlay) and of the kernel's
     * pseudo file systems at start: they vanish with the run.  A file whose device is in
     * neither list (a btrfs subvolume reports a device of its own, not its file
     * system's; a mount the command made) is judged by its mount's superblock in the
     * mount table (cc_decide.c, cc_is_host), and is the host's when that cannot be told;
     * devices found to be the host's that way are remembered (only those: a device
     * number freed by the command's unmount may come back as a host subvolume's). */
    dev_t priv_devs[CC_MAX_DEVS];
    size_t n_priv_devs;
    dev_t host_extra[64];
    size_t n_host_extra;
    /* Files handed to the command from outside the sandbox (its standard descriptors):
     * the only host files reached through a descriptor whose name in the sandbox cannot
     * be told that may be reopened for writing (a ring: a session hands in per command). */
    struct {
        dev_t dev;
        ino_t ino;
    } handed[CC_MAX_HANDED];
    size_t n_handed, next_handed;
    pid_t tid; /* the thread whose call is being served */
    /* A FUSE file system was made for the command: its server is the command's own and
     * may never answer, so from then on every call on files is served in a forked worker
     * and PID 1 never waits on one (leases and FIFOs are handled where they arise). */
    bool fuse_made;
    bool in_worker;    /* this process is such a worker */
    cc_shared *shared; /* MAP_SHARED, or NULL */
    struct {
        dev_t dev;
        ino_t ino;
    } gitdirs[CC_MAX_GITDIRS];
    size_t n_gitdirs;
    struct {
        dev_t dev;
        ino_t ino;
    } lifted[CC_MAX_GITDIRS]; /* PLAN_LIFT paths */
    size_t n_lifted;
    struct {
        pid_t pid;
        uint64_t id;
        int listener;
    } workers[64]; /* forked to answer a
                                     * notification (on that listener: a session has one
                                     * per command, set in `listener` before each call) */
    size_t n_workers;
    cc_refusal refusals[CC_MAX_REFUSALS];
    size_t n_refusals;     /* kept */
    unsigned long refused; /* all */
    pw_ctx pw;
    char path1[PW_PATH_MAX], path2[PW_PATH_MAX];
    cc_wire wire[64];
    _Alignas(8) unsigned char req[512];  /* struct seccomp_notif, as large as the kernel's */
    _Alignas(8) unsigned char resp[128]; /* struct seccomp_notif_resp */
    char status[4096];
    sk_state sk; /* connect, bind and sends on the command's behalf (supervise/sockets.h) */
    /* --isolation landlock: the supervisor is cordon's stand-in on the host, in a Landlock
     * domain of its own that may also write where the command's may only list (the
     * directories llonly.c splits: the top of the workspace, .git), so it must decide
     * itself what the command's rules allow there.  Every existing path with a rule of the
     * plan (and the private HOME and TMPDIR), by device and inode: the nearest one on the
     * way up from a name decides, as the plan's longest matching path does (cc_decide.c,
     * cc_ll_decide).  ll_home and ll_tmpdir are set by the caller before cc_setup. */
    bool ll_mode;
    const char *ll_home, *ll_tmpdir;
    const char *ll_list_only[CC_MAX_RULES]; /* the directories split around a hidden path
                                               (no name is made or removed there: the
                                               command could not read it) */
    size_t n_ll_list_only;
    const char *ll_devices[32]; /* the minimal /dev's nodes and ptys, granted whatever the
                                   rules say (confine/llonly.c): writable here too */
    size_t n_ll_devices;
    struct {
        dev_t dev;
        ino_t ino;
        bool write;
        bool list_only; /* one of ll_list_only: existing entries keep their rule */
        char why[160];  /* "read-only here (the rule's source)" */
    } ll_rules[CC_MAX_RULES];
    size_t n_ll_rules;
    /* Directories known not to be the hooks directory of a guarded one (is_hooks_dir), by
     * device, inode and file handle (which holds the inode's generation: a number reused
     * for a new directory does not match), direct-mapped: a verdict that holds for the run
     * (cc_decide.c, cc_is_hooks_dir), forgotten at once (a new epoch) whenever a name `hooks`
     * is made.  An entry counts when its epoch is the current one, which is never 0. */
    struct {
        dev_t dev;
        ino_t ino;
        unsigned epoch;
        int type;
        unsigned len;
        unsigned char handle[CC_HANDLE_MAX];
    } not_hooks[CC_NOT_HOOKS];
    unsigned not_hooks_epoch;
#ifdef CORDON_TRACE_TIMING
    unsigned long long trace_calls;
    long long trace_us, trace_addfd_us;
#endif
} cc_state;

typedef enum cc_act {
    CC_CREATE, /* a new name (or a name replaced by a rename) */
    CC_WRITE,  /* an existing file opened for writing, or its mode, owner or length */
    CC_SOURCE, /* the existing name a hard link is made to */
} cc_act;

/* What the decision needs to know of the file system beyond the rules held in memory,
 * each asked only when the verdict depends on it (cc_decide asks the directory the walk
 * ended on; a unit test answers as it likes). */
typedef struct cc_look {
    void *ctx;
    /* --isolation landlock: why the plan's rules forbid it, or NULL (`names`: the call
     * makes or removes a name in the directory) */
    const char *(*ll_rule)(void *ctx, bool names);
    bool (*host)(void *ctx);             /* the directory is on a host file system */
    bool (*becomes_git_like)(void *ctx); /* the name made would make it git-like */
    bool (*guarded)(void *ctx);          /* git-like now, or a git directory at start */
    bool (*name_lifted)(void *ctx);      /* the name exists and is a lifted path */
    bool (*hooks_dir)(void *ctx);        /* the directory is the hooks of a guarded one */
} cc_look;

/* The decision, pure: the verdict on `name` in the directory of stat *dir_st from the
 * rules cc holds and the answers of `look` (doc/security.md, "The git invariant"): NULL
 * when allowed, else why not. */
const char *cc_judge(const cc_state *cc, const struct stat *dir_st, const char *name, cc_act act, const cc_look *look);

/* The decision on `name` in the directory `dir` (of stat *dir_st, as the walk ended on
 * it): NULL when allowed, else why not (doc/security.md, "The git invariant").  For
 * the calls served in other files (cc_perform.c, cc_meta.c), and the unit tests (tests/unit/test_creation.c). */
const char *cc_decide(cc_state *cc, int dir, const struct stat *dir_st, const char *name, cc_act act);

/* In PID 1, after the root is built (and pivoted into): resolve the plan's rules inside
 * the new root, take the host file systems from the mount table, and open a procfs of
 * PID 1's own.  A nested sandbox hands the rules to the outer cordon instead. */
int cc_setup(cc_state *cc, const plan *p, const root_scratch *s, cordon_error *err);

/* In a session's PID 1: refuse `name` in the directory (dev, ino) from now on (a
 * protected or hidden name whose mount the host took away by removing it: the session
 * holds it as a missing one).  `why` must outlive cc.  0, or -ENOSPC. */
int cc_add_name(cc_state *cc, dev_t dev, ino_t ino, const char *name, const char *why);

/* A descriptor handed to a command from outside the sandbox (a session's command's
 * standard descriptors): its file may be reopened for writing through /proc/self/fd. */
void cc_handed(cc_state *cc, int fd);

/* In PID 1 once the command's process has installed its filter: serve one notification
 * (when the listener is readable). */
void cc_serve_one(cc_state *cc);

/* PID 1 reaped `pid`: if it was one of the creation control's workers and died before
 * answering, the call it served fails (EINTR) instead of waiting for ever. */
void cc_reaped(cc_state *cc, pid_t pid, int status);

/* Send the refusals (kept ones and the count) to cordon over the report pipe. */
void cc_report(cc_state *cc, int report_fd);
