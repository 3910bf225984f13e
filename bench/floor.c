// SPDX-License-Identifier: Apache-2.0
/* floor: the least a namespace sandbox can do, as a reference for bench/startup.sh.
 *
 * It clones into new user, mount, PID, IPC, UTS and network namespaces, maps the
 * caller's uid and gid, makes / private, mounts a tmpfs, binds the host's / read-only
 * (recursively) under it, mounts a fresh /proc, pivot_root's there and execs `true`;
 * the parent waits. No /dev, no seccomp, no supervision: whatever cordon or bwrap spend
 * beyond this is their own. Built with `cc -O2 -static` so no dynamic loader runs.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/mount.h>

static void die(const char *what)
{
    perror(what);
    _exit(125);
}

static void put(const char *file, const char *text)
{
    int fd = open(file, O_WRONLY | O_CLOEXEC);
    if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) < 0)
        die(file);
}

int main(void)
{
    char map[64];
    uid_t uid = getuid();
    gid_t gid = getgid();
    int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNET;
    /* clone without a new stack behaves like fork; the raw call has no glibc pid cache. */
    pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);
    if (pid < 0)
        die("clone");
    if (pid > 0) {
        int st;
        if (waitpid(pid, &st, 0) < 0)
            die("waitpid");
        return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    /* An unprivileged process may map only its own ids, and gid_map only after setgroups is denied. */
    put("/proc/self/setgroups", "deny");
    snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
    put("/proc/self/uid_map", map);
    snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
    put("/proc/self/gid_map", map);
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        die("make / private");
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") < 0)
        die("tmpfs");
    if (mkdir("/tmp/root", 0755) < 0)
        die("mkdir /tmp/root");
    if (mount("/", "/tmp/root", NULL, MS_BIND | MS_REC, NULL) < 0)
        die("bind /");
    struct mount_attr ro = {.attr_set = MOUNT_ATTR_RDONLY};
    if (syscall(SYS_mount_setattr, AT_FDCWD, "/tmp/root", AT_RECURSIVE, &ro, sizeof ro) < 0)
        die("read-only /");
    if (mount("proc", "/tmp/root/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        die("mount /proc");
    /* pivot_root(".", ".") stacks the old root on the new one; detaching it leaves only the new. */
    if (chdir("/tmp/root") < 0)
        die("chdir");
    if (syscall(SYS_pivot_root, ".", ".") < 0)
        die("pivot_root");
    if (umount2(".", MNT_DETACH) < 0)
        die("detach old root");
    if (chdir("/") < 0)
        die("chdir /");
    char *argv[] = {"true", NULL}, *envp[] = {NULL};
    execve("/bin/true", argv, envp);
    die("execve /bin/true");
}
