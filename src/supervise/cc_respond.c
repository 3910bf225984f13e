// SPDX-License-Identifier: Apache-2.0
/* The creation control's answers to the kernel, the command's memory, and the worker
 * processes that wait where PID 1 must not. */
#include "supervise/cc_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>

#include "confine/seccomp.h"
#include "supervise/report.h"
#include "util/cleanup.h"
#include "util/err.h"
#include "util/fdutil.h"
#include "util/trace.h"

/* Memory of the thread: a NUL-terminated string of at most size - 1 bytes, read a
 * page at a time (a string may end right before an unmapped page). */
int cc_read_string(pid_t tid, uint64_t addr, char *out, size_t size)
{
    if (addr == 0)
        return -EFAULT;
    size_t got = 0;
    while (got < size - 1) {
        uint64_t a = addr + got;
        size_t chunk = 4096 - (size_t)(a & 4095);
        if (chunk > size - 1 - got)
            chunk = size - 1 - got;
        struct iovec local = {out + got, chunk}, remote = {(void *)(uintptr_t)a, chunk};
        ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
        if (n < 0 && (errno == EPERM || errno == EACCES)) {
            pw_ptrace_cap(true);
            n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
            int e = errno;
            pw_ptrace_cap(false);
            errno = e;
        }
        if (n <= 0)
            return n < 0 ? (errno == ESRCH ? -ESRCH : -EFAULT) : -EFAULT;
        char *nul = memchr(out + got, '\0', (size_t)n);
        if (nul)
            return 0;
        got += (size_t)n;
    }
    return -ENAMETOOLONG;
}

int cc_read_mem(pid_t tid, uint64_t addr, void *out, size_t len)
{
    struct iovec local = {out, len}, remote = {(void *)(uintptr_t)addr, len};
    ssize_t n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
    if (n < 0 && (errno == EPERM || errno == EACCES)) {
        pw_ptrace_cap(true);
        n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
        pw_ptrace_cap(false);
    }
    return n == (ssize_t)len ? 0 : -EFAULT;
}

bool cc_still_valid(cc_state *cc, uint64_t id)
{
    return ioctl(cc->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

void cc_respond(cc_state *cc, uint64_t id, long long val, int error)
{
    struct seccomp_notif_resp *resp = (struct seccomp_notif_resp *)cc->resp;
    memset(resp, 0, sizeof *resp);
    resp->id = id;
    resp->val = error ? 0 : val;
    resp->error = error ? -error : 0;
    (void)ioctl(cc->listener, SECCOMP_IOCTL_NOTIF_SEND, resp); /* ENOENT: the thread is gone */
}

/* Hand the thread a new descriptor and answer its call (SECCOMP_ADDFD_FLAG_SEND).
 *
 * The thread installs the descriptor itself, so the ioctl waits for it to run, and the
 * kernel wakes it (and then the supervisor) without SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP's
 * hand-over: on an otherwise idle machine each wake-up lands on the other, halted CPU
 * (tens of microseconds in a virtual machine, most of an open's cost).  Both are held on
 * the CPU the supervisor runs on for the moment of the hand-back, and let go after. */
void cc_respond_fd(cc_state *cc, uint64_t id, pid_t tid, int fd, bool cloexec)
{
#ifdef CORDON_TRACE_TIMING
    long long t0 = trace_us();
#endif
    struct seccomp_notif_addfd add = {
        .id = id,
        .flags = SECCOMP_ADDFD_FLAG_SEND,
        .srcfd = (uint32_t)fd,
        .newfd = 0,
        .newfd_flags = cloexec ? O_CLOEXEC : 0,
    };
    cpu_set_t one, mine, theirs;
    int cpu = sched_getcpu();
    bool pinned = false;
    if (cpu >= 0 && cpu < CPU_SETSIZE && sched_getaffinity(0, sizeof mine, &mine) == 0 &&
        sched_getaffinity(tid, sizeof theirs, &theirs) == 0 && CPU_ISSET(cpu, &theirs)) {
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        if (sched_setaffinity(tid, sizeof one, &one) == 0) {
            pinned = true;
            (void)sched_setaffinity(0, sizeof one, &one);
        }
    }
    if (ioctl(cc->listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 && errno != ENOENT)
        cc_respond(cc, id, 0, errno == EMFILE ? EMFILE : EIO);
    if (pinned) {
        (void)sched_setaffinity(tid, sizeof theirs, &theirs); /* ESRCH: it has gone */
        (void)sched_setaffinity(0, sizeof mine, &mine);
    }
#ifdef CORDON_TRACE_TIMING
    cc->trace_addfd_us += trace_us() - t0;
#endif
}

int cc_refuse(cc_state *cc, const call *c, const char *why)
{
    cc_refuse_log(cc, c->what, c->path, why);
    return EPERM;
}

/* Act with the thread's umask: the process's is PID 1's, which acts for one call at a
 * time. */
int cc_with_umask(cc_state *cc, pid_t tid)
{
    (void)tid;
    int u = pw_umask(&cc->pw);
    if (u < 0)
        return u;
    umask((mode_t)u);
    return 0;
}

/* A descriptor that the path reached through a magic link of /proc: decide on the
 * name it has in the thread's view.  Pipes, sockets, devices and deleted files have
 * none that matters; a host file whose name cannot be found again is refused unless it
 * was handed in from outside (the command's standard descriptors): a descriptor taken
 * in another mount namespace (a tmpfs over the repository, say) is not a way around the
 * rules. */
const char *cc_decide_object(cc_state *cc, int obj, cc_act act)
{
    struct stat st;
    if (fstat(obj, &st) < 0)
        return "cannot look at the file";
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return NULL;
    if (!cc_is_host(cc, obj, &st))
        return NULL;
    if (S_ISREG(st.st_mode) && st.st_nlink == 0)
        return NULL; /* deleted: no name */
    if (cc->ll_mode && cc_was_handed(cc, &st))
        return NULL; /* --isolation landlock: the view is the host's, so its name is found,
                        and a rule of the view (--base host) would refuse what the command
                        was given to write */
    char p[48];
    snprintf(p, sizeof p, "self/fd/%d", obj);
    ssize_t n = readlinkat(cc->pw.proc_fd, p, cc->path2, sizeof cc->path2 - 1);
    if (n > 0 && cc->path2[0] == '/') {
        cc->path2[n] = '\0';
        pw_result r;
        if (pw_resolve(&cc->pw, AT_FDCWD, cc->path2, 0, &r) == 0) {
            struct stat nst;
            bool found = false;
            const char *why = NULL;
            if (r.dir_fd >= 0 && !r.dot && cc_exists_at(r.dir_fd, r.name, &nst) && nst.st_dev == st.st_dev &&
                nst.st_ino == st.st_ino) {
                found = true;
                why = cc_decide(cc, r.dir_fd, &r.dir_st, r.name, act);
            } else if (r.dot && r.dir_fd >= 0 && r.dir_st.st_dev == st.st_dev && r.dir_st.st_ino == st.st_ino) {
                found = true;
            }
            pw_result_close(&r);
            if (found)
                return why;
        }
    }
    return cc_was_handed(cc, &st) ? NULL : WHY_UNNAMED;
}

/* The controlling terminal of the thread, for an open of /dev/tty. */
int cc_open_ctty(cc_state *cc, pid_t tid, int flags)
{
    char p[48];
    snprintf(p, sizeof p, "%d/stat", (int)pw_proc_id(&cc->pw, tid));
    _cleanup_fd_ int fd = openat(cc->pw.proc_fd, p, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = read(fd, cc->status, sizeof cc->status - 1);
    if (n <= 0)
        return -EIO;
    cc->status[n] = '\0';
    const char *rp = strrchr(cc->status, ')');
    unsigned long tty = 0;
    if (!rp || sscanf(rp + 1, " %*c %*d %*d %*d %lu", &tty) != 1)
        return -EIO;
    if (tty == 0)
        return -ENXIO;
    unsigned maj = major((dev_t)tty), min = minor((dev_t)tty);
    if (maj < 136 || maj > 143)
        return -ENXIO;
    snprintf(p, sizeof p, "/dev/pts/%u", (maj - 136) * 256 + min);
    int t = open(p, (flags & ~(O_CREAT | O_EXCL | O_TRUNC)) | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    return t < 0 ? -errno : t;
}

static bool add_worker(cc_state *cc, pid_t pid, uint64_t id)
{
    if (cc->n_workers >= sizeof cc->workers / sizeof cc->workers[0])
        return false;
    cc->workers[cc->n_workers].pid = pid;
    cc->workers[cc->n_workers].id = id;
    cc->workers[cc->n_workers].listener = cc->listener;
    cc->n_workers++;
    return true;
}

void cc_reaped(cc_state *cc, pid_t pid, int status)
{
    cc_take_shared_refusals(cc);
    for (size_t i = 0; i < cc->n_workers; i++) {
        if (cc->workers[i].pid != pid)
            continue;
        /* harmless when the worker answered: the id is no longer valid then */
        if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
            int listener = cc->listener;
            cc->listener = cc->workers[i].listener;
            cc_respond(cc, cc->workers[i].id, 0, EINTR);
            cc->listener = listener;
        }
        cc->workers[i] = cc->workers[--cc->n_workers];
        return;
    }
}

/* Fork a worker for a call that may take long (it answers the notification itself, so
 * that PID 1 goes on serving): 0 in the worker, > 0 in PID 1, or -errno. */
pid_t cc_fork_worker(cc_state *cc, uint64_t id)
{
    if (cc->n_workers >= sizeof cc->workers / sizeof cc->workers[0])
        return -EAGAIN;
    pid_t w = fork();
    if (w < 0)
        return -errno;
    if (w > 0)
        add_worker(cc, w, id);
    return w;
}

/* Is the thread in a user namespace other than the supervisor's? */
bool cc_other_userns(cc_state *cc, pid_t tid)
{
    char p[48];
    struct stat theirs, mine;
    snprintf(p, sizeof p, "%d/ns/user", (int)pw_proc_id(&cc->pw, tid));
    pw_ptrace_cap(true);
    bool other = fstatat(cc->pw.proc_fd, p, &theirs, 0) < 0 || fstatat(cc->pw.proc_fd, "self/ns/user", &mine, 0) < 0 ||
                 theirs.st_ino != mine.st_ino || theirs.st_dev != mine.st_dev;
    pw_ptrace_cap(false);
    return other;
}

/* In a worker: become the thread as far as an open asks: its user namespace and its
 * effective capabilities there (the files of /proc judge the opener by them: a nested
 * user namespace's uid_map is written by its parent's processes only). */
static int become_thread_userns(cc_state *cc, pid_t tid)
{
    char p[48];
    snprintf(p, sizeof p, "%d/status", (int)pw_proc_id(&cc->pw, tid));
    _cleanup_fd_ int sfd = openat(cc->pw.proc_fd, p, O_RDONLY | O_CLOEXEC);
    ssize_t n = sfd < 0 ? -1 : read(sfd, cc->status, sizeof cc->status - 1);
    if (n <= 0)
        return -EIO;
    cc->status[n] = '\0';
    const char *ce = strstr(cc->status, "CapEff:");
    if (!ce)
        return -EIO;
    unsigned long long eff = strtoull(ce + 7, NULL, 16);
    snprintf(p, sizeof p, "%d/ns/user", (int)pw_proc_id(&cc->pw, tid));
    pw_ptrace_cap(true);
    int fd = openat(cc->pw.proc_fd, p, O_RDONLY | O_CLOEXEC);
    pw_ptrace_cap(false);
    if (fd < 0)
        return -errno;
    int r = setns(fd, CLONE_NEWUSER);
    int e = errno;
    close(fd);
    if (r < 0)
        return -e;
    struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    d[0].permitted = d[0].effective = (uint32_t)eff;
    d[1].permitted = d[1].effective = (uint32_t)(eff >> 32);
    if (syscall(SYS_capset, &h, d) < 0)
        return -errno;
    return 0;
}

/* An open in a worker, which answers the notification itself so that PID 1 goes on
 * serving: for a FIFO (the open waits for the other end), or as the thread's user
 * namespace (as_thread). */
void cc_open_in_worker(cc_state *cc, uint64_t id, pid_t tid, int dir, const char *name, int flags, bool cloexec,
                       bool as_thread)
{
    pid_t w = cc_fork_worker(cc, id);
    if (w < 0) {
        cc_respond(cc, id, 0, -w);
        return;
    }
    if (w > 0)
        return;
    int e = as_thread ? become_thread_userns(cc, tid) : 0;
    if (e < 0) {
        cc_respond(cc, id, 0, -e);
        _exit(0);
    }
    int fd = openat(dir, name, flags | O_CLOEXEC);
    if (fd < 0)
        cc_respond(cc, id, 0, errno);
    else
        cc_respond_fd(cc, id, tid, fd, cloexec);
    _exit(0);
}
