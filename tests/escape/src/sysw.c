// SPDX-License-Identifier: Apache-2.0
/* sysw: write access to the kernel's configuration through file systems the command
 * mounts itself, in user namespaces of its own (nesting is allowed by default).
 *
 *   sysw cgroup SCRATCH   new user, mount and cgroup namespaces; mount cgroup2 on SCRATCH
 *                         (the host's cgroup tree from cordon's cgroup down); then try to
 *                         open each of its files for writing and to make a cgroup
 *   sysfs SCRATCH         new user, mount and network namespaces; fsopen("sysfs"), then
 *                         mount sysfs on SCRATCH (read-write, else read-only); open
 *                         kernel settings for writing
 *   proc SCRATCH          new user, mount and PID namespaces; mount a proc of its own;
 *                         open global sysctls for writing
 *
 * Nothing is ever written: a file that opens for writing is reported ("writable N: names")
 * and closed. A cgroup that could be made is removed at once. */
#include "esc.h"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static void nest(int flags)
{
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (report("unshare", unshare(CLONE_NEWUSER | CLONE_NEWNS | flags)) < 0)
        exit(0);
    map_self_as_root(uid, gid); /* refused for the caller root; not needed for mounts */
    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

/* Try O_WRONLY on every regular file directly in dir and one level below. */
static void writable_files(const char *label, const char *dir, int depth, int *n, char *names, size_t cap, int *last)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        struct stat st;
        if (lstat(p, &st) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth > 0)
                writable_files(label, p, depth - 1, n, names, cap, last);
            continue;
        }
        if (!S_ISREG(st.st_mode) || !(st.st_mode & 0222))
            continue;
        int fd = open(p, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0) {
            close(fd);
            (*n)++;
            if (strlen(names) + strlen(p) + 2 < cap)
                strcat(strcat(names, " "), p);
        } else {
            *last = errno;
        }
    }
    closedir(d);
    (void)label;
}

static void report_writable(const char *label, const char *dir, int depth)
{
    int n = 0, last = 0;
    char names[2048] = "";
    writable_files(label, dir, depth, &n, names, sizeof names, &last);
    if (n)
        printf("%s ok writable %d:%s\n", label, n, names);
    else
        printf("%s %s\n", label, last ? esc_errname(last) : "NOFILES");
    fflush(stdout);
}

static void openw(const char *label, const char *dir, const char *rel)
{
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", dir, rel);
    int fd = open(p, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    report(label, fd);
    if (fd >= 0)
        close(fd);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: sysw cgroup|sysfs|proc SCRATCH\n");
        return 2;
    }
    const char *s = argv[2];
    if (!strcmp(argv[1], "cgroup")) {
        nest(CLONE_NEWCGROUP);
        if (report("cgroup2_mount", mount("none", s, "cgroup2", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) < 0)
            return 0;
        /* the files that would raise a run's limits or reach the processes sharing the
         * cgroup, one by one (ENOENT where this cgroup has no such file) */
        static const char *const named[] = {"pids.max",    "memory.max",    "memory.swap.max",
                                            "cgroup.kill", "cgroup.freeze", "cgroup.subtree_control",
                                            "cgroup.procs"};
        for (size_t i = 0; i < sizeof named / sizeof *named; i++) {
            char label[64];
            snprintf(label, sizeof label, "cgroup_w_%s", named[i]);
            openw(label, s, named[i]);
        }
        /* and what the limits read at the root of the mount */
        static const char *const limits[] = {"pids.max", "memory.max"};
        for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
            char p[4096], buf[64] = "";
            snprintf(p, sizeof p, "%s/%s", s, limits[i]);
            int fd = open(p, O_RDONLY | O_CLOEXEC);
            ssize_t n = fd < 0 ? -1 : read_some(fd, buf, sizeof buf);
            if (fd >= 0)
                close(fd);
            buf[strcspn(buf, "\n")] = '\0';
            char label[64];
            snprintf(label, sizeof label, "cgroup_r_%s", limits[i]);
            if (n < 0)
                report(label, -1);
            else
                reportf(label, "%s", buf);
        }
        report_writable("cgroup_files", s, 1);
        char p[4096];
        snprintf(p, sizeof p, "%s/cordon-escape-probe-%d", s, (int)getpid());
        if (report("cgroup_mkdir", mkdir(p, 0755)) == 0)
            rmdir(p);
        return 0;
    }
    if (!strcmp(argv[1], "sysfs")) {
        nest(CLONE_NEWNET);
        int fs = (int)syscall(SYS_fsopen, "sysfs", 0);
        report("sysfs_fsopen", fs);
        if (fs >= 0)
            close(fs);
        if (report("sysfs_mount_rw", mount("none", s, "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) < 0 &&
            report("sysfs_mount_ro", mount("none", s, "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) < 0)
            return 0;
        openw("sysfs_thp", s, "kernel/mm/transparent_hugepage/enabled");
        openw("sysfs_uevent_helper", s, "kernel/uevent_helper");
        report_writable("sysfs_kernel_files", s, 0);
        char p[4096];
        snprintf(p, sizeof p, "%s/kernel", s);
        report_writable("sysfs_kernel_dir_files", p, 1);
        return 0;
    }
    if (!strcmp(argv[1], "proc")) {
        nest(CLONE_NEWPID);
        pid_t pid = fork();
        if (pid == 0) {
            if (report("proc_mount", mount("proc", s, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL)) == 0) {
                openw("proc_drop_caches", s, "sys/vm/drop_caches");
                openw("proc_core_pattern", s, "sys/kernel/core_pattern");
                openw("proc_sysrq_trigger", s, "sysrq-trigger");
            }
            _exit(0);
        }
        waitpid(pid, NULL, 0);
        return 0;
    }
    fprintf(stderr, "sysw: unknown mode %s\n", argv[1]);
    return 2;
}
