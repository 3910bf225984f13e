// SPDX-License-Identifier: Apache-2.0
/* Attacks on the creation control (supervise/creation.c).
 *
 *   creation race DIR NAME SECONDS   two threads: one calls mkdir/open(O_CREAT)/symlink of
 *                                    DIR/okNNN, the other keeps rewriting the path's last
 *                                    component to NAME in the same buffer; reports
 *                                    "race_NAME ok" when NAME was created (an escape) and
 *                                    "race_NAME EPERM" when not, and "race_control ok" when
 *                                    the okNNN names were created (the calls did run)
 *   creation listener                a seccomp filter with a listener of its own
 *                                    (SECCOMP_FILTER_FLAG_NEW_LISTENER) in front of cordon's
 *   creation setid FILE              chmod/fchmod/fchmodat/open/mknod with S_ISUID or
 *                                    S_ISGID, and a plain chmod as the control
 *   creation openat2 PATH            openat2(O_CREAT) of PATH
 *   creation landlock                landlock_create_ruleset(version)
 */
#include "esc.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>

static char race_buf[4096];
static volatile int race_stop;
static size_t race_off; /* where the last component starts in race_buf */
static char race_name[256];

static void spin_us(long us)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do
        clock_gettime(CLOCK_MONOTONIC, &b);
    while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void *flipper(void *arg)
{
    (void)arg;
    while (!race_stop) {
        /* the name the supervisor may check, then the one it must never act on, each
         * held for a while so that both are seen */
        snprintf(race_buf + race_off, sizeof race_buf - race_off, "ok%03d", rand() % 1000);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        spin_us(rand() % 60);
        memcpy(race_buf + race_off, race_name, strlen(race_name) + 1);
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        spin_us(rand() % 60);
    }
    return NULL;
}

static int do_race(const char *dir, const char *name, double seconds)
{
    snprintf(race_name, sizeof race_name, "%s", name);
    race_off = (size_t)snprintf(race_buf, sizeof race_buf, "%s/", dir);
    snprintf(race_buf + race_off, sizeof race_buf - race_off, "ok000");
    pthread_t t;
    if (pthread_create(&t, NULL, flipper, NULL) != 0)
        return 1;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    long calls = 0;
    do {
        switch (calls % 3) {
        case 0: (void)syscall(SYS_mkdirat, AT_FDCWD, race_buf, 0755); break;
        case 1: {
            long fd = syscall(SYS_openat, AT_FDCWD, race_buf, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
            if (fd >= 0)
                close((int)fd);
            break;
        }
        case 2: (void)syscall(SYS_symlinkat, "x", AT_FDCWD, race_buf); break;
        }
        calls++;
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while ((double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
    race_stop = 1;
    pthread_join(t, NULL);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    char label[300];
    snprintf(label, sizeof label, "race_%s", name);
    int created = lstat(path, &st) == 0;
    errno = EPERM;
    report(label, created ? 0 : -1);
    int made = 0;
    for (int i = 0; i < 1000 && !made; i++) {
        snprintf(path, sizeof path, "%s/ok%03d", dir, i);
        made = lstat(path, &st) == 0;
    }
    errno = ENOENT; /* (none made) */
    report("race_control", made ? 0 : -1);
    printf("race_calls ok %ld\n", calls);
    return 0;
}

static int do_listener(void)
{
    struct sock_filter f[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    struct sock_fprog p = {1, f};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    report("listener_own", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &p));
    /* a filter without a listener is fine (nesting) */
    report("filter_control", syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &p));
    return 0;
}

static int do_setid(const char *file)
{
    char path[4096];
    report("chmod_control", chmod(file, 0755));
    report("chmod_suid", chmod(file, 04755));
    report("chmod_sgid", chmod(file, 02755));
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    report("fchmod_suid", fchmod(fd, 04755));
    report("fchmodat_suid", fchmodat(AT_FDCWD, file, 06755, 0));
    report("fchmodat2_suid", syscall(452 /* fchmodat2 */, AT_FDCWD, file, 04755, 0));
    snprintf(path, sizeof path, "%s.new", file);
    report("open_suid", open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 04755));
    snprintf(path, sizeof path, "%s.node", file);
    report("mknod_suid", mknod(path, S_IFREG | 04755, 0));
    struct stat st;
    if (stat(file, &st) == 0)
        printf("mode ok %o\n", (unsigned)(st.st_mode & 07777));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 5 && strcmp(argv[1], "race") == 0)
        return do_race(argv[2], argv[3], atof(argv[4]));
    if (argc >= 2 && strcmp(argv[1], "listener") == 0)
        return do_listener();
    if (argc >= 3 && strcmp(argv[1], "setid") == 0)
        return do_setid(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "openat2") == 0) {
        struct {
            unsigned long long flags, mode, resolve;
        } how = {O_CREAT | O_WRONLY | O_CLOEXEC, 0644, 0};
        report("openat2", syscall(437, AT_FDCWD, argv[2], &how, sizeof how));
        return 0;
    }
    if (argc >= 2 && strcmp(argv[1], "landlock") == 0) {
        report("landlock_abi", syscall(444, NULL, 0, 1u /* LANDLOCK_CREATE_RULESET_VERSION */));
        return 0;
    }
    fprintf(stderr, "usage: creation race DIR NAME SECONDS | listener | setid FILE | openat2 PATH | landlock\n");
    return 2;
}
