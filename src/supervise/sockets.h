// SPDX-License-Identifier: Apache-2.0
/* Unix sockets for the command: the supervisor performs connect, bind, sendto, sendmsg
 * and sendmmsg on the command's behalf, and refuses a host service's pathname socket.
 *
 * A host service listening on a pathname socket the view shows (the host's tmux server
 * under /tmp, an editor's or a language server's socket in the workspace, Docker
 * Desktop's in the home) runs what a client asks: with --network none the network
 * namespace does not cover them, and Landlock before LANDLOCK_ACCESS_FS_RESOLVE_UNIX
 * does not govern connecting to them.  The command's filter (confine/seccomp_table.c)
 * sends these calls to PID 1, which takes the command's socket (pidfd_getfd), reads the
 * address (and a message's data and control) from the command's memory once, and, for
 * a pathname AF_UNIX address, resolves the path as the kernel would for the command
 * (supervise/pathwalk.h) and opens the socket file itself: it is reached only if the
 * sandbox bound it during this run (its device, inode and birth time were recorded at
 * bind) or --allow-socket named it; else EACCES, reported as the creation control's
 * refusals.  The call is then made on the command's socket by PID 1 with the copy it
 * read, through /proc/self/fd/N of the socket file it checked (a name swapped in after
 * the check is never followed).  A call that would block is finished in a worker
 * process, so that PID 1 goes on serving.  It never lets the kernel redo a call
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE) after reading memory.
 *
 * bind(2) of a pathname makes a name in a directory: it goes through the creation
 * control's decision for a new name (agent configuration, .git) first.
 *
 * Runs in PID 1, which must not allocate: the parent allocates sk_state with cc_state.
 * sockets.c calls nothing of the creation control's files: what it needs is in sk_host. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "supervise/pathwalk.h"
#include "util/strv.h"

#define SK_MAX_OWN     4096        /* sockets the sandbox bound (oldest forgotten first) */
#define SK_MAX_ALLOWED 64          /* --allow-socket paths */
#define SK_DATA_MAX    (64 * 1024) /* bytes of one message sent on the command's behalf */
#define SK_CTL_MAX     4096        /* bytes of its control data */
#define SK_MAX_IOV     1024        /* UIO_MAXIOV */
#define SK_MAX_FDS     253         /* SCM_MAX_FD */
#define SK_MAX_MMSG    64          /* messages of one sendmmsg served at once */

typedef struct sk_id {
    dev_t dev;
    ino_t ino;
    long long btime_sec; /* birth time (statx); 0 where the file system has none (the
                          * device and inode alone then) */
    long btime_nsec;
} sk_id;

typedef struct sk_state {
    sk_id own[SK_MAX_OWN]; /* socket files bound by the supervisor for the command */
    size_t n_own, next_own;
    sk_id allowed[SK_MAX_ALLOWED]; /* --allow-socket, resolved in the new root at start */
    size_t n_allowed;
    /* scratch of one call */
    struct sockaddr_storage addr;
    socklen_t addrlen;
    _Alignas(16) unsigned char data[SK_DATA_MAX];
    _Alignas(16) unsigned char raw[SK_MAX_IOV * 16]; /* the command's iovec array */
    struct iovec remote[SK_MAX_IOV];
    _Alignas(16) unsigned char ctl_in[SK_CTL_MAX];
    _Alignas(16) unsigned char ctl_out[SK_CTL_MAX + SK_MAX_FDS * sizeof(int) + 64];
    int fds[SK_MAX_FDS];
    size_t n_fds;
    char path[PW_PATH_MAX];
} sk_state;

/* What the socket calls need of the supervisor that serves them (cc_perform.c). */
typedef struct sk_host {
    int listener;
    pw_ctx *pw; /* pw_begin was called for the notification's thread */
    void *ctx;
    /* the creation control's decision on a new name `name` in `dir` (of stat *dst):
     * NULL when it may be made, else why not */
    const char *(*decide_create)(void *ctx, int dir, const struct stat *dst, const char *name);
    /* a refusal for the report ("connect PATH: why") */
    void (*refused)(void *ctx, const char *what, const char *path, const char *why);
    /* fork a worker that answers notification `id` itself: 0 in the worker, > 0 in the
     * supervisor, or -errno */
    pid_t (*fork_worker)(void *ctx, uint64_t id);
} sk_host;

typedef struct sk_call {
    uint64_t id;
    pid_t tid;
    bool compat; /* a 32-bit ABI: the structures in memory have 32-bit pointers */
    uint64_t args[6];
} sk_call;

/* In PID 1 after the root is built: the --allow-socket paths as (device, inode); a path
 * the view does not show is left out (nothing inside can reach it). */
void sk_setup(sk_state *sk, const strv *allowed);

/* Serve connect, bind, sendto, sendmsg or sendmmsg (which: the SK_ values).  Returns an
 * errno (> 0) to answer with, 0 to answer *val, or -1 when the call was answered already
 * (by a worker). */
enum { SK_CONNECT, SK_BIND, SK_SENDTO, SK_SENDMSG, SK_SENDMMSG };
int sk_serve(sk_state *sk, const sk_host *h, int which, const sk_call *c, long long *val);
