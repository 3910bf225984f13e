// SPDX-License-Identifier: Apache-2.0
/* procwalk: try to read host files through the magic links of /proc.
 *
 *   procwalk TOKEN CONTROL_PATH CONTROL_TOKEN [TARGET...] [-- HOSTPID...]
 *
 * For every process this /proc shows, and for every HOSTPID (a pid on the host, which
 * must not exist here), it opens each TARGET (an absolute host path) below
 * /proc/PID/root and /proc/PID/cwd (as "../"-relative climbs too), reads every
 * /proc/PID/fd/N (and, for directories, each TARGET's base name below it) and looks for
 * TOKEN in what it read. Prints "leak WHERE" for each success and, at the end,
 * "leaks N". The positive control reads CONTROL_PATH through /proc/self/root and through
 * a descriptor in /proc/self/fd and expects CONTROL_TOKEN. */
#include "esc.h"

#include <dirent.h>
#include <sys/stat.h>

static int leaks;
static const char *token;

static void check(const char *where, int dirfd, const char *path)
{
    int r = file_has(dirfd, path, token);
    if (r == 1) {
        leaks++;
        printf("leak %s%s%s\n", where, path[0] == '/' ? "" : "/", path);
        fflush(stdout);
    }
}

static void walk_pid(const char *pid, char **targets, int nt)
{
    char p[2048];
    for (int t = 0; t < nt; t++) {
        /* absolute path through the process's root */
        snprintf(p, sizeof p, "/proc/%s/root%s", pid, targets[t]);
        check(p, AT_FDCWD, p);
        /* climbing out of the process's cwd */
        for (int up = 1; up <= 8; up++) {
            char rel[1024] = "";
            for (int i = 0; i < up; i++)
                strcat(rel, "../");
            strcat(rel, targets[t][0] == '/' ? targets[t] + 1 : targets[t]);
            snprintf(p, sizeof p, "/proc/%s/cwd/%s", pid, rel);
            check(p, AT_FDCWD, p);
        }
    }
    snprintf(p, sizeof p, "/proc/%s/fd", pid);
    DIR *d = opendir(p);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char fp[300];
        snprintf(fp, sizeof fp, "/proc/%s/fd/%s", pid, de->d_name);
        check(fp, AT_FDCWD, fp);
        int dfd = open(fp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
            continue;
        for (int t = 0; t < nt; t++) {
            const char *base = strrchr(targets[t], '/');
            base = base ? base + 1 : targets[t];
            check(fp, dfd, base);
            char up[1024];
            snprintf(up, sizeof up, "..%s", targets[t]);
            check(fp, dfd, up);
        }
        close(dfd);
    }
    closedir(d);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: procwalk TOKEN CONTROL_PATH CONTROL_TOKEN [TARGET...] [-- HOSTPID...]\n");
        return 2;
    }
    token = argv[1];
    const char *control = argv[2], *control_token = argv[3];
    char **targets = argv + 4;
    int nt = 0;
    while (4 + nt < argc && strcmp(targets[nt], "--") != 0)
        nt++;
    char **hostpids = argv + 4 + nt + (4 + nt < argc ? 1 : 0);
    int nh = argc - (int)(hostpids - argv);

    /* positive controls: the same routes work for a path the view shows */
    char p[4096];
    snprintf(p, sizeof p, "/proc/self/root%s", control);
    int r = file_has(AT_FDCWD, p, control_token);
    if (r == 1)
        printf("control_root ok\n");
    else
        printf("control_root %s\n", r < 0 ? esc_errname(errno) : "MISSING");
    int cfd = open(control, O_RDONLY | O_CLOEXEC);
    snprintf(p, sizeof p, "/proc/self/fd/%d", cfd);
    r = cfd < 0 ? -1 : file_has(AT_FDCWD, p, control_token);
    if (r == 1)
        printf("control_fd ok\n");
    else
        printf("control_fd %s\n", r < 0 ? esc_errname(errno) : "MISSING");
    if (cfd >= 0)
        close(cfd);

    /* PID 1, the reaper: its links must not even be readable */
    static const char *const links[] = {"root", "cwd", "exe"};
    for (size_t i = 0; i < 3; i++) {
        char buf[4096], label[64];
        snprintf(p, sizeof p, "/proc/1/%s", links[i]);
        snprintf(label, sizeof label, "pid1_%s", links[i]);
        report(label, readlink(p, buf, sizeof buf));
    }
    /* The directory may open and list its numbers (its owner is the caller when the
     * caller is root), but no entry may be followed or read. */
    DIR *d1 = opendir("/proc/1/fd");
    if (!d1) {
        report("pid1_fd", -1);
    } else {
        int n = 0, opened = 0, last = 0;
        struct dirent *e1;
        while ((e1 = readdir(d1))) {
            if (e1->d_name[0] == '.')
                continue;
            n++;
            char fp[300], buf[4096];
            snprintf(fp, sizeof fp, "/proc/1/fd/%s", e1->d_name);
            int fd = open(fp, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
            if (fd >= 0) {
                opened++;
                close(fd);
            } else if (readlink(fp, buf, sizeof buf) >= 0) {
                opened++;
            } else {
                last = errno;
            }
        }
        closedir(d1);
        if (opened)
            printf("pid1_fd ok %d of %d entries opened or read\n", opened, n);
        else
            printf("pid1_fd %s\n", n ? esc_errname(last) : "EMPTY");
    }

    /* every process of this /proc */
    char pids[1024] = "";
    DIR *d = opendir("/proc");
    if (!d) {
        report("proc", -1);
        return 1;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9')
            continue;
        if (strlen(pids) + strlen(de->d_name) + 2 < sizeof pids)
            strcat(strcat(pids, " "), de->d_name);
        walk_pid(de->d_name, targets, nt);
    }
    closedir(d);
    printf("pids%s\n", pids);

    /* host pids: not addressable from here */
    for (int i = 0; i < nh; i++) {
        snprintf(p, sizeof p, "/proc/%s", hostpids[i]);
        struct stat st;
        int s = stat(p, &st);
        char label[64];
        snprintf(label, sizeof label, "hostpid_%s", hostpids[i]);
        /* a host pid may by chance be a pid of this namespace too: only count leaks */
        if (s == 0)
            walk_pid(hostpids[i], targets, nt);
        report(label, s);
    }
    printf("leaks %d\n", leaks);
    return 0;
}
