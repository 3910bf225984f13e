/* A command's shepherd, and the command's process.
 *
 * PID 1 clones the shepherd into its own address space (CLONE_VM: no page tables to
 * copy, whatever the size of the process the session was cloned from) on a stack of the
 * slot's own, and waits.  The shepherd becomes a child subreaper, keeps only what the
 * command needs, and starts it with CLONE_VM | CLONE_VFORK: the command's process runs
 * child_exec (supervise/child.c) as the command of a run does, and the shepherd resumes
 * when it has exec'd.  Until then PID 1 and the shepherd are stopped and the command's
 * process may use the C library.  Then the shepherd tells PID 1 (the shepherd pipe) and
 * from that moment it runs beside PID 1 in the same memory: it makes raw system calls
 * only (no errno, nothing of the C library's state touched), on its own stack.
 *
 * It reaps whatever is reparented to it: when the command's own process ends, it tells
 * PID 1 the status and, unless the command keeps what it left (--keep), exits at once,
 * with 0 when nothing is left below it and 1 when something is (PID 1 then sweeps it,
 * session.h).  With --keep it reaps on until nothing is left. */
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "session/session.h"
#include "util/err.h"
#include "util/fdutil.h"

/* ------------------------------------------------------------------------------------ */
/* raw system calls: no errno, no C library state (the shepherd shares PID 1's memory) */

#if defined(__x86_64__)
#define SESS_SHARED_VM 1
static inline long raw4(long n, long a, long b, long c, long d)
{
    register long r10 __asm__("r10") = d;
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
    return ret;
}
#elif defined(__aarch64__)
#define SESS_SHARED_VM 1
static inline long raw4(long n, long a, long b, long c, long d)
{
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory", "cc");
    return x0;
}
#else
/* Elsewhere the shepherd gets an address space of its own (a copy, as fork makes), where
 * the C library's syscall() is safe. */
#define SESS_SHARED_VM 0
static inline long raw4(long n, long a, long b, long c, long d)
{
    long r = syscall(n, a, b, c, d);
    return r < 0 ? -errno : r;
}
#endif

int sess_shepherd_clone_flags(void)
{
    return SESS_SHARED_VM ? CLONE_VM | SIGCHLD : SIGCHLD;
}

static void raw_exit(int code)
{
    for (;;)
        raw4(SYS_exit_group, code, 0, 0, 0);
}

static void tell(int fd, const sess_shep_msg *m)
{
    long r;
    do
        r = raw4(SYS_write, fd, (long)m, sizeof *m, 0);
    while (r == -EINTR);
}

/* ------------------------------------------------------------------------------------ */
/* the command's process: PID 1 and the shepherd are stopped until it execs */

static int cmd_main(void *arg)
{
    sess_start *st = arg;
    st->c_pid = getpid();
    for (int i = 0; i < 3; i++)
        if (st->stdio[i] != i && dup2(st->stdio[i], i) < 0) {
            cordon_error e = {0};
            err_set(&e, CORDON_STAGE_SUPERVISE, errno, "cannot give the command its standard streams");
            report_fail(st->conn, &e);
        }
    umask(st->umask);
    /* PID 1 keeps CAP_SYS_PTRACE in its permitted set (the creation control): not the
     * command.  Everything else (the bounding set, the securebits, no_new_privs) PID 1
     * already gave up for both. */
    struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct none[2];
    memset(none, 0, sizeof none);
    if (syscall(SYS_capset, &hdr, none) < 0) {
        cordon_error e = {0};
        err_set(&e, CORDON_STAGE_CONFINE, errno, "cannot drop capabilities");
        report_fail(st->conn, &e);
    }
    child_exec(&st->cl, &st->mask);
}

/* ------------------------------------------------------------------------------------ */
/* the shepherd */

int sess_shepherd_main(void *arg)
{
    sess_start *st = arg;
    /* what the long part needs, before PID 1 reuses *st for the next command */
    int slot = st->slot, shep_w = st->shep_w;
    bool keep = st->flags & SESS_REQ_KEEP;
    sess_shep_msg m = {.slot = slot, .kind = SESS_SHEP_STARTED};

    sigset_t all;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
        m.value = -errno;
        tell(shep_w, &m);
        raw_exit(SESS_SHEP_FAILED);
    }
    int keep_fds[] = {st->stdio[0], st->stdio[1], st->stdio[2], st->conn, st->ll_w, shep_w};
    if (close_fds_except(keep_fds, sizeof keep_fds / sizeof keep_fds[0]) < 0) {
        m.value = -errno;
        tell(shep_w, &m);
        raw_exit(SESS_SHEP_FAILED);
    }
    pid_t c = clone(cmd_main, st->c_stack_top, CLONE_VM | CLONE_VFORK | SIGCHLD, st);
    m.value = c < 0 ? -errno : c;
    /* From here on PID 1 runs again, in the same memory: raw system calls only. */
    tell(shep_w, &m);
    raw4(SYS_close_range, 3, shep_w - 1, 0, 0);
    raw4(SYS_close_range, shep_w + 1, ~0U, 0, 0);
    if (c < 0)
        raw_exit(SESS_SHEP_FAILED);
    for (;;) {
        int status = 0;
        long w = raw4(SYS_wait4, -1, (long)&status, __WALL, 0);
        if (w == -EINTR)
            continue;
        if (w < 0)
            raw_exit(SESS_SHEP_CLEAN); /* nothing is left below */
        if (w != c)
            continue;
        sess_shep_msg e = {.slot = slot, .kind = SESS_SHEP_EXITED, .value = status};
        tell(shep_w, &e);
        if (!keep) {
            int more = 0;
            long r = raw4(SYS_wait4, -1, (long)&more, __WALL | WNOHANG, 0);
            raw_exit(r == -ECHILD ? SESS_SHEP_CLEAN : SESS_SHEP_LEFTOVERS);
        }
    }
}
