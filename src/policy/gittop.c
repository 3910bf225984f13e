// SPDX-License-Identifier: Apache-2.0
/* The top of the git work tree around a directory (gittop.h). */
#include "policy/gittop.h"

#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/path.h"
#include "util/strv.h"

/* A .git in the directory at fd: a directory holding HEAD, or a regular file. */
static bool has_git(int fd)
{
    struct stat st;
    if (fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
        return false;
    if (S_ISREG(st.st_mode))
        return true;
    if (!S_ISDIR(st.st_mode))
        return false;
    _cleanup_fd_ int g = openat(fd, ".git", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return g >= 0 && fstatat(g, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0;
}

char *git_top_level(const char *dir, const char *home)
{
    if (!dir || dir[0] != '/')
        return NULL;
    _cleanup_free_ char *path = path_normalize(dir);
    if (!path)
        return NULL;
    _cleanup_fd_ int fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat cur;
    if (fstat(fd, &cur) < 0)
        return NULL;
    for (;;) {
        if (has_git(fd))
            break;
        _cleanup_fd_ int up = openat(fd, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);
        struct stat st;
        if (up < 0 || fstat(up, &st) < 0)
            return NULL;
        if (st.st_dev != cur.st_dev || (st.st_ino == cur.st_ino) || !path_to_parent(path))
            return NULL; /* a mount point, or / */
        close(fd);
        fd = steal_fd(&up);
        cur = st;
    }
    /* the path names what the walk found (nothing was renamed on the way) */
    struct stat named;
    if (stat(path, &named) < 0 || named.st_dev != cur.st_dev || named.st_ino != cur.st_ino)
        return NULL;
    if (strcmp(path, "/") == 0 || (home && path_has_prefix(home, path)))
        return NULL;
    return xstrdup(path);
}
