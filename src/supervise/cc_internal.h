// SPDX-License-Identifier: Apache-2.0
/* The creation control's parts (supervise/creation.h), for its own files only:
 * creation.c (set-up, refusals, the report), cc_decide.c (the decision),
 * cc_respond.c (answers, memory, workers), cc_perform.c (names made and removed, the
 * serving loop), cc_meta.c (modes, owners, lengths, new file systems, nested cordons),
 * and cc_decode.c (the registers). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "supervise/cc_decode.h"
#include "supervise/creation.h"

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
#include <time.h>
static inline long long trace_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}
#endif

/* One notification being served. */
typedef struct call {
    uint64_t id;
    pid_t tid;
    uint32_t arch;
    uint64_t args[6];
    const char *what;
    const char *path; /* for the refusal log */
} call;

/* Lines of a /proc mount table, read a part at a time into a fixed buffer (PID 1 does
 * not allocate). */
typedef struct mi_reader {
    int fd;
    char *buf;
    size_t size, have, used;
    bool eof;
} mi_reader;

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
#define WHY_LL_UNKNOWN                                                               \
    "--isolation landlock: cannot tell which rule of the view holds this path (its " \
    "directory is out of reach)"
#define WHY_UNNAMED                                                                         \
    "cannot tell which file the descriptor names in the sandbox (it was opened in another " \
    "mount namespace, or moved): only files handed to the command from outside may be "     \
    "reopened for writing without a name"
#define WHY_FS_TYPE                                                                  \
    "a file system of this type (a kernel overlay, say) would create files in host " \
    "directories on the command's behalf, past the creation control; fuse-overlayfs works"
#define WHY_SYSFS                                                                            \
    "a sysfs of its own would show the kernel's global settings, writable to a caller that " \
    "is the host's root; the view's /sys (--base host) is the one there is"

/* cc_decide.c */
/* Is the file `fd` (of stat *st) on a host file system, where the git rules apply?  By
 * its device first (the common case), then by its mount's superblock, in PID 1's mount
 * table (the sandbox's) or the thread's (a mount the command made): a btrfs subvolume
 * reports a device of its own, not its file system's.  Fails closed: a file whose
 * mount or superblock cannot be told is the host's. */
bool cc_is_host(cc_state *cc, int fd, const struct stat *st);

bool cc_lifted(const cc_state *cc, const struct stat *st);

bool cc_exists_at(int dir, const char *name, struct stat *st);

bool cc_guarded(const cc_state *cc, int dir, const struct stat *st);

/* Is `dir` (of stat *st) the hooks directory of a guarded directory?
 *
 * Asked for every name made on a host file system, and almost always no: that answer is
 * remembered by the directory's identity.  It holds for the rest of the run: for `dir`
 * to become the hooks of a guarded directory G, either G/hooks must be made to name it
 * (a name `hooks` made: cc_decide() forgets everything then, whatever it answers), or G
 * must become guarded, which a directory that is not guarded never does
 * (doc/security.md, "The git invariant").  What the host does meanwhile (a `git clone`
 * by the user) makes new directories, and the identity includes the file handle, which
 * holds the inode's generation: a new hooks directory that got the inode number of one
 * remembered (and deleted since) is not taken for it; a file system without file
 * handles is asked every time.  Only a `..` that is the directory's own parent counts:
 * not at the root of a mount, where `..` is the mount point's (a bind of a hooks
 * directory elsewhere would otherwise be remembered as not one); nor an answer that
 * failed. */
bool cc_is_hooks_dir(cc_state *cc, int dir, const struct stat *st);

/* Would a FIFO named `name` in `dir` hang a host git?  HEAD anywhere (git reads it in
 * every directory it considers), and any name in a guarded directory. */
const char *cc_fifo_hangs_git(cc_state *cc, int dir, const struct stat *dst, const char *name);

/* --isolation landlock: may the command change `name` in `dir`?  The supervisor's own
 * Landlock domain lets it write in every directory llonly.c split (where the command's
 * may only list and read), so the plan's rules are applied here: the name's own rule,
 * else the nearest rule on the way up from `dir` (by device and inode, through "..",
 * as Landlock itself walks), as the longest matching path of the plan decides.  No rule
 * up to the root: nothing of the plan grants it, and the supervisor's domain, which
 * outside the split directories is the command's, decides.  A directory split around a
 * hidden path takes no new name and loses none (`names`: the call makes or removes one
 * in `dir`); an existing entry there is judged by the rules above. */
const char *cc_ll_decide(cc_state *cc, int dir, const struct stat *dst, const char *name, bool names);

/* --isolation landlock: may `name` in `dir` be renamed, replaced or removed?  Not when it
 * has a rule of its own (the workspace's .git, its hooks and config, an --allow-ro path):
 * a mount point with namespaces, which cannot be moved away from its rule (EBUSY). */
bool cc_ll_pinned(const cc_state *cc, int dir, const char *name);

/* cc_meta.c */
/* chmod, chown or truncate of `path` relative to `dirfd` (path NULL: of the thread's
 * descriptor dirfd itself), deciding on the name the file has in the thread's view and,
 * for a directory, on the directory itself; performed on a descriptor of the object. */
int cc_do_meta(cc_state *cc, const call *c, int dirfd, const char *path, bool follow, const meta_req *m);

/* fsopen(2) and mount(2) of a new file system: in a worker that has entered the thread's
 * namespaces, root and working directory, with the type read once (an allowed one). */
int cc_do_new_fs(cc_state *cc, const call *c, bool is_fsopen);

/* A nested cordon's request. */
int cc_do_prctl(cc_state *cc, const call *c, long long *val);

/* cc_respond.c */
/* Memory of the thread: a NUL-terminated string of at most size - 1 bytes, read a
 * page at a time (a string may end right before an unmapped page). */
int cc_read_string(pid_t tid, uint64_t addr, char *out, size_t size);

int cc_read_mem(pid_t tid, uint64_t addr, void *out, size_t len);

bool cc_still_valid(cc_state *cc, uint64_t id);

void cc_respond(cc_state *cc, uint64_t id, long long val, int error);

/* Hand the thread a new descriptor and answer its call (SECCOMP_ADDFD_FLAG_SEND).
 *
 * The thread installs the descriptor itself, so the ioctl waits for it to run, and the
 * kernel wakes it (and then the supervisor) without SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP's
 * hand-over: on an otherwise idle machine each wake-up lands on the other, halted CPU
 * (tens of microseconds in a virtual machine, most of an open's cost).  Both are held on
 * the CPU the supervisor runs on for the moment of the hand-back, and let go after. */
void cc_respond_fd(cc_state *cc, uint64_t id, pid_t tid, int fd, bool cloexec);

int cc_refuse(cc_state *cc, const call *c, const char *why);

/* Act with the thread's umask: the process's is PID 1's, which acts for one call at a
 * time. */
int cc_with_umask(cc_state *cc, pid_t tid);

/* A descriptor that the path reached through a magic link of /proc: decide on the
 * name it has in the thread's view.  Pipes, sockets, devices and deleted files have
 * none that matters; a host file whose name cannot be found again is refused unless it
 * was handed in from outside (the command's standard descriptors): a descriptor taken
 * in another mount namespace (a tmpfs over the repository, say) is not a way around the
 * rules. */
const char *cc_decide_object(cc_state *cc, int obj, cc_act act);

/* The controlling terminal of the thread, for an open of /dev/tty. */
int cc_open_ctty(cc_state *cc, pid_t tid, int flags);

/* Fork a worker for a call that may take long (it answers the notification itself, so
 * that PID 1 goes on serving): 0 in the worker, > 0 in PID 1, or -errno. */
pid_t cc_fork_worker(cc_state *cc, uint64_t id);

/* Is the thread in a user namespace other than the supervisor's? */
bool cc_other_userns(cc_state *cc, pid_t tid);

/* An open in a worker, which answers the notification itself so that PID 1 goes on
 * serving: for a FIFO (the open waits for the other end), or as the thread's user
 * namespace (as_thread). */
void cc_open_in_worker(cc_state *cc, uint64_t id, pid_t tid, int dir, const char *name, int flags, bool cloexec,
                       bool as_thread);

/* creation.c */
/* Was the file (a regular one) handed to the command from outside (cc_handed)? */
bool cc_was_handed(const cc_state *cc, const struct stat *st);

int cc_add_rule(cc_state *cc, dev_t dev, ino_t ino, const char *name, const char *why);

int cc_add_dev(cc_state *cc, dev_t dev);

/* The next line, NUL-terminated in the buffer: 1, 0 at the end, or -1 with errno (E2BIG:
 * a line longer than the buffer). */
int cc_mi_next(mi_reader *r, char **line);

/* A mount table line's mount id and superblock device (ID PARENT MAJOR:MINOR ...). */
bool cc_mi_ids(const char *line, uint64_t *id, dev_t *dev);

void cc_refuse_log(cc_state *cc, const char *what, const char *path, const char *why);

/* Take in the refusals that workers logged on the shared page. */
void cc_take_shared_refusals(cc_state *cc);
