// SPDX-License-Identifier: Apache-2.0
/* Scope-bound ownership, as in bubblewrap and systemd: a variable declared with
 * _cleanup_free_, _cleanup_fd_, _cleanup_dir_, _cleanup_file_ or _cleanup_pid_ is released
 * when it goes out of scope (memory freed, descriptor, directory or stdio stream closed,
 * child process killed and reaped); _cleanup_close_pair_ closes both ends of an int[2];
 * steal_pointer()/steal_fd()/steal_pid() hand ownership on, and close_and_invalidate()
 * closes a descriptor early and sets it to -1.  None
 * changes errno. */
#pragma once
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
    void **pp = p;
    free(*pp);
}
static inline void cleanup_fdp(int *fd)
{
    if (*fd >= 0) {
        int saved = errno;
        close(*fd);
        errno = saved;
    }
}
/* Close *fd when it is open and set it to -1 in the same statement, so that a later
 * cleanup or a second close never closes a descriptor number reused meanwhile.  errno is
 * kept. */
static inline void close_and_invalidate(int *fd)
{
    if (*fd >= 0) {
        int saved = errno;
        close(*fd);
        errno = saved;
    }
    *fd = -1;
}
/* Both ends of a pipe or socket pair (int p[2]), each closed when open. */
static inline void cleanup_close_pairp(int (*p)[2])
{
    close_and_invalidate(&(*p)[0]);
    close_and_invalidate(&(*p)[1]);
}
static inline void cleanup_dirp(DIR **d)
{
    if (*d) {
        int saved = errno;
        closedir(*d);
        errno = saved;
    }
}
static inline void cleanup_filep(FILE **f)
{
    if (*f) {
        int saved = errno;
        fclose(*f);
        errno = saved;
    }
}
/* A child of ours (a pid > 0): SIGKILL, then reaped (__WALL: also one cloned without an
 * exit signal, util/proc.h). */
static inline void cleanup_pidp(pid_t *pid)
{
    if (*pid > 0) {
        int saved = errno;
        kill(*pid, SIGKILL);
        while (waitpid(*pid, NULL, __WALL) < 0 && errno == EINTR)
            ;
        *pid = -1;
        errno = saved;
    }
}
#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_fd_   __attribute__((cleanup(cleanup_fdp)))
#define _cleanup_dir_  __attribute__((cleanup(cleanup_dirp)))
#define _cleanup_pid_  __attribute__((cleanup(cleanup_pidp)))
#define _cleanup_file_ __attribute__((cleanup(cleanup_filep)))
/* int p[2] = {-1, -1}: both ends closed when it goes out of scope */
#define _cleanup_close_pair_ __attribute__((cleanup(cleanup_close_pairp)))

/* The pointer *pp, of its own type (assigning it to a variable of another type is a
 * compile-time error, as a void * would not be), and *pp set to NULL. */
#define steal_pointer(pp)                  \
    ({                                     \
        __typeof__(*(pp)) _stolen = *(pp); \
        *(pp) = NULL;                      \
        _stolen;                           \
    })
static inline int steal_fd(int *fd)
{
    int v = *fd;
    *fd = -1;
    return v;
}
static inline pid_t steal_pid(pid_t *pid)
{
    pid_t v = *pid;
    *pid = -1;
    return v;
}

#define RETRY_EINTR(expr)                   \
    ({                                      \
        __typeof__(expr) _r;                \
        do                                  \
            _r = (expr);                    \
        while (_r == -1 && errno == EINTR); \
        _r;                                 \
    })
