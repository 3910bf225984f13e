// SPDX-License-Identifier: Apache-2.0
/* mounts: try to undo or get around the mounts that hide and protect.
 *
 *   mounts direct|nested DENY_DIR DENY_NAME DENY_FILE RO_DIR SCRATCH
 *
 * DENY_DIR is a --deny'd directory whose host copy holds DENY_NAME, DENY_FILE a --deny'd
 * file, RO_DIR a read-only bind, SCRATCH an empty directory in the writable workspace.
 * "direct" tries from the command as it is (no capabilities); "nested" first makes a new
 * user and mount namespace (as `unshare -Urm` does), where it holds every capability over
 * the new mount namespace, but every mount inherited from the sandbox is locked. Each
 * attempt reports one line; "deny_dir_content", "deny_file_content" and "ro_write" at the
 * end say whether anything was uncovered. */
#include "esc.h"

#include <linux/mount.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif

static const char *deny_dir, *deny_name, *deny_file, *ro_dir, *scratch;
static char pfx[16] = "";

static void rep(const char *what, long rc)
{
    char label[128];
    snprintf(label, sizeof label, "%s%s", pfx, what);
    report(label, rc);
}

static long sys_mount_setattr(const char *path, unsigned flags, struct mount_attr *a)
{
    return syscall(SYS_mount_setattr, AT_FDCWD, path, flags, a, sizeof *a);
}

/* What is left to see: the hidden name in the denied directory, any content in the
 * denied file, a write in the read-only directory. */
static void final_state(void)
{
    char p[4096], label[64];
    snprintf(p, sizeof p, "%s/%s", deny_dir, deny_name);
    int fd = open(p, O_RDONLY | O_CLOEXEC);
    snprintf(label, sizeof label, "%sdeny_dir_content", pfx);
    report(label, fd);
    if (fd >= 0)
        close(fd);
    fd = open(deny_file, O_RDONLY | O_CLOEXEC);
    char buf[64];
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
    snprintf(label, sizeof label, "%sdeny_file_content", pfx);
    if (n > 0)
        printf("%s ok %zd bytes\n", label, n);
    else
        printf("%s %s\n", label, n == 0 ? "EMPTY" : esc_errname(errno));
    if (fd >= 0)
        close(fd);
    snprintf(p, sizeof p, "%s/.cordon-escape-write", ro_dir);
    fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    snprintf(label, sizeof label, "%sro_write", pfx);
    report(label, fd);
    if (fd >= 0) {
        close(fd);
        unlink(p);
    }
    fflush(stdout);
}

static void attempts(bool nested)
{
    /* unmount what hides and protects */
    rep("umount_deny_dir", umount2(deny_dir, 0));
    rep("umount_deny_dir_detach", umount2(deny_dir, MNT_DETACH));
    rep("umount_deny_file_detach", umount2(deny_file, MNT_DETACH));
    rep("umount_ro_detach", umount2(ro_dir, MNT_DETACH));
    /* remount read-only binds read-write */
    rep("remount_ro_rw", mount(NULL, ro_dir, NULL, MS_REMOUNT | MS_BIND, NULL));
    rep("remount_root_rw", mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL));
    rep("remount_deny_dir_rw", mount(NULL, deny_dir, NULL, MS_REMOUNT | MS_BIND, NULL));
    struct mount_attr clr = {.attr_clr = MOUNT_ATTR_RDONLY};
    rep("setattr_ro_clear_rdonly", sys_mount_setattr(ro_dir, 0, &clr));
    rep("setattr_root_clear_rdonly_rec", sys_mount_setattr("/", AT_RECURSIVE, &clr));
    rep("setattr_deny_file_clear_rdonly", sys_mount_setattr(deny_file, 0, &clr));
    /* move the hiding mount away */
    rep("move_deny_dir", mount(deny_dir, scratch, NULL, MS_MOVE, NULL));
    /* a non-recursive bind of the parent of a hiding mount would show what it covers */
    char parent[4096];
    snprintf(parent, sizeof parent, "%s", deny_dir);
    char *slash = strrchr(parent, '/');
    if (slash && slash != parent)
        *slash = '\0';
    int t = (int)syscall(SYS_open_tree, AT_FDCWD, parent, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
    rep("open_tree_parent_nonrecursive", t);
    if (t >= 0) {
        /* it worked: look through it */
        char p[4096];
        const char *base = strrchr(deny_dir, '/') + 1;
        snprintf(p, sizeof p, "%s/%s", base, deny_name);
        int fd = openat(t, p, O_RDONLY | O_CLOEXEC);
        rep("open_tree_parent_reveals", fd);
        if (fd >= 0)
            close(fd);
        close(t);
    }
    rep("bind_parent_nonrecursive", mount(parent, scratch, NULL, MS_BIND, NULL));
    if (nested) {
        /* undo whatever the bind above did, so the scratch directory is plain again */
        umount2(scratch, MNT_DETACH);
        /* a recursive clone keeps the locks: the hiding mount cannot be taken off it */
        t = (int)syscall(SYS_open_tree, AT_FDCWD, parent, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
        if (t >= 0 && syscall(SYS_move_mount, t, "", AT_FDCWD, scratch, MOVE_MOUNT_F_EMPTY_PATH) == 0) {
            char p[4096];
            const char *base = strrchr(deny_dir, '/') + 1;
            snprintf(p, sizeof p, "%s/%s", scratch, base);
            rep("umount_deny_in_recursive_clone", umount2(p, MNT_DETACH));
            snprintf(p, sizeof p, "%s/%s/%s", scratch, base, deny_name);
            int fd = open(p, O_RDONLY | O_CLOEXEC);
            rep("recursive_clone_reveals", fd);
            if (fd >= 0)
                close(fd);
            umount2(scratch, MNT_DETACH);
        } else {
            rep("recursive_clone", -1);
        }
        if (t >= 0)
            close(t);
        /* a new mount over the hidden directory only hides more: after it is gone, the
         * hiding mount is still there */
        rep("tmpfs_over_deny_dir", mount("tmpfs", deny_dir, "tmpfs", 0, "mode=0755"));
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", deny_dir, deny_name);
        int fd = open(p, O_RDONLY | O_CLOEXEC);
        rep("tmpfs_over_deny_dir_reveals", fd);
        if (fd >= 0)
            close(fd);
        rep("umount_own_tmpfs", umount2(deny_dir, 0));
        rep("tmpfs_over_ro_dir", mount("tmpfs", ro_dir, "tmpfs", 0, "mode=0755"));
        umount2(ro_dir, MNT_DETACH);
    } else {
        rep("tmpfs_over_deny_dir", mount("tmpfs", deny_dir, "tmpfs", 0, "mode=0755"));
    }
}

int main(int argc, char **argv)
{
    if (argc != 7 || (strcmp(argv[1], "direct") && strcmp(argv[1], "nested"))) {
        fprintf(stderr, "usage: mounts direct|nested DENY_DIR DENY_NAME DENY_FILE RO_DIR SCRATCH\n");
        return 2;
    }
    bool nested = !strcmp(argv[1], "nested");
    deny_dir = argv[2], deny_name = argv[3], deny_file = argv[4], ro_dir = argv[5], scratch = argv[6];
    if (nested) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        /* as `unshare -Urm`: a new user namespace (every capability in it) and mount
         * namespace; the positive control is a mount of our own on the scratch directory */
        if (report("unshare_user_mount", unshare(CLONE_NEWUSER | CLONE_NEWNS)) < 0)
            return 0;
        /* The kernel refuses to map the parent's uid 0 from a namespace made without
         * CAP_SETFCAP (so this fails when the caller is root); the capabilities over the
         * new namespaces are there all the same, which is all the mounts need. */
        report("map_root", map_self_as_root(uid, gid));
        report("make_private", mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
        report("control_tmpfs_on_scratch", mount("tmpfs", scratch, "tmpfs", 0, "mode=0755"));
        umount2(scratch, MNT_DETACH);
        snprintf(pfx, sizeof pfx, "nested_");
    }
    attempts(nested);
    final_state();
    return 0;
}
