// SPDX-License-Identifier: Apache-2.0
#include "sandbox/overlay.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "util/cleanup.h"

static int layer(int fs, const char *key, int fd)
{
    if (fsconfig(fs, FSCONFIG_SET_FD, key, NULL, fd) == 0)
        return 0;
    /* before Linux 6.13 layers are named by path only: the descriptor's, then */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    return fsconfig(fs, FSCONFIG_SET_STRING, key, path, 0);
}

static int fail(char *why, size_t n, const char *what)
{
    int e = errno;
    snprintf(why, n, "%s", what);
    errno = e;
    return -1;
}

int overlay_mount(const int *lowers, size_t n_lowers, int upper, int work, unsigned attrs, char *why, size_t why_len)
{
    _cleanup_fd_ int fs = fsopen("overlay", FSOPEN_CLOEXEC);
    if (fs < 0)
        return fail(why, why_len, "fsopen(\"overlay\")");
    if (fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0)
        return fail(why, why_len, "the option userxattr");
    for (size_t i = 0; i < n_lowers; i++)
        if (layer(fs, "lowerdir+", lowers[i]) < 0)
            return fail(why, why_len, "the lower layer (lowerdir+)");
    if (layer(fs, "upperdir", upper) < 0)
        return fail(why, why_len, "the upper layer (upperdir)");
    if (layer(fs, "workdir", work) < 0)
        return fail(why, why_len, "the work directory (workdir)");
    static const char *const opts[][2] = {
        {"redirect_dir", "nofollow"}, {"metacopy", "off"}, {"index", "off"}, {"xino", "off"}};
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        if (fsconfig(fs, FSCONFIG_SET_STRING, opts[i][0], opts[i][1], 0) < 0) {
            char w[64];
            snprintf(w, sizeof w, "the option %s=%s", opts[i][0], opts[i][1]);
            return fail(why, why_len, w);
        }
    if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
        int e = errno;
        char log[256] = "";
        ssize_t n = read(fs, log, sizeof log - 1); /* the kernel's reason, when it gave one */
        log[n > 0 ? n : 0] = '\0';
        if (n > 0 && log[n - 1] == '\n')
            log[n - 1] = '\0';
        snprintf(why, why_len, "creating it%s%s", log[0] ? " (kernel: " : "", log[0] ? log : "");
        if (log[0])
            strncat(why, ")", why_len - strlen(why) - 1);
        errno = e;
        return -1;
    }
    int m = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
    if (m < 0)
        return fail(why, why_len, "fsmount");
    return m;
}
