// SPDX-License-Identifier: Apache-2.0
/* Shared helpers of the escape suite's attack programs (tests/escape/src/).
 *
 * Every program prints one line per attempt, "LABEL ok" or "LABEL ERRNONAME", which the
 * test scripts read with want_refused/want_ok (tests/escape/lib.sh). Extra facts are
 * printed as "LABEL ok <detail>". Programs are built static by the tests, so that they
 * also run under --base empty. */
#ifndef ESC_H
#define ESC_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline const char *esc_errname(int e)
{
    const char *n = strerrorname_np(e);
    return n ? n : "EUNKNOWN";
}

/* Report an attempt: rc >= 0 is success, otherwise errno says why. */
static inline long report(const char *label, long rc)
{
    int e = errno;
    if (rc >= 0)
        printf("%s ok\n", label);
    else
        printf("%s %s\n", label, esc_errname(e));
    fflush(stdout);
    errno = e;
    return rc;
}

static inline void reportf(const char *label, const char *fmt, ...)
{
    va_list ap;
    printf("%s ok ", label);
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* Read up to n-1 bytes of an open descriptor; -1 with errno on failure. */
static inline ssize_t read_some(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got + 1 < n) {
        ssize_t r = read(fd, buf + got, n - 1 - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return got ? (ssize_t)got : -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    return (ssize_t)got;
}

/* Does the file at path (opened O_RDONLY) contain token?  1 yes, 0 no, -1 errno. */
static inline int file_has(int dirfd, const char *path, const char *token)
{
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return -1;
    char buf[8192];
    ssize_t n = read_some(fd, buf, sizeof buf);
    int e = errno;
    close(fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    return memmem(buf, (size_t)n, token, strlen(token)) != NULL;
}

/* Write the uid and gid maps of a user namespace just made by unshare(CLONE_NEWUSER):
 * root inside is the uid we had before. */
static inline int map_self_as_root(uid_t uid, gid_t gid)
{
    char m[64];
    int fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (write(fd, "deny", 4) < 0) {
            close(fd);
            return -1;
        }
        close(fd);
    }
    snprintf(m, sizeof m, "0 %u 1\n", (unsigned)uid);
    fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, m, strlen(m)) < 0)
        return -1;
    close(fd);
    snprintf(m, sizeof m, "0 %u 1\n", (unsigned)gid);
    fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, m, strlen(m)) < 0)
        return -1;
    close(fd);
    return 0;
}

#endif
