// SPDX-License-Identifier: Apache-2.0
/* Resolving a path as the kernel would for another process (the creation control).
 *
 * When the command asks to create a name, the supervisor must find the directory the
 * kernel would have created it in, for the command: from the command's working
 * directory or the descriptor it passed, with the command's root for absolute paths,
 * absolute symlinks and "..", and with /proc/self meaning the command, not the
 * supervisor.  The walk opens one component at a time (O_PATH|O_NOFOLLOW), reads every
 * symlink itself (at most 40, as the kernel), clamps ".." at the command's root, and
 * lets the kernel follow only the magic links of /proc (fd/N, cwd, root), exactly as it
 * would for the command.  It ends on a descriptor of the parent directory, which the
 * supervisor then acts on: nothing is ever looked up again by name.
 *
 * Runs in PID 1, which must not allocate: everything lives in the caller's pw_ctx. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#define PW_NAME_MAX 256
#define PW_PATH_MAX 4096

/* What the supervisor remembers of a thread between notifications (it cannot ask
 * the kernel cheaply): valid while the thread lives (a pidfd tells), and forgotten when
 * the thread calls umask(2), chroot(2), pivot_root(2), setns(2) or unshare(2), which
 * the command's filter also reports (cc_perform.c). */
typedef struct pw_thread {
    pid_t tid, tgid;
    pid_t ptid;    /* tid in proc_fd's PID namespace (pw_ctx.proc_foreign), or -1 */
    int pidfd;     /* -1: the entry is free */
    int umask;     /* -1: unknown */
    int root_same; /* its root is the supervisor's (the walk may let the kernel resolve):
                      -1 unknown, 0, 1 */
} pw_thread;
#define PW_THREADS 64

/* The process a walk is done for. */
typedef struct pw_target {
    pid_t tid;   /* the calling thread, as the supervisor's PID namespace sees it */
    pid_t ptid;  /* ... and as proc_fd's does (pw_proc_id), -1 when it cannot be told */
    int root_fd; /* its root directory (O_PATH), or -1 until needed */
    uint64_t root_mnt;
    ino_t root_ino;
    int cwd_fd; /* its working directory, or -1 until needed */
} pw_target;

typedef struct pw_ctx {
    int proc_fd;       /* a procfs of the supervisor's own PID namespace, or, when
                        * proc_foreign, the caller's (a container that masks parts of
                        * /proc refuses a fresh one: sandbox/mount.h, proc_kept) */
    bool proc_foreign; /* proc_fd names processes by their ids in an outer namespace */
    int root_fd;       /* the supervisor's root (O_PATH) */
    uint64_t root_mnt;
    ino_t root_ino;
    pw_target t;
    pw_thread threads[PW_THREADS];
    unsigned next_evict;
    pw_thread *cur; /* the entry of t.tid, or NULL */
    /* scratch, owned by the walker */
    char buf[2 * PW_PATH_MAX + 2];
    char link[PW_PATH_MAX];
    struct {
        dev_t dev;
        bool proc;
    } fs[16]; /* which file systems are procfs instances */
    unsigned n_fs;
} pw_ctx;

/* What a walk found. */
typedef struct pw_result {
    int dir_fd; /* the directory holding the last component (O_PATH) */
    struct stat dir_st;
    char name[PW_NAME_MAX]; /* the last component; "" when obj_fd is set */
    int obj_fd;             /* PW_WHOLE, or a magic link followed at the end: the object
                                  itself (O_PATH), and dir_fd is -1 */
    bool slash;             /* the path ended in "/" (the last component must be a
                                  directory) */
    bool dot;               /* the last component was "." or "..": it names the
                                  directory dir_fd itself (creating it: EEXIST) */
} pw_result;

#define PW_FOLLOW_LAST \
    0x1u              /* a symlink as the last component is followed (open without
                               O_NOFOLLOW or O_EXCL, linkat with AT_SYMLINK_FOLLOW) */
#define PW_WHOLE 0x2u /* resolve to the object itself (open(O_TMPFILE) of a directory) */

/* Once, in the supervisor: its own root and no thread known. */
int pw_init(pw_ctx *c, int proc_fd);
/* Start working for a new notification's thread. */
void pw_begin(pw_ctx *c, pid_t tid);
/* The name of thread `tid` (the current notification's, as the supervisor sees it) in
 * proc_fd: tid itself, or under proc_foreign its id there (-1 when it cannot be told,
 * so that every look-up fails and the call is refused). */
pid_t pw_proc_id(const pw_ctx *c, pid_t tid);
/* The thread's umask (cached), or -errno. */
int pw_umask(pw_ctx *c);
/* The thread `tid` called umask(mask) (mask < 0: chroot, pivot_root, setns or unshare):
 * update what is remembered of its thread group. */
void pw_thread_changed(pw_ctx *c, pid_t tid, int mask);
/* Close what pw_begin and the walks opened for the thread. */
void pw_end(pw_ctx *c);

/* Resolve `path` (as the thread passed it) relative to `dirfd` (the thread's descriptor
 * number, or AT_FDCWD).  0 with *out filled (the caller closes out->dir_fd and
 * out->obj_fd with pw_result_close), or -errno as the kernel would have failed. */
int pw_resolve(pw_ctx *c, int dirfd, const char *path, unsigned flags, pw_result *out);
void pw_result_close(pw_result *r);

/* The thread's descriptor `fd` (O_PATH), or -errno. */
int pw_thread_fd(pw_ctx *c, int fd);

/* Is `dev` a procfs instance? */
bool pw_is_procfs(pw_ctx *c, int fd, dev_t dev);

/* CAP_SYS_PTRACE in the effective set for the supervisor's reads of another process's
 * /proc entries and memory (the command may have made itself non-dumpable), never
 * while it acts.  The supervisor keeps it only in its permitted set. */
void pw_ptrace_cap(bool on);
