// SPDX-License-Identifier: Apache-2.0
#include "sandbox/dev.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"

int dev_open_sources(dev_sources *d, cordon_error *err)
{
    for (size_t i = 0; i < PLAN_DEV_NODES; i++)
        d->fds[i] = -1;
    for (size_t i = 0; i < PLAN_DEV_NODES; i++) {
        const char *path = plan_dev_nodes[i];
        _cleanup_fd_ int fd = open_no_symlinks(path, O_PATH | O_CLOEXEC | O_NOFOLLOW);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
            return err_set(err, CORDON_STAGE_ROOT, errno, "cannot open the host's %s", path);
        if (!S_ISCHR(st.st_mode))
            return err_set(err, CORDON_STAGE_ROOT, 0, "the host's %s is not a character device", path);
        d->fds[i] = open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
        if (d->fds[i] < 0)
            return err_set(err, CORDON_STAGE_ROOT, errno, "cannot bind the host's %s", path);
        if (mnt_set_attr(d->fds[i], NULL, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, false, err) < 0)
            return -1;
    }
    return 0;
}

static int mount_at(int root_fd, root_scratch *s, int m, const char *dest, dest_create kind, cordon_error *err)
{
    _cleanup_fd_ int d = mnt_open_dest(root_fd, s, dest, kind, err);
    if (d < 0)
        return -1;
    return mnt_attach(m, d, dest, err);
}

int dev_build(int root_fd, root_scratch *s, dev_sources *d, cordon_error *err)
{
    {
        _cleanup_fd_ int m = mnt_new_tmpfs("0755", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, err);
        if (m < 0 || mount_at(root_fd, s, m, "/dev", DEST_DIR, err) < 0)
            return err_wrap(err, "/dev");
        if (mnt_mark_ours(s, m, err) < 0 || mnt_ro_later(s, m, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < PLAN_DEV_NODES; i++) {
        if (mount_at(root_fd, s, d->fds[i], plan_dev_nodes[i], DEST_FILE, err) < 0)
            return -1;
        close(d->fds[i]);
        d->fds[i] = -1;
    }
    {
        _cleanup_fd_ int fs = fsopen("devpts", FSOPEN_CLOEXEC);
        if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0620", 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
            return err_set(err, CORDON_STAGE_ROOT, errno, "cannot create a private devpts for /dev/pts");
        _cleanup_fd_ int m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        if (m < 0 || mount_at(root_fd, s, m, "/dev/pts", DEST_DIR, err) < 0)
            return err_set(err, CORDON_STAGE_ROOT, errno, "cannot mount /dev/pts");
    }
    {
        _cleanup_fd_ int m = mnt_private_tmpfs(s, 01777, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, err);
        if (m < 0 || mount_at(root_fd, s, m, "/dev/shm", DEST_DIR, err) < 0)
            return err_wrap(err, "/dev/shm");
        /* private, as /tmp is (under --limit-memory the same tmpfs: the creation control
         * tells the host's file systems by device, and must not count it as one) */
        if (mnt_mark_ours(s, m, err) < 0)
            return -1;
    }
    _cleanup_fd_ int dev = mnt_open_dest(root_fd, s, "/dev", DEST_EXISTING, err);
    if (dev < 0)
        return -1;
    static const char *const links[][2] = {
        {"ptmx", "pts/ptmx"},          {"fd", "/proc/self/fd"},       {"stdin", "/proc/self/fd/0"},
        {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
    };
    for (size_t i = 0; i < sizeof links / sizeof *links; i++) {
        if (symlinkat(links[i][1], dev, links[i][0]) < 0)
            return err_set(err, CORDON_STAGE_ROOT, errno, "cannot create /dev/%s", links[i][0]);
    }
    return 0;
}
