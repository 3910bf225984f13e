/* Scope-bound ownership, as in bubblewrap and systemd: a variable declared with
 * _cleanup_free_ or _cleanup_fd_ is released when it goes out of scope;
 * steal_pointer()/steal_fd() hand ownership on. */
#pragma once
#include <errno.h>
#include <stdlib.h>
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
#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_fd_ __attribute__((cleanup(cleanup_fdp)))

static inline void *steal_pointer_impl(void *pp)
{
    void **p = pp;
    void *v = *p;
    *p = NULL;
    return v;
}
#define steal_pointer(pp) steal_pointer_impl(pp)
static inline int steal_fd(int *fd)
{
    int v = *fd;
    *fd = -1;
    return v;
}

#define RETRY_EINTR(expr)                                                                  \
    ({                                                                                     \
        __typeof__(expr) _r;                                                               \
        do                                                                                 \
            _r = (expr);                                                                   \
        while (_r == -1 && errno == EINTR);                                                \
        _r;                                                                                \
    })
